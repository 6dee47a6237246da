/* timing.c - the examples' --time mode (timing.h): a step clock, and the examples' exchanges
 * written with MPI_Win_fence and with MPI_Isend/MPI_Irecv, to measure beside them. These are
 * plain MPI; under flexrma the fence versions run on flexrma's windows too. */
#include "timing.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int timing_requested(int *argc, char **argv)
{
    for (int i = 1; i < *argc; i++)
        if (strcmp(argv[i], "--time") == 0) {
            memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof *argv); /* and NULL */
            --*argc;
            return 1;
        }
    return 0;
}

void step_clock_init(step_clock *clock, int steps, int on)
{
    clock->n = 0;
    clock->cap = steps + 1; /* the start of every step and the end of the last */
    clock->t = on ? malloc((size_t)clock->cap * sizeof *clock->t) : NULL;
}

void step_clock_mark(step_clock *clock)
{
    if (clock->t && clock->n < clock->cap)
        clock->t[clock->n++] = MPI_Wtime();
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double step_clock_median_us(step_clock *clock)
{
    double median = 0.0; /* a process that timed no step says 0: the maximum ignores it */
    int steps = clock->n - 1;
    if (clock->t && steps > 0) {
        for (int i = 0; i < steps; i++) /* in place: step i's duration */
            clock->t[i] = (clock->t[i + 1] - clock->t[i]) * 1e6;
        qsort(clock->t, (size_t)steps, sizeof *clock->t, by_value);
        median = clock->t[steps / 2];
    }
    free(clock->t);
    clock->t = NULL;
    double slowest;
    MPI_Allreduce(&median, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* One step of the 3-point stencil on u[1..cells], reading the ghost cells u[0] and u[cells+1]. */
static void stencil(double *u, double *next, int cells)
{
    for (int i = 1; i <= cells; i++)
        next[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4;
    memcpy(u + 1, next + 1, (size_t)cells * sizeof *u);
}

static void neighbours(int *left, int *right)
{
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    *left = (rank + nprocs - 1) % nprocs;
    *right = (rank + 1) % nprocs;
}

double halo_fence_us(int cells, int steps)
{
    int left, right;
    neighbours(&left, &right);
    double *u = calloc((size_t)cells + 2, sizeof *u), *next = calloc((size_t)cells + 2, sizeof *u);
    /* Ghost cells per parity of the step, [left, right]: a neighbour one fence ahead writes the
     * other pair, so the cells of this step are read before they can be overwritten. */
    double *ghost;
    MPI_Win win;
    MPI_Alloc_mem(4 * sizeof *ghost, MPI_INFO_NULL, &ghost);
    MPI_Win_create(ghost, 4 * sizeof *ghost, sizeof *ghost, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    step_clock clock;
    step_clock_init(&clock, steps, 1);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int it = 0; it < steps; it++) {
        int par = it % 2;
        step_clock_mark(&clock);
        MPI_Put(&u[1], 1, MPI_DOUBLE, left, 2 * par + 1, 1, MPI_DOUBLE, win);
        MPI_Put(&u[cells], 1, MPI_DOUBLE, right, 2 * par, 1, MPI_DOUBLE, win);
        MPI_Win_fence(0, win);
        u[0] = ghost[2 * par];
        u[cells + 1] = ghost[2 * par + 1];
        stencil(u, next, cells);
    }
    step_clock_mark(&clock);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Free_mem(ghost);
    free(u);
    free(next);
    return step_clock_median_us(&clock);
}

double halo_isend_us(int cells, int steps)
{
    int left, right;
    neighbours(&left, &right);
    double *u = calloc((size_t)cells + 2, sizeof *u), *next = calloc((size_t)cells + 2, sizeof *u);
    enum { TO_LEFT, TO_RIGHT }; /* tags: with 2 processes, left and right are one process */
    step_clock clock;
    step_clock_init(&clock, steps, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < steps; it++) {
        MPI_Request req[4];
        MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on it with MPICH's mpi.h */
        step_clock_mark(&clock);
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, TO_RIGHT, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&u[cells + 1], 1, MPI_DOUBLE, right, TO_LEFT, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, TO_LEFT, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&u[cells], 1, MPI_DOUBLE, right, TO_RIGHT, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, st);
        stencil(u, next, cells);
    }
    step_clock_mark(&clock);
    free(u);
    free(next);
    return step_clock_median_us(&clock);
}

/* The consumer's work on a chunk, as in pipeline.c. */
static double add_up(const double *part, int n)
{
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += part[i];
    return total;
}

double stream_fence_us(int chunk, int chunks)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t bytes = (size_t)chunk * chunks * sizeof(double);
    double *data; /* the producer's array, the consumer's window */
    MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &data);
    memset(data, 0, bytes);
    MPI_Win win;
    MPI_Win_create(data, rank == 1 ? (MPI_Aint)bytes : 0, sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    step_clock clock;
    step_clock_init(&clock, chunks, rank == 1);
    volatile double total = 0.0; /* kept, so that the adding is not optimized away */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int c = 0; c < chunks; c++) {
        step_clock_mark(&clock);
        if (rank == 0) /* a fence per chunk: the consumer cannot see it any earlier */
            MPI_Put(data + (size_t)c * chunk, chunk, MPI_DOUBLE, 1, (MPI_Aint)c * chunk, chunk,
                    MPI_DOUBLE, win);
        MPI_Win_fence(0, win);
        if (rank == 1)
            total += add_up(data + (size_t)c * chunk, chunk);
    }
    step_clock_mark(&clock);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Free_mem(data);
    (void)total;
    return step_clock_median_us(&clock);
}

double stream_isend_us(int chunk, int chunks)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = (size_t)chunk * chunks;
    double *data = calloc(n, sizeof *data);
    MPI_Request *req = malloc((size_t)chunks * sizeof *req);
    step_clock clock;
    step_clock_init(&clock, chunks, rank == 1);
    volatile double total = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* every chunk sent at once, as pipeline.c puts them */
        for (int c = 0; c < chunks; c++)
            MPI_Isend(data + (size_t)c * chunk, chunk, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &req[c]);
        for (int c = 0; c < chunks; c++) /* one by one: see halo_isend_us's statuses */
            MPI_Wait(&req[c], MPI_STATUS_IGNORE);
    } else if (rank == 1) { /* every chunk received into its place, used in order */
        for (int c = 0; c < chunks; c++)
            MPI_Irecv(data + (size_t)c * chunk, chunk, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &req[c]);
        for (int c = 0; c < chunks; c++) {
            step_clock_mark(&clock);
            MPI_Wait(&req[c], MPI_STATUS_IGNORE);
            total += add_up(data + (size_t)c * chunk, chunk);
        }
        step_clock_mark(&clock);
    }
    free(req);
    free(data);
    (void)total;
    return step_clock_median_us(&clock);
}

void timing_report(const char *name, const char *what, double us, double fence_us,
                   double isend_us)
{
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (rank == 0)
        printf("%s time: %.2f us a step with %s; fence %.2f us (%.2fx); Isend/Irecv %.2f us "
               "(%.2fx); median step, %d ranks\n", name, us, what, fence_us, us / fence_us,
               isend_us, us / isend_us, nprocs);
    fflush(stdout);
}
