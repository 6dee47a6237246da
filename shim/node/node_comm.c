/* node_comm.c - the one place that decides who is on this process's node (node_comm.h). */
#include "node_comm.h"

#include <stdlib.h>

/* This process's node peers among MPI_COMM_WORLD (fr_node_init), for fr_node_group. */
static MPI_Group world_node = MPI_GROUP_NULL;

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

void fr_node_init(void)
{
    MPI_Comm node;
    fr_node_comm(MPI_COMM_WORLD, &node);
    PMPI_Comm_group(node, &world_node);
    PMPI_Comm_free(&node);
}

void fr_node_finalize(void)
{
    if (world_node != MPI_GROUP_NULL)
        PMPI_Group_free(&world_node);
}

/* Are all of g's processes in MPI_COMM_WORLD? */
static int all_in_world(MPI_Group g)
{
    MPI_Group world;
    int n, undefined = 0;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_size(g, &n);
    int *in = fr_xmalloc((size_t)n * sizeof *in), *out = fr_xmalloc((size_t)n * sizeof *out);
    for (int i = 0; i < n; i++)
        in[i] = i;
    FR_CHECK_MPI(PMPI_Group_translate_ranks(g, n, in, world, out));
    for (int i = 0; i < n; i++)
        undefined |= out[i] == MPI_UNDEFINED;
    free(in);
    free(out);
    PMPI_Group_free(&world);
    return !undefined;
}

void fr_node_group(MPI_Comm comm, MPI_Group *node)
{
    MPI_Group g;
    PMPI_Comm_group(comm, &g);
    if (world_node != MPI_GROUP_NULL && all_in_world(g)) {
        FR_CHECK_MPI(PMPI_Group_intersection(g, world_node, node)); /* in g's order */
    } else {
        MPI_Comm c;
        fr_node_comm(comm, &c);
        PMPI_Comm_group(c, node);
        PMPI_Comm_free(&c);
    }
    PMPI_Group_free(&g);
}

int fr_node_all_peers(MPI_Comm comm)
{
    if (world_node == MPI_GROUP_NULL)
        return 0;
    MPI_Group g;
    PMPI_Comm_group(comm, &g);
    int all = 0;
    if (all_in_world(g)) {
        MPI_Group peers;
        int n, m;
        FR_CHECK_MPI(PMPI_Group_intersection(g, world_node, &peers));
        PMPI_Group_size(g, &n);
        PMPI_Group_size(peers, &m);
        all = n == m;
        PMPI_Group_free(&peers);
    }
    PMPI_Group_free(&g);
    return all;
}
