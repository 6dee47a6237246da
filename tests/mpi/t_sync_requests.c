/* t_sync_requests.c - sync-ops and sync-object requests as MPI persistent requests
 * (docs/specification.md section 6, "Requests" and "Extensions"): MPI_Startall; every wait and
 * test function over arrays mixing them with the application's own MPI_Isend/MPI_Irecv (indices,
 * statuses: the point-to-point ones right, the sync ones empty); MPI_Test polling;
 * MPI_Request_get_status; MPI_Request_free of inactive and of active requests (which complete in
 * the background); MPI_Cancel of an armed sync-object request; and the extensions: automatic
 * restart, remote completion, MPIX_Win_sync_object_change_count.
 *
 * Every rank puts into (or bumps the counter of) its right neighbour and consumes what its left
 * neighbour sends; barriers keep the ranks in step where a check needs "before" and "after". */
#include "sync_common.h"

#define K 64
#define AR 20 /* rounds of the automatic restart test */
#define TAG 40

static iwin w; /* AR regions of K ints, region r at r*K; with at least nprocs regions */
static size_t nregions;

/* A new counter of this rank on w; *right_c: the right neighbour's new one (collective). */
static MPI_Sync new_counter(MPI_Sync *right_c)
{
    MPI_Sync c, *all;
    shared_counter_alloc(w.win, &c, &all);
    *right_c = all[right()];
    free(all);
    return c;
}

static void free_counter(MPI_Sync *c) { shared_counter_free(w.win, c, NULL); }

/* Region r of one's own window holds K ints of pattern e from rank s. */
static int region_is(int r, int s, int e) { return is_pat(w.buf + (size_t)r * K, K, s, e); }

/* K ints of this rank's pattern e. */
static void fill(int *buf, int e) { fill_pat(buf, K, rank, e); }

/* ---- MPI_Startall (4 tests) ---- */

/* A put request to each neighbour and the count-nn object request, started by one MPI_Startall
 * and completed by one MPI_Waitall. Each rank puts into region `rank` of its neighbours. */
static void startall(void)
{
    int nb[2], nn = neighbours(nb), rc = MPI_SUCCESS, src[K];
    MPI_Sync c, *all;
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));
    fill(src, 100);
    MPI_Request req[3];
    MPI_Status st[3];
    for (int k = 0; k < nn; k++)
        KEEP_RC(rc, MPI_Win_sync_ops_init(nb[k], MPI_MODE_WIN_PUT, all[nb[k]], w.win,
                                          MPI_INFO_NULL, &req[k]));
    KEEP_RC(rc, MPI_Win_sync_object_init(c, nn, w.win, MPI_INFO_NULL, &req[nn]));
    KEEP_RC(rc, MPI_Startall(nn + 1, req));
    for (int k = 0; k < nn; k++)
        KEEP_RC(rc, MPI_Put(src, K, MPI_INT, nb[k], (MPI_Aint)rank * K, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Waitall(nn + 1, req, st));
    is_int(rc, MPI_SUCCESS, "MPI_Startall and MPI_Waitall over %d sync requests", nn + 1);
    int empty = 1;
    for (int k = 0; k <= nn; k++)
        empty &= status_empty(&st[k], "MPI_Waitall");
    ok(empty, "MPI_Waitall: the sync requests' statuses are empty");
    int data = 1;
    for (int k = 0; k < nn; k++)
        data &= region_is(nb[k], nb[k], 100);
    ok(data, "the neighbours' puts are in the window when MPI_Waitall returns");
    /* Arrays of one take MPI_Start's and MPI_Wait's paths: the same round again, one request per
     * call. The barrier keeps a neighbour's new puts off region data the check above still
     * reads. */
    MPI_Barrier(MPI_COMM_WORLD);
    fill(src, 101);
    for (int k = 0; k <= nn; k++)
        KEEP_RC(rc, MPI_Startall(1, &req[k]));
    for (int k = 0; k < nn; k++)
        KEEP_RC(rc, MPI_Put(src, K, MPI_INT, nb[k], (MPI_Aint)rank * K, K, MPI_INT, w.win));
    for (int k = 0; k <= nn; k++)
        KEEP_RC(rc, MPI_Waitall(1, &req[k], &st[k]));
    data = 1;
    for (int k = 0; k < nn; k++)
        data &= region_is(nb[k], nb[k], 101);
    ok(rc == MPI_SUCCESS && data, "MPI_Startall and MPI_Waitall of one request at a time: the "
                                  "neighbours' puts are in the window (rc %d)", rc);
    for (int k = 0; k <= nn; k++)
        MPI_Request_free(&req[k]);
    shared_counter_free(w.win, &c, all);
}

