/* plan.c - the generator: a program's window and each epoch's operations, from seeds alone.
 *
 * Every rank runs the same generator with the same seed and so gets the same plan, every rank's
 * part of it included; what it draws is listed in random.h. Sizes are drawn so that every path
 * of the engine is taken: elements inside the synchronization message, eager copies, direct
 * copies into mapped windows, large transfers, single-element hardware atomics. */
#include "random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const flavor_name[FL_COUNT] = {"create(malloc)", "create(MPI_Alloc_mem)", "allocate",
                                           "allocate_shared", "dynamic"};
const char *const epoch_name[EK_COUNT] = {"fence",   "pscw",   "lock",  "lock_all",
                                          "counter", "signal", "change"};
const char *const op_name[OP_KINDS] = {
    "put",   "get",         "accumulate", "get_accumulate",  "fetch_and_op", "compare_and_swap",
    "flush", "flush_local", "flush_all",  "flush_local_all", "wait"};
const char *const block_name[4] = {"put", "get", "accumulate (one origin)",
                                   "accumulate (several origins, one operation)"};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "t_random: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* A random order of v[0..n) (Fisher-Yates). */
static void shuffle(rng *r, int *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint64_t)i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* Pick one of the set bits of mask (not 0). */
static int pick_bit(rng *r, unsigned mask)
{
    int n = __builtin_popcount(mask), k = (int)rng_below(r, (uint64_t)n);
    for (int b = 0;; b++)
        if ((mask >> b) & 1u && k-- == 0)
            return b;
}

/* Window sizes and displacement units a window (or a joiner's new one) is drawn from. */
static const size_t window_sizes[] = {4096, 16384, 65536, 262144, 1048576};
#define NSIZES (sizeof window_sizes / sizeof *window_sizes)
static const int window_units[] = {1, 4, 8};

void plan_program(program *p, uint64_t seed, int nprocs, int rank, unsigned kinds,
                  unsigned flavors)
{
    rng r = {seed};
    memset(p, 0, sizeof *p);
    p->seed = seed;
    p->nprocs = nprocs;
    p->rank = rank;
    p->kinds = kinds;
    p->fl = (flavor)pick_bit(&r, flavors);
    p->bytes = window_sizes[rng_below(&r, NSIZES)];
    p->disp_unit = p->fl == FL_DYNAMIC ? 1 : window_units[rng_below(&r, 3)];
    p->nepochs = (int)rng_range(&r, 4, 16);
    p->my_fl = p->fl;
    p->my_allocmem = (int)(seed & 1); /* dynamic: the seed's low bit, MPI_Alloc_mem or malloc */
    /* Every process starts as a member, at its world rank; or, where membership changes are
     * allowed, sometimes only a random part of them (at least 2), in random order, so that
     * joiners are frequent: the others start with a window over themselves (exec.c), which they
     * bring when they join. Drawn from a generator of its own, so that programs without changes
     * stay as they were. */
    p->nmembers = nprocs;
    p->member = xcalloc((size_t)nprocs, sizeof *p->member);
    p->wrank_of = xcalloc((size_t)nprocs, sizeof *p->wrank_of);
    for (int w = 0; w < nprocs; w++)
        p->member[w] = p->wrank_of[w] = w;
    rng m = {seed_mix(seed ^ 0x7374617274ull, 0)};
    if (kinds & 1u << EK_CHANGE && nprocs >= 3 && rng_pct(&m, 30)) {
        shuffle(&m, p->member, nprocs);
        p->nmembers = (int)rng_range(&m, 2, nprocs - 1);
        for (int w = 0; w < nprocs; w++)
            p->wrank_of[w] = -1;
        for (int i = 0; i < p->nmembers; i++)
            p->wrank_of[p->member[i]] = i;
    }
    p->wrank = p->wrank_of[rank];
    p->bytes_of = xcalloc((size_t)nprocs, sizeof *p->bytes_of);
    p->unit_of = xcalloc((size_t)nprocs, sizeof *p->unit_of);
    p->model = xcalloc((size_t)nprocs, sizeof *p->model);
    for (int t = 0; t < nprocs; t++) {
        p->bytes_of[t] = p->bytes;
        p->unit_of[t] = p->disp_unit;
        rng c = {seed_mix(seed, 1000u + (unsigned)t)};
        p->model[t] = xcalloc(p->bytes, 1);
        fill_random(&c, p->model[t], p->bytes);
    }
}

