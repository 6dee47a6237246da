/* direct.c - single-copy access to node peers' windows (see direct.h for when and why).
 *
 * Memory ordering. The owner writes fence_passed and posted[]; a peer writes only its own
 * completed[] and fence slots (the lock word and the accumulate stripes are shared atomics,
 * shm_lock.h and acc_shared.c).
 *   owner:  local stores into its window, then store fence_passed / posted[r] (or its fence
 *           slot in the origin's page, fence_settled) with release
 *           -> an origin that loads the new value with acquire sees those stores, so its get
 *              reads them and its put lands after them;
 *   origin: copy into the target's window, then publish the closing packet in the ring (release,
 *           shm_ring.c) or store completed[me] or a fence slot's `closed` with release -> the
 *           target that has run the packet, or loaded that word with acquire, sees the data, and
 *           so does a third member that loads `closed` with acquire (fence_settled).
 * A cross-memory-attach copy is a system call, which orders the same way.
 * Dynamic windows: the owner stores region_gen[slot] at attach and clears it at detach with
 * full barriers; an origin loads it with acquire just before each copy into the region. */
#include "direct.h"
#include "counter_bump.h"
#include "dtype/acc.h"
#include "core/idle.h"
#include "core/next.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "node/shm_lock.h"
#include "node/shm_map.h"
#include "node/shm_seg.h"
#include "transport.h"

#include <atomic_ops.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_MAGIC 0x66726469726563UL /* "frdirec" */
#define REGION_SLOTS 128 /* dynamic windows: attached regions node peers may copy into at once */

/* The page each member shares with its node peers. */
typedef struct dstate {
    AO_t magic;
    AO_t size;              /* window members: entries of posted[] and of completed */
    AO_t fence_passed;      /* number of the last fence this member completed: every operation
                               of the epochs before it is in its window */
    AO_t pad[5];            /* the lock on a cache line of its own */
    fr_lockword lock;       /* the passive-target lock on its window (shm_lock.h) */
    fr_lockword acc_stripes[FR_ACC_STRIPES]; /* accumulate locks, by stripe of its window
                               (acc.h, acc_shared.c); a dynamic window's stripes are counted
                               from address 0 of its owner (dyn_at) */
    AO_t region_gen[REGION_SLOTS]; /* dynamic windows: slot s holds the gen of the attached
                               region published there (fr_region.gen), 0 when free */
    AO_t posted[];          /* by origin window rank: exposure epochs posted to it, cumulative;
                               then, from posted + size, completed: by origin window rank, its
                               access epochs to this member that it closed without a COMPLETE
                               packet (fr_direct_complete), counted as MPI_Win_start counts them;
                               then, from posted + 2 * size, fence slots: by origin window rank,
                               two fence_slot (fr_direct_fence_close); then asks: by origin
                               window rank, its last get asked through the ring and who
                               claimed it (ASK_*, fr_direct_ask_open) */
} dstate;

/* Where an origin closes a fence epoch to this member instead of a FENCE_DONE packet. Two per
 * origin, used by turns (the parity of the closing fence's number): an origin writes a slot
 * again only two closing fences later, by when this member has read it (the fence between
 * waits for this member to have completed this one). */
typedef struct fence_slot {
    AO_t upto;              /* the FENCE_DONE's count: the origin's operations sent here */
    AO_t flags;             /* SLOT_*, as they stood at its close (fence_settled) */
    AO_t closed;            /* the closing fence's number (fr_win.fence_closes), stored last */
} fence_slot;

enum {
    SLOT_SETTLED = 1, /* no result of the origin's own operations was still on its way into its
                         memory (its gets' answers) */
    SLOT_QUIET = 2    /* nothing of the origin's travelled to this member in the epoch: all its
                         operations here were copied */
};

static volatile AO_t *completed_of(dstate *s, int size, int origin)
{
    return &s->posted[size + origin];
}

static volatile fence_slot *fence_slot_of(dstate *s, int size, int origin, uint64_t closes)
{
    volatile fence_slot *slots = (volatile fence_slot *)(void *)&s->posted[2 * size];
    return &slots[2 * origin + (closes & 1)];
}

/* An ask word holds ask number << 2 | its state: open, until one side claims it with a
 * compare-and-swap; the target to serve it, or the origin to take it back. */
enum { ASK_OPEN = 0, ASK_SERVED = 1, ASK_TAKEN = 2 };
/* How long gets to a target go by cross-memory attach after one was taken back, doubled after
 * each take-back in a row up to the most (fr_peer.asks_quiet; an answer starts it afresh). */
#define ASK_QUIET_NS 1000000
#define ASK_QUIET_MAX_NS 64000000

static volatile AO_t *ask_of(dstate *s, int size, int origin)
{
    volatile fence_slot *slots = fence_slot_of(s, size, 0, 0);
    return (volatile AO_t *)(void *)&slots[2 * size] + origin;
}

/* D_DYN: a dynamic window's peer, its state page mapped; its attached regions that lie in its
 * segments are mapped as this process learns them (fr_direct_regions_learned). */
typedef enum dmode { D_NONE = 0, D_MAP, D_CMA, D_DYN } dmode;

/* D_DYN: where a learned region of the peer is mapped here. */
typedef struct dregion {
    char *at;               /* its first byte here, NULL: not mapped (it travels) */
    uint64_t serial;        /* the segment mapped for it */
} dregion;

