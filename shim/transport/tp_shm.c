/* tp_shm.c - the shared-memory channel: batches to a node peer travel through a ring in shared
 * memory (shm_ring.h) instead of an MPI message. The batches, their packets and the protocols are
 * exactly those of the message transport (am_send.c builds them, fr_am_dispatch runs them); only
 * the carrier differs, so the whole protocol (hold rules, counting) is unchanged.
 *
 * Where the rings live: each process makes, per window, one segment (shm_seg.h) holding its
 * INCOMING rings, one per node peer, and attaches as producer to its ring in each peer's segment.
 * Consumer-owned because the consumer polls its rings on every progress pass: they are in its
 * own segment, contiguous, and its pages sit where the reader is (first touch); a producer
 * touches a peer's ring only when it sends. The consumer also formats its rings, with the
 * capacity it chose, so FLEXRMA_SHM_RING may differ between processes.
 *
 * Slots: the node members, in window-rank order, are m_0 < m_1 < ...; the ring from m_j in m_i's
 * segment is slot j, or j - 1 when j > i (no ring to oneself).
 *
 * Full rings: deliver never waits. A batch that does not fit (or that would overtake one already
 * waiting) joins the target's backlog, in order, counted in the window's pending sends like an
 * MPI send in flight, and progress moves it on as the consumer makes room; a closing call that
 * waits for its sends (fr_wait_until: polls, then yields) therefore waits for it. Waiting inside
 * deliver instead would run progress from inside a dispatch (a target's UNLOCK_ACK is delivered
 * while it runs the origin's batch), and a nested poll of the same ring would break the order.
 *
 * Transport choice is the producer's alone (transport.c): a ring where it could attach, messages
 * otherwise, for the window's lifetime, so one origin's batches never mix carriers. The consumer
 * polls the rings a producer attached to, and, through fr_am_poll, messages only while some
 * member sends it messages (w->am_rx, counted at creation).
 *
 * First-use attachment: on a node of more than ATTACH_EAGER_MAX peers (or with FLEXRMA_SHM_LAZY=1
 * on any member of the node), nothing per peer is mapped or written at creation: the consumer
 * leaves its rings untouched (fr_ring_bind; a fresh segment reads zero), and a producer maps the
 * peer's segment and its state block, formats its ring there with the capacity the consumer
 * published and attaches, the first time it sends it a batch or bumps one of its counters
 * (fr_chan_attach). Which peers a ring WILL reach is still decided at creation, from what they
 * published, so the transport of each pair and w->am_rx are fixed as before; an attach that
 * fails then (mmap, descriptors: resources) is an FR_ERR_SHM error of the call, never a switch to
 * messages. A producer that attached sets its slot's bit in the consumer's segment header and
 * bumps the header's generation (release); the consumer compares that one word on each poll and
 * looks at the bits only when it moved. Eager windows leave the header alone (the consumer looks
 * at every ring's attach flag once, after the creation collective).
 *
 * Large put/get/accumulate data (beyond FLEXRMA_EAGER_MAX) still moves in MPI messages of its
 * own, on its own tag; their order relative to the batches never mattered. */
#include "core/next.h"
#include "node/node_comm.h"
#include "node/shm_map.h"
#include "node/shm_ring.h"
#include "node/shm_seg.h"
#include "progress/progress.h"
#include "shm_state.h"
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A batch waiting for ring space (the first may be partly written). */
typedef struct out_msg {
    struct out_msg *next;
    unsigned char *buf;
    size_t len, done;
} out_msg;

/* What each member publishes at window creation. */
typedef struct chan_info {
    int64_t pid;
    int32_t node;           /* window rank of the first member of my node */
    int32_t nrings;         /* rings in my segment; 0: none */
    uint64_t ring_bytes;    /* footprint of each */
    fr_seg_ref ref;         /* my segment */
    fr_seg_ref state;       /* my shared state block (shm_state.h); serial 0: none */
    uint64_t ring_cap;      /* capacity of each ring */
    uint32_t rings_off;     /* where ring 0 starts, after the header (seg_head) */
    uint32_t flags;         /* INFO_* */
} chan_info;

enum {
    INFO_LAZY = 1,      /* I want first-use attachment in this window */
    INFO_FORMATTED = 2  /* my rings are formatted (else each producer formats its own) */
};

