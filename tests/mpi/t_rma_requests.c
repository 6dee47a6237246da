/* t_rma_requests.c - MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate: their request
 * completes when the operation is complete at the origin, before the epoch ends; they mix with
 * other requests in one MPI_Waitall (the proposal's MPI_Iput and point-to-point ones); they are
 * refused outside passive-target epochs; the proposal's counters work inside a lock_all epoch.
 * Small and large (beyond FLEXRMA_EAGER_MAX). */
#include "errors_common.h"
#include "sync_common.h"

#define N 16
#define BIG (1 << 14) /* ints: 64 KiB */

static iwin w; /* BIG ints per rank */

/* Part 1 (2 tests): MPI_Rput, wait, overwrite the buffer: the target gets what was there. */
static void rput_then_reuse(int n, const char *what)
{
    int *src = xmalloc((size_t)n * sizeof(int));
    fill_pat(src, (size_t)n, rank, 3);
    MPI_Request r;
    MPI_Win_lock_all(0, w.win);
    MPI_Rput(src, n, MPI_INT, right(), 0, n, MPI_INT, w.win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    memset(src, 0x6b, (size_t)n * sizeof(int)); /* the request said: reusable */
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    ok(is_pat(mine, (size_t)n, left(), 3), "%s: the target holds the buffer as it was at MPI_Rput",
       what);
    free(mine);
    free(src);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 2 (2 tests): MPI_Rget completed by MPI_Wait (small) and by an MPI_Test loop (large): the
 * data is there before the epoch ends. */
static void rget_inside_epoch(void)
{
    int small[N] = {0}, *big = xmalloc(BIG * sizeof(int)), flag = 0;
    MPI_Request r;
    memset(big, 0, BIG * sizeof(int));
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win);
    MPI_Rget(small, N, MPI_INT, right(), 0, N, MPI_INT, w.win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ok(is_pat(small, N, rank, 3), "MPI_Rget: data there after MPI_Wait, inside the lock epoch");
    MPI_Rget(big, BIG, MPI_INT, right(), 0, BIG, MPI_INT, w.win, &r);
    for (long spins = 0; !flag && spins < 100000000L; spins++)
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    ok(flag && is_pat(big, BIG, rank, 3), "MPI_Rget of 64 KiB: data there once MPI_Test says so");
    MPI_Win_unlock(right(), w.win);
    free(big);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 3 (2 tests): MPI_Raccumulate into rank 0 by everyone, MPI_Rget_accumulate fetch-and-add
 * tickets, both completed by MPI_Waitall. */
static void raccumulate_and_tickets(void)
{
    enum { R = 40 };
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        w.buf[0] = w.buf[1] = 0;
        MPI_Win_unlock(0, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1, tickets[R];
    MPI_Request reqs[2 * R];
    MPI_Win_lock_all(0, w.win);
    for (int i = 0; i < R; i++) {
        MPI_Raccumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, w.win, &reqs[2 * i]);
        MPI_Rget_accumulate(&one, 1, MPI_INT, &tickets[i], 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM,
                            w.win, &reqs[2 * i + 1]);
    }
    MPI_Waitall(2 * R, reqs, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int total = R * nprocs, *all = rank == 0 ? xmalloc((size_t)total * sizeof(int)) : NULL;
    MPI_Gather(tickets, R, MPI_INT, all, R, MPI_INT, 0, MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        char *seen = calloc((size_t)total, 1);
        for (int i = 0; i < total; i++)
            bad += all[i] < 0 || all[i] >= total || seen[all[i]]++;
        free(seen);
        free(all);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        is_int(w.buf[0], total, "MPI_Raccumulate by every rank: exact sum");
        MPI_Win_unlock(0, w.win);
    } else {
        ok(1, "MPI_Raccumulate by every rank (checked at rank 0)");
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    is_int(bad, 0, "MPI_Rget_accumulate tickets: duplicates or out of range");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 4 (1 test): MPI_Rput, the proposal's MPI_Iput and a point-to-point exchange in one
 * MPI_Waitall. */
static void mixed_waitall(void)
{
    int a[N], b[N], out = rank, in = -1;
    fill_pat(a, N, rank, 11);
    fill_pat(b, N, rank, 12);
    MPI_Request reqs[4];
    MPI_Win_lock_all(0, w.win);
    MPI_Rput(a, N, MPI_INT, right(), 0, N, MPI_INT, w.win, &reqs[0]);
    MPI_Iput(b, N, MPI_INT, right(), N, N, MPI_INT, w.win, &reqs[1]);
    MPI_Irecv(&in, 1, MPI_INT, left(), 9, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(&out, 1, MPI_INT, right(), 9, MPI_COMM_WORLD, &reqs[3]);
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    ok(in == left() && is_pat(mine, N, left(), 11) && is_pat(mine + N, N, left(), 12),
       "MPI_Rput, MPI_Iput, MPI_Irecv and MPI_Isend in one MPI_Waitall");
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 5 (6 tests): errors; MPI_PROC_NULL completes at once. */
static void errors(void)
{
    int v = 1;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_SYNC, "MPI_Rput outside any epoch",
           MPI_Rput(&v, 1, MPI_INT, right(), 0, 1, MPI_INT, w.win, &r));
    MPI_Win_fence(0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Rget in a fence epoch",
           MPI_Rget(&v, 1, MPI_INT, right(), 0, 1, MPI_INT, w.win, &r));
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    MPI_Win_lock_all(0, w.win);
    expect(MPI_ERR_ARG, "MPI_Raccumulate without a request",
           MPI_Raccumulate(&v, 1, MPI_INT, right(), 0, 1, MPI_INT, MPI_SUM, w.win, NULL));
    expect(MPI_ERR_OP, "MPI_Rget_accumulate with MPI_OP_NULL",
           MPI_Rget_accumulate(&v, 1, MPI_INT, &v, 1, MPI_INT, right(), 0, 1, MPI_INT,
                               MPI_OP_NULL, w.win, &r));
    ok(r == MPI_REQUEST_NULL, "the failed calls made no request");
    MPI_Rput(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w.win, &r);
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    ok(flag, "MPI_Rput to MPI_PROC_NULL is complete at once");
    MPI_Win_unlock_all(w.win);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 6 (2 tests): the proposal's counters inside a lock_all epoch. A started sync-ops request
 * on the right neighbour's counter covers an MPI_Put and an MPI_Rput to it (the counter epoch
 * takes them, docs/specification.md section 6); the neighbour's sync-object request sees the
 * bump and then finds both in its window while every lock_all epoch is still open. */
static void counters_in_lock_all(void)
{
    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(w.win, &mine, &all), a[N], b[N];
    fill_pat(a, N, rank, 21);
    fill_pat(b, N, rank, 22);
    MPI_Request ops = MPI_REQUEST_NULL, obj = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all[right()], w.win,
                                      MPI_INFO_NULL, &ops));
    KEEP_RC(rc, MPI_Win_sync_object_init(mine, 1, w.win, MPI_INFO_NULL, &obj));
    MPI_Win_lock_all(0, w.win);
    KEEP_RC(rc, MPI_Start(&ops));
    KEEP_RC(rc, MPI_Put(a, N, MPI_INT, right(), 0, N, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Rput(b, N, MPI_INT, right(), N, N, MPI_INT, w.win, &r));
    KEEP_RC(rc, MPI_Wait(&r, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Wait(&ops, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Start(&obj));
    KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
    int there = is_pat(w.buf, N, left(), 21) && is_pat(w.buf + N, N, left(), 22);
    MPI_Win_unlock_all(w.win);
    is_int(rc, MPI_SUCCESS, "counters in a lock_all epoch: every call succeeds");
    ok(there, "counters in a lock_all epoch: MPI_Put and MPI_Rput are in my window when my "
              "sync-object request has seen the bump");
    MPI_Request_free(&ops);
    MPI_Request_free(&obj);
    shared_counter_free(w.win, &mine, all);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2 + 2 + 2 + 1 + 6 + 2);
    iwin_create(&w, BIG);
    rput_then_reuse(N, "MPI_Rput of 64 B");
    rput_then_reuse(BIG, "MPI_Rput of 64 KiB");
    rget_inside_epoch();
    raccumulate_and_tickets();
    mixed_waitall();
    errors();
    counters_in_lock_all();
    iwin_free(&w);
    return test_done();
}
