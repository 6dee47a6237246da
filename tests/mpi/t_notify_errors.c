/* t_notify_errors.c - erroneous notified-RMA calls (docs/specification.md, sections 9 and 13):
 * a window without notification counters, an index out of range (the draft's calls and Open
 * MPI's MPIX_ ids), a negative value or number, a NULL output, a notified operation outside any
 * epoch, with a bad rank or an out-of-window range, MPI_Win_notify_set_num with one member's
 * argument wrong or inside an epoch. Each must come back with the right error class (the draft's
 * MPI_ERR_INVALID_NOTIFICATION, a class of its own, for the index and the missing counters),
 * raised exactly once through the window's error handler, and change nothing: no data at the
 * target, no notification counted, the counters of before still there; valid notified puts work
 * afterwards. */
#include "errors_common.h"
#include "sync_common.h"

#define K 8
#define BAD 0x7777

static int handler_calls;

static void count_errors(MPI_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
    handler_calls++;
}

/* call failed with class cls (MPI_ERR_INVALID_NOTIFICATION included), through the handler once. */
#define raised(cls, what, call) raised_at(__LINE__, (call), (cls), (what))
static int raised_at(int line, int rc, int cls, const char *what)
{
    static int calls_before;
    int got = MPI_SUCCESS, calls = handler_calls - calls_before;
    calls_before = handler_calls;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    int pass = tap_ok_at(__FILE__, line, got == cls && calls == (cls != MPI_SUCCESS), "%s", what);
    if (!pass)
        diag("got class %d (code %d), expected %d; the window's error handler called %d times",
             got, rc, cls, calls);
    return pass;
}

