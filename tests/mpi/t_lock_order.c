/* t_lock_order.c - several lock epochs at once (MPI_Win_lock on every rank, itself included, in
 * increasing rank order), each rank then blocking first on a different target: MPI_Wait on an
 * MPI_Raccumulate, MPI_Rput or MPI_Rget request, MPI_Win_flush or MPI_Win_unlock, then the other
 * targets, then every unlock. A program that locks in one global order never deadlocks on an MPI
 * that takes each lock inside MPI_Win_lock; flexrma takes them later, and must still take them in
 * MPI_Win_lock order (docs/specification.md, section 5). Taken in the order they are needed,
 * they deadlock: rank 0 holds its own lock from MPI_Win_lock(0) and waits on rank 2's, which
 * rank 2 took in MPI_Win_lock(2) and holds while it waits on rank 0's. Every iteration is a
 * chance of that; hundreds make the hang certain (the watchdog then prints the stacks).
 *
 * Phase "exclusive": every lock exclusive. Phase "mixed": one rank per iteration exclusive,
 * the others shared: a process holding only shared locks must keep the order too, or it holds a
 * later target's shared lock while the exclusive holder of an earlier one waits for it. Each
 * (origin, target, iteration) adds 1 to the target's counter and puts the iteration into the
 * origin's slot there, so the counters and slots tell that every operation arrived once. */
#include "common.h"

#define ITER 300
/* Window, in ints: the counter, an int nobody writes (what MPI_Rget reads: a get from a location
 * another origin writes in the same epoch would be a conflicting access), a slot per origin. */
enum { COUNTER = 0, FIXED = 1, SLOT0 = 2 };
enum { HOW_RACC, HOW_RPUT, HOW_RGET, HOW_FLUSH, HOW_UNLOCK, HOWS };
static const char *const how_name[HOWS] = {"MPI_Wait(MPI_Raccumulate)", "MPI_Wait(MPI_Rput)",
                                           "MPI_Wait(MPI_Rget)", "MPI_Win_flush",
                                           "MPI_Win_unlock"};

static iwin w;
static int *put_val; /* per target: what MPI_Rput and MPI_Put send (alive until the unlock) */
static int rget_bad; /* MPI_Rget results that were not 0 */

/* The iteration's operations to t (an accumulate of 1, a put into my slot), blocking on t the
 * way `how` says; returns 1 if that unlocked t. */
static int ops_and_block(int t, int how, int it)
{
    static int one = 1;
    int got = 0;
    MPI_Request req;
    put_val[t] = it + 1;
    switch (how) {
    case HOW_RACC:
        MPI_Raccumulate(&one, 1, MPI_INT, t, COUNTER, 1, MPI_INT, MPI_SUM, w.win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Put(&put_val[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, w.win);
        return 0;
    case HOW_RPUT:
        MPI_Accumulate(&one, 1, MPI_INT, t, COUNTER, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Rput(&put_val[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, w.win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return 0;
    case HOW_RGET:
        MPI_Accumulate(&one, 1, MPI_INT, t, COUNTER, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Put(&put_val[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, w.win);
        MPI_Rget(&got, 1, MPI_INT, t, FIXED, 1, MPI_INT, w.win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (got != 0)
            diag("iteration %d: MPI_Rget from rank %d read %d, not 0", it, t, got);
        rget_bad += got != 0;
        return 0;
    case HOW_FLUSH:
        MPI_Accumulate(&one, 1, MPI_INT, t, COUNTER, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Put(&put_val[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, w.win);
        MPI_Win_flush(t, w.win);
        return 0;
    default:
        MPI_Accumulate(&one, 1, MPI_INT, t, COUNTER, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Put(&put_val[t], 1, MPI_INT, t, SLOT0 + rank, 1, MPI_INT, w.win);
        MPI_Win_unlock(t, w.win);
        return 1;
    }
}

/* One iteration: lock every rank in increasing order (all exclusive or all shared), block first
 * on a target other than myself, then on each of the others in turn (downwards from the first),
 * then unlock what is still locked, starting at the first target. */
static void iteration(int it, int exclusive)
{
    int n = nprocs;
    int *unlocked = xmalloc((size_t)n * sizeof(int));
    memset(unlocked, 0, (size_t)n * sizeof(int));
    for (int t = 0; t < n; t++)
        MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, w.win);
    int first = (rank + 1 + it % (n - 1)) % n; /* never myself */
    int how = (it / (n - 1) + rank) % HOWS;
    unlocked[first] = ops_and_block(first, how, it);
    for (int k = 1; k < n; k++) {
        int t = (first + n - k) % n;
        unlocked[t] = ops_and_block(t, (how + k) % HOWS, it);
    }
    for (int k = 0; k < n; k++) {
        int t = (first + k) % n;
        if (!unlocked[t])
            MPI_Win_unlock(t, w.win);
    }
    free(unlocked);
}

/* After `iters` iterations, my counter and every origin's slot. */
static void check(const char *phase, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD); /* every epoch on me is over */
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    is_int(mine[COUNTER], (long long)iters * nprocs, "%s: accumulates from every rank", phase);
    int bad = 0;
    for (int r = 0; r < nprocs; r++)
        bad += mine[SLOT0 + r] != iters;
    is_int(bad, 0, "%s: slots holding another iteration's put", phase);
    is_int(rget_bad, 0, "%s: MPI_Rget results that were not 0", phase);
    rget_bad = 0;
    memset(mine, 0, w.n * sizeof(int));
    write_own(&w, mine);
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD); /* zeroed before the next phase */
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(6);
    iwin_create(&w, (size_t)SLOT0 + nprocs);
    put_val = xmalloc((size_t)nprocs * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        diag("blocking calls rotate through %s, %s, %s, %s, %s", how_name[0], how_name[1],
             how_name[2], how_name[3], how_name[4]);

    for (int it = 0; it < ITER; it++) {
        iteration(it, 1);
        MPI_Barrier(MPI_COMM_WORLD); /* iterations do not overlap: each one is a fresh race */
    }
    check("exclusive locks on every rank", ITER);

    for (int it = 0; it < ITER; it++) {
        iteration(it, rank == it % nprocs);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    check("one rank exclusive, the others shared", ITER);

    free(put_val);
    iwin_free(&w);
    return test_done();
}
