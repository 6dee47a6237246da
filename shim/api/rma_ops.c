/* rma_ops.c - MPI_Put, MPI_Get and MPI_Accumulate.
 *
 * One core (rma_core) serves all three: it checks the arguments against the origin's copy of the
 * target's window size and displacement unit (seed 000 section 3: "can easily be checked locally"),
 * finds the epoch the operation belongs to, and queues it for the epoch's closing call. Nothing is
 * sent here (seed 001 section 4); only a copy into a node peer's window whose epoch allows it
 * happens at once (fr_rma_issue, or before all that the short path of rma_ops.h), and an
 * operation to myself runs at once wherever my window is open to it (issue_self). The target
 * checks the range again when the operation arrives. */
#include "dtype/acc.h"
#include "core/next.h"
#include "transport/direct.h"
#include "progress/entry.h"
#include "rma_ops.h"
#include "sync/sync.h"
#include "transport/transport.h"

#include <string.h>

static int check_count(int count, const char *which)
{
    if (count < 0)
        return fr_errorf(FR_ERR_COUNT, "%s count %d is negative", which, count);
    return MPI_SUCCESS;
}

/* Inlined into the three calls below, where kind is a constant. */
static inline __attribute__((always_inline)) int
prepare(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype, int target,
        MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop, int need_epoch, fr_op *op)
{
    *op = (fr_op){.kind = kind, .origin_addr = (void *)oaddr, .origin_count = ocount,
                  .target_disp = tdisp, .target_count = tcount};
    int rc;
    if (target == MPI_PROC_NULL) /* MPI: "the call is a no-op" */
        return MPI_SUCCESS;
    if ((rc = fr_win_check_rank(w, target)) || (rc = check_count(ocount, "origin")) ||
        (rc = check_count(tcount, "target")) || (rc = fr_dtype_get(otype, &op->origin_dt)) ||
        (rc = fr_dtype_get(ttype, &op->target_dt)) ||
        (need_epoch && (rc = fr_win_access_epoch(w, target, kind, &op->epoch))))
        return rc;
    MPI_Count obytes = fr_dtype_bytes(op->origin_dt, ocount);
    MPI_Count tbytes = fr_dtype_bytes(op->target_dt, tcount);
    if (obytes < 0 || tbytes < 0)
        return fr_errorf(FR_ERR_COUNT, "operation size overflows");
    if (kind >= FR_OP_ACC) {
        /* An accumulate of no data combines nothing, so its types need not agree (MPICH
         * accepts any, as its test badrma checks); its operation must still be one. */
        int empty = obytes == 0 && tbytes == 0;
        if ((!empty || fr_op_index(mop) < 0) && (rc = fr_op_check(mop, op->target_dt->elem)))
            return rc;
        if (!empty && op->origin_dt->elem != op->target_dt->elem)
            return fr_errorf(FR_ERR_TYPE_MISMATCH, "accumulate needs origin and target built from "
                                                   "the same predefined type");
        op->op_index = fr_op_index(mop);
    }
    if (obytes != tbytes)
        return fr_errorf(FR_ERR_TYPE_MISMATCH, "origin describes %lld bytes, target %lld",
                         (long long)obytes, (long long)tbytes);
    fr_peer *p = &w->peers[target];
    MPI_Aint offset;
    rc = FR_UNLIKELY(w->attr_flavor == MPI_WIN_FLAVOR_DYNAMIC)
             ? fr_regions_judge(w, target, tdisp, tcount, op->target_dt, &offset)
             : fr_win_range(p->size, p->disp_unit, tdisp, tcount, op->target_dt, target, &offset);
    if (rc)
        return rc;
    op->bytes = obytes;
    return MPI_SUCCESS;
}

int fr_rma_prepare(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                   int need_epoch, fr_op *op)
{
    return prepare(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype, mop, need_epoch,
                   op);
}

/* A copy into a node peer's window costs less than queueing the operation and flushing it at
 * the closing call, so an operation whose epoch already lets it reach the target directly
 * (direct.h) is copied at once; it is then complete at both ends, as MPI allows any time in
 * the epoch. Only when nothing of mine to that target waits in a queue or is in flight: a copy
 * must not overtake what was issued before it. Gets by cross-memory attach wait for the flush,
 * which reads them all in one system call (fr_direct_defers). */
static int copy_now(fr_win *w, int target, const fr_op *op, const fr_opq *q, int *rc)
{
    const fr_peer *p = &w->peers[target];
    if (op->epoch == FR_EPOCH_LOCK && p->dlock != FR_DLOCK_HELD && q->n == 0)
        (void)fr_lock_take_early(w, target); /* a node peer's free lock: copy, don't queue */
    return q->n == 0 && p->packed.len == 0 && p->pending == 0 &&
           !(op->kind == FR_OP_GET && fr_direct_defers(w, target, op)) &&
           fr_direct_try(w, target, op, 1, rc);
}

/* An operation to myself completes at the call wherever my window is open to it now (sync/epoch.c
 * says where), results included: the program may then reuse or free its buffers at once, as
 * on an MPI that completes operations on its own process at the call. Nothing else would touch
 * those buffers later: queued, they would be read and written at the closing call. */