/* ---- every wait and test function over mixed arrays (6 x 5 tests) ---- */

enum completion { WAITALL, WAITANY, WAITSOME, TESTALL, TESTANY, TESTSOME, N_COMPLETIONS };
static const char *completion_name[] = {"MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                                        "MPI_Testall", "MPI_Testany", "MPI_Testsome"};

/* req[0]: sync-ops request putting into the right neighbour; req[1]: MPI_Irecv from the left;
 * req[2]: sync-object request consuming the left neighbour's bump; req[3]: MPI_Isend to the
 * right. All four completed by one function, in whatever order it reports them. */
static void mixed(enum completion how)
{
    const char *fn = completion_name[how];
    int rc = MPI_SUCCESS, src[K], out[K], in[K], tag = TAG + how;
    MPI_Sync right_c, c = new_counter(&right_c);
    fill(src, 200 + how);
    fill(out, 300 + how);
    for (int i = 0; i < K; i++)
        in[i] = -1;

    MPI_Request req[4];
    MPI_Status st[4], s1, ss[4];
    int done[4] = {0, 0, 0, 0}, idx, ids[4], flag, outcount;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, right_c, w.win, MPI_INFO_NULL,
                                      &req[0]));
    KEEP_RC(rc, arm_object(c, 1, w.win, &req[2]));
    KEEP_RC(rc, MPI_Start(&req[0]));
    KEEP_RC(rc, MPI_Irecv(in, K, MPI_INT, left(), tag, MPI_COMM_WORLD, &req[1]));
    KEEP_RC(rc, MPI_Put(src, K, MPI_INT, right(), 0, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Isend(out, K, MPI_INT, right(), tag, MPI_COMM_WORLD, &req[3]));

    switch (how) {
    case WAITALL:
        KEEP_RC(rc, MPI_Waitall(4, req, st));
        for (int i = 0; i < 4; i++)
            done[i] = 1;
        break;
    case TESTALL:
        for (flag = 0; !flag && rc == MPI_SUCCESS;)
            KEEP_RC(rc, MPI_Testall(4, req, &flag, st));
        for (int i = 0; i < 4; i++)
            done[i] = flag;
        break;
    case WAITANY:
    case TESTANY:
        for (int n = 0; n < 8 && rc == MPI_SUCCESS;) { /* at most 4 completions, then UNDEFINED */
            flag = 1;
            if (how == WAITANY)
                KEEP_RC(rc, MPI_Waitany(4, req, &idx, &s1));
            else
                KEEP_RC(rc, MPI_Testany(4, req, &idx, &flag, &s1));
            if (!flag)
                continue;
            n++;
            if (idx == MPI_UNDEFINED)
                break;
            if (idx < 0 || idx >= 4) {
                diag("%s returned index %d", fn, idx);
                break;
            }
            done[idx]++;
            st[idx] = s1;
        }
        break;
    case WAITSOME:
    case TESTSOME:
        for (int n = 0; n < 8 && rc == MPI_SUCCESS;) {
            if (how == WAITSOME)
                KEEP_RC(rc, MPI_Waitsome(4, req, &outcount, ids, ss));
            else
                KEEP_RC(rc, MPI_Testsome(4, req, &outcount, ids, ss));
            if (outcount == MPI_UNDEFINED)
                break;
            if (outcount == 0)
                continue;
            n++;
            for (int j = 0; j < outcount && j < 4; j++) {
                if (ids[j] < 0 || ids[j] >= 4) {
                    diag("%s returned index %d", fn, ids[j]);
                    continue;
                }
                done[ids[j]]++;
                st[ids[j]] = ss[j];
            }
        }
        break;
    default:
        break;
    }

    is_int(rc, MPI_SUCCESS, "%s over 2 sync and 2 point-to-point requests", fn);
    int once = done[0] == 1 && done[1] == 1 && done[2] == 1 && done[3] == 1;
    ok(once, "%s: each request reported complete exactly once (%d %d %d %d)", fn, done[0],
       done[1], done[2], done[3]);
    int count = -1, exp[K];
    for (int i = 0; i < K; i++)
        exp[i] = pat(left(), i, 300 + how);
    if (done[1])
        MPI_Get_count(&st[1], MPI_INT, &count);
    ok(done[1] && st[1].MPI_SOURCE == left() && st[1].MPI_TAG == tag && count == K &&
           same_ints(in, exp, K),
       "%s: the MPI_Irecv's status (source %d, tag %d, count %d) and data", fn,
       done[1] ? st[1].MPI_SOURCE : -1, done[1] ? st[1].MPI_TAG : -1, count);
    ok(done[0] && done[2] && status_empty(&st[0], fn) && status_empty(&st[2], fn),
       "%s: the sync requests' statuses are empty", fn);
    ok(done[2] && region_is(0, left(), 200 + how),
       "%s: the left neighbour's put is in the window", fn);
    for (int i = 0; i < 4; i++)
        if (req[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&req[i]);
    free_counter(&c); /* with its barrier: checked before the next round puts */
}

/* ---- MPI_Test and MPI_Request_get_status (2 + 4 tests) ---- */

/* One poll of q: MPI_Test, or MPI_Request_get_status (which leaves the request active). */
static int poll_req(int get_status, MPI_Request *q, int *flag, MPI_Status *st)
{
    return get_status ? MPI_Request_get_status(*q, flag, st) : MPI_Test(q, flag, st);
}

static const struct {
    const char *fn, *before, *until; /* the function; the names of the two tests of polling() */
} poll_names[2] = {
    {"MPI_Test", "MPI_Test of an armed sync-object request before any bump: not complete",
     "an MPI_Test loop sees the request complete, with an empty status"},
    {"MPI_Request_get_status", "MPI_Request_get_status before any bump: not complete",
     "MPI_Request_get_status polled until the bump: complete, empty status"},
};

/* An armed count-1 request polled before the left neighbour's bump (not complete) and until it
 * has come (complete, empty status); with MPI_Request_get_status, also what MPI_Wait and the
 * inactive request say then. */
static void polling(int get_status)
{
    const char *fn = poll_names[get_status].fn;
    MPI_Sync right_c, c = new_counter(&right_c);
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag = -1, polls = 0, rc = arm_object(c, 1, w.win, &q);
    KEEP_RC(rc, poll_req(get_status, &q, &flag, &st));
    ok(rc == MPI_SUCCESS && !flag, "%s (flag %d)", poll_names[get_status].before, flag);
    MPI_Barrier(MPI_COMM_WORLD); /* the bumps come only now */
    KEEP_RC(rc, bump(right(), right_c, w.win));
    for (flag = 0; !flag && rc == MPI_SUCCESS; polls++)
        KEEP_RC(rc, poll_req(get_status, &q, &flag, &st));
    ok(rc == MPI_SUCCESS && flag && status_empty(&st, fn), "%s (rc %d, %d polls)",
       poll_names[get_status].until, rc, polls);
    if (get_status) {
        MPI_Status st2;
        KEEP_RC(rc, MPI_Wait(&q, &st2));
        ok(rc == MPI_SUCCESS && q != MPI_REQUEST_NULL && status_empty(&st2, "MPI_Wait") &&
               sync_value(c, w.win) == 0,
           "MPI_Wait then returns the completion, the persistent request stays allocated, and "
           "the one bump was consumed once (rc %d)", rc);
        flag = -1;
        KEEP_RC(rc, MPI_Request_get_status(q, &flag, &st));
        ok(rc == MPI_SUCCESS && flag && status_empty(&st, "inactive request"),
           "MPI_Request_get_status of the inactive request: complete, empty status");
    }
    MPI_Request_free(&q);
    free_counter(&c);
}

/* ---- MPI_Request_free (4 tests) ---- */

/* Free the armed sync-object request *q on counter c, then let the left neighbour bump c n times,
 * each applied before it goes on (remote completion): what c holds after them. Whatever a freed
 * request still consumes is gone by then. */
static long long free_then_bumps(MPI_Request *q, MPI_Sync c, MPI_Sync right_c, int n, int *rc)
{
    MPI_Info rcinfo = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    KEEP_RC(*rc, MPI_Request_free(q));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        KEEP_RC(*rc, bump_info(right(), right_c, w.win, rcinfo));
    MPI_Barrier(MPI_COMM_WORLD);
    info_free(&rcinfo);
    return sync_value(c, w.win);
}

static int freed_src[K]; /* the origin buffer of a freed request: never reused */

static void request_free(void)
{
    MPI_Sync right_c, c = new_counter(&right_c);
    MPI_Request o = MPI_REQUEST_NULL, q = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;

    /* Inactive requests of both kinds, never started. */
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, right_c, w.win, MPI_INFO_NULL,
                                      &o));
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 1, w.win, MPI_INFO_NULL, &q));
    KEEP_RC(rc, MPI_Request_free(&o));
    KEEP_RC(rc, MPI_Request_free(&q));
    ok(rc == MPI_SUCCESS && o == MPI_REQUEST_NULL && q == MPI_REQUEST_NULL,
       "MPI_Request_free of never-started sync-ops and sync-object requests (rc %d)", rc);

    /* An active sync-ops request, freed right after its put: the put and the bump still come. */
    fill(freed_src, 400);
    rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, right_c, w.win, MPI_INFO_NULL,
                                      &o));
    KEEP_RC(rc, MPI_Start(&o));
    KEEP_RC(rc, MPI_Put(freed_src, K, MPI_INT, right(), 0, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Request_free(&o));
    ok(rc == MPI_SUCCESS && o == MPI_REQUEST_NULL,
       "MPI_Request_free of an active sync-ops request after a put (rc %d)", rc);
    rc = consume(c, 1, w.win);
    ok(rc == MPI_SUCCESS && region_is(0, left(), 400),
       "its bump arrives: the owner's count-1 request completes and the put is there (rc %d)", rc);
    MPI_Barrier(MPI_COMM_WORLD);

    /* An armed sync-object request, freed: it still consumes its bump. Two bumps come, applied
     * before the producer goes on (remote completion); one must be left. */
    rc = arm_object(c, 1, w.win, &q);
    long long v = free_then_bumps(&q, c, right_c, 2, &rc);
    ok(rc == MPI_SUCCESS && v == 1,
       "an armed count-1 sync-object request freed with MPI_Request_free consumes 1 of the 2 "
       "bumps that come later (%lld left, rc %d)", v, rc);
    consume(c, 1, w.win);
    free_counter(&c);
}

