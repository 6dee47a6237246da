/* local.c - operations whose target is this process: plain copies, no messages
 * (seed 001 section 4.1: "performed ... by doing a simple memory copy or local accumulate"). */
#include "acc.h"
#include "win.h"

#include <stdlib.h>
#include <string.h>

/* Move `bytes` of data from (src, scount, sdt) to (dst, dcount, ddt): one memmove when both
 * layouts are contiguous, one pack or unpack when one is, pack + unpack through a temporary
 * otherwise. */
static int copy_typed(const void *src, int scount, const fr_dtype *sdt, void *dst, int dcount,
                      const fr_dtype *ddt, size_t bytes)
{
    if (bytes == 0)
        return MPI_SUCCESS;
    if (sdt->contiguous && ddt->contiguous) {
        memmove(dst, src, bytes);
        return MPI_SUCCESS;
    }
    if (sdt->contiguous)
        return fr_unpack(src, bytes, dst, dcount, ddt);
    if (ddt->contiguous)
        return fr_pack(src, scount, sdt, dst, bytes);
    void *tmp = fr_xmalloc(bytes);
    int rc = fr_pack(src, scount, sdt, tmp, bytes);
    if (rc == MPI_SUCCESS)
        rc = fr_unpack(tmp, bytes, dst, dcount, ddt);
    free(tmp);
    return rc;
}

int fr_local_op(fr_win *w, const fr_op *op)
{
    char *target = (char *)w->base + op->target_disp * (MPI_Aint)w->disp_unit;
    size_t bytes = (size_t)op->bytes;
    switch (op->kind) {
    case FR_OP_PUT:
        return copy_typed(op->origin_addr, op->origin_count, op->origin_dt, target,
                          op->target_count, op->target_dt, bytes);
    case FR_OP_GET:
        return copy_typed(target, op->target_count, op->target_dt, op->origin_addr,
                          op->origin_count, op->origin_dt, bytes);
    case FR_OP_ACC: {
        const void *packed = op->origin_addr;
        void *tmp = NULL;
        int rc = MPI_SUCCESS;
        if (!op->origin_dt->contiguous) {
            packed = tmp = fr_xmalloc(bytes);
            rc = fr_pack(op->origin_addr, op->origin_count, op->origin_dt, tmp, bytes);
        }
        if (rc == MPI_SUCCESS)
            rc = fr_acc_apply(target, op->target_count, op->target_dt, packed, bytes,
                              fr_op_handle(op->op_index));
        free(tmp);
        return rc;
    }
    default:
        return fr_errorf(FR_ERR_INTERN, "unknown operation kind %d", op->kind);
    }
}
