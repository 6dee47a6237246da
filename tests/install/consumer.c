/* consumer.c - a program built against an installed flexrma, by pkg-config and by
 * find_package(flexrma) (run-install.sh). It calls MPI_Iput, which only flexrma defines, so it
 * links only with libflexrma before libmpi. Each rank puts its rank into its right neighbour's
 * window and prints "consumer: rank R ok" when its left neighbour's rank arrived. */
#include <flexrma.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, cell = -1;
    MPI_Win win;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Iput(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_fence(0, win);
    int ok = cell == (rank + size - 1) % size;
    printf("consumer: rank %d %s\n", rank, ok ? "ok" : "WRONG");
    MPI_Win_free(&win);
    MPI_Finalize();
    return !ok;
}
