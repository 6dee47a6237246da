/* iop.h - request-returning RMA (MPI_Iput, MPI_Iget, MPI_Iaccumulate, MPIX_Iput_signal).
 *
 * The request owns one operation, as MPI-3's request-based operations do (api/rma_requests.h:
 * the transport reports when it left and when it is complete at the origin); what the proposal
 * adds is completion at the target, learned from the counts the protocols already return (an
 * unlock's ack) or, when the application waits before its epoch closes, by asking the target
 * for an acknowledgement that covers the operation (a BUMP without bump, sync_counter.c). */
#ifndef FR_IOP_H
#define FR_IOP_H

#include "flexrma.h"
#include "api/rma_ops.h"
#include "api/rma_requests.h"

typedef struct iop {
    fr_rma_req op;    /* the operation, complete at the origin */
    int need_remote;  /* a put or accumulate to another process: wait for the target */
    int signal;       /* MPIX_Iput_signal: complete once the bump is acknowledged */
    uint64_t ack_seq; /* ... by this acknowledgement; 0: applied directly (counter_bump.c) */
    int signal_rc;    /* ... with this result */
} iop;

/* A new request for op (prepared by fr_rma_prepare, op->bytes may be 0) to target. */
iop *fr_iop_new(fr_win *w, int target, fr_op *op);

#endif