/* What each member publishes at creation. */
typedef struct direct_info {
    int64_t pid;
    uint64_t base;          /* window base in its address space */
    uint64_t size;          /* window bytes */
    fr_seg_ref win;         /* segment holding window bytes [map_lo, map_hi), its offset that
                               of byte map_lo; serial 0 if none */
    uint64_t map_lo, map_hi;
    fr_seg_ref state;       /* its state page; serial 0 if none */
    fr_cma_probe probe;
} direct_info;

typedef struct dpeer {
    direct_info *info;      /* first-use attachment (fr_chan_lazy): what it published, until
                               this process first needs it (peer_of) and maps it */
    char *shared_at;        /* MPI_Win_allocate_shared: its window here, for that moment */
    dmode mode;
    char *win;              /* D_MAP: where its window base would lie here: bytes [map_lo,
                               map_hi) of its window are mapped, at win + map_lo */
    MPI_Aint map_lo, map_hi;
    int cma;                /* its window is reached by cross-memory attach too (outside
                               [map_lo, map_hi), and for D_CMA) */
    uint64_t remote_base;   /* its window base in its own address space */
    pid_t pid;
    fr_peer_proc *proc;     /* holds the mappings below */
    uint64_t win_serial;    /* mapped window segment, 0 if none */
    uint64_t state_serial;  /* mapped state page */
    dstate *state;
    uint64_t starts;        /* my access epochs that included it (MPI_Win_start) */
    uint64_t closed_upto;   /* my operations sent to it when I last closed a fence epoch to it
                               in its state page */
    uint64_t quiet_close;   /* the last closing fence (fr_win.fence_closes) whose epoch sent it
                               nothing of mine (none travelled: all copied), 0 if none */
    dregion *regions;       /* D_DYN: by index of its table as I know it (fr_peer.known) */
    int nregions;
} dpeer;

typedef struct fr_direct {
    dstate *mine;
    dpeer *peers;           /* by window rank */
    uint64_t epoch_close;   /* the current fence epoch was opened by this closing fence
                               (fr_win.fence_closes); 0: by one with MPI_MODE_NOPRECEDE */
} fr_direct;

/* ---- creation ---- */

static size_t state_bytes(int size)
{
    return sizeof(dstate) + (size_t)size * (3 * sizeof(AO_t) + 2 * sizeof(fence_slot));
}

/* What the short path of an RMA call (api/rma_ops.h) needs to copy into d's window itself. */
static void set_mapped(fr_peer *p, const dpeer *d)
{
    p->mapped = d->win;
    p->mapped_lo = d->map_lo;
    p->mapped_hi = d->map_hi;
}

static void map_peer(fr_win *w, int r, const direct_info *in)
{
    dpeer *d = &w->direct->peers[r];
    if (in->state.serial == 0 || fr_peer_proc_open((pid_t)in->pid, &d->proc) != MPI_SUCCESS)
        return;
    d->pid = (pid_t)in->pid;
    void *base;
    if (fr_seg_map_remote(d->proc, &in->state, &base) != MPI_SUCCESS)
        return;
    d->state_serial = in->state.serial;
    dstate *state = (dstate *)((char *)base + in->state.offset);
    if (in->state.size < in->state.offset + state_bytes(w->size) ||
        AO_load_acquire(&state->magic) != STATE_MAGIC || AO_load(&state->size) != (AO_t)w->size)
        return;
    d->state = state;
    if (w->attr_flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        d->mode = D_DYN; /* no window memory: regions are mapped once learned */
        return;
    }
    if (in->win.serial != 0 && in->map_lo < in->map_hi && in->map_hi <= in->size &&
        in->win.offset <= in->win.size &&
        in->map_hi - in->map_lo <= in->win.size - in->win.offset &&
        fr_seg_map_remote(d->proc, &in->win, &base) == MPI_SUCCESS) {
        d->win_serial = in->win.serial;
        d->win = (char *)((uintptr_t)base + in->win.offset - in->map_lo);
        d->map_lo = (MPI_Aint)in->map_lo;
        d->map_hi = (MPI_Aint)in->map_hi;
        d->mode = D_MAP;
        set_mapped(&w->peers[r], d);
    }
    if (fr_cma_usable(d->pid, &in->probe)) {
        d->remote_base = in->base;
        d->cma = 1;
        if (d->mode == D_NONE)
            d->mode = D_CMA;
    }
}

/* Is any member of w reached through the node's rings (a node peer that may map my memory)? */
static int has_node_peer(const fr_win *w)
{
    for (int r = 0; r < w->size; r++)
        if (r != w->rank && w->peers[r].tp == &fr_tp_shm)
            return 1;
    return 0;
}

/* Which bytes of my window node peers may map: all of it when it lies in one of my segments
 * (MPI_Alloc_mem, MPI_Win_allocate); for MPI_Win_create over ordinary memory, its whole pages,
 * adopted once a node peer exists (node/shm_adopt.h), and kept for the window's life. */
static void publish_window(fr_win *w, direct_info *mine)
{
    size_t size = (size_t)w->win_size;
    if (fr_seg_lookup(w->base, size, &mine->win)) {
        mine->map_hi = size;
        return;
    }
    if (w->attr_flavor != MPI_WIN_FLAVOR_CREATE || !has_node_peer(w))
        return;
    if (!w->adopted.at)
        fr_adopt(w->base, size, &w->adopted);
    if (w->adopted.at) {
        mine->win = w->adopted.ref;
        mine->map_lo = (uint64_t)(w->adopted.at - (char *)w->base);
        mine->map_hi = mine->map_lo + w->adopted.bytes;
    }
}

