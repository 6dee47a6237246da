/* am_send.c - the origin side of the transports that carry batches: one batch per target and
 * closing call, built here and handed to the target's transport's `deliver` step, which is an
 * MPI message for "am" (am_deliver below) and a shared-memory ring for "shm" (tp_shm.c).
 *
 * The batch carries, in order: the datatype ids the target may forget, the opening packet
 * (LOCK), the operations with puts and accumulates before gets (seed 001 section 4.3: gets last,
 * so the data a target sends back reflects the epoch's updates), and the closing packet
 * (COMPLETE or UNLOCK). Payloads up to FLEXRMA_EAGER_MAX travel inside the batch; larger ones go
 * in a message of their own straight from the user's buffer with the user's datatype, and a get
 * posts its receive into the user's buffer before the batch leaves. */
#include "direct.h"
#include "dtype/acc.h"
#include "progress/isend.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "core/idle.h"
#include "core/next.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

/* Batches above this size are cut in two; the halves keep their order (same tag, same pair). */
#define FR_BATCH_MAX ((size_t)64 << 20)
/* Larger batch buffers are not kept for reuse. */
#define FR_BATCH_SPARE_MAX ((size_t)64 << 10)

/* An internal request of the origin: a batch in flight, one operation's data message, or a fetch
 * awaiting its ANSWER packet. */
typedef struct fr_xfer {
    fr_win *w;
    int target;
    fr_dtype *dt;         /* origin datatype used by the request, released at completion */
    unsigned char *buf;   /* batch buffer, freed at completion */
    fr_req *req;          /* the application's request for the operation, if any */
    int covers;           /* the reply of an operation counted in fr_peer.replies_due */
    void *addr;           /* a fetch answered in an ANSWER packet: where its data goes, */
    int count;            /* ... as count elements of dt */
    size_t bytes;         /* ... packed bytes expected, */
    uint32_t tag;         /* ... the tag the answer names */
    struct fr_xfer *next; /* ... and the fetch after it to the same target (fr_peer.awaited) */
    uint64_t ask;         /* a get asked through the ring (direct.h): its ask number (0 once
                             the target claimed it), */
    uint64_t remote;      /* ... where cross-memory attach reads it in the target, */
    uint64_t asked_ns;    /* ... and when it was asked */
} xfer;

/* A reply proves its operation complete at the target (it was applied, or read, before the
 * answer left). When every operation to the target before it is known complete, or brings a
 * reply too, the replies together stand for an acknowledgement: a flush then asks for none
 * (sync_flush.c), and a fetch-and-op with its flush is one round trip. Counts operation
 * `ordinal`, which brings a reply, if it continues such a run; returns whether it did. */
static int reply_covers(fr_peer *p, uint64_t ordinal)
{
    if (fr_peer_replies_known(p) != ordinal - 1)
        return 0;
    p->replies_cover = ordinal;
    p->replies_due++;
    return 1;
}

static void xfer_done(void *ctx, MPI_Status *st)
{
    xfer *x = ctx;
    fr_peer *p = &x->w->peers[x->target];
    if (x->req)
        x->req->cls->op_done_here(x->req);
    if (x->dt)
        fr_dtype_release(x->dt);
    if (x->covers && --p->replies_due == 0 && p->remote_upto < p->replies_cover)
        p->remote_upto = p->replies_cover;
    free(x->buf);
    x->w->pending--;
    p->pending--;
    free(x);
}

static xfer *xfer_new(fr_win *w, int target, fr_dtype *dt, unsigned char *buf, fr_req *owner,
                      int covers)
{
    xfer *x = fr_xmalloc(sizeof *x);
    *x = (xfer){.w = w, .target = target, .dt = dt, .buf = buf, .req = owner, .covers = covers};
    w->pending++;
    w->peers[target].pending++;
    return x;
}

static void track(fr_win *w, int target, MPI_Request req, fr_dtype *dt, unsigned char *buf,
                  fr_req *owner, int covers)
{
    fr_pending_add(req, xfer_done, xfer_new(w, target, dt, buf, owner, covers));
}