/* ---- layouts ---- */

int layout_at(const layout *l, int i)
{
    switch (l->kind) {
    case LAY_CONTIG:
        return i;
    case LAY_VECTOR:
        return (i / l->blen) * l->stride + i % l->blen;
    case LAY_INDEXED:
        for (int b = 0;; b++) {
            if (i < l->blens[b])
                return l->disp[b] + i;
            i -= l->blens[b];
        }
    }
    return -1;
}

static void layout_contig(layout *l, int n)
{
    memset(l, 0, sizeof *l);
    l->kind = LAY_CONTIG;
    l->n = n;
    l->extent = n;
}

/* n elements in random blocks with random gaps, blocks of at most maxblk elements. */
static void layout_indexed(rng *r, layout *l, int n, int maxgap)
{
    memset(l, 0, sizeof *l);
    l->kind = LAY_INDEXED;
    l->n = n;
    int nblk = (int)rng_range(r, 1, n < 8 ? n : 8);
    l->nblk = nblk;
    l->blens = xcalloc((size_t)nblk, sizeof(int));
    l->disp = xcalloc((size_t)nblk, sizeof(int));
    /* Split n into nblk positive parts. */
    int left = n;
    for (int b = 0; b < nblk; b++) {
        int rest = nblk - b - 1;
        l->blens[b] = b == nblk - 1 ? left : (int)rng_range(r, 1, left - rest);
        left -= l->blens[b];
    }
    int at = 0;
    for (int b = 0; b < nblk; b++) {
        at += b == 0 ? 0 : (int)rng_range(r, 0, maxgap);
        l->disp[b] = at;
        at += l->blens[b];
    }
    l->extent = at;
}

/* An origin-side layout of n elements: contiguous, a vector or indexed blocks. */
static void layout_origin(rng *r, layout *l, int n)
{
    int k = (int)rng_below(r, 10);
    if (k < 5 || n == 1) {
        layout_contig(l, n);
    } else if (k < 8) {
        int blen = 1;
        for (int tries = 0; tries < 4; tries++) {
            int b = (int)rng_range(r, 1, 16);
            if (n % b == 0) {
                blen = b;
                break;
            }
        }
        memset(l, 0, sizeof *l);
        l->kind = LAY_VECTOR;
        l->n = n;
        l->blen = blen;
        l->count = n / blen;
        l->stride = blen + (int)rng_range(r, 0, 5);
        l->extent = (l->count - 1) * l->stride + blen;
    } else {
        layout_indexed(r, l, n, 6);
    }
}

/* A target-side layout inside a block of m elements; *start gets its first element. */
static void layout_target(rng *r, layout *l, int m, int *start)
{
    int k = (int)rng_below(r, 10);
    if (k < 5 || m < 4) {
        int n = rng_pct(r, 50) ? m : (int)rng_range(r, 1, m);
        layout_contig(l, n);
    } else if (k < 8) {
        memset(l, 0, sizeof *l);
        l->kind = LAY_VECTOR;
        l->blen = (int)rng_range(r, 1, m / 2 < 16 ? m / 2 : 16);
        l->stride = l->blen + (int)rng_range(r, 1, 8);
        int maxcount = (m - l->blen) / l->stride + 1;
        l->count = (int)rng_range(r, 1, maxcount);
        l->n = l->count * l->blen;
        l->extent = (l->count - 1) * l->stride + l->blen;
    } else {
        int n = (int)rng_range(r, 1, m / 2);
        layout_indexed(r, l, n, (m - n) / 8 > 0 ? (m - n) / 8 : 0);
    }
    *start = (int)rng_range(r, 0, m - l->extent);
}

static void layout_free(layout *l)
{
    free(l->blens);
    free(l->disp);
}

/* ---- epochs ---- */

/* Operations under construction: chains (sequences one origin must issue in order). */
typedef struct chain {
    int origin;
    op *ops;
    int n, cap;
} chain;

typedef struct builder {
    rng *r;
    const program *p;
    epoch *e;
    chain *chains;
    int nchains, cap;
} builder;

static chain *chain_new(builder *b, int origin)
{
    if (b->nchains == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->chains = realloc(b->chains, (size_t)b->cap * sizeof *b->chains);
    }
    chain *c = &b->chains[b->nchains++];
    memset(c, 0, sizeof *c);
    c->origin = origin;
    return c;
}