static int issue_self(fr_win *w, const fr_op *op)
{
    int rc, drc;
    if (fr_win_self_ready(w, op->epoch, &drc)) {
        rc = fr_self_run(w, op);
    } else {
        fr_peer *me = &w->peers[w->rank];
        fr_opq_push(op->epoch == FR_EPOCH_COUNTER ? &me->cq : &me->q, op);
        rc = MPI_SUCCESS;
    }
    return drc ? drc : rc;
}

static inline __attribute__((always_inline)) int issue(fr_win *w, int target, const fr_op *op)
{
    fr_peer *p = &w->peers[target];
    int counter = op->epoch == FR_EPOCH_COUNTER;
    fr_opq *q = counter ? &p->cq : &p->q;
    int rc = MPI_SUCCESS;
    /* A counter epoch has no closing call that could batch its operations better than packing
     * them now (the queued ones must stay behind, in order). */
    if (FR_UNLIKELY(target == w->rank))
        rc = issue_self(w, op);
    else if (!copy_now(w, target, op, q, &rc) &&
             !(counter && q->n == 0 && fr_batch_pack_now(w, target, op, &rc)))
        fr_opq_push(q, op);
    if (op->epoch == FR_EPOCH_FENCE)
        w->fence_ops++;
    fr_rma_count(w, op);
    return rc;
}

int fr_rma_issue(fr_win *w, int target, const fr_op *op) { return issue(w, target, op); }

void fr_rma_count(fr_win *w, const fr_op *op)
{
    w->st.bytes += (uint64_t)op->bytes;
    if (op->kind == FR_OP_PUT)
        w->st.puts++;
    else if (op->kind == FR_OP_GET)
        w->st.gets++;
    else
        w->st.accs++; /* every kind of accumulate */
}

/* The short path of MPI_Put and MPI_Get (rma_ops.h): the same datatype and count on both sides,
 * a contiguous layout, into or out of a mapped peer's window in my lock epoch. What the full
 * path would also do for it: count it in the statistics (fr_rma_count, and direct as
 * fr_direct_try counts). Returns 0 when the call must take the full path. */
static inline __attribute__((always_inline)) int
short_copy(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
           int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype)
{
    fr_dtype *d;
    fr_peer *p;
    MPI_Count bytes;
    char *at;
    if (otype != ttype || ocount != tcount || ocount <= 0 ||
        !(p = fr_rma_short_peer(w, target, kind)) || fr_dtype_get(otype, &d) != MPI_SUCCESS ||
        !d->contiguous || (bytes = fr_dtype_bytes(d, ocount)) <= 0 ||
        !(at = fr_rma_short_at(p, tdisp, bytes)))
        return 0;
    if (kind == FR_OP_PUT) {
        fr_copy_bytes(at, oaddr, (size_t)bytes);
        w->st.puts++;
    } else {
        fr_copy_bytes((void *)oaddr, at, (size_t)bytes);
        w->st.gets++;
    }
    w->st.bytes += (uint64_t)bytes;
    w->st.direct++;
    return 1;
}

int fr_rma_short(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                 int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype)
{
    return short_copy(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype);
}

static inline __attribute__((always_inline)) int
rma_core(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype, int target,
         MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop)
{
    if (kind != FR_OP_ACC &&
        short_copy(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype))
        return MPI_SUCCESS;
    fr_op op;
    int rc = prepare(w, kind, oaddr, ocount, otype, target, tdisp, tcount, ttype, mop, 1, &op);
    if (rc == MPI_SUCCESS && op.bytes > 0)
        rc = issue(w, target, &op);
    return rc;
}

FR_API int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Put)(origin_addr, origin_count, origin_datatype, target_rank,
                                         target_disp, target_count, target_datatype, win));
    FR_WIN_EXIT("MPI_Put", rma_core(w, FR_OP_PUT, origin_addr, origin_count, origin_datatype,
                                    target_rank, target_disp, target_count, target_datatype,
                                    MPI_OP_NULL));
}
FR_PMPI(Put);

FR_API int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Get)(origin_addr, origin_count, origin_datatype, target_rank,
                                         target_disp, target_count, target_datatype, win));
    FR_WIN_EXIT("MPI_Get", rma_core(w, FR_OP_GET, origin_addr, origin_count, origin_datatype,
                                    target_rank, target_disp, target_count, target_datatype,
                                    MPI_OP_NULL));
}
FR_PMPI(Get);

FR_API int MPI_Accumulate(const void *origin_addr, int origin_count,
                          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                          int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Accumulate)(origin_addr, origin_count, origin_datatype,
                                                target_rank, target_disp, target_count,
                                                target_datatype, op, win));
    FR_WIN_EXIT("MPI_Accumulate", rma_core(w, FR_OP_ACC, origin_addr, origin_count,
                                           origin_datatype, target_rank, target_disp, target_count,
                                           target_datatype, op));
}
FR_PMPI(Accumulate);
