/* t_fence.c - active target synchronization with MPI_Win_fence: put, get and accumulate in ring
 * and all-to-all patterns, every assertion alone and combined, many epochs in a row, operations
 * on oneself, zero counts, MPI_PROC_NULL targets, 1 MiB transfers and single bytes.
 *
 * Each rank keeps a model of its own window (what the other ranks' operations must have left in
 * it) and compares the whole window with it after every epoch, so stray writes show too. */
#include "common.h"

#define K 16                      /* ints per region */
#define NREG (3 + 4)              /* regions: 0 ring, 1 accumulate, 2 self, 3.. one per origin */
#define LARGE (1 << 20)           /* bytes moved by the large transfers */

static iwin w;                    /* NREG*K ints per rank */
static int model[NREG * K];
static int buf[NREG * K], buf2[K]; /* origin buffers */

static int *region(int *base, int r) { return base + r * K; }

/* The window equals the model (1 test). The closing fence has also opened the next epoch: the
 * barrier keeps its puts out until every rank has looked. */
static void check_window(const char *what)
{
    ok(same_ints(w.buf, model, w.n), "%s: whole window as expected", what);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Ring put into region 0 of the right neighbour; the model expects the left one's data. */
static void ring_put(int epoch)
{
    for (int i = 0; i < K; i++)
        buf[i] = pat(rank, i, epoch);
    MPI_Put(buf, K, MPI_INT, right(), 0, K, MPI_INT, w.win);
    for (int i = 0; i < K; i++)
        model[i] = pat(left(), i, epoch);
}

/* Get region 0 of the right neighbour into buf2 (holds what we put there in `epoch`). */
static void ring_get(void)
{
    memset(buf2, 0, sizeof buf2);
    MPI_Get(buf2, K, MPI_INT, right(), 0, K, MPI_INT, w.win);
}

static void check_get(int epoch, const char *what)
{
    int exp[K];
    for (int i = 0; i < K; i++)
        exp[i] = pat(rank, i, epoch);
    ok(same_ints(buf2, exp, K), "%s: get returned the right neighbour's data", what);
}

/* Every assertion alone on its own fence, then combined; each fence only asserts what is true. */
static void assertions(void)
{
    MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win); /* first fence: nothing precedes */
    ring_put(1);
    MPI_Win_fence(MPI_MODE_NOSTORE, w.win);   /* no local stores into the window this epoch */
    check_window("put after fence(NOPRECEDE), closed by fence(NOSTORE)");
    ring_put(2);
    MPI_Win_fence(MPI_MODE_NOPUT, w.win);     /* the next epoch only gets */
    check_window("put closed by fence(NOPUT)");
    ring_get();
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win); /* no epoch follows */
    check_get(2, "get closed by fence(NOSUCCEED)");

    MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, w.win);
    ring_get();
    MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, w.win);
    check_get(2, "get between fence(NOPRECEDE|NOSTORE|NOPUT) and fence(NOSUCCEED|NOSTORE|NOPUT)");
    /* A fence asserting all four is a synchronization with nothing before or after it. */
    int rc = MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE |
                               MPI_MODE_NOPUT, w.win);
    ok(rc == MPI_SUCCESS && same_ints(w.buf, model, w.n), "fence with all four assertions");

    /* Local stores while no epoch is open, then a new sequence with fence(NOPRECEDE|NOPUT)
     * (nobody puts: it is an accumulate-free, get-only epoch). */
    for (int i = 0; i < K; i++)
        model[K + i] = w.buf[K + i] = pat(rank, i, 3);
    MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, w.win);
    memset(buf2, 0, sizeof buf2);
    MPI_Get(buf2, K, MPI_INT, right(), K, K, MPI_INT, w.win);
    MPI_Win_fence(MPI_MODE_NOSTORE, w.win);
    int exp[K];
    for (int i = 0; i < K; i++)
        exp[i] = pat(right(), i, 3);
    ok(same_ints(buf2, exp, K), "get of the target's local stores made outside any epoch");
}

/* All-to-all: rank o puts into region 3+o of every rank, itself included, and every rank adds
 * (o+1)*(i+1) into region 1 of every rank: concurrent accumulates to the same location. */