static op *chain_add(chain *c, op_kind kind, int target)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4;
        c->ops = realloc(c->ops, (size_t)c->cap * sizeof *c->ops);
    }
    op *o = &c->ops[c->n++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->origin = c->origin;
    o->target = target;
    o->req = MPI_REQUEST_NULL;
    o->ttype = o->otype = o->rtype = MPI_DATATYPE_NULL;
    o->waits = -1;
    return o;
}

static int passive(epoch_kind k) { return k == EK_LOCK || k == EK_LOCKALL; }

/* How an operation of this kind is issued in this epoch. */
static op_via pick_via(rng *r, epoch_kind ek, op_kind k)
{
    if (ek == EK_SIGNAL)
        return rng_pct(r, 70) ? VIA_SIGNAL : VIA_ISIGNAL;
    int has_i = k == OP_PUT || k == OP_GET || k == OP_ACC;      /* flexrma's MPI_I* */
    int has_r = k == OP_PUT || k == OP_GET || k == OP_ACC || k == OP_GACC;
    int x = (int)rng_below(r, 100);
    if (has_r && passive(ek) && x < 25)
        return VIA_R;
    if (has_i && x >= 80)
        return VIA_I;
    if ((k == OP_PUT || k == OP_GET) && x >= 74)
        return VIA_XNOTIFY;
    if ((k == OP_PUT || k == OP_GET) && x >= 68)
        return VIA_NOTIFY;
    return VIA_PLAIN;
}

/* Fill an operation's layouts and buffers: target side inside the block. */
static void shape(builder *b, op *o, const block *bl, int esize, int single)
{
    rng *r = b->r;
    int m = (int)(bl->len / (size_t)esize), start = 0;
    o->esize = esize;
    if (single) {
        layout_contig(&o->tl, 1);
        start = (int)rng_below(r, (uint64_t)m);
    } else {
        layout_target(r, &o->tl, m, &start);
    }
    /* The target displacement counts displacement units: start on one. */
    int unit = b->p->unit_of[b->p->member[o->target]];
    int per_unit = unit > esize ? unit / esize : 1;
    start -= start % per_unit;
    o->toff = bl->off + (size_t)start * (size_t)esize;
    if (single)
        layout_contig(&o->ol, 1);
    else
        layout_origin(r, &o->ol, o->tl.n);
    o->obytes = (size_t)o->ol.extent * (size_t)esize;
    o->obuf = xcalloc(o->obytes, 1);
    fill_random(r, o->obuf, o->obytes);
    int fetches = o->kind == OP_GET || o->kind == OP_GACC || o->kind == OP_FOP || o->kind == OP_CAS;
    if (o->kind == OP_GACC)
        layout_origin(r, &o->rl, o->tl.n);
    else if (o->kind == OP_FOP || o->kind == OP_CAS)
        layout_contig(&o->rl, 1);
    if (o->kind == OP_GACC || o->kind == OP_FOP || o->kind == OP_CAS) {
        o->rbytes = (size_t)o->rl.extent * (size_t)esize;
        o->rbuf = xcalloc(o->rbytes, 1);
        fill_random(r, o->rbuf, o->rbytes);
    }
    if (o->kind == OP_CAS) {
        o->cbuf = xcalloc((size_t)esize, 1);
        /* Mostly the value the element had when the epoch began, so that swaps happen. */
        if (rng_pct(r, 60))
            memcpy(o->cbuf, b->p->model[b->p->member[o->target]] + o->toff, (size_t)esize);
        else
            fill_random(r, o->cbuf, (size_t)esize);
    }
    if (fetches) {
        size_t n = o->kind == OP_GET ? o->obytes : o->rbytes;
        o->expect = xcalloc(n, 1);
        memcpy(o->expect, o->kind == OP_GET ? o->obuf : o->rbuf, n);
    }
}

/* A flush that completes what came before at the target (for a get back), or one that only
 * completes locally (noise). */
static void add_flush(builder *b, chain *c, int target, int remote)
{
    op_kind k = remote ? (rng_pct(b->r, 50) ? OP_FLUSH : OP_FLUSH_ALL)
                       : (rng_pct(b->r, 50) ? OP_FLUSH_LOCAL : OP_FLUSH_LOCAL_ALL);
    chain_add(c, k, target);
}

