/* progress.h - the progress engine: flexrma's internal requests and who drives them.
 *
 * A target must serve incoming RMA while its application computes or waits in MPI. By default
 * progress runs inside every flexrma call and inside the blocking MPI calls an application waits
 * in (pt2pt_hooks.c); with FLEXRMA_ASYNC_PROGRESS=1 an agent thread also runs it (seed 002's
 * asynchronous agent), so a target that never calls MPI is still served. */
#ifndef FR_PROGRESS_H
#define FR_PROGRESS_H

#include "fr.h"

typedef void (*fr_done_fn)(void *ctx, MPI_Status *status);

/* Track req; fn(ctx, status) runs from the progress engine when it completes. */
void fr_pending_add(MPI_Request req, fr_done_fn fn, void *ctx);
/* One pass: poll every window for packets, complete internal requests. Returns events handled.
 * Engine lock held. */
int fr_progress(void);
/* Between polls that found nothing: spin briefly, then yield the core, so more ranks than cores
 * still make progress. *spins counts consecutive idle polls. fr_wait_until() (win.h) waits the
 * same way and releases the engine lock while it yields. */
void fr_backoff(unsigned *spins);
/* Is there anything for the engine to do at all (live windows or pending requests)? */
int fr_progress_needed(void);
/* Wait, serving the progress engine, until the MPI library completes *req (a nonblocking
 * collective of flexrma's own): a blocking collective would serve nobody meanwhile. */
void fr_wait_request(MPI_Request *req);
/* Internal requests not yet complete. */
int fr_pending_count(void);

/* The waiting the hooked MPI calls share (pt2pt_hooks.c). */
int fr_hooks_on(void);             /* should a blocking call wait through flexrma? */
void fr_hook_turn(unsigned *spins);/* one turn of a hooked wait that found nothing */
void fr_hook_poll(void);           /* one progress pass, from a nonblocking call */

int fr_agent_start(void);
void fr_agent_stop(void);

#endif
