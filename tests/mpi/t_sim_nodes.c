/* t_sim_nodes.c - the test switch FLEXRMA_TEST_NODES=K is in effect (node/node_comm.h): world
 * rank r is on simulated node r * K / world size, and flexrma treats only the ranks of my
 * simulated node as node peers.
 *
 *   1. a window over MPI_Alloc_mem memory on MPI_COMM_WORLD: each member of my simulated node is
 *      reached through a packet ring, its window and its shared state block mapped here; every
 *      other member by messages, nothing of it mapped. A put to every member under an exclusive
 *      lock arrives, and is copied directly (statistics: direct) exactly to my node peers;
 *   2. MPI_Win_allocate_shared over MPI_COMM_WORLD fails on every member with MPI_ERR_RMA_SHARED
 *      when the world spans several simulated nodes, and works over the communicator of my
 *      simulated node, where each member's stores are seen by the others' loads;
 *   3. a dynamic window with an MPI_Alloc_mem region per member: puts reach it directly only on
 *      my node peers, and arrive everywhere.
 * Without the switch every rank is on one node. Under FLEXRMA_TRANSPORT=am nobody is reached
 * through shared memory, and under FLEXRMA_DIRECT=0 nothing is mapped or copied directly.
 * Linked with the internal library: it reads fr_win and fr_opt. */
#include "common.h"
#include "transport/transport.h"
#include "win/win.h"

#define N 16 /* ints each member puts into each other one */

static int nodes = 1; /* K, as this test reads it */

static int node_of(int r) { return (int)((long long)r * nodes / nprocs); }

static int is_node_peer(int r) { return r != rank && node_of(r) == node_of(rank); }

/* Node peers other than me. */
static int node_peers(void)
{
    int n = 0;
    for (int r = 0; r < nprocs; r++)
        n += is_node_peer(r);
    return n;
}

/* My N ints at every other member's slot `rank`, under an exclusive lock each. */
static void put_everywhere(MPI_Win win, const MPI_Aint *at)
{
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = pat(rank, i, 0);
    for (int t = 0; t < nprocs; t++)
        if (t != rank) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
            MPI_Put(src, N, MPI_INT, t, at[t] + (MPI_Aint)rank * N * (MPI_Aint)sizeof(int), N,
                    MPI_INT, win);
            MPI_Win_unlock(t, win);
        }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every other member's slot in mine holds its pattern. */
static int slots_hold(const int *mine)
{
    for (int o = 0; o < nprocs; o++)
        for (int i = 0; o != rank && i < N; i++)
            if (mine[(size_t)o * N + i] != pat(o, i, 0)) {
                diag("slot of rank %d, element %d: %d", o, i, mine[(size_t)o * N + i]);
                return 0;
            }
    return 1;
}

static void test_world_window(int shm, int direct)
{
    int *mem;
    MPI_Alloc_mem((MPI_Aint)nprocs * N * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &mem);
    memset(mem, 0, (size_t)nprocs * N * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)nprocs * N * (MPI_Aint)sizeof(int), 1, MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    fr_win *w = fr_win_lookup(win);
    int ring = 1, mapped = 1, state = 1;
    for (int r = 0; r < nprocs; r++) {
        if (r == rank)
            continue;
        int peer = is_node_peer(r);
        if ((w->peers[r].tp == &fr_tp_shm) != (peer && shm) ||
            (w->peers[r].tp == &fr_tp_am) != !(peer && shm)) {
            diag("rank %d (node %d; mine %d) is reached by %s", r, node_of(r), node_of(rank),
                 w->peers[r].tp->name);
            ring = 0;
        }
        if ((w->peers[r].mapped != NULL) != (peer && direct)) {
            diag("rank %d (node %d; mine %d): window %smapped", r, node_of(r), node_of(rank),
                 w->peers[r].mapped ? "" : "not ");
            mapped = 0;
        }
        if ((w->peers[r].state != NULL) != (peer && shm)) {
            diag("rank %d (node %d; mine %d): state block %smapped", r, node_of(r),
                 node_of(rank), w->peers[r].state ? "" : "not ");
            state = 0;
        }
    }
    ok(ring, "window: packet rings to my simulated node's members only");
    ok(mapped, "window: only my simulated node's windows are mapped");
    ok(state, "window: only my simulated node's state blocks are mapped");
    MPI_Aint *zero = calloc((size_t)nprocs, sizeof *zero);
    uint64_t before = w->st.direct;
    put_everywhere(win, zero);
    is_int((long long)(w->st.direct - before), direct ? node_peers() : 0,
           "window: puts copied directly, one per node peer");
    ok(slots_hold(mem), "window: every member's put arrived");
    free(zero);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
}

