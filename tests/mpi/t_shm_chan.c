/* t_shm_chan.c - the shared-memory packet channel (tp_shm.c) between node peers.
 *
 * Every window gets the same traffic (exercise): four fence epochs (one 8 KiB put per pair,
 * 256 small puts per pair, an 8 KiB accumulate, gets back through data messages) and a lock
 * epoch of 64 puts per pair, every member to every other at once, so both directions of every
 * pair fill at the same time. The windows:
 *   1. over MPI_COMM_WORLD, with the default rings: node peers use the channel (FLEXRMA_TRANSPORT
 *      auto or shm) or messages (am), the message probe is off when nobody sends messages, and
 *      the window's segment is gone after MPI_Win_free;
 *   2. with 1 KiB rings, so 8 KiB batches go in fragments and full rings queue batches;
 *   3. over a communicator in reversed rank order, and over halves of the ranks;
 *   4. with rank 1 unable to make rings (auto): the others reach it by messages, it reaches them
 *      through their rings, and the traffic still arrives;
 *   5. the same with FLEXRMA_TRANSPORT=shm: MPI_Win_create fails on every member, class
 *      MPI_ERR_OTHER, leaving no segment behind; and with every member able, it succeeds;
 *   6. FLEXRMA_TRANSPORT differing between members: MPI_Win_create fails everywhere (MPI_ERR_ARG)
 *      instead of hanging in collectives only some members run.
 * Linked with the internal library (see tests/unit/CMakeLists.txt): it reads fr_win and sets
 * fr_opt directly. Parts that need rings are skipped under FLEXRMA_TRANSPORT=am. */
#include "common.h"
#include "node/shm_seg.h"
#include "transport/transport.h"

#define R 2048 /* ints per origin's region: 8 KiB, the largest payload carried inline */

static fr_transport_mode mode; /* FLEXRMA_TRANSPORT of this run */

static int *make_window(MPI_Comm comm, MPI_Win *win, fr_win **w)
{
    int n;
    MPI_Comm_size(comm, &n);
    int *base = xmalloc((size_t)n * R * sizeof *base);
    MPI_Win_create(base, (MPI_Aint)n * R * sizeof *base, sizeof *base, MPI_INFO_NULL, comm, win);
    *w = fr_win_lookup(*win);
    return base;
}

static int acc_val(int o, int i) { return (o + 1) * 10 + i % 7; }

/* What every other member o wrote into its block of my window in round `round`. */
static void model_puts(int *model, int me, int n, int round)
{
    for (int o = 0; o < n; o++)
        for (int i = 0; i < R && o != me; i++)
            model[o * R + i] = pat(o, i, round);
}

