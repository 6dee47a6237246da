/* sync_neighbours.c - a 1-D halo exchange synchronized only with the synchronization counters of
 * NEC's proposal for MPI-3, as flexrma provides them (flexrma.h): no fence, no lock, no
 * post/start/complete/wait and no barrier. Each process waits for exactly the two neighbours it
 * depends on, and only once their data is in its memory.
 *
 * The domain is a periodic row of nprocs*N cells, N per process, smoothed by the 3-point stencil
 * u'[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4. Every process keeps its cells in u[1..N] and two ghost
 * cells, u[0] (its left neighbour's last cell) and u[N+1] (its right neighbour's first cell); the
 * whole array is its window. Every process owns two counters:
 *
 *   halo  bumped by a neighbour once its put into my ghost cells is in my window;
 *   free  bumped by a neighbour once it has used the ghost cells I put into it, so that I may
 *         overwrite them.
 *
 * One iteration, on every process:
 *   1. (after the first) wait until both neighbours have freed their ghost cells: a sync-object
 *      request on my "free" counter, count = number of neighbours;
 *   2. put my edge cells into my neighbours' ghost cells, each under a started sync-ops request
 *      for MPI_MODE_WIN_PUT on that neighbour's "halo" counter; MPI_Waitall completes the puts
 *      and sends each bump behind its put;
 *   3. wait on my "halo" counter for one bump per neighbour: my ghost cells are filled;
 *   4. apply the stencil, then tell both neighbours (a pure signal, sync_mode 0, on their "free"
 *      counters) that my ghost cells may be overwritten.
 * A neighbour may run up to one step ahead: bumps that arrive before the request waiting for them
 * is started are kept by the counter.
 *
 * Every request is persistent: made once, then only MPI_Start and MPI_Wait in the loop.
 *
 * Usage: mpirun -np P ./sync_neighbours [--time] [iterations]
 * Rank 0 gathers the result, compares it with the same stencil computed serially, prints a
 * checksum (the sum of the squared cells, which smoothing lowers step by step), and every process
 * exits 0 if they agree, 1 otherwise. --time adds a line: the median step, and the same exchange
 * with fence and with Isend/Irecv (timing.h). */
#include "timing.h"

#include <flexrma.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64 /* cells owned by each process */
enum { HALO, FREE };

static double initial(long cell) { return (double)((cell * 37) % 101); }

/* One step of the stencil on u[1..n], reading u[0..n+1]; tmp has n+2 cells. */
static void stencil(double *u, double *tmp, int n)
{
    for (int i = 1; i <= n; i++)
        tmp[i] = (u[i - 1] + 2.0 * u[i] + u[i + 1]) * 0.25;
    memcpy(u + 1, tmp + 1, (size_t)n * sizeof(double));
}