static void test_allocate_shared(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *base, cls;
    MPI_Win win;
    int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                     &base, &win);
    MPI_Error_class(rc, &cls);
    is_int(cls, node_of(nprocs - 1) > 0 ? MPI_ERR_RMA_SHARED : MPI_SUCCESS,
           "MPI_Win_allocate_shared over MPI_COMM_WORLD: fails when it spans simulated nodes");
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, node_of(rank), rank, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win);
    is_int(rc, MPI_SUCCESS, "MPI_Win_allocate_shared over my simulated node's communicator");
    int seen = 0;
    if (rc == MPI_SUCCESS) {
        MPI_Win_lock_all(0, win);
        *base = pat(rank, 0, 1);
        MPI_Win_sync(win);
        MPI_Barrier(node);
        MPI_Win_sync(win);
        int *other[64];
        seen = nsize <= 64;
        for (int r = 0; r < nsize && seen; r++) {
            MPI_Aint size;
            int unit, world;
            MPI_Win_shared_query(win, r, &size, &unit, &other[r]);
            MPI_Group g, wg;
            MPI_Comm_group(node, &g);
            MPI_Comm_group(MPI_COMM_WORLD, &wg);
            MPI_Group_translate_ranks(g, 1, &r, wg, &world);
            MPI_Group_free(&g);
            MPI_Group_free(&wg);
            if (*other[r] != pat(world, 0, 1)) {
                diag("part of node member %d (world %d): %d", r, world, *other[r]);
                seen = 0;
            }
        }
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    ok(seen, "shared window: each of %d members' stores are seen by the others' loads", nsize);
    MPI_Comm_free(&node);
}

static void test_dynamic(int direct)
{
    int *region;
    MPI_Alloc_mem((MPI_Aint)nprocs * N * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &region);
    memset(region, 0, (size_t)nprocs * N * sizeof(int));
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, region, (MPI_Aint)nprocs * N * (MPI_Aint)sizeof(int));
    MPI_Aint mine, *at = xmalloc((size_t)nprocs * sizeof *at);
    MPI_Get_address(region, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);
    fr_win *w = fr_win_lookup(win);
    uint64_t before = w->st.direct;
    put_everywhere(win, at);
    is_int((long long)(w->st.direct - before), direct ? node_peers() : 0,
           "dynamic window: puts copied directly, one per node peer");
    ok(slots_hold(region), "dynamic window: every member's put arrived");
    MPI_Win_detach(win, region);
    MPI_Win_free(&win);
    MPI_Free_mem(region);
    free(at);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    const char *k = getenv("FLEXRMA_TEST_NODES");
    if (k && atoi(k) >= 1)
        nodes = atoi(k);
    int shm = fr_opt.transport != FR_TRANSPORT_AM;
    int direct = shm && fr_opt.direct;
    tap_plan(10);
    if (rank == 0)
        diag("%d ranks on %d simulated node(s); transport %s, direct copies %s", nprocs, nodes,
             shm ? "shm" : "am", direct ? "on" : "off");
    test_world_window(shm, direct);
    test_allocate_shared();
    test_dynamic(direct);
    return test_done();
}
