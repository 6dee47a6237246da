/* osu.c - what users measure: the one-sided cases of the OSU micro-benchmarks (7.x) and of
 * IMB-RMA (the Intel MPI Benchmarks), each as its suite defines it, natively and under flexrma,
 * beside the machine's core-to-core round trip and memcpy of the same access pattern, all in
 * the same run. Written from what the suites measure, not from their code.
 *
 * Exactly 2 ranks, as both suites' pair tests: rank 0 the origin, rank 1 the target, or both
 * where a case goes both ways. Per window flavor (--flavor: malloc, OSU's "-w create", which is
 * MPI_Win_create over posix_memalign'ed memory; allocate, its "-w allocate"; create, over
 * MPI_Alloc_mem memory) and size n (8 B-1 MiB), rows named CASE/MODE/FLAVOR, times per
 * operation in microseconds:
 *
 * OSU (osu_TEST/SYNC). Its sync modes, per step:
 *   lock          MPI_Win_lock(MPI_LOCK_SHARED, 1), the operation(s), MPI_Win_unlock
 *   lock_all      MPI_Win_lock_all, the operation(s), MPI_Win_unlock_all
 *   flush         the operation(s), MPI_Win_flush; MPI_Win_lock(SHARED, 1) held over the loop
 *   flush_local   the same with MPI_Win_flush_local
 *   pscw, fence   latency tests: a ping-pong, half a step per operation: rank 0 start, op,
 *                 complete, post, wait against rank 1's post, wait, start, op, complete; or
 *                 fence, op (rank 0), fence, op (rank 1), fence. Bandwidth tests: rank 0 start,
 *                 ops, complete against rank 1's post, wait; or fence, ops, fence on both.
 *   put_latency, get_latency  MPI_Put, MPI_Get of n MPI_CHARs; all six modes
 *   acc_latency               MPI_Accumulate of n MPI_CHARs, MPI_SUM; all six
 *   get_acc_latency           MPI_Get_accumulate, the same; all six
 *   fop_latency, cas_latency  at 8 B: MPI_Fetch_and_op (MPI_SUM of 1), MPI_Compare_and_swap
 *                             (the value held, swapped for it + 1) on one MPI_LONG_LONG; all six
 *   put_bw, get_bw            a window of 64 operations of n bytes into 64 consecutive blocks per
 *                             synchronization; all six modes (MB/s = n / time per operation)
 *   put_bibw                  both ranks at once: post, start, 64 puts, complete, wait (pscw) or
 *                             fence, 64 puts, fence (fence); the time divided by the 128 puts
 * IMB-RMA (IMB's names). The origins hold MPI_Win_lock(SHARED) of the peer (lock_all for the
 * *_all cases) over the loop. MODE non_aggregate: each operation then its flush; aggregate: a
 * step is M operations (M: the loop's iteration count at this size) and one flush:
 *   Unidir_put, Unidir_get          rank 0 to rank 1, MPI_BYTE; both modes
 *   Bidir_put, Bidir_get            both ranks at once; both modes
 *   Put_local, Get_local            MPI_Win_flush_local; both modes
 *   One_put_all, One_get_all        rank 0 to every other rank, MPI_Win_flush_all; aggregate
 *   All_put_all, All_get_all        every rank to every other; aggregate
 *   Put_all_local, Get_all_local    rank 0, MPI_Win_flush_local_all; aggregate
 *   Exchange_put, Exchange_get      both ranks to the left and the right neighbour (with 2 ranks
 *                                   the same one: two blocks), a flush; non_aggregate, time per
 *                                   exchange
 *   Accumulate, Get_accumulate      n bytes of MPI_FLOAT, MPI_SUM; both modes
 *   Fetch_and_op, Compare_and_swap  one MPI_FLOAT (MPI_SUM of 1), one MPI_INT: rows at 4 B,
 *                                   measured with the 8-byte size; both modes
 *   Truly_passive_put/t_pure        per step rank 0 MPI_Put, MPI_Win_flush, MPI_Barrier; rank 1
 *                                   MPI_Barrier
 *   Truly_passive_put/t_ovrl        the same, rank 1 computing (no MPI call) for t_pure before
 *                                   its barrier: near t_pure when puts complete without the target
 * References, the ratio column's, run in the same tables:
 *   c2c               the latency table's: ranks 0 and 1 ping-pong a cache line in plain shared
 *                     memory, one round trip (common.c)
 *   memcpy            one n-byte memcpy in rank 0 per step
 *   memcpy-window     64 memcpys into 64 blocks per step, per copy: the bandwidth table's
 *   memcpy-aggregate  M memcpys into one block per step, per copy: the aggregate table's
 * Tables without a reference: the accumulates (from 32 KiB one step per loop: MPICH 4.0 takes
 * milliseconds per accumulate of 64 KiB of MPI_CHAR), IMB's 4-byte atomics. The warm-up is at
 * most one loop's steps. Natively on MPI_Win_allocate windows under Open MPI 4 the
 * compare-and-swaps are skipped (see bench_native_cas_crashes).
 *
 * Every timed loop is checked afterwards: the puts' stamps in the target's memory (read by its
 * owner under a lock of its own window), the gets' stamps in the origin's buffer, the
 * accumulates' sums and the counters against the operations the peer issued, each fetched value
 * of a step of one operation (the sums only grow by one per operation, so the value is known).
 * A case that moves wrong data gets no row.
 *
 * Windows, as the suites make them (enum win): per size one of n bytes for OSU's latency tests
 * (8 for fop, cas; MPI_Win_allocate's at least 16, see main) and one of 64 n for its bandwidth
 * tests; one of 4 MiB (IMB's buffer for its largest message) for IMB's cases. The data a case reaches starts at the window's start (the
 * counters are its first 8 bytes), stamped, zeroed or summed by its owner before each loop.
 * Which memory a window is matters: flexrma moves whole pages of ordinary memory into a segment
 * its node peers map, and reaches a window of part of a page (OSU's below 4 KiB) otherwise. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64 /* OSU's operations per synchronization in its bandwidth tests */
