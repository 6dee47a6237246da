/* t_direct.c - single-copy access to node peers' windows (direct.c) and the shared lock word
 * (shm_lock.h).
 *
 * Every part checks the data, and, by the window's statistics (fr_win.st.direct), which path
 * carried it: copies straight into a mapped MPI_Alloc_mem window for every put and get once the
 * target's epoch allows it, cross-memory attach for large contiguous transfers into malloc'd
 * windows (not adopted: FLEXRMA_ADOPT=0) and for gets, accumulates applied by the origin into mapped windows, and the batch path where a
 * copy must not (or cannot) happen: accumulates into malloc'd windows, the reduce-scatter fence, FLEXRMA_DIRECT=0, a non-contiguous target layout without a mapping.
 * Under FLEXRMA_TRANSPORT=am nothing is copied directly and the data must still be right.
 * The lock parts check that accumulates from every rank at once lose no update, under exclusive
 * locks and under shared ones (then only the accumulate stripes keep them apart), and that an
 * exclusive epoch's puts are its own.
 * The issue part checks when a copy happens: at the put itself once the target's epoch allows it
 * (rank 1 posted before rank 0's put), at the closing call otherwise, and a put issued after a
 * queued one is queued too, even once the target allows copies (it must not overtake).
 * The short part checks passive target's short path (api/rma_ops.h) on an MPI_Win_allocate
 * window: each operation reaches the window at the call, errors are still raised; the counter
 * part the same short path in a counter epoch (a started sync-ops request).
 * Linked with the internal library: it reads fr_win and sets fr_opt. */
#include "direct_common.h"
#include "flexrma.h"
#include "transport/counter_bump.h"
#include "sync/sync.h"
#include "progress/progress.h"
#include "transport/transport.h"

#include <unistd.h>

#define BIG 16384 /* ints: 64 KiB, beyond the eager limit */
#define SMALL 2

static int direct_on; /* node peers are reached directly in this run */

static uint64_t direct_ops(MPI_Win win) { return fr_win_lookup(win)->st.direct; }

/* A window of nprocs regions of BIG ints (direct_common.h). */
static int *make(int alloc_mem, MPI_Win *win)
{
    return direct_window(alloc_mem, (size_t)nprocs * BIG, win);
}

/* My region at every other member: a big and a small put, then gets of both back. */
static void put_all(MPI_Win win, const int *src)
{
    for (int t = 0; t < nprocs; t++)
        if (t != rank) {
            MPI_Put(src, BIG - SMALL, MPI_INT, t, (MPI_Aint)rank * BIG, BIG - SMALL, MPI_INT, win);
            MPI_Put(src + BIG - SMALL, SMALL, MPI_INT, t, (MPI_Aint)rank * BIG + BIG - SMALL,
                    SMALL, MPI_INT, win);
        }
}

static void get_all(MPI_Win win, int *got)
{
    for (int t = 0; t < nprocs; t++)
        if (t != rank)
            MPI_Get(got + (size_t)t * BIG, BIG, MPI_INT, t, (MPI_Aint)rank * BIG, BIG, MPI_INT,
                    win);
}

/* Regions of every other member in base hold their pattern for epoch e. */
static int regions_hold(const int *base, int e)
{
    int bad = 0;
    for (int o = 0; o < nprocs; o++)
        if (o != rank && !is_pat(base + (size_t)o * BIG, BIG, o, e))
            bad++;
    return bad == 0;
}

static int gets_hold(const int *got, int e)
{
    int bad = 0;
    for (int t = 0; t < nprocs; t++)
        if (t != rank && !is_pat(got + (size_t)t * BIG, BIG, rank, e))
            bad++;
    return bad == 0;
}

/* Operations an epoch of put_all + get_all copies directly: two puts and a get per peer. */
static uint64_t expect_direct(uint64_t per_peer) { return direct_on ? per_peer * (nprocs - 1) : 0; }

