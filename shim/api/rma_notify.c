/* rma_notify.c - notified RMA as the MPI Forum's draft has it (mpi-issues #59; Intel MPI ships
 * it under these names): MPI_Win_notify_set_num, MPI_Win_notify_get_value,
 * MPI_Win_notify_set_value, MPI_Put_notify, MPI_Get_notify (docs/specification.md, section 13);
 * and fr_rma_bumped, the operation-then-bump core they share with MPIX_Put_signal (ext/iops)
 * and Open MPI's MPIX_ names (ext/notify).
 *
 * A notified operation belongs to its epoch like MPI_Put (fence, PSCW, lock, or a started
 * sync-ops request covering it), so the target holds it until that epoch is open there. What
 * the notification adds: the operation, and everything of mine queued to the target before it,
 * leaves at once instead of at the closing call, with a bump of the target's notification
 * counter behind it (sync/notify.c); the target applies the bump only once its prefix of my
 * operations covers the notified one (sync_counter.c), so whoever sees the count rise sees the
 * put's data, or knows the get read it. The closing call (or a flush) completes it at the origin
 * as any operation of the epoch. */
#include "flexrma.h"
#include "rma_notify.h"
#include "rma_ops.h"
#include "core/next.h"
#include "progress/entry.h"
#include "progress/progress.h"
#include "sync/notify.h"
#include "sync/sync.h"
#include "transport/counter_bump.h"
#include "transport/transport.h"

typedef struct issue_wait {
    fr_win *w;
    int target;
    int rc;
    fr_pkt *bump; /* goes at the end of the queue's batch */
} issue_wait;

/* The epoch's queue to the target has left, the bump behind it (a lock epoch may first need my
 * earlier lock). */
static int queue_left(void *arg)
{
    issue_wait *iw = arg;
    fr_peer *p = &iw->w->peers[iw->target];
    int rc;
    if (p->q.n == 0) /* issued meanwhile by another call (a request's test): the bump alone */
        rc = p->tp->flush(iw->w, iw->target, &p->cq, NULL, iw->bump);
    else
        rc = fr_win_issue_now(iw->w, iw->target, iw->bump);
    if (iw->rc == MPI_SUCCESS)
        iw->rc = rc;
    return p->q.n == 0;
}

/* The BUMP packet of key (its arg, the operations it follows, set by the flush that sends it),
 * asking for an answer if want_ack. Made only for a bump that travels as a packet: an asked
 * answer counts as awaited. */
static fr_pkt *bump_packet(fr_win *w, int target, uint64_t key, int want_ack, fr_bumped *out,
                           fr_pkt *bump)
{
    w->st.bumps_pkt++;
    *bump = (fr_pkt){.type = FR_PKT_BUMP, .dtype = key};
    if (want_ack) {
        bump->flags = FR_PKTF_ACK;
        bump->seq = out->ack_seq = ++w->peers[target].acks_asked;
    }
    return bump;
}

/* The bump of key once nothing of mine to target waits in an epoch's queue: atomic if the peer
 * is settled, else a BUMP packet behind what counter epochs hold for it (cq). */
static int bump_unqueued(fr_win *w, int target, uint64_t key, int want_ack, fr_bumped *out)
{
    fr_peer *p = &w->peers[target];
    fr_pkt bump;
    int rc = MPI_SUCCESS;
    /* An atomic bump only if the peer is settled, which sending cq never makes it
     * (counter_bump.c); with nothing to send first, fr_bump_direct alone decides. */
    int unsent = fr_peer_unsent(p);
    if (!unsent || fr_bump_may_go_direct(w, target, key)) {
        if (unsent)
            rc = p->tp->flush(w, target, &p->cq, NULL, NULL);
        fr_bump_way way = fr_bump_direct(w, target, key);
        if (way != FR_BUMP_PACKET) {
            out->applied = 1;
            out->applied_rc = way == FR_BUMP_GONE ? fr_bump_gone_error(target) : MPI_SUCCESS;
            return rc;
        }
    }
    int brc = p->tp->flush(w, target, &p->cq, NULL, bump_packet(w, target, key, want_ack, out, &bump));
    return rc ? rc : brc;
}

