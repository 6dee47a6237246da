/* rma_ops.h - the core of every RMA call, shared by MPI_Put/Get/Accumulate (rma_ops.c) and the
 * request-returning and signalling variants of the extensions (ext/iops). */
#ifndef FR_RMA_OPS_H
#define FR_RMA_OPS_H

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
/* Count it in the window's statistics. */
void fr_rma_count(fr_win *w, const fr_op *op);

#endif