/* ---- MPI_Cancel of an armed sync-object request (3 tests) ---- */

static void cancel(void)
{
    MPI_Sync right_c, c = new_counter(&right_c);
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Status st;
    int rc = MPI_SUCCESS, cancelled = -1;
    KEEP_RC(rc, bump(right(), right_c, w.win));
    await_value(c, w.win, 1); /* nothing armed: the bump stays */
    KEEP_RC(rc, arm_object(c, 2, w.win, &q));
    KEEP_RC(rc, MPI_Cancel(&q));
    KEEP_RC(rc, MPI_Wait(&q, &st));
    MPI_Test_cancelled(&st, &cancelled);
    ok(rc == MPI_SUCCESS && cancelled, "MPI_Cancel of an armed count-2 request with 1 bump held: "
                                       "MPI_Test_cancelled says cancelled (rc %d)", rc);
    long long held = sync_value(c, w.win);
    is_int(held, 1, "the cancelled request consumed nothing");
    if (held == 1) /* reusable: take the held bump and the one to come */
        KEEP_RC(rc, MPI_Start(&q));
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    if (held == 1) {
        KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE));
        ok(rc == MPI_SUCCESS && sync_value(c, w.win) == 0,
           "restarted after the cancellation, the request consumes 2 bumps (rc %d)", rc);
    } else { /* a bump is lost already: waiting for 2 could hang */
        skip(1, "the cancellation consumed a bump");
    }
    MPI_Request_free(&q);
    free_counter(&c);
}

