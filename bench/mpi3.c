/* mpi3.c - MPI-3 one-sided latency and bandwidth: put and get with flush, the fetching
 * accumulates, against a core-to-core round trip and memcpy measured in the same run.
 *
 * Rank 0 is the origin, rank 1 the target; other ranks, if any, only take part in the
 * collectives. Per window flavor (--flavor create,allocate,dynamic,shared) and size:
 *
 *   c2c          the reference of the ratio column: two processes ping-pong a cache line in
 *                plain shared memory (a POSIX shared mapping of this program, not MPI's), one
 *                round trip per step: what any cross-core handshake costs on this machine
 *   pingpong     rank 0 MPI_Sends n bytes, rank 1 answers with an empty MPI_Send: the message
 *                round trip a put and its flush need at the least, over the MPI's own
 *                point-to-point path (across hosts the reference: c2c stays on this machine)
 *   put-lockall  inside MPI_Win_lock_all: MPI_Put of n bytes, MPI_Win_flush
 *   get-lockall  inside MPI_Win_lock_all: MPI_Get of n bytes, MPI_Win_flush
 *   put-lock     inside MPI_Win_lock(MPI_LOCK_SHARED, 1), held open over the loop: MPI_Put,
 *                MPI_Win_flush (osu_put_latency -s flush)
 *   get-lock     the same with MPI_Get
 *   put-fence    MPI_Put, MPI_Win_fence (every rank fences; osu_put_latency -s fence)
 *   get-fence    the same with MPI_Get
 *   put-pscw     rank 0: MPI_Win_start, MPI_Put, MPI_Win_complete; rank 1: MPI_Win_post,
 *                MPI_Win_wait (osu_put_latency -s pscw)
 *   get-pscw     the same with MPI_Get
 * and at 8 B (always measured), inside MPI_Win_lock_all, one 8-byte integer and a flush each:
 *   fop          MPI_Fetch_and_op, MPI_SUM of 1
 *   cas          MPI_Compare_and_swap of the value it holds with that value + 1
 *   gacc         MPI_Get_accumulate, MPI_SUM of 1
 * and at sizes of 64 KiB and more, K (--blocks) blocks of n bytes per step, the row giving the
 * time per block, the reference being memcpy:
 *   memcpy       K memcpy calls of n bytes inside rank 0 (to K distinct places)
 *   put-flush    inside MPI_Win_lock_all: K puts of n bytes to K distinct places, one flush
 * Rows are named VARIANT/FLAVOR. The c2c ratio of fop is the fetch-and-op in round trips. Natively
 * on MPI_Win_allocate windows, cas is skipped under Open MPI 4 (see bench_native_cas_crashes).
 *
 * Every timed loop is checked afterwards: the ping-pong's stamp in rank 1's buffer, the puts'
 * stamps in the target's memory (read by the
 * target under a lock of its own window), the gets' stamps in the origin's buffer, each fetched
 * value (the counters only grow by one per step, so the value fetched is known) and the
 * counters' final values, the round trips' sequence numbers. A variant that moves wrong data
 * gets no row.
 *
 * Target memory (rank 1), byte offsets (each area 64-byte aligned): the put area [0, max), the
 * get area (get_off), the three counters (atom_off: fop, cas, gacc), the bandwidth area
 * (bw_off, K blocks of the largest size from 64 KiB). */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_MIN 65536 /* the bandwidth rows start here */

enum op { OP_C2C, OP_PINGPONG, OP_PUT, OP_GET, OP_FOP, OP_CAS, OP_GACC, OP_MEMCPY, OP_PUTBW };
enum epoch { EPOCH_NONE, EPOCH_LOCKALL, EPOCH_LOCK, EPOCH_FENCE, EPOCH_PSCW };
enum { CTR_FOP, CTR_CAS, CTR_GACC, NCTR }; /* the counters, in this order from ATOMICS */

