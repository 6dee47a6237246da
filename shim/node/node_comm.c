/* node_comm.c - the one place that decides who is on this process's node (node_comm.h). */
#include "node_comm.h"

/* This process's simulated node under FLEXRMA_TEST_NODES: contiguous blocks of world ranks. */
static int simulated_node(void)
{
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    return (int)((long long)rank * fr_opt.test_nodes / size);
}

void fr_node_comm(MPI_Comm comm, MPI_Comm *node)
{
    FR_CHECK_MPI(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node));
    if (fr_opt.test_nodes == 0)
        return;
    /* Key 0 everywhere: the split keeps the real node's order, which is comm's. */
    MPI_Comm real = *node;
    FR_CHECK_MPI(PMPI_Comm_split(real, simulated_node(), 0, node));
    PMPI_Comm_free(&real);
}