int fr_direct_setup(fr_win *w)
{
    if (fr_opt.transport == FR_TRANSPORT_AM)
        return MPI_SUCCESS;
    fr_direct *dx = fr_xcalloc(1, sizeof *dx);
    dx->peers = fr_xcalloc((size_t)w->size, sizeof *dx->peers);
    w->direct = dx;
    direct_info mine = {.pid = getpid(), .base = (uint64_t)(uintptr_t)w->base,
                        .size = (uint64_t)w->win_size};
    if (fr_opt.direct && w->chan) {
        void *page;
        if (fr_seg_alloc(state_bytes(w->size), &page) == MPI_SUCCESS) {
            dx->mine = page;
            AO_store(&dx->mine->size, (AO_t)w->size);
            /* Publishes the formatted page: a peer that reads the magic sees the size. */
            AO_store_release(&dx->mine->magic, STATE_MAGIC);
            fr_seg_lookup(page, 0, &mine.state);
        }
        if (w->win_size > 0)
            publish_window(w, &mine);
        fr_cma_probe_self(&mine.probe);
    }
    direct_info *all = fr_xcalloc((size_t)w->size, sizeof *all);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine,
                                 MPI_BYTE, w->comm, &rq));
    fr_wait_request(&rq);
    int lazy = fr_chan_lazy(w);
    /* Peers whose window is empty too: their state page holds the lock word and the epoch
     * words, so that locking them (MPI_Win_lock_all locks every member) and closing epochs
     * with them need nothing of them; by packet, each took a round trip they had to serve. */
    for (int r = 0; r < w->size; r++) {
        if (!dx->mine || r == w->rank || w->peers[r].tp != &fr_tp_shm)
            continue;
        if (lazy) { /* mapped when first needed (peer_of) */
            dx->peers[r].info = fr_xmalloc(sizeof all[r]);
            *dx->peers[r].info = all[r];
        } else {
            map_peer(w, r, &all[r]);
        }
    }
    free(all);
    /* A dynamic window rebuilt for new members keeps its regions: publish them in the new page
     * (new slots and attach numbers; what origins knew of the old page is learned again). */
    for (int i = 0; i < w->attached.n; i++)
        fr_direct_region_attached(w, &w->attached.r[i]);
    /* Named segments: every peer that needed the name has opened it (the allgather above),
     * unless peers map it on first use (the name then goes with the segment). */
    if (dx->mine && !lazy)
        fr_seg_unlink_name(dx->mine);
    return MPI_SUCCESS;
}

/* Peer r's whole window lies at `at` here, in memory every member maps (MPI_Win_allocate_shared):
 * copies go there (not d->win_serial: the mapping is the window's, not ours). */
static void map_shared(fr_win *w, int r, dpeer *d, char *at)
{
    d->win = at;
    d->map_lo = 0;
    d->map_hi = w->peers[r].size;
    d->mode = D_MAP;
    set_mapped(&w->peers[r], d);
}

void fr_direct_adopt_mapped(fr_win *w, char *const *addr)
{
    if (!w->direct)
        return;
    for (int r = 0; r < w->size; r++) {
        dpeer *d = &w->direct->peers[r];
        if (d->info) {
            d->shared_at = addr[r]; /* applied when it is mapped */
            continue;
        }
        if (r != w->rank && d->state && addr[r])
            map_shared(w, r, d, addr[r]);
    }
}

void fr_direct_destroy(fr_win *w)
{
    fr_direct *dx = w->direct;
    if (!dx)
        return;
    for (int r = 0; r < w->size; r++) {
        dpeer *d = &dx->peers[r];
        w->peers[r].mapped = NULL;
        free(d->info);
        if (!d->proc)
            continue;
        for (int i = 0; i < d->nregions; i++)
            if (d->regions[i].at)
                fr_seg_unmap_remote(d->proc, d->regions[i].serial);
        free(d->regions);
        if (d->win_serial)
            fr_seg_unmap_remote(d->proc, d->win_serial);
        if (d->state_serial)
            fr_seg_unmap_remote(d->proc, d->state_serial);
        fr_peer_proc_release(d->proc);
    }
    if (dx->mine)
        fr_seg_free(dx->mine);
    free(dx->peers);
    free(dx);
    w->direct = NULL;
}

/* ---- announcements ---- */

void fr_direct_fence_passed(fr_win *w, int closed)
{
    if (!w->direct)
        return;
    w->direct->epoch_close = closed ? w->fence_closes : 0;
    if (w->direct->mine) /* release: my window stores before the fence come first */
        AO_store_release(&w->direct->mine->fence_passed, (AO_t)w->fence_count);
}

void fr_direct_posted(fr_win *w, const int *ranks, int n)
{
    if (!w->direct || !w->direct->mine)
        return;
    for (int i = 0; i < n; i++) { /* release: my window stores before the post come first */
        volatile AO_t *slot = &w->direct->mine->posted[ranks[i]];
        AO_store_release(slot, AO_load(slot) + 1);
    }
}

void fr_direct_started(fr_win *w, int target)
{
    if (w->direct)
        w->direct->peers[target].starts++;
}

/* ---- reaching a peer ---- */

/* First use of a peer published at creation (fr_chan_lazy): map its state page and window now,
 * once; a peer that cannot be mapped stays on the batch path, as at creation. */
static void attach_peer(fr_win *w, int r, dpeer *d)
{
    direct_info *in = d->info;
    d->info = NULL;
    map_peer(w, r, in);
    free(in);
    if (d->state && d->shared_at)
        map_shared(w, r, d, d->shared_at);
}