#define AGG (-1)  /* a count of M: the loop's iteration count (IMB's aggregate mode) */
#define IMB_BUFFER (4u << 20) /* IMB's window: its buffer for the largest message, 4 MiB */

enum op { OP_PUT, OP_GET, OP_ACC, OP_GACC, OP_FOP, OP_CAS, OP_MEMCPY, OP_C2C };
enum sync { SY_NONE, SY_LOCK, SY_LOCK_ALL, SY_FLUSH, SY_FLUSH_LOCAL, SY_PSCW, SY_FENCE,
            SY_FLUSH_ALL, SY_FLUSH_LOCAL_ALL, SY_FLUSH_BARRIER };
enum dir { DIR_UNI, DIR_BOTH, DIR_PINGPONG }; /* rank 0 to 1; both at once; one then the other */
enum elem { E_BYTE, E_CHAR, E_FLOAT, E_LONG_LONG, E_INT };
/* The tables a size is measured in: each its own iteration count, operations and reference.
 * The accumulates have a table of their own, with fewer steps from 32 KiB: MPICH 4.0 takes
 * milliseconds for an accumulate of 64 KiB of MPI_CHAR. */
enum group { G_LAT, G_LAT8, G_ACC, G_ATOM4, G_ATOM4_AGG, G_BW, G_AGG, G_PASSIVE };
/* The window a case reaches, as its suite makes it: OSU's latency tests one of n bytes per size
 * (fop, cas: 8), its bandwidth tests one of 64 n; IMB one over its buffer for the largest
 * message (4 MiB by default) for every case. Their memory is what flexrma can share: a window
 * of part of a page cannot move into a segment (docs/architecture.md, adopting memory). */
enum win { W_NONE, W_LAT, W_BW, W_IMB };

typedef struct kase {
    const char *name;
    enum group group;
    enum win win;
    enum op op;
    enum elem elem;
    enum sync sync;
    enum dir dir;
    int count;   /* operations per step per issuing rank (AGG: M) */
    int ops;     /* what a step's time is divided by (AGG: M) */
    int spread;  /* the step's operations go to consecutive blocks, else all to the first */
    int compute; /* Truly_passive_put/t_ovrl: the target computes before its barrier */
} kase;

/* OSU's test in its six sync modes: one operation per step (latency) or a window of 64 to 64
 * blocks (bandwidth); OSU's latency in pscw and fence is half a ping-pong step. */
#define OSU(test, group, op, elem, mode, sync, dir, n, ops, spread) \
    {"osu_" test "/" mode, group, group == G_BW ? W_BW : W_LAT, op, elem, sync, dir, n, ops, \
     spread, 0}
#define OSU_LAT(test, group, op, elem)                                           \
    OSU(test, group, op, elem, "lock", SY_LOCK, DIR_UNI, 1, 1, 0),               \
    OSU(test, group, op, elem, "flush", SY_FLUSH, DIR_UNI, 1, 1, 0),             \
    OSU(test, group, op, elem, "flush_local", SY_FLUSH_LOCAL, DIR_UNI, 1, 1, 0), \
    OSU(test, group, op, elem, "lock_all", SY_LOCK_ALL, DIR_UNI, 1, 1, 0),       \
    OSU(test, group, op, elem, "pscw", SY_PSCW, DIR_PINGPONG, 1, 2, 0),          \
    OSU(test, group, op, elem, "fence", SY_FENCE, DIR_PINGPONG, 1, 2, 0)
