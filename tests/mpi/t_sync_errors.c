/* t_sync_errors.c - the error rules of the synchronization counters (docs/specification.md
 * section 6, and section 8 for how errors are raised), under MPI_ERRORS_RETURN on the windows and
 * on MPI_COMM_WORLD: each erroneous call returns a code of the right class (MPI_Error_class) and
 * changes nothing (request handles stay MPI_REQUEST_NULL, a failed free frees none, a failed
 * MPI_Win_free keeps the window, a failed RMA call writes nothing, counts stay as they were).
 * The error strings name flexrma, and a clean round at the end shows everything still works.
 *
 * Every rank makes the same mistakes towards its right neighbour, so collective calls
 * (MPI_Win_free) fail on every rank alike. Not testable from a program: a counter whose owner is
 * not a member of the window (an MPI_Sync is opaque and every real one has a member as owner).
 * The bump sent to a freed counter (part 6) makes its owner report it on stderr: expected. */
#include "errors_common.h"
#include "sync_common.h"

#define K 16

/* w: K ints written by the left neighbour's valid puts, then K ints nothing valid ever writes
 * (the erroneous calls aim there); w2: the "other window". */
static iwin w, w2;
static MPI_Sync c0, *all0; /* this rank's main counter on w, and every rank's */

/* The request handle of the init calls expected to fail; after each, it must still be
 * MPI_REQUEST_NULL ("a failing call changes nothing"). */
static MPI_Request fr = MPI_REQUEST_NULL;
static int touched;
static void init_left_req_alone(void)
{
    if (fr != MPI_REQUEST_NULL) {
        touched++;
        fr = MPI_REQUEST_NULL; /* not freed: it may be garbage */
    }
}
#define expect_init(cls, what, call)                                                               \
    do {                                                                                           \
        expect(cls, what, call);                                                                   \
        init_left_req_alone();                                                                     \
    } while (0)

/* The second half of our window, where only erroneous calls aim, is still all zero. */
static int untouched(void)
{
    int zero[K] = {0};
    return same_ints(w.buf + K, zero, K);
}

