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
 * Large put/get/accumulate data (beyond FLEXRMA_EAGER_MAX) still moves in MPI messages of its
 * own, on its own tag; their order relative to the batches never mattered. */
#include "core/next.h"
#include "node/node_comm.h"
#include "node/shm_map.h"
#include "node/shm_ring.h"
#include "node/shm_seg.h"
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

typedef struct fr_chan_peer {
    int rank;               /* window rank */
    fr_peer_proc *proc;     /* its process, while its segment is mapped here */
    uint64_t serial;        /* its segment */
    fr_ring_tx tx;          /* my ring in its segment (when w->peers[rank].chan is this) */
    fr_ring_rx rx;          /* its ring in my segment */
    uint64_t state_serial;  /* its shared state block, when mapped (w->peers[rank].state) */
    int rx_on;              /* it attached to rx: poll it */
    out_msg *backlog, **backlog_tail;
} fr_chan_peer;

typedef struct fr_chan {
    void *seg;              /* my segment: the incoming rings; NULL if none could be made */
    int n;                  /* node peers, me excluded */
    fr_chan_peer *peers;    /* in window-rank order: peers[s] feeds slot s of my segment */
    int nbacklog;           /* peers with a backlog */
    int polling;            /* a poll is running; a nested one would reorder batches */
} fr_chan;

/* What each member publishes at window creation. */
typedef struct chan_info {
    int64_t pid;
    int32_t node;           /* window rank of the first member of my node */
    int32_t nrings;         /* rings in my segment; 0: none */
    uint64_t ring_bytes;    /* footprint of each */
    fr_seg_ref ref;         /* my segment */
    fr_seg_ref state;       /* my shared state block (shm_state.h); serial 0: none */
} chan_info;

typedef struct rx_ctx {
    fr_win *w;
    int src;
} rx_ctx;

static void dispatch(void *arg, const unsigned char *msg, size_t len)
{
    rx_ctx *x = arg;
    fr_am_dispatch(x->w, x->src, msg, len);
}

/* ---- creation ---- */

/* My node (node_comm.h): its size and the window rank of its first member. */
static void find_node(fr_win *w, int *size, int *first)
{
    MPI_Comm node;
    MPI_Group g;
    int zero = 0;
    fr_node_comm(w->comm, &node);
    PMPI_Comm_size(node, size);
    PMPI_Comm_group(node, &g);
    FR_CHECK_MPI(PMPI_Group_translate_ranks(g, 1, &zero, w->group, first));
    PMPI_Group_free(&g);
    PMPI_Comm_free(&node);
}

/* Rings are faulted in when made and attached (MADV_POPULATE_WRITE) only while one process's
 * incoming rings of a window take at most this many bytes (7 peers with the default 64 KiB
 * rings): a first pass through a ring costs a page fault per page on each side, which a small
 * node pays once at creation rather than in its first exchange; but faulting in every ring of a
 * 64-rank node would make each process resident in 63 rings it receives and 63 it sends to per
 * window (8 MiB), while a ghost exchange uses 2 or 4 of each. Beyond, pages are filled in by
 * first use (the ring's control lines by fr_ring_init and fr_ring_attach). */
#define RING_PREFAULT_MAX ((uint64_t)512 * 1024)

/* My incoming rings, formatted before anyone can see the segment. */
static int make_rings(fr_chan *c, size_t cap, chan_info *mine)
{
    size_t rb = fr_ring_footprint(cap), total;
    if (fr_mul_size(rb, (size_t)c->n, &total))
        return fr_errorf(FR_ERR_NO_MEM, "%d rings of %zu bytes", c->n, rb);
    int rc = fr_seg_alloc(total, &c->seg);
    if (rc != MPI_SUCCESS)
        return rc;
    if (total <= RING_PREFAULT_MAX)
        fr_mem_prefault(c->seg, total);
    for (int s = 0; s < c->n; s++)
        fr_ring_init(&c->peers[s].rx, (unsigned char *)c->seg + (size_t)s * rb, cap);
    fr_seg_lookup(c->seg, 0, &mine->ref);
    mine->nrings = c->n;
    mine->ring_bytes = rb;
    return MPI_SUCCESS;
}

