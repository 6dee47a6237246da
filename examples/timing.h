/* timing.h - the examples' --time mode: how long one step of an example's exchange takes, and
 * the same exchange synchronized with MPI_Win_fence and with MPI_Isend/MPI_Irecv, measured in
 * the same run so that the three can be compared (scripts/demo prints the line).
 *
 * A step's time is the median over the steps of a run (one preempted step on a busy machine
 * does not move it), the largest over the processes that timed any step. */
#ifndef EXAMPLES_TIMING_H
#define EXAMPLES_TIMING_H

/* The start times of a run's steps (the clock is off when t is NULL: nothing is recorded). */
typedef struct {
    double *t;
    int n, cap;
} step_clock;

/* 1 if the program's arguments include --time (which is then taken out of argv). */
int timing_requested(int *argc, char **argv);

/* A clock for up to steps steps, on when on is true. */
void step_clock_init(step_clock *clock, int steps, int on);
/* Mark the start of a step, or the end of the last one. */
void step_clock_mark(step_clock *clock);
/* Collective over MPI_COMM_WORLD: the median step in microseconds; frees the clock. */
double step_clock_median_us(step_clock *clock);

/* The exchange of sync_neighbours.c, notify_halo.c and mpix_notify_halo.c: each process of a
 * periodic row puts its two edge cells into its neighbours' ghost cells and applies the 3-point
 * stencil to its cells, steps times. Collective: the median step in microseconds. */
double halo_fence_us(int cells, int steps);
double halo_isend_us(int cells, int steps);

/* The exchange of pipeline.c: rank 0 streams chunks of doubles to rank 1, which adds each chunk
 * up once it is there. Collective: the median time of a chunk at rank 1, in microseconds. */
double stream_fence_us(int chunk, int chunks);
double stream_isend_us(int chunk, int chunks);

/* Rank 0 prints "NAME time: X us/step (WHAT); fence Y (ratio); Isend/Irecv Z (ratio)". */
void timing_report(const char *name, const char *what, double us, double fence_us,
                   double isend_us);

#endif
