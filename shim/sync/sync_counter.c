/* sync_counter.c - counter packets: a bump applied only after the operations it follows.
 *
 * A sync-ops request (ext/syncobj) ends with BUMP(upto): "once `upto` operations from me are
 * complete in your window, add one to this counter". The owner applies it when ops_done reaches
 * upto, exactly as an UNLOCK is released (sync_lock.c), so no process can observe the bump
 * before the data: a large put's data travels in its own message and may land after the BUMP
 * packet itself. BUMPs of one origin apply in the order sent (a later one never has a smaller
 * upto). The window is always exposed to them: they are never held for an epoch.
 *
 * With FR_PKTF_ACK the owner answers BUMP_ACK(seq) once applied (remote completion); with
 * FR_PKTF_NOBUMP as well, it only answers (a remote-completion request that covered more
 * operations after its bump). COUNTER_READ is answered at once. */
#include "counters.h"
#include "sync.h"

#include <stdio.h>
#include <string.h>

static void apply(fr_win *w, int src, const fr_pkt *p)
{
    int rc = MPI_SUCCESS;
    if (!(p->flags & FR_PKTF_NOBUMP)) {
        rc = fr_counter_bump(w, p->dtype);
        if (rc != MPI_SUCCESS)
            fprintf(stderr, "flexrma: rank %d: dropped a counter bump from rank %d: %s\n",
                    w->rank, src, fr_error_detail());
    }
    if (p->flags & FR_PKTF_ACK) {
        fr_pkt ack = {.type = FR_PKT_BUMP_ACK, .seq = p->seq, .arg = p->arg,
                      .op = rc != MPI_SUCCESS};
        w->peers[src].tp->notify(w, src, &ack);
    }
}

void fr_target_bump(fr_win *w, int src, const fr_pkt *p)
{
    fr_peer *peer = &w->peers[src];
    if (peer->nbumps == 0 && peer->ops_done >= p->arg) {
        apply(w, src, p);
        return;
    }
    fr_grow(&peer->bumps, &peer->cap_bumps, peer->nbumps + 1, sizeof *peer->bumps);
    peer->bumps[peer->nbumps++] = *p;
}

void fr_bumps_op_done(fr_win *w, int src)
{
    fr_peer *peer = &w->peers[src];
    /* One at a time, taken out before it applies: applying completes requests, which may
     * send, but never adds a BUMP of src here. */
    while (peer->nbumps > 0 && peer->ops_done >= peer->bumps[0].arg) {
        fr_pkt ready = peer->bumps[0];
        peer->nbumps--;
        memmove(peer->bumps, peer->bumps + 1, peer->nbumps * sizeof *peer->bumps);
        apply(w, src, &ready);
    }
}

void fr_target_counter_read(fr_win *w, int src, const fr_pkt *p)
{
    uint64_t value = 0;
    int rc = fr_counter_read(w, p->dtype, &value);
    fr_pkt reply = {.type = FR_PKT_COUNTER_VALUE, .seq = p->seq, .arg = value,
                    .op = rc != MPI_SUCCESS};
    w->peers[src].tp->notify(w, src, &reply);
}

void fr_origin_bump_acked(fr_win *w, int src, const fr_pkt *p)
{
    fr_peer *peer = &w->peers[src];
    peer->acks_got = p->seq;
    if (peer->remote_upto < p->arg)
        peer->remote_upto = p->arg; /* every operation it covered is complete there */
    if (p->op)
        peer->ack_failed = p->seq;
}

void fr_ack_ask(fr_win *w, int target, uint64_t upto)
{
    fr_peer *p = &w->peers[target];
    if (p->ack_upto_asked >= upto)
        return; /* one already asked for covers them */
    fr_pkt ask;
    fr_ack_packet(w, target, &ask)->arg = p->ops_sent;
    p->tp->notify(w, target, &ask);
    fr_ack_trailed(w, target, &ask);
}

fr_pkt *fr_ack_packet(fr_win *w, int target, fr_pkt *ask)
{
    *ask = (fr_pkt){.type = FR_PKT_BUMP, .flags = FR_PKTF_NOBUMP | FR_PKTF_ACK,
                    .seq = ++w->peers[target].acks_asked};
    return ask;
}

void fr_ack_trailed(fr_win *w, int target, const fr_pkt *ask)
{
    w->peers[target].ack_upto_asked = ask->arg;
}

int fr_bump_ack_result(fr_win *w, int target, uint64_t seq)
{
    if (w->peers[target].ack_failed != seq)
        return MPI_SUCCESS;
    return fr_errorf(FR_ERR_COUNTER, "rank %d dropped the bump: the counter was freed", target);
}

void fr_origin_counter_value(fr_win *w, int src, const fr_pkt *p)
{
    fr_peer *peer = &w->peers[src];
    peer->reads_got = p->seq;
    peer->read_value = p->arg;
    peer->read_failed = p->op;
}
