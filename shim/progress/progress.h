/* progress.h - the progress engine: flexrma's internal requests and who drives them.
 *
 * A target must serve incoming RMA while its application computes or waits in MPI. By default
 * progress runs inside every flexrma call and inside the blocking MPI calls an application waits
 * in (pt2pt_hooks.c); with FLEXRMA_ASYNC_PROGRESS=1 an agent thread also runs it (seed 002's
 * asynchronous agent), so a target that never calls MPI is still served. */
#ifndef FR_PROGRESS_H
#define FR_PROGRESS_H

#include "core/fr.h"

typedef void (*fr_done_fn)(void *ctx, MPI_Status *status);

/* Track req; fn(ctx, status) runs from the progress engine when it completes. */
void fr_pending_add(MPI_Request req, fr_done_fn fn, void *ctx);
/* One pass: poll every window for packets, complete internal requests. Returns events handled.
 * Engine lock held. */
int fr_progress(void);
/* Between polls that found nothing: spin briefly, then yield the core, so more ranks than cores
 * still make progress. fr_idle holds one wait's run of idle polls; every wait (fr_wait_until()
 * in win.h, the request and point-to-point hooks) spins FLEXRMA_SPIN_POLLS idle polls, then at
 * least FR_SPIN_MIN_NS more, before its first yield. */
typedef struct fr_idle {
    unsigned polls; /* idle polls in a row */
    uint64_t since; /* when the FLEXRMA_SPIN_POLLS-th of them was, in ns */
} fr_idle;
/* A poll found something: spin afresh. */
static inline void fr_idle_reset(fr_idle *i) { i->polls = 0; }
/* A poll found nothing: 1 once the wait has spun enough that it should yield now. */
int fr_idle_yield_due(fr_idle *i);
/* A poll found nothing, engine lock not held: spin on, or yield when due. */
void fr_backoff(fr_idle *i);
/* After a poll that handled `events`, engine lock not held: spin afresh if it found something,
 * else back off. */
void fr_idle_after(fr_idle *i, int events);
/* Is there anything for the engine to do at all (live windows or pending requests)? */
int fr_progress_needed(void);
/* Wait, serving the progress engine, until the MPI library completes *req (a nonblocking
 * collective of flexrma's own): a blocking collective would serve nobody meanwhile. */
void fr_wait_request(MPI_Request *req);
/* Internal requests not yet complete. */
int fr_pending_count(void);

/* The waiting the hooked MPI calls share (pt2pt_hooks.c). */
int fr_hooks_on(void);             /* should a blocking call wait through flexrma? */
void fr_hook_turn(fr_idle *idle);/* one turn of a hooked wait that found nothing */
void fr_hook_poll(void);           /* one progress pass, from a nonblocking call */

int fr_agent_start(void);
void fr_agent_stop(void);

#endif
