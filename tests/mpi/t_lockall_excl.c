/* t_lockall_excl.c - MPI_Win_lock_all epochs against processes that hold several exclusive locks
 * at once: no order of events deadlocks, and the epochs exclude each other
 * (docs/specification.md, section 5: MPI_Win_lock_all takes a shared lock on every member inside
 * the call, all or nothing, by tries that never queue, so it never holds one lock while waiting
 * for another).
 *
 * P2: X locks A exclusively and uses it, then locks B exclusively and uses it, then unlocks both;
 *     Y, in a lock_all epoch, uses B, then A. Run in every interleaving of X's two steps with
 *     Y's two (and Y's lock_all at the start or at its first use), each step at its own 10 ms
 *     slot after a barrier; with A, B, X and Y distinct (4 ranks), with B = Y (P2') and with
 *     A = X (P2'': X's first lock is on itself, taken in MPI_Win_lock), and the roles rotated
 *     over the ranks, so that every rank plays each of them (node peers and, with
 *     FLEXRMA_TEST_NODES, members reached by messages). A lock_all taking a shared lock per
 *     target when it first needs it deadlocks there: X holds A and waits for B, Y holds B and
 *     waits for A.
 * P4: X locks A exclusively, uses it, and waits for a message from Z; Y's lock_all then waits
 *     behind X; Z locks Y exclusively, uses it, unlocks and sends X the message. Completes only
 *     if Z's exclusive lock is granted while Y's lock_all waits (and Y's lock_all holds no lock
 *     of Y's window meanwhile).
 * Mixed: iterations in which each rank either runs a lock_all epoch or locks several targets
 *     at once, each exclusive or shared, in an order drawn per iteration (the same for every
 *     rank: two processes locking exclusively in opposite orders deadlock on any MPI that
 *     locks in MPI_Win_lock), with short sleeps inside the epochs.
 *
 * Data: every rank's window holds a pair of counters that only exclusive epochs change, one
 * step at a time with a flush (and a sleep) between the two halves, so an epoch that may run
 * beside an exclusive one would see the halves differ; lock_all and shared epochs read pairs
 * (gets, or loads of their own window) and count what they see torn. The counters must end at
 * the number of exclusive epochs on each rank, and the lock_all epochs' accumulates at theirs.
 * A hang is a failure: the watchdog prints every rank's stack. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "splitmix.h"

#include <time.h>

#define SLOT 0.010    /* seconds between the scheduled steps of P2 and P4 */
#define ITERS 150     /* mixed iterations */
enum { C1 = 0, C2 = 1, ACC = 2, WORDS = 3 }; /* window, in ints: the pair, lock_all's counter */

static iwin w;
static long *excl_on; /* exclusive read-modify-writes of the pair I made on each rank */
static long *acc_on;  /* accumulates of 1 I made into each rank's ACC */
static int torn;      /* pairs I saw with halves that differ */
static double t0;     /* the start of a schedule (after its barrier) */

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void at_slot(int slot)
{
    double until = t0 + slot * SLOT, now;
    while ((now = MPI_Wtime()) < until)
        sleep_s(until - now);
}

static void start_schedule(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
}

/* Exclusive epoch on t is open: add one to its pair, one half after the other. */
static void pair_rmw(int t)
{
    int pair[2];
    if (t == rank) { /* my own window, under my exclusive lock of myself */
        volatile int *b = w.buf;
        pair[0] = b[C1];
        pair[1] = b[C2];
        b[C1] = pair[0] + 1;
        sleep_s(200e-6);
        b[C2] = pair[0] + 1;
    } else {
        MPI_Get(pair, 2, MPI_INT, t, C1, 2, MPI_INT, w.win);
        MPI_Win_flush(t, w.win);
        int v = pair[0] + 1;
        MPI_Put(&v, 1, MPI_INT, t, C1, 1, MPI_INT, w.win);
        MPI_Win_flush(t, w.win);
        sleep_s(200e-6);
        MPI_Put(&v, 1, MPI_INT, t, C2, 1, MPI_INT, w.win);
        MPI_Win_flush(t, w.win);
    }
    if (pair[0] != pair[1] && !torn++)
        diag("exclusive epoch on rank %d found its pair torn: %d, %d", t, pair[0], pair[1]);
    excl_on[t]++;
}