#define ACTIVE_CHECKS 8
static void test_active(int alloc_mem)
{
    const char *mem = alloc_mem ? "alloc_mem" : "malloc";
    MPI_Win win;
    int *base = make(alloc_mem, &win);
    int *src = xmalloc(BIG * sizeof *src), *got = xmalloc((size_t)nprocs * BIG * sizeof *got);
    /* malloc'd windows: only the big contiguous transfers go by cross-memory attach */
    uint64_t per_peer = alloc_mem ? 3 : 2;

    /* fence opened by a completing fence */
    fill_pat(src, BIG, rank, 1);
    uint64_t d0 = direct_ops(win);
    MPI_Win_fence(0, win);
    put_all(win, src);
    MPI_Win_fence(0, win);
    ok(regions_hold(base, 1), "%s: fence: puts from every member arrived", mem);
    get_all(win, got);
    MPI_Win_fence(0, win);
    ok(gets_hold(got, 1), "%s: fence: gets read what I put", mem);
    is_int((long long)(direct_ops(win) - d0), (long long)expect_direct(per_peer),
           "%s: fence: puts and gets copied directly", mem);

    /* fence opened with MPI_MODE_NOPRECEDE: the copy waits until the target passed it */
    fill_pat(src, BIG, rank, 2);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0) /* enters late: nobody may write its window before its own stores */
        usleep(20000);
    memset(base, 0, (size_t)nprocs * BIG * sizeof *base);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    put_all(win, src);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    ok(regions_hold(base, 2), "%s: fence after NOPRECEDE: puts arrived after my own stores", mem);

    /* post/start/complete/wait, rank 0 posting late: complete waits for the post */
    fill_pat(src, BIG, rank, 3);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group others;
    int me[1] = {rank};
    MPI_Group_excl(world, 1, me, &others);
    d0 = direct_ops(win);
    if (rank == 0)
        usleep(20000);
    memset(base, 0, (size_t)nprocs * BIG * sizeof *base);
    MPI_Win_post(others, 0, win);
    MPI_Win_start(others, 0, win);
    put_all(win, src);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    ok(regions_hold(base, 3), "%s: pscw: puts arrived after the target's own stores", mem);
    is_int((long long)(direct_ops(win) - d0), (long long)expect_direct(per_peer - 1),
           "%s: pscw: puts copied directly", mem);

    /* accumulates: applied by the origin into a mapped window, holding the target's accumulate
     * stripes, which the target takes too for its own (self) accumulate */
    for (int i = 0; i < BIG; i++)
        src[i] = 1;
    d0 = direct_ops(win);
    MPI_Win_fence(0, win);
    for (int t = 0; t < nprocs; t++)
        MPI_Accumulate(src, BIG, MPI_INT, t, 0, BIG, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    int sums = 0;
    for (int i = 0; i < BIG; i++)
        sums += base[i] == pat(0, i, 3) * (rank != 0) + nprocs;
    is_int(sums, BIG, "%s: fence: accumulates from every member add up", mem);
    is_int((long long)(direct_ops(win) - d0), (long long)(alloc_mem ? expect_direct(1) : 0),
           "%s: accumulates applied directly only into a mapped window", mem);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    MPI_Group_free(&others);
    MPI_Group_free(&world);
    free(src);
    free(got);
    direct_window_free(alloc_mem, &win, base);
}

#define DTYPE_CHECKS 2
/* A strided target layout: copied with pack/unpack into a mapped window; into a malloc'd one it
 * needs remote iovecs, so it travels. */
