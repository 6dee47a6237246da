/* t_notify.c - notified RMA (docs/specification.md, section 13): the MPI Forum draft's calls
 * (MPI_Win_notify_set_num, MPI_Put_notify, MPI_Get_notify, MPI_Win_notify_get_value and
 * set_value) on every window flavor and in every epoch kind, mixed on one window with the
 * counters, MPIX_Put_signal and MPI_Iput; notification values across MPI_Win_change_comm; and
 * Open MPI's MPIX_ extension (MPIX_Win_allocate_notify, MPIX_Put_notify, MPIX_Get_notify,
 * MPIX_Win_wait_notify, MPIX_Win_test_notify).
 *
 * The consumer of a notification only polls MPI_Win_notify_get_value (or MPIX_Win_test_notify)
 * and then reads its window with plain loads: the count must rise while the target makes no
 * other call (flexrma progresses inside the read), and the data of every notification counted
 * must be there. A poll that sees nothing for 20 s fails the test instead of hanging.
 * Run in every variant: shared memory, messages only (.am), the progress agent (.async),
 * simulated nodes (.nodes2, where the shared flavor is left out: it cannot span nodes; so
 * across hosts). */
#include "common.h"
#include "sync_common.h"

#include <unistd.h>

#define KMAX 3000   /* ints: beyond the eager limit (8192 bytes) at full size */
#define ROUNDS 12
#define IDX_DATA 0  /* a put from my left neighbour arrived */
#define IDX_ACK 1   /* my right neighbour took my put */
#define IDX_GET 2   /* my left neighbour read my exposed half */
#define NUM 3

enum { F_CREATE, F_ALLOCATE, F_DYNAMIC, F_SHARED, F_COUNT };
static const char *const flavor_name[F_COUNT] = {"create", "allocate", "dynamic", "shared"};

/* A window of 2 * KMAX ints per rank: [0, KMAX) receives puts from the left neighbour,
 * [KMAX, 2 KMAX) is read by it with gets. */
typedef struct {
    MPI_Win win;
    int flavor;
    int *buf;
    MPI_Aint *at; /* dynamic: each rank's buf address (disp_unit 1); else 0 (disp_unit int) */
} nwin;

static void nwin_create(nwin *w, int flavor)
{
    MPI_Aint bytes = 2 * KMAX * (MPI_Aint)sizeof(int);
    w->flavor = flavor;
    w->at = calloc((size_t)nprocs, sizeof *w->at);
    switch (flavor) {
    case F_CREATE:
        w->buf = xmalloc((size_t)bytes);
        MPI_Win_create(w->buf, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        break;
    case F_ALLOCATE:
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->buf, &w->win);
        break;
    case F_SHARED:
        MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->buf,
                                &w->win);
        break;
    default: {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w->buf);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->buf, bytes);
        MPI_Aint mine;
        MPI_Get_address(w->buf, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w->at, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    }
    memset(w->buf, 0, (size_t)bytes);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void nwin_free(nwin *w)
{
    if (w->flavor == F_DYNAMIC)
        MPI_Win_detach(w->win, w->buf);
    MPI_Win_free(&w->win);
    if (w->flavor == F_CREATE)
        free(w->buf);
    if (w->flavor == F_DYNAMIC)
        MPI_Free_mem(w->buf);
    free(w->at);
}

/* The displacement of int i of rank r's window. */
static MPI_Aint disp(const nwin *w, int r, int i)
{
    return w->flavor == F_DYNAMIC ? w->at[r] + i * (MPI_Aint)sizeof(int) : i;
}

/* Poll my counter idx with MPI_Win_notify_get_value alone until it reaches want (20 s at most);
 * returns the last value read, or -1 on an error. */
static MPI_Count poll_value(MPI_Win win, int idx, MPI_Count want)
{
    MPI_Count v = -1;
    double until = MPI_Wtime() + 20;
    do {
        if (MPI_Win_notify_get_value(win, idx, &v) != MPI_SUCCESS)
            return -1;
    } while (v < want && MPI_Wtime() < until);
    return v;
}

