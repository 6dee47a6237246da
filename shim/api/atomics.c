/* atomics.c - MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap: accumulates that bring
 * the target's values from just before back (MPI-3.1 section 11.3.4).
 *
 * They are accumulates in every respect but the reply: checked like MPI_Accumulate (rma_ops.c's
 * core, with MPI_NO_OP and MPI_REPLACE on every type), atomic per element with every other
 * accumulate and applied in program order with the origin's others, whoever applies them. Into
 * a window the origin maps, the origin applies them itself (hardware atomics for a few elements,
 * else holding the stripe: direct.c, acc_shared.c); otherwise they travel with their operands
 * inline and the target sends the values before back as a message of their own, received
 * straight into the result buffer (am_send.c, am_recv.c). Like MPI_Get, the result is there
 * when the epoch's closing call (or a flush) returns. */
#include "core/next.h"
#include "dtype/acc.h"
#include "progress/entry.h"
#include "rma_ops.h"
#include "transport/direct.h"

/* With MPI_NO_OP the origin arguments are ignored (MPI-3.1 11.3.4): the target's stand in for
 * the checks. */
int fr_rma_prepare_fetch(fr_win *w, fr_opkind kind, const void *oaddr, int ocount,
                         MPI_Datatype otype, void *raddr, int rcount, MPI_Datatype rtype,
                         int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                         fr_op *op)
{
    int no_op = mop == MPI_NO_OP;
    int rc = fr_rma_prepare(w, kind, no_op ? NULL : oaddr, no_op ? tcount : ocount,
                            no_op ? ttype : otype, target, tdisp, tcount, ttype, mop, 1, op);
    if (rc != MPI_SUCCESS || target == MPI_PROC_NULL)
        return rc;
    if (rcount < 0)
        return fr_errorf(FR_ERR_COUNT, "result count %d is negative", rcount);
    if ((rc = fr_dtype_get(rtype, &op->result_dt)))
        return rc;
    MPI_Count rbytes = fr_dtype_bytes(op->result_dt, rcount);
    if (!(rbytes == 0 && op->bytes == 0) && op->result_dt->elem != op->target_dt->elem)
        return fr_errorf(FR_ERR_TYPE_MISMATCH, "the result buffer is not built from the target's "
                                               "predefined type");
    if (rbytes != op->bytes)
        return fr_errorf(FR_ERR_TYPE_MISMATCH, "result describes %lld bytes, target %lld",
                         (long long)rbytes, (long long)op->bytes);
    op->result_addr = raddr;
    op->result_count = rcount;
    return MPI_SUCCESS;
}

/* The short path (rma_ops.h) of a fetching accumulate of one element of a predefined type
 * without padding, the same type for all its buffers, into a mapped peer's window in my lock
 * epoch: combined there at once (fr_direct_acc_apply, fr_direct_cas: a hardware atomic, or
 * holding the element's stripe), as fr_direct_try would, when accumulate ordering allows it
 * now (fr_direct_acc_in_order). mop: MPI_REPLACE for MPI_Compare_and_swap, as the full path
 * checks it. Counted as the full path counts. Returns 0 when the call must take the full path;
 * else *rc, the combining's result. */
static inline __attribute__((always_inline)) int
short_fetch(fr_win *w, fr_opkind kind, MPI_Op mop, const void *oaddr, const void *caddr,
            void *raddr, MPI_Datatype type, int target, MPI_Aint tdisp, int *rc)
{
    fr_dtype *d;
    fr_peer *p;
    char *at;
    if (!(p = fr_rma_short_peer(w, target, kind)) || fr_dtype_get(type, &d) != MPI_SUCCESS ||
        !d->predefined || !d->contiguous || fr_op_check(mop, d->elem) != MPI_SUCCESS ||
        !fr_direct_acc_in_order(w, target) || !(at = fr_rma_short_at(p, tdisp, d->size)))
        return 0;
    if (kind == FR_OP_CAS)
        *rc = fr_direct_cas(w, target, at, d, oaddr, caddr, raddr);
    else
        *rc = fr_direct_acc_apply(w, target, at, 1, d, mop == MPI_NO_OP ? NULL : oaddr,
                                  (size_t)d->size, mop, raddr);
    w->st.accs++;
    w->st.bytes += (uint64_t)d->size;
    w->st.direct++;
    return 1;
}