/* ---- extensions ---- */

/* MPIX_INFO_SYNC_AUTO_RESTART on both sides: started once, then only MPI_Wait, AR rounds; round
 * r puts into region r, so no round waits for the consumer. MPI_Request_free ends the cycles.
 * (4 tests) */
static int ar_src[AR][K];

static void auto_restart(void)
{
    MPI_Sync right_c, c = new_counter(&right_c);
    MPI_Info info = info_true(MPIX_INFO_SYNC_AUTO_RESTART);
    MPI_Request o = MPI_REQUEST_NULL, q = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS, bad = 0;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, right_c, w.win, info, &o));
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 1, w.win, info, &q));
    KEEP_RC(rc, MPI_Start(&o));
    KEEP_RC(rc, MPI_Start(&q));
    for (int r = 0; r < AR; r++) {
        fill(ar_src[r], 500 + r);
        KEEP_RC(rc, MPI_Put(ar_src[r], K, MPI_INT, right(), (MPI_Aint)r * K, K, MPI_INT, w.win));
        KEEP_RC(rc, MPI_Wait(&o, MPI_STATUS_IGNORE)); /* and a new counter epoch opens */
        KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE)); /* and it is armed again */
        bad += !region_is(r, left(), 500 + r);
    }
    is_int(bad, 0, "%d rounds of MPI_Wait without MPI_Start (auto-restart): rounds with wrong "
                   "data", AR);
    is_int(rc, MPI_SUCCESS, "auto-restart rounds: every call succeeded (first failure shown)");

    /* MPI_Request_free ends the cycles. The restarted sync-ops request completes in the
     * background: one more bump (with no operation), which completes the restarted sync-object
     * request. Armed by the restart, not by the application, that one is disarmed when freed
     * and consumes nothing: the bump that comes next stays in the counter. */
    rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Request_free(&o));
    KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && o == MPI_REQUEST_NULL,
       "MPI_Request_free of the restarted sync-ops request: its last bump still comes and "
       "completes the restarted sync-object request (rc %d)", rc);
    long long v = free_then_bumps(&q, c, right_c, 1, &rc);
    ok(rc == MPI_SUCCESS && v == 1,
       "MPI_Request_free of the sync-object request armed by the restart disarms it: a later "
       "bump stays in the counter (%lld held, rc %d)", v, rc);
    consume(c, (int)(v > 0 ? v : 0), w.win);
    info_free(&info);
    free_counter(&c);
}

