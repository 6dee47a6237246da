/* scale.c - how what a process pays grows with the ranks of its node and its windows (issue 21,
 * item 2): counts and bytes, never times, so oversubscribed runs of up to 64 ranks on a 2-core
 * machine mean as much as dedicated ones.
 *
 * Resources, per process, read from /proc/self (the same code natively and under flexrma):
 *   fds       entries of /proc/self/fd (of them pidfds, and memfd segments)
 *   maps      lines of /proc/self/maps
 *   rss, pss  Rss and Pss of /proc/self/smaps_rollup, in KiB
 * after MPI_Init, and what W windows (--blocks W, default 8) of each size (--sizes) add, per
 * window: once made ("created"), and once every window has carried one fence-synchronized ghost
 * exchange ("used"). The windows' memory (MPI_Alloc_mem, every byte written) is allocated before
 * the first reading, so the rows count what a window costs beyond its memory.
 *
 * Messages and atomics per epoch come from flexrma's own counters (FLEXRMA_STATS=1: one line per
 * window at MPI_Finalize), which bench/scale-run reads: this program runs each synchronization
 * pattern of a ghost exchange (fence, pscw, lock, counter; ring and 2-D grid) on two fresh
 * windows, K = --iters steps on the first and 2K on the second, and names both in a line
 *   #window,PATTERN/TOPO,ID,STEPS
 * (ID: the window's creation number in this process, flexrma's "win" in the stats line). The
 * difference of the two windows' counts over K is the cost of one step, free of what making the
 * window and the counters cost. Natively there are no such counters: the patterns are skipped.
 *
 * Rows (rank 0): scale,IMPL,TRANSPORT,RANKS,QUANTITY,WHAT,MAX,MEAN: the maximum and the mean over
 * the processes. */
#include "common.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DIRS BENCH_MAX_DIRS

/* ---- resources of this process ---- */

typedef struct usage {
    double fds, pidfds, memfds, maps, rss, pss;
} usage;

static void read_usage(usage *u)
{
    memset(u, 0, sizeof *u);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        bench_die("cannot open /proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
            continue; /* ".", "..", and the descriptor this listing itself holds */
        char target[256];
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        u->fds++;
        u->pidfds += strcmp(target, "anon_inode:[pidfd]") == 0;
        u->memfds += strncmp(target, "/memfd:", 7) == 0;
    }
    closedir(d);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        bench_die("cannot open /proc/self/maps");
    for (int c; (c = getc(f)) != EOF;)
        u->maps += c == '\n';
    fclose(f);
    f = fopen("/proc/self/smaps_rollup", "r");
    if (!f)
        bench_die("cannot open /proc/self/smaps_rollup");
    char line[256];
    while (fgets(line, sizeof line, f)) {
        double kib;
        if (sscanf(line, "Rss: %lf kB", &kib) == 1)
            u->rss = kib;
        else if (sscanf(line, "Pss: %lf kB", &kib) == 1)
            u->pss = kib;
    }
    fclose(f);
}

