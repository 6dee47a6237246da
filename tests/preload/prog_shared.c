/* prog_shared.c - a plain MPI-3 shared-memory program for the interposition test: built against
 * MPI alone (no flexrma), run natively and with libflexrma preloaded (run-preload.sh).
 *
 * Its window comes from MPI_Win_allocate_shared over the node (every rank: one machine). Each
 * rank stores into its own part and loads its neighbours' through MPI_Win_shared_query, in a
 * lock_all epoch with MPI_Win_sync and barriers; then puts into its right neighbour's part in a
 * fence epoch and adds to rank 0's counter with MPI_Fetch_and_op. It prints one checksum per
 * rank of its part and of what it loaded, and whether each equals the checksum the program
 * computes from a model of the same operations. Needs 2 to 16 ranks. */
#include "prog_check.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define W 32      /* ints per rank */
#define ROUNDS 10 /* fetch-and-adds per rank on rank 0's counter */

static int rank, size;

static int val(int r, int i, int e) { return (r + 1) * 1000 + e * 100 + i; }

/* What rank r's part and loads must hold at the end. */
static void model(int r, int *part, int *seen)
{
    int left = (r + size - 1) % size;
    for (int i = 0; i < W; i++)
        part[i] = i < 8 ? val(r, i, 1) : 0; /* its own stores */
    for (int i = 0; i < 8; i++)
        part[8 + i] = val(left, i, 2); /* the left neighbour's put */
    if (r == 0)
        part[W - 1] = size * ROUNDS;
    if (seen)
        for (int i = 0; i < 8; i++)
            seen[i] = val((r + 1) % size, i, 1); /* the right neighbour's stores, loaded */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!prog_size_ok("prog_shared", rank, size)) {
        MPI_Finalize();
        return 1;
    }
    const int right = (rank + 1) % size;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);

    int *mine, *theirs, seen[8], src[8], one = 1, junk;
    MPI_Win win;
    MPI_Win_allocate_shared(W * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Aint qsize;
    int qunit;
    MPI_Win_shared_query(win, right, &qsize, &qunit, &theirs);

    /* load/store: my stores, then my right neighbour's, loaded */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    memset(mine, 0, W * sizeof(int));
    for (int i = 0; i < 8; i++)
        mine[i] = val(rank, i, 1);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    memcpy(seen, theirs, sizeof seen);
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);

    /* fence: a put into the right neighbour's part; passive: a counter on rank 0 */
    for (int i = 0; i < 8; i++)
        src[i] = val(rank, i, 2);
    MPI_Win_fence(0, win);
    MPI_Put(src, 8, MPI_INT, right, 8, 8, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Fetch_and_op(&one, &junk, MPI_INT, 0, W - 1, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);

    int part[W], exp_part[W], exp_seen[8];
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    memcpy(part, mine, sizeof part);
    MPI_Win_unlock(rank, win);
    model(rank, exp_part, exp_seen);
    prog_report("prog_shared", part, exp_part, sizeof part, seen, exp_seen, sizeof seen);

    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