static void all_to_all(void)
{
    for (int i = 0; i < K; i++) {
        buf[i] = pat(rank, i, 4);
        buf[K + i] = (rank + 1) * (i + 1);
    }
    for (int t = 0; t < nprocs; t++) {
        MPI_Put(buf, K, MPI_INT, t, (3 + rank) * K, K, MPI_INT, w.win);
        MPI_Accumulate(buf + K, K, MPI_INT, t, K, K, MPI_INT, MPI_SUM, w.win);
    }
    for (int o = 0; o < nprocs; o++)
        for (int i = 0; i < K; i++) {
            model[(3 + o) * K + i] = pat(o, i, 4);
            model[K + i] += (o + 1) * (i + 1);
        }
    MPI_Win_fence(0, w.win);
    check_window("all-to-all put and accumulate, self included");
}

/* Put, get and accumulate on oneself in one epoch, on distinct regions. */
static void self_ops(void)
{
    for (int i = 0; i < K; i++) {
        buf[i] = pat(rank, i, 5);
        buf[K + i] = i - 7;
    }
    memset(buf2, 0, sizeof buf2);
    MPI_Put(buf, K, MPI_INT, rank, 2 * K, K, MPI_INT, w.win);
    MPI_Accumulate(buf + K, K, MPI_INT, rank, K, K, MPI_INT, MPI_SUM, w.win);
    MPI_Get(buf2, K, MPI_INT, rank, 3 * K, K, MPI_INT, w.win); /* region 3: origin 0's put */
    for (int i = 0; i < K; i++) {
        model[2 * K + i] = pat(rank, i, 5);
        model[K + i] += i - 7;
    }
    MPI_Win_fence(0, w.win);
    check_window("put and accumulate to oneself");
    ok(same_ints(buf2, region(model, 3), K), "get from oneself");
}

/* Zero counts and MPI_PROC_NULL targets change nothing, at the target or in the origin buffer. */
static void no_ops(void)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < K; i++)
        buf[i] = buf2[i] = -1 - i;
    rc |= MPI_Put(buf, 0, MPI_INT, right(), 0, 0, MPI_INT, w.win);
    rc |= MPI_Get(buf2, 0, MPI_INT, right(), 0, 0, MPI_INT, w.win);
    rc |= MPI_Accumulate(buf, 0, MPI_INT, right(), K, 0, MPI_INT, MPI_SUM, w.win);
    MPI_Win_fence(0, w.win);
    ok(rc == MPI_SUCCESS && buf2[0] == -1, "zero-count put/get/accumulate succeed, get buffer untouched");
    check_window("zero-count put/get/accumulate leave the target unchanged");

    rc = MPI_SUCCESS;
    rc |= MPI_Put(buf, K, MPI_INT, MPI_PROC_NULL, 0, K, MPI_INT, w.win);
    rc |= MPI_Get(buf2, K, MPI_INT, MPI_PROC_NULL, 0, K, MPI_INT, w.win);
    rc |= MPI_Accumulate(buf, K, MPI_INT, MPI_PROC_NULL, K, K, MPI_INT, MPI_SUM, w.win);
    MPI_Win_fence(0, w.win);
    int exp[K];
    for (int i = 0; i < K; i++)
        exp[i] = -1 - i;
    ok(rc == MPI_SUCCESS && same_ints(buf2, exp, K),
       "MPI_PROC_NULL put/get/accumulate succeed, get buffer untouched");
    check_window("MPI_PROC_NULL targets leave every window unchanged");
}

/* Many epochs, no barriers: epoch e puts to (or accumulates into) the rank e%(n-1)+1 places to
 * the right, alternating between regions 0 and 2, so the region an epoch wrote can be checked
 * while the next epoch writes the other one. */
static void many_epochs(int n_epochs)
{
    int bad = 0;
    for (int e = 0; e < n_epochs; e++) {
        int d = e % (nprocs - 1) + 1, to = (rank + d) % nprocs, from = (rank + nprocs - d) % nprocs;
        int reg = e % 2 ? 2 : 0;
        for (int i = 0; i < K; i++)
            buf[K * (e % 2) + i] = pat(rank, i, 100 + e); /* untouched until the next fence */
        if (e % 3 == 2) {
            MPI_Accumulate(buf + K * (e % 2), K, MPI_INT, to, reg * K, K, MPI_INT, MPI_SUM, w.win);
            for (int i = 0; i < K; i++)
                model[reg * K + i] += pat(from, i, 100 + e);
        } else {
            MPI_Put(buf + K * (e % 2), K, MPI_INT, to, reg * K, K, MPI_INT, w.win);
            for (int i = 0; i < K; i++)
                model[reg * K + i] = pat(from, i, 100 + e);
        }
        MPI_Win_fence(0, w.win);
        if (memcmp(region(w.buf, reg), region(model, reg), K * sizeof(int)) && !bad++)
            diag("first wrong epoch: %d", e);
    }
    is_int(bad, 0, "%d consecutive fence epochs: epochs with a wrong window", n_epochs);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_Win_fence(MPI_MODE_NOPRECEDE) completes nothing, so it can return on the others while rank
 * 0 has not called it yet; their puts must still wait for rank 0's fence (MPI-2.2 11.5.1: they
 * access a target only after it called that fence). Rank 0 lingers, making progress, and reads
 * the region they write, which must not change until it calls the fence. */