/* MPIX_INFO_SYNC_REMOTE_COMPLETE: after MPI_Wait at the origin the bump is applied at the target,
 * so the origin's own read of the target's counter shows it, with nothing armed there. The puts
 * are large: their data travels on its own and the target holds the bump until it has landed,
 * which is when a read could overtake a bump not waited for. (4 tests) */
#define RL (256 * 1024) /* ints: 1 MiB */
#define RC_ROUNDS 10

static void remote_complete(void)
{
    iwin big;
    swin_create(&big, RL);
    MPI_Sync c, *all;
    int rc = shared_counter_alloc(big.win, &c, &all), wrong = 0, owner_wrong = 0;
    int *src = xmalloc((size_t)RL * sizeof(int));
    MPI_Info info = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    MPI_Request o = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all[right()], big.win, info, &o));
    for (int r = 0; r < RC_ROUNDS; r++) {
        for (int i = 0; i < RL; i++)
            src[i] = pat(rank, i, 600 + r);
        KEEP_RC(rc, MPI_Start(&o));
        KEEP_RC(rc, MPI_Put(src, RL, MPI_INT, right(), 0, RL, MPI_INT, big.win));
        KEEP_RC(rc, MPI_Wait(&o, MPI_STATUS_IGNORE));
        long long v = sync_value(all[right()], big.win);
        if (v != r + 1 && wrong++ == 0)
            diag("after MPI_Wait of round %d the target's counter reads %lld", r, v);
        /* The owner learns of the MPI_Wait by a message of its own (which may overtake the
         * bump): its local read must show the bump too (and maybe the next round's: the origin
         * may be a round ahead, its left neighbour's message having come already). */
        MPI_Request sr;
        int token = r;
        MPI_Isend(&token, 1, MPI_INT, right(), 50, MPI_COMM_WORLD, &sr);
        MPI_Recv(&token, 1, MPI_INT, left(), 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long long own = sync_value(c, big.win);
        if (own < r + 1 && owner_wrong++ == 0)
            diag("told of round %d's MPI_Wait by a message, the owner reads %lld", r, own);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
    }
    is_int(wrong, 0, "remote completion, %d rounds of 1 MiB puts: rounds after whose MPI_Wait the "
                     "origin did not read the target's counter as the number of rounds so far",
           RC_ROUNDS);
    is_int(owner_wrong, 0, "... rounds after which the owner, told by a message, did not read at "
                           "least as many");
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, consume(c, RC_ROUNDS, big.win));
    ok(rc == MPI_SUCCESS && sync_value(c, big.win) == 0,
       "the owner then consumes the %d bumps with one request (rc %d)", RC_ROUNDS, rc);
    int bad = 0;
    for (int i = 0; i < RL; i++)
        bad += big.buf[i] != pat(left(), i, 600 + RC_ROUNDS - 1);
    is_int(bad, 0, "the last put is in the owner's window: wrong ints");
    MPI_Request_free(&o);
    info_free(&info);
    shared_counter_free(big.win, &c, all);
    free(src);
    iwin_free(&big);
}