/* A shared or lock_all epoch on t is open: read its pair, which must not be torn. */
static void pair_read(int t)
{
    int pair[2];
    if (t == rank) {
        volatile int *b = w.buf;
        pair[0] = b[C1];
        pair[1] = b[C2];
    } else {
        MPI_Get(pair, 2, MPI_INT, t, C1, 2, MPI_INT, w.win);
        MPI_Win_flush(t, w.win);
    }
    if (pair[0] != pair[1] && !torn++)
        diag("rank %d's pair torn in a shared or lock_all epoch: %d, %d", t, pair[0], pair[1]);
}

/* Y's use of t in its lock_all epoch: read the pair, add one to its ACC. */
static void lockall_use(int t)
{
    int one = 1;
    pair_read(t);
    MPI_Accumulate(&one, 1, MPI_INT, t, ACC, 1, MPI_INT, MPI_SUM, w.win);
    MPI_Win_flush(t, w.win);
    acc_on[t]++;
}

/* ---- P2 ---- */

/* The interleavings of X's steps (x) with Y's (y): each character is a slot. */
static const char *const orders[] = {"xxyy", "xyxy", "xyyx", "yxxy", "yxyx", "yyxx"};
#define NORDERS 6

/* One schedule of P2: order o, Y's lock_all at slot 0 (late = 0) or at its first use. */
static void p2_schedule(int X, int Y, int A, int B, int o, int late)
{
    int xs[2], ys[2], nx = 0, ny = 0;
    for (int s = 0; s < 4; s++) {
        if (orders[o][s] == 'x')
            xs[nx++] = s;
        else
            ys[ny++] = s;
    }
    start_schedule();
    if (rank == X) {
        at_slot(xs[0]);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, A, 0, w.win);
        pair_rmw(A);
        at_slot(xs[1]);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, B, 0, w.win);
        pair_rmw(B);
        MPI_Win_unlock(B, w.win);
        MPI_Win_unlock(A, w.win);
    } else if (rank == Y) {
        at_slot(late ? ys[0] : 0);
        MPI_Win_lock_all(0, w.win);
        at_slot(ys[0]);
        lockall_use(B);
        at_slot(ys[1]);
        lockall_use(A);
        MPI_Win_unlock_all(w.win);
    }
}

