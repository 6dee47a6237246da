/* t_errors_fatal.c - RMA outside an epoch under the default MPI_ERRORS_ARE_FATAL handler: the
 * MPI_Put must abort the whole job, after flexrma has said which call failed and why. Rank 1
 * waits in a barrier that only the abort ends. ctest matches the output (see CMakeLists.txt). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, buf[4] = {0}, v = 42;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 0) {
        MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win); /* no epoch is open */
        printf("t_errors_fatal: rank 0 survived an erroneous MPI_Put\n");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_errors_fatal: the job survived an erroneous MPI_Put\n");
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
