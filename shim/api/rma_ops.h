/* rma_ops.h - the core of every RMA call, shared by MPI_Put/Get/Accumulate (rma_ops.c) and the
 * request-returning and signalling variants of the extensions (ext/iops). */
#ifndef FR_RMA_OPS_H
#define FR_RMA_OPS_H

#include "sync/sync.h"
#include "win/win.h"

/* The RMA calls (rma_ops.c). Check an operation and describe it in *op, with its epoch when
 * need_epoch; op->bytes == 0 for one that moves nothing (MPI_PROC_NULL target, zero size). */
int fr_rma_prepare(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                   int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                   int need_epoch, fr_op *op);
/* The same for a fetching accumulate (kind FR_OP_GACC or FR_OP_CAS, atomics.c): the result
 * buffer must take the target's data: the same predefined element type, the same bytes. */
int fr_rma_prepare_fetch(fr_win *w, fr_opkind kind, const void *oaddr, int ocount,
                         MPI_Datatype otype, void *raddr, int rcount, MPI_Datatype rtype,
                         int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op mop,
                         fr_op *op);
/* Issue a prepared operation: copied into the target's window now where its epoch already
 * allows a direct copy (direct.h) and nothing of mine to it is queued or in flight, else queued
 * for the epoch's closing call. Returns the copy's result (MPI_SUCCESS when queued). */
int fr_rma_issue(fr_win *w, int target, const fr_op *op);
/* The short path of MPI_Put and MPI_Get (kind FR_OP_PUT or FR_OP_GET; the end of this file):
 * 1 when the call was decided there, the data copied and counted; 0 when it must take the full
 * path from its start, which raises every error. */
int fr_rma_short(fr_win *w, fr_opkind kind, const void *oaddr, int ocount, MPI_Datatype otype,
                 int target, MPI_Aint tdisp, int tcount, MPI_Datatype ttype);
/* Count it in the window's statistics. */
void fr_rma_count(fr_win *w, const fr_op *op);

/* ---- the short path ----
 * A put, a get or a one-element accumulate to a node peer whose window this process maps (whole,
 * or the part an adoption moved: its whole pages), in my lock epoch on it or a counter epoch, is
 * a copy or an atomic and nothing else; the full path above (an fr_op described and checked, its
 * epoch found, fr_rma_issue, fr_direct_try) costs several times the copy at 8 bytes. So those
 * calls first try a short path: the few tests that decide such a call exactly as the full path
 * would (its checks passing, fr_direct_try copying), then the copy. When any test fails, the
 * call takes the full path from its start, which raises every error: the short path never
 * decides an error itself. */

/* The target's member entry if an operation of `kind` to it would be copied at once as far as
 * the epoch and the queues say: target is a node peer whose window is mapped here whole
 * (fr_peer.mapped), nothing of mine to it packed or in flight, and either in a counter epoch
 * (a started sync-ops request covers the kind: fr_win_access_epoch's first choice, which
 * direct.c's `permitted` always lets through) with nothing in its counter queue, or in my lock
 * epoch, whose lock I hold in its lock word (taken here at the epoch's first operation when it
 * is free and my turn: fr_lock_take_early, as copy_now takes it) or took with MPI_MODE_NOCHECK
 * (`permitted`), with nothing in the epoch's queue: what copy_now asks of the epoch's queue.
 * NULL otherwise (MPI_PROC_NULL, a rank out of range, myself included). */
static inline fr_peer *fr_rma_short_peer(fr_win *w, int target, fr_opkind kind)
{
    if ((unsigned)target >= (unsigned)w->size)
        return NULL;
    fr_peer *p = &w->peers[target];
    if (!p->mapped || p->packed.len || p->pending)
        return NULL;
    if (p->cover[kind >= FR_OP_ACC ? FR_OP_ACC : kind])
        return p->cq.n ? NULL : p; /* a counter epoch: always open to a copy */
    if (!p->lock_held || p->q.n)
        return NULL;
    if (p->lock_nocheck || p->dlock == FR_DLOCK_HELD)
        return p;
    /* The epoch's first operation takes the peer's free lock word now, as copy_now would. */
    return fr_lock_take_early(w, target) ? p : NULL;
}

/* Where `bytes` (> 0) of a contiguous layout at displacement tdisp lie in p's mapped window,
 * NULL if not inside the part mapped here (fr_win_range: for a contiguous layout the span is
 * [start, start + bytes); the part lies inside the window, so a range in it is never an
 * error). */
static inline char *fr_rma_short_at(const fr_peer *p, MPI_Aint tdisp, MPI_Count bytes)
{
    MPI_Aint start;
    if (tdisp < 0 || __builtin_mul_overflow(tdisp, (MPI_Aint)p->disp_unit, &start) ||
        start < p->mapped_lo || start > p->mapped_hi || bytes > p->mapped_hi - start)
        return NULL;
    return p->mapped + start;
}

#endif
