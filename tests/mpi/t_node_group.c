/* t_node_group.c - fr_node_group, which tells a window's node peers without communication
 * (node_comm.c), names exactly the processes fr_node_comm's collective split names, in the
 * same order, for communicators of every shape: MPI_COMM_WORLD, a duplicate, halves, the odd
 * ranks, the world in reverse order, and MPI_COMM_SELF; also with simulated nodes
 * (FLEXRMA_TEST_NODES, variant nodes2). Linked with the internal library. */
#include "common.h"
#include "node/node_comm.h"

static void same_as_split(MPI_Comm comm, const char *what)
{
    if (comm == MPI_COMM_NULL) {
        ok(1, "%s: not a member", what);
        return;
    }
    MPI_Comm c;
    MPI_Group by_split, quick;
    fr_node_comm(comm, &c);
    MPI_Comm_group(c, &by_split);
    fr_node_group(comm, &quick);
    int cmp = MPI_UNEQUAL, n = 0;
    MPI_Group_compare(by_split, quick, &cmp);
    MPI_Group_size(quick, &n);
    ok(cmp == MPI_IDENT, "%s: the same %d node peers, in the same order", what, n);
    MPI_Group_free(&by_split);
    MPI_Group_free(&quick);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(6);
    MPI_Comm dup, half, odd, reversed;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank < nprocs / 2, rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? 1 : MPI_UNDEFINED, rank, &odd);
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &reversed);
    same_as_split(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    same_as_split(dup, "a duplicate of it");
    same_as_split(half, "a half of it");
    same_as_split(odd, "its odd ranks");
    same_as_split(reversed, "it in reverse order");
    same_as_split(MPI_COMM_SELF, "MPI_COMM_SELF");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    if (odd != MPI_COMM_NULL)
        MPI_Comm_free(&odd);
    MPI_Comm_free(&reversed);
    return test_done();
}