static int get_accumulate(fr_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                          void *raddr, int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp,
                          int tcount, MPI_Datatype ttype, MPI_Op mop)
{
    int rc;
    /* one element of one type (with MPI_NO_OP the origin's arguments do not count) */
    if (tcount == 1 && rcount == 1 && rtype == ttype &&
        (mop == MPI_NO_OP || (ocount == 1 && otype == ttype)) &&
        short_fetch(w, FR_OP_GACC, mop, oaddr, NULL, raddr, ttype, target, tdisp, &rc))
        return rc;
    fr_op op;
    rc = fr_rma_prepare_fetch(w, FR_OP_GACC, oaddr, ocount, otype, raddr, rcount, rtype, target,
                              tdisp, tcount, ttype, mop, &op);
    if (rc == MPI_SUCCESS && op.bytes > 0)
        rc = fr_rma_issue(w, target, &op);
    return rc;
}

/* MPI-3.1 11.3.4: one element of a predefined type, compared bit by bit; flexrma takes any
 * predefined type without padding (the comparison must not see padding bytes). */
static int compare_and_swap(fr_win *w, const void *oaddr, const void *caddr, void *raddr,
                            MPI_Datatype type, int target, MPI_Aint tdisp)
{
    int rc;
    if (short_fetch(w, FR_OP_CAS, MPI_REPLACE, oaddr, caddr, raddr, type, target, tdisp, &rc))
        return rc;
    fr_op op;
    rc = fr_rma_prepare_fetch(w, FR_OP_CAS, oaddr, 1, type, raddr, 1, type, target, tdisp, 1, type,
                           MPI_REPLACE, &op);
    if (rc != MPI_SUCCESS || target == MPI_PROC_NULL)
        return rc;
    if (!op.target_dt->predefined || !op.target_dt->contiguous)
        return fr_errorf(FR_ERR_TYPE, "MPI_Compare_and_swap needs a predefined datatype without "
                                      "padding");
    op.compare_addr = caddr;
    return op.bytes > 0 ? fr_rma_issue(w, target, &op) : MPI_SUCCESS;
}

FR_API int MPI_Get_accumulate(const void *origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, void *result_addr, int result_count,
                              MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                              int target_count, MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Get_accumulate)(origin_addr, origin_count, origin_datatype,
                                                    result_addr, result_count, result_datatype,
                                                    target_rank, target_disp, target_count,
                                                    target_datatype, op, win));
    FR_WIN_EXIT("MPI_Get_accumulate",
                get_accumulate(w, origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op));
}
FR_PMPI(Get_accumulate);

FR_API int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                            int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Fetch_and_op)(origin_addr, result_addr, datatype, target_rank,
                                                  target_disp, op, win));
    FR_WIN_EXIT("MPI_Fetch_and_op", get_accumulate(w, origin_addr, 1, datatype, result_addr, 1,
                                                   datatype, target_rank, target_disp, 1,
                                                   datatype, op));
}
FR_PMPI(Fetch_and_op);

FR_API int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                void *result_addr, MPI_Datatype datatype, int target_rank,
                                MPI_Aint target_disp, MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Compare_and_swap)(origin_addr, compare_addr, result_addr,
                                                      datatype, target_rank, target_disp, win));
    FR_WIN_EXIT("MPI_Compare_and_swap", compare_and_swap(w, origin_addr, compare_addr, result_addr,
                                                         datatype, target_rank, target_disp));
}
FR_PMPI(Compare_and_swap);
