/* t_iops_errors.c - erroneous request-returning RMA calls (docs/specification.md sections 7 and
 * 9): MPI_Iput, MPI_Iget, MPI_Iaccumulate, MPIX_Put_signal, MPIX_Iput_signal with a bad target
 * rank, an out-of-window range, a negative count, a NULL request pointer, outside any epoch (or
 * to a target outside the epoch), a reduction operation that does not apply, a counter that the
 * target does not own; MPI_Cancel of their requests. Each error must come back with the right
 * MPI error class, be raised exactly once through the window's error handler (a counting handler
 * that returns, so the call returns the code), leave *request unchanged and change nothing: the
 * window holds only what the valid operations put there, and rounds of valid operations work
 * afterwards.
 *
 * Every rank makes the same mistakes towards its right neighbour; valid operations put into the
 * region of the window that belongs to the origin. Not checked: a native (non-flexrma) window. */
#include "errors_common.h"
#include "sync_common.h"

#define K 16
#define BAD 0x7777 /* what an erroneous call would write */

static iwin w; /* nprocs regions of K ints: region r is written by rank r only */
static MPI_Sync *ctr; /* ctr[r]: rank r's counter on w */
static int handler_calls;

static void count_errors(MPI_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
    handler_calls++;
}

/* One test: call returned an error of class cls (or MPI_SUCCESS), raised through the window's
 * handler exactly once (never for MPI_SUCCESS), and *req (when given) is still
 * MPI_REQUEST_NULL. (errors_common.h's expect() checks the class only.) */
#define raised(cls, what, call) raised_at(__LINE__, (call), (cls), NULL, (what))
#define raised_req(cls, what, req, call) raised_at(__LINE__, (call), (cls), (req), (what))
static int raised_at(int line, int rc, int cls, const MPI_Request *req, const char *what)
{
    static int calls_before;
    int got = error_class(rc), calls = handler_calls - calls_before;
    calls_before = handler_calls;
    int want_calls = cls == MPI_SUCCESS ? 0 : 1;
    int unchanged = !req || *req == MPI_REQUEST_NULL;
    int pass = tap_ok_at(__FILE__, line, got == cls && calls == want_calls && unchanged,
                         "%s: %s", what, class_name(cls));
    if (!pass)
        diag("got %s (code %d), the window's error handler called %d times (expected %d)%s",
             class_name(got), rc, calls, want_calls,
             unchanged ? "" : ", and *request was changed");
    return pass;
}

/* My window holds, in region r, pattern want[r] of rank r (zeros where want[r] is 0): what the
 * valid operations put there, and nothing of BAD. */
static int window_is(const int *want)
{
    int *mine = xmalloc(w.n * sizeof(int)), bad = 0;
    read_own(&w, mine);
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < K; i++) {
            int exp = want[r] ? pat(r, i, want[r]) : 0;
            if (mine[r * K + i] != exp && !bad++)
                diag("region %d [%d]: got %d, expected %d", r, i, mine[r * K + i], exp);
        }
    free(mine);
    return !bad;
}

static int e_of[64]; /* the pattern each region of my window should hold, 0: zeros */

/* ---- inside a fence epoch: argument errors (29 tests) ---- */