#define EXERCISE_CHECKS 6
static void exercise(MPI_Comm comm, MPI_Win win, int *base, const char *what)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    size_t all = (size_t)n * R;
    /* A fence opens the next epoch too: once I have passed it, node peers that map my window
     * (malloc'd, so adopted: node/shm_adopt.h) may copy into it at once. So I look at what an
     * epoch left in my window before a barrier that their next operations follow. */
    int *model = calloc(all, sizeof *model), *src = xmalloc(R * sizeof *src);
    int *got = xmalloc(all * sizeof *got), *exp = xmalloc(all * sizeof *exp);
    memset(base, 0, all * sizeof *base);
    MPI_Barrier(comm);
    MPI_Win_fence(0, win);

    for (int i = 0; i < R; i++)
        src[i] = pat(me, i, 0);
    for (int t = 0; t < n; t++)
        if (t != me)
            MPI_Put(src, R, MPI_INT, t, (MPI_Aint)me * R, R, MPI_INT, win);
    MPI_Win_fence(0, win);
    model_puts(model, me, n, 0);
    ok(same_ints(base, model, all), "%s: fence, an 8 KiB put from every member", what);
    MPI_Barrier(comm); /* looked before the next epoch's copies into my window */

    for (int i = 0; i < R; i++)
        src[i] = pat(me, i, 1);
    for (int t = 0; t < n; t++)
        for (int k = 0; k < R && t != me; k += 8)
            MPI_Put(src + k, 8, MPI_INT, t, (MPI_Aint)me * R + k, 8, MPI_INT, win);
    MPI_Win_fence(0, win);
    model_puts(model, me, n, 1);
    ok(same_ints(base, model, all), "%s: fence, 256 puts of 32 bytes from every member", what);
    MPI_Barrier(comm); /* looked before the next epoch's copies into my window */

    for (int i = 0; i < R; i++)
        src[i] = acc_val(me, i);
    for (int t = 0; t < n; t++)
        if (t != me)
            MPI_Accumulate(src, R, MPI_INT, t, (MPI_Aint)me * R, R, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int o = 0; o < n; o++)
        for (int i = 0; i < R && o != me; i++)
            model[o * R + i] += acc_val(o, i);
    ok(same_ints(base, model, all), "%s: fence, an 8 KiB accumulate from every member", what);
    MPI_Barrier(comm); /* looked before the next epoch's copies into my window */

    memset(got, 0, all * sizeof *got);
    memset(exp, 0, all * sizeof *exp);
    for (int t = 0; t < n; t++)
        if (t != me)
            MPI_Get(got + (size_t)t * R, R, MPI_INT, t, (MPI_Aint)me * R, R, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int t = 0; t < n; t++)
        for (int i = 0; i < R && t != me; i++)
            exp[t * R + i] = pat(me, i, 1) + acc_val(me, i);
    ok(same_ints(got, exp, all), "%s: fence, gets of what I left at every member", what);

    for (int i = 0; i < R; i++)
        src[i] = pat(me, i, 4);
    for (int t = 0; t < n; t++) {
        if (t == me)
            continue;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        for (int k = 0; k < R; k += 32)
            MPI_Put(src + k, 32, MPI_INT, t, (MPI_Aint)me * R + k, 32, MPI_INT, win);
        MPI_Win_unlock(t, win);
    }
    MPI_Barrier(comm);
    model_puts(model, me, n, 4);
    /* What the others put into my window is read in a lock epoch on myself: with the progress
     * agent (.async) the agent wrote it, and the lock orders that before my reads in a way
     * ThreadSanitizer sees (the barrier orders it through other processes, which it does not). */
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
    ok(same_ints(base, model, all), "%s: lock epochs of 64 puts from every member", what);
    MPI_Win_unlock(me, win);
    MPI_Barrier(comm); /* nobody locks my window again before I looked */

    int empty = 1;
    fr_win *w = fr_win_lookup(win);
    for (int r = 0; r < n; r++)
        empty &= w->peers[r].pending == 0;
    ok(empty && w->pending == 0, "%s: nothing left waiting for ring space", what);
    free(model);
    free(src);
    free(got);
    free(exp);
}

/* Every peer of w uses the transport expected for it (1 check). */
static void check_transports(fr_win *w, const fr_transport *(*expect)(fr_win *, int),
                             const char *what)
{
    int good = 1;
    for (int r = 0; r < w->size; r++)
        if (w->peers[r].tp != expect(w, r)) {
            diag("%s: rank %d uses %s, expected %s", what, r, w->peers[r].tp->name,
                 expect(w, r)->name);
            good = 0;
        }
    ok(good, "%s: every member reached by the expected transport", what);
}

static const fr_transport *expect_default(fr_win *w, int r)
{
    if (r == w->rank)
        return &fr_tp_self;
    return mode == FR_TRANSPORT_AM ? &fr_tp_am : &fr_tp_shm;
}

/* Rank 1 of MPI_COMM_WORLD has no rings: nobody can send to it through one. */
static const fr_transport *expect_mixed(fr_win *w, int r)
{
    if (r == w->rank)
        return &fr_tp_self;
    return r == 1 ? &fr_tp_am : &fr_tp_shm;
}

#define WORLD_CHECKS (4 + EXERCISE_CHECKS)
static void test_world(void)
{
    size_t segs = fr_seg_count();
    MPI_Win win;
    fr_win *w;
    int *base = make_window(MPI_COMM_WORLD, &win, &w);
    check_transports(w, expect_default, "world");
    is_int(w->am_rx, mode == FR_TRANSPORT_AM ? nprocs - 1 : 0,
           "world: members sending me messages (the probe runs only for them)");
    /* my incoming rings, my shared state block (counters, shm_state.h), and the page with my
     * epoch state and lock word (direct.h); and the window's own pages when they were adopted
     * (node/shm_adopt.h: its malloc'd memory, shared in place) */
    is_int((long long)fr_seg_count(),
           (long long)segs + 3 * (mode != FR_TRANSPORT_AM) + (w->adopted.at != NULL),
           "world: three segments: my incoming rings, my state block, my epoch state page "
           "(and my adopted window memory)");
    exercise(MPI_COMM_WORLD, win, base, "world");
    MPI_Win_free(&win);
    is_int((long long)fr_seg_count(), (long long)segs, "world: the segments are gone after free");
    free(base);
}

#define SMALL_CHECKS (1 + EXERCISE_CHECKS)
static void test_small_rings(void)
{
    size_t saved = fr_opt.shm_ring;
    fr_opt.shm_ring = 1024;
    MPI_Win win;
    fr_win *w;
    int *base = make_window(MPI_COMM_WORLD, &win, &w);
    check_transports(w, expect_default, "1 KiB rings");
    exercise(MPI_COMM_WORLD, win, base, "1 KiB rings");
    MPI_Win_free(&win);
    free(base);
    fr_opt.shm_ring = saved;
}