static dpeer *peer_of(fr_win *w, int target)
{
    if (!w->direct || target == w->rank)
        return NULL;
    dpeer *d = &w->direct->peers[target];
    if (FR_UNLIKELY(d->info != NULL))
        attach_peer(w, target, d);
    return d->mode == D_NONE ? NULL : d;
}

int fr_direct_reached(fr_win *w, int target) { return peer_of(w, target) != NULL; }

char *fr_direct_window_at(fr_win *w, int target)
{
    dpeer *d = peer_of(w, target);
    if (!d || d->mode != D_MAP || d->map_lo != 0 || d->map_hi != w->peers[target].size)
        return NULL; /* the end pages of an adopted window are not mapped (publish_window) */
    return d->win;
}

int fr_direct_complete(fr_win *w, int target)
{
    dpeer *d = peer_of(w, target);
    const fr_peer *p = &w->peers[target];
    /* Not while my last COMPLETE to it may be unread there: it would count for a later epoch. */
    if (!d || !fr_peer_settled(p) || p->acks_got < p->close_ack)
        return 0;
    /* release: my copies into its window come before it sees the epoch closed */
    AO_store_release(completed_of(d->state, w->size, w->rank), (AO_t)d->starts);
    w->st.closed_direct++;
    w->st.sync_atomics++;
    return 1;
}

int fr_direct_mapped(const fr_win *w, int target)
{
    if (!w->direct || target == w->rank)
        return 0;
    const dpeer *d = &w->direct->peers[target];
    return !d->info && d->mode != D_NONE && d->state;
}

void fr_direct_fence_close(fr_win *w, int target, uint64_t upto)
{
    dpeer *d = &w->direct->peers[target];
    volatile fence_slot *slot = fence_slot_of(d->state, w->size, w->rank, w->fence_closes);
    d->quiet_close = upto == d->closed_upto ? w->fence_closes : 0;
    d->closed_upto = upto;
    AO_store(&slot->upto, (AO_t)upto);
    AO_store(&slot->flags, (AO_t)((w->pending == 0 ? SLOT_SETTLED : 0) |
                                  (d->quiet_close == w->fence_closes ? SLOT_QUIET : 0)));
    /* release: my copies into its window, the batches before in its ring, and upto come before
     * it sees the fence closed */
    AO_store_release(&slot->closed, (AO_t)w->fence_closes);
    w->st.sync_atomics++;
}

int fr_direct_fence_closed(const fr_win *w, int origin, uint64_t *upto)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    if (!s)
        return 0;
    volatile fence_slot *slot = fence_slot_of(s, w->size, origin, w->fence_closes);
    /* acquire: the origin's copies and upto come before my reads */
    if (AO_load_acquire(&slot->closed) != (AO_t)w->fence_closes)
        return 0;
    *upto = (uint64_t)slot->upto;
    return 1;
}

int fr_direct_completed(const fr_win *w, int origin)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    /* acquire: the origin's copies come before my reads of the window */
    return s && AO_load_acquire(completed_of(s, w->size, origin)) >= AO_load(&s->posted[origin]);
}

/* ---- dynamic windows: attached memory in node peers' segments ---- */

/* Attach numbers never repeat in a process, so a slot reused by a later attach (of this window
 * or, after its state page was replaced, of any) never shows an origin the number it learned. */
static uint64_t attaches;

void fr_direct_region_attached(fr_win *w, fr_region *r)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    r->gen = 0;
    if (!s || r->size == 0 ||
        !fr_seg_lookup((const void *)(uintptr_t)r->base, (size_t)r->size, &r->seg))
        return; /* ordinary memory, or nobody maps mine: node peers send messages */
    for (uint32_t i = 0; i < REGION_SLOTS; i++)
        if (AO_load(&s->region_gen[i]) == 0) {
            r->slot = i;
            r->gen = ++attaches;
            AO_store_full(&s->region_gen[i], (AO_t)r->gen);
            return;
        }
}

void fr_direct_region_detached(fr_win *w, const fr_region *r)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    /* full barrier: an origin that loads the slot after anything that follows my detach (the
     * program's own synchronization) sees it empty */
    if (s && r->gen && r->slot < REGION_SLOTS &&
        AO_load(&s->region_gen[r->slot]) == (AO_t)r->gen)
        AO_store_full(&s->region_gen[r->slot], 0);
}

void fr_direct_regions_learned(fr_win *w, int target)
{
    dpeer *d = peer_of(w, target);
    if (!d || d->mode != D_DYN)
        return;
    const fr_regions *k = &w->peers[target].known;
    dregion *now = fr_xcalloc((size_t)k->n + 1, sizeof *now);
    for (int i = 0; i < k->n; i++) {
        const fr_region *r = &k->r[i];
        void *base;
        /* what the peer described must fit in its segment, which the mapping checks */
        if (r->gen == 0 || r->slot >= REGION_SLOTS || r->seg.offset > r->seg.size ||
            r->size > r->seg.size - r->seg.offset ||
            fr_seg_map_remote(d->proc, &r->seg, &base) != MPI_SUCCESS)
            continue;
        now[i] = (dregion){(char *)base + r->seg.offset, r->seg.serial};
    }
    /* mapped anew first: segments still in use keep their mapping (counted references) */
    for (int i = 0; i < d->nregions; i++)
        if (d->regions[i].at)
            fr_seg_unmap_remote(d->proc, d->regions[i].serial);
    free(d->regions);
    d->regions = now;
    d->nregions = k->n;
}

/* Is the attach of the learned region r still in its slot of the peer's state page (acquire:
 * the peer's stores before the attach come first)? Regions outside its segments have no slot. */
