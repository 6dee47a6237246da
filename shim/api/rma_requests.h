/* rma_requests.h - a request that owns one RMA operation (fr_op.req), and waits for it to be
 * complete at the origin: MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate
 * (rma_requests.c); ext/iops builds MPI_Iput and MPIX_Iput_signal on it, adding completion at
 * the target.
 *
 * The transport reports when the operation left (with its number among my operations to its
 * target) and when it is complete here (request.h, op_issued/op_done_here). A wait does not
 * wait for the epoch's closing call: it issues the target's queue at once (fr_win_issue_now). */
#ifndef FR_RMA_REQUESTS_H
#define FR_RMA_REQUESTS_H

#include "progress/request.h"
#include "win/win.h"

typedef struct fr_rma_req {
    fr_req req;
    int target;
    int issued;       /* the operation left */
    int done_here;    /* ... and is complete at the origin */
    uint64_t ordinal; /* its number among my operations to target (fr_peer.ops_sent) */
} fr_rma_req;

/* A request of class cls (size bytes, >= sizeof(fr_rma_req)) for op to target; op->req is set.
 * Complete at once when nothing moves (MPI_PROC_NULL, zero bytes): op->req stays NULL then. */
fr_rma_req *fr_rma_req_new(const fr_req_class *cls, fr_win *w, int target, fr_op *op,
                           size_t size);
/* Is the operation complete at the origin? Issues what is queued to its target first, when it
 * has not left yet. */
int fr_rma_req_here(fr_rma_req *r);
/* The class callbacks the transport calls (fr_req_class.op_issued, op_done_here). */
void fr_rma_req_issued(fr_req *r, uint64_t ordinal, int done_here);
void fr_rma_req_done_here(fr_req *r);

#endif