/* Nothing of BAD reached my window, and my counter idx holds want. */
static int untouched(MPI_Win win, const int *buf, int idx, MPI_Count want, const char *what)
{
    int bad = 0;
    for (int i = 0; i < K; i++)
        bad += buf[i] == BAD;
    MPI_Count v = -1;
    if (idx >= 0)
        MPI_Win_notify_get_value(win, idx, &v);
    int pass = ok(!bad && (idx < 0 || v == want), "%s: nothing changed", what);
    if (!pass)
        diag("%d ints of BAD in the window, counter %d holds %lld (expected %lld)", bad, idx,
             (long long)v, (long long)want);
    return pass;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(35);
    const int INV = MPI_ERR_INVALID_NOTIFICATION;
    ok(INV != MPI_ERR_OTHER, "MPI_ERR_INVALID_NOTIFICATION is a class of its own (%d)", INV);
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(INV, text, &len);
    ok(strstr(text, "MPI_ERR_INVALID_NOTIFICATION") != NULL, "its error string names it: %s", text);

    int *buf, bad[K];
    for (int i = 0; i < K; i++)
        bad[i] = BAD;
    MPI_Win win;
    MPI_Win_allocate(K * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    memset(buf, 0, K * sizeof(int));
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(count_errors, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Count v;

    /* No notification counters yet. */
    MPI_Win_lock_all(0, win);
    raised(INV, "MPI_Put_notify, window without notifications",
           MPI_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, 0, win));
    raised(INV, "MPI_Get_notify, window without notifications",
           MPI_Get_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, 0, win));
    raised(INV, "MPI_Win_notify_get_value, window without notifications",
           MPI_Win_notify_get_value(win, 0, &v));
    raised(INV, "MPI_Win_notify_set_value, window without notifications",
           MPI_Win_notify_set_value(win, 0, 0));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    untouched(win, buf, -1, 0, "without notifications");

    /* set_num inside an epoch (every member): MPI_ERR_RMA_SYNC, no counters made. */
    MPI_Win_lock_all(0, win);
    raised(MPI_ERR_RMA_SYNC, "MPI_Win_notify_set_num inside an epoch",
           MPI_Win_notify_set_num(win, MPI_INFO_NULL, 2));
    MPI_Win_unlock_all(win);
    raised(INV, "... made no counters", MPI_Win_notify_get_value(win, 0, &v));

    raised(MPI_SUCCESS, "MPI_Win_notify_set_num(2)", MPI_Win_notify_set_num(win, MPI_INFO_NULL, 2));

    /* Out of range, outside an epoch, bad rank, bad range. */
    MPI_Win_lock_all(0, win);
    raised(INV, "MPI_Put_notify, index 2 of 2",
           MPI_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, 2, win));
    raised(INV, "MPI_Put_notify, index -1",
           MPI_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, -1, win));
    raised(INV, "MPI_Get_notify, index 2 of 2",
           MPI_Get_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, 2, win));
    raised(INV, "MPI_Win_notify_get_value, index 2", MPI_Win_notify_get_value(win, 2, &v));
    raised(INV, "MPI_Win_notify_set_value, index -1", MPI_Win_notify_set_value(win, -1, 0));
    raised(MPI_ERR_ARG, "MPI_Win_notify_set_value, value -1", MPI_Win_notify_set_value(win, 0, -1));
    raised(MPI_ERR_ARG, "MPI_Win_notify_get_value, value NULL",
           MPI_Win_notify_get_value(win, 0, NULL));
    raised(MPI_ERR_RANK, "MPI_Put_notify, rank nprocs",
           MPI_Put_notify(bad, K, MPI_INT, nprocs, 0, K, MPI_INT, 0, win));
    raised(MPI_ERR_RMA_RANGE, "MPI_Put_notify, beyond the window",
           MPI_Put_notify(bad, K, MPI_INT, right(), 1, K, MPI_INT, 0, win));
    MPI_Win_unlock_all(win);
    raised(MPI_ERR_RMA_SYNC, "MPI_Put_notify outside any epoch",
           MPI_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, 0, win));

    /* Open MPI's ids: [0, MPIX_MAX_NOTIFICATION_IDX]. */
    MPI_Win_lock_all(0, win);
    int flag = 5;
    raised(INV, "MPIX_Put_notify, id -1",
           MPIX_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, win, -1));
    raised(INV, "MPIX_Get_notify, id MAX + 1",
           MPIX_Get_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, win,
                           MPIX_MAX_NOTIFICATION_IDX + 1));
    raised(INV, "MPIX_Win_wait_notify, id -1", MPIX_Win_wait_notify(win, -1));
    raised(INV, "MPIX_Win_test_notify, id MAX + 1",
           MPIX_Win_test_notify(win, MPIX_MAX_NOTIFICATION_IDX + 1, &flag));
    raised(INV, "MPIX_Put_notify, id beyond the 2 counters of MPI_Win_notify_set_num",
           MPIX_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, win, 2));
    ok(flag == 5, "MPIX_Win_test_notify left flag alone");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    untouched(win, buf, 0, 0, "after the erroneous notified operations");
    untouched(win, buf, 1, 0, "... counter 1");

    /* set_num with one member's argument wrong: fails everywhere, the 2 counters stay. */
    raised(MPI_ERR_ARG, "MPI_Win_notify_set_num, rank 0 passes -1",
           MPI_Win_notify_set_num(win, MPI_INFO_NULL, rank == 0 ? -1 : 4));
    raised(INV, "... index 2 still out of range", MPI_Win_notify_get_value(win, 2, &v));

    /* More counters than Open MPI's ids reach: an id beyond MPIX_MAX_NOTIFICATION_IDX is refused
     * though the counter exists, also where the put would be a plain copy (the short path). */
    const int beyond = MPIX_MAX_NOTIFICATION_IDX + 1;
    raised(MPI_SUCCESS, "MPI_Win_notify_set_num(MAX + 2)",
           MPI_Win_notify_set_num(win, MPI_INFO_NULL, beyond + 1));
    MPI_Win_lock_all(0, win);
    raised(INV, "MPIX_Put_notify, id MAX + 1 of MAX + 2 counters",
           MPIX_Put_notify(bad, K, MPI_INT, right(), 0, K, MPI_INT, win, beyond));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    untouched(win, buf, beyond, 0, "after MPIX_Put_notify beyond Open MPI's ids");
    MPI_Win_notify_set_num(win, MPI_INFO_NULL, 2);

    /* And valid notified puts work afterwards. */
    int mine[K];
    fill_pat(mine, K, rank, 1);
    MPI_Win_lock_all(0, win);
    raised(MPI_SUCCESS, "a valid MPI_Put_notify",
           MPI_Put_notify(mine, K, MPI_INT, right(), 0, K, MPI_INT, 1, win));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    v = -1;
    MPI_Win_notify_get_value(win, 1, &v);
    ok(v == 1 && is_pat(buf, K, left(), 1), "... arrived and counted (value %lld)", (long long)v);

    MPI_Win_free(&win);
    MPI_Errhandler_free(&eh);
    return test_done();
}
