/* epoch.c - which epoch an RMA call belongs to, and the checks every synchronization call shares.
 *
 * Access epochs of this process, at most one kind at a time per target:
 *   lock    MPI_Win_lock(target) .. MPI_Win_unlock(target)      (per target, several at once)
 *   pscw    MPI_Win_start(group) .. MPI_Win_complete            (targets in group)
 *   fence   MPI_Win_fence .. MPI_Win_fence                      (every member)
 * A fence without MPI_MODE_NOSUCCEED only arms a fence epoch: it becomes real when an RMA call
 * follows (MPI-3.1 section 11.5.1, "starts an access epoch if it is followed by ... RMA calls"),
 * so a program may fence and then lock, as long as no RMA call used the fence epoch. */
#include "counters.h"
#include "sync.h"

#include <stdlib.h>

static const char *const kind_call[] = {[FR_OP_PUT] = "MPI_Put", [FR_OP_GET] = "MPI_Get",
                                        [FR_OP_ACC] = "MPI_Accumulate",
                                        [FR_OP_GACC] = "MPI_Get_accumulate",
                                        [FR_OP_CAS] = "MPI_Compare_and_swap"};

int fr_win_access_epoch(fr_win *w, int target, fr_opkind kind, fr_epoch *out)
{
    fr_peer *p = &w->peers[target];
    /* A started sync-ops request covering the operation takes it, whatever else is open
     * (docs/specification.md, section 6). MPI_MODE_WIN_ACCUMULATE covers every accumulate:
     * MPI_Get_accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap too (section 12). */
    if (p->cover[kind >= FR_OP_ACC ? FR_OP_ACC : kind]) {
        *out = FR_EPOCH_COUNTER;
        return MPI_SUCCESS;
    }
    if (p->lock_held) {
        *out = FR_EPOCH_LOCK;
        return MPI_SUCCESS;
    }
    if (w->start_active) {
        if (p->in_start) {
            *out = FR_EPOCH_PSCW;
            return MPI_SUCCESS;
        }
        return fr_errorf(FR_ERR_NOT_IN_GROUP,
                         "target rank %d is not in the group given to MPI_Win_start", target);
    }
    if (w->fence == FR_FENCE_ARMED) {
        *out = FR_EPOCH_FENCE;
        return MPI_SUCCESS;
    }
    if (w->nlocks > 0)
        return fr_errorf(FR_ERR_NO_EPOCH, "target rank %d is not locked (other targets are)", target);
    for (int k = FR_OP_PUT; k < FR_OP_KINDS; k++)
        if (p->cover[k])
            return fr_errorf(FR_ERR_NO_EPOCH, "the sync-ops request started to rank %d does not "
                                              "cover %s, and no other epoch is open", target,
                             kind_call[kind]);
    return fr_errorf(FR_ERR_NO_EPOCH, "no access epoch is open: call MPI_Win_fence, "
                                      "MPI_Win_start or MPI_Win_lock first");
}

int fr_win_issue_now(fr_win *w, int target, fr_pkt *trail)
{
    fr_peer *p = &w->peers[target];
    int rc = MPI_SUCCESS;
    if (fr_peer_unsent(p))
        rc = p->tp->flush(w, target, &p->cq, NULL, NULL);
    if (p->q.n && fr_lock_may_issue(w, target)) {
        fr_pkt lock;
        int qrc = p->tp->flush(w, target, &p->q, fr_lock_lead(w, target, &lock), trail);
        if (rc == MPI_SUCCESS)
            rc = qrc;
    }
    return rc;
}

