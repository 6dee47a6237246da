/* spawn_workers.c - a window that lives while processes come and go (flexrma's
 * MPI_Win_change_comm, seed 004 "Window as shared memory").
 *
 * The master holds a work window over itself: NTASKS inputs and NTASKS results. It spawns a
 * first crew of workers; they join the window (MPI_Win_change_comm over the communicator
 * MPI_Intercomm_merge gives), each takes its share of the tasks - reading inputs with MPI_Get
 * under a shared lock and delivering each result with MPIX_Put_signal, which bumps a counter of
 * the master - and the crew leaves. The master waits for the results with one sync-object
 * request per crew, then spawns a second, smaller crew for the rest. Finally it checks every
 * result. The window, its memory and its counter live through both crews.
 *
 *   mpirun -np 1 ./spawn_workers [ntasks]      (the master; it spawns the workers itself)
 */
#include <flexrma.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int work(int x) { return x * x + 1; } /* the "computation" */

/* A crew member: join, compute tasks first + i, first + i + crew, ... below end (i: its place in
 * the crew), leave. */
static int worker(MPI_Comm parent)
{
    MPI_Comm all;
    MPI_Intercomm_merge(parent, 1, &all);
    int me, size, range[3]; /* first task, end, tasks in all */
    MPI_Comm_rank(all, &me);
    MPI_Comm_size(all, &size);
    MPI_Sync done;
    MPI_Bcast(&done, 1, MPI_Handle_sync, 0, all);
    MPI_Bcast(range, 3, MPI_INT, 0, all);

    MPI_Win win;
    MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win); /* contributes no memory */
    MPI_Win_change_comm(all, 0, win);                               /* joins: master is rank 0 */

    int end = range[1], ntasks = range[2], crew = size - 1;
    for (int t = range[0] + me - 1; t < end; t += crew) {
        int x, y;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(&x, 1, MPI_INT, 0, t, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        y = work(x);
        MPIX_Put_signal(&y, 1, MPI_INT, 0, ntasks + t, 1, MPI_INT, done, win);
    }
    MPI_Win_change_comm(MPI_COMM_NULL, 0, win); /* leaves: a window over itself remains */
    MPI_Win_free(&win);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

/* The master's side of one crew: spawn, hand out tasks first..end-1 (of ntasks), wait for their
 * results, let the crew go. */
static void run_crew(const char *cmd, int nworkers, MPI_Win win, MPI_Sync done, int first, int end,
                     int ntasks)
{
    MPI_Comm inter, all;
    char *args[] = {"worker", NULL};
    MPI_Comm_spawn(cmd, args, nworkers, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                   MPI_ERRCODES_IGNORE);
    MPI_Intercomm_merge(inter, 0, &all);
    MPI_Bcast(&done, 1, MPI_Handle_sync, 0, all);
    MPI_Bcast((int[]){first, end, ntasks}, 3, MPI_INT, 0, all);
    MPI_Win_change_comm(all, 0, win);
    MPI_Request req;
    MPI_Win_sync_object_init(done, end - first, win, MPI_INFO_NULL, &req);
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE); /* every result of this crew is in the window */
    MPI_Request_free(&req);
    MPI_Win_change_comm(MPI_COMM_SELF, 0, win); /* the crew leaves, the master stays */
    printf("master: crew of %d did tasks %d..%d\n", nworkers, first, end - 1);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&inter);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return worker(parent);

    int ntasks = argc > 1 ? atoi(argv[1]) : 40;
    if (ntasks < 2)
        ntasks = 2;
    int *mem;
    MPI_Alloc_mem((MPI_Aint)(2 * ntasks * (int)sizeof(int)), MPI_INFO_NULL, &mem);
    for (int t = 0; t < ntasks; t++) {
        mem[t] = t;
        mem[ntasks + t] = -1;
    }
    MPI_Win win;
    MPI_Win_create(mem, 2 * ntasks * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_SELF, &win);
    MPI_Sync done;
    MPI_Win_Sync_alloc_objects(1, &done, win, MPI_INFO_NULL);

    run_crew(argv[0], 3, win, done, 0, ntasks / 2, ntasks);
    run_crew(argv[0], 2, win, done, ntasks / 2, ntasks, ntasks);

    int bad = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    for (int t = 0; t < ntasks; t++)
        bad += mem[ntasks + t] != work(t);
    MPI_Win_unlock(0, win);
    printf("master: %d tasks, %d wrong results: %s\n", ntasks, bad, bad ? "FAILED" : "ok");
    MPI_Win_Sync_free_objects(1, &done, win);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    MPI_Finalize();
    return bad != 0;
}
