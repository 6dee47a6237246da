/* test_idle.c - whether a node is oversubscribed (core/idle.h), as the idle rule asks at MPI_Init:
 * the launcher's count of the node's ranks (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE first, else
 * MPICH Hydra's MPI_LOCALNRANKS) against the cores. More ranks than any machine has cores is
 * oversubscribed, one rank never is, and no count, or one that is no number, is not. Run with
 * mpirun -np 1. */
#include "core/idle.h"
#include "tap.h"

#include <mpi.h>

#include <stdlib.h>

#define MANY "1000000"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_plan(7);
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("MPI_LOCALNRANKS");
    is_int(fr_node_oversubscribed(), 0, "no count from the launcher: not oversubscribed");

    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", MANY, 1);
    is_int(fr_node_oversubscribed(), 1, "Open MPI: %s ranks on the node: oversubscribed", MANY);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
    is_int(fr_node_oversubscribed(), 0, "Open MPI: 1 rank on the node: not oversubscribed");
    setenv("MPI_LOCALNRANKS", MANY, 1);
    is_int(fr_node_oversubscribed(), 0, "Open MPI's count is read first");

    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    is_int(fr_node_oversubscribed(), 1, "MPICH: %s ranks on the node: oversubscribed", MANY);
    setenv("MPI_LOCALNRANKS", "1", 1);
    is_int(fr_node_oversubscribed(), 0, "MPICH: 1 rank on the node: not oversubscribed");
    setenv("MPI_LOCALNRANKS", "many", 1);
    is_int(fr_node_oversubscribed(), 0, "a count that is no number: not oversubscribed");

    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
