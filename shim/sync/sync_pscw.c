/* sync_pscw.c - MPI_Win_post/start/complete/wait/test (after seed 001 section 4.2).
 *
 * Protocol.
 *   post(group)   target: open the exposure epoch to each origin of group and run the packets
 *                 they already sent for it (kept by the transport until now). Nothing is sent.
 *   start(group)  origin: remember the group; nothing is sent.
 *   RMA calls     origin: queued (to myself: run at the call once my post matching this access
 *                 epoch is open, counted in self_starts and self_posts; epoch.c).
 *   complete      origin: for each target, issue the queued operations followed by a COMPLETE
 *                 packet carrying how many operations I have sent that target in all; wait for
 *                 local completion.
 *   wait/test     target: done when every origin of the group sent COMPLETE and every operation
 *                 up to the count it announced has completed here.
 * Seed 001 has complete wait for a zero-byte post message, which MPI_MODE_NOCHECK removes.
 * flexrma goes one step further and never sends it: MPI allows complete to return before the
 * matching post, and a target keeps early packets until it posts, so an epoch costs one message
 * per origin-target pair with or without MPI_MODE_NOCHECK (accepted, and then changes nothing).
 * A large put's data message completes, and so lets complete return, only once the target has
 * posted: the data goes straight into the window, never into a buffer. To a node peer whose
 * window it reaches (direct.h), complete copies puts and gets itself once the post shows in the
 * target's state page, waiting for it as long as it takes for a large one and briefly for small
 * ones (fr_direct_await); the post is one
 * store there, no message. When every operation to such a peer was copied and nothing of mine
 * to it is unacknowledged, complete closes the epoch with one store in the target's state page
 * too (fr_direct_complete) instead of a COMPLETE packet; the target keeps the origin's PSCW
 * packets that arrive after such a close for its next exposure epoch (am_recv.c, may_run).
 *
 * Memory ordering: every store into this process's window is its own (it receives, unpacks and
 * reduces) and counted before MPI_Win_wait returns, or a node peer's copy, which precedes its
 * COMPLETE in the ring (release there, acquire here).
 */
#include "transport/direct.h"
#include "progress/entry.h"
#include "core/next.h"
#include "progress/progress.h"
#include "sync.h"

#include <stdlib.h>

#define POST_ASSERTS (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)
#define START_ASSERTS (MPI_MODE_NOCHECK)

/* ---- target side ---- */

