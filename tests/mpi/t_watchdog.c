/* t_watchdog.c - the program the watchdog's own test runs (tests/watchdog-check.sh).
 *
 * With WATCHDOG_TEST_HANG=1 every rank hangs on purpose in watchdog_test_hang(): rank 1 in an
 * MPI_Recv whose message never comes, the others in an MPI_Barrier that rank 1 never reaches.
 * The watchdog must then print each rank's stack, with that function in it, and end the run.
 * Without the variable it is one passing test, which the watchdog must leave alone. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* Not static and not inlined, and the result used after the call (no tail call): the frame and
 * its name stay in every backtrace, also at -O2. */
__attribute__((noinline)) int watchdog_test_hang(int rank);

int watchdog_test_hang(int rank)
{
    int x = 0, rc;
    if (rank == 1)
        rc = MPI_Recv(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc + x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tap_plan(1);
    const char *hang = getenv("WATCHDOG_TEST_HANG");
    if (hang && strcmp(hang, "1") == 0 && size > 1)
        watchdog_test_hang(rank);
    ok(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "no hang asked: the ranks meet");
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