/* The start of each segment: producers announce their attachment here. */
typedef struct seg_head {
    volatile AO_t gen;      /* bumped by each producer after it attached (release) */
    char pad[FR_RING_LINE - sizeof(AO_t)];
    volatile AO_t attached[]; /* bit s % 64 of word s / 64: the producer of slot s attached */
} seg_head;

/* Node peers beyond which a window attaches on first use (both sides write and fault in two
 * control lines, a state page, a direct state page per peer otherwise: 1 MiB per window at 64
 * ranks). Up to 7 peers (8 ranks a node), attaching at creation keeps the first exchange free of
 * mmap calls. */
#define ATTACH_EAGER_MAX 7

typedef struct fr_chan_peer {
    int rank;               /* window rank */
    int slot;               /* my ring's slot in its segment */
    chan_info info;         /* what it published, for attaching later */
    fr_peer_proc *proc;     /* its process, while its segment is mapped here: attached */
    uint64_t serial;        /* its segment */
    fr_ring_tx tx;          /* my ring in its segment (when w->peers[rank].chan is this) */
    fr_ring_rx rx;          /* its ring in my segment */
    uint64_t state_serial;  /* its shared state block, when mapped (w->peers[rank].state) */
    out_msg *backlog, **backlog_tail;
} fr_chan_peer;

typedef struct fr_chan {
    void *seg;              /* my segment: header, then the incoming rings; NULL if none */
    int n;                  /* node peers, me excluded */
    int lazy;               /* first-use attachment (agreed by the node at creation) */
    fr_chan_peer *peers;    /* in window-rank order: peers[s] feeds slot s of my segment */
    int nbacklog;           /* peers with a backlog */
    int polling;            /* a poll is running; a nested one would reorder batches */
    AO_t gen_seen;          /* the header's generation at my last look */
    AO_t *known;            /* bits of the header I have looked at (taken or refused) */
    int *on;                /* slots whose producer attached: the rings to poll */
    int non;
} fr_chan;

typedef struct rx_ctx {
    fr_win *w;
    int src;
} rx_ctx;

static void dispatch(void *arg, const unsigned char *msg, size_t len)
{
    rx_ctx *x = arg;
    fr_am_dispatch(x->w, x->src, fr_tp_shm.form, msg, len);
}

/* ---- creation ---- */

/* My node (node_comm.h): its size and the window rank of its first member. */
static void find_node(fr_win *w, int *size, int *first)
{
    MPI_Group g;
    int zero = 0;
    fr_node_group(w->comm, &g);
    PMPI_Group_size(g, size);
    FR_CHECK_MPI(PMPI_Group_translate_ranks(g, 1, &zero, w->group, first));
    PMPI_Group_free(&g);
}

/* Rings are faulted in when made and attached (MADV_POPULATE_WRITE) only while one process's
 * incoming rings of a window take at most this many bytes (7 peers with the default 64 KiB
 * rings): a first pass through a ring costs a page fault per page on each side, which a small
 * node pays once at creation rather than in its first exchange; but faulting in every ring of a
 * 64-rank node would make each process resident in 63 rings it receives and 63 it sends to per
 * window (8 MiB), while a ghost exchange uses 2 or 4 of each. Beyond, pages are filled in by
 * first use (the ring's control lines by fr_ring_init and fr_ring_attach). */
#define RING_PREFAULT_MAX ((uint64_t)512 * 1024)

/* Bytes of the header of a segment of n rings: the generation line and a bit per ring. */
static size_t head_bytes(int n)
{
    size_t b = sizeof(seg_head) + ((size_t)n + 63) / 64 * sizeof(AO_t);
    return (b + FR_RING_LINE - 1) / FR_RING_LINE * FR_RING_LINE;
}

/* My incoming rings, formatted before anyone can see the segment, or (lazy) left untouched for
 * their producers to format. */
