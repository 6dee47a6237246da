/* t_change_comm.c - MPI_Win_change_comm (docs/specification.md section 11): processes join and
 * leave a live window, and after every change the members exchange data with put, get and
 * accumulate in fence, PSCW and lock epochs, and with counters.
 *
 *  part 1  world ranks 0 and 1 hold a window; every other rank joins it with a window over
 *          MPI_COMM_SELF. Name, error handler and attributes stay; counters made before the
 *          change work from the joiners, new counters of the joiners work from the old members.
 *  part 2  rank 1 leaves: the others keep working (its counter is now an error for them, the
 *          others' counters still count); the leaver's handle is a window over itself alone,
 *          which it uses and frees.
 *  part 3  a sequence: a window over rank 0 alone, the others join one by one, then rank 0
 *          leaves, then rank 0 joins again with its leaver's handle while rank 1 leaves in the
 *          same call; data written before each change is checked after it.
 * Needs at least 3 ranks. */
#include "change_common.h"

static int planned;

/* ---- part 1: join ---- */

static MPI_Sync c_old[2]; /* counters of world ranks 0 and 1, made before the join */

static void part1(dwin *d)
{
    const int old = rank < 2;
    MPI_Comm oc = world_split(old);
    dwin_create(d, old ? oc : MPI_COMM_SELF, rank);
    MPI_Win_set_name(d->win, old ? "work" : "joiner");
    planned += RING_TESTS * (old ? 2 : 1) + CHANGE_TESTS + 5 + (old ? 1 : 0) + 2 +
               (rank >= 2 ? 1 : 0) + (rank == 0 ? 1 : 0);
    if (old) {
        dwin_refresh(d);
        ring(d, oc, 10, "2-member window before the join");
        MPI_Win_Sync_alloc_objects(1, &c_old[rank], d->win, MPI_INFO_NULL);
        d->buf[A_KEEP] = 4242 + rank;
    }
    MPI_Bcast(&c_old[0], 1, MPI_Handle_sync, 0, MPI_COMM_WORLD);
    MPI_Bcast(&c_old[1], 1, MPI_Handle_sync, 1, MPI_COMM_WORLD);

    change(d, MPI_COMM_WORLD, 0, rank, nprocs, "join");

    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0, flag = 0;
    MPI_Win_get_name(d->win, name, &len);
    ok(strcmp(name, old ? "work" : "joiner") == 0, "the window keeps its name (got \"%s\")", name);
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(d->win, &eh);
    ok(eh == MPI_ERRORS_RETURN, "the window keeps its error handler");
    MPI_Aint *size = NULL;
    MPI_Win_get_attr(d->win, MPI_WIN_SIZE, &size, &flag);
    ok(flag && *size == (MPI_Aint)(d->n * (int)sizeof(int)), "MPI_WIN_SIZE is this process's");
    void *base = NULL;
    MPI_Win_get_attr(d->win, MPI_WIN_BASE, &base, &flag);
    ok(flag && base == d->buf, "MPI_WIN_BASE is this process's memory");
    int *unit = NULL;
    MPI_Win_get_attr(d->win, MPI_WIN_DISP_UNIT, &unit, &flag);
    ok(flag && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT is this process's");
    if (old)
        is_int(d->buf[A_KEEP], 4242 + rank, "memory written before the join is still there");

    ring(d, MPI_COMM_WORLD, 20, "after the join");

    /* Counters from before the change: everyone else bumps the owner's, the owner consumes. */
    int rc = MPI_SUCCESS;
    for (int o = 0; o < 2; o++)
        if (rank != o)
            KEEP_RC(rc, bump(o, c_old[o], d->win));
    if (rank < 2)
        KEEP_RC(rc, consume(c_old[rank], nprocs - 1, d->win));
    is_int(rc, MPI_SUCCESS, "counters made before the join count bumps of the joiners");
    /* A joiner's new counter, bumped by member 0 with a put behind it. */
    MPI_Sync mine = MPIX_SYNC_NULL, *all = xmalloc((size_t)nprocs * sizeof *all);
    rc = MPI_SUCCESS;
    if (rank >= 2)
        KEEP_RC(rc, MPI_Win_Sync_alloc_objects(1, &mine, d->win, MPI_INFO_NULL));
    KEEP_RC(rc, share_counters(&mine, 1, all));
    if (rank == 0) {
        int v[K];
        fill_pat(v, K, 0, 77);
        for (int t = 2; t < nprocs; t++) {
            MPI_Request req;
            KEEP_RC(rc, MPI_Win_sync_ops_init(t, MPI_MODE_WIN_PUT, all[t], d->win, MPI_INFO_NULL,
                                              &req));
            KEEP_RC(rc, MPI_Start(&req));
            KEEP_RC(rc, MPI_Put(v, K, MPI_INT, t, A_KEEP, K, MPI_INT, d->win));
            KEEP_RC(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
            KEEP_RC(rc, MPI_Request_free(&req));
        }
    }
    if (rank >= 2) {
        KEEP_RC(rc, consume(mine, 1, d->win));
        ok(is_pat(d->buf + A_KEEP, K, 0, 77), "a joiner's new counter orders member 0's put");
        KEEP_RC(rc, MPI_Win_Sync_free_objects(1, &mine, d->win));
    }
    is_int(rc, MPI_SUCCESS, "counters of joiners work from the old members");
    if (rank == 0)
        is_int(sync_value(c_old[1], d->win), 0, "rank 1's counter read remotely after the join");
    MPI_Barrier(MPI_COMM_WORLD); /* serves that read: MPI_Comm_split (next) does not progress */
    free(all);
    if (oc != MPI_COMM_NULL)
        MPI_Comm_free(&oc);
}

/* ---- part 2: rank 1 leaves ---- */

static void part2(dwin *d)
{
    const int leaver = rank == 1;
    MPI_Comm nc = world_split(!leaver);
    const int nrank = rank == 0 ? 0 : rank - 1;
    planned += CHANGE_TESTS + (leaver ? 3 : RING_TESTS + 2) + (rank == 0 ? 1 : 0);
    if (rank == 0)
        d->buf[A_KEEP] = 5151;
    change(d, leaver ? MPI_COMM_NULL : nc, 0, leaver ? 0 : nrank, leaver ? 1 : nprocs - 1,
           leaver ? "leave (the leaver)" : "leave (the others)");
    if (leaver) {
        int v[K], got[K], rc = MPI_SUCCESS;
        fill_pat(v, K, 9, 9);
        KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, d->win));
        KEEP_RC(rc, MPI_Put(v, K, MPI_INT, 0, A_LOCK, K, MPI_INT, d->win));
        KEEP_RC(rc, MPI_Get(got, K, MPI_INT, 0, A_LOCK, K, MPI_INT, d->win));
        KEEP_RC(rc, MPI_Win_unlock(0, d->win));
        is_int(rc, MPI_SUCCESS, "the leaver's window over itself takes RMA");
        ok(is_pat(got, K, 9, 9), "... and holds the data");
        MPI_Count value;
        ok(MPIX_Win_sync_read(c_old[0], d->win, &value) != MPI_SUCCESS,
           "the old window's counters are not counters of the leaver's window");
        dwin_free(d);
        return;
    }
    ring(d, nc, 30, "after rank 1 left");
    if (rank == 0)
        is_int(d->buf[A_KEEP], 5151, "memory of remaining members stays");
    MPI_Count value = -1;
    int rc = MPIX_Win_sync_read(c_old[1], d->win, &value);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    is_int(cls, MPI_ERR_ARG, "the leaver's counter is an error (MPI_ERR_ARG)");
    rc = MPI_SUCCESS;
    if (rank != 0)
        KEEP_RC(rc, bump(0, c_old[0], d->win));
    else
        KEEP_RC(rc, consume(c_old[0], nprocs - 2, d->win));
    is_int(rc, MPI_SUCCESS, "rank 0's counter still counts after rank 1 left");
    MPI_Barrier(nc);
    if (rank == 0)
        MPI_Win_Sync_free_objects(1, &c_old[0], d->win);
    dwin_free(d);
    MPI_Comm_free(&nc);
}

