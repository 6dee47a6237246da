/* bandwidth.c - MPI_Put bandwidth against memcpy bandwidth in the same process.
 *
 * Rank 0 moves K blocks of n bytes (--blocks K) to rank 1 per step: K puts under one exclusive
 * lock epoch, or K puts under one fence epoch; the references are K point-to-point messages
 * (the ratio column's denominator) and K memcpy calls of the same blocks inside rank 0, which is
 * what a put through shared memory can at best approach (Gropp and Lusk, seed 003: memcpy is the
 * limit). The rows give the time per block, so bandwidth = bytes / median_us; all blocks of a
 * step go to distinct places (K * n bytes), so that caches flatter neither side. Other ranks,
 * if any, only take part in the fences and barriers. The window is rank 1's MPI_Alloc_mem memory
 * under MPI_Win_create, or with --flavor allocate MPI_Win_allocate's (rows "VARIANT/allocate"),
 * or with --flavor malloc posix_memalign'ed pages under MPI_Win_create (rows "VARIANT/malloc"). */
#include "common.h"

#include <stdlib.h>
#include <string.h>

typedef struct bandwidth {
    int rank;
    int blocks;                 /* K */
    size_t n;                   /* block size */
    unsigned char *src;         /* rank 0: K blocks to send */
    unsigned char *copy;        /* rank 0: memcpy destination, K blocks */
    unsigned char *win_mem;     /* rank 1: the window's memory, K blocks */
    MPI_Request *req;
    MPI_Win win;
    unsigned long long stamp;
} bandwidth;

static unsigned long long stamp_of(const bandwidth *b, int i) { return b->stamp << 32 | (unsigned)i; }

static void begin(void *p)
{
    bandwidth *b = p;
    b->stamp++;
    if (b->rank == 0)
        for (int i = 0; i < b->blocks; i++)
            bench_stamp(b->src + (size_t)i * b->n, b->n, stamp_of(b, i));
}

static int check_blocks(const bandwidth *b, const unsigned char *buf)
{
    int wrong = 0;
    for (int i = 0; i < b->blocks; i++)
        wrong += bench_stamp_wrong(buf + (size_t)i * b->n, b->n, stamp_of(b, i));
    return wrong;
}

/* After puts and sends: rank 1 reads its window once every process is done, under a lock of
 * its own window (separate memory model). */
static int end_window(void *p)
{
    bandwidth *b = p;
    int wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (b->rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, b->win);
        wrong = check_blocks(b, b->win_mem);
        MPI_Win_unlock(1, b->win);
    }
    return wrong;
}

static int end_copy(void *p)
{
    bandwidth *b = p;
    return b->rank == 0 ? check_blocks(b, b->copy) : 0;
}

static void step_send(void *p)
{
    bandwidth *b = p;
    if (b->rank > 1)
        return;
    for (int i = 0; i < b->blocks; i++) {
        size_t off = (size_t)i * b->n;
        if (b->rank == 0)
            MPI_Isend(b->src + off, (int)b->n, MPI_BYTE, 1, i, MPI_COMM_WORLD, &b->req[i]);
        else
            MPI_Irecv(b->win_mem + off, (int)b->n, MPI_BYTE, 0, i, MPI_COMM_WORLD, &b->req[i]);
    }
    MPI_Waitall(b->blocks, b->req, MPI_STATUSES_IGNORE);
}

static void step_memcpy(void *p)
{
    bandwidth *b = p;
    if (b->rank == 0)
        for (int i = 0; i < b->blocks; i++)
            memcpy(b->copy + (size_t)i * b->n, b->src + (size_t)i * b->n, b->n);
}

static void put_blocks(bandwidth *b)
{
    for (int i = 0; i < b->blocks; i++)
        MPI_Put(b->src + (size_t)i * b->n, (int)b->n, MPI_BYTE, 1, (MPI_Aint)((size_t)i * b->n),
                (int)b->n, MPI_BYTE, b->win);
}

static void step_put_lock(void *p)
{
    bandwidth *b = p;
    if (b->rank != 0)
        return; /* the target makes no call: that is the point of passive target */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, b->win);
    put_blocks(b);
    MPI_Win_unlock(1, b->win);
}

static void step_put_fence(void *p)
{
    bandwidth *b = p;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, b->win);
    if (b->rank == 0)
        put_blocks(b);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, b->win);
}

/* The point-to-point reference must stay first. */
static const bench_variant variants[] = {
    {"send", step_send, begin, end_window},
    {"memcpy", step_memcpy, begin, end_copy},
    {"put-lock", step_put_lock, begin, end_window},
    {"put-fence", step_put_fence, begin, end_window},
};

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "bandwidth", "1K,4K,16K,64K,256K,1M,4M", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE | 1u << BENCH_FLAVOR_ALLOCATE |
                                  1u << BENCH_FLAVOR_MALLOC);
    if (o.size < 2)
        bench_die("needs at least 2 ranks");
    size_t max = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < 8)
            bench_die("--sizes: blocks of at least 8 bytes");
        max = o.sizes[i] > max ? o.sizes[i] : max;
    }
    bandwidth b = {.rank = o.rank, .blocks = o.blocks};
    size_t bytes = bench_mul((size_t)o.blocks, max);
    /* Only rank 0 needs the source and copy blocks, only rank 1 a window of K blocks. */
    b.src = bench_alloc(BENCH_MEM_MALLOC, o.rank == 0 ? bytes : 8);
    b.copy = bench_alloc(BENCH_MEM_MALLOC, o.rank == 0 ? bytes : 8);
    b.req = malloc(bench_mul((size_t)o.blocks, sizeof *b.req));
    if (!b.req)
        bench_die("out of memory");
    for (int f = 0; f < o.nflavor; f++) {
        bench_win w;
        /* Other ranks bring no memory: with a part of 8 bytes at rank 0, MPICH 4.0's
         * MPI_Win_allocate puts rank 0's data for rank 1 into rank 0's own part (any part not a
         * multiple of 16 bytes does that); a zero-byte part is what they need anyway. */
        bench_win_make(&w, o.flavor[f], o.rank == 1 ? bytes : 0);
        b.win_mem = w.base;
        b.win = w.win;
        /* rows "VARIANT" on MPI_Win_create windows of MPI_Alloc_mem memory, "VARIANT/FLAVOR"
         * on the others */
        const char *suffix =
            o.flavor[f] == BENCH_FLAVOR_CREATE ? NULL : bench_flavor_name[o.flavor[f]];
        for (int i = 0; i < o.nsizes; i++) {
            b.n = o.sizes[i];
            bench_measure(&o, variants, (int)(sizeof variants / sizeof variants[0]), 0, &b,
                          suffix, b.n, bench_iters(&o, bench_mul(b.n, (size_t)o.blocks)),
                          o.blocks);
        }
        bench_win_free(&w);
    }
    free(b.req);
    bench_free(BENCH_MEM_MALLOC, b.copy);
    bench_free(BENCH_MEM_MALLOC, b.src);
    return bench_finish();
}