/* Send len bytes of buf with tag; returns 1 when the send is still in flight and owns buf. */
static int am_send(fr_win *w, int target, unsigned char *buf, size_t len, int tag)
{
    MPI_Request req;
    int flag = 0;
    FR_CHECK_MPI(fr_isend(buf, (int)len, MPI_BYTE, target, tag, w->comm, &req));
    /* Small messages complete at once (eager protocol): skip the bookkeeping. */
    FR_CHECK_MPI(FR_NEXT(Test)(&req, &flag, MPI_STATUS_IGNORE));
    if (flag)
        return 0;
    track(w, target, req, NULL, buf, NULL, 0);
    return 1;
}

/* The message transport's delivery: the batch is one message with tag FR_TAG_PKT, which the
 * target's inbox receives (am_inbox.c); a bigger one than that holds goes after its length. */
static int am_deliver(fr_win *w, int target, unsigned char *buf, size_t len)
{
    if (len > INT32_MAX)
        fr_fatal("batch of %zu bytes exceeds an MPI count", len);
    w->st.batches_msg++; /* one batch, even when a big one goes after its length */
    if (len <= fr_opt.am_inbox)
        return am_send(w, target, buf, len, FR_TAG_PKT);
    uint64_t *announce = fr_xmalloc(sizeof *announce);
    *announce = len;
    if (!am_send(w, target, (unsigned char *)announce, sizeof *announce, FR_TAG_PKT))
        free(announce);
    return am_send(w, target, buf, len, FR_TAG_PKT_BIG);
}

/* The buffer of the last batch the transport did not keep: most batches are copied into a ring
 * or sent eagerly at once, so the next one reuses it instead of a malloc/free pair per closing
 * call. A batch built while another is under construction finds none and allocates its own. */
static fr_batch spare;

static fr_batch batch_begin(void)
{
    fr_batch b = spare;
    spare = (fr_batch){0};
    return b;
}

/* The next batch to target t starts with what was packed for it already (fr_batch_pack_now). */
static fr_batch batch_begin_to(fr_win *w, int t)
{
    fr_peer *p = &w->peers[t];
    if (p->packed.len == 0)
        return batch_begin();
    fr_batch b = p->packed;
    p->packed = (fr_batch){0};
    return b;
}

static void batch_recycle(fr_batch *b)
{
    if (spare.buf || b->cap > FR_BATCH_SPARE_MAX) {
        free(b->buf);
    } else {
        spare = (fr_batch){b->buf, 0, b->cap};
    }
    *b = (fr_batch){0};
}

/* Hand the batch to the target's transport; batches to one target keep their order there. */
static void batch_send(fr_win *w, int target, fr_batch *b)
{
    if (b->len > 0 && w->peers[target].tp->deliver(w, target, b->buf, b->len))
        *b = (fr_batch){0}; /* the transport frees it */
    else
        batch_recycle(b);
}

/* Append packet h's header to b, with room behind it for its description and inline data;
 * returns where those go. */
static unsigned char *batch_put(fr_win *w, int target, fr_batch *b, const fr_pkt *h)
{
    size_t body = (size_t)fr_pkt_body_len(h), need = FR_PKT_WIRE_MAX + body;
    if (b->len > 0 && b->len + need > FR_BATCH_MAX)
        batch_send(w, target, b);
    if (b->len + need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + need)
            cap *= 2;
        b->buf = fr_xrealloc(b->buf, cap);
        b->cap = cap;
    }
    unsigned char *at = b->buf + b->len;
    at += fr_pkt_encode(w->peers[target].tp->form, h, at);
    b->len = (size_t)(at - b->buf) + body;
    return at;
}

/* Append a synchronization packet (and the description it carries, if any). */
static void batch_add(fr_win *w, int target, fr_batch *b, const fr_pkt *h, const void *desc)
{
    unsigned char *body = batch_put(w, target, b, h);
    if (desc && h->desc_len)
        memcpy(body, desc, h->desc_len);
}

/* Data messages between two processes flow both ways with tags chosen by different counters:
 * put/accumulate data (origin -> target, the origin's counter) uses even tags, get replies
 * (target -> origin, the origin's counter too) odd ones, so a reply can never match the data of
 * an operation the peer issues to me. */
static uint32_t next_tag(fr_win *w, int is_get)
{
    if (w->next_tag + 2 > w->tag_ub)
        w->next_tag = FR_TAG_DATA_MIN;
    uint32_t tag = (uint32_t)w->next_tag + (is_get ? 1 : 0);
    w->next_tag += 2;
    return tag;
}

uint32_t fr_am_data_tag(fr_win *w, int is_reply) { return next_tag(w, is_reply); }

