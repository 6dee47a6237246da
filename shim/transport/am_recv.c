/* am_recv.c - the message transport, target side: receive batches, run their packets.
 *
 * A packet that may not run yet is held, and so is every later packet from the same origin in
 * its role as origin, so they keep their order; they run when the condition clears (the lock is
 * granted, this process posts or enters the fence, the data of an earlier accumulate arrived;
 * see may_run). Replies to this process's own
 * epochs (UNLOCK_ACK) are never held behind them. Every operation is counted complete
 * (fr_target_op_done) only once its data is in the window, combined into it, or sent back; the
 * synchronization protocols wait on those counts.
 *
 * A target re-checks every range against its own window (a dynamic window: against the memory
 * attached now). An operation that fails the check comes from an origin that bypassed its own
 * checks, or that addresses memory of a dynamic window detached since the origin learned of it;
 * it is reported on stderr and refused: it never touches memory, yet is counted complete and
 * answered (its data message received and discarded, a get or fetch answered with zeros), so
 * nobody waits for it forever. */
#include "dtype/acc.h"
#include "direct.h"
#include "progress/isend.h"
#include "progress/progress.h"
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operation whose data moves in its own message. */
typedef struct target_xfer {
    fr_win *w;
    int src;
    fr_epoch epoch;
    uint64_t number;     /* fr_target_op_begin */
    const fr_dtype *tt;  /* held rebuilt target datatype */
    void *addr;          /* accumulate: where to combine */
    int count;
    int op_index;
    void *tmp;           /* accumulate: the origin's data */
    size_t tmp_len;
    void *reply;         /* fetching accumulate: the values before, on their way back */
} target_xfer;

static void xfer_done(void *ctx, MPI_Status *st)
{
    target_xfer *x = ctx;
    fr_win *w = x->w;
    fr_peer *peer = &w->peers[x->src];
    int src = x->src;
    if (x->tmp) {
        int rc = fr_direct_acc_apply(w, w->rank, x->addr, x->count, x->tt, x->tmp, x->tmp_len,
                                     fr_op_handle(x->op_index), NULL);
        if (rc != MPI_SUCCESS)
            fprintf(stderr, "flexrma: rank %d: accumulate from rank %d failed: %s\n", w->rank,
                    src, fr_error_detail());
        free(x->tmp);
        peer->accs_arriving--;
    }
    free(x->reply);
    fr_am_rxtype_unhold(x->tt);
    w->target_pending--;
    fr_target_op_done(w, src, x->epoch, x->number);
    free(x);
    if (peer->accs_arriving == 0 && peer->held)
        fr_am_replay_held(w, src); /* accumulates that waited for this one, and what follows */
}

static void reject(fr_win *w, int src, const fr_pkt *p, const char *why)
{
    (void)p;
    fprintf(stderr, "flexrma: rank %d: dropped an RMA operation from rank %d: %s\n", w->rank, src,
            why);
}

/* Answer src's fetch p in an ANSWER packet, sent now: the operation is complete here (an asked
 * get was never counted, direct.h). */
static void answer_now(fr_win *w, int src, const fr_pkt *p, const void *data, size_t len)
{
    fr_batch_answer(w, src, p, data, len);
    if (!(p->flags & FR_PKTF_ASKED))
        fr_target_op_done(w, src, (fr_epoch)p->epoch, 0);
}

/* A refused operation's data message, or the zeros that answer it. */
typedef struct refused {
    fr_win *w;
    int src;
    fr_epoch epoch;
    uint64_t number;
    void *buf;
} refused;

static void refused_done(void *ctx, MPI_Status *st)
{
    (void)st;
    refused *x = ctx;
    free(x->buf);
    x->w->target_pending--;
    fr_target_op_done(x->w, x->src, x->epoch, x->number);
    free(x);
}