static void test_strided(int alloc_mem)
{
    const char *mem = alloc_mem ? "alloc_mem" : "malloc";
    MPI_Win win;
    int *base = make(alloc_mem, &win);
    int *src = xmalloc(BIG / 2 * sizeof *src);
    fill_pat(src, BIG / 2, rank, 4);
    MPI_Datatype every_other;
    MPI_Type_vector(BIG / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    uint64_t d0 = direct_ops(win);
    MPI_Win_fence(0, win);
    MPI_Put(src, BIG / 2, MPI_INT, right(), (MPI_Aint)rank * BIG, 1, every_other, win);
    MPI_Win_fence(0, win);
    int bad = 0, o = left();
    for (int i = 0; i < BIG / 2; i++)
        bad += base[(size_t)o * BIG + 2 * (size_t)i] != pat(o, i, 4) ||
               base[(size_t)o * BIG + 2 * (size_t)i + 1] != 0;
    is_int(bad, 0, "%s: a strided put lands on every other int", mem);
    is_int((long long)(direct_ops(win) - d0), direct_on && alloc_mem && nprocs > 1,
           "%s: strided target copied directly only into a mapped window", mem);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Type_free(&every_other);
    free(src);
    direct_window_free(alloc_mem, &win, base);
}

#define OFF_CHECKS 4
/* Windows where the batch path must carry everything. */
static void test_off(void)
{
    int saved_max = fr_opt.fence_direct_max, saved_direct = fr_opt.direct;
    int *src = xmalloc(BIG * sizeof *src);
    for (int pass = 0; pass < 2; pass++) {
        const char *what = pass == 0 ? "reduce-scatter fence" : "FLEXRMA_DIRECT=0";
        if (pass == 0)
            fr_opt.fence_direct_max = 1;
        else
            fr_opt.direct = 0;
        MPI_Win win;
        int *base = make(1, &win);
        fill_pat(src, BIG, rank, 5 + pass);
        MPI_Win_fence(0, win);
        put_all(win, src);
        MPI_Win_fence(0, win);
        ok(regions_hold(base, 5 + pass), "%s: puts arrived", what);
        is_int((long long)direct_ops(win), 0, "%s: nothing copied directly", what);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        direct_window_free(1, &win, base);
        fr_opt.fence_direct_max = saved_max;
        fr_opt.direct = saved_direct;
    }
    free(src);
}

#define LOCK_CHECKS 6
#define ROUNDS 200
static void test_lock(void)
{
    MPI_Win win;
    int *base = make(1, &win);
    int *src = xmalloc(BIG * sizeof *src), *got = xmalloc((size_t)nprocs * BIG * sizeof *got);

    /* every member adds to one int at rank 0 under an exclusive lock: the accumulates travel
     * as packets while the lock is held in the shared word, and the unlock waits for them */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&(int){1}, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    /* the same under shared locks, a whole region at once (long enough for two members to be
     * combining at the same moment), the target accumulating into itself too */
    for (int i = 0; i < BIG; i++)
        src[i] = 1;
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Accumulate(src, BIG, MPI_INT, 0, BIG, BIG, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    /* two puts of an exclusive epoch are never split by another member's epoch */
    uint64_t d0 = direct_ops(win);
    for (int k = 0; k < ROUNDS; k++) {
        int v[2] = {rank * ROUNDS + k, rank * ROUNDS + k};
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v[0], 1, MPI_INT, 0, 2, 1, MPI_INT, win);
        MPI_Put(&v[1], 1, MPI_INT, 0, 3, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        is_int(base[1], nprocs * ROUNDS, "lock: exclusive accumulates from every member add up");
        is_int(base[2], base[3], "lock: the two puts of the last epoch are its own");
        int lost = 0;
        for (int i = 0; i < BIG; i++)
            lost += base[BIG + i] != nprocs * ROUNDS;
        is_int(lost, 0, "lock: shared accumulates from every member lose no update");
        MPI_Win_unlock(0, win);
    } else {
        ok(1, "lock: exclusive accumulates (checked at rank 0)");
        ok(1, "lock: the last epoch's puts (checked at rank 0)");
        ok(1, "lock: shared accumulates (checked at rank 0)");
    }
    is_int((long long)(direct_ops(win) - d0), direct_on && rank != 0 ? 2 * ROUNDS : 0,
           "lock: puts of node peers copied directly once the lock is held");

    /* shared locks: everyone puts its region at everyone and reads it back */
    fill_pat(src, BIG, rank, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nprocs; t++) {
        if (t == rank)
            continue;
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        MPI_Put(src, BIG, MPI_INT, t, (MPI_Aint)rank * BIG, BIG, MPI_INT, win);
        MPI_Win_unlock(t, win);
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        MPI_Get(got + (size_t)t * BIG, BIG, MPI_INT, t, (MPI_Aint)rank * BIG, BIG, MPI_INT, win);
        MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ok(gets_hold(got, 7), "lock: shared epochs: each get reads the put before it");
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    ok(regions_hold(base, 7), "lock: shared epochs: every member's put arrived");
    MPI_Win_unlock(rank, win);

    free(src);
    free(got);
    direct_window_free(1, &win, base);
}

#define ISSUE_CHECKS 8
#define TAG_GO 31
#define TAG_POSTED 32
#define TAG_HELD 33

static uint64_t closed(MPI_Win win) { return fr_win_lookup(win)->st.closed_direct; }

/* Rank 0 waits until everything it sent rank 1 is known complete there and acknowledged. */
static void settle(MPI_Win win)
{
    fr_win *w = fr_win_lookup(win);
    const fr_peer *p = &w->peers[1];
    /* The peer's state is the engine's: read under the engine lock, which the progress agent
     * holds while it writes it (.async). */
    FR_ENTER();
    for (long spins = 0; direct_on && (!fr_peer_settled(p) || p->acks_got < p->acks_asked) &&
                         spins < 100000000;
         spins++) {
        fr_progress();
        FR_LEAVE();
        FR_ENTER();
    }
    FR_LEAVE();
}

/* Rank 0 accesses rank 1's window in five post/start/complete/wait epochs, rank 1 (or 0) posting
 * early or late, and checks when each put is copied and how each epoch is closed:
 *   1. posted before the put: the put copies at once, complete closes in rank 1's state page;
 *   2. a put before the post (queued), one after it (queued behind: no overtaking), both copied
 *      by complete, which closes in the state page;
 *   3. complete before the post: the put travels with a COMPLETE packet, which reaches rank 1
 *      while it is still in epoch 2 (MPI_Win_test polls first): it must wait for rank 1's next
 *      post (the epoch before was closed without a packet to separate them);
 *   4. the acknowledgement asked for in 3 settles rank 0 again: closed in the state page. */
static void test_issue(void)
{
    MPI_Win win;
    int *base = make(1, &win);
    int src[SMALL * 5];
    for (int i = 0; i < SMALL * 5; i++)
        src[i] = 1000 + i;
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int peer = rank == 0 ? 1 : 0;
    MPI_Group_incl(world, 1, &peer, &g);
    uint64_t at_put = 0, after_second = 0, d0 = direct_ops(win), c0 = closed(win), c[5] = {0};
    int held_early = 0;
#define PUT(k) MPI_Put(src + (k) * SMALL, SMALL, MPI_INT, 1, (k) * SMALL, SMALL, MPI_INT, win)
    if (rank == 1) {
        MPI_Win_post(g, 0, win); /* 1 */
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_POSTED, MPI_COMM_WORLD);
        MPI_Win_wait(win);
        MPI_Recv(NULL, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_post(g, 0, win); /* 2 */
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_POSTED, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* 3 sent */
        /* MPI_Win_test polls before it looks at the epoch: 3's packets are read in epoch 2 */
        for (int flag = 0; !flag;)
            MPI_Win_test(win, &flag);
        held_early = base[3 * SMALL] == 0 && base[3 * SMALL + 1] == 0;
        MPI_Win_post(g, 0, win); /* 3 */
        MPI_Win_wait(win);
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_HELD, MPI_COMM_WORLD);
        MPI_Win_post(g, 0, win); /* 4 */
        MPI_Send(NULL, 0, MPI_INT, 0, TAG_POSTED, MPI_COMM_WORLD);
        MPI_Win_wait(win);
    } else if (rank == 0) {
        MPI_Win_start(g, 0, win); /* 1 */
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_POSTED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PUT(0);
        at_put = direct_ops(win) - d0;
        MPI_Win_complete(win);
        c[1] = closed(win) - c0;
        d0 = direct_ops(win);
        MPI_Win_start(g, 0, win); /* 2 */
        PUT(1);
        uint64_t first = direct_ops(win) - d0;
        MPI_Send(NULL, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_POSTED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PUT(2);
        after_second = direct_ops(win) - d0;
        MPI_Win_complete(win);
        c[2] = closed(win) - c0;
        MPI_Win_start(g, 0, win); /* 3: rank 1 has not posted it */
        PUT(3);
        MPI_Win_complete(win);
        c[3] = closed(win) - c0;
        MPI_Send(NULL, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_HELD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        settle(win);
        MPI_Win_start(g, 0, win); /* 4 */
        MPI_Recv(NULL, 0, MPI_INT, 1, TAG_POSTED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PUT(4);
        MPI_Win_complete(win);
        c[4] = closed(win) - c0;
        at_put |= first << 8;
    }
#undef PUT
    MPI_Barrier(MPI_COMM_WORLD);
    const long long on = direct_on ? 1 : 0;
    if (rank == 0) {
        is_int((long long)(at_put & 0xff), on,
               "a put into a window already exposed is copied by the put itself");
        ok((at_put >> 8) == 0 && after_second == 0,
           "puts before the post and after a queued one wait for the closing call (%llu, %llu "
           "copied at issue)", (unsigned long long)(at_put >> 8), (unsigned long long)after_second);
        is_int((long long)c[1], on, "epoch 1 closed in the target's state page");
        is_int((long long)c[2], 2 * on, "epoch 2 (copied by complete) closed there too");
        is_int((long long)c[3], 2 * on, "epoch 3 (its put travelled) closed by a COMPLETE packet");
        is_int((long long)c[4], 3 * on, "epoch 4, once acknowledged, closed in the state page");
        skip(1, "rank 1 checks the early packet");
    } else {
        skip(6, "rank 0 checks the copies and closes");
        if (rank == 1)
            ok(held_early,
               "the put of the origin's next epoch, arriving before my next post, waited for it");
        else
            skip(1, "only ranks 0 and 1 take part");
    }
    int good = 1;
    for (int i = 0; rank == 1 && i < SMALL * 5; i++)
        good &= base[i] == 1000 + i;
    ok(good, "rank 1's window holds the five puts");

    MPI_Group_free(&g);
    MPI_Group_free(&world);
    direct_window_free(1, &win, base);
}

#define SHORT_CHECKS 13
#define SHORT_ROUNDS 200
#define SHORT_SLOTS 8

/* The error class of an MPI return code. */
static int class_of(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* The short parts' MPI_Win_allocate window of SHORT_SLOTS long longs, errors returned: zeroed
 * but for slot 0, which holds `first`. */
static long long *short_window(long long first, MPI_Win *win)
{
    long long *base;
    MPI_Win_allocate(SHORT_SLOTS * (MPI_Aint)sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, win);
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, *win);
    memset(base, 0, SHORT_SLOTS * sizeof(long long));
    base[0] = first;
    MPI_Win_unlock(rank, *win);
    MPI_Barrier(MPI_COMM_WORLD);
    return base;
}

/* Passive target on an MPI_Win_allocate window (api/rma_ops.h, the short path): once the lock
 * on the right neighbour is held, each put, get, MPI_Fetch_and_op, one-element
 * MPI_Get_accumulate and MPI_Compare_and_swap reaches its window at the call itself, each
 * moves the right data; a call the short path must not decide raises its error through the
 * window's handler (MPI_ERRORS_RETURN here) and changes nothing, and the epoch goes on. */
static void test_short(void)
{
    MPI_Win win;
    long long *base = short_window(0, &win);

    const int t = right();
    long long v = -1, got = -1, before = -1, cmp, nxt, one = 1;
    int wrong = 0, at_call = 0;
    MPI_Win_lock_all(0, win);
    MPI_Put(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win);
    MPI_Win_flush(t, win); /* takes the lock in its lock word */
    uint64_t d0 = direct_ops(win);
    for (int k = 0; k < SHORT_ROUNDS; k++) {
        uint64_t d = direct_ops(win);
        v = 1000 + k;
        MPI_Put(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win);
        at_call += direct_ops(win) - d == 1;
        MPI_Win_flush(t, win);
        MPI_Get(&got, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win);
        MPI_Win_flush(t, win);
        wrong += got != v;
        MPI_Fetch_and_op(&one, &before, MPI_LONG_LONG, t, 2, MPI_SUM, win);
        MPI_Win_flush(t, win);
        wrong += before != k;
        MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &before, 1, MPI_LONG_LONG, t, 3, 1,
                           MPI_LONG_LONG, MPI_SUM, win);
        MPI_Win_flush(t, win);
        wrong += before != k;
        cmp = k;
        nxt = k + 1;
        MPI_Compare_and_swap(&nxt, &cmp, &before, MPI_LONG_LONG, t, 4, win);
        MPI_Win_flush(t, win);
        wrong += before != k;
        MPI_Compare_and_swap(&nxt, &cmp, &before, MPI_LONG_LONG, t, 4, win); /* no swap now */
        MPI_Win_flush(t, win);
        wrong += before != k + 1;
        MPI_Fetch_and_op(NULL, &before, MPI_LONG_LONG, t, 2, MPI_NO_OP, win);
        MPI_Win_flush(t, win);
        wrong += before != k + 1;
    }
    is_int(wrong, 0, "short path: every put, get, fetch-and-op, get-accumulate and "
                     "compare-and-swap moved the right data");
    is_int(at_call, direct_on ? SHORT_ROUNDS : 0, "short path: each put reached the target's "
                                                   "window in MPI_Put itself");
    is_int((long long)(direct_ops(win) - d0), direct_on ? 7LL * SHORT_ROUNDS : 0,
           "short path: every operation went straight into the mapped window");

    /* errors: the full path raises them, nothing is written */
    long long bad = 0x7777, res = -1;
    int two[2] = {0x7777, 0x7777};
    MPI_Datatype dint = MPI_DOUBLE_INT;
    is_int(class_of(MPI_Put(&bad, 1, MPI_LONG_LONG, t, SHORT_SLOTS, 1, MPI_LONG_LONG, win)),
           MPI_ERR_RMA_RANGE, "short path: a put past the window is MPI_ERR_RMA_RANGE");
    is_int(class_of(MPI_Put(&bad, 1, MPI_LONG_LONG, t, -1, 1, MPI_LONG_LONG, win)), MPI_ERR_DISP,
           "short path: a put at displacement -1 is MPI_ERR_DISP");
    is_int(class_of(MPI_Get(&res, 1, MPI_LONG_LONG, nprocs, 1, 1, MPI_LONG_LONG, win)),
           MPI_ERR_RANK, "short path: a get from rank nprocs is MPI_ERR_RANK");
    is_int(class_of(MPI_Put(two, 2, MPI_INT, t, 1, 2, MPI_LONG_LONG, win)), MPI_ERR_TYPE,
           "short path: 2 ints into 2 long longs is MPI_ERR_TYPE");
    is_int(class_of(MPI_Fetch_and_op(&bad, &res, MPI_LONG_LONG, t, 2, MPI_OP_NULL, win)),
           MPI_ERR_OP, "short path: MPI_Fetch_and_op with MPI_OP_NULL is MPI_ERR_OP");
    is_int(class_of(MPI_Fetch_and_op(&bad, &res, MPI_LONG_LONG, t, SHORT_SLOTS, MPI_SUM, win)),
           MPI_ERR_RMA_RANGE, "short path: MPI_Fetch_and_op past the window is MPI_ERR_RMA_RANGE");
    is_int(class_of(MPI_Compare_and_swap(&bad, &bad, &res, dint, t, 4, win)), MPI_ERR_TYPE,
           "short path: MPI_Compare_and_swap on MPI_DOUBLE_INT (padding) is MPI_ERR_TYPE");
    is_int(class_of(MPI_Win_flush(t, win)), MPI_SUCCESS, "short path: the epoch goes on");
    ok(res == -1, "short path: the failed calls wrote no result");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    ok(base[1] == 1000 + SHORT_ROUNDS - 1 && base[2] == SHORT_ROUNDS &&
           base[3] == SHORT_ROUNDS && base[4] == SHORT_ROUNDS && base[5] == 0,
       "short path: my window holds my left neighbour's last put, %d fetch-and-adds, %d "
       "get-accumulates, %d swaps (got %lld %lld %lld %lld)", SHORT_ROUNDS, SHORT_ROUNDS,
       SHORT_ROUNDS, base[1], base[2], base[3], base[4]);
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
}

/* A counter epoch (a started sync-ops request) on an MPI_Win_allocate window takes the short path
 * too: each covered put, get and MPI_Fetch_and_op reaches the right neighbour's window at the
 * call and moves the right data, the request's bump arrives behind it (my sync-object request
 * completes with my left neighbour's data there), a counter epoch takes the operations it covers
 * even inside a lock_all epoch, and outside one a kind it does not cover is still refused
 * (MPI_ERR_RMA_SYNC) without writing anything. */
#define COUNTER_CHECKS 6
#define COUNTER_ROUNDS 200
static void test_short_counter(void)
{
    MPI_Win win;
    long long *base = short_window(100 + rank, &win); /* slot 0: what my left neighbour reads */
    MPI_Sync mine, *all = xmalloc((size_t)nprocs * sizeof *all);
    MPI_Win_Sync_alloc_objects(1, &mine, win, MPI_INFO_NULL);
    MPI_Allgather(&mine, 1, MPI_Handle_sync, all, 1, MPI_Handle_sync, MPI_COMM_WORLD);
    const int t = right();
    MPI_Request ops, gets_only, arrived;
    MPI_Win_sync_ops_init(t, MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET | MPI_MODE_WIN_ACCUMULATE,
                          all[t], win, MPI_INFO_NULL, &ops);
    MPI_Win_sync_ops_init(t, MPI_MODE_WIN_GET, all[t], win, MPI_INFO_NULL, &gets_only);
    MPI_Win_sync_object_init(mine, 1, win, MPI_INFO_NULL, &arrived);
    MPI_Barrier(MPI_COMM_WORLD);

    long long v, got, before, one = 1;
    int wrong = 0, at_call = 0, late = 0, rc = MPI_SUCCESS;
    uint64_t d0 = direct_ops(win);
    MPI_Win_lock_all(0, win); /* the counter epoch still takes what its request covers */
    for (int k = 0; k < COUNTER_ROUNDS; k++) {
        MPI_Start(&arrived);
        MPI_Start(&ops);
        uint64_t d = direct_ops(win);
        v = 1000 + k;
        rc |= MPI_Put(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win);
        at_call += direct_ops(win) - d == 1;
        got = -1;
        rc |= MPI_Get(&got, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win);
        wrong += direct_on && got != 100 + t; /* read at the call */
        rc |= MPI_Fetch_and_op(&one, &before, MPI_LONG_LONG, t, 2, MPI_SUM, win);
        rc |= MPI_Wait(&ops, MPI_STATUS_IGNORE);
        wrong += got != 100 + t || before != k;
        rc |= MPI_Wait(&arrived, MPI_STATUS_IGNORE); /* my left neighbour's bump */
        late += base[1] != 1000 + k || base[2] != k + 1;
        MPI_Barrier(MPI_COMM_WORLD); /* its next put only after I read this one */
    }
    is_int(rc, MPI_SUCCESS, "counter epoch: every call succeeded");
    is_int(wrong, 0, "counter epoch: every get and fetch-and-op read the right data");
    is_int(at_call, direct_on ? COUNTER_ROUNDS : 0,
           "counter epoch: each put reached the target's window in MPI_Put itself");
    is_int((long long)(direct_ops(win) - d0), direct_on ? 3LL * COUNTER_ROUNDS : 0,
           "counter epoch: every operation went straight into the mapped window");
    is_int(late, 0, "counter epoch: each bump came behind its put and fetch-and-op");

    MPI_Win_unlock_all(win); /* else the put below would belong to the lock_all epoch */

    long long bad = 0x7777;
    MPI_Start(&arrived);
    MPI_Start(&gets_only);
    int c = class_of(MPI_Put(&bad, 1, MPI_LONG_LONG, t, 5, 1, MPI_LONG_LONG, win));
    MPI_Wait(&gets_only, MPI_STATUS_IGNORE);
    MPI_Wait(&arrived, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(c == MPI_ERR_RMA_SYNC && base[5] == 0,
       "counter epoch: a put under a request for gets only is MPI_ERR_RMA_SYNC and writes "
       "nothing (class %d, slot %lld)", c, base[5]);
    MPI_Request_free(&ops);
    MPI_Request_free(&gets_only);
    MPI_Request_free(&arrived);
    MPI_Win_Sync_free_objects(1, &mine, win);
    free(all);
    MPI_Win_free(&win);
}

/* A lock epoch on a node peer takes the peer's free lock word at its first operation (sync_lock.c,
 * fr_lock_take_early): that put and the next are copied at the call, not queued for the flush.
 * One origin at a time, so the lock is free. */
#define EARLY_CHECKS 2
static void test_lock_early(void)
{
    MPI_Win win;
    int *base = make(1, &win);
    int t = right(), v[2] = {rank + 100, rank + 200};
    for (int turn = 0; turn < nprocs; turn++) {
        if (turn == rank) {
            MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
            uint64_t d0 = direct_ops(win);
            MPI_Put(&v[0], 1, MPI_INT, t, 0, 1, MPI_INT, win);
            MPI_Put(&v[1], 1, MPI_INT, t, 1, 1, MPI_INT, win);
            uint64_t at_calls = direct_ops(win) - d0;
            MPI_Win_unlock(t, win);
            is_int((long long)at_calls, direct_on ? 2 : 0,
                   "lock epoch: the first put takes the free lock, both are copied at the call");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int from = left();
    ok(base[0] == from + 100 && base[1] == from + 200, "lock epoch: both puts arrived");
    direct_window_free(1, &win, base);
}

/* Gets by cross-memory attach wait for the flush and are read there in one system call per
 * 64 (direct.h: fr_cma_gets): many small gets from a malloc'd window (not mapped), in a lock,
 * a fence and a PSCW epoch. None is read at the call, every one at the flush (in the lock epoch
 * the first to each target may be asked of it through the ring instead), each into its own
 * place; a get with a request (MPI_Rget) is not held for a flush (its wait completes it). */
#define GATHER_GETS 100 /* more than one system call's worth */
#define GATHER_CHECKS 7
static void test_gathered(void)
{
    MPI_Win win;
    int n = 2 * GATHER_GETS;
    int *base = direct_window(0, (size_t)n, &win);
    int *got = xmalloc((size_t)nprocs * n * sizeof *got);
    /* Under a lock of my own with MPI_Win_sync, as MPI asks of local stores that others read:
     * with the progress agent nothing else orders them before the agent thread's reads, when
     * it answers gets asked of me through the ring (ThreadSanitizer). */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    fill_pat(base, (size_t)n, rank, 7);
    MPI_Win_sync(win);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* every second int of the other members, in reverse order of target place */
    for (int epoch = 0; epoch < 3; epoch++) {
        static const char *const name[] = {"lock", "fence", "pscw"};
        memset(got, 0, (size_t)nprocs * n * sizeof *got);
        MPI_Group world, others;
        int me[1] = {rank};
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_excl(world, 1, me, &others);
        if (epoch == 1)
            MPI_Win_fence(0, win);
        if (epoch == 2) {
            MPI_Win_post(others, 0, win);
            MPI_Win_start(others, 0, win);
        }
        uint64_t d0 = direct_gets_read(win);
        for (int t = 0; t < nprocs; t++) {
            if (t == rank)
                continue;
            if (epoch == 0)
                MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
            for (int k = GATHER_GETS - 1; k >= 0; k--)
                MPI_Get(got + (size_t)t * n + 2 * k, 1, MPI_INT, t, 2 * k, 1, MPI_INT, win);
        }
        uint64_t at_calls = direct_gets_read(win) - d0;
        if (epoch == 0)
            for (int t = 0; t < nprocs; t++)
                if (t != rank)
                    MPI_Win_unlock(t, win);
        if (epoch == 1)
            MPI_Win_fence(0, win);
        if (epoch == 2) {
            MPI_Win_complete(win);
            MPI_Win_wait(win);
        }
        int right = 1;
        for (int t = 0; t < nprocs; t++)
            for (int i = 0; t != rank && i < n; i++)
                right &= got[(size_t)t * n + i] == (i % 2 ? 0 : pat(t, i, 7));
        ok(right, "gathered gets, %s: each read its own int into its own place", name[epoch]);
        uint64_t at_flush = direct_gets_read(win) - d0;
        ok(at_calls == 0 && at_flush == expect_direct(GATHER_GETS),
           "gathered gets, %s: none read at the call, all at the flush (%llu, then %llu)",
           name[epoch], (unsigned long long)at_calls, (unsigned long long)at_flush);
        MPI_Group_free(&others);
        MPI_Group_free(&world);
    }
    /* MPI_Rget: its wait alone completes it, no flush */
    int other = (rank + 1) % nprocs, one = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win);
    MPI_Request req;
    MPI_Rget(&one, 1, MPI_INT, other, 4, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock(other, win);
    is_int(one, pat(other, 4, 7), "gathered gets: MPI_Rget read the right int");
    free(got);
    direct_window_free(0, &win, base);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    direct_on = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct;
    tap_plan(2 * ACTIVE_CHECKS + 2 * DTYPE_CHECKS + OFF_CHECKS + LOCK_CHECKS + ISSUE_CHECKS +
             SHORT_CHECKS + COUNTER_CHECKS + GATHER_CHECKS + EARLY_CHECKS);
    test_active(1);
    test_active(0);
    test_strided(1);
    test_strided(0);
    test_off();
    test_lock();
    test_issue();
    test_short();
    test_short_counter();
    test_gathered();
    test_lock_early();
    return test_done();
}
