/* t_change_errors.c - the error rules of MPI_Win_change_comm (docs/specification.md section 11),
 * under MPI_ERRORS_RETURN: every erroneous change fails on every caller (old members, joiners
 * and leavers) with the same error class and changes nothing; after each, the window still has
 * its old membership and works. Then one correct change, after which the counters and requests
 * of the leaver fail as specified. Exactly 3 ranks: world ranks 0 and 1 hold the window, rank 2
 * joins ("join"), or all three hold it and rank 2 leaves ("leave"), or rank 1 leaves while rank
 * 2 joins in the same call ("swap"). Joiners must bring a window of the joined window's
 * addressing (dynamic, or create and allocate).
 * Not tested here, because the program would hang by construction: a process that passes a
 * communicator other than new_comm, and a joiner whose window has members that do not call. */
#include "change_common.h"
#include "errors_common.h"

typedef enum { JOIN, LEAVE, SWAP } scenario;
static const char *const scen_name[] = {"join", "leave", "swap"};

static int planned;

/* The window of a scenario: over {0,1} (rank 2 over itself) or over all three. */
static void setup(dwin *d, scenario s)
{
    MPI_Comm c = world_split(s == LEAVE || rank < 2);
    dwin_create(d, c != MPI_COMM_NULL ? c : MPI_COMM_SELF, rank);
    dwin_refresh(d);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
}

/* What each rank passes for a scenario. */
static MPI_Comm new_comm_of(scenario s)
{
    if (s == JOIN)
        return MPI_COMM_WORLD;
    return world_split(s == LEAVE ? rank != 2 : rank != 1);
}

static int leaves(scenario s) { return (s == LEAVE && rank == 2) || (s == SWAP && rank == 1); }

/* One erroneous change: every rank expects class cls, then finds its window as it was (2 tests).
 * pass_comm / peer: what this rank passes (leavers: MPI_COMM_NULL unless overridden). */
static void expect_change(dwin *d, MPI_Comm pass_comm, int peer, int cls, const char *what,
                          scenario s)
{
    int before_rank = d->wrank, before_size = d->wsize;
    char w[160];
    snprintf(w, sizeof w, "%s (%s)", what, scen_name[s]);
    expect(cls, w, MPI_Win_change_comm(pass_comm, peer, d->win));
    int same = dwin_refresh(d) && d->wrank == before_rank && d->wsize == before_size;
    ok(same, "%s: membership unchanged", w);
    planned += 2;
}

/* Do the change of scenario s with peer_rank peer, every rank expecting cls. */
static void bad_change(dwin *d, scenario s, int peer, int cls, const char *what)
{
    MPI_Comm nc = new_comm_of(s);
    expect_change(d, leaves(s) ? MPI_COMM_NULL : nc, peer, cls, what, s);
    if (nc != MPI_COMM_NULL && nc != MPI_COMM_WORLD)
        MPI_Comm_free(&nc);
}