/* One row per quantity of u: the maximum and the mean over the processes. */
static void print_usage(const bench_opts *o, const char *what, const usage *u)
{
    const char *names[] = {"fds", "pidfds", "memfds", "maps", "rss_kib", "pss_kib"};
    enum { N = sizeof names / sizeof names[0] };
    double v[N] = {u->fds, u->pidfds, u->memfds, u->maps, u->rss, u->pss}, max[N], sum[N];
    MPI_Reduce(v, max, N, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(v, sum, N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (o->rank != 0)
        return;
    for (int i = 0; i < N; i++)
        printf("scale,%s,%s,%d,%s,%s,%.1f,%.1f\n", o->impl, o->transport, o->size, names[i],
               what, max[i], sum[i] / o->size);
    fflush(stdout);
}

static void usage_diff(usage *d, const usage *after, const usage *before, double per)
{
    d->fds = (after->fds - before->fds) / per;
    d->pidfds = (after->pidfds - before->pidfds) / per;
    d->memfds = (after->memfds - before->memfds) / per;
    d->maps = (after->maps - before->maps) / per;
    d->rss = (after->rss - before->rss) / per;
    d->pss = (after->pss - before->pss) / per;
}

/* ---- the ghost exchange ---- */

typedef struct ghost {
    int rank, ndirs, nd;
    int nbr[MAX_DIRS];      /* the neighbour in direction d; opposite(d) is d ^ 1 */
    int distinct[MAX_DIRS]; /* the distinct neighbours (nd of them) */
    MPI_Group nbr_group;    /* ... as a group, for post/start */
    uint64_t send[MAX_DIRS];
    uint64_t *slots;        /* the window: [2 halves][ndirs] words, one per direction */
    MPI_Win win;
    uint64_t step;
    /* counters (flexrma's extensions, when present) */
    MPI_Sync mine;
    MPI_Request ops[MAX_DIRS], arrived;
} ghost;

static int opposite(int d) { return d ^ 1; }

static void ghost_init(ghost *g, int rank, int ndirs, const int nbr[MAX_DIRS])
{
    memset(g, 0, sizeof *g);
    g->rank = rank;
    g->ndirs = ndirs;
    for (int d = 0; d < ndirs; d++) {
        g->nbr[d] = nbr[d];
        int seen = 0;
        for (int i = 0; i < g->nd; i++)
            seen |= g->distinct[i] == nbr[d];
        if (!seen)
            g->distinct[g->nd++] = nbr[d];
    }
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, g->nd, g->distinct, &g->nbr_group);
    MPI_Group_free(&world);
}

/* What block d of rank r carries in step s. */
static uint64_t stamp(uint64_t s, int r, int d) { return s << 32 | (uint64_t)r << 8 | (uint64_t)d; }

/* Step s writes half s % 2: a neighbour may be a step ahead in the counter pattern. */
static void put_blocks(ghost *g)
{
    int half = (int)(g->step & 1);
    for (int d = 0; d < g->ndirs; d++) {
        g->send[d] = stamp(g->step, g->rank, d);
        MPI_Put(&g->send[d], 1, MPI_UINT64_T, g->nbr[d],
                (MPI_Aint)((size_t)(half * g->ndirs + opposite(d)) * sizeof(uint64_t)), 1,
                MPI_UINT64_T, g->win);
    }
}

/* A fence closes one epoch and opens the next: one fence per step. */
static void step_fence(ghost *g)
{
    put_blocks(g);
    MPI_Win_fence(0, g->win);
}

static void step_pscw(ghost *g)
{
    MPI_Win_post(g->nbr_group, 0, g->win);
    MPI_Win_start(g->nbr_group, 0, g->win);
    put_blocks(g);
    MPI_Win_complete(g->win);
    MPI_Win_wait(g->win);
}

/* A lock epoch per direction, as bench/ghost.c's lock variant (seed 001). */
static void step_lock(ghost *g)
{
    int half = (int)(g->step & 1);
    for (int d = 0; d < g->ndirs; d++) {
        g->send[d] = stamp(g->step, g->rank, d);
        MPI_Win_lock(MPI_LOCK_SHARED, g->nbr[d], 0, g->win);
        MPI_Put(&g->send[d], 1, MPI_UINT64_T, g->nbr[d],
                (MPI_Aint)((size_t)(half * g->ndirs + opposite(d)) * sizeof(uint64_t)), 1,
                MPI_UINT64_T, g->win);
        MPI_Win_unlock(g->nbr[d], g->win);
    }
}

/* As bench/ghost.c's counter variant: a sync-ops request per distinct neighbour, and my
 * sync-object request waiting for one bump from each. */
static void step_counter(ghost *g)
{
    MPI_Start(&g->arrived);
    MPI_Startall(g->nd, g->ops);
    put_blocks(g);
    MPI_Waitall(g->nd, g->ops, MPI_STATUSES_IGNORE);
    MPI_Wait(&g->arrived, MPI_STATUS_IGNORE);
}

static void counters_setup(ghost *g, int size)
{
    bench_counters_setup(g->win, size, g->distinct, g->nd, &g->mine, g->ops, NULL);
    bench_ctr.object_init(g->mine, g->nd, g->win, MPI_INFO_NULL, &g->arrived);
}

static void counters_teardown(ghost *g)
{
    for (int k = 0; k < g->nd; k++)
        MPI_Request_free(&g->ops[k]);
    MPI_Request_free(&g->arrived);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody bumps my counter any more */
    bench_ctr.free_objects(1, &g->mine, g->win);
}

enum { P_FENCE, P_PSCW, P_LOCK, P_COUNTER, NPATTERNS };
static const char *const pattern_name[NPATTERNS] = {"fence", "pscw", "lock", "counter"};
static void (*const pattern_step[NPATTERNS])(ghost *) = {step_fence, step_pscw, step_lock,
                                                          step_counter};

/* Wrong ghost slots after the last step (read under a lock of my own window, after a barrier:
 * the lock pattern tells no target when its data is complete). */
static int check(ghost *g)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, g->rank, 0, g->win);
    int half = (int)((g->step - 1) & 1), wrong = 0;
    for (int d = 0; d < g->ndirs; d++)
        wrong += g->slots[half * g->ndirs + d] != stamp(g->step - 1, g->nbr[d], opposite(d));
    MPI_Win_unlock(g->rank, g->win);
    return wrong;
}

/* The window creations of this process so far: flexrma numbers its windows the same way. */
static int windows_made;