static void argument_errors(void)
{
    const int t = right(), big = nprocs;
    int bad[K], src[K], got[K];
    MPI_Request req;
    for (int i = 0; i < K; i++)
        bad[i] = BAD;
    MPI_Win_fence(0, w.win);

#define R (req = MPI_REQUEST_NULL, &req)
    /* bad target rank */
    raised_req(MPI_ERR_RANK, "MPI_Iput to rank nprocs", &req,
               MPI_Iput(bad, 1, MPI_INT, big, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RANK, "MPI_Iget from rank -5", &req,
               MPI_Iget(got, 1, MPI_INT, -5, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RANK, "MPI_Iaccumulate to rank nprocs", &req,
               MPI_Iaccumulate(bad, 1, MPI_INT, big, 0, 1, MPI_INT, MPI_SUM, w.win, R));
    raised(MPI_ERR_RANK, "MPIX_Put_signal to rank nprocs",
           MPIX_Put_signal(bad, 1, MPI_INT, big, 0, 1, MPI_INT, ctr[t], w.win));
    raised_req(MPI_ERR_RANK, "MPIX_Iput_signal to rank nprocs", &req,
               MPIX_Iput_signal(bad, 1, MPI_INT, big, 0, 1, MPI_INT, ctr[t], w.win, R));
    /* bad rank and bad count: the rank is checked first */
    raised_req(MPI_ERR_RANK, "MPI_Iput to rank nprocs with count -1 (rank checked first)", &req,
               MPI_Iput(bad, -1, MPI_INT, big, 0, -1, MPI_INT, w.win, R));

    /* the target range leaves the window (K ints per region, nprocs * K in all) */
    const MPI_Aint end = (MPI_Aint)nprocs * K;
    raised_req(MPI_ERR_RMA_RANGE, "MPI_Iput of 2 ints at the window's last int", &req,
               MPI_Iput(bad, 2, MPI_INT, t, end - 1, 2, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_RANGE, "MPI_Iget of 1 int just past the window", &req,
               MPI_Iget(got, 1, MPI_INT, t, end, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_RANGE, "MPI_Iaccumulate of K ints past the window", &req,
               MPI_Iaccumulate(bad, K, MPI_INT, t, end - K + 1, K, MPI_INT, MPI_SUM, w.win, R));
    raised(MPI_ERR_RMA_RANGE, "MPIX_Put_signal of 2 ints at the window's last int",
           MPIX_Put_signal(bad, 2, MPI_INT, t, end - 1, 2, MPI_INT, ctr[t], w.win));
    raised_req(MPI_ERR_RMA_RANGE, "MPIX_Iput_signal of 1 int just past the window", &req,
               MPIX_Iput_signal(bad, 1, MPI_INT, t, end, 1, MPI_INT, ctr[t], w.win, R));

    /* negative counts */
    raised_req(MPI_ERR_COUNT, "MPI_Iput with origin count -1", &req,
               MPI_Iput(bad, -1, MPI_INT, t, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_COUNT, "MPI_Iget with target count -1", &req,
               MPI_Iget(got, 1, MPI_INT, t, 0, -1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_COUNT, "MPI_Iaccumulate with origin count -3", &req,
               MPI_Iaccumulate(bad, -3, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, w.win, R));
    raised(MPI_ERR_COUNT, "MPIX_Put_signal with target count -1",
           MPIX_Put_signal(bad, 1, MPI_INT, t, 0, -1, MPI_INT, ctr[t], w.win));
    raised_req(MPI_ERR_COUNT, "MPIX_Iput_signal with origin count -1", &req,
               MPIX_Iput_signal(bad, -1, MPI_INT, t, 0, 1, MPI_INT, ctr[t], w.win, R));

    /* a NULL request pointer */
    raised(MPI_ERR_ARG, "MPI_Iput with a NULL request pointer",
           MPI_Iput(bad, 1, MPI_INT, t, 0, 1, MPI_INT, w.win, NULL));
    raised(MPI_ERR_ARG, "MPI_Iget with a NULL request pointer",
           MPI_Iget(got, 1, MPI_INT, t, 0, 1, MPI_INT, w.win, NULL));
    raised(MPI_ERR_ARG, "MPIX_Iput_signal with a NULL request pointer",
           MPIX_Iput_signal(bad, 1, MPI_INT, t, 0, 1, MPI_INT, ctr[t], w.win, NULL));

    /* accumulate: an operation that does not apply to the type */
    raised_req(MPI_ERR_OP, "MPI_Iaccumulate with MPI_MAXLOC on MPI_INT", &req,
               MPI_Iaccumulate(bad, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_MAXLOC, w.win, R));
    /* mismatching sizes */
    raised_req(MPI_ERR_TYPE, "MPI_Iput of 2 ints into 1 int", &req,
               MPI_Iput(bad, 2, MPI_INT, t, 0, 1, MPI_INT, w.win, R));

    /* the counter of a put with signal must be owned by the target */
    int rc = MPIX_Put_signal(bad, 1, MPI_INT, t, 0, 1, MPI_INT, ctr[rank], w.win);
    raised(MPI_ERR_ARG, "MPIX_Put_signal with my own counter to my right neighbour", rc);
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, s, &len);
    if (!ok(strncmp(s, "flexrma:", 8) == 0, "its error string starts with flexrma:"))
        diag("MPI_Error_string: %s", s);
    raised_req(MPI_ERR_ARG, "MPIX_Iput_signal with my left neighbour's counter to my right "
                            "neighbour (with 2 ranks they are one: then my own counter)", &req,
               MPIX_Iput_signal(bad, 1, MPI_INT, t, 0, 1, MPI_INT,
                                ctr[left() == t ? rank : left()], w.win, R));
    raised(MPI_ERR_ARG, "MPIX_Put_signal with MPIX_SYNC_NULL",
           MPIX_Put_signal(bad, 1, MPI_INT, t, 0, 1, MPI_INT, MPIX_SYNC_NULL, w.win));

    /* MPI_PROC_NULL: nothing happens, and the request is complete at once */
    int flag = 0;
    raised(MPI_SUCCESS, "MPI_Iput to MPI_PROC_NULL",
           MPI_Iput(bad, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w.win, R));
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    ok(flag && req == MPI_REQUEST_NULL, "the request of MPI_Iput to MPI_PROC_NULL is complete");

    /* the epoch is still usable: a valid put into my region at the right neighbour */
    int e = 200;
    for (int i = 0; i < K; i++)
        src[i] = pat(rank, i, e);
    rc = MPI_Iput(src, K, MPI_INT, t, (MPI_Aint)rank * K, K, MPI_INT, w.win, R);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    raised(MPI_SUCCESS, "a valid MPI_Iput after the errors, in the same fence epoch", rc);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
#undef R
    MPI_Barrier(MPI_COMM_WORLD);
    int want[64] = {0};
    want[left()] = 200;
    ok(window_is(want), "after the argument errors: only the valid put changed my window");
    e_of[left()] = 200;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- epoch errors (8 tests) ---- */

static void epoch_errors(void)
{
    const int t = right(), o = left();
    int bad[K], got[K];
    MPI_Request req;
    for (int i = 0; i < K; i++)
        bad[i] = BAD;
#define R (req = MPI_REQUEST_NULL, &req)
    /* no epoch at all (the last fence had MPI_MODE_NOSUCCEED) */
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iput outside any epoch", &req,
               MPI_Iput(bad, 1, MPI_INT, t, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iget outside any epoch", &req,
               MPI_Iget(got, 1, MPI_INT, t, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iaccumulate outside any epoch", &req,
               MPI_Iaccumulate(bad, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, w.win, R));

    /* PSCW: a target outside the start group (myself: the group is my right neighbour) */
    MPI_Group gt = world_subgroup(&t, 1), go = world_subgroup(&o, 1);
    MPI_Win_post(go, 0, w.win);
    MPI_Win_start(gt, 0, w.win);
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iput to a rank outside the MPI_Win_start group", &req,
               MPI_Iput(bad, 1, MPI_INT, rank, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iget from a rank outside the MPI_Win_start group", &req,
               MPI_Iget(got, 1, MPI_INT, rank, 0, 1, MPI_INT, w.win, R));
    MPI_Win_complete(w.win);
    MPI_Win_wait(w.win);
    MPI_Group_free(&gt);
    MPI_Group_free(&go);

    /* lock: a target not locked (myself) */
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iput to a rank not locked, while another is", &req,
               MPI_Iput(bad, 1, MPI_INT, rank, 0, 1, MPI_INT, w.win, R));
    raised_req(MPI_ERR_RMA_SYNC, "MPI_Iaccumulate to a rank not locked, while another is", &req,
               MPI_Iaccumulate(bad, 1, MPI_INT, rank, 0, 1, MPI_INT, MPI_SUM, w.win, R));
    MPI_Win_unlock(t, w.win);
#undef R
    MPI_Barrier(MPI_COMM_WORLD);
    ok(window_is(e_of), "after the epoch errors: my window unchanged");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Cancel (8 tests) ---- */

/* In a lock epoch, MPI_Cancel of an MPI_Iput, an MPI_Iget and an MPIX_Iput_signal request fails
 * with MPI_ERR_REQUEST; the requests then complete normally, not cancelled, and the put's data
 * arrives. */
static void cancel(void)
{
    const int t = right();
    int src[K], got[K], one = 7, e = 201, rc = MPI_SUCCESS;
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, e);
        got[i] = -1;
    }
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3];
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
    rc = MPI_Iput(src, K, MPI_INT, t, (MPI_Aint)rank * K, K, MPI_INT, w.win, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Iget(got, K, MPI_INT, t, (MPI_Aint)t * K, K, MPI_INT, w.win, &req[1]);
    raised(MPI_SUCCESS, "MPI_Iput and MPI_Iget in a lock epoch", rc);
    raised(MPI_ERR_REQUEST, "MPI_Cancel of an active MPI_Iput request", MPI_Cancel(&req[0]));
    raised(MPI_ERR_REQUEST, "MPI_Cancel of an active MPI_Iget request", MPI_Cancel(&req[1]));
    rc = MPI_Waitall(2, req, st);
    int c0 = 1, c1 = 1;
    MPI_Test_cancelled(&st[0], &c0);
    MPI_Test_cancelled(&st[1], &c1);
    raised(MPI_SUCCESS, "MPI_Waitall on them after the failed cancels", rc);
    MPI_Win_unlock(t, w.win);
    /* The get read region t of t's window, which nobody writes (rank r puts into region r of
     * other ranks only): zeros. */
    int zeros = 1;
    for (int i = 0; i < K; i++)
        zeros &= got[i] == 0;
    ok(!c0 && !c1 && zeros, "neither request reports itself cancelled; the MPI_Iget's data came");

    /* MPIX_Iput_signal: no epoch needed; cancel fails; the bump arrives */
    rc = MPIX_Iput_signal(&one, 1, MPI_INT, t, (MPI_Aint)rank * K, 1, MPI_INT, ctr[t], w.win,
                          &req[2]);
    raised(MPI_ERR_REQUEST, "MPI_Cancel of an active MPIX_Iput_signal request",
           rc == MPI_SUCCESS ? MPI_Cancel(&req[2]) : rc);
    rc = MPI_Wait(&req[2], MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) /* the bump the left neighbour sent me */
        rc = consume(ctr[rank], 1, w.win);
    raised(MPI_SUCCESS, "MPI_Wait on it after the failed cancel, and the bump arrives", rc);
    MPI_Barrier(MPI_COMM_WORLD);
    /* the put with signal overwrote the first int of the Iput's data */
    int *mine = xmalloc(w.n * sizeof(int)), bad = 0;
    read_own(&w, mine);
    for (int i = 0; i < K; i++)
        bad += mine[left() * K + i] != (i == 0 ? 7 : pat(left(), i, e));
    is_int(bad, 0, "the MPI_Iput whose cancel failed and the MPIX_Iput_signal arrived: wrong ints");
    free(mine);
    e_of[left()] = -1; /* no plain pattern any more: the next round rewrites the region */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- successful rounds after the errors (4 tests) ---- */

static void rounds_after(void)
{
    const int t = right(), o = left();
    int src[K], got[K], e = 202, rc = MPI_SUCCESS;
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, e);
        got[i] = -1;
    }
    /* fence: MPI_Iput and MPI_Iget, MPI_Waitall */
    MPI_Request req[2];
    rc = MPI_Win_fence(0, w.win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Iput(src, K, MPI_INT, t, (MPI_Aint)rank * K, K, MPI_INT, w.win, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Iget(got, K, MPI_INT, t, (MPI_Aint)t * K, K, MPI_INT, w.win, &req[1]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    int rc2 = MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    raised(MPI_SUCCESS, "a fence round of MPI_Iput and MPI_Iget after the errors",
           rc != MPI_SUCCESS ? rc : rc2);
    e_of[o] = e;
    MPI_Barrier(MPI_COMM_WORLD);
    ok(window_is(e_of), "the fence round's MPI_Iput arrived");
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPIX_Put_signal, no epoch, and the owner waits for the bump */
    e = 203;
    for (int i = 0; i < K; i++)
        src[i] = pat(rank, i, e);
    rc = MPIX_Put_signal(src, K, MPI_INT, t, (MPI_Aint)rank * K, K, MPI_INT, ctr[t], w.win);
    if (rc == MPI_SUCCESS)
        rc = consume(ctr[rank], 1, w.win);
    raised(MPI_SUCCESS, "MPIX_Put_signal after the errors, the bump waited for", rc);
    int there = 1;
    for (int i = 0; i < K; i++)
        there &= w.buf[o * K + i] == pat(o, i, e);
    ok(there, "the MPIX_Put_signal's data is in my window when the bump is");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    test_max_ranks(64);
    tap_plan(29 + 8 + 8 + 4);
    iwin_create(&w, (size_t)nprocs * K);
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(count_errors, &eh);
    MPI_Win_set_errhandler(w.win, eh);
    MPI_Errhandler_free(&eh);
    MPI_Sync mine;
    shared_counter_alloc(w.win, &mine, &ctr);
    MPI_Barrier(MPI_COMM_WORLD);

    argument_errors();
    epoch_errors();
    cancel();
    rounds_after();

    shared_counter_free(w.win, &mine, ctr);
    iwin_free(&w);
    return test_done();
}
