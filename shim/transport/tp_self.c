/* tp_self.c - the transport to oneself: operations are local copies, synchronization packets are
 * handed straight to the protocol. Most operations to oneself never reach the queue this
 * flushes: they run at the call (fr_self_run, from api/rma_ops.c) wherever the epoch lets them
 * (sync/epoch.c, fr_win_self_ready); what is queued is what could not run yet. */
#include "progress/request.h"
#include "transport.h"

int fr_self_run(fr_win *w, const fr_op *op)
{
    fr_peer *p = &w->peers[w->rank];
    int rc = fr_local_op(w, op);
    p->ops_sent++; /* before the target side counts it done */
    p->fence_sent += op->epoch == FR_EPOCH_FENCE;
    if (op->req)
        op->req->cls->op_issued(op->req, p->ops_sent, 1);
    fr_target_op_done(w, w->rank, op->epoch, 0);
    return rc;
}

static int self_flush(fr_win *w, int target, fr_opq *q, const fr_pkt *lead, fr_pkt *trail)
{
    fr_peer *p = &w->peers[target];
    int rc = MPI_SUCCESS;
    if (lead)
        fr_proto.packet(w, target, lead);
    for (size_t i = 0; i < q->n; i++) {
        int orc = fr_self_run(w, &q->ops[i]);
        if (rc == MPI_SUCCESS)
            rc = orc;
    }
    fr_opq_clear(q);
    if (trail) {
        trail->arg = p->ops_sent;
        fr_proto.packet(w, target, trail);
    }
    return rc;
}

static int self_notify(fr_win *w, int target, const fr_pkt *pkt)
{
    fr_proto.packet(w, target, pkt);
    return MPI_SUCCESS;
}

const fr_transport fr_tp_self = {"self", self_flush, self_notify, NULL, FR_PKT_STRUCT, 0};