static int make_rings(fr_chan *c, size_t cap, int lazy, chan_info *mine)
{
    size_t rb = fr_ring_footprint(cap), hb = head_bytes(c->n), total;
    if (fr_mul_size(rb, (size_t)c->n, &total) || total > SIZE_MAX - hb)
        return fr_errorf(FR_ERR_NO_MEM, "%d rings of %zu bytes", c->n, rb);
    total += hb;
    int rc = fr_seg_alloc(total, &c->seg);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!lazy && total <= RING_PREFAULT_MAX)
        fr_mem_prefault(c->seg, total);
    else if (lazy) /* the header, which every poll reads: a read fault maps neighbours too */
        fr_mem_prefault(c->seg, hb);
    for (int s = 0; s < c->n; s++) {
        unsigned char *at = (unsigned char *)c->seg + hb + (size_t)s * rb;
        if (lazy)
            fr_ring_bind(&c->peers[s].rx, at, cap);
        else
            fr_ring_init(&c->peers[s].rx, at, cap);
    }
    fr_seg_lookup(c->seg, 0, &mine->ref);
    mine->nrings = c->n;
    mine->ring_bytes = rb;
    mine->ring_cap = cap;
    mine->rings_off = (uint32_t)hb;
    mine->flags |= lazy ? 0 : INFO_FORMATTED;
    return MPI_SUCCESS;
}

/* Can a ring reach the peer that published `peer`, my ring being at `slot` (decided without
 * mapping anything)? FR_ERR_SHM with the reason. */
static int check_peer(const chan_info *peer, int slot, int node_size)
{
    if (peer->nrings != node_size - 1 || peer->ref.serial == 0)
        return fr_errorf(FR_ERR_SHM, "it made no packet rings (see its own error)");
    uint64_t cap = peer->ring_cap;
    if (cap < FR_RING_MIN || cap > FR_RING_MAX || (cap & (cap - 1)) ||
        peer->ring_bytes != fr_ring_footprint((size_t)cap) ||
        peer->rings_off != head_bytes(peer->nrings))
        return fr_errorf(FR_ERR_SHM, "its packet rings have another layout");
    uint64_t end = peer->rings_off + (uint64_t)(slot + 1) * peer->ring_bytes;
    if (peer->ref.offset != 0 || end > peer->ref.size)
        return fr_errorf(FR_ERR_SHM, "its segment is too small for its rings");
    return MPI_SUCCESS;
}

/* Undo a partial attach. */
static void detach(fr_chan_peer *cp)
{
    if (cp->serial)
        fr_seg_unmap_remote(cp->proc, cp->serial);
    fr_peer_proc_release(cp->proc);
    cp->proc = NULL;
    cp->serial = 0;
}

/* Map the peer's segment (checked by check_peer), format my ring there if it left that to me,
 * attach to it, map the peer's state block, and (first-use attachment: `announce`) tell the
 * consumer in its header. FR_ERR_SHM with the reason; nothing stays mapped then. */
static int attach(fr_win *w, fr_chan_peer *cp, int announce)
{
    const chan_info *peer = &cp->info;
    int rc = fr_peer_proc_open((pid_t)peer->pid, &cp->proc);
    if (rc != MPI_SUCCESS) {
        cp->proc = NULL;
        return rc;
    }
    void *base;
    rc = fr_seg_map_remote(cp->proc, &peer->ref, &base);
    if (rc != MPI_SUCCESS) {
        detach(cp);
        return rc;
    }
    cp->serial = peer->ref.serial;
    unsigned char *ring = (unsigned char *)base + peer->rings_off +
                          (size_t)cp->slot * peer->ring_bytes;
    if ((uint64_t)peer->nrings * peer->ring_bytes <= RING_PREFAULT_MAX) /* as the peer did */
        fr_mem_prefault(ring, (size_t)peer->ring_bytes);
    if (!(peer->flags & INFO_FORMATTED))
        fr_ring_format(ring, (size_t)peer->ring_cap);
    if (fr_ring_attach(&cp->tx, ring, (size_t)peer->ring_bytes)) {
        detach(cp);
        return fr_errorf(FR_ERR_SHM, "its segment holds no ring at slot %d", cp->slot);
    }
    /* Its state block, if it has one; without it (auto) bumps to it are packets. */
    rc = fr_shm_state_map(cp->proc, &peer->state, &w->peers[cp->rank].state);
    if (rc != MPI_SUCCESS && fr_opt.transport == FR_TRANSPORT_SHM) {
        detach(cp);
        return rc;
    }
    if (w->peers[cp->rank].state)
        cp->state_serial = peer->state.serial;
    if (!announce) /* the consumer looks at its rings after the creation collective */
        return MPI_SUCCESS;
    /* full: the ring's format and flag come before the bit; release: the bit before the
     * generation the consumer compares. The header's page is faulted in for writing first: a
     * read fault there would map the consumer's neighbouring pages too (fault-around, 64 KiB
     * of its rings). */
    seg_head *h = base;
    fr_mem_prefault(h, peer->rings_off);
    volatile AO_t *word = &h->attached[cp->slot / 64];
    AO_t bit = (AO_t)1 << (cp->slot % 64), old;
    do
        old = AO_load(word);
    while (!AO_compare_and_swap_full(word, old, old | bit));
    AO_fetch_and_add_release(&h->gen, 1);
    return MPI_SUCCESS;
}