/* The same computation on the whole periodic row, on one process. */
static void serial(double *row, int cells, int iterations)
{
    double *u = malloc((size_t)(cells + 2) * sizeof(double));
    double *tmp = malloc((size_t)(cells + 2) * sizeof(double));
    for (int c = 0; c < cells; c++)
        u[c + 1] = initial(c);
    for (int it = 0; it < iterations; it++) {
        u[0] = u[cells];
        u[cells + 1] = u[1];
        stencil(u, tmp, cells);
    }
    memcpy(row, u + 1, (size_t)cells * sizeof(double));
    free(u);
    free(tmp);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    const int timing = timing_requested(&argc, argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 100;

    double *u, tmp[N + 2];
    MPI_Alloc_mem((N + 2) * sizeof(double), MPI_INFO_NULL, &u);
    u[0] = u[N + 1] = 0.0;
    for (int i = 1; i <= N; i++)
        u[i] = initial((long)rank * N + i - 1);
    MPI_Win win;
    MPI_Win_create(u, (N + 2) * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);

    /* My counters, and everyone's: counters travel as MPI_Handle_sync. */
    MPI_Sync mine[2], *all = malloc((size_t)nprocs * 2 * sizeof(MPI_Sync));
    MPI_Win_Sync_alloc_objects(2, mine, win, MPI_INFO_NULL);
    MPI_Allgather(mine, 2, MPI_Handle_sync, all, 2, MPI_Handle_sync, MPI_COMM_WORLD);

    /* The distinct neighbours: two, or one (both sides) with two processes, or myself alone. */
    int nbr[2], nn = 0;
    nbr[nn++] = left;
    if (right != left)
        nbr[nn++] = right;
    MPI_Request put[2], signal_free[2], halo_filled, ghosts_free;
    for (int k = 0; k < nn; k++) {
        MPI_Win_sync_ops_init(nbr[k], MPI_MODE_WIN_PUT, all[2 * nbr[k] + HALO], win,
                              MPI_INFO_NULL, &put[k]);
        MPI_Win_sync_ops_init(nbr[k], 0, all[2 * nbr[k] + FREE], win, MPI_INFO_NULL,
                              &signal_free[k]);
    }
    MPI_Win_sync_object_init(mine[HALO], nn, win, MPI_INFO_NULL, &halo_filled);
    MPI_Win_sync_object_init(mine[FREE], nn, win, MPI_INFO_NULL, &ghosts_free);

    step_clock clock;
    step_clock_init(&clock, iterations, timing);
    for (int it = 0; it < iterations; it++) {
        step_clock_mark(&clock);
        if (it > 0) { /* 1 */
            MPI_Start(&ghosts_free);
            MPI_Wait(&ghosts_free, MPI_STATUS_IGNORE);
        }
        MPI_Startall(nn, put); /* 2 */
        MPI_Put(&u[1], 1, MPI_DOUBLE, left, N + 1, 1, MPI_DOUBLE, win);
        MPI_Put(&u[N], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
        MPI_Waitall(nn, put, MPI_STATUSES_IGNORE);
        MPI_Start(&halo_filled); /* 3 */
        MPI_Wait(&halo_filled, MPI_STATUS_IGNORE);
        stencil(u, tmp, N); /* 4 */
        MPI_Startall(nn, signal_free);
        MPI_Waitall(nn, signal_free, MPI_STATUSES_IGNORE);
    }
    step_clock_mark(&clock);
    if (iterations > 0) { /* the last signals: nothing is left in flight */
        MPI_Start(&ghosts_free);
        MPI_Wait(&ghosts_free, MPI_STATUS_IGNORE);
    }

    /* Check against the serial computation and print a checksum. */
    double *row = NULL, *expect = NULL;
    if (rank == 0) {
        row = malloc((size_t)nprocs * N * sizeof(double));
        expect = malloc((size_t)nprocs * N * sizeof(double));
    }
    MPI_Gather(&u[1], N, MPI_DOUBLE, row, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int wrong = 0;
    if (rank == 0) {
        serial(expect, nprocs * N, iterations);
        double sum = 0.0;
        int first = -1;
        for (int c = 0; c < nprocs * N; c++) {
            sum += row[c] * row[c]; /* the stencil keeps the plain sum: square it */
            if (row[c] != expect[c] && wrong++ == 0)
                first = c;
        }
        if (!wrong)
            printf("sync_neighbours: %d ranks, %d iterations, checksum %.12g, matches the serial "
                   "stencil\n", nprocs, iterations, sum);
        else
            printf("sync_neighbours: %d ranks, %d iterations, checksum %.12g, %d WRONG cells "
                   "(first: cell %d is %.17g, expected %.17g)\n", nprocs, iterations, sum, wrong,
                   first, row[first], expect[first]);
        free(row);
        free(expect);
    }
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (timing) {
        double us = step_clock_median_us(&clock);
        timing_report("sync_neighbours", "the counters", us, halo_fence_us(N, iterations),
                      halo_isend_us(N, iterations));
    }

    for (int k = 0; k < nn; k++) {
        MPI_Request_free(&put[k]);
        MPI_Request_free(&signal_free[k]);
    }
    MPI_Request_free(&halo_filled);
    MPI_Request_free(&ghosts_free);
    MPI_Win_Sync_free_objects(2, mine, win);
    free(all);
    MPI_Win_free(&win);
    MPI_Free_mem(u);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