static void no_early_arrival(void)
{
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win); /* no epoch is open now */
    if (rank == 0) {
        int flag;
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.3)
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        ok(same_ints(region(w.buf, 2), region(model, 2), K),
           "puts issued after fence(NOPRECEDE) wait for the target's own fence");
    }
    MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win);
    if (rank != 0) {
        buf[0] = pat(rank, 0, 900);
        MPI_Put(buf, 1, MPI_INT, 0, 2 * K + rank, 1, MPI_INT, w.win);
    } else {
        for (int o = 1; o < nprocs; o++)
            model[2 * K + o] = pat(o, 0, 900);
    }
    MPI_Win_fence(0, w.win);
    check_window("puts after fence(NOPRECEDE) while the target lingered");
}

/* 1 MiB each way on a window of bytes (disp_unit 1), then single bytes at odd offsets. */
static void sizes(void)
{
    const int n = LARGE / (int)sizeof(int);
    MPI_Aint wsize = LARGE + 64;
    unsigned char *mem;
    MPI_Alloc_mem(wsize, MPI_INFO_NULL, &mem);
    memset(mem, 0, (size_t)wsize);
    MPI_Win win;
    MPI_Win_create(mem, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *src = xmalloc(LARGE), *dst = xmalloc(LARGE), *exp = xmalloc(LARGE);

    for (int i = 0; i < n; i++)
        src[i] = pat(rank, i, 7);
    MPI_Win_fence(0, win);
    MPI_Put(src, n, MPI_INT, right(), 0, n, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++)
        exp[i] = pat(left(), i, 7);
    ok(same_ints((int *)mem, exp, (size_t)n), "1 MiB put");

    memset(dst, 0, LARGE);
    MPI_Get(dst, n, MPI_INT, left(), 0, n, MPI_INT, win); /* left holds what its left sent */
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++)
        exp[i] = pat((rank + nprocs - 2) % nprocs, i, 7);
    ok(same_ints(dst, exp, (size_t)n), "1 MiB get");

    /* Every rank adds 1 MiB of ints into every rank's window at once. */
    for (int i = 0; i < n; i++)
        src[i] = (rank + 1) * (i % 1000);
    for (int t = 0; t < nprocs; t++)
        MPI_Accumulate(src, n, MPI_INT, t, 0, n, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < n; i++)
        exp[i] = pat(left(), i, 7) + nprocs * (nprocs + 1) / 2 * (i % 1000);
    ok(same_ints((int *)mem, exp, (size_t)n), "1 MiB accumulate from every rank at once");

    /* Single bytes at odd offsets past the large area, one per origin. */
    unsigned char b = (unsigned char)(0x40 + rank);
    MPI_Put(&b, 1, MPI_BYTE, right(), LARGE + 1 + 2 * rank, 1, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    unsigned char tail[64] = {0};
    tail[1 + 2 * left()] = (unsigned char)(0x40 + left());
    ok(same_bytes(mem + LARGE, tail, 64), "single-byte put at an odd displacement");

    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(src);
    free(dst);
    free(exp);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(6 + 1 + 2 + 4 + 1 + (rank == 0 ? 2 : 1) + 4);

    iwin_create(&w, NREG * K);
    memset(model, 0, sizeof model);
    if (nprocs > NREG - 3)
        MPI_Abort(MPI_COMM_WORLD, 2); /* one region per origin */

    assertions();
    all_to_all();
    self_ops();
    no_ops();
    many_epochs(300);
    no_early_arrival();
    sizes();

    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    iwin_free(&w);
    return test_done();
}
