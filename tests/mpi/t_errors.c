/* t_errors.c - erroneous one-sided calls under MPI_ERRORS_RETURN: each returns a code of the
 * right MPI error class (MPI_Error_class) and changes nothing: target memory stays as it was and
 * the open epoch stays usable (a valid operation follows in it). Also: error strings name
 * flexrma, MPI_Win_attach/detach on a create window and MPI_Win_shared_query on a dynamic one
 * give MPI_ERR_RMA_FLAVOR, MPI_Free_mem and MPI_Win_create errors are raised on the communicator.
 *
 * Every rank makes the same mistakes towards its right neighbour (collective calls such as fence
 * and MPI_Win_free fail on every rank alike) and keeps a model of its own window: what its left
 * neighbour's valid operations put there. The window is compared with the model after each part.
 * This test is about flexrma: native MPI libraries detect far fewer of these errors. */
#include "errors_common.h"

#define N 16      /* ints per window */
#define BAD 0x7777 /* what an erroneous call would write */

static iwin w;
static int model[N];

/* Our window equals the model (1 test). */
static void check_window(const char *what)
{
    int mine[N];
    read_own(&w, mine);
    ok(same_ints(mine, model, N), "%s: window holds exactly the valid updates", what);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A valid put of one int into `slot` of the right neighbour, in whatever epoch is open; the
 * model expects the left neighbour's. */
static int put_vals[N];
static void valid_put(int slot)
{
    put_vals[slot] = pat(rank, slot, 0);
    MPI_Put(&put_vals[slot], 1, MPI_INT, right(), slot, 1, MPI_INT, w.win);
    model[slot] = pat(left(), slot, 0);
}

static int bad[4] = {BAD, BAD, BAD, BAD};

/* Part 1 (4 tests): no epoch has ever been opened. */
static void outside_epochs(void)
{
    int got[4] = {-1, -1, -1, -1};
    expect(MPI_ERR_RMA_SYNC, "MPI_Put outside any epoch",
           MPI_Put(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Get outside any epoch",
           MPI_Get(got, 4, MPI_INT, right(), 0, 4, MPI_INT, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Accumulate outside any epoch",
           MPI_Accumulate(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, MPI_SUM, w.win));
    MPI_Win_fence(0, w.win);
    valid_put(0);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    ok(got[0] == -1 && got[3] == -1, "the failed MPI_Get wrote nothing");
    check_window("after RMA outside any epoch");
}

static void my_op(void *in, void *inout, int *len, MPI_Datatype *t) {}

/* Part 2 (27 tests): bad arguments inside an open fence epoch, and empty accumulates that are
 * not. */
static void bad_arguments(void)
{
    int got[4] = {-1, -1, -1, -1};
    MPI_Datatype uncommitted, wide;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    MPI_Type_vector(3, 1, 8, MPI_INT, &wide); /* spans 17 ints: more than the window */
    MPI_Type_commit(&wide);
    MPI_Op user_op;
    MPI_Op_create(my_op, 1, &user_op);
    double dbl = 1.0;

    MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win);
    expect(MPI_ERR_RANK, "MPI_Put to rank nprocs",
           MPI_Put(bad, 1, MPI_INT, nprocs, 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_RANK, "MPI_Put to rank -7", MPI_Put(bad, 1, MPI_INT, -7, 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_RANK, "MPI_Get from rank nprocs+7",
           MPI_Get(got, 1, MPI_INT, nprocs + 7, 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_COUNT, "MPI_Put with origin count -1",
           MPI_Put(bad, -1, MPI_INT, right(), 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_COUNT, "MPI_Put with target count -1",
           MPI_Put(bad, 1, MPI_INT, right(), 0, -1, MPI_INT, w.win));
    expect(MPI_ERR_COUNT, "MPI_Accumulate with origin count -1",
           MPI_Accumulate(bad, -1, MPI_INT, right(), 0, -1, MPI_INT, MPI_SUM, w.win));
    expect(MPI_ERR_TYPE, "MPI_Put with origin type MPI_DATATYPE_NULL",
           MPI_Put(bad, 1, MPI_DATATYPE_NULL, right(), 0, 1, MPI_INT, w.win));
    expect(MPI_ERR_TYPE, "MPI_Get with target type MPI_DATATYPE_NULL",
           MPI_Get(got, 1, MPI_INT, right(), 0, 1, MPI_DATATYPE_NULL, w.win));
    expect(MPI_ERR_TYPE, "MPI_Put with an uncommitted origin type",
           MPI_Put(bad, 1, uncommitted, right(), 0, 2, MPI_INT, w.win));
    expect(MPI_ERR_TYPE, "MPI_Put with an uncommitted target type",
           MPI_Put(bad, 2, MPI_INT, right(), 0, 1, uncommitted, w.win));
    expect(MPI_ERR_TYPE, "MPI_Put of 2 ints into 3",
           MPI_Put(bad, 2, MPI_INT, right(), 0, 3, MPI_INT, w.win));
    expect(MPI_ERR_DISP, "MPI_Put at target displacement -1",
           MPI_Put(bad, 1, MPI_INT, right(), -1, 1, MPI_INT, w.win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Put of 4 ints at displacement N-2",
           MPI_Put(bad, 4, MPI_INT, right(), N - 2, 4, MPI_INT, w.win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Get of 1 int at displacement N",
           MPI_Get(got, 1, MPI_INT, right(), N, 1, MPI_INT, w.win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Accumulate of 4 ints at displacement N-1",
           MPI_Accumulate(bad, 4, MPI_INT, right(), N - 1, 4, MPI_INT, MPI_SUM, w.win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Put with a target type wider than the window",
           MPI_Put(bad, 3, MPI_INT, right(), 0, 1, wide, w.win));
    expect(MPI_ERR_OP, "MPI_Accumulate with MPI_OP_NULL",
           MPI_Accumulate(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, MPI_OP_NULL, w.win));
    expect(MPI_ERR_OP, "MPI_Accumulate with a user-defined op",
           MPI_Accumulate(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, user_op, w.win));
    expect(MPI_ERR_OP, "MPI_Accumulate with MPI_BAND on MPI_DOUBLE",
           MPI_Accumulate(&dbl, 1, MPI_DOUBLE, right(), 0, 1, MPI_DOUBLE, MPI_BAND, w.win));
    expect(MPI_ERR_TYPE, "MPI_Accumulate from MPI_INT into MPI_UNSIGNED",
           MPI_Accumulate(bad, 1, MPI_INT, right(), 0, 1, MPI_UNSIGNED, MPI_SUM, w.win));
    /* Accumulates of no data combine nothing: their types need not agree (MPICH accepts them,
     * its test badrma checks it), but their operation must still be one. */
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    expect(MPI_SUCCESS, "MPI_Accumulate of 0 MPI_INT into 0 MPI_DOUBLE",
           MPI_Accumulate(bad, 0, MPI_INT, right(), 0, 0, MPI_DOUBLE, MPI_SUM, w.win));
    expect(MPI_SUCCESS, "MPI_Accumulate of 1 empty type into 0 MPI_INT",
           MPI_Accumulate(bad, 1, none, right(), 0, 0, MPI_INT, MPI_SUM, w.win));
    expect(MPI_SUCCESS, "MPI_Get_accumulate of 0 MPI_INT with a result of 0 MPI_FLOAT",
           MPI_Get_accumulate(bad, 0, MPI_INT, got, 0, MPI_FLOAT, right(), 0, 0, MPI_INT, MPI_SUM,
                              w.win));
    expect(MPI_ERR_OP, "MPI_Accumulate of 0 MPI_INT with MPI_OP_NULL",
           MPI_Accumulate(bad, 0, MPI_INT, right(), 0, 0, MPI_INT, MPI_OP_NULL, w.win));
    MPI_Type_free(&none);
    valid_put(1); /* the epoch is still usable */
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    ok(got[0] == -1, "the failed MPI_Gets wrote nothing");
    check_window("after bad arguments in a fence epoch");

    MPI_Type_free(&uncommitted);
    MPI_Type_free(&wide);
    MPI_Op_free(&user_op);
    expect(MPI_ERR_RMA_SYNC, "MPI_Put after fence(NOSUCCEED)",
           MPI_Put(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, w.win));
}

/* Part 3 (22 tests): passive target. */
static void lock_errors(void)
{
    int got = -1;
    long long ll = BAD;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Win win_before = w.win;

    expect(MPI_ERR_RMA_SYNC, "MPI_Win_unlock without a lock", MPI_Win_unlock(right(), w.win));
    expect(MPI_ERR_LOCKTYPE, "MPI_Win_lock with lock type 12345",
           MPI_Win_lock(12345, right(), 0, w.win));
    expect(MPI_ERR_ASSERT, "MPI_Win_lock with MPI_MODE_NOPRECEDE",
           MPI_Win_lock(MPI_LOCK_SHARED, right(), MPI_MODE_NOPRECEDE, w.win));
    expect(MPI_ERR_ASSERT, "MPI_Win_lock with an undefined assertion bit",
           MPI_Win_lock(MPI_LOCK_SHARED, right(), 1 << 20, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Put after the failed locks",
           MPI_Put(bad, 1, MPI_INT, right(), 0, 1, MPI_INT, w.win));

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_lock of a target already locked",
           MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_lock(shared) of a target already locked",
           MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_fence while a lock epoch is open", MPI_Win_fence(0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_free while a lock epoch is open", MPI_Win_free(&w.win));
    ok(w.win == win_before, "the failed MPI_Win_free left the handle alone");

    /* MPI-3 calls on a flexrma window, inside the lock epoch they need: flush and sync work
     * (t_passive3.c tests them), the rest are refused. */
    expect(MPI_SUCCESS, "MPI_Win_flush", MPI_Win_flush(right(), w.win));
    expect(MPI_SUCCESS, "MPI_Win_flush_local", MPI_Win_flush_local(right(), w.win));
    expect(MPI_SUCCESS, "MPI_Win_sync", MPI_Win_sync(w.win));
    expect(MPI_ERR_COUNT, "MPI_Rput with a negative count",
           MPI_Rput(bad, -1, MPI_INT, right(), 2, 1, MPI_INT, w.win, &req));
    expect(MPI_ERR_OP, "MPI_Fetch_and_op with MPI_OP_NULL",
           MPI_Fetch_and_op(bad, &got, MPI_INT, right(), 3, MPI_OP_NULL, w.win));
    expect(MPI_ERR_TYPE, "MPI_Get_accumulate with a result of another type",
           MPI_Get_accumulate(bad, 1, MPI_INT, &got, 1, MPI_FLOAT, right(), 4, 1, MPI_INT, MPI_SUM,
                              w.win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Compare_and_swap beyond the window",
           MPI_Compare_and_swap(&ll, &ll, &ll, MPI_LONG_LONG, right(), N, w.win));
    valid_put(2); /* the epoch is still usable */
    is_int(MPI_Win_unlock(right(), w.win), MPI_SUCCESS, "unlock after the failed calls");
    ok(got == -1 && req == MPI_REQUEST_NULL, "the failed MPI-3 calls wrote nothing at the origin");
    expect(MPI_SUCCESS, "MPI_Win_lock_all", MPI_Win_lock_all(0, w.win));
    expect(MPI_SUCCESS, "MPI_Win_unlock_all", MPI_Win_unlock_all(w.win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_window("after lock errors");
}

/* Part 4 (16 tests): post/start/complete/wait. */
static void pscw_errors(void)
{
    MPI_Group from = world_subgroup((int[]){left()}, 1), to = world_subgroup((int[]){right()}, 1);
    int flag = -1;
    MPI_Win win_before = w.win;

    expect(MPI_ERR_RMA_SYNC, "MPI_Win_complete without start", MPI_Win_complete(w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_wait without post", MPI_Win_wait(w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_test without post", MPI_Win_test(w.win, &flag));
    expect(MPI_ERR_ASSERT, "MPI_Win_post with MPI_MODE_NOPRECEDE",
           MPI_Win_post(from, MPI_MODE_NOPRECEDE, w.win));
    expect(MPI_ERR_ASSERT, "MPI_Win_start with MPI_MODE_NOSTORE",
           MPI_Win_start(to, MPI_MODE_NOSTORE, w.win));

    MPI_Win_post(from, 0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_post inside a post epoch", MPI_Win_post(from, 0, w.win));
    MPI_Win_start(to, 0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_start inside a start epoch", MPI_Win_start(to, 0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Put to a rank outside the start group (itself)",
           MPI_Put(bad, 1, MPI_INT, rank, 5, 1, MPI_INT, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside a start epoch",
           MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside post and start epochs", MPI_Win_fence(0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_free inside post and start epochs", MPI_Win_free(&w.win));
    ok(w.win == win_before, "the failed MPI_Win_free left the handle alone");
    valid_put(3);
    is_int(MPI_Win_complete(w.win), MPI_SUCCESS, "complete after the failed calls");
    is_int(MPI_Win_wait(w.win), MPI_SUCCESS, "wait after the failed calls");
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    ok(flag == -1, "the failed MPI_Win_test left its flag alone");
    check_window("after post/start/complete/wait errors");
}

/* Part 5 (7 tests): fence assertions; MPI_Win_free in a used fence epoch. */
static void fence_errors(void)
{
    MPI_Win win_before = w.win;
    expect(MPI_ERR_ASSERT, "MPI_Win_fence with an undefined assertion bit",
           MPI_Win_fence(1 << 20, w.win));
    expect(MPI_ERR_ASSERT, "MPI_Win_fence with MPI_MODE_NOCHECK",
           MPI_Win_fence(MPI_MODE_NOCHECK, w.win));
    MPI_Win_fence(0, w.win);
    valid_put(4);
    expect(MPI_ERR_ASSERT, "MPI_Win_fence(NOPRECEDE) after RMA calls in the epoch",
           MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_free in a fence epoch with RMA calls", MPI_Win_free(&w.win));
    ok(w.win == win_before, "the failed MPI_Win_free left the handle alone");
    valid_put(6); /* still the same epoch */
    is_int(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win), MPI_SUCCESS, "fence after the failed calls");
    check_window("after fence errors");
}

/* Part 6 (6 tests): memory and window creation errors, raised on the communicator. */
static void comm_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void *m = xmalloc(64), *am = NULL;
    int rc = MPI_Free_mem(m);
    expect(MPI_ERR_BASE, "MPI_Free_mem of malloc'ed memory", rc);
    int c = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    if (c == MPI_ERR_BASE) /* flexrma freed nothing: the memory is still ours */
        free(m);
    MPI_Alloc_mem(64, MPI_INFO_NULL, &am);
    expect(MPI_ERR_BASE, "MPI_Free_mem of an address inside MPI_Alloc_mem memory",
           MPI_Free_mem((char *)am + 8));
    MPI_Free_mem(am);
    expect(MPI_ERR_SIZE, "MPI_Alloc_mem of -1 bytes", MPI_Alloc_mem(-1, MPI_INFO_NULL, &am));

    MPI_Win win = MPI_WIN_NULL;
    int buf[4];
    expect(MPI_ERR_SIZE, "MPI_Win_create with size -1",
           MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect(MPI_ERR_DISP, "MPI_Win_create with disp_unit 0",
           MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* As the library under flexrma does (core/mpi_compat.h): Open MPI creates the window,
     * MPICH refuses it. */
    rc = MPI_Win_create(NULL, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
#ifdef OPEN_MPI
    ok(rc == MPI_SUCCESS,
       "MPI_Win_create with a NULL base and 16 bytes: created, as Open MPI does");
    if (rc == MPI_SUCCESS) {
        MPI_Win_fence(0, win);
        MPI_Win_fence(0, win);
        MPI_Win_free(&win);
    }
#else
    expect(MPI_ERR_ARG, "MPI_Win_create with a NULL base and 16 bytes", rc);
#endif
}

/* Part 7 (2 tests): a group member outside the window's group. */
static void group_errors(void)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    int buf[4];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, sub, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int outsider = (rank ^ 1) < nprocs ? rank ^ 1 : left(); /* a rank of the other parity */
    MPI_Group other = world_subgroup(&outsider, 1);
    expect(MPI_ERR_GROUP, "MPI_Win_start with a group member outside the window",
           MPI_Win_start(other, 0, win));
    expect(MPI_ERR_GROUP, "MPI_Win_post with a group member outside the window",
           MPI_Win_post(other, 0, win));
    MPI_Group_free(&other);
    MPI_Win_free(&win);
    MPI_Comm_free(&sub);
}

/* Part 8 (4 tests): calls MPI defines for windows of other flavors. Open MPI answers the same on
 * its own create windows (MPI_ERR_RMA_FLAVOR; MPI_Win_detach there gives MPI_ERR_WIN).
 * MPI_Win_shared_query: MPI-4.1 allows it on created windows (t_shared_query), not on dynamic
 * ones. */
static void other_flavor_errors(void)
{
    MPI_Aint size = -1;
    int unit = -1;
    void *base = bad;
    int region[4];
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach on a create window",
           MPI_Win_attach(w.win, region, sizeof region));
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach on a create window", MPI_Win_detach(w.win, bad));
    MPI_Win dyn;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query on a dynamic window",
           MPI_Win_shared_query(dyn, rank, &size, &unit, &base));
    ok(size == -1 && unit == -1 && base == bad, "the failed MPI_Win_shared_query wrote nothing");
    MPI_Win_free(&dyn);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5 + 27 + 22 + 16 + 7 + 6 + 2 + 4 + 1 + 2);
    iwin_create(&w, N);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD); /* windows zeroed everywhere: the model starts at 0 */

    outside_epochs();
    bad_arguments();
    lock_errors();
    pscw_errors();
    fence_errors();
    comm_errors();
    group_errors();
    other_flavor_errors();

    /* Every error string names flexrma. */
    is_int(errors_named(), ncodes, "error strings naming flexrma, one code per class seen");

    int rc = MPI_Win_free(&w.win);
    ok(rc == MPI_SUCCESS && w.win == MPI_WIN_NULL, "MPI_Win_free succeeds after all that");
    is_int(MPI_Free_mem(w.buf), MPI_SUCCESS, "MPI_Free_mem of the window memory");
    return test_done();
}