/* Part 1 (14 tests): counters that are not valid where they are used. */
static void bad_counters(void)
{
    MPI_Sync o2, *o2_all = xmalloc((size_t)nprocs * sizeof(MPI_Sync)), o2copy, nul = MPIX_SYNC_NULL;
    MPI_Count v = -1;
    MPI_Win_Sync_alloc_objects(1, &o2, w2.win, MPI_INFO_NULL);
    share_counters(&o2, 1, o2_all);
    o2copy = o2;

    expect_init(MPI_ERR_ARG, "sync_object_init with a counter of another window",
                MPI_Win_sync_object_init(o2, 1, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init to oneself with one's counter of another window",
                MPI_Win_sync_ops_init(rank, 0, o2, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init with the target's counter of another window",
                MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, o2_all[right()], w.win,
                                      MPI_INFO_NULL, &fr));
    expect(MPI_ERR_ARG, "MPIX_Win_sync_read of a counter of another window",
           MPIX_Win_sync_read(o2, w.win, &v));
    expect(MPI_ERR_ARG, "MPI_Win_Sync_free_objects of a counter of another window",
           MPI_Win_Sync_free_objects(1, &o2copy, w.win));

    expect_init(MPI_ERR_ARG, "sync_object_init with MPIX_SYNC_NULL",
                MPI_Win_sync_object_init(MPIX_SYNC_NULL, 1, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init with MPIX_SYNC_NULL",
                MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, MPIX_SYNC_NULL, w.win,
                                      MPI_INFO_NULL, &fr));
    expect(MPI_ERR_ARG, "MPIX_Win_sync_read of MPIX_SYNC_NULL",
           MPIX_Win_sync_read(MPIX_SYNC_NULL, w.win, &v));
    expect(MPI_ERR_ARG, "MPI_Win_Sync_free_objects of MPIX_SYNC_NULL",
           MPI_Win_Sync_free_objects(1, &nul, w.win));

    /* Freed by its owner: the owner knows (the generation no longer matches). */
    MPI_Sync f = MPIX_SYNC_NULL, fc;
    MPI_Win_Sync_alloc_objects(1, &f, w.win, MPI_INFO_NULL);
    fc = f;
    MPI_Win_Sync_free_objects(1, &f, w.win);
    expect_init(MPI_ERR_ARG, "sync_object_init by the owner with a counter it freed",
                MPI_Win_sync_object_init(fc, 1, w.win, MPI_INFO_NULL, &fr));
    expect(MPI_ERR_ARG, "MPIX_Win_sync_read by the owner of a counter it freed",
           MPIX_Win_sync_read(fc, w.win, &v));
    expect_init(MPI_ERR_ARG, "sync_ops_init to oneself with a counter one freed",
                MPI_Win_sync_ops_init(rank, 0, fc, w.win, MPI_INFO_NULL, &fr));
    expect(MPI_ERR_ARG, "MPI_Win_Sync_free_objects of a counter freed already",
           MPI_Win_Sync_free_objects(1, &fc, w.win));

    expect_init(MPI_ERR_ARG, "sync_object_init with the right neighbour's counter",
                MPI_Win_sync_object_init(all0[right()], 1, w.win, MPI_INFO_NULL, &fr));

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(1, &o2, w2.win);
    free(o2_all);
}

/* Part 2 (10 tests): bad arguments of the init and allocation calls. */
static void bad_arguments(void)
{
    MPI_Sync tmp[2] = {MPIX_SYNC_NULL, MPIX_SYNC_NULL};
    const MPI_Sync nbc = all0[right()]; /* the right neighbour's counter */
    expect_init(MPI_ERR_ARG, "sync_ops_init to oneself with the right neighbour's counter",
                MPI_Win_sync_ops_init(rank, MPI_MODE_WIN_PUT, nbc, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_RANK, "sync_ops_init to rank nprocs",
                MPI_Win_sync_ops_init(nprocs, MPI_MODE_WIN_PUT, nbc, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_RANK, "sync_ops_init to rank -5",
                MPI_Win_sync_ops_init(-5, MPI_MODE_WIN_PUT, nbc, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init with sync_mode 8",
                MPI_Win_sync_ops_init(right(), 8, nbc, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init with sync_mode MPI_MODE_WIN_PUT | 1<<20",
                MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT | 1 << 20, nbc, w.win,
                                      MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_ARG, "sync_ops_init with sync_mode -1",
                MPI_Win_sync_ops_init(right(), -1, nbc, w.win, MPI_INFO_NULL, &fr));
    expect_init(MPI_ERR_COUNT, "sync_object_init with count -1",
                MPI_Win_sync_object_init(c0, -1, w.win, MPI_INFO_NULL, &fr));
    expect(MPI_ERR_COUNT, "MPI_Win_Sync_alloc_objects of -1 counters",
           MPI_Win_Sync_alloc_objects(-1, tmp, w.win, MPI_INFO_NULL));
    expect(MPI_ERR_COUNT, "MPI_Win_Sync_free_objects of -1 counters",
           MPI_Win_Sync_free_objects(-1, tmp, w.win));
    is_int(touched, 0, "failed init calls that wrote their request handle");
}

/* Part 3 (5 tests): a failing free frees none of its counters. */
static void bad_frees(void)
{
    MPI_Sync t[2] = {MPIX_SYNC_NULL, MPIX_SYNC_NULL}, arr[2], saved[2];
    MPI_Win_Sync_alloc_objects(2, t, w.win, MPI_INFO_NULL);

    arr[0] = saved[0] = t[0];
    arr[1] = saved[1] = all0[right()];
    expect(MPI_ERR_ARG, "MPI_Win_Sync_free_objects of one's counter and the neighbour's",
           MPI_Win_Sync_free_objects(2, arr, w.win));
    ok(!memcmp(arr, saved, sizeof arr) && sync_value(t[0], w.win) == 0,
       "... freed none: the array is unchanged and one's own counter still reads 0");

    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Win_sync_object_init(t[1], 1, w.win, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    memcpy(saved, t, sizeof t);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_Sync_free_objects of 2 counters, one of which an armed "
                             "sync-object request waits on",
           MPI_Win_Sync_free_objects(2, t, w.win));
    ok(!memcmp(t, saved, sizeof t) && sync_value(t[0], w.win) == 0 &&
           sync_value(t[1], w.win) == 0,
       "... freed none: the array is unchanged and both counters still read 0");
    MPI_Cancel(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Request_free(&q);
    int rc = MPI_Win_Sync_free_objects(2, t, w.win);
    ok(rc == MPI_SUCCESS && sync_is_null(t[0]) && sync_is_null(t[1]),
       "once the request is cancelled and freed, the free succeeds (rc %d)", rc);
}

static MPI_Request start_ops(int mode, MPI_Info info)
{
    MPI_Request o = MPI_REQUEST_NULL;
    MPI_Win_sync_ops_init(right(), mode, all0[right()], w.win, info, &o);
    MPI_Start(&o);
    return o;
}

/* Part 4 (16 tests): misuse of the requests. Every rank puts into region 0 of its right
 * neighbour and bumps its counter c0. */
static void bad_requests(void)
{
    int src[K], got[K], bad[K], exp[K], flag = -1;
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, 1);
        got[i] = -1;
        bad[i] = 0x7777;
        exp[i] = pat(left(), i, 1);
    }
    MPI_Request a = MPI_REQUEST_NULL;
    MPI_Win_sync_object_init(c0, 1, w.win, MPI_INFO_NULL, &a);
    MPI_Start(&a);
    expect(MPI_ERR_REQUEST, "MPI_Start of an armed sync-object request", MPI_Start(&a));

    MPI_Request o = start_ops(MPI_MODE_WIN_PUT, MPI_INFO_NULL);
    expect(MPI_ERR_REQUEST, "MPI_Start of an active sync-ops request", MPI_Start(&o));
    expect(MPI_ERR_REQUEST, "MPI_Startall of one active sync-ops request", MPI_Startall(1, &o));
    expect(MPI_ERR_REQUEST, "MPI_Cancel of an active sync-ops request", MPI_Cancel(&o));
    expect(MPI_ERR_RMA_SYNC, "MPI_Get under a started request for puts only",
           MPI_Get(got, K, MPI_INT, right(), 0, K, MPI_INT, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Accumulate under a started request for puts only",
           MPI_Accumulate(bad, K, MPI_INT, right(), K, K, MPI_INT, MPI_SUM, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Put to oneself under a started request to the right neighbour",
           MPI_Put(bad, K, MPI_INT, rank, K, K, MPI_INT, w.win));
    int rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Put(src, K, MPI_INT, right(), 0, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Wait(&o, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Wait(&a, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && got[0] == -1 && same_ints(w.buf, exp, K) && untouched(),
       "after the failed calls the request still works: its put is there; the failed get, "
       "accumulate and put wrote nothing (rc %d)", rc);
    expect(MPI_ERR_RMA_SYNC, "MPI_Put after the request completed (its epoch is over)",
           MPI_Put(bad, K, MPI_INT, right(), K, K, MPI_INT, w.win));
    MPI_Request_free(&o);

    o = start_ops(MPI_MODE_WIN_GET, MPI_INFO_NULL);
    expect(MPI_ERR_RMA_SYNC, "MPI_Put under a started request for gets only",
           MPI_Put(bad, K, MPI_INT, right(), K, K, MPI_INT, w.win));
    MPI_Wait(&o, MPI_STATUS_IGNORE);
    MPI_Request_free(&o);
    start_wait(&a); /* the bump of the get request */

    /* An auto-restarted request is active again after its MPI_Wait. */
    MPI_Info info = info_true(MPIX_INFO_SYNC_AUTO_RESTART);
    o = start_ops(0, info);
    MPI_Wait(&o, MPI_STATUS_IGNORE);
    expect(MPI_ERR_REQUEST, "MPI_Start of an auto-restart request after its MPI_Wait (restarted)",
           MPI_Start(&o));
    MPI_Request_free(&o); /* completes in the background: a second bump */
    info_free(&info);
    consume(c0, 2, w.win);
    MPI_Request_free(&a);

    /* MPIX_Win_sync_object_change_count. */
    MPI_Request b = MPI_REQUEST_NULL;
    MPI_Win_sync_object_init(c0, 1, w.win, MPI_INFO_NULL, &b);
    expect(MPI_ERR_COUNT, "change_count by -2 of an inactive count-1 request",
           MPIX_Win_sync_object_change_count(b, -2));
    MPI_Start(&b);
    expect(MPI_ERR_COUNT, "change_count by -2 of an armed count-1 request",
           MPIX_Win_sync_object_change_count(b, -2));
    MPI_Test(&b, &flag, MPI_STATUS_IGNORE);
    ok(!flag, "... which stays armed: no bump, not complete");
    MPI_Barrier(MPI_COMM_WORLD);
    bump(right(), all0[right()], w.win);
    if (!flag)
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    MPI_Request_free(&b);

    o = MPI_REQUEST_NULL;
    MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all0[right()], w.win, MPI_INFO_NULL, &o);
    expect(MPI_ERR_REQUEST, "change_count of a sync-ops request",
           MPIX_Win_sync_object_change_count(o, 1));
    MPI_Request_free(&o);
    int msg = 0;
    MPI_Request p2p;
    MPI_Irecv(&msg, 1, MPI_INT, left(), 99, MPI_COMM_WORLD, &p2p);
    expect(MPI_ERR_REQUEST, "change_count of an MPI_Irecv request",
           MPIX_Win_sync_object_change_count(p2p, 1));
    MPI_Send(&msg, 1, MPI_INT, right(), 99, MPI_COMM_WORLD);
    MPI_Wait(&p2p, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 5 (7 tests): sync requests and MPI_Win_free. */
static void window_free(void)
{
    iwin w3, w4;
    MPI_Sync c3, c4, *all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    swin_create(&w3, K);
    MPI_Win_Sync_alloc_objects(1, &c3, w3.win, MPI_INFO_NULL);
    share_counters(&c3, 1, all);
    MPI_Win before = w3.win;

    MPI_Request q = MPI_REQUEST_NULL, o = MPI_REQUEST_NULL;
    MPI_Win_sync_object_init(c3, 1, w3.win, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_free with an armed sync-object request",
           MPI_Win_free(&w3.win));
    ok(w3.win == before, "the failed MPI_Win_free left the handle alone");
    MPI_Cancel(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    /* Disarmed everywhere before the bumps below: an armed q would take one. */
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_sync_ops_init(right(), 0, all[right()], w3.win, MPI_INFO_NULL, &o);
    MPI_Start(&o);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_free with an active sync-ops request",
           MPI_Win_free(&w3.win));
    MPI_Wait(&o, MPI_STATUS_IGNORE);
    start_wait(&q); /* the left neighbour's bump */
    MPI_Request_free(&o);
    MPI_Request_free(&q);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_Win_free(&w3.win);
    ok(rc == MPI_SUCCESS && w3.win == MPI_WIN_NULL,
       "with the requests completed and freed, MPI_Win_free succeeds (rc %d)", rc);
    MPI_Free_mem(w3.buf);

    /* Inactive requests outlive their window; starting one then is MPI_ERR_WIN. */
    swin_create(&w4, K);
    MPI_Win_Sync_alloc_objects(1, &c4, w4.win, MPI_INFO_NULL);
    share_counters(&c4, 1, all);
    q = o = MPI_REQUEST_NULL;
    MPI_Win_sync_object_init(c4, 1, w4.win, MPI_INFO_NULL, &q);
    MPI_Win_sync_ops_init(right(), 0, all[right()], w4.win, MPI_INFO_NULL, &o);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w4.win);
    MPI_Free_mem(w4.buf);
    expect(MPI_ERR_WIN, "MPI_Start of a sync-object request whose window was freed",
           MPI_Start(&q));
    expect(MPI_ERR_WIN, "MPI_Start of a sync-ops request whose window was freed", MPI_Start(&o));
    rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Request_free(&q));
    KEEP_RC(rc, MPI_Request_free(&o));
    ok(rc == MPI_SUCCESS && q == MPI_REQUEST_NULL && o == MPI_REQUEST_NULL,
       "the requests of the freed window can still be freed (rc %d)", rc);
    free(all);
}

/* Part 6 (3 tests): a counter freed by its owner, used by another member that cannot know; with
 * remote completion the request completes with the error the owner found. */
static void stale_counter(void)
{
    MPI_Sync d = MPIX_SYNC_NULL, *all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    MPI_Win_Sync_alloc_objects(1, &d, w.win, MPI_INFO_NULL);
    share_counters(&d, 1, all);
    MPI_Win_Sync_free_objects(1, &d, w.win);
    MPI_Barrier(MPI_COMM_WORLD); /* every owner has freed its counter */
    MPI_Info info = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    MPI_Request o = MPI_REQUEST_NULL;
    expect(MPI_SUCCESS, "sync_ops_init with a counter its owner freed, by another member",
           MPI_Win_sync_ops_init(right(), 0, all[right()], w.win, info, &o));
    if (o != MPI_REQUEST_NULL)
        MPI_Start(&o);
    expect(MPI_ERR_ARG, "... with remote completion, its MPI_Wait returns the owner's error",
           MPI_Wait(&o, MPI_STATUS_IGNORE));
    if (o != MPI_REQUEST_NULL)
        MPI_Start(&o);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    int wrc = MPI_Waitall(1, &o, &st), wclass = -1, sclass = -1;
    MPI_Error_class(wrc, &wclass);
    MPI_Error_class(st.MPI_ERROR, &sclass);
    ok(wclass == MPI_ERR_IN_STATUS && sclass == MPI_ERR_ARG,
       "... and MPI_Waitall of it alone returns MPI_ERR_IN_STATUS with the owner's error in its "
       "status (classes %d, %d)", wclass, sclass);
    if (o != MPI_REQUEST_NULL)
        MPI_Request_free(&o);
    info_free(&info);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(14 + 10 + 5 + 16 + 7 + 3 + 1 + 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    swin_create(&w, 2 * K);
    swin_create(&w2, K);
    all0 = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    MPI_Win_Sync_alloc_objects(1, &c0, w.win, MPI_INFO_NULL);
    share_counters(&c0, 1, all0);

    bad_counters();
    bad_arguments();
    bad_frees();
    bad_requests();
    window_free();
    stale_counter();

    /* Every error string names flexrma. */
    int named = errors_named();
    ok(ncodes > 0 && named == ncodes, "error strings naming flexrma, one code per class seen "
                                      "(%d of %d)", named, ncodes);

    /* A clean round after all that: a put under a request, consumed by the owner. */
    int src[K], exp[K], rc = MPI_SUCCESS;
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, 9);
        exp[i] = pat(left(), i, 9);
    }
    MPI_Request o = MPI_REQUEST_NULL, q = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_object_init(c0, 1, w.win, MPI_INFO_NULL, &q));
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all0[right()], w.win,
                                      MPI_INFO_NULL, &o));
    KEEP_RC(rc, MPI_Start(&q));
    KEEP_RC(rc, MPI_Start(&o));
    KEEP_RC(rc, MPI_Put(src, K, MPI_INT, right(), 0, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Wait(&o, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && same_ints(w.buf, exp, K) && sync_value(c0, w.win) == 0 && untouched(),
       "a clean round after the errors: the put is there when the count-1 request completes, "
       "nothing erroneous ever wrote the window (rc %d)", rc);
    MPI_Request_free(&o);
    MPI_Request_free(&q);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(1, &c0, w.win);
    free(all0);
    iwin_free(&w2);
    iwin_free(&w);
    return test_done();
}