#define OSU_BW(test, op)                                                                    \
    OSU(test, G_BW, op, E_CHAR, "lock", SY_LOCK, DIR_UNI, WINDOW, WINDOW, 1),               \
    OSU(test, G_BW, op, E_CHAR, "flush", SY_FLUSH, DIR_UNI, WINDOW, WINDOW, 1),             \
    OSU(test, G_BW, op, E_CHAR, "flush_local", SY_FLUSH_LOCAL, DIR_UNI, WINDOW, WINDOW, 1), \
    OSU(test, G_BW, op, E_CHAR, "lock_all", SY_LOCK_ALL, DIR_UNI, WINDOW, WINDOW, 1),       \
    OSU(test, G_BW, op, E_CHAR, "pscw", SY_PSCW, DIR_UNI, WINDOW, WINDOW, 1),               \
    OSU(test, G_BW, op, E_CHAR, "fence", SY_FENCE, DIR_UNI, WINDOW, WINDOW, 1)
/* An IMB case in both modes, and one in its aggregate mode only. */
#define IMB_BOTH(name, op, elem, sync, dir)                          \
    {name "/non_aggregate", G_LAT, W_IMB, op, elem, sync, dir, 1, 1, 0, 0}, \
    {name "/aggregate", G_AGG, W_IMB, op, elem, sync, dir, AGG, AGG, 0, 0}
#define IMB_AGG(name, op, sync, dir) \
    {name "/aggregate", G_AGG, W_IMB, op, E_BYTE, sync, dir, AGG, AGG, 0, 0}