/* Rounds of a ring in a lock_all epoch: put k ints to the right with a notification, wait for
 * the left neighbour's by polling, check its data, acknowledge it with a notified put of no data,
 * wait for the right neighbour's acknowledgement. k alternates small (eager) and large. */
static int ring_rounds(nwin *w, const char *what)
{
    int fails = 0, *src = xmalloc(KMAX * sizeof(int)), rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Win_lock_all(0, w->win));
    for (int round = 0; round < ROUNDS; round++) {
        int k = round % 2 ? KMAX : 5;
        fill_pat(src, (size_t)k, rank, round);
        KEEP_RC(rc, MPI_Put_notify(src, k, MPI_INT, right(), disp(w, right(), 0), k, MPI_INT,
                                   IDX_DATA, w->win));
        MPI_Count got = poll_value(w->win, IDX_DATA, 1);
        if (got != 1 || !is_pat(w->buf, (size_t)k, left(), round)) {
            if (!fails++)
                diag("%s round %d: notification value %lld", what, round, (long long)got);
        }
        KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_DATA, 0));
        KEEP_RC(rc, MPI_Put_notify(NULL, 0, MPI_INT, left(), disp(w, left(), 0), 0, MPI_INT,
                                   IDX_ACK, w->win));
        if (poll_value(w->win, IDX_ACK, 1) != 1 && !fails++)
            diag("%s round %d: no acknowledgement", what, round);
        KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_ACK, 0));
        KEEP_RC(rc, MPI_Win_flush(right(), w->win)); /* src is mine again */
    }
    KEEP_RC(rc, MPI_Win_unlock_all(w->win));
    free(src);
    return ok(fails == 0 && rc == MPI_SUCCESS, "%s: %d rounds of notified puts, polled", what,
              ROUNDS) || (diag("rc %d", rc), 0);
}

/* MPI_Get_notify: the right neighbour's exposed half is read; it sees its counter rise without
 * calling anything else, and the data arrives by the flush. */
static int get_rounds(nwin *w, const char *what)
{
    int rc = MPI_SUCCESS, good = 1, *dst = xmalloc(KMAX * sizeof(int));
    fill_pat(w->buf + KMAX, KMAX, rank, 77);
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w->win));
    KEEP_RC(rc, MPI_Get_notify(dst, KMAX, MPI_INT, right(), disp(w, right(), KMAX), KMAX, MPI_INT,
                               IDX_GET, w->win));
    MPI_Count seen = poll_value(w->win, IDX_GET, 1);
    KEEP_RC(rc, MPI_Win_unlock(right(), w->win));
    good = seen == 1 && is_pat(dst, KMAX, right(), 77);
    KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_GET, 0));
    free(dst);
    MPI_Barrier(MPI_COMM_WORLD);
    return ok(good && rc == MPI_SUCCESS, "%s: MPI_Get_notify counted at the target (value %lld)",
              what, (long long)seen);
}

/* A notified put in a fence epoch and in a PSCW epoch: the target polls before closing it. */
static int active_target(nwin *w, const char *what)
{
    int rc = MPI_SUCCESS, good = 1, src[4];
    fill_pat(src, 4, rank, 200);
    KEEP_RC(rc, MPI_Win_fence(0, w->win));
    KEEP_RC(rc, MPI_Put_notify(src, 4, MPI_INT, right(), disp(w, right(), 0), 4, MPI_INT,
                               IDX_DATA, w->win));
    good &= poll_value(w->win, IDX_DATA, 1) == 1 && is_pat(w->buf, 4, left(), 200);
    KEEP_RC(rc, MPI_Win_fence(0, w->win));
    KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_DATA, 0));

    MPI_Group to = world_subgroup((int[]){right()}, 1), from = world_subgroup((int[]){left()}, 1);
    fill_pat(src, 4, rank, 201);
    KEEP_RC(rc, MPI_Win_post(from, 0, w->win));
    KEEP_RC(rc, MPI_Win_start(to, 0, w->win));
    KEEP_RC(rc, MPI_Put_notify(src, 4, MPI_INT, right(), disp(w, right(), 0), 4, MPI_INT,
                               IDX_DATA, w->win));
    good &= poll_value(w->win, IDX_DATA, 1) == 1 && is_pat(w->buf, 4, left(), 201);
    KEEP_RC(rc, MPI_Win_complete(w->win));
    KEEP_RC(rc, MPI_Win_wait(w->win));
    KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_DATA, 0));
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    return ok(good && rc == MPI_SUCCESS, "%s: notified puts in fence and PSCW epochs", what);
}

