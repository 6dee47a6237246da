/* progress.h - the progress engine: flexrma's internal requests and who drives them.
 *
 * A target must serve incoming RMA while its application computes or waits in MPI. By default
 * progress runs inside every flexrma call and inside the blocking MPI calls an application waits
 * in (pt2pt_hooks.c); with FLEXRMA_ASYNC_PROGRESS=1 an agent thread also runs it (seed 002's
 * asynchronous agent), so a target that never calls MPI is still served. */
#ifndef FR_PROGRESS_H
#define FR_PROGRESS_H

#include "core/fr.h"
#include "core/idle.h"

typedef void (*fr_done_fn)(void *ctx, MPI_Status *status);

/* Track req; fn(ctx, status) runs from the progress engine when it completes. */
void fr_pending_add(MPI_Request req, fr_done_fn fn, void *ctx);
/* One pass: poll every window for packets, complete internal requests. Returns events handled.
 * Engine lock held. */
int fr_progress(void);
/* One window's part of a pass (incoming rings, the message inbox, lock tickets, counter words):
 * returns the events it handled. */
struct fr_win;
typedef int (*fr_poller)(struct fr_win *w);
/* Add a poller to every pass, after those added before (once, at MPI_Init). */
void fr_progress_add_poller(fr_poller poll);
/* The poller that also runs alone, between passes, in hooked waits (fr_progress_rings): one
 * that costs a few loads when there is nothing to do (the node peers' rings, where fetches and
 * unlocks wait for an answer). Once, at MPI_Init. */
void fr_progress_set_rings(fr_poller poll);
/* Run that poller over every window. Engine lock held. */
int fr_progress_rings(void);
/* Every FR_ENTRY_POLL_EVERY-th window call (entry.h): a pass, if none ran since the two previous
 * such calls. Engine lock held. */
void fr_entry_poll(void);
extern unsigned fr_entry_passes; /* the passes fr_entry_poll ran */
/* Wait, serving the progress engine, until cond(arg) is true. */
void fr_wait_until(int (*cond)(void *), void *arg);
/* Is there anything for the engine to do at all (live windows or pending requests)? */
int fr_progress_needed(void);
/* Wait, serving the progress engine, until the MPI library completes *req (a nonblocking
 * collective of flexrma's own): a blocking collective would serve nobody meanwhile. */
void fr_wait_request(MPI_Request *req);
/* A barrier over comm that serves others while it waits (MPI_Ibarrier and fr_wait_request):
 * once it returns, every member of comm has entered the calling collective. */
void fr_wait_barrier(MPI_Comm comm);
/* Internal requests not yet complete. */
int fr_pending_count(void);

/* The waiting the hooked MPI calls share (pt2pt_hooks.c). */
int fr_hooks_on(void);             /* should a blocking call wait through flexrma? */
fr_idle fr_hook_start(int ours);   /* a hooked wait's state; ours: it holds flexrma requests */
void fr_hook_turn(fr_idle *idle);  /* one turn of a hooked wait that found nothing */
void fr_hook_poll(void);           /* one progress pass, from a nonblocking call */
int fr_hook_wait(MPI_Request *req, MPI_Status *status); /* a hooked wait for the library's req */

int fr_agent_start(void);
void fr_agent_stop(void);

#endif