static int attach_current(const dpeer *d, const fr_region *r)
{
    return r->gen == 0 || r->slot >= REGION_SLOTS ||
           AO_load_acquire(&d->state->region_gen[r->slot]) == (AO_t)r->gen;
}

int fr_direct_region_current(fr_win *w, int target, uint64_t lo, uint64_t hi)
{
    dpeer *d = peer_of(w, target);
    if (!d || d->mode != D_DYN)
        return 1;
    const fr_regions *k = &w->peers[target].known;
    int last, i = fr_regions_span(k, lo, hi, &last);
    for (; i >= 0 && i <= last; i++)
        if (!attach_current(d, &k->r[i]))
            return 0;
    return 1;
}

/* Where op's target memory lies here, on a D_DYN peer: inside learned regions that this process
 * maps, one region or several attached back to back that lie at the same place here (in one
 * segment: each region mapped with its segment, which is mapped once); with `still`, only if
 * the peer still has each of those very attaches in its slot. *key: what the stripes count
 * from, the peer's address 0 as seen here, as the peer itself counts
 * (fr_direct_region_attached). NULL: op travels, and the target checks it against its table. */
static char *dyn_at(fr_win *w, int target, const dpeer *d, const fr_op *op, int still,
                    const char **key)
{
    MPI_Aint off, lo, hi;
    if (fr_win_span(1, op->target_disp, op->target_count, op->target_dt, &off, &lo, &hi) !=
            MPI_SUCCESS || hi <= lo || lo < 0)
        return NULL;
    const fr_regions *k = &w->peers[target].known;
    int last, first = fr_regions_span(k, (uint64_t)lo, (uint64_t)hi, &last);
    if (first < 0 || last >= d->nregions)
        return NULL;
    uintptr_t zero = 0; /* address 0 here */
    for (int i = first; i <= last; i++) {
        const fr_region *r = &k->r[i];
        if (r->size == 0) /* an empty region between two others holds nothing */
            continue;
        if (!d->regions[i].at || (still && !attach_current(d, r)))
            return NULL;
        uintptr_t z = (uintptr_t)d->regions[i].at - (uintptr_t)r->base;
        if (i > first && z != zero)
            return NULL;
        zero = z;
    }
    if (key)
        *key = (const char *)zero;
    return (char *)(zero + (uintptr_t)op->target_disp);
}

/* How op would reach this peer's window, the epoch aside. */
typedef enum dway { WAY_NONE, WAY_MAP, WAY_CMA, WAY_DYN } dway;

/* Does op lie in the mapped part of a D_MAP peer's window? */
static int in_mapped(const fr_win *w, int target, const dpeer *d, const fr_op *op)
{
    if (d->map_lo == 0 && d->map_hi == w->peers[target].size)
        return 1; /* mapped whole: the issue checked the range against the window */
    MPI_Aint off, lo, hi;
    return fr_win_span(w->peers[target].disp_unit, op->target_disp, op->target_count,
                       op->target_dt, &off, &lo, &hi) == MPI_SUCCESS &&
           d->map_lo <= lo && hi <= d->map_hi;
}

static dway way_of(fr_win *w, int target, const dpeer *d, const fr_op *op)
{
    if (op->bytes == 0)
        return WAY_NONE;
    if (d->mode == D_DYN)
        return dyn_at(w, target, d, op, 0, NULL) ? WAY_DYN : WAY_NONE;
    if (d->mode == D_MAP && in_mapped(w, target, d, op))
        return WAY_MAP;
    /* A read-modify-write needs the memory mapped; remote iovecs only for contiguous layouts. */
    if (!d->cma || fr_op_is_acc(op) || !op->target_dt->contiguous)
        return WAY_NONE;
    /* A system call (2-4 us for 8 bytes here, about what a get through the ring takes when
     * the target is in MPI) pays for a put only beyond the eager limit: below it the put rides
     * in the ring and asks nothing of the target until the epoch closes. A get through the ring
     * waits for the target to serve it, and a system call never does: gets go at any size. */
    return op->kind == FR_OP_GET || !fr_op_is_eager(op) ? WAY_CMA : WAY_NONE;
}

/* A fence epoch without waiting for the target to leave the fence that opened it
 * (fence_passed), which costs a second crossing of the cores per fence, when nothing can still
 * land in its window: its close of that fence is in my page (acquire: its window stores before
 * the fence come first) and says nothing of its own was still landing in its memory (SLOT_
 * SETTLED: its gets' answers); nothing of mine travelled to it in the epoch before (quiet_close:
 * all copied); and every other member's close of that fence is in its page, saying the same of
 * theirs (SLOT_QUIET; acquire: their copies come before mine). A member that closed by packet,
 * or has not closed yet, leaves the origin waiting for fence_passed. */
static int fence_settled(const fr_win *w, int target, const dpeer *d)
{
    uint64_t c = w->direct->epoch_close;
    if (c == 0 || d->quiet_close != c || !w->direct->mine)
        return 0;
    volatile fence_slot *slot = fence_slot_of(w->direct->mine, w->size, target, c);
    if (AO_load_acquire(&slot->closed) != (AO_t)c || !(slot->flags & SLOT_SETTLED))
        return 0;
    for (int o = 0; o < w->size; o++) {
        if (o == w->rank || o == target)
            continue;
        slot = fence_slot_of(d->state, w->size, o, c);
        if (AO_load_acquire(&slot->closed) != (AO_t)c || !(slot->flags & SLOT_QUIET))
            return 0;
    }
    return 1;
}