static void epochs(void)
{
    dwin d;
    int v = 7;
    /* lock epoch of an old member */
    setup(&d, JOIN);
    if (rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, d.win);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_SYNC, "a member holds a lock epoch");
    if (rank == 0)
        MPI_Win_unlock(1, d.win);
    /* a lock_all epoch of an old member, with an MPI_Rput in it still to be waited for */
    MPI_Request rput = MPI_REQUEST_NULL;
    if (rank == 0) {
        MPI_Win_lock_all(0, d.win);
        MPI_Rput(&v, 1, MPI_INT, 1, A_KEEP, 1, MPI_INT, d.win, &rput);
    }
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_SYNC, "a member holds a lock_all epoch");
    if (rank == 0) {
        MPI_Win_unlock_all(d.win);
        is_int(MPI_Wait(&rput, MPI_STATUS_IGNORE), MPI_SUCCESS,
               "the MPI_Rput of the lock_all epoch completes after the failed change");
        planned++;
    }
    /* PSCW: an access epoch at rank 0, an exposure epoch at rank 1 */
    MPI_Group g0 = world_subgroup((int[]){0}, 1), g1 = world_subgroup((int[]){1}, 1);
    if (rank == 0)
        MPI_Win_start(g1, 0, d.win);
    if (rank == 1)
        MPI_Win_post(g0, 0, d.win);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_SYNC, "members are in PSCW epochs");
    if (rank == 0) {
        MPI_Put(&v, 1, MPI_INT, 1, A_KEEP, 1, MPI_INT, d.win);
        MPI_Win_complete(d.win);
    }
    if (rank == 1) {
        MPI_Win_wait(d.win);
        is_int(d.buf[A_KEEP], 7, "the PSCW epoch completes after the failed change");
        planned++;
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    /* a joiner holding a lock on its own window */
    if (rank == 2)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, d.win);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_SYNC, "the joiner has a lock epoch on its window");
    if (rank == 2)
        MPI_Win_unlock(0, d.win);
    dwin_free(&d);

    /* a fence epoch with a put in it; rank 2 is the leaver */
    setup(&d, LEAVE);
    MPI_Win_fence(0, d.win);
    if (rank == 0)
        MPI_Put(&v, 1, MPI_INT, 1, A_KEEP, 1, MPI_INT, d.win);
    bad_change(&d, LEAVE, 0, MPI_ERR_RMA_SYNC, "a member used its fence epoch");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, d.win);
    dwin_free(&d);

    /* an armed sync-object request of the leaver; the joiner's lock, told to the leaver */
    setup(&d, SWAP);
    MPI_Sync c = MPIX_SYNC_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 1)
        MPI_Win_Sync_alloc_objects(1, &c, d.win, MPI_INFO_NULL);
    if (rank == 1)
        arm_object(c, 1, d.win, &req);
    bad_change(&d, SWAP, 0, MPI_ERR_RMA_SYNC, "the leaver has an active sync request");
    if (rank == 1) {
        MPI_Cancel(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        MPI_Win_Sync_free_objects(1, &c, d.win);
    }
    if (rank == 2)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, d.win);
    bad_change(&d, SWAP, 0, MPI_ERR_RMA_SYNC, "the joiner has a lock epoch (the leaver is told)");
    if (rank == 2)
        MPI_Win_unlock(0, d.win);
    dwin_free(&d);
}

static void arguments(void)
{
    dwin d;
    setup(&d, SWAP);
    bad_change(&d, SWAP, 5, MPI_ERR_RANK, "peer_rank out of range");
    bad_change(&d, SWAP, 1, MPI_ERR_RANK, "peer_rank names the joiner");
    dwin_free(&d);

    setup(&d, JOIN);
    expect_change(&d, MPI_COMM_WORLD, rank == 2 ? 1 : 0, MPI_ERR_ARG,
                  "peer_rank differs between callers", JOIN);
    /* an intercommunicator between the members and the joiner */
    MPI_Comm local = world_split(rank < 2), inter;
    MPI_Intercomm_create(rank < 2 ? local : MPI_COMM_SELF, 0, MPI_COMM_WORLD, rank < 2 ? 2 : 0,
                         99, &inter);
    expect_change(&d, inter, 0, MPI_ERR_COMM, "new_comm is an intercommunicator", JOIN);
    MPI_Comm_free(&inter);
    if (local != MPI_COMM_NULL)
        MPI_Comm_free(&local);
    dwin_free(&d);

    /* rank 2 passes MPI_COMM_NULL, but the others' new_comm holds it */
    setup(&d, LEAVE);
    expect_change(&d, rank == 2 ? MPI_COMM_NULL : MPI_COMM_WORLD, 0, MPI_ERR_COMM,
                  "a leaver is in new_comm", LEAVE);
    dwin_free(&d);

    expect(MPI_ERR_WIN, "MPI_Win_change_comm on MPI_WIN_NULL",
           MPI_Win_change_comm(MPI_COMM_WORLD, 0, MPI_WIN_NULL));
    planned++;
}

