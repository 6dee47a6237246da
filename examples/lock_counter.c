/* lock_counter.c - a shared counter on rank 0, incremented by every process with MPI_Accumulate
 * inside exclusive MPI_Win_lock/MPI_Win_unlock epochs (MPI-2 passive target). A plain MPI-2
 * program: run it as is, or under flexrma-run to have flexrma carry its one-sided traffic.
 *
 * Usage: mpirun -np P ./lock_counter [increments per process]
 * Rank 0 prints the final value and the program exits 0 if it is P * increments, 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int increments = argc > 1 ? atoi(argv[1]) : 1000;

    /* Rank 0 exposes one long (memory from MPI_Alloc_mem, as MPI-2 passive target requires);
     * the others expose nothing. */
    long *counter = NULL;
    MPI_Aint size = 0;
    if (rank == 0) {
        size = sizeof(long);
        MPI_Alloc_mem(size, MPI_INFO_NULL, &counter);
        *counter = 0;
    }
    MPI_Win win;
    MPI_Win_create(counter, size, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    const long one = 1;
    for (int i = 0; i < increments; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock(0, win); /* the increment is done at rank 0 when this returns */
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every process has finished incrementing */

    int ok = 1;
    if (rank == 0) {
        long expected = (long)nprocs * increments;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win); /* see the accumulates in my own memory */
        long final = *counter;
        MPI_Win_unlock(0, win);
        ok = final == expected;
        printf("lock_counter: %d ranks x %d increments, counter = %ld (expected %ld)%s\n", nprocs,
               increments, final, expected, ok ? "" : " WRONG");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);

    MPI_Win_free(&win);
    if (counter)
        MPI_Free_mem(counter);
    MPI_Finalize();
    return ok ? 0 : 1;
}