static int post(fr_win *w, MPI_Group group, int assert)
{
    if (assert & ~POST_ASSERTS)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_post does not know", assert);
    if (w->post_active)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_post while an exposure epoch is open");
    if (w->fence == FR_FENCE_ARMED && w->fence_ops > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_post inside a fence epoch");
    int rc = fr_win_group_ranks(w, group, &w->post_ranks, &w->post_cap, &w->npost);
    if (rc)
        return rc;
    const int *ranks = w->post_ranks, n = w->npost;
    w->post_active = 1;
    w->fence = FR_FENCE_OFF;
    /* Counted first: a packet an origin sent for this epoch after closing the one before in my
     * state page is recognised as this epoch's by the count (fr_direct_completed). */
    fr_direct_posted(w, ranks, n);
    for (int i = 0; i < n; i++) {
        fr_peer *p = &w->peers[ranks[i]];
        p->post_open = 1;
        w->self_posts += ranks[i] == w->rank;
        if (p->held)
            fr_am_replay_held(w, ranks[i]);
    }
    return MPI_SUCCESS;
}

void fr_target_complete(fr_win *w, int src, uint64_t upto)
{
    fr_peer *p = &w->peers[src];
    p->complete_seen = 1;
    p->complete_upto = upto;
    p->post_open = 0; /* what it sends next belongs to my next exposure epoch */
}

/* Has origin src closed its access epoch matching my current exposure epoch? */
static int origin_done(const fr_win *w, int src)
{
    const fr_peer *p = &w->peers[src];
    return (p->complete_seen && p->ops_done >= p->complete_upto) || fr_direct_completed(w, src);
}

static int exposure_done(void *arg)
{
    fr_win *w = arg;
    for (int i = 0; i < w->npost; i++)
        if (!origin_done(w, w->post_ranks[i]))
            return 0;
    return 1;
}

static void exposure_end(fr_win *w)
{
    for (int i = 0; i < w->npost; i++) {
        fr_peer *p = &w->peers[w->post_ranks[i]];
        p->complete_seen = 0;
        p->post_open = 0; /* also after a close in my state page, which sent no COMPLETE */
    }
    w->npost = 0;
    w->post_active = 0;
    w->st.pscw++;
}

static int wait_exposure(fr_win *w)
{
    if (!w->post_active)
        return fr_errorf(FR_ERR_EPOCH_NOT_OPEN, "MPI_Win_wait without a matching MPI_Win_post");
    fr_wait_until(exposure_done, w);
    exposure_end(w);
    return MPI_SUCCESS;
}

static int test_exposure(fr_win *w, int *flag)
{
    if (!w->post_active)
        return fr_errorf(FR_ERR_EPOCH_NOT_OPEN, "MPI_Win_test without a matching MPI_Win_post");
    fr_progress();
    *flag = exposure_done(w);
    if (*flag)
        exposure_end(w);
    return MPI_SUCCESS;
}

/* ---- origin side ---- */

static int start(fr_win *w, MPI_Group group, int assert)
{
    if (assert & ~START_ASSERTS)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_start does not know",
                         assert);
    if (w->start_active)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_start while an access epoch is open");
    if (w->nlocks > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_start while a lock epoch is open");
    if (w->fence == FR_FENCE_ARMED && w->fence_ops > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_start inside a fence epoch");
    int rc = fr_win_group_ranks(w, group, &w->start_ranks, &w->start_cap, &w->nstart);
    if (rc)
        return rc;
    w->start_active = 1;
    for (int i = 0; i < w->nstart; i++) {
        w->peers[w->start_ranks[i]].in_start = 1;
        w->self_starts += w->start_ranks[i] == w->rank;
        fr_direct_started(w, w->start_ranks[i]);
    }
    w->fence = FR_FENCE_OFF;
    return MPI_SUCCESS;
}

static int origin_quiet(void *arg)
{
    fr_win *w = arg;
    return w->pending == 0;
}

/* Issue my operations to t, then close my access epoch there: in its state page when t is
 * reached directly and everything of mine to it is known complete (direct.h), which a get
 * asked of it must be first (its packet may still be unread there: fr_batch_ask_settle), else
 * with a COMPLETE packet behind the operations (one batch). One target after the other: a
 * close never waits for another target's post (large copies wait for it, fr_direct_await),
 * which may come only once this one has closed. */
static int close_access(fr_win *w, int t)
{
    fr_peer *p = &w->peers[t];
    fr_pkt done = {.type = FR_PKT_COMPLETE};
    if (!fr_direct_reached(w, t))
        return p->tp->flush(w, t, &p->q, NULL, &done);
    int rc = p->q.n ? p->tp->flush(w, t, &p->q, NULL, NULL) : MPI_SUCCESS;
    fr_batch_ask_settle(w, t);
    if (fr_direct_complete(w, t))
        return rc;
    int crc = p->tp->flush(w, t, &p->q, NULL, &done); /* the queue is empty: COMPLETE alone */
    /* An acknowledgement behind the COMPLETE (a fresh one: one asked for earlier may come back
     * before the target has read this COMPLETE): once it is here, the target has run the
     * COMPLETE and the operations before it, and later epochs close in its state page again. */
    fr_ack_ask(w, t, UINT64_MAX);
    p->close_ack = p->acks_asked;
    return rc ? rc : crc;
}

static int complete(fr_win *w)
{
    if (!w->start_active)
        return fr_errorf(FR_ERR_EPOCH_NOT_OPEN, "MPI_Win_complete without a matching MPI_Win_start");
    int rc = MPI_SUCCESS;
    for (int i = 0; i < w->nstart; i++) {
        int t = w->start_ranks[i];
        fr_peer *p = &w->peers[t];
        fr_direct_await(w, t, &p->q); /* copies wait for the matching post */
        int trc = close_access(w, t);
        if (rc == MPI_SUCCESS)
            rc = trc;
        p->in_start = 0;
    }
    if (w->pending) /* sends still in flight (single copies and ring batches are done) */
        fr_wait_until(origin_quiet, w);
    w->nstart = 0;
    w->start_active = 0;
    return rc;
}

FR_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_post)(group, assert, win));
    FR_WIN_EXIT("MPI_Win_post", post(w, group, assert));
}
FR_PMPI(Win_post);

FR_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_start)(group, assert, win));
    FR_WIN_EXIT("MPI_Win_start", start(w, group, assert));
}
FR_PMPI(Win_start);

FR_API int MPI_Win_complete(MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_complete)(win));
    FR_WIN_EXIT("MPI_Win_complete", complete(w));
}
FR_PMPI(Win_complete);

FR_API int MPI_Win_wait(MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_wait)(win));
    FR_WIN_EXIT("MPI_Win_wait", wait_exposure(w));
}
FR_PMPI(Win_wait);

FR_API int MPI_Win_test(MPI_Win win, int *flag)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_test)(win, flag));
    FR_WIN_EXIT("MPI_Win_test", test_exposure(w, flag));
}
FR_PMPI(Win_test);
