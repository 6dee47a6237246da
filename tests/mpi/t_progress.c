/* t_progress.c - a target blocked in another MPI call must still serve RMA aimed at it (MPI's
 * progress rule). The target sits in MPI_Recv, MPI_Barrier or MPI_Wait on an MPI_Irecv, waiting
 * for messages that the origins send only after their lock/put/get/unlock epoch on it returned;
 * and in MPI_Recv between MPI_Win_post and MPI_Win_wait, for messages the origins send after
 * MPI_Win_complete. A target that does not progress deadlocks the test (ctest's timeout fails
 * it). Each origin moves a small and a large (128 KiB) block and gets one back, so lock grants,
 * data, replies and completion all need the target. Each scenario runs with rank 0 and with the
 * last rank as the target. */
#include "common.h"

#define L 32768 /* ints per region: 128 KiB */
#define TAG 17

enum scenario { IN_RECV, IN_BARRIER, IN_WAIT, PSCW_IN_RECV, N_SCENARIOS };
static const char *scenario_name[] = {"MPI_Recv", "MPI_Barrier", "MPI_Wait on an MPI_Irecv",
                                      "MPI_Recv between post and wait"};

static iwin w; /* region r < nprocs: written by origin r; region nprocs: the target's own */
static int *src, *got;

static int *region(int *base, int r) { return base + (size_t)r * L; }

static void target(enum scenario s, int e)
{
    MPI_Group origins = MPI_GROUP_NULL;
    if (s == PSCW_IN_RECV) {
        int ranks[64], n = 0;
        for (int r = 0; r < nprocs; r++)
            if (r != rank)
                ranks[n++] = r;
        origins = world_subgroup(ranks, n);
        MPI_Win_post(origins, 0, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* origins start now */

    if (s == IN_BARRIER) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int k = 0; k < nprocs - 1; k++) {
            if (s == IN_WAIT) {
                MPI_Request req;
                MPI_Irecv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }

    int bad = 0;
    if (s == PSCW_IN_RECV) {
        MPI_Win_wait(w.win);
        MPI_Group_free(&origins);
    } else {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win); /* see the finished epochs' updates */
    }
    for (int r = 0; r < nprocs; r++)
        if (r != rank)
            for (int i = 0; i < L; i++)
                bad += region(w.buf, r)[i] != pat(r, i, e);
    if (s != PSCW_IN_RECV)
        MPI_Win_unlock(rank, w.win);
    is_int(bad, 0, "target in %s: ints not delivered by the origins", scenario_name[s]);
}

static void origin(int t, enum scenario s, int e)
{
    for (int i = 0; i < L; i++) {
        src[i] = pat(rank, i, e);
        got[i] = -1;
    }
    MPI_Group tg = world_subgroup(&t, 1);
    MPI_Barrier(MPI_COMM_WORLD); /* the target is about to block */
    if (s == PSCW_IN_RECV)
        MPI_Win_start(tg, 0, w.win);
    else
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    MPI_Put(src, 1, MPI_INT, t, (MPI_Aint)rank * L, 1, MPI_INT, w.win);
    MPI_Put(src + 1, L - 1, MPI_INT, t, (MPI_Aint)rank * L + 1, L - 1, MPI_INT, w.win);
    MPI_Get(got, L, MPI_INT, t, (MPI_Aint)nprocs * L, L, MPI_INT, w.win);
    if (s == PSCW_IN_RECV)
        MPI_Win_complete(w.win);
    else
        MPI_Win_unlock(t, w.win);
    MPI_Group_free(&tg);

    if (s == IN_BARRIER)
        MPI_Barrier(MPI_COMM_WORLD);
    else
        MPI_Send(NULL, 0, MPI_INT, t, TAG, MPI_COMM_WORLD);

    int bad = 0;
    for (int i = 0; i < L; i++)
        bad += got[i] != pat(t, i, e);
    is_int(bad, 0, "origin, target %d in %s: ints wrong in the get", t, scenario_name[s]);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2 * N_SCENARIOS);
    iwin_create(&w, (size_t)(nprocs + 1) * L);
    src = xmalloc(L * sizeof(int));
    got = xmalloc(L * sizeof(int));

    int e = 0;
    for (int which = 0; which < 2; which++) {
        int t = which ? nprocs - 1 : 0;
        for (int s = 0; s < N_SCENARIOS; s++, e++) {
            if (rank == t) { /* what the origins get: stored (under a lock on oneself, so
                                remote epochs see it) before anyone starts */
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
                for (int i = 0; i < L; i++)
                    region(w.buf, nprocs)[i] = pat(t, i, e);
                MPI_Win_unlock(rank, w.win);
                target((enum scenario)s, e);
            } else {
                origin(t, (enum scenario)s, e);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }

    iwin_free(&w);
    free(src);
    free(got);
    return test_done();
}
