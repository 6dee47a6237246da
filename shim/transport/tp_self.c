/* tp_self.c - the transport to oneself: operations are local copies, synchronization packets are
 * handed straight to the protocol. */
#include "progress/request.h"
#include "transport.h"

static int self_flush(fr_win *w, int target, fr_opq *q, const fr_pkt *lead, fr_pkt *trail)
{
    fr_peer *p = &w->peers[target];
    int rc = MPI_SUCCESS;
    if (lead)
        fr_proto.packet(w, target, lead);
    for (size_t i = 0; i < q->n; i++) {
        int orc = fr_local_op(w, &q->ops[i]);
        if (rc == MPI_SUCCESS)
            rc = orc;
        p->ops_sent++; /* before the target side counts it done */
        p->fence_sent += q->ops[i].epoch == FR_EPOCH_FENCE;
        if (q->ops[i].req)
            q->ops[i].req->cls->op_issued(q->ops[i].req, p->ops_sent, 1);
        fr_target_op_done(w, target, q->ops[i].epoch, 0);
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

const fr_transport fr_tp_self = {"self", self_flush, self_notify, NULL, FR_PKT_STRUCT};