/* Has the target opened its window to op's epoch? (acquire: its window stores before that) */
static int permitted(const fr_win *w, int target, const dpeer *d, const fr_op *op)
{
    switch (op->epoch) {
    case FR_EPOCH_COUNTER:
        return 1;
    case FR_EPOCH_FENCE:
        return fr_fence_is_direct(w) &&
               (fence_settled(w, target, d) ||
                AO_load_acquire(&d->state->fence_passed) >= (AO_t)w->fence_opened);
    case FR_EPOCH_PSCW:
        return AO_load_acquire(&d->state->posted[w->rank]) >= (AO_t)d->starts;
    case FR_EPOCH_LOCK: {
        const fr_peer *p = &w->peers[target];
        return p->lock_nocheck || p->dlock == FR_DLOCK_HELD;
    }
    default:
        return 0;
    }
}

/* ---- accumulates ---- */

/* The state page of member rank as this process sees it: its own, or a node peer's mapped one
 * (NULL: none, or the peer is not reached directly). */
static dstate *state_of(fr_win *w, int rank)
{
    if (!w->direct)
        return NULL;
    if (rank == w->rank)
        return w->direct->mine;
    dpeer *d = peer_of(w, rank);
    return d ? d->state : NULL;
}

/* Where nobody maps owner's window, only its owner combines into it (share NULL); else the
 * stripes of its state page. owner: this process, or a peer whose window is mapped whole
 * (D_MAP); a dynamic window's peer has no base of its own here: copy_map counts its stripes. */
static int share_of(fr_win *w, int owner, fr_acc_share *share)
{
    dstate *s = state_of(w, owner);
    if (!s)
        return 0;
    *share = (fr_acc_share){.base = owner == w->rank ? w->base : peer_of(w, owner)->win,
                            .stripes = s->acc_stripes};
    return 1;
}

static void count_shared(fr_win *w, const fr_acc_share *share)
{
    w->st.acc_atomic += share->atomic;
    w->st.acc_locked += share->locked;
}

int fr_direct_acc_apply(fr_win *w, int owner, void *addr, int count, const fr_dtype *t,
                        const void *packed, size_t len, MPI_Op op, void *fetched)
{
    fr_acc_share share;
    if (!share_of(w, owner, &share))
        return fr_acc_apply(NULL, addr, count, t, packed, len, op, fetched);
    int rc = fr_acc_apply(&share, addr, count, t, packed, len, op, fetched);
    count_shared(w, &share);
    return rc;
}

int fr_direct_cas(fr_win *w, int owner, void *addr, const fr_dtype *e, const void *origin,
                  const void *compare, void *result)
{
    fr_acc_share share;
    if (!share_of(w, owner, &share))
        return fr_acc_cas(NULL, addr, e, origin, compare, result);
    int rc = fr_acc_cas(&share, addr, e, origin, compare, result);
    count_shared(w, &share);
    return rc;
}

/* An accumulate of any kind at `at`, combined as share says (NULL: only this process combines
 * there). */
static int acc_op(fr_win *w, fr_acc_share *share, char *at, const fr_op *op)
{
    size_t bytes = (size_t)op->bytes;
    int rc = MPI_SUCCESS;
    if (op->kind == FR_OP_CAS) { /* one predefined element: no packing */
        rc = fr_acc_cas(share, at, op->target_dt, op->origin_addr, op->compare_addr,
                        op->result_addr);
        if (share)
            count_shared(w, share);
        return rc;
    }
    const void *packed = op->origin_addr;
    void *tmp = NULL, *fetched = NULL;
    int no_op = op->op_index == FR_OPI_NO_OP;
    if (no_op)
        packed = NULL;
    else if (!op->origin_dt->contiguous)
        packed = tmp = fr_xmalloc(bytes);
    if (tmp)
        rc = fr_pack(op->origin_addr, op->origin_count, op->origin_dt, tmp, bytes);
    if (op->kind == FR_OP_GACC)
        fetched = op->result_dt->contiguous ? op->result_addr : fr_xmalloc(bytes);
    if (rc == MPI_SUCCESS) {
        rc = fr_acc_apply(share, at, op->target_count, op->target_dt, packed, bytes,
                          fr_op_handle(op->op_index), fetched);
        if (share)
            count_shared(w, share);
    }
    if (rc == MPI_SUCCESS && fetched && fetched != op->result_addr)
        rc = fr_unpack(fetched, bytes, op->result_addr, op->result_count, op->result_dt);
    if (fetched != op->result_addr)
        free(fetched);
    free(tmp);
    return rc;
}

int fr_direct_acc_op(fr_win *w, int owner, char *at, const fr_op *op)
{
    fr_acc_share share;
    return acc_op(w, share_of(w, owner, &share) ? &share : NULL, at, op);
}

/* ---- copies ---- */

/* op at `at`, memory of a peer whose state page is s; key: what its stripes count from. */
static int copy_map(fr_win *w, dstate *s, const char *key, char *at, const fr_op *op)
{
    if (fr_op_is_acc(op)) {
        fr_acc_share share = {.base = key, .stripes = s->acc_stripes};
        return acc_op(w, &share, at, op);
    }
    if (op->kind == FR_OP_PUT)
        return fr_copy_typed(op->origin_addr, op->origin_count, op->origin_dt, at,
                             op->target_count, op->target_dt, (size_t)op->bytes);
    return fr_copy_typed(at, op->target_count, op->target_dt, op->origin_addr, op->origin_count,
                         op->origin_dt, (size_t)op->bytes);
}