int fr_rma_bumped(fr_win *w, int target, fr_op *op, uint64_t key, int want_ack, fr_bumped *out)
{
    fr_peer *p = &w->peers[target];
    *out = (fr_bumped){0};
    int rc = MPI_SUCCESS;
    if (op->bytes > 0)
        rc = fr_rma_issue(w, target, op); /* counted; copied now, packed, or queued */
    if (rc)
        return rc;
    fr_pkt bump;
    /* An operation of an epoch (not a counter epoch, which is never queued there) waits in the
     * epoch's queue: send the queue now, with the bump at the end of its batch (one message, not
     * two: tests/mpi/t_crossings.c). Never an atomic bump then: the operations just sent leave
     * the peer unsettled (counter_bump.c). A counter epoch's operation (MPIX_Put_signal, or one
     * a sync-ops request covers) leaves without what another epoch still holds back. */
    if (op->epoch != FR_EPOCH_COUNTER && p->q.n > 0) {
        issue_wait iw = {w, target, MPI_SUCCESS,
                         bump_packet(w, target, key, want_ack, out, &bump)};
        fr_wait_until(queue_left, &iw);
        return iw.rc;
    }
    /* Left: counter-epoch operations still packed or queued (cq) travel with the bump. */
    return bump_unqueued(w, target, key, want_ack, out);
}

/* ---- the draft's calls ---- */

int fr_rma_notified(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                    int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, int idx,
                    int ompi)
{
    fr_op op;
    uint64_t key;
    fr_bumped how = {0};
    /* MPI_Put's short path (a copy into a mapped peer's window in my lock epoch, rma_ops.h),
     * where every check would pass: then nothing of mine to the target waits in a queue, as
     * fr_rma_bumped finds after issuing the copy, and the bump follows the same way. */
    if ((!ompi || (idx <= MPIX_MAX_NOTIFICATION_IDX && fr_notify_count(w) > 0)) &&
        fr_notify_key_known(w, target, idx, &key) &&
        fr_rma_short(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype))
        return bump_unqueued(w, target, key, 0, &how);
    int rc = fr_rma_prepare(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype,
                            MPI_OP_NULL, 1, &op);
    if (!rc && ompi && (idx < 0 || idx > MPIX_MAX_NOTIFICATION_IDX))
        rc = fr_errorf(FR_ERR_NOTIFICATION, "notification id %d is outside [0, %d]", idx,
                       MPIX_MAX_NOTIFICATION_IDX);
    if (rc || target == MPI_PROC_NULL) /* MPI_PROC_NULL: no operation, no notification */
        return rc;
    if (ompi && fr_notify_count(w) == 0) /* Open MPI: no notifications there, a plain op */
        return op.bytes > 0 ? fr_rma_issue(w, target, &op) : MPI_SUCCESS;
    if ((rc = fr_notify_key(w, target, idx, &key)))
        return rc;
    return fr_rma_bumped(w, target, &op, key, 0, &how);
}

FR_API int MPI_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, int notification_idx, MPI_Win win)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Put_notify"));
    FR_WIN_EXIT("MPI_Put_notify", fr_rma_notified(w, FR_OP_PUT, origin_addr, origin_count,
                                                  origin_datatype, target_rank, target_disp,
                                                  target_count, target_datatype,
                                                  notification_idx, 0));
}
FR_PMPI(Put_notify);

FR_API int MPI_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, int notification_idx, MPI_Win win)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Get_notify"));
    FR_WIN_EXIT("MPI_Get_notify", fr_rma_notified(w, FR_OP_GET, origin_addr, origin_count,
                                                  origin_datatype, target_rank, target_disp,
                                                  target_count, target_datatype,
                                                  notification_idx, 0));
}
FR_PMPI(Get_notify);

FR_API int MPI_Win_notify_set_num(MPI_Win win, MPI_Info info, int notification_num)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_notify_set_num"));
    (void)info; /* no keys defined */
    FR_WIN_EXIT("MPI_Win_notify_set_num", fr_notify_set_num(w, notification_num));
}
FR_PMPI(Win_notify_set_num);

FR_API int MPI_Win_notify_get_value(MPI_Win win, int notification_idx, MPI_Count *value)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_notify_get_value"));
    FR_WIN_EXIT("MPI_Win_notify_get_value", fr_notify_get(w, notification_idx, value));
}
FR_PMPI(Win_notify_get_value);

FR_API int MPI_Win_notify_set_value(MPI_Win win, int notification_idx, MPI_Count value)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_notify_set_value"));
    FR_WIN_EXIT("MPI_Win_notify_set_value", fr_notify_set(w, notification_idx, value));
}
FR_PMPI(Win_notify_set_value);
