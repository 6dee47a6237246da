/* rma_requests.c - MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate (MPI-3.1 11.3.5).
 *
 * The operation joins the passive-target epoch it is issued in exactly as MPI_Put would; the
 * request completes when the operation is complete at the origin: the origin buffer may be
 * reused, a get's or fetch's data has arrived. Completion at the target is the epoch's closing
 * call's or a flush's, as MPI says. (MPI_Iput, the proposal's, also waits for the target:
 * docs/specification.md, section 12.3.) Only in passive-target epochs (lock, lock_all) and in
 * flexrma's counter epochs; elsewhere MPI_ERR_RMA_SYNC. */
#include "core/next.h"
#include "progress/entry.h"
#include "rma_ops.h"
#include "rma_requests.h"
#include "sync/sync.h"

void fr_rma_req_issued(fr_req *r, uint64_t ordinal, int done_here)
{
    fr_rma_req *o = (fr_rma_req *)r;
    o->issued = 1;
    o->ordinal = ordinal;
    o->done_here = done_here;
}

void fr_rma_req_done_here(fr_req *r) { ((fr_rma_req *)r)->done_here = 1; }

int fr_rma_req_here(fr_rma_req *o)
{
    if (!o->issued)
        fr_win_issue_now(o->req.w, o->target, NULL);
    return o->issued && o->done_here;
}

fr_rma_req *fr_rma_req_new(const fr_req_class *cls, fr_win *w, int target, fr_op *op,
                           size_t size)
{
    fr_rma_req *o = (fr_rma_req *)fr_req_new(cls, w, 0, size);
    o->target = target;
    if (target == MPI_PROC_NULL || op->bytes == 0) {
        fr_req_complete(&o->req, MPI_SUCCESS); /* nothing moves */
        return o;
    }
    op->req = &o->req;
    return o;
}

static void local_advance(fr_req *r)
{
    if (r->active && r->w && fr_rma_req_here((fr_rma_req *)r))
        fr_req_complete(r, MPI_SUCCESS);
}

static const fr_req_class rma_req_class = {
    .name = "request-based RMA request",
    .advance = local_advance,
    .op_issued = fr_rma_req_issued,
    .op_done_here = fr_rma_req_done_here,
    .epoch_bound = 1,
};

/* Issue a prepared operation with a request, in a passive-target or counter epoch. */
static int rissue(fr_win *w, int target, fr_op *op, const char *call, MPI_Request *request)
{
    if (target != MPI_PROC_NULL && op->epoch != FR_EPOCH_LOCK && op->epoch != FR_EPOCH_COUNTER)
        return fr_errorf(FR_ERR_NOT_PASSIVE, "%s outside a passive-target epoch on rank %d (its "
                                             "epoch is %s)", call, target,
                         fr_epoch_name(op->epoch));
    fr_rma_req *o = fr_rma_req_new(&rma_req_class, w, target, op, sizeof *o);
    *request = o->req.handle;
    return op->req ? fr_rma_issue(w, target, op) : MPI_SUCCESS;
}

static int rrma(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                const char *call, MPI_Request *request)
{
    if (!request)
        return fr_errorf(FR_ERR_ARG, "request is NULL");
    fr_op op;
    int rc = fr_rma_prepare(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype, mop, 1,
                            &op);
    return rc != MPI_SUCCESS ? rc : rissue(w, target, &op, call, request);
}

static int rget_accumulate(fr_win *w, const void *oaddr, int ocount, MPI_Datatype otype,
                           void *raddr, int rcount, MPI_Datatype rtype, int target,
                           MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                           MPI_Request *request)
{
    if (!request)
        return fr_errorf(FR_ERR_ARG, "request is NULL");
    fr_op op;
    int rc = fr_rma_prepare_fetch(w, FR_OP_GACC, oaddr, ocount, otype, raddr, rcount, rtype,
                                  target, tdisp, tcount, ttype, mop, &op);
    return rc != MPI_SUCCESS ? rc : rissue(w, target, &op, "MPI_Rget_accumulate", request);
}

FR_API int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Rput)(origin_addr, origin_count, origin_datatype, target_rank,
                                          target_disp, target_count, target_datatype, win,
                                          request));
    FR_WIN_EXIT("MPI_Rput", rrma(w, FR_OP_PUT, origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count, target_datatype,
                                 MPI_OP_NULL, "MPI_Rput", request));
}
FR_PMPI(Rput);

FR_API int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Rget)(origin_addr, origin_count, origin_datatype, target_rank,
                                          target_disp, target_count, target_datatype, win,
                                          request));
    FR_WIN_EXIT("MPI_Rget", rrma(w, FR_OP_GET, origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count, target_datatype,
                                 MPI_OP_NULL, "MPI_Rget", request));
}
FR_PMPI(Rget);

FR_API int MPI_Raccumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                           MPI_Request *request)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Raccumulate)(origin_addr, origin_count, origin_datatype,
                                                 target_rank, target_disp, target_count,
                                                 target_datatype, op, win, request));
    FR_WIN_EXIT("MPI_Raccumulate", rrma(w, FR_OP_ACC, origin_addr, origin_count, origin_datatype,
                                        target_rank, target_disp, target_count, target_datatype,
                                        op, "MPI_Raccumulate", request));
}
FR_PMPI(Raccumulate);

FR_API int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                               MPI_Request *request)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Rget_accumulate)(origin_addr, origin_count, origin_datatype,
                                                     result_addr, result_count, result_datatype,
                                                     target_rank, target_disp, target_count,
                                                     target_datatype, op, win, request));
    FR_WIN_EXIT("MPI_Rget_accumulate",
                rget_accumulate(w, origin_addr, origin_count, origin_datatype, result_addr,
                                result_count, result_datatype, target_rank, target_disp,
                                target_count, target_datatype, op, request));
}
FR_PMPI(Rget_accumulate);