/* Attach to my ring (slot) in the segment `peer` published; FR_ERR_SHM with the reason. */
static int attach(fr_chan_peer *cp, const chan_info *peer, int slot, int node_size)
{
    if (peer->nrings != node_size - 1 || peer->ref.serial == 0)
        return fr_errorf(FR_ERR_SHM, "it made no packet rings (see its own error)");
    uint64_t off = (uint64_t)slot * peer->ring_bytes;
    if (peer->ring_bytes == 0 || off >= peer->ref.size)
        return fr_errorf(FR_ERR_SHM, "its segment is too small for its rings");
    int rc = fr_peer_proc_open((pid_t)peer->pid, &cp->proc);
    if (rc != MPI_SUCCESS)
        return rc;
    void *base;
    rc = fr_seg_map_remote(cp->proc, &peer->ref, &base);
    if (rc != MPI_SUCCESS) {
        fr_peer_proc_release(cp->proc);
        cp->proc = NULL;
        return rc;
    }
    cp->serial = peer->ref.serial;
    uint64_t avail = peer->ref.size - off;
    if ((uint64_t)peer->nrings * peer->ring_bytes <= RING_PREFAULT_MAX) /* as the peer did */
        fr_mem_prefault((unsigned char *)base + off,
                        (size_t)(peer->ring_bytes < avail ? peer->ring_bytes : avail));
    if (fr_ring_attach(&cp->tx, (unsigned char *)base + off, (size_t)avail)) {
        fr_seg_unmap_remote(cp->proc, cp->serial);
        fr_peer_proc_release(cp->proc);
        cp->proc = NULL;
        return fr_errorf(FR_ERR_SHM, "its segment holds no ring at slot %d", slot);
    }
    return MPI_SUCCESS;
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
        for (int s = 0; s < c->n; s++)
            c->peers[s].backlog_tail = &c->peers[s].backlog;
        const char *what = "packet rings";
        int mrc = make_rings(c, fr_ring_capacity(fr_opt.shm_ring), &mine);
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
    FR_CHECK_MPI(FR_NEXT(Allgather)(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                    MPI_BYTE, w->comm));
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
        for (int r = 0, j = 0, s = 0; r < w->size; r++) {
            if (all[r].node != first)
                continue;
            if (r == w->rank) {
                j++;
                continue;
            }
            fr_chan_peer *cp = &c->peers[s++];
            cp->rank = r;
            int arc = attach(cp, &all[r], i - (i > j), node_size);
            if (arc == MPI_SUCCESS) {
                w->peers[r].chan = cp;
                /* Its state block, if it has one; without it (auto) bumps to it are packets. */
                arc = fr_shm_state_map(cp->proc, &all[r].state, &w->peers[r].state);
                if (w->peers[r].state)
                    cp->state_serial = all[r].state.serial;
            }
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
    FR_CHECK_MPI(FR_NEXT(Allreduce)(MPI_IN_PLACE, v, w->size + 1, MPI_INT, MPI_SUM, w->comm));
    w->am_rx = v[w->rank];
    int failed = v[w->size];
    free(v);
    fr_chan *c = w->chan;
    if (c) {
        /* Every producer attached before the collective. */
        for (int s = 0; s < c->n; s++)
            c->peers[s].rx_on = c->seg && fr_ring_has_producer(&c->peers[s].rx);
        if (c->seg)
            fr_seg_unlink_name(c->seg); /* named backend: everyone has opened it by now */
        if (w->state)
            fr_seg_unlink_name(w->state);
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

const fr_transport fr_tp_shm = {"shm", fr_batch_flush, fr_batch_notify, shm_deliver};

/* ---- receiving ---- */

int fr_chan_poll(fr_win *w)
{
    fr_chan *c = w->chan;
    if (!c || c->polling)
        return 0;
    c->polling = 1;
    int events = 0;
    for (int s = 0; s < c->n; s++) {
        fr_chan_peer *cp = &c->peers[s];
        if (c->nbacklog && cp->backlog)
            events += backlog_drain(w, cp);
        if (!cp->rx_on)
            continue;
        rx_ctx x = {w, cp->rank};
        int k = fr_ring_poll(&cp->rx, dispatch, &x);
        if (k < 0)
            fr_fatal("rank %d: the packet ring from rank %d holds a malformed record", w->rank,
                     cp->rank);
        events += k;
    }
    c->polling = 0;
    return events;
}