static void gen_put(builder *b, const block *bl, int bi)
{
    rng *r = b->r;
    epoch_kind ek = b->e->kind;
    int esize = rng_pct(r, 70) ? 4 : 8;
    chain *c = chain_new(b, (int)rng_below(r, (uint64_t)b->e->nprocs));
    op *o = chain_add(c, OP_PUT, bl->target);
    o->block = bi;
    o->via = pick_via(r, ek, OP_PUT);
    shape(b, o, bl, esize, 0);
    if (passive(ek) && rng_pct(r, 40)) {
        add_flush(b, c, bl->target, 1);
        o = chain_add(c, OP_GET, bl->target);
        o->block = bi;
        o->via = pick_via(r, ek, OP_GET);
        shape(b, o, bl, rng_pct(r, 50) ? esize : 4, 0);
    }
}

static void gen_get(builder *b, const block *bl, int bi)
{
    rng *r = b->r;
    int k = (int)rng_range(r, 1, b->e->nprocs < 3 ? b->e->nprocs : 3);
    for (int i = 0; i < k; i++) {
        chain *c = chain_new(b, (int)rng_below(r, (uint64_t)b->e->nprocs));
        op *o = chain_add(c, OP_GET, bl->target);
        o->block = bi;
        o->via = pick_via(r, b->e->kind, OP_GET);
        shape(b, o, bl, rng_pct(r, 70) ? 4 : 8, 0);
    }
}

static void gen_acc1(builder *b, const block *bl, int bi)
{
    rng *r = b->r;
    epoch_kind ek = b->e->kind;
    int esize = rng_pct(r, 60) ? 4 : 8;
    chain *c = chain_new(b, (int)rng_below(r, (uint64_t)b->e->nprocs));
    int n = (int)rng_range(r, 1, 5), nmops = model_op_count();
    for (int i = 0; i < n; i++) {
        static const op_kind kinds[] = {OP_ACC, OP_ACC, OP_GACC, OP_FOP, OP_CAS};
        op_kind k = kinds[rng_below(r, 5)];
        if (passive(ek) && i > 0 && rng_pct(r, 15))
            add_flush(b, c, bl->target, rng_pct(r, 50));
        op *o = chain_add(c, k, bl->target);
        o->block = bi;
        o->via = pick_via(r, ek, k);
        /* MPI_NO_OP (the last) only where something is fetched. */
        o->mop = (int)rng_below(r, (uint64_t)(k == OP_ACC ? nmops - 1 : nmops));
        shape(b, o, bl, esize, k == OP_FOP || k == OP_CAS);
    }
}

static void gen_accn(builder *b, const block *bl, int bi)
{
    rng *r = b->r;
    int esize = rng_pct(r, 60) ? 4 : 8;
    int mop = (int)rng_below(r, 7); /* the commutative ones: model.c's first seven */
    int k = (int)rng_range(r, 2, b->e->nprocs + 1);
    for (int i = 0; i < k; i++) {
        chain *c = chain_new(b, (int)rng_below(r, (uint64_t)b->e->nprocs));
        int n = (int)rng_range(r, 1, 2);
        for (int j = 0; j < n; j++) {
            op *o = chain_add(c, OP_ACC, bl->target);
            o->block = bi;
            o->via = pick_via(r, b->e->kind, OP_ACC);
            o->mop = mop;
            shape(b, o, bl, esize, 0);
        }
    }
}

/* A block of bytes in target t that overlaps no other block of this epoch; 0 if none found. */
static int place_block(builder *b, block *bl)
{
    rng *r = b->r;
    size_t win, len;
    int cls = (int)rng_below(r, 100);
    if (cls < 35)
        len = (size_t)rng_range(r, 8, 64);
    else if (cls < 65)
        len = (size_t)rng_range(r, 64, 2048);
    else if (cls < 85)
        len = (size_t)rng_range(r, 2048, 16384);
    else
        len = (size_t)rng_range(r, 16384, 262144);
    len = (len + 7) & ~(size_t)7;
    bl->target = (int)rng_below(r, (uint64_t)b->e->nprocs);
    win = b->p->bytes_of[b->p->member[bl->target]];
    if (len > win)
        len = win;
    bl->len = len;
    for (int tries = 0; tries < 4; tries++) {
        bl->off = (size_t)rng_below(r, (win - len) / 8 + 1) * 8;
        int clash = 0;
        for (int i = 0; i < b->e->nblocks && !clash; i++) {
            const block *o = &b->e->blocks[i];
            clash = o->target == bl->target && o->off < bl->off + len && bl->off < o->off + o->len;
        }
        if (!clash)
            return 1;
    }
    return 0;
}