/* A window over `comm` made by MPI_Win_create_dynamic, with one region attached, as a dwin
 * (buf: the region). */
static void dyn_setup(dwin *d, MPI_Comm comm)
{
    d->n = K;
    d->buf = xmalloc(K * sizeof(int));
    MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &d->win);
    MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN);
    MPI_Win_attach(d->win, d->buf, K * sizeof(int));
    dwin_refresh(d);
}

static void dyn_free(dwin *d)
{
    MPI_Win_detach(d->win, d->buf);
    MPI_Win_free(&d->win);
    free(d->buf);
}

/* Joiners must bring a window addressed like the one they join: absolute addresses (dynamic)
 * or displacements (MPI_Win_create, MPI_Win_allocate). Every caller, the leaver too, gets
 * MPI_ERR_RMA_FLAVOR and nothing changes; then the right flavor joins. */
static void flavors(void)
{
    MPI_Comm pair = world_split(rank < 2);
    dwin d;
    /* a window of MPI_Win_create joining a dynamic window */
    if (rank < 2)
        dyn_setup(&d, pair);
    else
        dwin_create(&d, MPI_COMM_SELF, rank);
    dwin_refresh(&d);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_FLAVOR, "an MPI_Win_create window joins a dynamic one");
    bad_change(&d, SWAP, 0, MPI_ERR_RMA_FLAVOR,
               "an MPI_Win_create window joins a dynamic one while a member leaves");
    if (rank < 2)
        dyn_free(&d);
    else
        dwin_free(&d);
    /* a dynamic window joining a window of MPI_Win_create */
    if (rank < 2)
        dwin_create(&d, pair, rank);
    else
        dyn_setup(&d, MPI_COMM_SELF);
    dwin_refresh(&d);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_FLAVOR, "a dynamic window joins an MPI_Win_create one");
    if (rank < 2)
        dwin_free(&d);
    else
        dyn_free(&d);
    /* a window of MPI_Win_create joining a shared window, and the other way round */
    int *base;
    if (rank < 2) {
        MPI_Win_allocate_shared(K * sizeof(int), sizeof(int), MPI_INFO_NULL, pair, &base, &d.win);
        MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
    } else {
        dwin_create(&d, MPI_COMM_SELF, rank);
    }
    dwin_refresh(&d);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_FLAVOR, "an MPI_Win_create window joins a shared one");
    if (rank < 2)
        MPI_Win_free(&d.win);
    else
        dwin_free(&d);
    if (rank < 2) {
        dwin_create(&d, pair, rank);
    } else {
        MPI_Win_allocate_shared(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF,
                                &base, &d.win);
        MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
    }
    dwin_refresh(&d);
    bad_change(&d, JOIN, 0, MPI_ERR_RMA_FLAVOR, "a shared window joins an MPI_Win_create one");
    if (rank < 2)
        dwin_free(&d);
    else
        MPI_Win_free(&d.win);
    /* the right flavor: a dynamic window joins a dynamic one while a member leaves */
    dyn_setup(&d, rank < 2 ? pair : MPI_COMM_SELF);
    MPI_Comm nc = new_comm_of(SWAP);
    planned += CHANGE_TESTS;
    change(&d, leaves(SWAP) ? MPI_COMM_NULL : nc, 0, rank == 2 ? 1 : 0, rank == 1 ? 1 : 2,
           "a dynamic window joins a dynamic one while a member leaves");
    dyn_free(&d);
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
}

/* A joiner of a shared window must map every member's part, which lies in the memory the
 * window's first member allocated; once that process freed it, nobody can: every caller gets
 * MPI_ERR_RMA_SHARED and nothing changes. Here the first member itself leaves, frees its window,
 * and tries to join again with a new one. */
