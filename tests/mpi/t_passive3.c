/* t_passive3.c - MPI-3 passive target: MPI_Win_lock_all/unlock_all (with and without
 * MPI_MODE_NOCHECK), MPI_Win_flush, flush_all, flush_local, flush_local_all inside lock and
 * lock_all epochs, MPI_Win_sync, and their errors.
 *
 * What a flush promises is checked the way a program relies on it: after MPI_Win_flush(t)
 * returns, the origin tells t by a point-to-point message, and t must find the data in its
 * window at once, while the origin's epoch is still open. After flush_local the origin may
 * overwrite its buffer, and the target must still receive what was there before. Sizes cover
 * data inside the packets and data in messages of their own (64 KiB, beyond FLEXRMA_EAGER_MAX). */
#include "errors_common.h"

#define N 16          /* ints per rank's region in the small window */
#define BIG (1 << 14) /* ints of a large put: 64 KiB */
#define ROUNDS 20

static iwin w; /* nprocs regions of N ints, region r written by rank r */

/* Wait until the 4-byte flag at index i of my own window reads `want`, calling MPI_Win_sync (the
 * unified model's way to see remote updates while polling) under a lock on myself. */
static int poll_flag(int i, int want)
{
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
    for (long spins = 0; spins < 200000000L; spins++) {
        MPI_Win_sync(w.win);
        if (((volatile int *)w.buf)[i] == want) {
            MPI_Win_unlock(rank, w.win);
            return 1;
        }
    }
    MPI_Win_unlock(rank, w.win);
    return 0;
}