/* Where op's contiguous target bytes lie in the target process, for cross-memory attach. */
static struct iovec cma_remote(const fr_win *w, const dpeer *d, int target, const fr_op *op)
{
    uint64_t at = d->remote_base +
                  (uint64_t)(op->target_disp * (MPI_Aint)w->peers[target].disp_unit);
    return (struct iovec){(void *)(uintptr_t)at, (size_t)op->bytes};
}

/* Read the contiguous bytes at remote in d's process into count elements of dt at addr. */
static int cma_get(const dpeer *d, struct iovec remote, void *addr, int count,
                   const fr_dtype *dt)
{
    void *tmp = dt->contiguous ? NULL : fr_xmalloc(remote.iov_len);
    struct iovec local = {tmp ? tmp : addr, remote.iov_len};
    int rc = fr_cma_read(d->pid, &local, 1, &remote, 1);
    if (rc == MPI_SUCCESS && tmp)
        rc = fr_unpack(tmp, remote.iov_len, addr, count, dt);
    free(tmp);
    return rc;
}

static int copy_cma(fr_win *w, const dpeer *d, int target, const fr_op *op)
{
    size_t bytes = (size_t)op->bytes;
    struct iovec remote = cma_remote(w, d, target, op);
    if (op->kind != FR_OP_PUT)
        return cma_get(d, remote, op->origin_addr, op->origin_count, op->origin_dt);
    void *tmp = op->origin_dt->contiguous ? NULL : fr_xmalloc(bytes);
    struct iovec local = {tmp ? tmp : op->origin_addr, bytes};
    int rc = tmp ? fr_pack(op->origin_addr, op->origin_count, op->origin_dt, tmp, bytes)
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = fr_cma_write(d->pid, &local, 1, &remote, 1);
    free(tmp);
    return rc;
}

/* ---- gets asked through the ring (direct.h) ---- */

/* May a get of op's epoch be asked? Only where its origin ends the epoch itself, after the get
 * is answered or taken back, so that a get taken back is read while the epoch still holds: a
 * lock this origin holds in the target's lock word (the unlock and the flushes wait for the
 * get); a PSCW epoch whose post it has seen, and a fence epoch of the direct scheme that the
 * target has opened, both closed by a store in the target's state page once the get is settled
 * (fr_batch_ask_settle). */
static int ask_epoch(fr_win *w, int target, const dpeer *d, const fr_op *op)
{
    switch (op->epoch) {
    case FR_EPOCH_LOCK:
        return w->peers[target].dlock == FR_DLOCK_HELD;
    case FR_EPOCH_PSCW:
    case FR_EPOCH_FENCE:
        return permitted(w, target, d, op);
    default:
        return 0;
    }
}

/* Is op, a get that cross-memory attach would read, asked of the target through the ring
 * instead? In an epoch that allows it (ask_epoch), in a batch whose only closing packet, if
 * any, asks for an acknowledgement (may_ask: one that closes the epoch or tells the target
 * something could let it move on while a get taken back is still read). One ask at a time per
 * target, and none behind other fetches (it must stay first among the answers awaited, which
 * then come in order without it); none while the ring to it is more than half full (the
 * packets of gets taken back stay in it until it polls) or for a while after one was taken
 * back (fr_peer.asks_after). */
static int ring_get(fr_win *w, int target, const dpeer *d, const fr_op *op, int may_ask)
{
    const fr_peer *p = &w->peers[target];
    return may_ask && fr_opt.ask_wait_ns && op->kind == FR_OP_GET && d->cma && !p->awaited &&
           (size_t)op->bytes <= p->tp->answer_max &&
           (p->asks_after == 0 || fr_now_ns() >= p->asks_after) && ask_epoch(w, target, d, op) &&
           fr_chan_roomy(w, target);
}

int fr_direct_ask_open(fr_win *w, int target, const fr_op *op, uint64_t *ask, uint64_t *remote)
{
    dpeer *d = peer_of(w, target);
    if (!d || way_of(w, target, d, op) != WAY_CMA || !ring_get(w, target, d, op, 1))
        return 0;
    fr_peer *p = &w->peers[target];
    *ask = ++p->asks;
    *remote = (uint64_t)(uintptr_t)cma_remote(w, d, target, op).iov_base;
    /* Before the packet: the ring publishes it with release order after this store. */
    AO_store(ask_of(d->state, w->size, w->rank), (AO_t)(*ask << 2 | ASK_OPEN));
    w->st.gets_asked++;
    return 1;
}

int fr_direct_ask_take_back(fr_win *w, int target, uint64_t ask, uint64_t remote, void *addr,
                            int count, const fr_dtype *dt, size_t bytes, int *rc)
{
    dpeer *d = peer_of(w, target);
    if (!AO_compare_and_swap_full(ask_of(d->state, w->size, w->rank), (AO_t)(ask << 2 | ASK_OPEN),
                                  (AO_t)(ask << 2 | ASK_TAKEN)))
        return 0;
    *rc = cma_get(d, (struct iovec){(void *)(uintptr_t)remote, bytes}, addr, count, dt);
    w->st.gets_taken_back++;
    w->st.direct++;
    /* The target is computing: ask it nothing for a while, longer each time in a row. */
    fr_peer *p = &w->peers[target];
    p->asks_quiet = !p->asks_quiet                       ? ASK_QUIET_NS
                    : p->asks_quiet >= ASK_QUIET_MAX_NS ? ASK_QUIET_MAX_NS
                                                        : 2 * p->asks_quiet;
    p->asks_after = fr_now_ns() + p->asks_quiet;
    return 1;
}

int fr_direct_ask_taken(const fr_win *w, int origin, uint64_t ask)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    return s && AO_load(ask_of(s, w->size, origin)) != (AO_t)(ask << 2 | ASK_OPEN);
}