static void shared_gone(void)
{
    dwin d;
    int *base;
    MPI_Win_allocate_shared(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &d.win);
    MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
    MPI_Comm rest = world_split(rank != 0);
    planned += CHANGE_TESTS;
    change(&d, rank == 0 ? MPI_COMM_NULL : rest, 0, rank == 0 ? 0 : rank - 1, rank == 0 ? 1 : 2,
           "the first member of a shared window leaves");
    if (rank == 0) {
        MPI_Win_free(&d.win);
        MPI_Win_allocate_shared(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF,
                                &base, &d.win);
        MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
        dwin_refresh(&d);
    }
    MPI_Comm all;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank == 0 ? nprocs : rank, &all); /* rank 0 last */
    expect_change(&d, all, 0, MPI_ERR_RMA_SHARED,
                  "a joiner cannot map the parts in the freed memory of the first member", JOIN);
    MPI_Win_free(&d.win);
    MPI_Comm_free(&all);
    if (rest != MPI_COMM_NULL)
        MPI_Comm_free(&rest);
}

/* A correct swap after failed attempts; then what belonged to the leaver fails. */
static void after_swap(void)
{
    dwin d;
    setup(&d, SWAP);
    MPI_Sync c = MPIX_SYNC_NULL, all[3];
    MPI_Request ops = MPI_REQUEST_NULL, obj = MPI_REQUEST_NULL;
    if (rank < 2)
        MPI_Win_Sync_alloc_objects(1, &c, d.win, MPI_INFO_NULL);
    MPI_Allgather(&c, 1, MPI_Handle_sync, all, 1, MPI_Handle_sync, MPI_COMM_WORLD);
    if (rank == 0) /* to the leaver's counter, started after it left */
        MPI_Win_sync_ops_init(1, 0, all[1], d.win, MPI_INFO_NULL, &ops);
    if (rank == 1) /* the leaver's request on its own counter */
        MPI_Win_sync_object_init(c, 1, d.win, MPI_INFO_NULL, &obj);
    bad_change(&d, SWAP, 5, MPI_ERR_RANK, "before the good change: peer_rank out of range");

    MPI_Comm nc = new_comm_of(SWAP);
    planned += CHANGE_TESTS;
    change(&d, leaves(SWAP) ? MPI_COMM_NULL : nc, 0, rank == 2 ? 1 : 0, rank == 1 ? 1 : 2,
           "the swap after failed attempts");
    MPI_Count value;
    if (rank == 0) {
        expect(MPI_ERR_ARG, "MPI_Start of a sync-ops request to a counter of the leaver",
               MPI_Start(&ops));
        expect(MPI_ERR_ARG, "MPIX_Win_sync_read of the leaver's counter",
               MPIX_Win_sync_read(all[1], d.win, &value));
        expect(MPI_SUCCESS, "MPIX_Win_sync_read of one's own counter",
               MPIX_Win_sync_read(c, d.win, &value));
        MPI_Request_free(&ops);
        planned += 3;
    }
    if (rank == 1) {
        expect(MPI_ERR_WIN, "the leaver: MPI_Start of its request made on the old window",
               MPI_Start(&obj));
        expect(MPI_ERR_ARG, "the leaver: its counter of the old window",
               MPIX_Win_sync_read(c, d.win, &value));
        expect(MPI_ERR_ARG, "the leaver: a remaining member's counter",
               MPIX_Win_sync_read(all[0], d.win, &value));
        MPI_Request_free(&obj);
        planned += 3;
    }
    if (rank == 2) {
        expect(MPI_SUCCESS, "the joiner reads member 0's counter",
               MPIX_Win_sync_read(all[0], d.win, &value));
        planned++;
    }
    if (rank != 1) {
        ring(&d, nc, 40, "after the swap");
        planned += RING_TESTS;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Win_Sync_free_objects(1, &c, d.win);
    dwin_free(&d);
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (nprocs != 3) {
        if (rank == 0)
            fprintf(stderr, "t_change_errors runs on exactly 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    epochs();
    arguments();
    flavors();
    shared_gone();
    after_swap();
    ok(errors_named() > 0, "the error strings name flexrma");
    planned++;
    tap_plan(planned);
    return test_done();
}
