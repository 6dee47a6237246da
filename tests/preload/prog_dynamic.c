/* prog_dynamic.c - a plain MPI-3 program on a dynamic window for the interposition test: built
 * against MPI alone (no flexrma), run natively and with libflexrma preloaded
 * (run-preload.sh).
 *
 * Each rank attaches heap memory to an MPI_Win_create_dynamic window and tells the others its
 * address (MPI_Get_address, MPI_Allgather); then puts into its right neighbour's region in a
 * fence epoch, adds to rank 0's counter with MPI_Fetch_and_op and gets its left neighbour's
 * region in lock_all epochs; then detaches. It prints one checksum per rank of its region and of
 * what it got, and whether each equals the checksum the program computes from a model of the
 * same operations. Needs 2 to 16 ranks. */
#include "prog_check.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 32      /* ints per region */
#define ROUNDS 10 /* fetch-and-adds per rank on rank 0's counter */

static int rank, size;

static int val(int r, int i) { return (r + 1) * 1000 + i; }

/* What rank r's region and get buffer must hold at the end. */
static void model(int r, int *region, int *got)
{
    int left = (r + size - 1) % size;
    memset(region, 0, W * sizeof(int));
    for (int i = 0; i < 8; i++)
        region[i] = val(left, i); /* the left neighbour's put */
    if (r == 0)
        region[W - 1] = size * ROUNDS;
    if (got)
        model(left, got, NULL); /* the left neighbour's region, read after the barrier */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!prog_size_ok("prog_dynamic", rank, size)) {
        MPI_Finalize();
        return 1;
    }
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *region = calloc(W, sizeof(int)), got[W], src[8], one = 1, junk;
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, region, W * sizeof(int));
    MPI_Aint mine, at[16];
    MPI_Get_address(region, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);

    for (int i = 0; i < 8; i++)
        src[i] = val(rank, i);
    MPI_Win_fence(0, win);
    MPI_Put(src, 8, MPI_INT, right, at[right], 8, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Fetch_and_op(&one, &junk, MPI_INT, 0, at[0] + (W - 1) * (MPI_Aint)sizeof(int),
                         MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Get(got, W, MPI_INT, left, at[left], W, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    int exp_region[W], exp_got[W];
    model(rank, exp_region, exp_got);
    prog_report("prog_dynamic", region, exp_region, W * sizeof(int), got, exp_got, sizeof got);

    MPI_Win_detach(win, region);
    MPI_Win_free(&win);
    free(region);
    MPI_Finalize();
    return 0;
}