int fr_direct_ask_serve(fr_win *w, int origin, uint64_t ask)
{
    dstate *s = w->direct ? w->direct->mine : NULL;
    return !s || AO_compare_and_swap_full(ask_of(s, w->size, origin), (AO_t)(ask << 2 | ASK_OPEN),
                                          (AO_t)(ask << 2 | ASK_SERVED));
}

/* Puts and gets go at once; an accumulate when fr_direct_acc_in_order (direct.h) says so. */
static int in_order(const fr_win *w, int target, const fr_op *op)
{
    return !fr_op_is_acc(op) || fr_direct_acc_in_order(w, target);
}

int fr_direct_try(fr_win *w, int target, const fr_op *op, int may_ask, int *rc)
{
    dpeer *d = peer_of(w, target);
    dway way = d ? way_of(w, target, d, op) : WAY_NONE;
    if (way == WAY_NONE || !permitted(w, target, d, op) || !in_order(w, target, op) ||
        (way == WAY_CMA && ring_get(w, target, d, op, may_ask)))
        return 0;
    if (way == WAY_DYN) {
        const char *key;
        char *at = dyn_at(w, target, d, op, 1, &key); /* last: is it still attached? */
        if (!at)
            return 0;
        *rc = copy_map(w, d->state, key, at, op);
    } else if (way == WAY_MAP) {
        *rc = copy_map(w, d->state, d->win,
                       d->win + op->target_disp * (MPI_Aint)w->peers[target].disp_unit, op);
    } else {
        *rc = copy_cma(w, d, target, op);
    }
    w->st.direct++;
    if (op->req) /* complete at both ends: no ordinal to wait for */
        op->req->cls->op_issued(op->req, 0, 1);
    return 1;
}

static int deferrable(const fr_op *op)
{
    return op->kind == FR_OP_GET && !op->req && op->origin_dt->contiguous &&
           (op->epoch == FR_EPOCH_FENCE || op->epoch == FR_EPOCH_PSCW ||
            op->epoch == FR_EPOCH_LOCK);
}

int fr_direct_defers(fr_win *w, int target, const fr_op *op)
{
    if (!deferrable(op))
        return 0;
    dpeer *d = peer_of(w, target);
    return d && way_of(w, target, d, op) == WAY_CMA;
}

int fr_direct_gather(fr_win *w, int target, const fr_op *op, int may_ask, fr_cma_gets *g)
{
    if (!deferrable(op) || g->n == FR_CMA_GETS_MAX)
        return 0;
    dpeer *d = peer_of(w, target);
    if (!d || way_of(w, target, d, op) != WAY_CMA || !permitted(w, target, d, op) ||
        ring_get(w, target, d, op, may_ask))
        return 0;
    g->local[g->n] = (struct iovec){op->origin_addr, (size_t)op->bytes};
    g->remote[g->n] = cma_remote(w, d, target, op);
    g->n++;
    return 1;
}

int fr_direct_gets_run(fr_win *w, int target, fr_cma_gets *g)
{
    if (g->n == 0)
        return MPI_SUCCESS;
    const dpeer *d = peer_of(w, target);
    int rc = fr_cma_read(d->pid, g->local, g->n, g->remote, g->n);
    w->st.direct += g->n;
    g->n = 0;
    return rc;
}

/* How long MPI_Win_complete waits for the post of a PSCW epoch whose operations are all small:
 * a post on its way (the target's next exposure epoch) shows within a few round trips, and
 * then the copies and a store close the epoch; past this, the operations travel and complete
 * returns without the target. */
#define POST_WAIT_NS 20000

typedef struct await_arg {
    fr_win *w;
    int target;
    const dpeer *d;
    const fr_op *op;
    uint64_t until; /* 0: no limit */
} await_arg;

static int permission_arrived(void *arg)
{
    const await_arg *a = arg;
    return permitted(a->w, a->target, a->d, a->op) || (a->until && fr_now_ns() > a->until);
}

void fr_direct_await(fr_win *w, int target, const fr_opq *q)
{
    if (q->n == 0)
        return; /* nothing to wait for: and a peer not yet used stays unmapped (peer_of) */
    dpeer *d = peer_of(w, target);
    if (!d)
        return;
    for (size_t i = 0; i < q->n; i++) {
        const fr_op *op = &q->ops[i];
        /* A closing fence waits for the target's close anyway, which it makes only after
         * passing the fence that opened the epoch: waiting for that costs nothing, and copies
         * instead of packets the target would hold until then (once ops travel, the two sides
         * of a fence exchange can stay out of step, each one's ops travelling in turn). A PSCW
         * epoch waits for its post: long for a large operation, whose copy beats the message
         * path by far; briefly for small ones. */
        int pscw = op->epoch == FR_EPOCH_PSCW;
        int waitable = pscw || (op->epoch == FR_EPOCH_FENCE && fr_fence_is_direct(w));
        if (waitable && way_of(w, target, d, op) != WAY_NONE) {
            int brief = 1;
            for (size_t j = 0; pscw && j < q->n; j++)
                brief &= fr_op_is_eager(&q->ops[j]);
            await_arg a = {w, target, d, op, pscw && brief ? fr_now_ns() + POST_WAIT_NS : 0};
            fr_wait_until(permission_arrived, &a);
            return; /* one permission covers the whole queue: it is one epoch */
        }
    }
}

fr_lockword *fr_direct_lockword(fr_win *w, int rank)
{
    dstate *s = state_of(w, rank);
    return s ? &s->lock : NULL;
}