static const uint8_t pkt_of_kind[] = {[FR_OP_PUT] = FR_PKT_PUT, [FR_OP_GET] = FR_PKT_GET,
                                      [FR_OP_ACC] = FR_PKT_ACC, [FR_OP_GACC] = FR_PKT_GACC,
                                      [FR_OP_CAS] = FR_PKT_CAS};

/* Bytes of origin data a packet carries: all of it for an eager put or accumulate; for a
 * fetching accumulate always (its reply is what takes a message of its own), except with
 * MPI_NO_OP; for a compare-and-swap the new value and the comparand. */
static uint64_t inline_len(const fr_op *op)
{
    if (fr_op_is_eager(op))
        return (uint64_t)op->bytes;
    if (op->kind == FR_OP_GACC)
        return op->op_index == FR_OPI_NO_OP ? 0 : (uint64_t)op->bytes;
    return op->kind == FR_OP_CAS ? 2 * (uint64_t)op->bytes : 0;
}

/* A fetch whose data target sends back in an ANSWER packet: queued behind the others it
 * answers, which come back in the order they were sent (fr_batch_answered). */
static xfer *await_answer(fr_win *w, int t, const fr_op *op, int covers, uint32_t tag)
{
    fr_peer *p = &w->peers[t];
    int get = op->kind == FR_OP_GET;
    fr_dtype *dt = get ? op->origin_dt : op->result_dt;
    fr_dtype_retain(dt);
    xfer *x = xfer_new(w, t, dt, NULL, op->req, covers);
    x->addr = get ? op->origin_addr : op->result_addr;
    x->count = get ? op->origin_count : op->result_count;
    x->bytes = (size_t)op->bytes;
    x->tag = tag;
    if (p->awaited_last)
        p->awaited_last->next = x;
    else
        p->awaited = x;
    p->awaited_last = x;
    return x;
}

/* The oldest fetch awaited from target leaves the queue. */
static xfer *awaited_pop(fr_peer *peer)
{
    xfer *x = peer->awaited;
    peer->awaited = x->next;
    if (!peer->awaited)
        peer->awaited_last = NULL;
    return x;
}

/* The get asked of peer p is answered, or taken back and read: settled. */
static void ask_settled(fr_win *w, fr_peer *p)
{
    p->asked = NULL;
    w->asking--;
}

/* The operation's packet, its data inline or in a message of its own sent now; an operation
 * that brings data back posts the receive for it first, or awaits it in an ANSWER packet (a
 * get asked through the ring, when may_ask). */
