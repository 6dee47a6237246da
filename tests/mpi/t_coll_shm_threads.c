/* t_coll_shm_threads.c - barriers and allreduces through flexrma's shared-memory areas
 * (progress/coll_shm.c) from several threads at once (MPI_THREAD_MULTIPLE), each thread on a
 * communicator of its own: areas made and used side by side, while the main thread serves RMA
 * on a window through its own collectives. Every sum is checked; a thread whose area or wait
 * were shared with another would hang or count wrong. Run under ThreadSanitizer too (label
 * threads). */
#include "common.h"
#include "core/fr.h"
#include "progress/coll_shm.h"

#include <pthread.h>

#define THREADS 2
#define CALLS 400

typedef struct job {
    MPI_Comm comm;
    int index, wrong;
} job;

static void *work(void *arg)
{
    job *j = arg;
    for (int i = 0; i < CALLS; i++) {
        long mine[4] = {rank + i, j->index, 1, -rank}, sum[4];
        MPI_Allreduce(mine, sum, 4, MPI_LONG, MPI_SUM, j->comm);
        long want0 = (long)nprocs * (nprocs - 1) / 2 + (long)nprocs * i;
        j->wrong += sum[0] != want0 || sum[1] != (long)nprocs * j->index ||
                    sum[2] != nprocs || sum[3] != -(long)nprocs * (nprocs - 1) / 2;
        if (i % 3 == 0)
            MPI_Barrier(j->comm);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    tap_plan(3);
    if (provided < MPI_THREAD_MULTIPLE) {
        skip(3, "the MPI library does not provide MPI_THREAD_MULTIPLE");
        return test_done();
    }
    iwin w;
    iwin_create(&w, 16);
    job jobs[THREADS];
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) {
        jobs[k] = (job){MPI_COMM_NULL, k + 1, 0};
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[k].comm);
    }
    for (int k = 0; k < THREADS; k++)
        pthread_create(&t[k], NULL, work, &jobs[k]);
    /* Meanwhile: puts to the right neighbour, each epoch closed, and barriers on the world. */
    int value[16], wrong = 0;
    for (int i = 0; i < 200; i++) {
        fill_pat(value, 16, rank, i);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, w.win);
        MPI_Put(value, 16, MPI_INT, right(), 0, 16, MPI_INT, w.win);
        MPI_Win_unlock(right(), w.win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
        wrong += !is_pat(w.buf, 16, left(), i);
        MPI_Win_unlock(rank, w.win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int through = 1;
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        wrong += jobs[k].wrong;
        through &= fr_coll_shm_calls(jobs[k].comm) > 0;
        MPI_Comm_free(&jobs[k].comm);
    }
    /* Node peers all (one host), without the agent (which keeps the library's collectives). */
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int want = node_size == nprocs && !fr_opt.async_progress && fr_opt.coll_shm > 0;
    ok(through == want, "the threads' communicators %s through shared memory",
       want ? "went" : "did not go");
    ok(wrong == 0, "%d threads' allreduces and barriers and the main thread's epochs: all right",
       THREADS);
    int all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok(all == 0, "on every rank");
    iwin_free(&w);
    return test_done();
}