/* Deal the chains out into each origin's program: a random interleaving that keeps each chain's
 * order. Requests of MPI_I and MPI_R operations are completed by a wait later in the program, or
 * after the epoch's closing call (exec.c). */
static void interleave(builder *b)
{
    rng *r = b->r;
    epoch *e = b->e;
    int *next = xcalloc((size_t)b->nchains, sizeof(int));
    int *cap = xcalloc((size_t)e->nprocs, sizeof(int));
    for (int o = 0; o < e->nprocs; o++) {
        int left = 0;
        for (int c = 0; c < b->nchains; c++)
            if (b->chains[c].origin == o)
                left += b->chains[c].n;
        cap[o] = 2 * left + 1;
        e->prog[o] = xcalloc((size_t)cap[o], sizeof(op));
        while (left > 0) {
            int pick = (int)rng_below(r, (uint64_t)left);
            for (int c = 0; c < b->nchains; c++) {
                chain *ch = &b->chains[c];
                if (ch->origin != o)
                    continue;
                if (pick < ch->n - next[c]) {
                    op *dst = &e->prog[o][e->nprog[o]++];
                    *dst = ch->ops[next[c]++];
                    if (dst->via != VIA_PLAIN && dst->via != VIA_SIGNAL &&
                        dst->via != VIA_NOTIFY && dst->via != VIA_XNOTIFY && rng_pct(r, 40)) {
                        /* Its wait, right away or a little later in the program. */
                        op *w = &e->prog[o][e->nprog[o]++];
                        memset(w, 0, sizeof *w);
                        w->kind = OP_WAIT;
                        w->origin = o;
                        w->target = dst->target;
                        w->waits = e->nprog[o] - 2;
                        w->req = MPI_REQUEST_NULL;
                        w->ttype = w->otype = w->rtype = MPI_DATATYPE_NULL;
                        dst->waited = 1;
                    }
                    break;
                }
                pick -= ch->n - next[c];
            }
            left--;
        }
    }
    /* Move some waits later: swap a wait with the operations after it (never past an operation
     * of another target in a one-target-at-a-time lock epoch: exec.c groups by target). */
    for (int o = 0; o < e->nprocs; o++)
        for (int i = e->nprog[o] - 1; i >= 0; i--) {
            op *p = e->prog[o];
            if (p[i].kind != OP_WAIT)
                continue;
            int j = i;
            while (j + 1 < e->nprog[o] && p[j + 1].target == p[j].target && rng_pct(r, 50)) {
                op t = p[j + 1];
                p[j + 1] = p[j];
                p[j] = t;
                for (int k = 0; k < e->nprog[o]; k++) /* fix the index of the waited op */
                    if (p[k].kind == OP_WAIT && p[k].waits == j + 1)
                        p[k].waits = j;
                j++;
            }
        }
    free(next);
    free(cap);
}

/* ---- membership changes ---- */

/* Percent of epochs that change the membership, when changes are allowed with other kinds: a
 * change is a few collectives and a round trip per pair of members and carries no operations,
 * so more would cost the ctest runs time without checking more operations. */
#define CHANGE_PCT 4

/* Whether epoch `index` is a change, drawn from a generator of its own, as is everything a
 * change draws: with `change` left out of the kinds, programs are exactly those of t_random
 * before changes existed. */
static int is_change(const program *p, int index)
{
    const unsigned bit = 1u << EK_CHANGE;
    if (!(p->kinds & bit) || p->nprocs < 2)
        return 0;
    if (!(p->kinds & ~bit))
        return 1;
    rng c = {seed_mix(p->seed ^ 0x6368616e6765ull, (uint64_t)index)};
    return rng_pct(&c, CHANGE_PCT);
}

