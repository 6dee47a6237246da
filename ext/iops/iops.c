/* iops.c - MPI_Iput, MPI_Iget, MPI_Iaccumulate: an RMA call that returns a request.
 *
 * The operation joins its epoch exactly as MPI_Put would (counted, batched, completed by the
 * closing call). What the request adds: waiting for it issues whatever is queued to that target
 * at once (fr_win_issue_now) instead of at the closing call, then waits until the operation is
 * complete at the origin and, for puts and accumulates, at the target. */
#include "iop.h"
#include "progress/entry.h"
#include "core/next.h"
#include "sync/sync.h"

static void iop_advance(fr_req *r)
{
    iop *o = (iop *)r;
    if (!r->active || !r->w)
        return;
    fr_win *w = r->w;
    int target = o->op.target;
    fr_peer *p = &w->peers[target];
    if (!fr_rma_req_here(&o->op))
        return;
    if (r->detached && !o->signal) {
        /* Freed by the application: nobody will look at its completion, and the epoch's
         * closing call completes the operation at the target. */
        fr_req_complete(r, MPI_SUCCESS);
        return;
    }
    if (o->signal) {
        if (o->ack_seq == 0)
            fr_req_complete(r, o->signal_rc);
        else if (p->acks_got >= o->ack_seq)
            fr_req_complete(r, fr_bump_ack_result(w, target, o->ack_seq));
        return;
    }
    if (o->need_remote && p->remote_upto < o->op.ordinal) {
        /* One acknowledgement covers every operation sent so far, for all requests waiting. */
        fr_ack_ask(w, target, o->op.ordinal);
        return;
    }
    fr_req_complete(r, MPI_SUCCESS);
}

static const fr_req_class iop_class = {
    .name = "request-returning RMA request",
    .start = NULL, /* not persistent */
    .advance = iop_advance,
    .cancel = NULL, /* MPI_Cancel: the operation cannot be taken back */
    .op_issued = fr_rma_req_issued,
    .op_done_here = fr_rma_req_done_here,
    .epoch_bound = 1,
};

iop *fr_iop_new(fr_win *w, int target, fr_op *op)
{
    iop *o = (iop *)fr_rma_req_new(&iop_class, w, target, op, sizeof *o);
    o->need_remote = op->req && op->kind != FR_OP_GET && target != w->rank;
    return o;
}

static int irma(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                MPI_Request *request)
{
    if (!request)
        return fr_errorf(FR_ERR_ARG, "request is NULL");
    fr_op op;
    int rc = fr_rma_prepare(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype, mop, 1,
                            &op);
    if (rc != MPI_SUCCESS)
        return rc;
    iop *o = fr_iop_new(w, target, &op);
    *request = o->op.req.handle;
    return op.req ? fr_rma_issue(w, target, &op) : MPI_SUCCESS;
}

FR_API int MPI_Iput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Iput"));
    FR_WIN_EXIT("MPI_Iput", irma(w, FR_OP_PUT, origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count, target_datatype,
                                 MPI_OP_NULL, request));
}
FR_PMPI(Iput);

FR_API int MPI_Iget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Iget"));
    FR_WIN_EXIT("MPI_Iget", irma(w, FR_OP_GET, origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count, target_datatype,
                                 MPI_OP_NULL, request));
}
FR_PMPI(Iget);

FR_API int MPI_Iaccumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                           MPI_Request *request)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Iaccumulate"));
    FR_WIN_EXIT("MPI_Iaccumulate", irma(w, FR_OP_ACC, origin_addr, origin_count, origin_datatype,
                                        target_rank, target_disp, target_count, target_datatype,
                                        op, request));
}
FR_PMPI(Iaccumulate);
