/* notify_halo.c - a 1-D halo exchange synchronized only with notified RMA, the MPI Forum draft's
 * calls as flexrma provides them (flexrma.h; Intel MPI ships the same names): MPI_Put_notify
 * puts an edge cell into a neighbour's ghost cell and increments a notification counter there
 * once the cell is in its memory; the neighbour only polls MPI_Win_notify_get_value. One
 * lock_all epoch for the whole run, no flush needed for synchronization, no barrier.
 *
 * The domain is a periodic row of nprocs*N cells, N per process, smoothed by the 3-point stencil
 * u'[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4. Each process keeps u[1..N] and two ghost cells per
 * parity of the step (u[0], u[N+1] in window half 0 or 1), so a neighbour one step ahead writes
 * the other half. Notification counters per process:
 *   0, 1   ghost cells of step parity 0 / 1 arrived (from both neighbours: 2 a step);
 *   2, 3   my left / right neighbour has read my cells of a step, so I may overwrite that parity
 *          two steps on (one counter per neighbour: a neighbour never runs ahead of my puts, but
 *          one count for both could be made of one neighbour's two steps).
 *
 * Usage: mpirun -np P ./notify_halo [--time] [iterations]
 * Rank 0 compares the result with the same stencil computed serially and prints a checksum.
 * --time adds a line: the median step, and the same exchange with fence and with Isend/Irecv
 * (timing.h). */
#include "timing.h"

#include <flexrma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

static void serial(double *row, int cells, int iterations)
{
    double *next = malloc(cells * sizeof *next);
    for (int it = 0; it < iterations; it++) {
        for (int i = 0; i < cells; i++)
            next[i] = (row[(i + cells - 1) % cells] + 2 * row[i] + row[(i + 1) % cells]) / 4;
        for (int i = 0; i < cells; i++)
            row[i] = next[i];
    }
    free(next);
}

static double initial(int cell) { return (cell * 7919) % 101; }

/* Poll my notification counter idx until it holds want; then take those notifications. */
static void await(MPI_Win win, int idx, MPI_Count want)
{
    MPI_Count v = 0;
    while (v < want)
        MPI_Win_notify_get_value(win, idx, &v);
    MPI_Win_notify_set_value(win, idx, v - want);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    const int timing = timing_requested(&argc, argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;

    /* ghost[parity][0]: from the left neighbour, ghost[parity][1]: from the right one */
    double *ghost, u[N + 2], next[N + 2];
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &ghost,
                     &win);
    MPI_Win_notify_set_num(win, MPI_INFO_NULL, 4);
    for (int i = 1; i <= N; i++)
        u[i] = initial(rank * N + i - 1);

    step_clock clock;
    step_clock_init(&clock, iterations, timing);
    MPI_Win_lock_all(0, win);
    for (int it = 0; it < iterations; it++) {
        int par = it % 2;
        step_clock_mark(&clock);
        if (it >= 2) { /* both neighbours read what I sent two steps ago into this parity */
            await(win, 2, 1);
            await(win, 3, 1);
        }
        MPI_Put_notify(&u[1], 1, MPI_DOUBLE, left, 2 * par + 1, 1, MPI_DOUBLE, par, win);
        MPI_Put_notify(&u[N], 1, MPI_DOUBLE, right, 2 * par, 1, MPI_DOUBLE, par, win);
        await(win, par, 2); /* both my ghost cells of this step are in my memory */
        u[0] = ghost[2 * par];
        u[N + 1] = ghost[2 * par + 1];
        /* done with them: the neighbours may write this parity again (a notification alone) */
        MPI_Put_notify(NULL, 0, MPI_DOUBLE, left, 0, 0, MPI_DOUBLE, 3, win);  /* its right one */
        MPI_Put_notify(NULL, 0, MPI_DOUBLE, right, 0, 0, MPI_DOUBLE, 2, win); /* its left one */
        for (int i = 1; i <= N; i++)
            next[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4;
        for (int i = 1; i <= N; i++)
            u[i] = next[i];
        MPI_Win_flush_local_all(win); /* &u[1], &u[N] may change now */
    }
    step_clock_mark(&clock);
    MPI_Win_unlock_all(win);

    double *row = rank == 0 ? malloc(nprocs * N * sizeof *row) : NULL;
    MPI_Gather(&u[1], N, MPI_DOUBLE, row, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int wrong = 0;
    if (rank == 0) {
        double *expect = malloc(nprocs * N * sizeof *expect), sum = 0;
        for (int i = 0; i < nprocs * N; i++)
            expect[i] = initial(i);
        serial(expect, nprocs * N, iterations);
        for (int i = 0; i < nprocs * N; i++) {
            wrong += fabs(row[i] - expect[i]) > 1e-9;
            sum += row[i];
        }
        printf("notify_halo: %d ranks, %d iterations, checksum %.12g, %s\n", nprocs, iterations,
               sum, wrong ? "WRONG cells" : "matches the serial computation");
        free(expect);
        free(row);
    }
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (timing) {
        double us = step_clock_median_us(&clock);
        timing_report("notify_halo", "MPI_Put_notify", us, halo_fence_us(N, iterations),
                      halo_isend_us(N, iterations));
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return wrong != 0;
}
