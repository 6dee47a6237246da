/* t_fairness.c - passive target locks under contention (3 or more ranks), all on rank 0.
 *
 * 1. Starvation: every rank but rank 1 takes shared locks on rank 0 in a tight loop (rank 0
 *    included, so shared epochs overlap); once they all stream, rank 1 asks for an exclusive
 *    lock. The readers stop when they see its write, so a starved writer hangs the test (they
 *    give up, failing, after DEADLINE seconds, before ctest's timeout).
 * 2. Mutual exclusion: every rank repeatedly writes its signature into all M ints of an array
 *    with M separate puts under an exclusive lock, and reads the array back in a separate,
 *    shared epoch. Two epochs that overlapped (exclusive with exclusive, or exclusive with
 *    shared) would leave or show a mixed array; serialized ones never do. A counter accumulated
 *    in every exclusive epoch must come out exact as well. */
#include "common.h"

#define M 64          /* ints in the array */
#define FLAG M        /* set by the writer of phase 1 */
#define COUNT (M + 1) /* incremented in every exclusive epoch of phase 2 */
#define ROUNDS 100
#define DEADLINE 30.0
#define TAG_STREAMING 7
#define WRITER 1

static iwin w; /* only rank 0's is used */

static int sig(int r, int round) { return (r + 1) * 100000 + round; }

/* 1 if all M ints are equal. */
static int uniform(const int *a)
{
    for (int i = 1; i < M; i++)
        if (a[i] != a[0])
            return 0;
    return 1;
}

static void put_signature(int value)
{
    static int v;
    v = value; /* stays valid until the unlock */
    for (int i = 0; i < M; i++)
        MPI_Put(&v, 1, MPI_INT, 0, i, 1, MPI_INT, w.win);
}

static void starvation(void)
{
    int got[M + 1], one = 1;
    if (rank == WRITER) {
        for (int r = 0; r < nprocs; r++) /* wait until every reader is streaming */
            if (r != WRITER)
                MPI_Recv(NULL, 0, MPI_INT, r, TAG_STREAMING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t0 = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        put_signature(sig(WRITER, 999));
        MPI_Put(&one, 1, MPI_INT, 0, FLAG, 1, MPI_INT, w.win);
        MPI_Win_unlock(0, w.win);
        double t = MPI_Wtime() - t0;
        ok(t < DEADLINE, "exclusive lock under a stream of shared locks took %.3f s", t);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        MPI_Get(got, M + 1, MPI_INT, 0, 0, M + 1, MPI_INT, w.win);
        MPI_Win_unlock(0, w.win);
        ok(got[FLAG] == 1 && got[0] == sig(WRITER, 999) && uniform(got),
           "the exclusive epoch's writes are all there");
    } else {
        long epochs = 0, torn = 0;
        int seen = 0;
        MPI_Request req = MPI_REQUEST_NULL;
        double deadline = MPI_Wtime() + DEADLINE;
        while (!seen && MPI_Wtime() < deadline) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
            MPI_Get(got, M + 1, MPI_INT, 0, 0, M + 1, MPI_INT, w.win);
            MPI_Win_unlock(0, w.win);
            seen = got[FLAG] == 1;
            /* All old or all new: a shared epoch never sees half an exclusive one. */
            torn += !uniform(got) || (seen && got[0] != sig(WRITER, 999));
            if (++epochs == 20)
                MPI_Isend(NULL, 0, MPI_INT, WRITER, TAG_STREAMING, MPI_COMM_WORLD, &req);
        }
        if (epochs < 20) /* gave up early: release the writer all the same */
            MPI_Isend(NULL, 0, MPI_INT, WRITER, TAG_STREAMING, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        ok(seen, "the exclusive lock got in while this rank streamed shared locks (%ld epochs)",
           epochs);
        is_int(torn, 0, "shared epochs that saw a partial exclusive epoch");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void mutual_exclusion(void)
{
    int got[M + 2], one = 1;
    long mixed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        put_signature(sig(rank, round));
        MPI_Accumulate(&one, 1, MPI_INT, 0, COUNT, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Win_unlock(0, w.win);

        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        MPI_Get(got, M, MPI_INT, 0, 0, M, MPI_INT, w.win);
        MPI_Win_unlock(0, w.win);
        if (!uniform(got) && !mixed++)
            diag("round %d: mixed array, [0]=%d [%d]=%d", round, got[0], M - 1, got[M - 1]);
    }
    is_int(mixed, 0, "%d exclusive write epochs per rank: mixed arrays seen", ROUNDS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
    MPI_Get(got, M + 2, MPI_INT, 0, 0, M + 2, MPI_INT, w.win);
    MPI_Win_unlock(0, w.win);
    is_int(got[COUNT], (long long)ROUNDS * nprocs, "counter accumulated in every exclusive epoch");
    ok(uniform(got), "the array is uniform after all epochs");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (nprocs < 3) {
        tap_plan(1);
        skip(1, "needs at least 3 ranks");
        return test_done();
    }
    tap_plan(2 + 3);
    iwin_create(&w, M + 2);
    MPI_Barrier(MPI_COMM_WORLD);

    starvation();
    mutual_exclusion();

    iwin_free(&w);
    return test_done();
}