/* In table order; the first case of each group is its reference. */
static const kase cases[] = {
    {"c2c", G_LAT, W_NONE, OP_C2C, E_BYTE, SY_NONE, DIR_UNI, 1, 1, 0, 0},
    {"memcpy", G_LAT, W_NONE, OP_MEMCPY, E_BYTE, SY_NONE, DIR_UNI, 1, 1, 0, 0},
    OSU_LAT("put_latency", G_LAT, OP_PUT, E_CHAR),
    OSU_LAT("get_latency", G_LAT, OP_GET, E_CHAR),
    OSU_LAT("acc_latency", G_ACC, OP_ACC, E_CHAR),
    OSU_LAT("get_acc_latency", G_ACC, OP_GACC, E_CHAR),
    OSU_LAT("fop_latency", G_LAT8, OP_FOP, E_LONG_LONG),
    OSU_LAT("cas_latency", G_LAT8, OP_CAS, E_LONG_LONG),
    IMB_BOTH("Unidir_put", OP_PUT, E_BYTE, SY_FLUSH, DIR_UNI),
    IMB_BOTH("Unidir_get", OP_GET, E_BYTE, SY_FLUSH, DIR_UNI),
    IMB_BOTH("Bidir_put", OP_PUT, E_BYTE, SY_FLUSH, DIR_BOTH),
    IMB_BOTH("Bidir_get", OP_GET, E_BYTE, SY_FLUSH, DIR_BOTH),
    IMB_BOTH("Put_local", OP_PUT, E_BYTE, SY_FLUSH_LOCAL, DIR_UNI),
    IMB_BOTH("Get_local", OP_GET, E_BYTE, SY_FLUSH_LOCAL, DIR_UNI),
    {"Exchange_put/non_aggregate", G_LAT, W_IMB, OP_PUT, E_BYTE, SY_FLUSH, DIR_BOTH, 2, 1, 1, 0},
    {"Exchange_get/non_aggregate", G_LAT, W_IMB, OP_GET, E_BYTE, SY_FLUSH, DIR_BOTH, 2, 1, 1, 0},
    {"Accumulate/non_aggregate", G_ACC, W_IMB, OP_ACC, E_FLOAT, SY_FLUSH, DIR_UNI, 1, 1, 0, 0},
    {"Get_accumulate/non_aggregate", G_ACC, W_IMB, OP_GACC, E_FLOAT, SY_FLUSH, DIR_UNI, 1, 1, 0, 0},
    {"Fetch_and_op/non_aggregate", G_ATOM4, W_IMB, OP_FOP, E_FLOAT, SY_FLUSH, DIR_UNI, 1, 1, 0, 0},
    {"Compare_and_swap/non_aggregate", G_ATOM4, W_IMB, OP_CAS,
     E_INT, SY_FLUSH, DIR_UNI, 1, 1, 0, 0},
    {"Fetch_and_op/aggregate", G_ATOM4_AGG, W_IMB, OP_FOP,
     E_FLOAT, SY_FLUSH, DIR_UNI, AGG, AGG, 0, 0},
    {"Compare_and_swap/aggregate", G_ATOM4_AGG, W_IMB, OP_CAS,
     E_INT, SY_FLUSH, DIR_UNI, AGG, AGG, 0, 0},

    {"memcpy-window", G_BW, W_NONE, OP_MEMCPY, E_BYTE, SY_NONE, DIR_UNI, WINDOW, WINDOW, 1, 0},
    OSU_BW("put_bw", OP_PUT),
    OSU_BW("get_bw", OP_GET),
    {"osu_put_bibw/pscw", G_BW, W_BW, OP_PUT, E_CHAR, SY_PSCW, DIR_BOTH, WINDOW, 2 * WINDOW, 1, 0},
    {"osu_put_bibw/fence", G_BW, W_BW, OP_PUT, E_CHAR, SY_FENCE, DIR_BOTH, WINDOW, 2 * WINDOW, 1,
     0},

    {"memcpy-aggregate", G_AGG, W_NONE, OP_MEMCPY, E_BYTE, SY_NONE, DIR_UNI, AGG, AGG, 0, 0},
    IMB_AGG("One_put_all", OP_PUT, SY_FLUSH_ALL, DIR_UNI),
    IMB_AGG("One_get_all", OP_GET, SY_FLUSH_ALL, DIR_UNI),
    IMB_AGG("All_put_all", OP_PUT, SY_FLUSH_ALL, DIR_BOTH),
    IMB_AGG("All_get_all", OP_GET, SY_FLUSH_ALL, DIR_BOTH),
    IMB_AGG("Put_all_local", OP_PUT, SY_FLUSH_LOCAL_ALL, DIR_UNI),
    IMB_AGG("Get_all_local", OP_GET, SY_FLUSH_LOCAL_ALL, DIR_UNI),
    {"Accumulate/aggregate", G_AGG, W_IMB, OP_ACC, E_FLOAT, SY_FLUSH, DIR_UNI, AGG, AGG, 0, 0},
    {"Get_accumulate/aggregate", G_AGG, W_IMB, OP_GACC, E_FLOAT, SY_FLUSH, DIR_UNI, AGG, AGG, 0, 0},

    {"Truly_passive_put/t_pure", G_PASSIVE, W_IMB, OP_PUT,
     E_BYTE, SY_FLUSH_BARRIER, DIR_UNI, 1, 1, 0, 0},
    {"Truly_passive_put/t_ovrl", G_PASSIVE, W_IMB, OP_PUT,
     E_BYTE, SY_FLUSH_BARRIER, DIR_UNI, 1, 1, 0, 1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

typedef struct osu {
    int rank, peer;
    bench_win lat, bw, imb; /* the windows of the cases (enum win) */
    bench_win *w;           /* the current case's */
    bench_c2c c2c;
    MPI_Group peer_group; /* the other rank, for PSCW */
    size_t n;             /* bytes per operation */
    int agg;              /* M */
    unsigned char *src, *dst;       /* origin buffers: 64 blocks of the largest size */
    unsigned char *ones;            /* the accumulates' operand: elements of value 1 */
    unsigned char *cmp, *swp, *res; /* per operation of a step: compare, swap, fetched */
    const kase *c;                  /* the case of the current loop */
    uint64_t stamp;                 /* advanced by every loop, the same on both ranks */
    long long issued;               /* operations this rank issued into its peer's memory */
    double compute_us;              /* t_ovrl's computation per step: t_pure */
    int wrong;
} osu;

/* ---- elements ---- */

static MPI_Datatype elem_type(enum elem e)
{
    switch (e) {
    case E_CHAR: return MPI_CHAR;
    case E_FLOAT: return MPI_FLOAT;
    case E_LONG_LONG: return MPI_LONG_LONG;
    case E_INT: return MPI_INT;
    default: return MPI_BYTE;
    }
}

static size_t elem_size(enum elem e)
{
    return e == E_FLOAT || e == E_INT ? 4 : e == E_LONG_LONG ? 8 : 1;
}

static void elem_set(unsigned char *b, size_t i, enum elem e, long long v)
{
    unsigned char *p = b + i * elem_size(e);
    if (e == E_FLOAT) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
    } else if (e == E_INT) {
        int k = (int)v;
        memcpy(p, &k, sizeof k);
    } else if (e == E_LONG_LONG) {
        memcpy(p, &v, sizeof v);
    } else {
        *p = (unsigned char)v;
    }
}

/* Element i as a number: sums of MPI_CHAR wrap as signed chars, floats hold small integers
 * exactly. */
static long long elem_get(const unsigned char *b, size_t i, enum elem e)
{
    const unsigned char *p = b + i * elem_size(e);
    if (e == E_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        return (long long)f;
    }
    if (e == E_INT) {
        int k;
        memcpy(&k, p, sizeof k);
        return k;
    }
    if (e == E_LONG_LONG) {
        long long v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    return (signed char)*p;
}

/* Whether got is a sum of k ones in element e. A sum of MPI_CHARs past 127 overflows, which C
 * leaves undefined: a scalar reduction wraps, Open MPI 4.1's vectorized one (from 16 bytes on,
 * and flexrma's, which calls it) saturates at 127; both are taken. */
static int sum_ok(enum elem e, long long got, long long k)
{
    unsigned char b[8];
    elem_set(b, 0, e, k);
    return got == elem_get(b, 0, e) || (e == E_CHAR && k > 127 && got == 127);
}

/* ---- a step ---- */

static int issuing(const osu *x) { return x->c->dir != DIR_UNI || x->rank == 0; }

static int step_count(const osu *x) { return x->c->count == AGG ? x->agg : x->c->count; }

static int fetching(enum op op) { return op == OP_GACC || op == OP_FOP || op == OP_CAS; }

/* Operation i of the step, into the peer's window. */
static void issue(osu *x, int i)
{
    const kase *c = x->c;
    size_t off = c->spread ? (size_t)i * x->n : 0;
    MPI_Aint disp = x->w->disp[x->peer] + (MPI_Aint)off;
    MPI_Aint ctr = x->w->disp[x->peer]; /* the counter: the window's first 8 bytes */
    MPI_Datatype t = elem_type(c->elem);
    size_t es = elem_size(c->elem);
    int cnt = (int)(x->n / es);
    switch (c->op) {
    case OP_PUT:
        MPI_Put(x->src + off, cnt, t, x->peer, disp, cnt, t, x->w->win);
        break;
    case OP_GET:
        MPI_Get(x->dst + off, cnt, t, x->peer, disp, cnt, t, x->w->win);
        break;
    case OP_ACC:
        MPI_Accumulate(x->ones, cnt, t, x->peer, disp, cnt, t, MPI_SUM, x->w->win);
        break;
    case OP_GACC:
        MPI_Get_accumulate(x->ones, cnt, t, x->dst, cnt, t, x->peer, disp, cnt, t, MPI_SUM,
                           x->w->win);
        break;
    case OP_FOP:
        MPI_Fetch_and_op(x->ones, x->res + (size_t)i * es, t, x->peer, ctr, MPI_SUM, x->w->win);
        break;
    case OP_CAS: /* the operations before it in the step have raised the counter by one each */
        elem_set(x->cmp, (size_t)i, c->elem, x->issued);
        elem_set(x->swp, (size_t)i, c->elem, x->issued + 1);
        MPI_Compare_and_swap(x->swp + (size_t)i * es, x->cmp + (size_t)i * es,
                             x->res + (size_t)i * es, t, x->peer, ctr, x->w->win);
        break;
    default:
        return;
    }
    x->issued++;
}

static void issue_all(osu *x)
{
    int k = step_count(x);
    for (int i = 0; i < k; i++)
        issue(x, i);
}

/* A step of one fetching operation: the value fetched is the sum before it, the operations
 * this rank issued before. */
static void check_fetched(osu *x, long long before)
{
    const kase *c = x->c;
    if (c->op == OP_GACC) {
        size_t last = x->n / elem_size(c->elem) - 1;
        x->wrong += !sum_ok(c->elem, elem_get(x->dst, 0, c->elem), before) +
                    !sum_ok(c->elem, elem_get(x->dst, last, c->elem), before);
    } else {
        x->wrong += !sum_ok(c->elem, elem_get(x->res, 0, c->elem), before);
    }
}

static void compute(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) * 1e6 + (double)(t.tv_nsec - t0.tv_nsec) / 1e3 < us);
}