static int add_packet(fr_win *w, int t, fr_batch *b, const fr_op *op, int may_ask)
{
    int rc = MPI_SUCCESS;
    fr_peer *p = &w->peers[t];
    const fr_dtype *td = op->target_dt;
    int eager = fr_op_is_eager(op);
    int with_desc = !td->predefined && !fr_u64map_get(&p->types_sent, td->id);
    if (with_desc)
        fr_u64map_put(&p->types_sent, td->id, (void *)1);
    int answer = fr_op_fetches(op) && (size_t)op->bytes <= p->tp->answer_max;
    uint64_t ask = 0, remote = 0;
    if (answer && may_ask && op->kind == FR_OP_GET)
        fr_direct_ask_open(w, t, op, &ask, &remote); /* sets ask when it asks */
    uint64_t ordinal = ask ? 0 : ++p->ops_sent; /* an asked get is never numbered (direct.h) */
    p->fence_sent += op->epoch == FR_EPOCH_FENCE;
    uint32_t data_tag = 0;
    if (!eager) {
        if (op->req)
            op->req->cls->op_issued(op->req, ordinal, 0);
        data_tag = next_tag(w, fr_op_fetches(op));
    }
    if (ask) {
        xfer *x = await_answer(w, t, op, 0, data_tag);
        x->ask = ask;
        x->remote = remote;
        x->asked_ns = fr_now_ns();
        p->asked = x;
        w->asking++;
    } else if (answer) {
        await_answer(w, t, op, reply_covers(p, ordinal), data_tag);
    } else if (!eager) {
        MPI_Request req;
        fr_dtype *dt = op->origin_dt;
        if (op->kind == FR_OP_GET) {
            FR_CHECK_MPI(PMPI_Irecv(op->origin_addr, op->origin_count, dt->handle, t,
                                    (int)data_tag, w->comm, &req));
        } else if (fr_op_fetches(op)) {
            dt = op->result_dt;
            FR_CHECK_MPI(PMPI_Irecv(op->result_addr, op->result_count, dt->handle, t,
                                    (int)data_tag, w->comm, &req));
        } else {
            FR_CHECK_MPI(fr_isend(op->origin_addr, op->origin_count, dt->handle, t,
                                  (int)data_tag, w->comm, &req));
        }
        fr_dtype_retain(dt);
        track(w, t, req, dt, NULL, op->req, fr_op_fetches(op) && reply_covers(p, ordinal));
    }
    uint64_t desc_len = with_desc ? td->wire_len : 0, inl = inline_len(op);
    fr_pkt h = {.type = pkt_of_kind[op->kind],
               .epoch = (uint8_t)op->epoch,
               .flags = (uint8_t)((inl ? FR_PKTF_INLINE : 0) |
                                  (with_desc ? FR_PKTF_TYPEDESC : 0) |
                                  (answer ? FR_PKTF_ANSWER : 0) | (ask ? FR_PKTF_ASKED : 0)),
               .op = op->op_index,
               .count = op->target_count,
               .data_tag = data_tag,
               .disp = op->target_disp,
               .dtype = td->id,
               .arg = ask,
               .seq = op->epoch == FR_EPOCH_FENCE ? w->fence_count : 0,
               .desc_len = desc_len,
               .data_len = (uint64_t)op->bytes};
    unsigned char *body = batch_put(w, t, b, &h);
    if (with_desc)
        memcpy(body, td->wire, desc_len);
    if (!inl)
        return MPI_SUCCESS;
    unsigned char *data = body + fr_pkt_align(desc_len);
    if (op->origin_dt->contiguous) /* op->bytes was checked against it at issue */
        memcpy(data, op->origin_addr, (size_t)op->bytes);
    else
        rc = fr_pack(op->origin_addr, op->origin_count, op->origin_dt, data, (size_t)op->bytes);
    if (op->kind == FR_OP_CAS)
        memcpy(data + op->bytes, op->compare_addr, (size_t)op->bytes);
    if (op->req && eager)
        op->req->cls->op_issued(op->req, ordinal, 1); /* packed: complete here */
    return rc;
}

static int add_op(fr_win *w, int t, fr_batch *b, const fr_op *op, int may_ask)
{
    int rc;
    if (fr_direct_try(w, t, op, may_ask, &rc))
        return rc;
    return add_packet(w, t, b, op, may_ask);
}

int fr_batch_pack_now(fr_win *w, int t, const fr_op *op, int *rc)
{
    fr_peer *p = &w->peers[t];
    if (!p->tp->deliver || !fr_op_is_eager(op))
        return 0;
    if (p->packed.len == 0)
        p->packed = batch_begin();
    *rc = add_packet(w, t, &p->packed, op, 0);
    return 1;
}

static void keep_first(int *rc, int next)
{
    if (*rc == MPI_SUCCESS)
        *rc = next;
}

int fr_batch_flush(fr_win *w, int t, fr_opq *q, const fr_pkt *lead, fr_pkt *trail)
{
    fr_peer *p = &w->peers[t];
    fr_batch b = batch_begin_to(w, t);
    int rc = MPI_SUCCESS;
    if (p->ntypes_drop > 0) {
        fr_pkt drop = {.type = FR_PKT_TYPE_DROP, .arg = p->ntypes_drop,
                       .desc_len = p->ntypes_drop * sizeof(uint64_t)};
        batch_add(w, t, &b, &drop, p->types_drop);
        p->ntypes_drop = 0;
    }
    if (lead)
        batch_add(w, t, &b, lead, NULL);
    /* Gets are asked in no batch that ends with a packet that closes the epoch or tells the
     * target something (a counter's bump): once the target has run it, it may move on while a
     * get taken back is still read. An acknowledgement request only reports. */
    int may_ask = !trail || (trail->type == FR_PKT_BUMP && (trail->flags & FR_PKTF_NOBUMP));
    fr_cma_gets cma;
    cma.n = 0;
    for (int gets = 0; gets <= 1; gets++)
        for (size_t i = 0; i < q->n; i++)
            if ((q->ops[i].kind == FR_OP_GET) == gets) {
                const fr_op *op = &q->ops[i];
                if (gets && cma.n == FR_CMA_GETS_MAX)
                    keep_first(&rc, fr_direct_gets_run(w, t, &cma));
                if (!gets || !fr_direct_gather(w, t, op, may_ask, &cma))
                    keep_first(&rc, add_op(w, t, &b, op, may_ask));
            }
    /* Without a closing packet the batch leaves before the gathered gets are read: a get asked
     * through the ring is answered while the system call runs. A closing packet must follow
     * those reads, since the target may end the epoch once it has run it. */
    if (!trail)
        batch_send(w, t, &b);
    keep_first(&rc, fr_direct_gets_run(w, t, &cma));
    fr_opq_clear(q);
    if (trail) {
        trail->arg = p->ops_sent;
        batch_add(w, t, &b, trail, NULL);
        batch_send(w, t, &b);
    }
    return rc;
}