int fr_chan_lazy(const fr_win *w) { return w->chan && w->chan->lazy; }

int fr_chan_attach(fr_win *w, int r)
{
    fr_chan_peer *cp = w->peers[r].chan;
    if (!cp || cp->proc)
        return MPI_SUCCESS;
    int rc = attach(w, cp, 1);
    if (rc != MPI_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", fr_error_detail());
        rc = fr_errorf(FR_ERR_SHM, "rank %d, on this node, chosen at window creation to be "
                                   "reached through shared memory, cannot be attached on first "
                                   "use: %s", r, why);
    }
    return rc;
}

int fr_chan_roomy(fr_win *w, int r)
{
    fr_chan_peer *cp = w->peers[r].chan;
    return cp && cp->proc && !cp->backlog && fr_ring_has_room(&cp->tx, cp->tx.cap / 2);
}

/* First-use attachment: the producers that attached since my last look; poll their rings from
 * now on. A ring of another format than mine is refused for good (its producer broke it). */
static void rescan(fr_win *w, fr_chan *c)
{
    seg_head *h = c->seg;
    c->gen_seen = AO_load_acquire(&h->gen); /* bits set before it are visible below */
    for (int k = 0; k < (c->n + 63) / 64; k++) {
        AO_t now = AO_load_acquire(&h->attached[k]) & ~c->known[k];
        for (int b = 0; now && b < 64; b++) {
            if (!(now & (AO_t)1 << b))
                continue;
            int s = k * 64 + b, ok = s < c->n ? fr_ring_has_producer(&c->peers[s].rx) : -1;
            if (ok == 0)
                continue; /* not yet: its bump follows */
            c->known[k] |= (AO_t)1 << b;
            if (ok < 0)
                fr_fatal("rank %d: a node peer attached to packet ring %d of another format",
                         w->rank, s);
            c->on[c->non++] = s;
        }
    }
}