/* MPIX_Win_sync_object_change_count on inactive and active requests (10 tests). */
static void change_count(void)
{
    MPI_Sync right_c, c = new_counter(&right_c);
    MPI_Request q = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS, flag = -1;
    long long v;

    /* Inactive, down: count 3 - 2 = 1, with 2 bumps held. */
    KEEP_RC(rc, bumps(right(), right_c, w.win, 2));
    await_value(c, w.win, 2);
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 3, w.win, MPI_INFO_NULL, &q));
    KEEP_RC(rc, MPIX_Win_sync_object_change_count(q, -2));
    KEEP_RC(rc, start_wait(&q));
    is_int(sync_value(c, w.win), 1,
           "inactive count-3 request changed by -2: completes on 2 held bumps consuming 1; left");

    /* Inactive, up: 1 + 1 = 2, with 1 bump held. */
    KEEP_RC(rc, MPIX_Win_sync_object_change_count(q, +1));
    KEEP_RC(rc, MPI_Start(&q));
    KEEP_RC(rc, MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    ok(!flag, "inactive request changed by +1 to count 2: one held bump does not complete it");
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE));
    is_int(sync_value(c, w.win), 0, "a second bump completes it; both consumed");
    MPI_Request_free(&q);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Active, up: armed with count 1, raised to 2 before any bump. */
    KEEP_RC(rc, arm_object(c, 1, w.win, &q));
    KEEP_RC(rc, MPIX_Win_sync_object_change_count(q, +1));
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    for (flag = 0, v = 0; !flag && v == 0;) { /* until the bump is seen, or (wrongly) taken */
        KEEP_RC(rc, MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
        v = sync_value(c, w.win);
    }
    ok(!flag && v == 1, "armed count-1 request raised to 2: one bump does not complete it "
                        "(flag %d, %lld held)", flag, v);
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    if (!flag)
        KEEP_RC(rc, MPI_Wait(&q, MPI_STATUS_IGNORE));
    is_int(sync_value(c, w.win), 0, "a second bump completes it; both consumed");
    MPI_Request_free(&q);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Active, down to what has arrived: armed with count 3, 2 bumps held, lowered by 1. */
    KEEP_RC(rc, arm_object(c, 3, w.win, &q));
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bumps(right(), right_c, w.win, 2));
    for (flag = 0, v = 0; !flag && v >= 0 && v < 2;) {
        KEEP_RC(rc, MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
        v = sync_value(c, w.win);
    }
    ok(!flag && v == 2, "armed count-3 request with 2 bumps held: not complete (flag %d, %lld "
                        "held)", flag, v);
    KEEP_RC(rc, MPIX_Win_sync_object_change_count(q, -1));
    int flag2 = 0;
    if (!flag)
        KEEP_RC(rc, MPI_Test(&q, &flag2, MPI_STATUS_IGNORE));
    ok(flag2, "lowered by 1 to the 2 held bumps: the next MPI_Test completes it");
    is_int(sync_value(c, w.win), 0, "it consumed the 2 bumps");
    if (!flag && !flag2) { /* do not leave it armed */
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&q);

    /* Active, down to 0 with nothing held. */
    flag = 0;
    KEEP_RC(rc, arm_object(c, 2, w.win, &q));
    KEEP_RC(rc, MPIX_Win_sync_object_change_count(q, -2));
    KEEP_RC(rc, MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    ok(flag, "armed count-2 request lowered to 0: complete at once");
    if (!flag) {
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&q);
    is_int(rc, MPI_SUCCESS, "change_count: every call succeeded (first failure shown)");
    free_counter(&c);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(4 + N_COMPLETIONS * 5 + 2 + 4 + 4 + 3 + 4 + 4 + 10);
    nregions = (size_t)(nprocs > AR ? nprocs : AR);
    swin_create(&w, nregions * K);
    MPI_Barrier(MPI_COMM_WORLD);

    startall();
    for (int how = 0; how < N_COMPLETIONS; how++)
        mixed((enum completion)how);
    polling(0);
    polling(1);
    request_free();
    cancel();
    auto_restart();
    remote_complete();
    change_count();

    MPI_Barrier(MPI_COMM_WORLD);
    iwin_free(&w);
    return test_done();
}