static void step_pscw(osu *x)
{
    const kase *c = x->c;
    MPI_Win win = x->w->win;
    if (c->dir == DIR_BOTH) {
        MPI_Win_post(x->peer_group, 0, win);
        MPI_Win_start(x->peer_group, 0, win);
        issue_all(x);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    } else if (x->rank == 0) {
        MPI_Win_start(x->peer_group, 0, win);
        issue_all(x);
        MPI_Win_complete(win);
        if (c->dir == DIR_PINGPONG) {
            MPI_Win_post(x->peer_group, 0, win);
            MPI_Win_wait(win);
        }
    } else {
        MPI_Win_post(x->peer_group, 0, win);
        MPI_Win_wait(win);
        if (c->dir == DIR_PINGPONG) {
            MPI_Win_start(x->peer_group, 0, win);
            issue_all(x);
            MPI_Win_complete(win);
        }
    }
}

static void step_fence(osu *x)
{
    MPI_Win win = x->w->win;
    MPI_Win_fence(0, win);
    if (x->c->dir == DIR_PINGPONG) { /* rank 0's epoch, then rank 1's */
        if (x->rank == 0)
            issue_all(x);
        MPI_Win_fence(0, win);
        if (x->rank == 1)
            issue_all(x);
    } else if (issuing(x)) {
        issue_all(x);
    }
    MPI_Win_fence(0, win);
}