/* `steps` steps of one pattern on a fresh window; returns the window's number. */
static int run_pattern(ghost *g, int pattern, int steps, int size)
{
    size_t bytes = 2 * (size_t)g->ndirs * sizeof(uint64_t);
    MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &g->slots);
    memset(g->slots, 0, bytes);
    MPI_Win_create(g->slots, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g->win);
    int id = windows_made++;
    if (pattern == P_COUNTER)
        counters_setup(g, size);
    if (pattern == P_FENCE)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, g->win);
    for (g->step = 1; g->step <= (uint64_t)steps; g->step++)
        pattern_step[pattern](g);
    if (pattern == P_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, g->win); /* the same on both windows: cancels out */
    int wrong = check(g);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrong)
        bench_die("%s: %d ghost slots hold wrong data", pattern_name[pattern], wrong);
    if (pattern == P_COUNTER)
        counters_teardown(g);
    MPI_Win_free(&g->win);
    MPI_Free_mem(g->slots);
    return id;
}

/* ---- resources per window ---- */

static void measure_windows(const bench_opts *o, size_t bytes, int nwin)
{
    char what[64];
    void **mem = malloc(bench_mul((size_t)nwin, sizeof *mem));
    MPI_Win *win = malloc(bench_mul((size_t)nwin, sizeof *win));
    if (!mem || !win)
        bench_die("out of memory");
    for (int i = 0; i < nwin; i++)
        mem[i] = bench_alloc(BENCH_MEM_ALLOC_MEM, bytes); /* the windows' own memory */
    usage before, created, used, d;
    MPI_Barrier(MPI_COMM_WORLD);
    read_usage(&before);
    for (int i = 0; i < nwin; i++) {
        MPI_Win_create(mem[i], (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win[i]);
        windows_made++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    read_usage(&created);
    /* One ghost exchange on a ring on every window: 8 bytes to each neighbour in a fence
     * epoch, so that what a window builds lazily or touches on first use is counted too. */
    int nbr[MAX_DIRS];
    bench_neighbours(BENCH_TOPO_RING, o->rank, o->size, nbr);
    uint64_t send[2] = {1, 2};
    for (int i = 0; i < nwin; i++) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win[i]);
        for (int d = 0; d < 2; d++)
            MPI_Put(&send[d], 1, MPI_UINT64_T, nbr[d], (MPI_Aint)(opposite(d) * 8), 1,
                    MPI_UINT64_T, win[i]);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    read_usage(&used);
    snprintf(what, sizeof what, "with_%d_windows/%zuB", nwin, bytes);
    print_usage(o, what, &used);
    usage_diff(&d, &created, &before, nwin);
    snprintf(what, sizeof what, "per_window_created/%zuB", bytes);
    print_usage(o, what, &d);
    usage_diff(&d, &used, &before, nwin);
    snprintf(what, sizeof what, "per_window_used/%zuB", bytes);
    print_usage(o, what, &d);
    for (int i = 0; i < nwin; i++)
        MPI_Win_free(&win[i]);
    for (int i = 0; i < nwin; i++)
        bench_free(BENCH_MEM_ALLOC_MEM, mem[i]);
    free(mem);
    free(win);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "scale", "4K,64K", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE);
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] < 2 * sizeof(uint64_t))
            bench_die("--sizes: windows of at least 16 bytes");
    if (o.rank == 0)
        printf("program,impl,transport,ranks,quantity,what,max,mean\n");

    usage init;
    MPI_Barrier(MPI_COMM_WORLD);
    read_usage(&init);
    print_usage(&o, "after_init", &init);
    for (int i = 0; i < o.nsizes; i++)
        measure_windows(&o, o.sizes[i], o.blocks);

    /* The patterns, where flexrma's counters are there to read (see the top of the file). */
    if (strcmp(o.impl, "flexrma") == 0) {
        const int counters = bench_counters_find();
        for (int t = 0; t < o.ntopo; t++) {
            int nbr[MAX_DIRS], ndirs = bench_neighbours(o.topo[t], o.rank, o.size, nbr);
            if (ndirs == 0) {
                if (o.rank == 0)
                    fprintf(stderr, "scale: no %s with %d ranks, skipped\n",
                            bench_topo_name[o.topo[t]], o.size);
                continue;
            }
            for (int p = 0; p < NPATTERNS; p++) {
                if (p == P_COUNTER && !counters)
                    continue;
                ghost g;
                ghost_init(&g, o.rank, ndirs, nbr);
                int once = run_pattern(&g, p, o.iters, o.size);
                int twice = run_pattern(&g, p, 2 * o.iters, o.size);
                if (o.rank == 0)
                    printf("#window,%s/%s,%d,%d\n#window,%s/%s,%d,%d\n", pattern_name[p],
                           bench_topo_name[o.topo[t]], once, o.iters, pattern_name[p],
                           bench_topo_name[o.topo[t]], twice, 2 * o.iters);
                MPI_Group_free(&g.nbr_group);
            }
        }
    }
    return bench_finish();
}