int fr_chan_create(fr_win *w)
{
    if (fr_opt.transport == FR_TRANSPORT_AM)
        return MPI_SUCCESS;
    const int strict = fr_opt.transport == FR_TRANSPORT_SHM;
    int node_size, first, rc = MPI_SUCCESS;
    char why[512];
    find_node(w, &node_size, &first);
    chan_info mine = {.pid = (int64_t)getpid(), .node = first};
    fr_chan *c = NULL;
    if (node_size > 1) {
        c = fr_xcalloc(1, sizeof *c);
        c->n = node_size - 1;
        c->peers = fr_xcalloc((size_t)c->n, sizeof *c->peers);
        c->known = fr_xcalloc(((size_t)c->n + 63) / 64, sizeof *c->known);
        c->on = fr_xcalloc((size_t)c->n, sizeof *c->on);
        for (int s = 0; s < c->n; s++)
            c->peers[s].backlog_tail = &c->peers[s].backlog;
        const char *what = "packet rings";
        int lazy = fr_opt.shm_lazy || c->n > ATTACH_EAGER_MAX;
        mine.flags = lazy ? INFO_LAZY : 0;
        int mrc = make_rings(c, fr_ring_capacity(fr_opt.shm_ring), lazy, &mine);
        if (mrc == MPI_SUCCESS) {
            what = "shared state block";
            mrc = fr_shm_state_create(w); /* once per window: it outlives a re-created channel */
        }
        fr_shm_state_ref(w, &mine.state); /* serial 0 without one: peers bump by packets */
        if (mrc != MPI_SUCCESS && strict) {
            snprintf(why, sizeof why, "%s", fr_error_detail());
            rc = fr_errorf(FR_ERR_SHM, "FLEXRMA_TRANSPORT=shm: cannot make this process's %s: %s",
                           what, why);
        }
    }
    chan_info *all = fr_xcalloc((size_t)w->size, sizeof *all);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                 MPI_BYTE, w->comm, &rq));
    fr_wait_request(&rq);
    if (c) {
        /* Node members in rank order: i is my index among them, j the peer's. */
        int i = 0, members = 0;
        for (int r = 0; r < w->size; r++) {
            i += r < w->rank && all[r].node == first;
            members += all[r].node == first;
        }
        if (members != node_size) /* fr_node_comm and the published node ids disagree */
            fr_fatal("window on %d ranks: %d members name my node, fr_node_comm found %d",
                     w->size, members, node_size);
        /* One mode for the node, from what everyone published: a producer attaches late only
         * to consumers that watch their header for it. */
        for (int r = 0; r < w->size; r++)
            c->lazy |= all[r].node == first && (all[r].flags & INFO_LAZY);
        for (int r = 0, j = 0, s = 0; r < w->size; r++) {
            if (all[r].node != first)
                continue;
            if (r == w->rank) {
                j++;
                continue;
            }
            fr_chan_peer *cp = &c->peers[s++];
            cp->rank = r;
            cp->slot = i - (i > j);
            cp->info = all[r];
            int arc = check_peer(&all[r], cp->slot, node_size);
            if (arc == MPI_SUCCESS && !c->lazy)
                arc = attach(w, cp, 0);
            if (arc == MPI_SUCCESS)
                w->peers[r].chan = cp;
            if (arc != MPI_SUCCESS && strict && rc == MPI_SUCCESS) {
                snprintf(why, sizeof why, "%s", fr_error_detail());
                rc = fr_errorf(FR_ERR_SHM, "FLEXRMA_TRANSPORT=shm: rank %d, on this node, cannot "
                                           "be reached through shared memory: %s", r, why);
            }
            j++;
        }
    }
    free(all);
    w->chan = c;
    return rc;
}

int fr_chan_agree(fr_win *w, int rc)
{
    if (fr_opt.transport == FR_TRANSPORT_AM)
        return rc;
    /* v[t]: I send t messages; v[size]: I failed. Summed, v[me] is my message senders. */
    int *v = fr_xcalloc((size_t)w->size + 1, sizeof *v);
    for (int t = 0; t < w->size; t++)
        v[t] = t != w->rank && w->peers[t].tp == &fr_tp_am;
    v[w->size] = rc != MPI_SUCCESS;
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallreduce(MPI_IN_PLACE, v, w->size + 1, MPI_INT, MPI_SUM, w->comm, &rq));
    fr_wait_request(&rq);
    w->am_rx = v[w->rank];
    int failed = v[w->size];
    free(v);
    fr_chan *c = w->chan;
    if (c && c->seg) {
        if (c->lazy) {
            rescan(w, c);
        } else { /* every producer attached before the collective */
            for (int s = 0; s < c->n; s++) {
                int ok = fr_ring_has_producer(&c->peers[s].rx);
                if (ok < 0)
                    fr_fatal("rank %d: packet ring %d holds another format", w->rank, s);
                if (ok)
                    c->on[c->non++] = s;
            }
        }
        /* Named backend: everyone has opened them by now, unless they attach on first use (the
         * names then go with the segments). */
        if (!c->lazy) {
            fr_seg_unlink_name(c->seg);
            if (w->state)
                fr_seg_unlink_name(w->state);
        }
    }
    if (rc == MPI_SUCCESS && failed)
        rc = fr_errorf(FR_ERR_SHM, "FLEXRMA_TRANSPORT=shm: %d member(s) of the window cannot "
                                   "reach a node peer through shared memory (their error says "
                                   "why)", failed);
    return rc;
}

void fr_chan_destroy(fr_win *w)
{
    fr_chan *c = w->chan;
    if (!c)
        return;
    for (int s = 0; s < c->n; s++) {
        fr_chan_peer *cp = &c->peers[s];
        for (out_msg *m = cp->backlog, *next; m; m = next) { /* only after a failed creation */
            next = m->next;
            free(m->buf);
            free(m);
        }
        fr_ring_rx_free(&cp->rx);
        if (cp->state_serial)
            fr_shm_state_unmap(cp->proc, cp->state_serial);
        w->peers[cp->rank].state = NULL;
        if (cp->proc) {
            fr_seg_unmap_remote(cp->proc, cp->serial);
            fr_peer_proc_release(cp->proc);
        }
        if (w->peers[cp->rank].chan == cp)
            w->peers[cp->rank].chan = NULL;
    }
    if (c->seg)
        fr_seg_free(c->seg);
    free(c->peers);
    free(c->known);
    free(c->on);
    free(c);
    w->chan = NULL;
}

