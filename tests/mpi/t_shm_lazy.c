/* t_shm_lazy.c - first-use attachment (tp_shm.c, direct.c): with FLEXRMA_SHM_LAZY=1 a window maps
 * nothing of a node peer until this process first needs it, and then works as before.
 *
 * What a process maps is read from /proc/self/maps: flexrma's shared segments are the lines whose
 * file is a flexrma memfd (or, named backend, /dev/shm/flexrma.*), told apart by inode, which is
 * the same in every process that maps the segment. Each member learns which segments the others
 * made when the window was created (those it maps then and did not before: with first-use
 * attachment, only its own), and then checks which of them it maps:
 *   1. right after MPI_Win_allocate: none of another member's;
 *   2. after rank 0 alone ran lock epochs (put, get, accumulate, flush) on rank 1: rank 0 maps
 *      some of rank 1's and none of the others'; no other member maps another's;
 *   3. after every rank from 2 on ran a lock epoch on ranks 0 and 1, and a fence epoch in a ring:
 *      the data is right everywhere, and rank 2 now maps segments of rank 0.
 * Under FLEXRMA_TRANSPORT=am nobody maps anything of another member, ever.
 * Needs at least 3 ranks on one node; registered only with FLEXRMA_SHM_LAZY=1 (without it every
 * pair attaches at creation, and check 1 fails: that is how this test shows it can fail). */
#include "common.h"

#define MAXSEG 32 /* segments a member makes for one window */
#define N 64      /* ints per window */

/* The inodes of flexrma's shared segments mapped here (distinct), at most max; returns how many. */
static int mapped_segments(unsigned long *ino, int max)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        fprintf(stderr, "cannot open /proc/self/maps\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long inode;
        int path = 0;
        if (sscanf(line, "%*s %*s %*s %*s %lu %n", &inode, &path) != 1 || inode == 0 ||
            !strstr(line + path, "flexrma"))
            continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = ino[i] == inode;
        if (!seen && n < max)
            ino[n++] = inode;
    }
    fclose(f);
    return n;
}

static int has(const unsigned long *set, int n, unsigned long x)
{
    for (int i = 0; i < n; i++)
        if (set[i] == x)
            return 1;
    return 0;
}

/* own[r * MAXSEG + i]: the segments member r made for the window (0: none). */
static unsigned long *own;

/* How many of member r's segments I map now. */
static int maps_of(int r)
{
    unsigned long now[1024];
    int n = mapped_segments(now, 1024), k = 0;
    for (int i = 0; i < MAXSEG; i++)
        k += own[r * MAXSEG + i] != 0 && has(now, n, own[r * MAXSEG + i]);
    return k;
}

/* Members other than me and the ranks in `but` (-1: none) whose segments I map. */
static int others_mapped(int but0, int but1)
{
    int k = 0;
    for (int r = 0; r < nprocs; r++)
        if (r != rank && r != but0 && r != but1 && maps_of(r) > 0)
            k++;
    return k;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (nprocs < 3) {
        if (rank == 0)
            fprintf(stderr, "t_shm_lazy needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tap_plan(5);
    const char *tp = getenv("FLEXRMA_TRANSPORT");
    int shm = !(tp && strcmp(tp, "am") == 0); /* node peers are reached through shared memory */

    unsigned long before[1024], after[1024], mine[MAXSEG] = {0};
    int nb = mapped_segments(before, 1024);
    int *base;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < N; i++)
        base[i] = -1;
    int na = mapped_segments(after, 1024), nmine = 0;
    for (int i = 0; i < na; i++)
        if (!has(before, nb, after[i]) && nmine < MAXSEG)
            mine[nmine++] = after[i];
    own = calloc((size_t)nprocs * MAXSEG, sizeof *own);
    MPI_Allgather(mine, MAXSEG, MPI_UNSIGNED_LONG, own, MAXSEG, MPI_UNSIGNED_LONG,
                  MPI_COMM_WORLD);
    ok((nmine > 0) == shm, "the window made segments here (%d)", nmine);
    is_int(others_mapped(-1, -1), 0, "at creation: no segment of another member mapped");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. rank 0 talks to rank 1 only. */
    if (rank == 0) {
        int v[8], got[8] = {0}, one = 1;
        for (int i = 0; i < 8; i++)
            v[i] = 100 + i;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(v, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
        MPI_Accumulate(&one, 1, MPI_INT, 1, 8, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(1, win);
        MPI_Get(got, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
        MPI_Win_unlock(1, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Accumulate(&one, 1, MPI_INT, 1, 8, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock(1, win);
        ok(same_ints(got, v, 8) && (maps_of(1) > 0) == shm && others_mapped(1, -1) == 0,
           "rank 0 talked to rank 1: got its data back, maps %d of its segments, and those of "
           "%d other member(s)", maps_of(1), others_mapped(1, -1));
    } else {
        is_int(others_mapped(-1, -1), 0, "rank 0 talked to rank 1: no segment of another member "
                                         "mapped here");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3. ranks from 2 on come in: a lock epoch on 0 and 1 each, then a fence epoch in a ring. */
    if (rank >= 2) {
        for (int t = 0; t < 2; t++) {
            int v = 1000 * rank + t;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
            MPI_Put(&v, 1, MPI_INT, t, 8 + rank, 1, MPI_INT, win);
            MPI_Win_unlock(t, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    int right_v = 5000 + rank;
    MPI_Put(&right_v, 1, MPI_INT, right(), 40, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    int good = base[40] == 5000 + left();
    if (rank == 1)
        good &= base[0] == 100 && base[7] == 107 && base[8] == 2;
    if (rank <= 1)
        for (int r = 2; r < nprocs; r++)
            good &= base[8 + r] == 1000 * r + rank;
    ok(good, "every epoch left the right data (fence: %d from rank %d)", base[40], left());
    if (rank == 2)
        ok((maps_of(0) > 0) == shm, "rank 2 maps %d segment(s) of rank 0 once it used it", maps_of(0));
    else
        ok(1, "rank 2 maps segments of rank 0 once it used it (checked there)");
    MPI_Win_free(&win);
    free(own);
    return test_done();
}
