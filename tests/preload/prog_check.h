/* prog_check.h - what the interposition programs share: how a rank's results become one
 * checksum, and the report rank 0 prints of them, which run-preload.sh compares between the
 * native and the preloaded runs. Plain MPI, like the programs (no flexrma). */
#ifndef PROG_CHECK_H
#define PROG_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define PROG_MAX_RANKS 16

static unsigned long long prog_fnv1a(const void *p, size_t n, unsigned long long h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* Whether the program can run on this many ranks (2 to PROG_MAX_RANKS); rank 0 says why not. */
static int prog_size_ok(const char *prog, int rank, int size)
{
    if (size >= 2 && size <= PROG_MAX_RANKS)
        return 1;
    if (rank == 0)
        printf("%s: needs 2 to %d ranks\n", prog, PROG_MAX_RANKS);
    return 0;
}

/* Collective over MPI_COMM_WORLD: rank 0 prints, for every rank, the checksum of what it holds
 * (`win`, `win_bytes`) and fetched (`got`, `got_bytes`), and whether it equals the checksum of
 * what the program's model expects (`exp_win`, `exp_got`, of the same sizes); then how many
 * ranks were as expected. */
static void prog_report(const char *prog, const void *win, const void *exp_win, size_t win_bytes,
                        const void *got, const void *exp_got, size_t got_bytes)
{
    const unsigned long long seed = 0xcbf29ce484222325ULL;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned long long sums[2] = {
        prog_fnv1a(got, got_bytes, prog_fnv1a(win, win_bytes, seed)),
        prog_fnv1a(exp_got, got_bytes, prog_fnv1a(exp_win, win_bytes, seed))};
    unsigned long long all[2 * PROG_MAX_RANKS];
    MPI_Gather(sums, 2, MPI_UNSIGNED_LONG_LONG, all, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    int good = 0;
    for (int r = 0; r < size; r++) {
        printf("%s: rank %d checksum %016llx %s\n", prog, r, all[2 * r],
               all[2 * r] == all[2 * r + 1] ? "as expected" : "WRONG");
        good += all[2 * r] == all[2 * r + 1];
    }
    printf("%s: %d of %d ranks as expected\n", prog, good, size);
    fflush(stdout);
}

#endif