/* ---- sending ---- */

/* Write what waits for cp's ring, in order; returns the number of batches that left. */
static int backlog_drain(fr_win *w, fr_chan_peer *cp)
{
    int n = 0;
    while (cp->backlog) {
        out_msg *m = cp->backlog;
        if (!fr_ring_put(&cp->tx, m->buf, m->len, &m->done))
            break;
        cp->backlog = m->next;
        if (!cp->backlog) {
            cp->backlog_tail = &cp->backlog;
            w->chan->nbacklog--;
        }
        free(m->buf);
        free(m);
        w->pending--;
        w->peers[cp->rank].pending--;
        n++;
    }
    return n;
}

static int shm_deliver(fr_win *w, int target, unsigned char *buf, size_t len)
{
    fr_chan_peer *cp = w->peers[target].chan;
    size_t done = 0;
    /* flush and notify attached already and could report an error; a batch sent otherwise
     * (none today) has no caller to report to. */
    if (!cp->proc && fr_chan_attach(w, target) != MPI_SUCCESS)
        fr_fatal("rank %d: %s", w->rank, fr_error_detail());
    w->st.batches_ring++; /* one batch, whether it goes in now or waits in the backlog */
    if (cp->backlog)
        backlog_drain(w, cp);
    /* Straight into the ring unless earlier batches still wait: they must go first. */
    if (!cp->backlog && fr_ring_put(&cp->tx, buf, len, &done))
        return 0;
    out_msg *m = fr_xmalloc(sizeof *m);
    *m = (out_msg){NULL, buf, len, done};
    if (!cp->backlog)
        w->chan->nbacklog++;
    *cp->backlog_tail = m;
    cp->backlog_tail = &m->next;
    w->pending++; /* a send in flight: closing calls wait for it as for an MPI send */
    w->peers[target].pending++;
    return 1;
}

/* First use of the ring: attach before building the batch, so that a failure is the caller's
 * error. */
static int shm_flush(fr_win *w, int target, fr_opq *q, const fr_pkt *lead, fr_pkt *trail)
{
    int rc = fr_chan_attach(w, target);
    return rc != MPI_SUCCESS ? rc : fr_batch_flush(w, target, q, lead, trail);
}

static int shm_notify(fr_win *w, int target, const fr_pkt *pkt)
{
    int rc = fr_chan_attach(w, target);
    return rc != MPI_SUCCESS ? rc : fr_batch_notify(w, target, pkt);
}

/* Answers up to the default eager limit come back through the ring: an answer as a data
 * message of the library cost more than the rest of a fetch-and-op with its flush
 * (docs/architecture.md, "Fetches answered through the ring"). */
#define FR_RING_ANSWER_MAX 8192
const fr_transport fr_tp_shm = {"shm",       shm_flush,     shm_notify, shm_deliver,
                                FR_PKT_STRUCT, FR_RING_ANSWER_MAX};

/* ---- receiving ---- */

int fr_chan_poll(fr_win *w)
{
    fr_chan *c = w->chan;
    if (!c || c->polling)
        return 0;
    c->polling = 1;
    int events = 0;
    for (int s = 0; c->nbacklog && s < c->n; s++)
        if (c->peers[s].backlog)
            events += backlog_drain(w, &c->peers[s]);
    /* acquire in rescan: a moved generation shows the bits set before it */
    if (c->lazy && c->seg && AO_load(&((seg_head *)c->seg)->gen) != c->gen_seen)
        rescan(w, c);
    for (int i = 0; i < c->non; i++) {
        fr_chan_peer *cp = &c->peers[c->on[i]];
        rx_ctx x = {w, cp->rank};
        int k = fr_ring_poll(&cp->rx, dispatch, &x);
        if (k < 0)
            fr_fatal("rank %d: the packet ring from rank %d holds a malformed record", w->rank,
                     cp->rank);
        events += k;
    }
    if (w->asking)
        events += fr_batch_asks_due(w);
    c->polling = 0;
    return events;
}
