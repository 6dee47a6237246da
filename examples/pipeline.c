/* pipeline.c - stream a large array from one process to another in chunks, with put-with-signal
 * (MPIX_Put_signal, flexrma.h): the consumer works on each chunk as soon as it has arrived, while
 * the later chunks are still on their way. No fence, no lock, no post/start/complete/wait, no
 * barrier, no message besides the puts.
 *
 * Rank 0 (the producer) owns a 16 MiB array of doubles; rank 1 (the consumer) exposes a window of
 * the same size and owns one synchronization counter. The producer puts chunk after chunk into
 * the window, each with MPIX_Put_signal: one put, then a bump of the consumer's counter that is
 * applied only once the chunk's data is in the window. The consumer waits for one bump at a time
 * with a persistent sync-object request of count 1, restarted for each chunk, and adds the chunk
 * up. flexrma applies the bumps of one producer in the order they were sent, each only once the
 * data of every put before it is complete, so after the k-th bump chunks 0..k-1 are all there.
 *
 * Usage: mpirun -np P ./pipeline [--time] [chunks]   (P >= 2; chunks divides 2^21, default 256)
 * The consumer prints the total and whether it matches the sum of the array; every process
 * exits 0 if it does, 1 otherwise. Ranks above 1 only take part in the collective calls.
 * --time adds a line: the consumer's median time a chunk, and the same stream with fence and
 * with Isend/Irecv (timing.h). */
#include "timing.h"

#include <flexrma.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (2L * 1024 * 1024) /* doubles: 16 MiB */

static double value(long i) { return (double)(i % 1000); } /* the producer's data */

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int producer = 0, consumer = 1;
    const int timing = timing_requested(&argc, argv);
    const int chunks = argc > 1 ? atoi(argv[1]) : 256;
    if (nprocs < 2 || chunks < 1 || N % chunks != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np P ./pipeline [--time] [chunks]   (P >= 2, "
                            "chunks dividing %ld)\n", N);
        MPI_Finalize();
        return 2;
    }
    const int chunk = (int)(N / chunks); /* doubles per chunk */

    /* The consumer's window is the destination array; the other processes expose nothing. */
    double *dest = NULL;
    MPI_Aint bytes = rank == consumer ? N * (MPI_Aint)sizeof(double) : 0;
    if (bytes)
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &dest);
    MPI_Win win;
    MPI_Win_create(dest, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* The consumer's counter, sent to everybody (an MPI_Sync travels as MPI_Handle_sync). */
    MPI_Sync arrived = MPIX_SYNC_NULL;
    if (rank == consumer)
        MPI_Win_Sync_alloc_objects(1, &arrived, win, MPI_INFO_NULL);
    MPI_Bcast(&arrived, 1, MPI_Handle_sync, consumer, MPI_COMM_WORLD);

    step_clock clock; /* the consumer's, a step: waiting for a chunk and adding it up */
    step_clock_init(&clock, chunks, timing && rank == consumer);
    int ok = 1;
    if (rank == producer) {
        double *src = malloc(N * sizeof(double));
        for (long i = 0; i < N; i++)
            src[i] = value(i);
        /* Chunk c goes to displacement c * chunk (in doubles, the window's unit). Each call
         * returns as soon as src may be reused; nothing waits for the consumer. */
        for (int c = 0; c < chunks; c++)
            MPIX_Put_signal(src + (long)c * chunk, chunk, MPI_DOUBLE, consumer,
                            (MPI_Aint)c * chunk, chunk, MPI_DOUBLE, arrived, win);
        free(src);
    } else if (rank == consumer) {
        /* One request, made once: each MPI_Start arms it for one more bump, and MPI_Wait
         * returns (consuming that bump) once it has come. Bumps that arrive while the
         * consumer is busy are kept by the counter, not lost. */
        MPI_Request chunk_ready;
        MPI_Win_sync_object_init(arrived, 1, win, MPI_INFO_NULL, &chunk_ready);
        double total = 0.0;
        for (int c = 0; c < chunks; c++) {
            step_clock_mark(&clock);
            MPI_Start(&chunk_ready);
            MPI_Wait(&chunk_ready, MPI_STATUS_IGNORE);
            const double *part = dest + (long)c * chunk; /* chunk c is complete */
            for (int i = 0; i < chunk; i++)
                total += part[i];
        }
        step_clock_mark(&clock);
        MPI_Request_free(&chunk_ready);

        double expected = 0.0; /* exact: the values are small integers */
        for (long i = 0; i < N; i++)
            expected += value(i);
        ok = total == expected;
        printf("pipeline: %ld MiB in %d chunks of %ld KiB, rank %d to rank %d: total %.0f, "
               "expected %.0f: %s\n", N * (long)sizeof(double) >> 20, chunks,
               chunk * (long)sizeof(double) >> 10, producer, consumer, total, expected,
               ok ? "OK" : "WRONG");
        fflush(stdout); /* before rank 0's timing line */
        MPI_Win_Sync_free_objects(1, &arrived, win);
    }
    MPI_Bcast(&ok, 1, MPI_INT, consumer, MPI_COMM_WORLD);
    if (timing) {
        double us = step_clock_median_us(&clock);
        timing_report("pipeline", "MPIX_Put_signal", us, stream_fence_us(chunk, chunks),
                      stream_isend_us(chunk, chunks));
    }

    MPI_Win_free(&win);
    if (dest)
        MPI_Free_mem(dest);
    MPI_Finalize();
    return ok ? 0 : 1;
}