/* ---- part 3: several changes in sequence ---- */

static void part3(void)
{
    dwin d;
    dwin_create(&d, MPI_COMM_SELF, rank);
    char what[96];
    /* Join one by one: members 0..k. */
    for (int k = 1; k < nprocs; k++) {
        MPI_Comm nc = world_split(rank <= k);
        if (rank <= k) {
            planned += CHANGE_TESTS + RING_TESTS + (rank == 0 ? 1 : 0);
            snprintf(what, sizeof what, "rank %d joins", k);
            change(&d, nc, 0, rank, k + 1, what);
            ring(&d, nc, 100 + 10 * k, what);
            /* Each member leaves its mark in member 0's KEEP area; it must survive the next
             * changes. */
            int mark = 1000 * k + rank;
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, d.win);
            MPI_Put(&mark, 1, MPI_INT, 0, A_KEEP + rank, 1, MPI_INT, d.win);
            MPI_Win_unlock(0, d.win);
            MPI_Barrier(nc);
            if (rank == 0) {
                int bad = 0;
                for (int r = 0; r <= k; r++)
                    bad += d.buf[A_KEEP + r] != 1000 * k + r;
                is_int(bad, 0, "%s: member 0 holds every member's mark", what);
            }
            MPI_Comm_free(&nc);
        }
    }
    /* Rank 0 leaves; world rank 1 (new rank 0) leads. */
    MPI_Comm nc = world_split(rank != 0);
    planned += CHANGE_TESTS + (rank == 0 ? 0 : RING_TESTS);
    change(&d, rank == 0 ? MPI_COMM_NULL : nc, 0, rank == 0 ? 0 : rank - 1,
           rank == 0 ? 1 : nprocs - 1, "rank 0 leaves");
    if (rank != 0)
        ring(&d, nc, 200, "after rank 0 left");
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
    /* In one call: rank 0 joins again with the handle it kept, rank 1 leaves; world rank 2
     * (rank 1 in new_comm) leads. */
    nc = world_split(rank != 1);
    const int nr = rank == 0 ? 0 : rank - 1;
    planned += CHANGE_TESTS + (rank == 1 ? 0 : RING_TESTS) + (rank == 0 ? 1 : 0);
    change(&d, rank == 1 ? MPI_COMM_NULL : nc, 1, rank == 1 ? 0 : nr, rank == 1 ? 1 : nprocs - 1,
           "rank 0 rejoins while rank 1 leaves");
    if (rank != 1) {
        ring(&d, nc, 300, "after rank 0 rejoined and rank 1 left");
    }
    if (rank == 0) {
        /* Its memory went with it through leaving and joining again: the marks every member
         * left before it left are still there (the rings use other areas). */
        int bad = 0;
        for (int r = 0; r < nprocs; r++)
            bad += d.buf[A_KEEP + r] != 1000 * (nprocs - 1) + r;
        is_int(bad, 0, "the rejoined member's memory kept the marks from before it left");
    }
    dwin_free(&d);
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (nprocs < 3) {
        if (rank == 0)
            fprintf(stderr, "t_change_comm needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dwin d;
    part1(&d);
    part2(&d);
    part3();
    tap_plan(planned);
    return test_done();
}
