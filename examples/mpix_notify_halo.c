/* mpix_notify_halo.c - the halo exchange of notify_halo.c, written for Open MPI's notified-RMA
 * extension (MPIX_ names, notification id after the window) as flexrma provides it over any MPI
 * (flexrma.h; docs/specification.md, section 13.2). Against Open MPI's own extension the same
 * program would include <mpi-ext.h> instead, which defines OMPI_HAVE_MPI_EXT_NOTIFIED_RMA too.
 *
 * MPIX_Win_allocate_notify makes a window whose every member owns notification counters with
 * ids 0..MPIX_MAX_NOTIFICATION_IDX. MPIX_Put_notify puts and bumps the target's counter id once
 * the data is in the target's memory; MPIX_Win_wait_notify waits for one bump of an id and takes
 * it. One lock_all epoch for the whole run; no flush, fence or barrier synchronizes anything.
 *
 * The domain is a periodic row of nprocs*N cells, N per process, smoothed by the 3-point stencil
 * u'[i] = (u[i-1] + 2 u[i] + u[i+1]) / 4. Each process exposes two ghost cells per parity of the
 * step, so a neighbour one step ahead writes the other pair. Ids at each process:
 *   0, 1   a ghost cell of step parity 0 / 1 arrived (two a step: one from each neighbour);
 *   2, 3   my left / right neighbour has read my cells of a step: that parity is free again.
 *
 * Usage: mpirun -np P ./mpix_notify_halo [--time] [iterations]
 * Rank 0 compares the result with the same stencil computed serially and prints a checksum;
 * every process exits 0 if they agree. --time adds a line: the median step, and the same
 * exchange with fence and with Isend/Irecv (timing.h). */
#include "timing.h"

#include <flexrma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if !OMPI_HAVE_MPI_EXT_NOTIFIED_RMA /* how a program finds the extension */
#error "this MPI has no notified-RMA extension"
#endif

#define N 64

static double initial(int cell) { return (cell * 7919) % 101; }

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

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int timing = timing_requested(&argc, argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 100;
    const int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    enum { FROM_LEFT_READ = 2, FROM_RIGHT_READ = 3 };

    /* ghost[2 * parity]: from the left neighbour, ghost[2 * parity + 1]: from the right one */
    double *ghost, u[N + 2], next[N + 2];
    MPI_Win win;
    MPIX_Win_allocate_notify(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &ghost, &win);
    for (int i = 1; i <= N; i++)
        u[i] = initial(rank * N + i - 1);

    step_clock clock;
    step_clock_init(&clock, iterations, timing);
    MPI_Win_lock_all(0, win);
    for (int it = 0; it < iterations; it++) {
        int par = it % 2;
        step_clock_mark(&clock);
        if (it >= 2) { /* both neighbours read what I sent into this parity two steps ago */
            MPIX_Win_wait_notify(win, FROM_LEFT_READ);
            MPIX_Win_wait_notify(win, FROM_RIGHT_READ);
        }
        MPIX_Put_notify(&u[1], 1, MPI_DOUBLE, left, 2 * par + 1, 1, MPI_DOUBLE, win, par);
        MPIX_Put_notify(&u[N], 1, MPI_DOUBLE, right, 2 * par, 1, MPI_DOUBLE, win, par);
        MPIX_Win_wait_notify(win, par); /* one notification a wait: one per neighbour */
        MPIX_Win_wait_notify(win, par);
        u[0] = ghost[2 * par];
        u[N + 1] = ghost[2 * par + 1];
        /* Done with them: a notification alone (no data) tells each neighbour so. */
        MPIX_Put_notify(NULL, 0, MPI_DOUBLE, left, 0, 0, MPI_DOUBLE, win, FROM_RIGHT_READ);
        MPIX_Put_notify(NULL, 0, MPI_DOUBLE, right, 0, 0, MPI_DOUBLE, win, FROM_LEFT_READ);
        for (int i = 1; i <= N; i++)
            next[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4;
        for (int i = 1; i <= N; i++)
            u[i] = next[i];
        MPI_Win_flush_local_all(win); /* the puts have left &u[1] and &u[N]: they may change */
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
        printf("mpix_notify_halo: %d ranks, %d iterations, checksum %.12g, %s\n", nprocs,
               iterations, sum, wrong ? "WRONG cells" : "matches the serial computation");
        free(expect);
        free(row);
    }
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (timing) {
        double us = step_clock_median_us(&clock);
        timing_report("mpix_notify_halo", "MPIX_Put_notify", us, halo_fence_us(N, iterations),
                      halo_isend_us(N, iterations));
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return wrong != 0;
}
