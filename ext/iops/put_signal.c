/* put_signal.c - MPIX_Put_signal and MPIX_Iput_signal: one put, then a counter bump behind it.
 *
 * The put needs no epoch: like the operations of a sync-ops request it runs at the target at
 * once (a counter epoch), and the BUMP travels right behind it in the same message, applied only
 * once the put is complete there (sync_counter.c). It is not ordered with operations still
 * queued in an epoch of the caller (they leave at that epoch's closing call). MPIX_Put_signal
 * returns when the origin buffer may be reused; the request of MPIX_Iput_signal completes when
 * the bump has been applied at the target, so the data is there too.
 *
 * The put and its bump are api/rma_notify.c's fr_rma_bumped, the core notified RMA shares: to a
 * node peer whose shared state block holds the counter, the bump is an atomic on the counter's
 * word when every operation to that peer, this put included, is known complete there after the
 * put was issued (counter_bump.c); otherwise it follows the put as a packet in the same batch. */
#include "iop.h"
#include "api/rma_notify.h"
#include "progress/entry.h"
#include "core/next.h"
#include "progress/progress.h"
#include "syncobj/syncobj.h"
#include "sync/sync.h"

#include <stdlib.h>

typedef struct peer_idle {
    fr_peer *p;
} peer_idle;

static int sends_done(void *arg) { return ((peer_idle *)arg)->p->pending == 0; }

static int put_signal(fr_win *w, const void *oaddr, int ocount, MPI_Datatype otype, int target,
                      MPI_Aint tdisp, int tcount, MPI_Datatype ttype, const MPI_Sync *counter,
                      MPI_Request *request)
{
    fr_op op;
    fr_sync_ref ref;
    int rc;
    if ((rc = fr_rma_prepare(w, FR_OP_PUT, oaddr, ocount, otype, target, tdisp, tcount, ttype,
                             MPI_OP_NULL, 0, &op)))
        return rc;
    if (target != MPI_PROC_NULL) {
        if ((rc = fr_sync_resolve(w, counter, &ref)))
            return rc;
        if (ref.owner != target)
            return fr_errorf(FR_ERR_COUNTER, "the counter is owned by rank %d, not by target_rank "
                                             "%d", ref.owner, target);
    }
    iop *o = NULL;
    if (request) {
        o = fr_iop_new(w, target, &op); /* completes at once for MPI_PROC_NULL */
        *request = o->op.req.handle;
    }
    if (target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    op.epoch = FR_EPOCH_COUNTER; /* no epoch needed: it runs at the target at once */
    if (o && op.bytes == 0)
        o->op.issued = o->op.done_here = 1;
    fr_bumped how;
    rc = fr_rma_bumped(w, target, &op, ref.key, o != NULL, &how);
    if (o) {
        o->signal = 1;
        o->ack_seq = how.ack_seq; /* 0: applied directly, nothing to wait for */
        o->signal_rc = how.applied_rc;
        if (!how.applied)
            o->need_remote = 1;
    }
    fr_peer *p = &w->peers[target];
    if (!o && op.bytes > 0 && !fr_op_is_eager(&op)) {
        peer_idle pi = {p};
        fr_wait_until(sends_done, &pi); /* the origin buffer is free once its message left */
    }
    return rc;
}

FR_API int MPIX_Put_signal(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Sync counter, MPI_Win win)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Put_signal"));
    FR_WIN_EXIT("MPIX_Put_signal", put_signal(w, origin_addr, origin_count, origin_datatype,
                                              target_rank, target_disp, target_count,
                                              target_datatype, &counter, NULL));
}
FR_PMPIX(Put_signal);

FR_API int MPIX_Iput_signal(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype, MPI_Sync counter,
                            MPI_Win win, MPI_Request *request)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPIX_Iput_signal"));
    if (!request)
        FR_WIN_EXIT("MPIX_Iput_signal", fr_errorf(FR_ERR_ARG, "request is NULL"));
    FR_WIN_EXIT("MPIX_Iput_signal", put_signal(w, origin_addr, origin_count, origin_datatype,
                                               target_rank, target_disp, target_count,
                                               target_datatype, &counter, request));
}
FR_PMPIX(Iput_signal);
