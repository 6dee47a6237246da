/* t_change_spawn.c - processes made by MPI_Comm_spawn join a window with MPI_Win_change_comm
 * over the communicator MPI_Intercomm_merge gives (their MPI_COMM_WORLD is another one), work on
 * it (data by put/get/accumulate in fence, PSCW and lock epochs, bumps of a counter made before
 * they existed), and leave it; the original members keep working. Then they join a window of
 * MPI_Win_allocate_shared with parts of their own, load and store every member's, and leave.
 *
 * The spawned processes run this program with the argument "child". They cannot print TAP
 * (their MPI_COMM_WORLD is another one): each sends its count of tests run and failed to the
 * parents' rank 0, which records one test per child. Run on 2 ranks; 2 children join. */
#include "change_common.h"
#include "nodes.h"

#define NCHILD 2

static int planned;

/* Both sides: join over merged (parents first), work, then the children leave. */
static void joined_life(dwin *d, MPI_Comm merged, int nparents, MPI_Sync counter, int child)
{
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    planned += 2 * CHANGE_TESTS + RING_TESTS + 1;
    change(d, merged, 0, mrank, msize, "spawned processes join");
    ring(d, merged, 50, "parents and spawned processes");
    /* The counter of parent 0, made before the children existed: each child bumps it once. */
    int rc = MPI_SUCCESS;
    if (child)
        KEEP_RC(rc, bump(0, counter, d->win));
    if (mrank == 0)
        KEEP_RC(rc, consume(counter, msize - nparents, d->win));
    is_int(rc, MPI_SUCCESS, "a counter made before the spawn counts the spawned processes' bumps");
    MPI_Barrier(merged);
    /* The children leave; the parents' new communicator is their MPI_COMM_WORLD. */
    change(d, child ? MPI_COMM_NULL : MPI_COMM_WORLD, 0, child ? 0 : mrank,
           child ? 1 : nparents, "spawned processes leave");
}

/* Both sides: the spawned processes join a window of MPI_Win_allocate_shared (each brings its
 * own part), everybody loads every member's part and stores into the right neighbour's, then
 * the children leave (4 tests). Nothing is loaded or stored unless every allocation and the
 * join succeeded: a refused allocation leaves base undefined. */
static void shared_life(MPI_Comm merged, int child)
{
    int mrank, msize, *base = NULL, rc;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MPI_Win win = MPI_WIN_NULL;
    planned += 4;
    int one_node = on_one_node(merged);
    rc = MPI_Win_allocate_shared(8 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                 child ? MPI_COMM_SELF : MPI_COMM_WORLD, &base, &win);
    int made = rc == MPI_SUCCESS, all_made = 0, joined = 0;
    MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_LAND, merged);
    if (made)
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (all_made) {
        fill_pat(base, 8, mrank, 70);
        rc = MPI_Win_change_comm(merged, 0, win); /* every member gets the same verdict */
        joined = rc == MPI_SUCCESS;
    }
    if (!joined) {
        if (!one_node) {
            skip(4, "the shared window would span nodes (real or FLEXRMA_TEST_NODES)");
        } else {
            if (all_made)
                is_int(rc, MPI_SUCCESS, "spawned processes join a shared window");
            else
                ok(0, "MPI_Win_allocate_shared over the parents and over each spawned process");
            skip(3, "no shared window of parents and spawned processes");
        }
        if (made)
            MPI_Win_free(&win);
        return;
    }
    ok(1, "spawned processes join a shared window");
    int bad = 0, *part[16] = {NULL};
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    KEEP_RC(rc, MPI_Win_sync(win));
    for (int r = 0; r < msize && r < 16; r++) {
        MPI_Aint size;
        int unit;
        KEEP_RC(rc, MPI_Win_shared_query(win, r, &size, &unit, &part[r]));
        bad += rc != MPI_SUCCESS || size != 8 * (MPI_Aint)sizeof(int) || !is_pat(part[r], 8, r, 70);
    }
    ok(bad == 0, "shared: every member's part, parents' and spawned processes', is loaded");
    MPI_Barrier(merged);
    int right = (mrank + 1) % msize, left = (mrank + msize - 1) % msize;
    for (int i = 0; i < 4 && part[right]; i++)
        part[right][i] = pat(mrank, i, 71);
    KEEP_RC(rc, MPI_Win_sync(win));
    MPI_Barrier(merged);
    KEEP_RC(rc, MPI_Win_sync(win));
    ok(rc == MPI_SUCCESS && is_pat(base, 4, left, 71),
       "shared: the left neighbour's stores are in my part");
    KEEP_RC(rc, MPI_Win_unlock_all(win));
    is_int(MPI_Win_change_comm(child ? MPI_COMM_NULL : MPI_COMM_WORLD, 0, win), MPI_SUCCESS,
           "spawned processes leave the shared window");
    MPI_Win_free(&win);
}

static int child_main(MPI_Comm parent)
{
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    MPI_Sync counter;
    MPI_Bcast(&counter, 1, MPI_Handle_sync, 0, merged);
    int mrank;
    MPI_Comm_rank(merged, &mrank);
    dwin d;
    dwin_create(&d, MPI_COMM_SELF, mrank);
    int nparents;
    MPI_Comm_remote_size(parent, &nparents);
    joined_life(&d, merged, nparents, counter, 1);
    dwin_free(&d);
    shared_life(merged, 1);
    int counts[2];
    tap_counts(&counts[0], &counts[1]);
    if (counts[0] != planned) {
        fprintf(stderr, "# spawned process %d ran %d tests, planned %d\n", mrank, counts[0],
                planned);
        counts[1]++;
    }
    MPI_Send(counts, 2, MPI_INT, 0, 7, merged);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child_main(parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    dwin d;
    dwin_create(&d, MPI_COMM_WORLD, rank);
    dwin_refresh(&d);
    MPI_Sync counter = MPIX_SYNC_NULL;
    if (rank == 0)
        MPI_Win_Sync_alloc_objects(1, &counter, d.win, MPI_INFO_NULL);
    ring(&d, MPI_COMM_WORLD, 10, "parents before the spawn");
    planned += RING_TESTS;

    /* Spawning is part of what is tested: if this MPI cannot, every test fails with its error. */
    MPI_Comm inter, merged;
    int errcodes[NCHILD];
    char *child_argv[] = {"child", NULL};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], child_argv, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            errcodes);
    planned++;
    if (!is_int(rc, MPI_SUCCESS, "MPI_Comm_spawn of %d processes", NCHILD)) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, s, &len);
        diag("MPI_Comm_spawn: %s", s);
        tap_plan(planned);
        return test_done();
    }
    MPI_Intercomm_merge(inter, 0, &merged);
    MPI_Bcast(&counter, 1, MPI_Handle_sync, 0, merged);
    joined_life(&d, merged, nprocs, counter, 0);
    ring(&d, MPI_COMM_WORLD, 60, "parents after the spawned processes left");
    planned += RING_TESTS;
    shared_life(merged, 0);
    if (rank == 0) {
        for (int c = 0; c < NCHILD; c++) {
            int counts[2];
            MPI_Status st;
            MPI_Recv(counts, 2, MPI_INT, MPI_ANY_SOURCE, 7, merged, &st);
            ok(counts[0] > 0 && counts[1] == 0, "spawned process (merged rank %d): %d tests, %d "
                                                "failed (see its stderr)", st.MPI_SOURCE,
               counts[0], counts[1]);
            planned++;
        }
        MPI_Win_Sync_free_objects(1, &counter, d.win);
    }
    dwin_free(&d);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    tap_plan(planned);
    return test_done();
}