/* Report op p and finish it without touching the window. */
static void refuse(fr_win *w, int src, const fr_pkt *p, const char *why)
{
    reject(w, src, p, why);
    fr_epoch epoch = (fr_epoch)p->epoch;
    int answers = p->type == FR_PKT_GET || p->type == FR_PKT_GACC || p->type == FR_PKT_CAS;
    if (!answers && (p->flags & FR_PKTF_INLINE)) {
        fr_target_op_done(w, src, epoch, 0);
        return;
    }
    if (p->data_len > INT32_MAX)
        fr_fatal("refused operation of %llu bytes exceeds an MPI count",
                 (unsigned long long)p->data_len);
    if (answers && (p->flags & FR_PKTF_ANSWER)) {
        void *zeros = fr_xcalloc(1, p->data_len + 1);
        answer_now(w, src, p, zeros, (size_t)p->data_len);
        free(zeros);
        return;
    }
    refused *x = fr_xcalloc(1, sizeof *x);
    *x = (refused){w, src, epoch, fr_target_op_begin(w, src), fr_xcalloc(1, p->data_len + 1)};
    MPI_Request req;
    /* MPI_PACKED matches a message of any type, and any receive type matches it. */
    if (answers)
        FR_CHECK_MPI(fr_isend(x->buf, (int)p->data_len, MPI_PACKED, src, (int)p->data_tag,
                              w->comm, &req));
    else
        FR_CHECK_MPI(PMPI_Irecv(x->buf, (int)p->data_len, MPI_PACKED, src, (int)p->data_tag,
                                w->comm, &req));
    w->target_pending++;
    fr_pending_add(req, refused_done, x);
}

/* A fetching accumulate or compare-and-swap: applied now, in order with src's other
 * accumulates, and the values before sent back on its data tag (as MPI_PACKED: the origin
 * receives them with its result datatype). A failed one still answers, so the origin's receive
 * completes; the failure is reported here. */
static void run_fetch(fr_win *w, int src, const fr_pkt *p, const fr_dtype *tt, char *addr,
                      const unsigned char *data)
{
    size_t len = (size_t)p->data_len;
    int answer = (p->flags & FR_PKTF_ANSWER) != 0;
    uint64_t small[8] = {0}; /* an answer's values before, when they fit: no allocation */
    unsigned char *before = answer && len <= sizeof small ? (unsigned char *)small
                                                           : fr_xcalloc(1, len + 1);
    int rc;
    if (p->type == FR_PKT_CAS)
        rc = fr_direct_cas(w, w->rank, addr, tt, data, data + len, before);
    else
        rc = fr_direct_acc_apply(w, w->rank, addr, p->count, tt,
                                 (p->flags & FR_PKTF_INLINE) ? data : NULL, len,
                                 fr_op_handle(p->op), before);
    if (rc != MPI_SUCCESS)
        reject(w, src, p, fr_error_detail());
    if (answer) {
        answer_now(w, src, p, before, len);
        if (before != (unsigned char *)small)
            free(before);
        return;
    }
    if (len > INT32_MAX)
        fr_fatal("fetching accumulate of %zu bytes exceeds an MPI count", len);
    target_xfer *x = fr_xcalloc(1, sizeof *x);
    *x = (target_xfer){.w = w, .src = src, .epoch = (fr_epoch)p->epoch, .tt = tt, .reply = before};
    x->number = fr_target_op_begin(w, src);
    fr_am_rxtype_hold(tt);
    MPI_Request req;
    FR_CHECK_MPI(fr_isend(before, (int)len, MPI_PACKED, src, (int)p->data_tag, w->comm, &req));
    w->target_pending++;
    fr_pending_add(req, xfer_done, x);
}

/* A get whose data goes back in an ANSWER packet: read, and so complete, now. */
static void answer_get(fr_win *w, int src, const fr_pkt *p, const fr_dtype *tt, const char *addr)
{
    size_t len = (size_t)p->data_len;
    if (tt->contiguous) {
        answer_now(w, src, p, addr, len);
        return;
    }
    unsigned char *packed = fr_xmalloc(len + 1);
    if (fr_pack(addr, p->count, tt, packed, len) != MPI_SUCCESS) /* sizes checked above */
        fr_fatal("rank %d: packing a get of rank %d: %s", w->rank, src, fr_error_detail());
    answer_now(w, src, p, packed, len);
    free(packed);
}

