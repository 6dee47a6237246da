/* local.c - operations whose target is this process: plain copies, no messages
 * (seed 001 section 4.1: "performed ... by doing a simple memory copy or local accumulate"). */
#include "direct.h"
#include "win/win.h"

int fr_local_op(fr_win *w, const fr_op *op)
{
    MPI_Aint off;
    int rc;
    /* A dynamic window's memory may have been detached since the operation was issued. */
    if (w->attr_flavor == MPI_WIN_FLAVOR_DYNAMIC &&
        (rc = fr_win_attached_range(&w->attached, op->target_disp, op->target_count,
                                    op->target_dt, w->rank, &off)) != MPI_SUCCESS)
        return rc;
    char *target = (char *)w->base + op->target_disp * (MPI_Aint)w->disp_unit;
    size_t bytes = (size_t)op->bytes;
    switch (op->kind) {
    case FR_OP_PUT:
        return fr_copy_typed(op->origin_addr, op->origin_count, op->origin_dt, target,
                          op->target_count, op->target_dt, bytes);
    case FR_OP_GET:
        return fr_copy_typed(target, op->target_count, op->target_dt, op->origin_addr,
                          op->origin_count, op->origin_dt, bytes);
    case FR_OP_ACC:
    case FR_OP_GACC:
    case FR_OP_CAS:
        return fr_direct_acc_op(w, w->rank, target, op);
    default:
        return fr_errorf(FR_ERR_INTERN, "unknown operation kind %d", op->kind);
    }
}
