/* epoch.c - which epoch an RMA call belongs to, and the checks every synchronization call shares.
 *
 * Access epochs of this process, at most one kind at a time per target:
 *   lock    MPI_Win_lock(target) .. MPI_Win_unlock(target)      (per target, several at once)
 *   pscw    MPI_Win_start(group) .. MPI_Win_complete            (targets in group)
 *   fence   MPI_Win_fence .. MPI_Win_fence                      (every member)
 * A fence without MPI_MODE_NOSUCCEED only arms a fence epoch: it becomes real when an RMA call
 * follows (MPI-3.1 section 11.5.1, "starts an access epoch if it is followed by ... RMA calls"),
 * so a program may fence and then lock, as long as no RMA call used the fence epoch. */
#include "transport/transport.h"
#include "win/win.h"

#include <stdlib.h>

const char *fr_epoch_name(fr_epoch e)
{
    switch (e) {
    case FR_EPOCH_FENCE: return "fence";
    case FR_EPOCH_PSCW: return "post/start/complete/wait";
    case FR_EPOCH_LOCK: return "lock";
    case FR_EPOCH_COUNTER: return "sync-ops";
    default: return "none";
    }
}

int fr_win_check_rank(fr_win *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return fr_errorf(FR_ERR_RANK, "rank %d is out of range: the window has %d members (0..%d)",
                         rank, w->size, w->size - 1);
    return MPI_SUCCESS;
}

static const char *const kind_call[] = {[FR_OP_PUT] = "MPI_Put", [FR_OP_GET] = "MPI_Get",
                                        [FR_OP_ACC] = "MPI_Accumulate"};

int fr_win_access_epoch(fr_win *w, int target, fr_opkind kind, fr_epoch *out)
{
    fr_peer *p = &w->peers[target];
    /* A started sync-ops request covering the operation takes it, whatever else is open
     * (docs/specification.md, section 6). */
    if (p->cover[kind]) {
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

int fr_win_issue_now(fr_win *w, int target)
{
    fr_peer *p = &w->peers[target];
    int rc = MPI_SUCCESS;
    if (fr_peer_unsent(p))
        rc = p->tp->flush(w, target, &p->cq, NULL, NULL);
    if (p->q.n && fr_lock_may_issue(w, target)) {
        fr_pkt lock;
        int qrc = p->tp->flush(w, target, &p->q, fr_lock_lead(w, target, &lock), NULL);
        if (rc == MPI_SUCCESS)
            rc = qrc;
    }
    return rc;
}

int fr_win_rank_of_member(const fr_win *w, uint32_t id)
{
    for (int r = 0; r < w->size; r++)
        if (w->peers[r].member_id == id)
            return r;
    return -1;
}

int fr_win_any_epoch(const fr_win *w)
{
    return w->start_active || w->post_active || w->nlocks > 0 ||
           (w->fence == FR_FENCE_ARMED && w->fence_ops > 0);
}

/* Synchronization packets mean the same whichever transport carried them. */
void fr_sync_packet(fr_win *w, int src, const fr_pkt *p)
{
    switch (p->type) {
    case FR_PKT_LOCK:
        fr_target_lock(w, src, p->lock_type);
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

uint64_t fr_target_op_begin(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    fr_grow(&p->open_ops, &p->cap_open, p->nopen + 1, sizeof *p->open_ops);
    p->open_ops[p->nopen++] = ++p->ops_run;
    return p->ops_run;
}

void fr_target_op_done(fr_win *w, int src, fr_epoch epoch, uint64_t number)
{
    fr_peer *p = &w->peers[src];
    if (number == 0) {
        ++p->ops_run;
    } else {
        size_t i = 0;
        while (i < p->nopen && p->open_ops[i] != number)
            i++;
        if (i == p->nopen)
            fr_fatal("operation %llu of rank %d completed twice", (unsigned long long)number, src);
        for (; i + 1 < p->nopen; i++)
            p->open_ops[i] = p->open_ops[i + 1];
        p->nopen--;
    }
    p->ops_done = p->nopen ? p->open_ops[0] - 1 : p->ops_run;
    if (epoch == FR_EPOCH_FENCE)
        w->fence_done++;
    /* The prefix may have grown past what an UNLOCK or a BUMP waits for, whatever the epoch of
     * the operation that completed. */
    if (p->nbumps)
        fr_bumps_op_done(w, src);
    fr_lock_op_done(w, src);
}