typedef struct mpi3 {
    int rank;
    bench_win w;
    size_t n;                 /* this configuration's size (block size for bandwidth) */
    size_t max, bw_max;       /* largest latency and bandwidth sizes */
    size_t get_off, atom_off, bw_off;
    int blocks;               /* K */
    unsigned char *src, *dst; /* rank 0: origin buffers (put data, get results, memcpy) */
    enum op op;               /* the variant of the current timed loop (set by its begin) */
    enum epoch epoch;
    uint64_t stamp;     /* advanced by every timed loop, the same on every rank */
    int64_t ctr[NCTR];  /* rank 0: the counters' values at the target */
    int64_t one, fetched, next, compare;
    int wrong;          /* wrong values seen in the timed loop */
    bench_c2c c2c;      /* the round trip */
    MPI_Group peer;     /* ranks 0 and 1: the other one, for PSCW */
} mpi3;

static MPI_Aint target_disp(const mpi3 *x, size_t off) { return x->w.disp[1] + (MPI_Aint)off; }

static uint64_t block_stamp(const mpi3 *x, int i) { return x->stamp << 32 | (unsigned)i; }

static void step_c2c(void *p)
{
    mpi3 *x = p;
    x->wrong += bench_c2c_step(&x->c2c);
}

/* The target's only calls in a timed loop: it answers every message at once. */
static void step_pingpong(void *p)
{
    mpi3 *x = p;
    if (x->rank == 0) {
        MPI_Send(x->src, (int)x->n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (x->rank == 1) {
        MPI_Recv(x->dst, (int)x->n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

/* ---- the timed steps (rank 0 only: the target makes no call) ---- */

static void step_put(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    MPI_Put(x->src, (int)x->n, MPI_BYTE, 1, target_disp(x, 0), (int)x->n, MPI_BYTE, x->w.win);
    MPI_Win_flush(1, x->w.win);
}

static void step_get(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    MPI_Get(x->dst, (int)x->n, MPI_BYTE, 1, target_disp(x, x->get_off), (int)x->n, MPI_BYTE,
            x->w.win);
    MPI_Win_flush(1, x->w.win);
}

/* Active target: one epoch per step, the target taking part (fence: every rank). */
static void step_fence(mpi3 *x, enum op op)
{
    if (x->rank == 0 && op == OP_PUT)
        MPI_Put(x->src, (int)x->n, MPI_BYTE, 1, target_disp(x, 0), (int)x->n, MPI_BYTE, x->w.win);
    else if (x->rank == 0)
        MPI_Get(x->dst, (int)x->n, MPI_BYTE, 1, target_disp(x, x->get_off), (int)x->n, MPI_BYTE,
                x->w.win);
    MPI_Win_fence(0, x->w.win);
}

static void step_pscw(mpi3 *x, enum op op)
{
    if (x->rank == 1) {
        MPI_Win_post(x->peer, 0, x->w.win);
        MPI_Win_wait(x->w.win);
    } else if (x->rank == 0) {
        MPI_Win_start(x->peer, 0, x->w.win);
        if (op == OP_PUT)
            MPI_Put(x->src, (int)x->n, MPI_BYTE, 1, target_disp(x, 0), (int)x->n, MPI_BYTE,
                    x->w.win);
        else
            MPI_Get(x->dst, (int)x->n, MPI_BYTE, 1, target_disp(x, x->get_off), (int)x->n,
                    MPI_BYTE, x->w.win);
        MPI_Win_complete(x->w.win);
    }
}

static void step_put_fence(void *p) { step_fence(p, OP_PUT); }
static void step_get_fence(void *p) { step_fence(p, OP_GET); }
static void step_put_pscw(void *p) { step_pscw(p, OP_PUT); }
static void step_get_pscw(void *p) { step_pscw(p, OP_GET); }

static MPI_Aint ctr_disp(const mpi3 *x, int c)
{
    return target_disp(x, x->atom_off + (size_t)c * sizeof(int64_t));
}

/* Every fetching step returns the counter's value before it and adds one. */
static void fetched(mpi3 *x, int c)
{
    x->wrong += x->fetched != x->ctr[c];
    x->ctr[c]++;
}

static void step_fop(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    MPI_Fetch_and_op(&x->one, &x->fetched, MPI_INT64_T, 1, ctr_disp(x, CTR_FOP), MPI_SUM,
                     x->w.win);
    MPI_Win_flush(1, x->w.win);
    fetched(x, CTR_FOP);
}

static void step_cas(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    x->compare = x->ctr[CTR_CAS];
    x->next = x->compare + 1;
    MPI_Compare_and_swap(&x->next, &x->compare, &x->fetched, MPI_INT64_T, 1,
                         ctr_disp(x, CTR_CAS), x->w.win);
    MPI_Win_flush(1, x->w.win);
    fetched(x, CTR_CAS);
}

static void step_gacc(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    MPI_Get_accumulate(&x->one, 1, MPI_INT64_T, &x->fetched, 1, MPI_INT64_T, 1,
                       ctr_disp(x, CTR_GACC), 1, MPI_INT64_T, MPI_SUM, x->w.win);
    MPI_Win_flush(1, x->w.win);
    fetched(x, CTR_GACC);
}

static void step_memcpy(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    for (int i = 0; i < x->blocks; i++)
        memcpy(x->dst + (size_t)i * x->n, x->src + (size_t)i * x->n, x->n);
}

static void step_put_flush(void *p)
{
    mpi3 *x = p;
    if (x->rank != 0)
        return;
    for (int i = 0; i < x->blocks; i++)
        MPI_Put(x->src + (size_t)i * x->n, (int)x->n, MPI_BYTE, 1,
                target_disp(x, x->bw_off + (size_t)i * x->n), (int)x->n, MPI_BYTE, x->w.win);
    MPI_Win_flush(1, x->w.win);
}

/* ---- before and after each timed loop ---- */

/* Stamps the data the loop moves, then rank 0 opens the loop's epoch. The target stamps its
 * get area under a shared lock of its own window (shared: an origin's lock_all or shared lock
 * may already be granted, it never blocks it) before the barrier, so the gets read it. */
static void begin(mpi3 *x, enum op op, enum epoch epoch)
{
    x->op = op;
    x->epoch = epoch;
    x->stamp++;
    if (op == OP_GET && x->rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, x->w.win);
        bench_stamp(x->w.base + x->get_off, x->n, block_stamp(x, 0));
        MPI_Win_unlock(1, x->w.win);
    }
    if (x->rank == 0) {
        int nb = op == OP_MEMCPY || op == OP_PUTBW ? x->blocks : 1;
        for (int i = 0; i < nb; i++) {
            bench_stamp(x->src + (size_t)i * x->n, x->n, block_stamp(x, i));
            bench_stamp(x->dst + (size_t)i * x->n, x->n, 0);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (epoch == EPOCH_FENCE)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, x->w.win);
    if (x->rank != 0)
        return;
    if (epoch == EPOCH_LOCKALL)
        MPI_Win_lock_all(0, x->w.win);
    else if (epoch == EPOCH_LOCK)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, x->w.win);
}

/* Counts the blocks of buf whose stamps are not this loop's. */
static int wrong_blocks(const mpi3 *x, const unsigned char *buf, int nb)
{
    int wrong = 0;
    for (int i = 0; i < nb; i++)
        wrong += bench_stamp_wrong(buf + (size_t)i * x->n, x->n, block_stamp(x, i));
    return wrong;
}

/* Closes the epoch and checks what the loop moved. Rank 0 reads its counter back with a get
 * before closing (every fetching step was flushed, so it holds its final value); the target
 * reads the put areas behind a barrier, under a lock of its own window. */
static int end(void *p)
{
    mpi3 *x = p;
    int wrong = x->wrong;
    x->wrong = 0;
    if (x->rank == 0) {
        if (x->op == OP_FOP || x->op == OP_CAS || x->op == OP_GACC) {
            int c = x->op == OP_FOP ? CTR_FOP : x->op == OP_CAS ? CTR_CAS : CTR_GACC;
            int64_t now;
            MPI_Get(&now, 1, MPI_INT64_T, 1, ctr_disp(x, c), 1, MPI_INT64_T, x->w.win);
            MPI_Win_flush(1, x->w.win);
            wrong += now != x->ctr[c];
        }
        if (x->epoch == EPOCH_LOCKALL)
            MPI_Win_unlock_all(x->w.win);
        else if (x->epoch == EPOCH_LOCK)
            MPI_Win_unlock(1, x->w.win);
    }
    if (x->epoch == EPOCH_FENCE) /* every step ended with a fence: nothing is in flight */
        MPI_Win_fence(MPI_MODE_NOSUCCEED, x->w.win);
    if (x->rank == 0) {
        if (x->op == OP_GET)
            wrong += wrong_blocks(x, x->dst, 1);
        else if (x->op == OP_MEMCPY)
            wrong += wrong_blocks(x, x->dst, x->blocks);
    }
    if (x->rank == 1 && x->op == OP_PINGPONG) /* the last message's stamp */
        wrong += wrong_blocks(x, x->dst, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (x->rank == 1 && (x->op == OP_PUT || x->op == OP_PUTBW)) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, x->w.win);
        wrong += x->op == OP_PUT ? wrong_blocks(x, x->w.base, 1)
                                 : wrong_blocks(x, x->w.base + x->bw_off, x->blocks);
        MPI_Win_unlock(1, x->w.win);
    }
    return wrong;
}

#define BEGIN(name, op, epoch) \
    static void begin_##name(void *p) { begin(p, op, epoch); }
BEGIN(c2c, OP_C2C, EPOCH_NONE)
BEGIN(pingpong, OP_PINGPONG, EPOCH_NONE)
BEGIN(put_lockall, OP_PUT, EPOCH_LOCKALL)
BEGIN(get_lockall, OP_GET, EPOCH_LOCKALL)
BEGIN(put_lock, OP_PUT, EPOCH_LOCK)
BEGIN(get_lock, OP_GET, EPOCH_LOCK)
BEGIN(put_fence, OP_PUT, EPOCH_FENCE)
BEGIN(get_fence, OP_GET, EPOCH_FENCE)
BEGIN(put_pscw, OP_PUT, EPOCH_PSCW)
BEGIN(get_pscw, OP_GET, EPOCH_PSCW)
BEGIN(fop, OP_FOP, EPOCH_LOCKALL)
BEGIN(cas, OP_CAS, EPOCH_LOCKALL)
BEGIN(gacc, OP_GACC, EPOCH_LOCKALL)
BEGIN(memcpy, OP_MEMCPY, EPOCH_NONE)
BEGIN(put_flush, OP_PUTBW, EPOCH_LOCKALL)

/* The reference of each table stays first. */
static const bench_variant latency[] = {
    {"c2c", step_c2c, begin_c2c, end},
    {"pingpong", step_pingpong, begin_pingpong, end},
    {"put-lockall", step_put, begin_put_lockall, end},
    {"get-lockall", step_get, begin_get_lockall, end},
    {"put-lock", step_put, begin_put_lock, end},
    {"get-lock", step_get, begin_get_lock, end},
    {"put-fence", step_put_fence, begin_put_fence, end},
    {"get-fence", step_get_fence, begin_get_fence, end},
    {"put-pscw", step_put_pscw, begin_put_pscw, end},
    {"get-pscw", step_get_pscw, begin_get_pscw, end},
    /* at 8 B only: */
    {"fop", step_fop, begin_fop, end},
    {"gacc", step_gacc, begin_gacc, end},
    {"cas", step_cas, begin_cas, end}, /* last: see bench_native_cas_crashes */
};
#define NLATENCY ((int)(sizeof latency / sizeof latency[0]))
#define NATOMIC 3
static const bench_variant bandwidth[] = {
    {"memcpy", step_memcpy, begin_memcpy, end},
    {"put-flush", step_put_flush, begin_put_flush, end},
};

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "mpi3", "8,64,512,4K,32K,256K,1M", &o);
    if (o.size < 2)
        bench_die("needs at least 2 ranks");
    /* The atomics are 8 bytes: 8 is always measured, first. */
    int has8 = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < 8)
            bench_die("--sizes: at least 8 bytes");
        has8 |= o.sizes[i] == 8;
    }
    if (!has8) {
        if (o.nsizes == BENCH_MAX_LIST)
            bench_die("--sizes: too many");
        memmove(&o.sizes[1], &o.sizes[0], (size_t)o.nsizes * sizeof o.sizes[0]);
        o.sizes[0] = 8;
        o.nsizes++;
    }
    mpi3 x = {.rank = o.rank, .blocks = o.blocks, .one = 1};
    for (int i = 0; i < o.nsizes; i++) {
        x.max = o.sizes[i] > x.max ? o.sizes[i] : x.max;
        if (o.sizes[i] >= BW_MIN && o.sizes[i] > x.bw_max)
            x.bw_max = o.sizes[i];
    }
    x.get_off = align64(x.max);
    x.atom_off = x.get_off + align64(x.max);
    x.bw_off = x.atom_off + align64(NCTR * sizeof(int64_t));
    size_t bw_bytes = bench_mul((size_t)o.blocks, x.bw_max);
    size_t target_bytes = x.bw_off + bw_bytes;
    size_t origin_bytes = bw_bytes > x.max ? bw_bytes : x.max;
    x.src = bench_alloc(BENCH_MEM_MALLOC, o.rank == 0 ? origin_bytes : 8);
    /* rank 1 receives the ping-pong's messages into its dst */
    x.dst = bench_alloc(BENCH_MEM_MALLOC, o.rank == 0 ? origin_bytes : o.rank == 1 ? x.max : 8);
    bench_c2c_setup(&x.c2c, "mpi3");
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = o.rank == 0 ? 1 : 0;
    MPI_Group_incl(world, o.rank <= 1 ? 1 : 0, &other, &x.peer);
    MPI_Group_free(&world);

    for (int f = 0; f < o.nflavor; f++) {
        const char *flavor = bench_flavor_name[o.flavor[f]];
        bench_win_make(&x.w, o.flavor[f], o.rank == 1 ? target_bytes : 64);
        memset(x.ctr, 0, sizeof x.ctr); /* the new window's memory is zero */
        int natomic = NATOMIC;
        if (bench_native_cas_crashes(&o, o.flavor[f])) {
            natomic--;
            if (o.rank == 0)
                fprintf(stderr, "mpi3: cas/%s skipped: Open MPI 4's osc rdma crashes the target "
                                "on MPI_Compare_and_swap (BENCH_NATIVE_CAS=1 runs it)\n", flavor);
        }
        for (int i = 0; i < o.nsizes; i++) {
            x.n = o.sizes[i];
            bench_measure(&o, latency, NLATENCY - NATOMIC + (x.n == 8 ? natomic : 0), 0, &x,
                          flavor, x.n, bench_iters(&o, x.n), 1);
            if (x.n >= BW_MIN)
                bench_measure(&o, bandwidth, 2, 0, &x, flavor, x.n,
                              bench_iters(&o, bench_mul(x.n, (size_t)o.blocks)), o.blocks);
        }
        bench_win_free(&x.w);
    }
    MPI_Group_free(&x.peer);
    bench_c2c_teardown(&x.c2c);
    bench_free(BENCH_MEM_MALLOC, x.dst);
    bench_free(BENCH_MEM_MALLOC, x.src);
    return bench_finish();
}