#define SUBSET_CHECKS (1 + 2 * EXERCISE_CHECKS)
static void test_subsets(void)
{
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &rev);
    MPI_Win win;
    fr_win *w;
    int *base = make_window(rev, &win, &w);
    check_transports(w, expect_default, "reversed ranks");
    exercise(rev, win, base, "reversed ranks");
    MPI_Win_free(&win);
    free(base);

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    base = make_window(half, &win, &w);
    exercise(half, win, base, "halves");
    MPI_Win_free(&win);
    free(base);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
}

/* Rank 1 cannot make segments while f runs. */
static void without_segments_on_1(void (*f)(void))
{
    fr_seg_backend native = fr_seg_backend_get();
    if (rank == 1 && fr_seg_backend_force(FR_SEG_NONE) != MPI_SUCCESS)
        diag("could not take rank 1's segments away");
    f();
    if (rank == 1)
        fr_seg_backend_force(native);
}

#define MIXED_CHECKS (2 + EXERCISE_CHECKS)
static void mixed(void)
{
    MPI_Win win;
    fr_win *w;
    int *base = make_window(MPI_COMM_WORLD, &win, &w);
    check_transports(w, expect_mixed, "rank 1 without rings");
    is_int(w->am_rx, rank == 1 ? nprocs - 1 : 0,
           "rank 1 without rings: members sending me messages");
    exercise(MPI_COMM_WORLD, win, base, "rank 1 without rings");
    MPI_Win_free(&win);
    free(base);
}

/* The detail flexrma recorded for the last error raised on a communicator (it is cleared once
 * the handler returns). */
static char detail[512];

static void keep_detail(MPI_Comm *comm, int *rc, ...)
{
    snprintf(detail, sizeof detail, "%s", fr_error_detail());
}

#define STRICT_CHECKS 4
static void strict(void)
{
    size_t segs = fr_seg_count();
    MPI_Comm comm;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(keep_detail, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    MPI_Errhandler_free(&eh);
    int *base = xmalloc(R * sizeof *base), cls = -1;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_create(base, R * sizeof *base, sizeof *base, MPI_INFO_NULL, comm, &win);
    MPI_Error_class(rc, &cls);
    ok(rc != MPI_SUCCESS && cls == MPI_ERR_OTHER,
       "FLEXRMA_TRANSPORT=shm, rank 1 without rings: MPI_Win_create fails (class %d)", cls);
    ok(strstr(detail, "FLEXRMA_TRANSPORT=shm") != NULL, "... and says why: %s", detail);
    is_int((long long)fr_seg_count(), (long long)segs, "... leaving no segment behind");
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    free(base);
    MPI_Comm_free(&comm);
}

static void strict_ok(void)
{
    MPI_Win win;
    fr_win *w;
    int *base = make_window(MPI_COMM_WORLD, &win, &w);
    check_transports(w, expect_default, "FLEXRMA_TRANSPORT=shm");
    MPI_Win_free(&win);
    free(base);
}

#define MISMATCH_CHECKS 1
static void test_mismatch(void)
{
    if (rank == 0)
        fr_opt.transport = mode == FR_TRANSPORT_AM ? FR_TRANSPORT_AUTO : FR_TRANSPORT_AM;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int *base = xmalloc(R * sizeof *base), cls = -1;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_create(base, R * sizeof *base, sizeof *base, MPI_INFO_NULL, comm, &win);
    MPI_Error_class(rc, &cls);
    ok(rc != MPI_SUCCESS && cls == MPI_ERR_ARG,
       "FLEXRMA_TRANSPORT differing between members: MPI_Win_create fails (class %d)", cls);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    free(base);
    MPI_Comm_free(&comm);
    fr_opt.transport = mode;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    mode = fr_opt.transport;
    tap_plan(WORLD_CHECKS + SMALL_CHECKS + SUBSET_CHECKS + MIXED_CHECKS + STRICT_CHECKS +
             MISMATCH_CHECKS);
    test_world();
    test_small_rings();
    test_subsets();
    if (mode == FR_TRANSPORT_AM) {
        skip(MIXED_CHECKS + STRICT_CHECKS, "FLEXRMA_TRANSPORT=am: no rings");
    } else {
        fr_opt.transport = FR_TRANSPORT_AUTO;
        without_segments_on_1(mixed);
        fr_opt.transport = FR_TRANSPORT_SHM;
        without_segments_on_1(strict);
        strict_ok();
        fr_opt.transport = mode;
    }
    test_mismatch();
    return test_done();
}