/* A change (docs/specification.md section 11): the new communicator is a random subset of
 * MPI_COMM_WORLD's ranks, at least 2, in random order, with at least one current member (the
 * leader, peer_rank, must be a remaining member). Current members outside it leave; others in it
 * join. A joiner brings the window it kept when it left, or frees that and brings a new one over
 * MPI_COMM_SELF with contents from the seed (model.c), of a random size and displacement unit
 * (each member keeps its own, section 11), of the kind the window takes:
 *   create and allocate windows: a window of MPI_Win_create (over malloc or MPI_Alloc_mem
 *     memory) or of MPI_Win_allocate, whatever the program's own flavor (the two mix);
 *   dynamic windows: a dynamic window with one new region attached (malloc or MPI_Alloc_mem);
 *   shared windows: only the kept window (or the window over itself a process outside the
 *     window started with). A new shared window would be a valid joiner, but freeing the kept
 *     one first is not always: the parts of the window's first members lie in memory its first
 *     member allocated, and once that process has freed its kept window the window takes no
 *     more joiners (MPI_ERR_RMA_SHARED). So nobody frees a shared window before the end. */
static void plan_change(const program *p, int index, epoch *e)
{
    rng r = {seed_mix(p->seed ^ 0x6a6f696e6c656176ull, (uint64_t)index)};
    const int n = p->nprocs;
    e->new_member = xcalloc((size_t)n, sizeof(int));
    e->new_rank = xcalloc((size_t)n, sizeof(int));
    e->fresh = xcalloc((size_t)n, sizeof(int));
    e->fresh_fl = xcalloc((size_t)n, sizeof(flavor));
    e->fresh_allocmem = xcalloc((size_t)n, sizeof(int));
    e->fresh_bytes = xcalloc((size_t)n, sizeof(size_t));
    e->fresh_unit = xcalloc((size_t)n, sizeof(int));
    int *perm = e->new_member; /* a random order of all world ranks; its head is taken */
    for (int w = 0; w < n; w++)
        perm[w] = w;
    shuffle(&r, perm, n);
    e->nnew = (int)rng_range(&r, 2, n);
    int remaining = 0;
    for (int i = 0; i < e->nnew; i++)
        remaining += p->wrank_of[perm[i]] >= 0;
    if (!remaining) /* bring a current member from the tail into the head */
        for (int i = e->nnew; i < n; i++)
            if (p->wrank_of[perm[i]] >= 0) {
                int j = (int)rng_below(&r, (uint64_t)e->nnew), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
                remaining = 1;
                break;
            }
    for (int w = 0; w < n; w++)
        e->new_rank[w] = -1;
    for (int i = 0; i < e->nnew; i++)
        e->new_rank[perm[i]] = i;
    /* The leader: a random remaining member. */
    int k = (int)rng_below(&r, (uint64_t)remaining);
    for (int i = 0; i < e->nnew; i++)
        if (p->wrank_of[perm[i]] >= 0 && k-- == 0) {
            e->leader = i;
            break;
        }
    static const flavor created[] = {FL_CREATE_MALLOC, FL_CREATE_ALLOCMEM, FL_ALLOCATE};
    for (int i = 0; i < e->nnew; i++) {
        int w = perm[i];
        if (p->wrank_of[w] >= 0 || p->fl == FL_SHARED)
            continue;
        e->fresh[w] = rng_pct(&r, 50);
        e->fresh_fl[w] = p->fl == FL_DYNAMIC ? FL_DYNAMIC : created[rng_below(&r, 3)];
        e->fresh_allocmem[w] = rng_pct(&r, 50);
        e->fresh_bytes[w] = window_sizes[rng_below(&r, NSIZES)];
        e->fresh_unit[w] = p->fl == FL_DYNAMIC ? 1 : window_units[rng_below(&r, 3)];
    }
}

/* Passive epochs: which origins open a lock_all epoch (a quarter in lock epochs; in lock_all
 * epochs all but about a third, which lock every target they use at once instead), and the
 * order of several locks at once: any order, but one for all origins, since two processes
 * locking exclusively in opposite orders may deadlock on any MPI. Drawn from a generator of
 * their own, so that the operations of every program stay as they were. */
