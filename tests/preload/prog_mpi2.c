/* prog_mpi2.c - a plain MPI-2 one-sided program for the interposition test: built against MPI
 * alone (no flexrma), run natively and with libflexrma preloaded (run-preload.sh).
 *
 * It uses fence, post/start/complete/wait, lock/unlock, a derived datatype, put, get and
 * accumulate, then prints one checksum per rank of its window and of the data it got, in rank
 * order, and whether each equals the checksum the program computes itself from a local model of
 * the same operations (so a run can be judged even where native one-sided MPI does not work).
 * Needs 2 to 16 ranks. */
#include "prog_check.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define W 64      /* ints per window */
#define ROUNDS 10 /* lock epochs per rank */

static int rank, size;

static int val(int r, int i, int e) { return (r + 1) * 1000 + e * 100 + i; }

/* What rank r's window and get buffer must hold at the end. */
static void model(int r, int *win, int *got)
{
    int left = (r + size - 1) % size;
    memset(win, 0, W * sizeof(int));
    for (int i = 0; i < 8; i++) {
        win[i] = val(left, i, 1); /* fence: put from the left neighbour */
        for (int o = 0; o < size; o++)
            win[8 + i] += (o + 1) * (i + 1); /* fence: accumulate from everyone */
    }
    for (int k = 0; k < 8; k++) /* pscw: contiguous 8 ints into vector(4, 2, 3) at 16 */
        win[16 + (k / 2) * 3 + k % 2] = val(left, k, 2);
    win[40] = size * ROUNDS; /* lock: +1 from every rank ROUNDS times */
    if (got) {
        int right_win[W];
        model((r + 1) % size, right_win, NULL);
        memcpy(got, right_win, 32 * sizeof(int)); /* lock: get of the right neighbour's [0, 32) */
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!prog_size_ok("prog_mpi2", rank, size)) {
        MPI_Finalize();
        return 1;
    }
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *win_mem, src[8], add[8], got[32], one = 1;
    MPI_Alloc_mem(W * sizeof(int), MPI_INFO_NULL, &win_mem);
    memset(win_mem, 0, W * sizeof(int));
    memset(got, 0, sizeof got);
    MPI_Win win;
    MPI_Win_create(win_mem, W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* fence: ring put and accumulate from everyone to everyone */
    for (int i = 0; i < 8; i++) {
        src[i] = val(rank, i, 1);
        add[i] = (rank + 1) * (i + 1);
    }
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(src, 8, MPI_INT, right, 0, 8, MPI_INT, win);
    for (int t = 0; t < size; t++)
        MPI_Accumulate(add, 8, MPI_INT, t, 8, 8, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* post/start/complete/wait ring with a derived target datatype */
    MPI_Group world, from, to;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &from);
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Datatype vec;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 8; i++)
        src[i] = val(rank, i, 2);
    MPI_Win_post(from, 0, win);
    MPI_Win_start(to, 0, win);
    MPI_Put(src, 8, MPI_INT, right, 16, 1, vec, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Type_free(&vec);

    /* lock: a counter on every rank, then a get of the right neighbour's first 32 ints */
    for (int k = 0; k < ROUNDS; k++)
        for (int d = 0; d < size; d++) {
            int t = (rank + d) % size;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
            MPI_Accumulate(&one, 1, MPI_INT, t, 40, 1, MPI_INT, MPI_SUM, win);
            MPI_Win_unlock(t, win);
        }
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Get(got, 32, MPI_INT, right, 0, 32, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int mine[W], exp_win[W], exp_got[32];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memcpy(mine, win_mem, sizeof mine);
    MPI_Win_unlock(rank, win);
    model(rank, exp_win, exp_got);
    prog_report("prog_mpi2", mine, exp_win, sizeof mine, got, exp_got, sizeof got);

    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Free_mem(win_mem);
    MPI_Finalize();
    return 0;
}