/* On one window: a counter bumped by MPIX_Put_signal, an MPI_Iput, and a notified put, all to
 * the right neighbour; each arrives where it should and counts where it should. */
static int mixed(nwin *w, const char *what)
{
    int rc = MPI_SUCCESS, good = 1, a[4], b[4], c[4];
    MPI_Sync mine, *all = NULL;
    KEEP_RC(rc, shared_counter_alloc(w->win, &mine, &all));
    MPI_Request arrived, put;
    KEEP_RC(rc, MPI_Win_sync_object_init(mine, 1, w->win, MPI_INFO_NULL, &arrived));
    KEEP_RC(rc, MPI_Start(&arrived));
    MPI_Barrier(MPI_COMM_WORLD); /* armed everywhere */
    fill_pat(a, 4, rank, 300);
    fill_pat(b, 4, rank, 301);
    fill_pat(c, 4, rank, 302);
    KEEP_RC(rc, MPIX_Put_signal(a, 4, MPI_INT, right(), disp(w, right(), 0), 4, MPI_INT,
                                all[right()], w->win));
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w->win));
    KEEP_RC(rc, MPI_Iput(b, 4, MPI_INT, right(), disp(w, right(), 4), 4, MPI_INT, w->win, &put));
    KEEP_RC(rc, MPI_Put_notify(c, 4, MPI_INT, right(), disp(w, right(), 8), 4, MPI_INT,
                               IDX_DATA, w->win));
    KEEP_RC(rc, MPI_Wait(&put, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Win_unlock(right(), w->win));
    good &= poll_value(w->win, IDX_DATA, 1) == 1 && is_pat(w->buf + 8, 4, left(), 302);
    KEEP_RC(rc, MPI_Wait(&arrived, MPI_STATUS_IGNORE));
    good &= is_pat(w->buf, 4, left(), 300);
    MPI_Barrier(MPI_COMM_WORLD); /* every Iput waited for: complete at its target */
    good &= is_pat(w->buf + 4, 4, left(), 301);
    MPI_Count v = -1;
    KEEP_RC(rc, MPI_Win_notify_get_value(w->win, IDX_DATA, &v));
    good &= v == 1; /* the signal and the Iput counted nothing here */
    KEEP_RC(rc, MPI_Win_notify_set_value(w->win, IDX_DATA, 0));
    MPI_Request_free(&arrived);
    shared_counter_free(w->win, &mine, all);
    return ok(good && rc == MPI_SUCCESS, "%s: put_signal, Iput and Put_notify on one window", what);
}

/* A notified put covered by a started sync-ops request (no other epoch): it belongs to the
 * request's counter epoch, whose completion bumps the right neighbour's MPI_Sync counter, and is
 * notified too. */
static void under_sync_ops(void)
{
    nwin w;
    nwin_create(&w, F_ALLOCATE);
    int rc = MPI_SUCCESS, good = 1, a[4];
    MPI_Sync mine, *all = NULL;
    MPI_Request arrived, done;
    KEEP_RC(rc, MPI_Win_notify_set_num(w.win, MPI_INFO_NULL, 1));
    KEEP_RC(rc, shared_counter_alloc(w.win, &mine, &all));
    KEEP_RC(rc, MPI_Win_sync_object_init(mine, 1, w.win, MPI_INFO_NULL, &arrived));
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all[right()], w.win,
                                      MPI_INFO_NULL, &done));
    KEEP_RC(rc, MPI_Start(&arrived));
    KEEP_RC(rc, MPI_Start(&done));
    fill_pat(a, 4, rank, 400);
    KEEP_RC(rc, MPI_Put_notify(a, 4, MPI_INT, right(), 0, 4, MPI_INT, 0, w.win));
    good &= poll_value(w.win, 0, 1) == 1 && is_pat(w.buf, 4, left(), 400);
    KEEP_RC(rc, MPI_Wait(&done, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Wait(&arrived, MPI_STATUS_IGNORE));
    MPI_Request_free(&done);
    MPI_Request_free(&arrived);
    shared_counter_free(w.win, &mine, all);
    ok(good && rc == MPI_SUCCESS, "a notified put inside a sync-ops request's counter epoch");
    nwin_free(&w);
}