static void plan_passive(const program *p, int index, epoch *e)
{
    rng g = {seed_mix(p->seed ^ 0x6c6f636b616c6cull, (uint64_t)index)};
    for (int t = 0; t < e->nprocs; t++)
        e->lock_order[t] = t;
    shuffle(&g, e->lock_order, e->nprocs);
    for (int o = 0; o < e->nprocs; o++)
        e->lockall_of[o] = e->kind == EK_LOCKALL ? !rng_pct(&g, 35)
                           : e->kind == EK_LOCK  ? rng_pct(&g, 25)
                                                 : 0;
}

void plan_epoch(const program *p, int index, epoch *e)
{
    rng r = {seed_mix(p->seed, (uint64_t)index + 1)};
    const int n = p->nmembers;
    memset(e, 0, sizeof *e);
    e->nprocs = n;
    e->prog = xcalloc((size_t)n, sizeof *e->prog);
    e->nprog = xcalloc((size_t)n, sizeof *e->nprog);
    e->lock_type = xcalloc((size_t)n * (size_t)n, sizeof(int));
    e->lock_order = xcalloc((size_t)n, sizeof(int));
    e->lockall_of = xcalloc((size_t)n, sizeof(int));
    if (is_change(p, index)) {
        e->kind = EK_CHANGE;
        plan_change(p, index, e);
        return;
    }
    /* Epochs of the other kinds address the current members by window rank. */
    e->kind = (epoch_kind)pick_bit(&r, p->kinds & ~(1u << EK_CHANGE));
    e->noprecede = rng_pct(&r, 50);
    e->nosucceed = rng_pct(&r, 50);
    e->nocheck = rng_pct(&r, 25);
    e->use_test = rng_pct(&r, 30);
    e->multi = rng_pct(&r, 40);
    e->remote_complete = rng_pct(&r, 30);
    e->arm_first = rng_pct(&r, 50);
    /* Exclusive locks on one target at a time and on several at once (taken in increasing rank
     * order, exec.c: flexrma must take them in MPI_Win_lock order, specification section 5). */
    for (int i = 0; i < n * n; i++)
        e->lock_type[i] = !e->nocheck && rng_pct(&r, 40) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    plan_passive(p, index, e);

    /* As many blocks as with every process a member: an epoch costs mostly its synchronization
     * and the check after it, so one of fewer members carries as many operations. */
    int budget = (int)rng_range(&r, 1, 5 * p->nprocs);
    e->blocks = xcalloc((size_t)budget, sizeof *e->blocks);
    builder b = {&r, p, e, NULL, 0, 0};
    for (int i = 0; i < budget; i++) {
        block *bl = &e->blocks[e->nblocks];
        if (!place_block(&b, bl))
            continue;
        int u = (int)rng_below(&r, 100);
        bl->use = e->kind == EK_SIGNAL ? BL_PUT
                  : u < 30             ? BL_PUT
                  : u < 55             ? BL_GET
                  : u < 80             ? BL_ACC1
                                       : BL_ACCN;
        int bi = e->nblocks++;
        switch (bl->use) {
        case BL_PUT: gen_put(&b, bl, bi); break;
        case BL_GET: gen_get(&b, bl, bi); break;
        case BL_ACC1: gen_acc1(&b, bl, bi); break;
        case BL_ACCN: gen_accn(&b, bl, bi); break;
        }
    }
    interleave(&b);
    for (int c = 0; c < b.nchains; c++)
        free(b.chains[c].ops); /* the ops were moved into the programs */
    free(b.chains);
    for (int o = 0; o < e->nprocs; o++)
        for (int i = 0; i < e->nprog[o]; i++)
            e->nops += e->prog[o][i].kind <= OP_CAS;
}

void epoch_free(epoch *e)
{
    for (int o = 0; o < e->nprocs; o++) {
        for (int i = 0; i < e->nprog[o]; i++) {
            op *x = &e->prog[o][i];
            layout_free(&x->tl);
            layout_free(&x->ol);
            layout_free(&x->rl);
            free(x->obuf);
            free(x->rbuf);
            free(x->cbuf);
            free(x->expect);
        }
        free(e->prog[o]);
    }
    free(e->prog);
    free(e->nprog);
    free(e->blocks);
    free(e->lock_type);
    free(e->lock_order);
    free(e->lockall_of);
    free(e->new_member);
    free(e->new_rank);
    free(e->fresh);
    free(e->fresh_fl);
    free(e->fresh_allocmem);
    free(e->fresh_bytes);
    free(e->fresh_unit);
    memset(e, 0, sizeof *e);
}
