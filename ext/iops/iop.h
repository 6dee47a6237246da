/* iop.h - request-returning RMA (MPI_Iput, MPI_Iget, MPI_Iaccumulate, MPIX_Iput_signal).
 *
 * The request owns one operation (fr_op.req): the transport reports when the operation left and
 * when it is complete at the origin (request.h, op_issued/op_done_here). Completion at the
 * target is learned from the counts the protocols already return (an unlock's ack) or, when the
 * application waits before its epoch closes, by asking the target for an acknowledgement that
 * covers the operation (a BUMP without bump, sync_counter.c). */
#ifndef FR_IOP_H
#define FR_IOP_H

#include "flexrma.h"
#include "api/rma_ops.h"
#include "progress/request.h"
#include "win/win.h"

typedef struct iop {
    fr_req req;
    int target;
    int need_remote;  /* a put or accumulate to another process: wait for the target */
    int issued;       /* the operation left */
    int done_here;    /* ... and is complete at the origin */
    uint64_t ordinal; /* its number among my operations to target (fr_peer.ops_sent) */
    int signal;       /* MPIX_Iput_signal: complete once the bump is acknowledged */
    uint64_t ack_seq; /* ... by this acknowledgement; 0: applied directly (counter_bump.c) */
    int signal_rc;    /* ... with this result */
} iop;

/* A new request for op (prepared by fr_rma_prepare, op->bytes may be 0) to target. */
iop *fr_iop_new(fr_win *w, int target, fr_op *op);

#endif
