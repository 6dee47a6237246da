/* sync_fence.c - MPI_Win_fence without a barrier (after seed 001 section 4.1).
 *
 * The opening fence sends nothing; RMA calls queue their operations (those to myself run at the
 * call: epoch.c, fr_win_self_ready). Every fence call, opening or closing, counts
 * (fence_count), identically on every member since fence is collective; an
 * operation carries the number of the fence that closes its epoch, and a target keeps operations
 * of a fence it has not entered yet (am_recv.c), so data never lands while the target may still
 * be accessing its window in the previous epoch. A closing fence then completes the epoch in one
 * of two ways, both without a barrier:
 *
 *  direct (windows of at most FLEXRMA_FENCE_DIRECT_MAX members, 8 by default): every member
 *    tells every other member that its epoch there is closed and how many operations it has
 *    sent it in all, and waits until each member has told it so and those operations have
 *    completed here. One message per pair, no round trip: a batch, its operations for that
 *    member followed by FENCE_DONE; or, to a node peer whose state page it maps already, its
 *    operations (copied, or in the ring) and then, once all its operations are issued, a store
 *    into that page (fr_direct_fence_close), which the peer reads without a packet to parse:
 *    about a quarter less time per fence at 2 ranks than through the ring.
 *  reduce-scatter (seed 001, larger windows): the members reduce-scatter their per-target
 *    operation counts, so each learns how many operations of the epoch target it; then they
 *    issue their operations and each waits for its announced number. About log p rounds plus
 *    the data, instead of p-1 messages per member. Up to 4096 members the reduce-scatter is an
 *    allreduce of the counts, whose algorithms in the MPI libraries cost every member O(log p)
 *    messages (fence_close_rs says why).
 * The choice depends only on the window size, so every member makes the same one.
 *
 * Memory ordering: every store into this process's window is its own (it unpacks, reduces,
 * receives into the window) and is counted before the fence returns, or a node peer's copy
 * (direct.h), which precedes its FENCE_DONE in the ring or its store into the state page
 * (release there, acquire here); so the program sees the data when MPI_Win_fence returns. A
 * node peer copies only once this process has completed the fence that opened the epoch
 * (fr_direct_fence_passed), or once it has closed that fence with nothing left to land in its
 * window (direct.c, fence_settled), and only in the direct scheme, whose close (FENCE_DONE or
 * the store) tells this process the copies are over.
 *
 * MPI_MODE_NOPRECEDE skips the completion (MPI requires every member to give it, so no member
 * waits for messages that never come). MPI_MODE_NOSUCCEED disarms the fence epoch.
 * MPI_MODE_NOSTORE and MPI_MODE_NOPUT are accepted; the message transport has no cache to
 * flush, so they change nothing.
 */
#include "transport/direct.h"
#include "progress/entry.h"
#include "core/next.h"
#include "progress/progress.h"
#include "sync.h"

#include <stdlib.h>

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

void fr_target_fence_done(fr_win *w, int src, uint64_t seq, uint64_t upto)
{
    fr_peer *p = &w->peers[src];
    p->fence_seq = seq;
    p->fence_upto = upto;
}

/* Issue every queued operation, local ones first. With `announce`, every other member is also
 * told the epoch is closed (direct scheme): by a FENCE_DONE behind its operations, or, when
 * this process maps it, in its state page once all is issued (the close says whether a result
 * of mine is still on its way: fr_direct_fence_close), after a get asked of it is settled;
 * without, only members with operations get a batch. */
static int issue_all(fr_win *w, int announce)
{
    int rc = w->peers[w->rank].tp->flush(w, w->rank, &w->peers[w->rank].q, NULL, NULL);
    for (int t = 0; t < w->size; t++) {
        fr_peer *p = &w->peers[t];
        if (t == w->rank || (!announce && p->q.n == 0))
            continue;
        int trc = MPI_SUCCESS;
        if (!(announce && fr_direct_mapped(w, t))) {
            fr_pkt done = {.type = FR_PKT_FENCE_DONE, .seq = w->fence_count};
            trc = p->tp->flush(w, t, &p->q, NULL, announce ? &done : NULL);
            if (announce) /* (the flush may have mapped it: first use) */
                p->fence_done_sent = w->fence_count;
        } else if (p->q.n > 0 || p->packed.len > 0) {
            /* A batch only for what there is: an empty one would attach an unused ring. What
             * was packed for t earlier goes too, as ops_sent counts it already. */
            trc = p->tp->flush(w, t, &p->q, NULL, NULL);
        }
        if (rc == MPI_SUCCESS)
            rc = trc;
    }
    for (int t = 0; announce && t < w->size; t++)
        if (t != w->rank && w->peers[t].fence_done_sent != w->fence_count) {
            fr_batch_ask_settle(w, t); /* t must not leave the epoch while a get of it is read */
            fr_direct_fence_close(w, t, w->peers[t].ops_sent);
        }
    return rc;
}