static void run_op(fr_win *w, int src, const fr_pkt *p, const unsigned char *desc)
{
    const unsigned char *data = desc + fr_pkt_align(p->desc_len);
    fr_epoch epoch = (fr_epoch)p->epoch;
    /* The description is kept even for a get its origin took back: later packets name it. */
    int described = !(p->flags & FR_PKTF_TYPEDESC) ||
                    fr_am_rxtype_add(w, src, p->dtype, desc, (size_t)p->desc_len) == MPI_SUCCESS;
    if ((p->flags & FR_PKTF_ASKED) && !fr_direct_ask_serve(w, src, p->arg))
        return; /* taken back: the origin read it itself */
    if (!described) {
        refuse(w, src, p, fr_error_detail());
        return;
    }
    const fr_dtype *tt = fr_am_rxtype(w, src, p->dtype);
    MPI_Aint off = 0;
    if (!tt) {
        refuse(w, src, p, "unknown target datatype");
        return;
    }
    int range = w->attr_flavor == MPI_WIN_FLAVOR_DYNAMIC
                    ? fr_win_attached_range(&w->attached, p->disp, p->count, tt, w->rank, &off)
                    : fr_win_range(w->win_size, w->disp_unit, p->disp, p->count, tt, w->rank, &off);
    if (range != MPI_SUCCESS) {
        refuse(w, src, p, fr_error_detail());
        return;
    }
    if (fr_dtype_bytes(tt, p->count) != (MPI_Count)p->data_len) {
        refuse(w, src, p, "the operation's size does not match its target datatype");
        return;
    }
    char *addr = (char *)w->base + off;
    int rc = MPI_SUCCESS;
    if (p->type == FR_PKT_GACC || p->type == FR_PKT_CAS) {
        run_fetch(w, src, p, tt, addr, data);
        return;
    }
    if (p->flags & FR_PKTF_INLINE) {
        if (p->type == FR_PKT_PUT && tt->contiguous) /* data_len was checked just above */
            memcpy(addr, data, (size_t)p->data_len);
        else if (p->type == FR_PKT_PUT)
            rc = fr_unpack(data, (size_t)p->data_len, addr, p->count, tt);
        else
            rc = fr_direct_acc_apply(w, w->rank, addr, p->count, tt, data, (size_t)p->data_len,
                                     fr_op_handle(p->op), NULL);
        if (rc != MPI_SUCCESS)
            reject(w, src, p, fr_error_detail());
        fr_target_op_done(w, src, epoch, 0);
        return;
    }
    if (p->type == FR_PKT_GET && (p->flags & FR_PKTF_ANSWER)) {
        answer_get(w, src, p, tt, addr);
        return;
    }
    target_xfer *x = fr_xcalloc(1, sizeof *x);
    *x = (target_xfer){.w = w, .src = src, .epoch = epoch, .tt = tt, .addr = addr,
                       .count = p->count, .op_index = p->op};
    x->number = fr_target_op_begin(w, src);
    fr_am_rxtype_hold(tt);
    MPI_Request req;
    int tag = (int)p->data_tag;
    if (p->type == FR_PKT_PUT) {
        FR_CHECK_MPI(PMPI_Irecv(addr, p->count, tt->handle, src, tag, w->comm, &req));
    } else if (p->type == FR_PKT_GET) {
        FR_CHECK_MPI(fr_isend(addr, p->count, tt->handle, src, tag, w->comm, &req));
    } else {
        /* Received as MPI_PACKED (any message may be): the packed form fr_acc_apply takes, and
         * exactly data_len bytes even when the element type has gaps (MPI_DOUBLE_INT). */
        if (p->data_len > INT32_MAX)
            fr_fatal("accumulate of %llu bytes exceeds an MPI count",
                     (unsigned long long)p->data_len);
        x->tmp_len = (size_t)p->data_len;
        x->tmp = fr_xmalloc(x->tmp_len);
        w->peers[src].accs_arriving++;
        FR_CHECK_MPI(PMPI_Irecv(x->tmp, (int)x->tmp_len, MPI_PACKED, src, tag, w->comm, &req));
    }
    w->target_pending++;
    fr_pending_add(req, xfer_done, x);
}

static int is_acc(const fr_pkt *p)
{
    return p->type == FR_PKT_ACC || p->type == FR_PKT_GACC || p->type == FR_PKT_CAS;
}

/* Keep p as the struct it was decoded into, its body behind it. */
static void hold(fr_peer *peer, const fr_pkt *p, const unsigned char *body, size_t body_len)
{
    fr_held *h = fr_xmalloc(sizeof *h + sizeof *p + body_len);
    h->next = NULL;
    memcpy(h->bytes, p, sizeof *p);
    memcpy(h->bytes + sizeof *p, body, body_len);
    *peer->held_tail = h;
    peer->held_tail = &h->next;
}

static int is_op(const fr_pkt *p)
{
    return p->type == FR_PKT_PUT || p->type == FR_PKT_GET || is_acc(p);
}

/* Whether src's packet may touch this window now: its epoch must be open here, and an
 * accumulate must not overtake an earlier one of src whose data is still arriving in a message
 * of its own (accumulates of one origin apply in program order, MPI-3.1 11.7.2). */
