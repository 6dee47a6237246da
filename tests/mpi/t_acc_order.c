/* t_acc_order.c - accumulates from one origin to the same elements are applied in program order
 * (MPI-3.1 section 11.7.2, accumulate_ordering's default), whatever path each takes: inside the
 * packet or in a data message of its own (beyond FLEXRMA_EAGER_MAX), applied by the target or
 * by the origin straight into a window it maps, with a hardware atomic (up to 8 elements) or
 * under a stripe lock.
 *
 * MPI_REPLACE shows the order: each element ends with the value of the last accumulate that
 * covered it. Every rank accumulates into its right neighbour a sequence of large, small and
 * medium accumulates that overlap, in every kind of epoch, into a window of MPI_Alloc_mem memory
 * (node peers map it: origin-applied) and of malloc'd memory (target-applied). */
#include "common.h"

#define L (1 << 14) /* ints of a large accumulate: 64 KiB, beyond the eager limit */
#define ROUNDS 6

typedef struct {
    int from, n; /* elements [from, from + n) */
} span;

/* The sequence of one round: a large one, small ones inside it, a medium one across, a large
 * one from the middle, a single element, and a small one right after a large one again. */
static const span seq[] = {{0, L}, {0, 4}, {2, 100}, {50, L - 50}, {60, 1}, {0, L}, {7, 8}};
#define NSEQ ((int)(sizeof seq / sizeof *seq))

static int value(int r, int round, int k, int i) { return pat(r, i, round * 16 + k); }

/* What the target holds after the sequence of origin r in round `round`. */
static void expected(int *exp, int r, int round)
{
    for (int k = 0; k < NSEQ; k++)
        for (int i = seq[k].from; i < seq[k].from + seq[k].n; i++)
            exp[i] = value(r, round, k, i);
}

enum { FENCE, LOCK, LOCK_ALL, PSCW, NKINDS };
static const char *const kind_name[] = {"fence", "lock", "lock_all", "pscw"};

static void run(int kind, int use_alloc_mem)
{
    int *mem;
    if (use_alloc_mem)
        MPI_Alloc_mem(L * sizeof(int), MPI_INFO_NULL, &mem);
    else
        mem = xmalloc(L * sizeof(int));
    memset(mem, 0, L * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, L * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group to = world_subgroup((int[]){right()}, 1), from = world_subgroup((int[]){left()}, 1);
    int **src = xmalloc(NSEQ * sizeof *src);
    for (int k = 0; k < NSEQ; k++)
        src[k] = xmalloc((size_t)seq[k].n * sizeof(int));
    int *exp = xmalloc(L * sizeof(int)), bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < NSEQ; k++)
            for (int i = 0; i < seq[k].n; i++)
                src[k][i] = value(rank, round, k, seq[k].from + i);
        if (kind == FENCE)
            MPI_Win_fence(0, win);
        else if (kind == LOCK)
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, win);
        else if (kind == LOCK_ALL)
            MPI_Win_lock_all(0, win);
        else {
            MPI_Win_post(from, 0, win);
            MPI_Win_start(to, 0, win);
        }
        for (int k = 0; k < NSEQ; k++)
            MPI_Accumulate(src[k], seq[k].n, MPI_INT, right(), seq[k].from, seq[k].n, MPI_INT,
                           MPI_REPLACE, win);
        if (kind == FENCE)
            MPI_Win_fence(0, win);
        else if (kind == LOCK)
            MPI_Win_unlock(right(), win);
        else if (kind == LOCK_ALL)
            MPI_Win_unlock_all(win);
        else {
            MPI_Win_complete(win);
            MPI_Win_wait(win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        expected(exp, left(), round);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        if (!same_ints(mem, exp, L) && !bad++)
            diag("%s, %s: round %d: elements not as the last accumulate left them",
                 kind_name[kind], use_alloc_mem ? "MPI_Alloc_mem" : "malloc", round);
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    is_int(bad, 0, "%s epochs, %s window: rounds with accumulates applied out of order",
           kind_name[kind], use_alloc_mem ? "MPI_Alloc_mem" : "malloc");
    MPI_Win_free(&win);
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    for (int k = 0; k < NSEQ; k++)
        free(src[k]);
    free(src);
    free(exp);
    if (use_alloc_mem)
        MPI_Free_mem(mem);
    else
        free(mem);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2 * NKINDS);
    for (int kind = 0; kind < NKINDS; kind++) {
        run(kind, 1);
        run(kind, 0);
    }
    return test_done();
}