/* ---- direct ---- */

static int direct_complete(void *arg)
{
    fr_win *w = arg;
    if (w->pending != 0)
        return 0;
    for (int t = 0; t < w->size; t++) {
        fr_peer *p = &w->peers[t];
        uint64_t upto;
        if (t == w->rank)
            continue;
        if (p->fence_seq >= w->fence_count)
            upto = p->fence_upto;
        else if (!fr_direct_fence_closed(w, t, &upto))
            return 0;
        if (p->ops_done < upto)
            return 0;
    }
    return 1;
}

static int fence_close_direct(fr_win *w)
{
    for (int t = 0; t < w->size; t++) /* large copies wait for the target to be in the epoch */
        fr_direct_await(w, t, &w->peers[t].q);
    int rc = issue_all(w, 1);
    fr_wait_until(direct_complete, w);
    return rc;
}

/* ---- reduce-scatter ---- */

#define RS_ALLREDUCE_MAX 4096 /* members: a vector of 32 KiB of counts */

static int rs_complete(void *arg)
{
    fr_win *w = arg;
    return w->pending == 0 && w->fence_done >= w->fence_expected;
}

static int fence_close_rs(fr_win *w)
{
    /* Per target, every operation of the epoch: those still queued and those a request's wait
     * or MPIX_Put_signal sent ahead (each is counted there as it completes, so leaving one out
     * lets the target's count reach its total while another is still on its way). My own count
     * included: local operations are counted too. */
    uint64_t *counts = fr_xcalloc((size_t)w->size, sizeof *counts);
    for (int t = 0; t < w->size; t++)
        counts[t] = w->peers[t].fence_sent + w->peers[t].q.n;
    /* How each member learns its share: Open MPI 4.1's MPI_Ireduce_scatter_block (libnbc) is a
     * binomial reduce of the whole vector to rank 0 and then a linear scatter, so rank 0 sends
     * p - 1 messages every fence; its MPI_Iallreduce of a vector under 64 KiB is binomial
     * (reduce and broadcast), at most 2 log p messages per member (MPICH's: recursive
     * doubling), each carrying p counts. So an allreduce up to RS_ALLREDUCE_MAX members, the
     * reduce-scatter beyond, where libnbc's allreduce becomes a ring of p - 1 steps. */
    uint64_t incoming = 0;
    MPI_Request rs;
    if (w->size <= RS_ALLREDUCE_MAX) {
        FR_CHECK_MPI(PMPI_Iallreduce(MPI_IN_PLACE, counts, w->size, MPI_UINT64_T, MPI_SUM,
                                     w->comm, &rs));
        fr_wait_request(&rs);
        incoming = counts[w->rank];
    } else {
        FR_CHECK_MPI(PMPI_Ireduce_scatter_block(counts, &incoming, 1, MPI_UINT64_T, MPI_SUM,
                                                w->comm, &rs));
        fr_wait_request(&rs);
    }
    w->st.collectives++;
    free(counts);
    w->fence_expected += incoming;
    int rc = issue_all(w, 0);
    fr_wait_until(rs_complete, w);
    return rc;
}

static int fence(fr_win *w, int assert)
{
    if (assert & ~FENCE_ASSERTS)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_fence does not know",
                         assert);
    if (w->start_active || w->post_active || w->nlocks > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_fence while a %s epoch is open",
                         w->nlocks > 0 ? "lock" : "post/start/complete/wait");
    if ((assert & MPI_MODE_NOPRECEDE) && w->fence_ops > 0)
        return fr_errorf(FR_ERR_ASSERT, "MPI_MODE_NOPRECEDE, but %llu RMA operations were "
                                        "issued since the last fence",
                         (unsigned long long)w->fence_ops);
    w->fence_count++;
    for (int r = 0; r < w->size; r++) /* what others sent for this fence may now run */
        if (w->peers[r].held)
            fr_am_replay_held(w, r);
    int rc = MPI_SUCCESS;
    if (!(assert & MPI_MODE_NOPRECEDE)) {
        w->fence_closes++;
        rc = fr_fence_is_direct(w) ? fence_close_direct(w) : fence_close_rs(w);
    }
    for (int t = 0; t < w->size; t++) /* (both schemes: a membership change may switch them) */
        w->peers[t].fence_sent = 0;
    w->fence_ops = 0;
    w->fence = (assert & MPI_MODE_NOSUCCEED) ? FR_FENCE_OFF : FR_FENCE_ARMED;
    w->fence_opened = w->fence_count;
    fr_direct_fence_passed(w, !(assert & MPI_MODE_NOPRECEDE));
    w->st.fences++;
    return rc;
}

FR_API int MPI_Win_fence(int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_fence)(assert, win));
    FR_WIN_EXIT("MPI_Win_fence", fence(w, assert));
}
FR_PMPI(Win_fence);