/* Part 1 (2 tests): lock_all, a put into every rank's window, unlock_all; then gets. */
static void lock_all_every_target(void)
{
    int vals[N];
    fill_pat(vals, N, rank, 1);
    MPI_Win_lock_all(0, w.win);
    for (int t = 0; t < nprocs; t++)
        MPI_Put(vals, N, MPI_INT, t, (MPI_Aint)rank * N, N, MPI_INT, w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    int bad = 0;
    for (int r = 0; r < nprocs; r++)
        bad += !is_pat(mine + (size_t)r * N, N, r, 1);
    is_int(bad, 0, "lock_all: every rank's puts reached my window (regions wrong)");
    free(mine);

    /* Gets from every rank under one lock_all epoch, completed by unlock_all. */
    int *got = xmalloc((size_t)nprocs * N * sizeof(int));
    MPI_Win_lock_all(0, w.win);
    for (int t = 0; t < nprocs; t++)
        MPI_Get(got + (size_t)t * N, N, MPI_INT, t, (MPI_Aint)t * N, N, MPI_INT, w.win);
    MPI_Win_unlock_all(w.win);
    bad = 0;
    for (int t = 0; t < nprocs; t++)
        bad += !is_pat(got + (size_t)t * N, N, t, 1);
    is_int(bad, 0, "lock_all: gets of every rank's own region (regions wrong)");
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 2 (6 tests): flush inside lock_all and inside lock: the target sees the data when the
 * origin's message arrives, before the epoch ends. Small and large puts; and a put followed by
 * a fetch-and-op (into the int after the put's): the fop's reply must not stand for the put's
 * completion, whose data may still be on its way in a message of its own. */
static void flush_then_tell(int use_lock_all, int nocheck, int n, int fop, const char *what)
{
    int *src = xmalloc((size_t)n * sizeof(int));
    int *win_mem, *seen = xmalloc((size_t)n * sizeof(int));
    MPI_Win big;
    MPI_Aint bytes = (MPI_Aint)(n + 1) * (MPI_Aint)sizeof(int);
    MPI_Alloc_mem(bytes, MPI_INFO_NULL, &win_mem);
    memset(win_mem, 0, (size_t)bytes);
    MPI_Win_create(win_mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big);
    int bad = 0, one = 1, before;
    int assert = nocheck ? MPI_MODE_NOCHECK : 0;
    if (use_lock_all)
        MPI_Win_lock_all(assert, big);
    else
        MPI_Win_lock(MPI_LOCK_SHARED, right(), assert, big);
    for (int e = 0; e < ROUNDS; e++) {
        fill_pat(src, (size_t)n, rank, 100 + e);
        MPI_Put(src, n, MPI_INT, right(), 0, n, MPI_INT, big);
        if (fop) /* one and before live until the flush completes the operation */
            MPI_Fetch_and_op(&one, &before, MPI_INT, right(), n, MPI_SUM, big);
        MPI_Win_flush(right(), big);
        int token = e;
        MPI_Sendrecv(&token, 1, MPI_INT, right(), 7, &token, 1, MPI_INT, left(), 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Left's put of round e is complete in my window: read it (my own memory; nobody
         * writes it until I answer below). */
        memcpy(seen, win_mem, (size_t)n * sizeof(int));
        if (!is_pat(seen, (size_t)n, left(), 100 + e) && !bad++)
            diag("%s: round %d: left's flushed put was not in my window", what, e);
        MPI_Sendrecv(&token, 1, MPI_INT, left(), 8, &token, 1, MPI_INT, right(), 8,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (use_lock_all)
        MPI_Win_unlock_all(big);
    else
        MPI_Win_unlock(right(), big);
    is_int(bad, 0, "%s: rounds where the flushed data was missing", what);
    MPI_Win_free(&big);
    MPI_Free_mem(win_mem);
    free(src);
    free(seen);
}

/* Part 3 (2 tests): flush_local frees my buffer before the epoch ends: I overwrite it, and the
 * target still gets what was there. flush_local of a get: the data is in my buffer. */
static void flush_local_buffers(void)
{
    int *src = xmalloc(BIG * sizeof(int));
    int *win_mem;
    MPI_Win big;
    MPI_Alloc_mem(BIG * sizeof(int), MPI_INFO_NULL, &win_mem);
    memset(win_mem, 0, BIG * sizeof(int));
    MPI_Win_create(win_mem, BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big);
    MPI_Win_lock_all(0, big);
    fill_pat(src, BIG, rank, 7);
    MPI_Put(src, BIG, MPI_INT, right(), 0, BIG, MPI_INT, big);
    MPI_Win_flush_local(right(), big);
    memset(src, 0x5a, BIG * sizeof(int)); /* reusable now */
    MPI_Win_unlock_all(big);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, big);
    ok(is_pat(win_mem, BIG, left(), 7), "flush_local: the put carried my buffer as it was "
                                        "before I overwrote it");
    MPI_Win_unlock(rank, big);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A get completed by flush_local_all: the data is mine before the epoch ends. */
    int *dst = xmalloc(BIG * sizeof(int));
    memset(dst, 0, BIG * sizeof(int));
    MPI_Win_lock_all(0, big);
    MPI_Get(dst, BIG, MPI_INT, right(), 0, BIG, MPI_INT, big);
    MPI_Win_flush_local_all(big);
    ok(is_pat(dst, BIG, rank, 7), "flush_local_all: the get's data arrived inside the epoch");
    MPI_Win_unlock_all(big);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&big);
    MPI_Free_mem(win_mem);
    free(src);
    free(dst);
}

/* Part 4 (2 tests): accumulates from everyone into rank 0 under lock_all with a flush after each
 * one: exact sums. flush_all after puts to every target, then a barrier: all data is there. */
static void accumulate_and_flush_all(void)
{
    const int iter = 50;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        w.buf[0] = 0;
        MPI_Win_unlock(0, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1;
    MPI_Win_lock_all(0, w.win);
    for (int i = 0; i < iter; i++) {
        MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Win_flush(0, w.win);
    }
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int sum = -1;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        sum = w.buf[0];
        MPI_Win_unlock(0, w.win);
        is_int(sum, iter * nprocs, "accumulates with a flush after each, under lock_all");
    } else {
        ok(1, "accumulates with a flush after each (checked at rank 0)");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int vals[N];
    fill_pat(vals, N, rank, 9);
    MPI_Win_lock_all(0, w.win);
    for (int t = 0; t < nprocs; t++)
        MPI_Put(vals, N, MPI_INT, t, (MPI_Aint)rank * N, N, MPI_INT, w.win);
    MPI_Win_flush_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD); /* every origin flushed: every window holds everything */
    int bad = 0;
    for (int r = 0; r < nprocs; r++)
        bad += !is_pat(w.buf + (size_t)r * N, N, r, 9);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(w.win);
    is_int(bad, 0, "flush_all then a barrier: regions not yet in my window");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 5 (1 test): a flag put with a flush, polled by the target with MPI_Win_sync. */
static void sync_polling(void)
{
    int flag_at = (int)w.n - 1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
    w.buf[flag_at] = 0;
    MPI_Win_unlock(rank, w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 4242;
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win);
    MPI_Put(&flag, 1, MPI_INT, right(), flag_at, 1, MPI_INT, w.win);
    MPI_Win_flush(right(), w.win);
    ok(poll_flag(flag_at, 4242), "MPI_Win_sync polling saw the flag left put and flushed");
    MPI_Win_unlock(right(), w.win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 6 (13 tests): errors, each of its MPI class, and nothing changes. */
static void errors(void)
{
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_flush outside an epoch", MPI_Win_flush(right(), w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_flush_all outside an epoch", MPI_Win_flush_all(w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_flush_local outside an epoch",
           MPI_Win_flush_local(right(), w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_flush_local_all outside an epoch",
           MPI_Win_flush_local_all(w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all",
           MPI_Win_unlock_all(w.win));
    expect(MPI_ERR_ASSERT, "MPI_Win_lock_all with an unknown assertion",
           MPI_Win_lock_all(MPI_MODE_NOPRECEDE, w.win));
    expect(MPI_SUCCESS, "MPI_Win_sync outside an epoch (as Open MPI allows)", MPI_Win_sync(w.win));
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_flush of a rank not locked",
           MPI_Win_flush(nprocs > 2 ? left() : rank, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all while a lock is held", MPI_Win_lock_all(0, w.win));
    MPI_Win_unlock(right(), w.win);
    MPI_Win_lock_all(0, w.win);
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside lock_all",
           MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_unlock inside lock_all", MPI_Win_unlock(right(), w.win));
    expect(MPI_ERR_RANK, "MPI_Win_flush of a rank out of range", MPI_Win_flush(nprocs, w.win));
    expect(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside lock_all", MPI_Win_fence(0, w.win));
    MPI_Win_unlock_all(w.win);
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 7 (1 test): the epochs still work after the errors. */
static void after_errors(void)
{
    int v = pat(rank, 0, 77), got = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
    MPI_Put(&v, 1, MPI_INT, right(), (MPI_Aint)rank * N, 1, MPI_INT, w.win);
    MPI_Win_flush(right(), w.win);
    MPI_Get(&got, 1, MPI_INT, right(), (MPI_Aint)rank * N, 1, MPI_INT, w.win);
    MPI_Win_unlock_all(w.win);
    is_int(got, v, "put, flush, get of the same int under lock_all(NOCHECK)");
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2 + 6 + 2 + 2 + 1 + 13 + 1);
    iwin_create(&w, (size_t)nprocs * N + 1);
    lock_all_every_target();
    flush_then_tell(1, 0, N, 0, "flush in lock_all, 64 B");
    flush_then_tell(1, 1, BIG, 0, "flush in lock_all(NOCHECK), 64 KiB");
    flush_then_tell(0, 0, BIG, 0, "flush in a shared lock, 64 KiB");
    flush_then_tell(0, 1, N, 0, "flush in a shared lock(NOCHECK), 64 B");
    flush_then_tell(1, 0, BIG, 1, "put then fetch-and-op, flush in lock_all, 64 KiB");
    flush_then_tell(0, 0, BIG, 1, "put then fetch-and-op, flush in a shared lock, 64 KiB");
    flush_local_buffers();
    accumulate_and_flush_all();
    sync_polling();
    errors();
    after_errors();
    iwin_free(&w);
    return test_done();
}