static void flavor_tests(int flavor)
{
    nwin w;
    char what[64];
    snprintf(what, sizeof what, "%s window", flavor_name[flavor]);
    nwin_create(&w, flavor);
    int rc = MPI_Win_notify_set_num(w.win, MPI_INFO_NULL, NUM);
    ok(rc == MPI_SUCCESS, "%s: MPI_Win_notify_set_num(%d)", what, NUM);
    ring_rounds(&w, what);
    get_rounds(&w, what);
    active_target(&w, what);
    mixed(&w, what);
    nwin_free(&w);
}

/* Values survive MPI_Win_change_comm: the last rank leaves; everyone's count from before is
 * still there (the leaver's too, over its window alone), and the ring of the remaining members
 * notifies on. */
static void across_change(void)
{
    if (nprocs < 3) {
        skip(1, "MPI_Win_change_comm needs 3 ranks here");
        return;
    }
    nwin w;
    nwin_create(&w, F_ALLOCATE);
    int rc = MPI_SUCCESS, good = 1, one = 1;
    KEEP_RC(rc, MPI_Win_notify_set_num(w.win, MPI_INFO_NULL, 1));
    KEEP_RC(rc, MPI_Win_lock_all(0, w.win));
    KEEP_RC(rc, MPI_Put_notify(&one, 1, MPI_INT, right(), 0, 1, MPI_INT, 0, w.win));
    good &= poll_value(w.win, 0, 1) == 1;
    KEEP_RC(rc, MPI_Win_unlock_all(w.win));
    MPI_Barrier(MPI_COMM_WORLD);
    int leaving = rank == nprocs - 1, n = nprocs - 1;
    MPI_Comm stay;
    MPI_Comm_split(MPI_COMM_WORLD, leaving ? MPI_UNDEFINED : 0, rank, &stay);
    KEEP_RC(rc, MPI_Win_change_comm(leaving ? MPI_COMM_NULL : stay, 0, w.win));
    MPI_Count v = -1;
    KEEP_RC(rc, MPI_Win_notify_get_value(w.win, 0, &v));
    if (v != 1)
        diag("value %lld right after the change, expected 1 (rc %d)", (long long)v, rc);
    good &= v == 1;
    MPI_Barrier(MPI_COMM_WORLD); /* everyone read before the new ring puts */
    if (!leaving) {
        int r, me;
        MPI_Comm_rank(stay, &me);
        r = (me + 1) % n;
        KEEP_RC(rc, MPI_Win_lock_all(0, w.win));
        KEEP_RC(rc, MPI_Put_notify(&one, 1, MPI_INT, r, 0, 1, MPI_INT, 0, w.win));
        MPI_Count after = poll_value(w.win, 0, 2);
        if (after != 2)
            diag("value %lld after the change, expected 2", (long long)after);
        good &= after == 2;
        KEEP_RC(rc, MPI_Win_unlock_all(w.win));
        MPI_Comm_free(&stay);
    }
    ok(good && rc == MPI_SUCCESS, "notification values across MPI_Win_change_comm (%s)",
       leaving ? "leaver" : "remaining member");
    MPI_Win_free(&w.win);
    free(w.at);
}