/* Every schedule with the roles rotated over the ranks. which: 0 distinct, 1 B = Y, 2 A = X. */
static void p2(int which, const char *name)
{
    int schedules = 0;
    for (int r = 0; r < nprocs; r++) {
        int X = r, Y = (r + 1) % nprocs, A = (r + 2) % nprocs, B = (r + 3) % nprocs;
        if (which == 1)
            B = Y;
        else if (which == 2)
            B = A, A = X;
        for (int o = 0; o < NORDERS; o++)
            for (int late = 0; late < 2; late++)
                p2_schedule(X, Y, A, B, o, late), schedules++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ok(1, "%s: %d schedules (every interleaving, roles rotated) completed", name, schedules);
}

/* ---- P4 ---- */

static void p4(void)
{
    int rounds = 0;
    for (int r = 0; r < nprocs; r++) {
        int X = r, Y = (r + 1) % nprocs, Z = (r + 2) % nprocs;
        int A = nprocs > 3 ? (r + 3) % nprocs : Z;
        start_schedule();
        if (rank == X) {
            int msg;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, A, 0, w.win);
            pair_rmw(A);
            MPI_Recv(&msg, 1, MPI_INT, Z, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_unlock(A, w.win);
        } else if (rank == Y) {
            at_slot(1);
            MPI_Win_lock_all(0, w.win);
            lockall_use(A);
            MPI_Win_unlock_all(w.win);
        }
        if (rank == Z) { /* Z may be A as well */
            at_slot(2);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, Y, 0, w.win);
            pair_rmw(Y);
            MPI_Win_unlock(Y, w.win);
            MPI_Send(&r, 1, MPI_INT, X, 40, MPI_COMM_WORLD);
        }
        rounds++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ok(1, "P4: %d rounds (a second exclusive locker while a lock_all waits) completed", rounds);
}

/* ---- mixed iterations ---- */

static void mixed(void)
{
    uint64_t seed = 0x6c6f636b616c6cull; /* the same on every rank */
    int n = nprocs;
    int *order = xmalloc((size_t)n * sizeof(int)), *type = xmalloc((size_t)n * sizeof(int));
    for (int it = 0; it < ITERS; it++) {
        for (int t = 0; t < n; t++)
            order[t] = t;
        for (int i = n - 1; i > 0; i--) { /* this iteration's lock order */
            int j = (int)(splitmix64(&seed) % (uint64_t)(i + 1)), x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        uint64_t mine = seed ^ (uint64_t)(rank + 1) * 0x9e3779b97f4a7c15ull; /* my choices */
        int lockall = splitmix64(&mine) % 100 < 40;
        int nap = (int)(splitmix64(&mine) % 300); /* microseconds inside the epoch */
        MPI_Barrier(MPI_COMM_WORLD);
        if (lockall) {
            MPI_Win_lock_all(0, w.win);
            for (int k = 0; k < n; k++)
                if (splitmix64(&mine) % 2)
                    lockall_use(order[k]);
            sleep_s(nap * 1e-6);
            pair_read(rank);
            MPI_Win_unlock_all(w.win);
            continue;
        }
        int nlocked = 0;
        for (int k = 0; k < n; k++) {
            int t = order[k];
            uint64_t x = splitmix64(&mine) % 100;
            type[t] = x < 45 ? MPI_LOCK_EXCLUSIVE : x < 70 ? MPI_LOCK_SHARED : 0;
            if (type[t]) {
                MPI_Win_lock(type[t], t, 0, w.win);
                nlocked++;
            }
        }
        if (!nlocked) { /* at least one exclusive lock, on the last target of the order */
            type[order[n - 1]] = MPI_LOCK_EXCLUSIVE;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, order[n - 1], 0, w.win);
        }
        /* Use them backwards: the last lock is needed first, so the earlier ones are taken
         * before it (MPI_Win_lock order) by the call that needs it. */
        for (int k = n - 1; k >= 0; k--) {
            int t = order[k];
            if (type[t] == MPI_LOCK_EXCLUSIVE)
                pair_rmw(t);
            else if (type[t] == MPI_LOCK_SHARED)
                pair_read(t);
        }
        sleep_s(nap * 1e-6);
        int first = (int)(splitmix64(&mine) % (uint64_t)n);
        for (int k = 0; k < n; k++) {
            int t = (first + k) % n;
            if (type[t])
                MPI_Win_unlock(t, w.win);
        }
    }
    free(order);
    free(type);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(1, "mixed: %d iterations of lock_all beside several locks at once completed", ITERS);
}

/* Every rank's pair and ACC against what everyone says it did. */
static void check_counts(const char *what)
{
    long *excl = xmalloc((size_t)nprocs * sizeof(long)), *acc = xmalloc((size_t)nprocs * sizeof(long));
    MPI_Allreduce(excl_on, excl, nprocs, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(acc_on, acc, nprocs, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    ok(mine[C1] == excl[rank] && mine[C2] == excl[rank] && mine[ACC] == acc[rank],
       "%s: my pair %d, %d after %ld exclusive epochs; ACC %d after %ld accumulates", what,
       mine[C1], mine[C2], excl[rank], mine[ACC], acc[rank]);
    free(mine);
    free(excl);
    free(acc);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(nprocs >= 4 ? 8 : 7);
    if (nprocs < 3) {
        if (rank == 0)
            fprintf(stderr, "this test needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    iwin_create(&w, WORDS);
    excl_on = calloc((size_t)nprocs, sizeof(long));
    acc_on = calloc((size_t)nprocs, sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    if (nprocs >= 4)
        p2(0, "P2 (A, B, X, Y distinct)");
    p2(1, "P2' (B = Y)");
    p2(2, "P2'' (A = X)");
    p4();
    check_counts("P2 and P4");
    mixed();
    check_counts("P2, P4 and mixed");
    is_int(torn, 0, "pairs seen torn (an epoch ran beside an exclusive one)");
    free(excl_on);
    free(acc_on);
    iwin_free(&w);
    return test_done();
}