static int may_run(const fr_win *w, int src, const fr_pkt *p)
{
    const fr_peer *peer = &w->peers[src];
    if (is_acc(p) && peer->accs_arriving > 0)
        return 0;
    fr_epoch e = is_op(p) ? (fr_epoch)p->epoch : FR_EPOCH_NONE;
    if (e == FR_EPOCH_LOCK || p->type == FR_PKT_UNLOCK)
        return peer->lk != FR_LK_WAITING;
    if (e == FR_EPOCH_PSCW || p->type == FR_PKT_COMPLETE)
        /* MPI_Win_post not called yet, or the epoch it opened was closed in my state page
         * (direct.h): it belongs to my next exposure epoch, keep it */
        return peer->post_open && !fr_direct_completed(w, src);
    if (e == FR_EPOCH_FENCE || p->type == FR_PKT_FENCE_DONE)
        return p->seq <= w->fence_count; /* this process has not entered that fence yet */
    return 1; /* counter epochs and counter packets: the window is always exposed to them */
}

/* ... or p is a get its origin took back, which reads nothing (its description is kept) and
 * so runs in any epoch: held for the next one (PSCW: that epoch was closed in my state page once
 * the get was taken back), it would hold the origin's later packets of other epochs too. */
static int may_run_now(const fr_win *w, int src, const fr_pkt *p)
{
    return may_run(w, src, p) ||
           ((p->flags & FR_PKTF_ASKED) && is_op(p) && fr_direct_ask_taken(w, src, p->arg));
}

/* Run p, which may run now (or is a reply, or reads no epoch's memory). */
static void run_now(fr_win *w, int src, const fr_pkt *p, const unsigned char *body)
{
    if (p->type == FR_PKT_REGIONS_READ)
        fr_regions_answer(w, src, p);
    else if (p->type == FR_PKT_ANSWER)
        fr_batch_answered(w, src, p, body);
    else if (is_op(p))
        run_op(w, src, p, body);
    else if (p->type == FR_PKT_TYPE_DROP) {
        const uint64_t *ids = (const uint64_t *)(const void *)body;
        for (uint64_t i = 0; i < p->arg && i * sizeof(uint64_t) < p->desc_len; i++)
            fr_am_rxtype_drop(w, src, ids[i]);
    } else {
        fr_proto.packet(w, src, p);
    }
}

static void run_packet(fr_win *w, int src, const fr_pkt *p, const unsigned char *body,
                       size_t body_len)
{
    fr_peer *peer = &w->peers[src];
    /* A read of the region table reads nothing an epoch protects: never held. */
    if (p->type != FR_PKT_REGIONS_READ && !fr_pkt_is_reply(p) &&
        (peer->held || !may_run_now(w, src, p))) {
        hold(peer, p, body, body_len);
        w->st.held++;
        return;
    }
    run_now(w, src, p, body);
}

void fr_am_dispatch(fr_win *w, int src, fr_pkt_form form, const unsigned char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        fr_pkt p;
        size_t head = fr_pkt_decode(form, buf + off, len - off, &p);
        /* Bound each length first so fr_pkt_body_len() cannot overflow. */
        if (!head || p.desc_len > len || ((p.flags & FR_PKTF_INLINE) && p.data_len > len) ||
            fr_pkt_body_len(&p) > len - off - head)
            fr_fatal("malformed batch of %zu bytes from rank %d at offset %zu", len, src, off);
        size_t body_len = (size_t)fr_pkt_body_len(&p);
        run_packet(w, src, &p, buf + off + head, body_len);
        off += head + body_len;
    }
}

void fr_am_replay_held(fr_win *w, int src)
{
    /* In order, up to the first packet that still may not run: it and all behind it stay where
     * they are. An origin many epochs ahead (PSCW: its complete needs no post) leaves a packet
     * list that each post shortens by one epoch; holding the rest again, copy by copy, would
     * cost the whole list per post. Each packet leaves the list before it runs, so a replay
     * that its run sets off (the last of an accumulate's data) goes on from the next one. */
    fr_peer *peer = &w->peers[src];
    while (peer->held && may_run_now(w, src, (const fr_pkt *)peer->held->bytes)) {
        fr_held *h = peer->held;
        peer->held = h->next;
        if (!peer->held)
            peer->held_tail = &peer->held;
        run_now(w, src, (const fr_pkt *)h->bytes, h->bytes + sizeof(fr_pkt));
        free(h);
    }
}
