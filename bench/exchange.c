/* exchange.c - the exchange test of Träff, Ritzdorf and Hempel (seed 000), tables 2 and 3.
 *
 * With n neighbours (bench_shift in common.h), process i supplies a block to (i + j) mod p and
 * requests one from (i - j) mod p, j = 1..n: with MPI_Put or MPI_Get under fence, dedicated
 * (post/start/complete/wait) or lock synchronization, or with MPI_Sendrecv, the reference of the
 * ratio column. The window is in MPI_Alloc_mem memory (seed 000's "global" windows) or in malloc
 * memory ("local"); origin buffers are malloc memory in both, so the Sendrecv rows of the two
 * halves measure the same thing, as in the seed.
 *
 * As in the seed, Put-Lock times the origin only (lock, put, unlock per target, exclusively):
 * nothing tells the target that the data arrived. The ghost program times that notification.
 *
 * Layout: slot j - 1 of every buffer belongs to distance j. My window's slot j - 1 receives the
 * put of org[j - 1] and is read by the get of tgt[j - 1]; my receive buffer's slot j - 1 gets
 * org[j - 1]'s block (Get and Sendrecv). Each timed loop stamps the blocks and checks afterwards
 * that the right ones arrived; a variant that moved wrong data gets no row. */
#include "common.h"

#include <stdint.h>
#include <stdio.h>

typedef struct exchange {
    int rank;
    bench_shift nb;
    size_t n;                                   /* block size */
    unsigned char *win_mem, *sendbuf, *recvbuf; /* nb.n blocks each */
    MPI_Win win;
    uint64_t stamp; /* advanced by every timed loop, identical on all ranks */
} exchange;

enum { WINDOW_BLOCK, SEND_BLOCK };

static uint64_t stamp_of(const exchange *x, int r, int j, int kind)
{
    return x->stamp << 32 | (uint64_t)r << 16 | (uint64_t)j << 1 | (uint64_t)kind;
}

static unsigned char *block(unsigned char *buf, const exchange *x, int j)
{
    return buf + (size_t)j * x->n;
}

/* Stamp my send blocks and my window's blocks (what the gets read). The window is written
 * inside a lock of my own window: the separate memory model needs it for the stores to reach
 * the copy that remote gets see. */
static void begin(void *p)
{
    exchange *x = p;
    x->stamp++;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->rank, 0, x->win);
    for (int j = 0; j < x->nb.n; j++) {
        bench_stamp(block(x->sendbuf, x, j), x->n, stamp_of(x, x->rank, j, SEND_BLOCK));
        bench_stamp(block(x->win_mem, x, j), x->n, stamp_of(x, x->rank, j, WINDOW_BLOCK));
    }
    MPI_Win_unlock(x->rank, x->win);
}

/* After a loop: wait for every process (lock puts may still be arriving), then read the
 * destination buffer: the window (under a lock of my own window) or the receive buffer. */
static int check(exchange *x, int in_window, int kind)
{
    int wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->rank, 0, x->win);
    for (int j = 0; j < x->nb.n; j++)
        wrong += bench_stamp_wrong(block(in_window ? x->win_mem : x->recvbuf, x, j), x->n,
                             stamp_of(x, x->nb.org[j], j, kind));
    MPI_Win_unlock(x->rank, x->win);
    return wrong;
}
static int end_put(void *p) { return check(p, 1, SEND_BLOCK); }
static int end_get(void *p) { return check(p, 0, WINDOW_BLOCK); }
static int end_sendrecv(void *p) { return check(p, 0, SEND_BLOCK); }

static void puts_to_targets(exchange *x)
{
    for (int j = 0; j < x->nb.n; j++)
        MPI_Put(block(x->sendbuf, x, j), (int)x->n, MPI_BYTE, x->nb.tgt[j],
                (MPI_Aint)((size_t)j * x->n), (int)x->n, MPI_BYTE, x->win);
}

static void gets_from_origins(exchange *x)
{
    for (int j = 0; j < x->nb.n; j++)
        MPI_Get(block(x->recvbuf, x, j), (int)x->n, MPI_BYTE, x->nb.org[j],
                (MPI_Aint)((size_t)j * x->n), (int)x->n, MPI_BYTE, x->win);
}

