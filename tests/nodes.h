/* nodes.h - do a communicator's processes lie on one node? Tests that make shared windows over
 * processes of several nodes ask first: such an allocation is refused by design (docs/specification.md,
 * section 10), whether the nodes are real hosts (scripts/hosts) or simulated ones
 * (FLEXRMA_TEST_NODES, which the MPI library below does not know of). Collective over comm. */
#ifndef FLEXRMA_TESTS_NODES_H
#define FLEXRMA_TESTS_NODES_H

#include <mpi.h>
#include <stdlib.h>

static inline int on_one_node(MPI_Comm comm)
{
    const char *k = getenv("FLEXRMA_TEST_NODES");
    MPI_Comm node;
    int size, here;
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
    int mine = here == size && !(k && atoi(k) > 1), all;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
    return all;
}

#endif