/* Open MPI's extension: ids after the window, wait and test take one notification each. */
static void mpix_ext(void)
{
#ifndef OMPI_HAVE_MPI_EXT_NOTIFIED_RMA
    ok(0, "flexrma.h defines OMPI_HAVE_MPI_EXT_NOTIFIED_RMA");
#else
    int *base, rc = MPI_SUCCESS, good = 1, src[2] = {rank, 7}, dst[2] = {-1, -1};
    MPI_Win win;
    KEEP_RC(rc, MPIX_Win_allocate_notify(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                         MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    base[0] = base[1] = -1;
    base[2] = rank;
    base[3] = 100 + rank;
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, MPI_Win_lock_all(0, win));
    int id = 1 + rank % MPIX_MAX_NOTIFICATION_IDX, from = 1 + left() % MPIX_MAX_NOTIFICATION_IDX;
    for (int i = 0; i < 3; i++) /* three notifications with one id: three waits */
        KEEP_RC(rc, MPIX_Put_notify(src, 2, MPI_INT, right(), 0, 2, MPI_INT, win, id));
    for (int i = 0; i < 2; i++)
        KEEP_RC(rc, MPIX_Win_wait_notify(win, from));
    int flag = 0;
    double until = MPI_Wtime() + 20;
    while (!flag && MPI_Wtime() < until)
        KEEP_RC(rc, MPIX_Win_test_notify(win, from, &flag));
    good &= flag && base[0] == left() && base[1] == 7;
    KEEP_RC(rc, MPIX_Win_test_notify(win, from, &flag));
    good &= !flag; /* all three taken */
    KEEP_RC(rc, MPIX_Get_notify(dst, 2, MPI_INT, right(), 2, 2, MPI_INT, win,
                                MPIX_MAX_NOTIFICATION_IDX));
    KEEP_RC(rc, MPIX_Win_wait_notify(win, MPIX_MAX_NOTIFICATION_IDX));
    KEEP_RC(rc, MPI_Win_flush(right(), win));
    good &= dst[0] == right() && dst[1] == 100 + right();
    KEEP_RC(rc, MPI_Win_unlock_all(win));
    MPI_Win_free(&win);
    ok(good && rc == MPI_SUCCESS, "MPIX_Put_notify/Get_notify/Win_wait_notify/Win_test_notify");
#endif
}

/* Open MPI's MPIX_Put_notify from a process without notification counters on the window is the
 * plain put (ext/notify), whatever its target has: the target's counter does not count it, also
 * where the put is a copy into the target's memory (the short path). Even ranks make a counter
 * (MPI_Win_notify_set_num takes each member's own number); an odd rank puts to an even right
 * neighbour. */
static void mpix_plain(void)
{
    int *base, rc = MPI_SUCCESS, good = 1, src[2] = {rank, 9};
    MPI_Win win;
    KEEP_RC(rc, MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                 &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win)); /* stores others then overwrite */
    base[0] = base[1] = -1;
    KEEP_RC(rc, MPI_Win_unlock(rank, win));
    KEEP_RC(rc, MPI_Win_notify_set_num(win, MPI_INFO_NULL, rank % 2 == 0));
    int sends = rank % 2 == 1 && right() % 2 == 0, gets = rank % 2 == 0 && left() % 2 == 1;
    KEEP_RC(rc, MPI_Win_lock_all(0, win));
    if (sends)
        KEEP_RC(rc, MPIX_Put_notify(src, 2, MPI_INT, right(), 0, 2, MPI_INT, win, 0));
    KEEP_RC(rc, MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Count v = -1;
    if (rank % 2 == 0)
        KEEP_RC(rc, MPI_Win_notify_get_value(win, 0, &v));
    if (gets)
        good = base[0] == left() && base[1] == 9 && v == 0;
    if (!good)
        diag("data %d %d from rank %d, counter 0 holds %lld", base[0], base[1], left(),
             (long long)v);
    MPI_Win_free(&win);
    ok(good && rc == MPI_SUCCESS,
       "MPIX_Put_notify from a process without counters: the plain put, not counted");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    /* MPI_Win_allocate_shared over MPI_COMM_WORLD needs one node: not across simulated nodes,
     * nor across hosts (the cluster stage) */
    const char *nodes = getenv("FLEXRMA_TEST_NODES");
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int shared = !(nodes && *nodes) && node_size == nprocs;
    tap_plan(F_COUNT * 5 + 4);
    for (int f = 0; f < F_COUNT; f++) {
        if (f == F_SHARED && !shared) {
            skip(5, "the shared flavor would span nodes (simulated or real)");
            continue;
        }
        flavor_tests(f);
    }
    under_sync_ops();
    across_change();
    mpix_ext();
    mpix_plain();
    return test_done();
}
