/* ghost_exchange.c - a 1-D halo (ghost cell) exchange on a ring of processes, written with plain
 * MPI-2 one-sided communication. It knows nothing about flexrma: run it as is, or under
 * flexrma-run to have flexrma carry its one-sided traffic.
 *
 * Every process owns N cells u[1..N] plus two ghost cells, u[0] (a copy of its left neighbour's
 * last cell) and u[N+1] (a copy of its right neighbour's first cell). The whole array is the
 * window. Each iteration every process writes new values into its own cells, then MPI_Puts its
 * two edge cells into its neighbours' ghost cells, and finally checks that its own ghost cells
 * hold what the neighbours wrote. Three ways of synchronizing are shown (argv[1]):
 *
 *   fence  MPI_Win_fence, with the assertions of Thakur, Gropp and Toonen (2005):
 *          MPI_MODE_NOPRECEDE to open the epoch, NOSTORE|NOPUT|NOSUCCEED to close it
 *   pscw   MPI_Win_post/start/complete/wait with just the two neighbours (generalized active target)
 *   lock   MPI_Win_lock/unlock on each neighbour (passive target), with barriers to order iterations
 *
 * Usage: mpirun -np P ./ghost_exchange [fence|pscw|lock] [iterations]
 * Prints one line on rank 0 and exits 0 if every halo was right, 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16 /* cells owned by each process */

static int rank, nprocs, left, right;

/* The value process p stores in its cell i at iteration it: distinct everywhere and exact. */
static double value(int p, int i, int it)
{
    return (double)(((long)it * nprocs + p) * (N + 2) + i);
}

/* Put my first cell into my left neighbour's right ghost, my last into my right's left ghost. */
static void put_edges(const double *u, MPI_Win win)
{
    MPI_Put(&u[1], 1, MPI_DOUBLE, left, N + 1, 1, MPI_DOUBLE, win);
    MPI_Put(&u[N], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
}

/* Number of wrong ghost cells after iteration it (0, 1 or 2); the first few are reported. */
static int check_ghosts(const double *u, int it)
{
    static int reported;
    double want_left = value(left, N, it), want_right = value(right, 1, it);
    int errors = (u[0] != want_left) + (u[N + 1] != want_right);
    if (errors && reported++ < 3)
        fprintf(stderr, "rank %d iteration %d: ghosts are %g and %g, expected %g and %g\n", rank,
                it, u[0], u[N + 1], want_left, want_right);
    return errors;
}

static void fill(double *u, int it)
{
    for (int i = 1; i <= N; i++)
        u[i] = value(rank, i, it);
}

/* One iteration with each kind of synchronization: write this iteration's values into my cells,
 * put my edge cells into my neighbours' ghosts, and return once my neighbours' puts into my
 * ghosts are complete and visible in my memory. */
static void iterate_fence(double *u, int it, MPI_Win win)
{
    fill(u, it);
    /* No RMA call precedes this fence: it only opens the epoch. */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    put_edges(u, win);
    /* No local stores in the epoch, no puts into my window after it, and no epoch follows. */
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win);
}

static void iterate_pscw(double *u, int it, MPI_Win win, MPI_Group neighbours)
{
    fill(u, it);
    MPI_Win_post(neighbours, 0, win);  /* expose my window to my neighbours */
    MPI_Win_start(neighbours, 0, win); /* access my neighbours' windows */
    put_edges(u, win);
    MPI_Win_complete(win); /* my puts are done */
    MPI_Win_wait(win);     /* my neighbours' puts into my window are done */
}

static void iterate_lock(double *u, int it, MPI_Win win)
{
    /* Local stores into the window are made inside a lock on my own window (MPI-2). */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    fill(u, it);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has checked last iteration's ghosts */
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Put(&u[1], 1, MPI_DOUBLE, left, N + 1, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(left, win); /* the put is complete at the target */
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(&u[N], 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD); /* every put of this iteration is complete */
    /* Locking my own window makes the puts into it visible in my memory. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MPI_Win_unlock(rank, win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    left = (rank + nprocs - 1) % nprocs;
    right = (rank + 1) % nprocs;

    const char *mode = argc > 1 ? argv[1] : "fence";
    int iterations = argc > 2 ? atoi(argv[2]) : 100;
    if (strcmp(mode, "fence") != 0 && strcmp(mode, "pscw") != 0 && strcmp(mode, "lock") != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: ghost_exchange [fence|pscw|lock] [iterations]\n");
        MPI_Finalize();
        return 2;
    }

    /* MPI_Alloc_mem memory is what passive target (lock) requires in MPI-2; it suits all three. */
    double *u;
    MPI_Win win;
    MPI_Alloc_mem((N + 2) * sizeof(double), MPI_INFO_NULL, &u);
    for (int i = 0; i < N + 2; i++)
        u[i] = -1.0;
    MPI_Win_create(u, (N + 2) * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);

    /* For pscw: the group of my neighbours (one process when there are only two of us). */
    MPI_Group world_group, neighbours;
    int nbr[2] = {left, right};
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, left == right ? 1 : 2, nbr, &neighbours);

    int errors = 0;
    for (int it = 0; it < iterations; it++) {
        if (strcmp(mode, "fence") == 0)
            iterate_fence(u, it, win);
        else if (strcmp(mode, "pscw") == 0)
            iterate_pscw(u, it, win, neighbours);
        else
            iterate_lock(u, it, win);
        errors += check_ghosts(u, it);
    }

    int total;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("ghost_exchange %s: %d ranks, %d iterations, halos verified\n", mode, nprocs,
                   iterations);
        else
            printf("ghost_exchange %s: %d ranks, %d iterations, %d WRONG halo cells\n", mode,
                   nprocs, iterations, total);
    }

    MPI_Group_free(&neighbours);
    MPI_Group_free(&world_group);
    MPI_Win_free(&win);
    MPI_Free_mem(u);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