/* ---- operations to myself ----
 * They complete at the call wherever my window is open to them at that moment, results
 * included, so the program may reuse or free its buffers right after the call, as on an MPI
 * that completes operations on its own process at once (Open MPI). My window is open to my own:
 *   fence    always: I have passed the fence that opened the epoch, which completed everything
 *            of the epoch before aimed at my window;
 *   lock     once I hold my lock on myself (MPI_Win_lock takes it) or with MPI_MODE_NOCHECK;
 *   pscw     once my post matching this access epoch is open: MPI matches my k-th start that
 *            includes me with my k-th post that includes me (a start before its post keeps
 *            its operations queued, as MPI allows, until the first operation to myself after
 *            that post, or MPI_Win_complete);
 *   counter  always, like any member's window (specification, section 6).
 * Whatever is queued to myself goes first, so an accumulate never overtakes an earlier one. */
static int self_open(fr_win *w, fr_epoch e)
{
    const fr_peer *me = &w->peers[w->rank];
    switch (e) {
    case FR_EPOCH_FENCE:
    case FR_EPOCH_COUNTER:
        return 1;
    case FR_EPOCH_LOCK:
        return fr_lock_self_open(w);
    case FR_EPOCH_PSCW:
        return w->post_active && me->post_open && w->self_posts == w->self_starts;
    default:
        return 0;
    }
}

int fr_win_self_ready(fr_win *w, fr_epoch e, int *rc)
{
    fr_peer *me = &w->peers[w->rank];
    *rc = MPI_SUCCESS;
    /* My queue holds the operations of one epoch (its closing call empties it); my counter
     * queue only what came while that one could not run (counter epochs are always open). */
    if (me->q.n > 0) {
        if (!self_open(w, me->q.ops[0].epoch))
            return 0;
        *rc = me->tp->flush(w, w->rank, &me->q, NULL, NULL);
    }
    if (me->cq.n > 0) {
        int crc = me->tp->flush(w, w->rank, &me->cq, NULL, NULL);
        if (*rc == MPI_SUCCESS)
            *rc = crc;
    }
    return self_open(w, e);
}

/* Synchronization packets mean the same whichever transport carried them. */
static void fr_sync_packet(fr_win *w, int src, const fr_pkt *p)
{
    switch (p->type) {
    case FR_PKT_LOCK:
        fr_target_lock(w, src, p->lock_type, (p->flags & FR_PKTF_TELL) != 0);
        break;
    case FR_PKT_LOCK_ASK:
        fr_target_lock_ask(w, src);
        break;
    case FR_PKT_LOCK_GRANTED:
        fr_origin_lock_granted(w, src);
        break;
    case FR_PKT_LOCK_TRY:
        fr_target_lock_try(w, src);
        break;
    case FR_PKT_LOCK_TRIED:
        fr_origin_lock_tried(w, src, p->arg != 0);
        break;
    case FR_PKT_UNLOCK:
        fr_target_unlock(w, src, p->arg, (p->flags & FR_PKTF_NOCHECK) != 0);
        break;
    case FR_PKT_UNLOCK_ACK:
        fr_origin_unlock_acked(w, src);
        break;
    case FR_PKT_COMPLETE:
        fr_target_complete(w, src, p->arg);
        break;
    case FR_PKT_FENCE_DONE:
        fr_target_fence_done(w, src, p->seq, p->arg);
        break;
    case FR_PKT_BUMP:
        fr_target_bump(w, src, p);
        break;
    case FR_PKT_BUMP_ACK:
        fr_origin_bump_acked(w, src, p);
        break;
    case FR_PKT_COUNTER_READ:
        fr_target_counter_read(w, src, p);
        break;
    case FR_PKT_COUNTER_VALUE:
        fr_origin_counter_value(w, src, p);
        break;
    default:
        fr_fatal("unexpected synchronization packet type %d from rank %d", p->type, src);
    }
}

/* src's complete prefix grew: what waits for it here may be released, whatever the epoch of the
 * operation that completed. */
static void ops_done(fr_win *w, int src)
{
    if (w->peers[src].nbumps)
        fr_bumps_op_done(w, src);
    fr_lock_op_done(w, src);
}

const fr_protocol fr_sync_protocol = {
    .packet = fr_sync_packet,
    .ops_done = ops_done,
    .state_made = fr_counters_state_made,
};
