/* common.h - helpers shared by the MPI test programs (each includes it once). */
#ifndef FLEXRMA_TESTS_COMMON_H
#define FLEXRMA_TESTS_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int rank, nprocs; /* in MPI_COMM_WORLD */

static inline void test_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "this test needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Print the TAP stream and finalize; main() returns what this returns. */
static inline int test_done(void)
{
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}

/* For tests with per-rank state in arrays of n: abort unless there are at most n ranks. */
static inline void test_max_ranks(int n)
{
    if (nprocs > n) {
        if (rank == 0)
            fprintf(stderr, "at most %d ranks\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static inline int right(void) { return (rank + 1) % nprocs; }
static inline int left(void) { return (rank + nprocs - 1) % nprocs; }

/* A deterministic value for element i sent by rank r in epoch e: different ranks, elements and
 * epochs give different values, so misplaced or stale data shows. */
static inline int pat(int r, int i, int e)
{
    return (int)((unsigned)(r + 1) * 1000003u + (unsigned)e * 7919u + (unsigned)i * 31u);
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        perror("malloc");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* 1 if the n ints are equal; otherwise a diagnostic naming the first difference. */
static inline int same_ints(const int *got, const int *exp, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i] && !bad++)
            first = i;
    if (bad)
        diag("%zu of %zu ints differ; first at [%zu]: got %d, expected %d", bad, n, first,
             got[first], exp[first]);
    return !bad;
}

/* buf[0..n) = pattern e of rank r. */
static inline void fill_pat(int *buf, size_t n, int r, int e)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pat(r, (int)i, e);
}

/* The n ints at got are pattern e of rank r; otherwise a diagnostic. */
static inline int is_pat(const int *got, size_t n, int r, int e)
{
    int *exp = xmalloc(n * sizeof(int));
    fill_pat(exp, n, r, e);
    int same = same_ints(got, exp, n);
    free(exp);
    return same;
}

static inline int same_bytes(const void *got_, const void *exp_, size_t n)
{
    const unsigned char *got = got_, *exp = exp_;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i] && !bad++)
            first = i;
    if (bad)
        diag("%zu of %zu bytes differ; first at [%zu]: got 0x%02x, expected 0x%02x", bad, n,
             first, got[first], exp[first]);
    return !bad;
}

/* A window of n ints per rank over MPI_COMM_WORLD, memory from MPI_Alloc_mem, disp_unit
 * sizeof(int). */
typedef struct {
    MPI_Win win;
    int *buf;
    size_t n;
} iwin;

static inline void iwin_create(iwin *w, size_t n)
{
    w->n = n;
    MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &w->buf);
    memset(w->buf, 0, n * sizeof(int));
    MPI_Win_create(w->buf, (MPI_Aint)(n * sizeof(int)), (int)sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &w->win);
}

static inline void iwin_free(iwin *w)
{
    MPI_Win_free(&w->win);
    MPI_Free_mem(w->buf);
}

/* Local access to one's own window under passive target: an exclusive lock on oneself makes the
 * updates of finished remote epochs visible and keeps new ones out while we look (MPI-2 separate
 * memory model). */
static inline void read_own(iwin *w, int *out)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    memcpy(out, w->buf, w->n * sizeof(int));
    MPI_Win_unlock(rank, w->win);
}

static inline void write_own(iwin *w, const int *in)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    memcpy(w->buf, in, w->n * sizeof(int));
    MPI_Win_unlock(rank, w->win);
}

/* The group of the given MPI_COMM_WORLD ranks. */
static inline MPI_Group world_subgroup(const int *ranks, int n)
{
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Group_free(&world);
    return g;
}

#endif