int fr_batch_notify(fr_win *w, int t, const fr_pkt *pkt)
{
    fr_batch b = batch_begin_to(w, t);
    batch_add(w, t, &b, pkt, NULL);
    batch_send(w, t, &b);
    return MPI_SUCCESS;
}

void fr_batch_answer(fr_win *w, int src, const fr_pkt *p, const void *data, size_t len)
{
    fr_pkt h = {.type = FR_PKT_ANSWER, .flags = FR_PKTF_INLINE, .data_tag = p->data_tag,
                .data_len = len};
    fr_batch b = batch_begin_to(w, src);
    memcpy(batch_put(w, src, &b, &h), data, len);
    batch_send(w, src, &b);
}

void fr_batch_answered(fr_win *w, int target, const fr_pkt *p, const unsigned char *body)
{
    fr_peer *peer = &w->peers[target];
    xfer *x = peer->awaited;
    if (!x || p->data_tag != x->tag || p->data_len != x->bytes)
        fr_fatal("rank %d: an answer from rank %d for no fetch of %llu bytes awaited (tag %u)",
                 w->rank, target, (unsigned long long)p->data_len, (unsigned)p->data_tag);
    int rc = MPI_SUCCESS;
    if (x->dt->contiguous)
        memcpy(x->addr, body, x->bytes);
    else
        rc = fr_unpack(body, x->bytes, x->addr, x->count, x->dt);
    if (rc != MPI_SUCCESS) /* checked at the call: the packed size is the datatype's */
        fr_fatal("rank %d: the answer from rank %d does not fit its buffer: %s", w->rank, target,
                 fr_error_detail());
    if (x == peer->asked) {
        ask_settled(w, peer);
        peer->asks_quiet = 0; /* it serves: ask again at once after the next take-back */
    }
    xfer_done(awaited_pop(peer), NULL);
}

int fr_batch_asks_due(fr_win *w)
{
    uint64_t now = fr_now_ns();
    int events = 0;
    for (int t = 0, left = w->asking; t < w->size && left > 0; t++) {
        fr_peer *p = &w->peers[t];
        xfer *x = p->asked;
        if (!x)
            continue;
        left--;
        if (!x->ask || now - x->asked_ns < fr_opt.ask_wait_ns)
            continue;
        if (x != p->awaited)
            fr_fatal("rank %d: a get asked of rank %d is not the first fetch awaited", w->rank, t);
        int rc;
        if (!fr_direct_ask_take_back(w, t, x->ask, x->remote, x->addr, x->count, x->dt, x->bytes,
                                     &rc)) {
            x->ask = 0; /* it serves it: the answer is on its way, and settles it */
            continue;
        }
        if (rc != MPI_SUCCESS)
            fr_fatal("rank %d: reading a get from rank %d that it left unserved: %s", w->rank, t,
                     fr_error_detail());
        ask_settled(w, p); /* read: the epoch may now close */
        xfer_done(awaited_pop(p), NULL);
        events++;
    }
    return events;
}

static int ask_settled_at(void *arg)
{
    const fr_peer *p = arg;
    return p->asked == NULL;
}

void fr_batch_ask_settle(fr_win *w, int t)
{
    if (w->peers[t].asked)
        fr_wait_until(ask_settled_at, &w->peers[t]);
}

/* Answers as data messages: posted into the fetch's buffer before the batch leaves, they cost
 * no more than an ANSWER in a batch, which would take a copy on each side. */
const fr_transport fr_tp_am = {"am", fr_batch_flush, fr_batch_notify, am_deliver, FR_PKT_COMPACT,
                               0};