static void step_sendrecv(void *p)
{
    exchange *x = p;
    for (int j = 0; j < x->nb.n; j++)
        MPI_Sendrecv(block(x->sendbuf, x, j), (int)x->n, MPI_BYTE, x->nb.tgt[j], j,
                     block(x->recvbuf, x, j), (int)x->n, MPI_BYTE, x->nb.org[j], j,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void step_put_fence(void *p)
{
    exchange *x = p;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, x->win);
    puts_to_targets(x);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, x->win);
}

static void step_get_fence(void *p)
{
    exchange *x = p;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, x->win);
    gets_from_origins(x);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, x->win);
}

/* Puts: my window is exposed to the processes that put into it (org), I access tgt. */
static void step_put_ded(void *p)
{
    exchange *x = p;
    MPI_Win_post(x->nb.org_group, 0, x->win);
    MPI_Win_start(x->nb.tgt_group, 0, x->win);
    puts_to_targets(x);
    MPI_Win_complete(x->win);
    MPI_Win_wait(x->win);
}

/* Gets: the other way round; tgt read my window, I read org's. */
static void step_get_ded(void *p)
{
    exchange *x = p;
    MPI_Win_post(x->nb.tgt_group, 0, x->win);
    MPI_Win_start(x->nb.org_group, 0, x->win);
    gets_from_origins(x);
    MPI_Win_complete(x->win);
    MPI_Win_wait(x->win);
}

static void step_put_lock(void *p)
{
    exchange *x = p;
    for (int j = 0; j < x->nb.n; j++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->nb.tgt[j], 0, x->win);
        MPI_Put(block(x->sendbuf, x, j), (int)x->n, MPI_BYTE, x->nb.tgt[j],
                (MPI_Aint)((size_t)j * x->n), (int)x->n, MPI_BYTE, x->win);
        MPI_Win_unlock(x->nb.tgt[j], x->win);
    }
}

static void step_get_lock(void *p)
{
    exchange *x = p;
    for (int j = 0; j < x->nb.n; j++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->nb.org[j], 0, x->win);
        MPI_Get(block(x->recvbuf, x, j), (int)x->n, MPI_BYTE, x->nb.org[j],
                (MPI_Aint)((size_t)j * x->n), (int)x->n, MPI_BYTE, x->win);
        MPI_Win_unlock(x->nb.org[j], x->win);
    }
}

/* The point-to-point reference must stay first. */
static const bench_variant variants[] = {
    {"sendrecv", step_sendrecv, begin, end_sendrecv},
    {"put-fence", step_put_fence, begin, end_put},
    {"get-fence", step_get_fence, begin, end_get},
    {"put-ded", step_put_ded, begin, end_put},
    {"get-ded", step_get_ded, begin, end_get},
    {"put-lock", step_put_lock, begin, end_put},
    {"get-lock", step_get_lock, begin, end_get},
};

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "exchange", "1K,4K,16K,64K,256K,1M,4M", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE); /* MPI_Win_create windows only */
    size_t max = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < sizeof(uint64_t))
            bench_die("--sizes: blocks of at least 8 bytes");
        max = o.sizes[i] > max ? o.sizes[i] : max;
    }

    for (int m = 0; m < o.nmem; m++)
        for (int k = 0; k < o.nnbrs; k++) {
            char suffix[64];
            int n = bench_nbrs(&o, k, o.mem[m], suffix, sizeof suffix);
            if (n == 0)
                continue;
            exchange x = {.rank = o.rank};
            bench_shift_init(&x.nb, n);
            size_t bytes = bench_mul((size_t)n, max);
            x.win_mem = bench_alloc(o.mem[m], bytes);
            x.sendbuf = bench_alloc(BENCH_MEM_MALLOC, bytes);
            x.recvbuf = bench_alloc(BENCH_MEM_MALLOC, bytes);
            MPI_Win_create(x.win_mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &x.win);
            for (int i = 0; i < o.nsizes; i++) {
                x.n = o.sizes[i];
                bench_measure(&o, variants, (int)(sizeof variants / sizeof variants[0]), 0, &x,
                              suffix, x.n, bench_iters(&o, x.n), 1);
            }
            MPI_Win_free(&x.win);
            bench_free(BENCH_MEM_MALLOC, x.recvbuf);
            bench_free(BENCH_MEM_MALLOC, x.sendbuf);
            bench_free(o.mem[m], x.win_mem);
            bench_shift_free(&x.nb);
        }
    return bench_finish();
}