static void step(void *p)
{
    osu *x = p;
    const kase *c = x->c;
    if (c->op == OP_C2C) {
        x->wrong += bench_c2c_step(&x->c2c);
        return;
    }
    if (c->op == OP_MEMCPY) {
        int k = step_count(x);
        for (int i = 0; i < k && x->rank == 0; i++)
            memcpy(x->dst + (c->spread ? (size_t)i * x->n : 0),
                   x->src + (c->spread ? (size_t)i * x->n : 0), x->n);
        return;
    }
    MPI_Win win = x->w->win;
    long long before = x->issued;
    switch (c->sync) {
    case SY_PSCW:
        step_pscw(x);
        break;
    case SY_FENCE:
        step_fence(x);
        break;
    case SY_FLUSH_BARRIER:
        if (issuing(x)) {
            issue_all(x);
            MPI_Win_flush(x->peer, win);
        } else if (c->compute) {
            compute(x->compute_us);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    default: /* passive target: the target makes no call */
        if (!issuing(x))
            return;
        if (c->sync == SY_LOCK)
            MPI_Win_lock(MPI_LOCK_SHARED, x->peer, 0, win);
        else if (c->sync == SY_LOCK_ALL)
            MPI_Win_lock_all(0, win);
        issue_all(x);
        if (c->sync == SY_LOCK)
            MPI_Win_unlock(x->peer, win);
        else if (c->sync == SY_LOCK_ALL)
            MPI_Win_unlock_all(win);
        else if (c->sync == SY_FLUSH)
            MPI_Win_flush(x->peer, win);
        else if (c->sync == SY_FLUSH_LOCAL)
            MPI_Win_flush_local(x->peer, win);
        else if (c->sync == SY_FLUSH_ALL)
            MPI_Win_flush_all(win);
        else if (c->sync == SY_FLUSH_LOCAL_ALL)
            MPI_Win_flush_local_all(win);
    }
    if (fetching(c->op) && x->issued == before + 1)
        check_fetched(x, before);
}

/* ---- before and after each loop ---- */

static uint64_t block_stamp(const osu *x, int i) { return x->stamp << 32 | (unsigned)i; }

/* The blocks a step reaches. */
static int nblocks(const osu *x) { return x->c->spread ? step_count(x) : 1; }

static int wrong_blocks(const osu *x, const unsigned char *buf)
{
    int wrong = 0;
    for (int i = 0; i < nblocks(x); i++)
        wrong += bench_stamp_wrong(buf + (size_t)i * x->n, x->n, block_stamp(x, i));
    return wrong;
}

static int held_lock(enum sync s)
{
    return s == SY_FLUSH || s == SY_FLUSH_LOCAL || s == SY_FLUSH_BARRIER;
}

static int held_lock_all(enum sync s) { return s == SY_FLUSH_ALL || s == SY_FLUSH_LOCAL_ALL; }

/* Prepares the data the loop moves: the origins' blocks stamped (and the blocks the gets and
 * copies fill cleared), the targets' memory stamped (gets), zeroed (accumulates, counters) by
 * its owner under a shared lock of its own window, which never blocks an origin's; then the
 * origins open the epoch the loop holds. */
static void begin(void *p)
{
    osu *x = p;
    const kase *c = bench_variant_arg();
    x->c = c;
    x->w = c->win == W_LAT ? &x->lat : c->win == W_BW ? &x->bw : c->win == W_IMB ? &x->imb : NULL;
    x->stamp++;
    x->issued = 0;
    x->wrong = 0;
    int me = issuing(x), target = c->dir != DIR_UNI || x->rank == 1;
    if (me || c->op == OP_MEMCPY)
        for (int i = 0; i < nblocks(x); i++) {
            bench_stamp(x->src + (size_t)i * x->n, x->n, block_stamp(x, i));
            bench_stamp(x->dst + (size_t)i * x->n, x->n, 0);
        }
    if (me && (c->op == OP_ACC || c->op == OP_GACC || c->op == OP_FOP)) {
        size_t ne = (x->n > 8 ? x->n : 8) / elem_size(c->elem);
        for (size_t i = 0; i < ne; i++)
            elem_set(x->ones, i, c->elem, 1);
    }
    if (target && c->win != W_NONE) {
        MPI_Win_lock(MPI_LOCK_SHARED, x->rank, 0, x->w->win);
        if (c->op == OP_GET)
            for (int i = 0; i < nblocks(x); i++)
                bench_stamp(x->w->base + (size_t)i * x->n, x->n, block_stamp(x, i));
        else if (c->op == OP_ACC || c->op == OP_GACC)
            memset(x->w->base, 0, x->n);
        else if (c->op == OP_FOP || c->op == OP_CAS)
            memset(x->w->base, 0, 8);
        MPI_Win_unlock(x->rank, x->w->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me && held_lock(c->sync))
        MPI_Win_lock(MPI_LOCK_SHARED, x->peer, 0, x->w->win);
    else if (me && held_lock_all(c->sync))
        MPI_Win_lock_all(0, x->w->win);
}

/* Closes the loop's epoch and checks: the origins their gets' and copies' blocks, then, behind
 * a barrier, each target its memory against the operations its peer issued. */
static int end(void *p)
{
    osu *x = p;
    const kase *c = x->c;
    int wrong = x->wrong;
    if (issuing(x) && held_lock(c->sync))
        MPI_Win_unlock(x->peer, x->w->win);
    else if (issuing(x) && held_lock_all(c->sync))
        MPI_Win_unlock_all(x->w->win);
    if (c->sync == SY_FENCE) /* every step ended with a fence: nothing is in flight */
        MPI_Win_fence(MPI_MODE_NOSUCCEED, x->w->win);
    long long peer_issued = 0;
    MPI_Sendrecv(&x->issued, 1, MPI_LONG_LONG, x->peer, 0, &peer_issued, 1, MPI_LONG_LONG,
                 x->peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if ((c->op == OP_GET && issuing(x)) || (c->op == OP_MEMCPY && x->rank == 0))
        wrong += wrong_blocks(x, x->dst);
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer_issued > 0 && c->win != W_NONE) {
        const unsigned char *mine = x->w->base;
        size_t last = x->n / elem_size(c->elem) - 1;
        MPI_Win_lock(MPI_LOCK_SHARED, x->rank, 0, x->w->win);
        if (c->op == OP_PUT)
            wrong += wrong_blocks(x, mine);
        else if (c->op == OP_ACC || c->op == OP_GACC)
            wrong += !sum_ok(c->elem, elem_get(mine, 0, c->elem), peer_issued) +
                     !sum_ok(c->elem, elem_get(mine, last, c->elem), peer_issued);
        else if (c->op == OP_FOP || c->op == OP_CAS)
            wrong += !sum_ok(c->elem, elem_get(mine, 0, c->elem), peer_issued);
        MPI_Win_unlock(x->rank, x->w->win);
    }
    return wrong;
}

/* ---- the tables ---- */

/* Measures the cases of the groups in mask (CAS skipped when skip_cas) in one interleaved
 * table, its first case the ratio's reference when ref. The warm-up is at most one loop's
 * steps: a step of the bandwidth table at 1 MiB moves 64 MiB. */
static void measure(const bench_opts *o, osu *x, unsigned mask, int skip_cas, int ref,
                    const char *flavor, size_t bytes, int iters)
{
    bench_variant v[NCASES];
    int ops[NCASES];
    const void *args[NCASES];
    int nv = 0;
    for (int k = 0; k < NCASES; k++) {
        const kase *c = &cases[k];
        if (!(mask & 1u << c->group) || (skip_cas && c->op == OP_CAS))
            continue;
        v[nv] = (bench_variant){c->name, step, begin, end};
        ops[nv] = c->ops == AGG ? x->agg : c->ops;
        args[nv++] = c;
    }
    bench_opts table = *o;
    table.warmup = o->warmup < iters ? o->warmup : iters;
    bench_measure_each(&table, v, nv, ref ? 0 : -1, x, flavor, bytes, iters, ops, args);
}

/* Truly_passive_put's computation lasts as long as a put with the target waiting (t_pure): one
 * loop of it, timed on rank 0 (the origin), after one untimed. */
static void calibrate(const bench_opts *o, osu *x)
{
    const kase *pure = NULL;
    for (int k = 0; k < NCASES && !pure; k++)
        if (cases[k].group == G_PASSIVE)
            pure = &cases[k];
    const bench_variant v = {pure->name, step, begin, end};
    double us = 0;
    int wrong = 0;
    for (int pass = 0; pass < 2; pass++)
        us = bench_loop(&v, pure, x, bench_iters(o, x->n), &wrong);
    if (wrong)
        bench_die("Truly_passive_put moved wrong data while calibrating");
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    x->compute_us = us;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "osu", "8,64,512,4K,32K,256K,1M", &o);
    if (o.size != 2)
        bench_die("needs exactly 2 ranks, as the OSU and IMB one-sided pair tests");
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_MALLOC | 1u << BENCH_FLAVOR_ALLOCATE |
                                  1u << BENCH_FLAVOR_CREATE);
    osu x = {.rank = o.rank, .peer = 1 - o.rank};
    size_t max = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < 8 || o.sizes[i] % 4)
            bench_die("--sizes: at least 8 bytes, a multiple of 4 (MPI_FLOAT accumulates)");
        max = o.sizes[i] > max ? o.sizes[i] : max;
    }
    size_t area = bench_mul(WINDOW, max);
    size_t imb_bytes = bench_mul(2, max) > IMB_BUFFER ? bench_mul(2, max) : IMB_BUFFER;
    x.src = bench_alloc(BENCH_MEM_MALLOC, area);
    x.dst = bench_alloc(BENCH_MEM_MALLOC, area);
    x.ones = bench_alloc(BENCH_MEM_MALLOC, max);
    size_t per_op = bench_mul((size_t)o.iters, 8); /* M is at most --iters */
    x.cmp = bench_alloc(BENCH_MEM_MALLOC, per_op);
    x.swp = bench_alloc(BENCH_MEM_MALLOC, per_op);
    x.res = bench_alloc(BENCH_MEM_MALLOC, per_op);
    bench_c2c_setup(&x.c2c, "osu");
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &x.peer, &x.peer_group);
    MPI_Group_free(&world);

    for (int f = 0; f < o.nflavor; f++) {
        const char *flavor = bench_flavor_name[o.flavor[f]];
        int skip_cas = bench_native_cas_crashes(&o, o.flavor[f]);
        if (skip_cas && o.rank == 0)
            fprintf(stderr, "osu: the compare-and-swaps on %s windows skipped: Open MPI 4's osc "
                            "rdma crashes the target on MPI_Compare_and_swap "
                            "(BENCH_NATIVE_CAS=1 runs them)\n", flavor);
        bench_win_make(&x.imb, o.flavor[f], imb_bytes);
        for (int i = 0; i < o.nsizes; i++) {
            x.n = o.sizes[i];
            x.agg = bench_iters(&o, x.n);
            /* MPICH 4.0's MPI_Win_allocate puts data meant for rank 1 into rank 0's memory
             * when the parts are not multiples of 16 bytes (8 did that): its windows get 16 */
            int allocated = o.flavor[f] == BENCH_FLAVOR_ALLOCATE;
            bench_win_make(&x.lat, o.flavor[f], allocated ? (x.n + 15) / 16 * 16 : x.n);
            bench_win_make(&x.bw, o.flavor[f], bench_mul(WINDOW, x.n));
            int iters = bench_iters(&o, x.n);
            measure(&o, &x, 1u << G_LAT | (x.n == 8 ? 1u << G_LAT8 : 0), skip_cas, 1, flavor,
                    x.n, iters);
            measure(&o, &x, 1u << G_ACC, skip_cas, 0, flavor, x.n, x.n > 16384 ? 1 : iters);
            if (x.n == 8) {
                measure(&o, &x, 1u << G_ATOM4, skip_cas, 0, flavor, 4, iters);
                measure(&o, &x, 1u << G_ATOM4_AGG, skip_cas, 0, flavor, 4, 1);
            }
            /* a quarter of the steps, at least one: each is 64 operations */
            int bw_iters = bench_iters(&o, bench_mul(x.n, WINDOW)) / 4;
            measure(&o, &x, 1u << G_BW, skip_cas, 1, flavor, x.n, bw_iters > 1 ? bw_iters : 1);
            measure(&o, &x, 1u << G_AGG, skip_cas, 1, flavor, x.n, 1);
            calibrate(&o, &x);
            measure(&o, &x, 1u << G_PASSIVE, skip_cas, 1, flavor, x.n, iters);
            bench_win_free(&x.bw);
            bench_win_free(&x.lat);
        }
        bench_win_free(&x.imb);
    }
    MPI_Group_free(&x.peer_group);
    bench_c2c_teardown(&x.c2c);
    bench_free(BENCH_MEM_MALLOC, x.res);
    bench_free(BENCH_MEM_MALLOC, x.swp);
    bench_free(BENCH_MEM_MALLOC, x.cmp);
    bench_free(BENCH_MEM_MALLOC, x.ones);
    bench_free(BENCH_MEM_MALLOC, x.dst);
    bench_free(BENCH_MEM_MALLOC, x.src);
    return bench_finish();
}
