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
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>

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
    size_t k = 0;
    while (k < peer->nbumps && peer->ops_done >= peer->bumps[k].arg)
        k++;
    if (k == 0)
        return;
    /* Take them out first: applying may complete requests that issue more. */
    fr_pkt *ready = fr_xmalloc(k * sizeof *ready);
    for (size_t i = 0; i < k; i++)
        ready[i] = peer->bumps[i];
    for (size_t i = k; i < peer->nbumps; i++)
        peer->bumps[i - k] = peer->bumps[i];
    peer->nbumps -= k;
    for (size_t i = 0; i < k; i++)
        apply(w, src, &ready[i]);
    free(ready);
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

void fr_origin_counter_value(fr_win *w, int src, const fr_pkt *p)
{
    fr_peer *peer = &w->peers[src];
    peer->reads_got = p->seq;
    peer->read_value = p->arg;
    peer->read_failed = p->op;
}
