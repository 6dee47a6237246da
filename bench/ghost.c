/* ghost.c - nearest-neighbour ghost-area (halo) exchange: Thakur, Gropp and Toonen (seed 001),
 * figure 1 and tables 1-2.
 *
 * Every process sends one block of n bytes to each neighbour, into that neighbour's ghost area,
 * and receives one block from each: on a ring (2 neighbours) and, where the rank count factors
 * into a 2-D periodic grid of at least 2 x 2, on that grid (4 neighbours). One step is one whole
 * exchange; the row gives the time per step and its ratio to the Isend/Irecv step measured in
 * the same run (the smaller, the better, as in seed 001's tables).
 *
 * Adding a variant is one step function and one row in variants[] (or flexrma_variants[]).
 *
 * Three variants use flexrma's extensions (flexrma.h): "counter" (synchronization counters),
 * "iput" (MPI_Iput) and "put_signal" (MPIX_Put_signal). The program is still never linked with
 * flexrma: it includes flexrma.h for the types and finds the functions at run time (dlsym), so
 * they run under flexrma-run and are skipped, with a note on stderr, in a native run.
 *
 * Windows: MPI_Win_create over MPI_Alloc_mem memory, or with --flavor allocate MPI_Win_allocate
 * (rows "VARIANT/TOPO/allocate"). Window layout: two halves, each with one ghost slot per direction;
 * slot d receives the block from the neighbour in direction d. The lock_notify, counter and
 * put_signal variants alternate between the halves (see step_lock_notify and step_counter).
 * Each timed loop stamps the send blocks and afterwards checks that every ghost slot holds its
 * neighbour's stamp, so a variant that does not deliver its data gets no row. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "common.h"


#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DIRS BENCH_MAX_DIRS
#define TAG_NOTIFY 100

typedef struct ghost {
    int rank;
    int ndirs;              /* 2 (ring) or 4 (grid) */
    int nbr[MAX_DIRS];      /* the neighbour in direction d; opposite(d) is d ^ 1 */
    MPI_Group nbr_group;    /* the distinct neighbours, for post/start */
    size_t n;               /* block size */
    unsigned char *sendbuf; /* block d goes to nbr[d] */
    unsigned char *ghosts;  /* the window: [2 halves][ndirs slots][n bytes] */
    MPI_Win win;
    int half;               /* the half the latest step wrote */
    uint64_t stamp;         /* advanced by every timed loop, identical on all ranks */
    /* flexrma's extensions (only when present): */
    int nd;                      /* distinct neighbours */
    int distinct[MAX_DIRS];      /* ... which they are */
    /* One counter per half: a neighbour one step ahead bumps the other half's, so its bumps
     * never stand in for another neighbour's still missing ones. */
    MPI_Sync mine[2];               /* my counters on win: bumped when data is in that half */
    MPI_Sync nbr_ctr[2][MAX_DIRS];  /* nbr[d]'s counters */
    MPI_Request ops[2][MAX_DIRS];   /* counter: a sync-ops request (puts) per distinct neighbour */
    MPI_Request arrived_nd[2];      /* counter: nd bumps (one per distinct neighbour) */
    MPI_Request arrived_dirs[2];    /* put_signal: ndirs bumps (one per direction) */
} ghost;

/* flexrma's extensions, found at run time by name, because the benchmarks are plain MPI programs
 * (bench/run builds them with mpicc alone): under flexrma-run, libflexrma is preloaded and
 * provides them; natively, they do not exist. */
static struct {
    __typeof__(&MPI_Iput) iput;
    __typeof__(&MPIX_Put_signal) put_signal;
} fx;

/* 1 if every rank found every extension (the counters: bench_ctr, common.h). */
static int find_extensions(void)
{
    *(void **)&fx.iput = dlsym(RTLD_DEFAULT, "MPI_Iput");
    *(void **)&fx.put_signal = dlsym(RTLD_DEFAULT, "MPIX_Put_signal");
    int found = fx.iput && fx.put_signal;
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return bench_counters_find() && found;
}

static int opposite(int d) { return d ^ 1; }

static MPI_Aint slot(const ghost *g, int half, int d)
{
    return (MPI_Aint)((size_t)(half * g->ndirs + d) * g->n);
}

/* The value that block d sent by rank r carries in the current loop: first and last 8 bytes. */
static uint64_t stamp_of(const ghost *g, int r, int d)
{
    return g->stamp << 32 | (uint64_t)r << 8 | (uint64_t)d;
}

static void ghost_begin(void *p)
{
    ghost *g = p;
    g->stamp++;
    g->half = 0;
    for (int d = 0; d < g->ndirs; d++)
        bench_stamp(g->sendbuf + (size_t)d * g->n, g->n, stamp_of(g, g->rank, d));
}

/* Wrong ghost slots of the half the last step wrote. Every step ends with the data visible to
 * local loads, so plain reads are right here. */
static int ghost_end(void *p)
{
    ghost *g = p;
    int wrong = 0;
    for (int d = 0; d < g->ndirs; d++)
        wrong += bench_stamp_wrong(g->ghosts + slot(g, g->half, d), g->n,
                                   stamp_of(g, g->nbr[d], opposite(d)));
    return wrong;
}

/* My block d lands in nbr[d]'s slot opposite(d): there, I am the neighbour in that direction. */
static void put_blocks(const ghost *g, int half)
{
    for (int d = 0; d < g->ndirs; d++)
        MPI_Put(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d],
                slot(g, half, opposite(d)), (int)g->n, MPI_BYTE, g->win);
}

/* The reference: nonblocking point-to-point into the same ghost slots. The tag is the slot at
 * the receiver, which tells the two blocks apart when both neighbours are one process. */
static void step_isend(void *p)
{
    ghost *g = p;
    MPI_Request req[2 * MAX_DIRS];
    for (int d = 0; d < g->ndirs; d++)
        MPI_Irecv(g->ghosts + slot(g, 0, d), (int)g->n, MPI_BYTE, g->nbr[d], d, MPI_COMM_WORLD,
                  &req[d]);
    for (int d = 0; d < g->ndirs; d++)
        MPI_Isend(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d], opposite(d),
                  MPI_COMM_WORLD, &req[g->ndirs + d]);
    MPI_Waitall(2 * g->ndirs, req, MPI_STATUSES_IGNORE);
}

/* Seed 001 figure 1, with its assertions: nothing precedes the opening fence; no local stores
 * into the window in the epoch, no puts into it after the closing fence, no epoch follows. */
static void step_fence(void *p)
{
    ghost *g = p;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, g->win);
    put_blocks(g, 0);
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, g->win);
}

/* Generalized active target with just the neighbours. Post comes after this step's reads of
 * the ghosts, so the neighbours' next puts cannot overwrite them early. */
static void step_pscw(void *p)
{
    ghost *g = p;
    MPI_Win_post(g->nbr_group, 0, g->win);
    MPI_Win_start(g->nbr_group, 0, g->win);
    put_blocks(g, 0);
    MPI_Win_complete(g->win);
    MPI_Win_wait(g->win);
}

/* Passive target as seed 001 measured it ("the other versions are similar" to figure 1): lock
 * each neighbour (shared: the neighbours write disjoint slots), put, unlock. Unlock completes the
 * put at the target, but the target is not told when, so this step alone does not let a program
 * read its ghosts: lock_notify adds what it needs. The data is checked after the timed loop,
 * behind a barrier (lock_end). */
static void step_lock(void *p)
{
    ghost *g = p;
    for (int d = 0; d < g->ndirs; d++) {
        MPI_Win_lock(MPI_LOCK_SHARED, g->nbr[d], 0, g->win);
        MPI_Put(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d],
                slot(g, 0, opposite(d)), (int)g->n, MPI_BYTE, g->win);
        MPI_Win_unlock(g->nbr[d], g->win);
    }
}

/* After the barrier every neighbour's last unlock has returned; the lock of my own window makes
 * their puts visible to my loads (MPI-2's separate memory model, which flexrma reports). */
static int lock_end(void *p)
{
    ghost *g = p;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, g->rank, 0, g->win);
    int wrong = ghost_end(p);
    MPI_Win_unlock(g->rank, g->win);
    return wrong;
}

/* Passive target as a program that uses its ghosts every step must write it: step_lock plus
 *   1. a zero-byte message to each neighbour after my unlocks, and one received from each
 *      neighbour: then all the puts into my ghosts are complete (chosen over a barrier, which
 *      would synchronize all processes instead of neighbours only);
 *   2. a shared lock/unlock of my own window before reading the ghosts (see lock_end);
 *   3. the two halves used alternately: a neighbour may start its next step's puts as soon as
 *      it has my message, possibly before I have read this step's ghosts; it then writes the
 *      other half, which I finished reading before I sent that message.
 * The notification receives are posted first so that they are never unexpected messages. */
static void step_lock_notify(void *p)
{
    ghost *g = p;
    MPI_Request req[2 * MAX_DIRS];
    g->half ^= 1;
    for (int d = 0; d < g->ndirs; d++)
        MPI_Irecv(NULL, 0, MPI_BYTE, g->nbr[d], TAG_NOTIFY + d, MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < g->ndirs; d++) {
        MPI_Win_lock(MPI_LOCK_SHARED, g->nbr[d], 0, g->win);
        MPI_Put(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d],
                slot(g, g->half, opposite(d)), (int)g->n, MPI_BYTE, g->win);
        MPI_Win_unlock(g->nbr[d], g->win);
    }
    for (int d = 0; d < g->ndirs; d++)
        MPI_Isend(NULL, 0, MPI_BYTE, g->nbr[d], TAG_NOTIFY + opposite(d), MPI_COMM_WORLD,
                  &req[g->ndirs + d]);
    MPI_Waitall(2 * g->ndirs, req, MPI_STATUSES_IGNORE);
    MPI_Win_lock(MPI_LOCK_SHARED, g->rank, 0, g->win);
    MPI_Win_unlock(g->rank, g->win);
}

/* Synchronization counters (NEC's proposal): every process owns one counter. Per step: arm my
 * sync-object request (count: one bump per distinct neighbour), start one sync-ops request
 * (MPI_MODE_WIN_PUT) per distinct neighbour on that neighbour's counter, put, complete the
 * sync-ops requests (which sends each neighbour its bump, behind my puts), and wait until every
 * neighbour's bump has come: then its data is in my ghosts. Every request is persistent, made
 * once outside the timed loop. No lock and no message of the program's own: what the
 * lock_notify variant must add by hand, the counters do. A neighbour can be one step ahead, so
 * the steps alternate halves, as in step_lock_notify, each half with a counter of its own: the
 * early neighbour's bumps wait in the other half's counter instead of completing this step's
 * count in place of a slower neighbour's. */
static void step_counter(void *p)
{
    ghost *g = p;
    g->half ^= 1;
    MPI_Start(&g->arrived_nd[g->half]);
    MPI_Startall(g->nd, g->ops[g->half]);
    put_blocks(g, g->half);
    MPI_Waitall(g->nd, g->ops[g->half], MPI_STATUSES_IGNORE);
    MPI_Wait(&g->arrived_nd[g->half], MPI_STATUS_IGNORE);
}

/* MPI_Iput in a PSCW epoch, the requests completed by MPI_Waitall before MPI_Win_complete:
 * the pscw variant with request-returning puts. Chosen over MPI_Iput under sync-ops requests,
 * which would time the counter variant again plus the requests: here iput against pscw
 * isolates what a request costs (its put issued at once instead of batched with the complete
 * message, and an acknowledgement from the target), paid by a program that needs to know that
 * each block is in its neighbour's window before the epoch ends. */
static void step_iput(void *p)
{
    ghost *g = p;
    MPI_Request req[MAX_DIRS];
    MPI_Win_post(g->nbr_group, 0, g->win);
    MPI_Win_start(g->nbr_group, 0, g->win);
    for (int d = 0; d < g->ndirs; d++)
        fx.iput(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d],
                slot(g, 0, opposite(d)), (int)g->n, MPI_BYTE, g->win, &req[d]);
    MPI_Waitall(g->ndirs, req, MPI_STATUSES_IGNORE);
    MPI_Win_complete(g->win);
    MPI_Win_wait(g->win);
}

/* Put with notification: each block goes with MPIX_Put_signal, which bumps the neighbour's
 * counter once the block is in its window (no epoch at all); I wait until my counter has one
 * bump per direction. Halves alternate as in step_counter. */
static void step_put_signal(void *p)
{
    ghost *g = p;
    g->half ^= 1;
    MPI_Start(&g->arrived_dirs[g->half]);
    for (int d = 0; d < g->ndirs; d++)
        fx.put_signal(g->sendbuf + (size_t)d * g->n, (int)g->n, MPI_BYTE, g->nbr[d],
                      slot(g, g->half, opposite(d)), (int)g->n, MPI_BYTE, g->nbr_ctr[g->half][d], g->win);
    MPI_Wait(&g->arrived_dirs[g->half], MPI_STATUS_IGNORE);
}

/* The point-to-point reference must stay first (the ratio column divides by it). */
static const bench_variant variants[] = {
    {"isend", step_isend, ghost_begin, ghost_end},
    {"fence", step_fence, ghost_begin, ghost_end},
    {"pscw", step_pscw, ghost_begin, ghost_end},
    {"lock", step_lock, ghost_begin, lock_end},
    {"lock_notify", step_lock_notify, ghost_begin, ghost_end},
};
/* Appended to variants[] when flexrma's extensions are there. */
static const bench_variant flexrma_variants[] = {
    {"counter", step_counter, ghost_begin, ghost_end},
    {"iput", step_iput, ghost_begin, ghost_end},
    {"put_signal", step_put_signal, ghost_begin, ghost_end},
};
#define NBASE ((int)(sizeof variants / sizeof variants[0]))
#define NFLEX ((int)(sizeof flexrma_variants / sizeof flexrma_variants[0]))

/* The counters and persistent requests of the extension variants, on g->win (collective). */
static void extensions_setup(ghost *g, int size)
{
    MPI_Sync *all = malloc(bench_mul((size_t)size, sizeof *all));
    if (!all)
        bench_die("out of memory");
    for (int h = 0; h < 2; h++) {
        bench_counters_setup(g->win, size, g->distinct, g->nd, &g->mine[h], g->ops[h], all);
        for (int d = 0; d < g->ndirs; d++)
            g->nbr_ctr[h][d] = all[g->nbr[d]];
        bench_ctr.object_init(g->mine[h], g->nd, g->win, MPI_INFO_NULL, &g->arrived_nd[h]);
        bench_ctr.object_init(g->mine[h], g->ndirs, g->win, MPI_INFO_NULL, &g->arrived_dirs[h]);
    }
    free(all);
}

static void extensions_teardown(ghost *g)
{
    for (int h = 0; h < 2; h++) {
        for (int k = 0; k < g->nd; k++)
            MPI_Request_free(&g->ops[h][k]);
        MPI_Request_free(&g->arrived_nd[h]);
        MPI_Request_free(&g->arrived_dirs[h]);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody bumps my counters any more */
    bench_ctr.free_objects(2, g->mine, g->win);
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_init(&argc, &argv, "ghost", "8,16,64,256,1K,4K,16K,64K,256K,1M", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE | 1u << BENCH_FLAVOR_ALLOCATE);
    size_t max = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < sizeof(uint64_t))
            bench_die("--sizes: blocks of at least 8 bytes");
        max = o.sizes[i] > max ? o.sizes[i] : max;
    }

    /* The variants to run: the extension ones only where flexrma provides them. */
    bench_variant all_variants[NBASE + NFLEX];
    int nv = 0;
    for (int k = 0; k < NBASE; k++)
        all_variants[nv++] = variants[k];
    const int extensions = find_extensions();
    if (extensions)
        for (int k = 0; k < NFLEX; k++)
            all_variants[nv++] = flexrma_variants[k];
    else if (o.rank == 0)
        fprintf(stderr, "ghost: counter, iput, put_signal skipped: no flexrma extensions "
                        "(MPI_Iput, MPIX_Put_signal, MPI_Sync counters) in this MPI\n");

    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int ft = 0; ft < o.nflavor * o.ntopo; ft++) { /* every flavor, every topology */
        const int f = ft / o.ntopo, t = ft % o.ntopo;
        ghost g = {.rank = o.rank};
        bench_win w;
        char suffix[64]; /* "ring"; "ring/allocate" on MPI_Win_allocate windows */
        snprintf(suffix, sizeof suffix, "%s%s%s", bench_topo_name[o.topo[t]],
                 o.flavor[f] == BENCH_FLAVOR_CREATE ? "" : "/",
                 o.flavor[f] == BENCH_FLAVOR_CREATE ? "" : bench_flavor_name[o.flavor[f]]);
        g.ndirs = bench_neighbours(o.topo[t], o.rank, o.size, g.nbr);
        if (g.ndirs == 0) {
            if (o.rank == 0)
                fprintf(stderr, "ghost: no %s with %d ranks, skipped\n",
                        bench_topo_name[o.topo[t]], o.size);
            continue;
        }
        for (int d = 0; d < g.ndirs; d++) {
            int seen = 0;
            for (int i = 0; i < g.nd; i++)
                seen |= g.distinct[i] == g.nbr[d];
            if (!seen)
                g.distinct[g.nd++] = g.nbr[d];
        }
        MPI_Group_incl(world_group, g.nd, g.distinct, &g.nbr_group);
        size_t win_bytes = bench_mul(bench_mul(2, (size_t)g.ndirs), max);
        g.sendbuf = bench_alloc(BENCH_MEM_MALLOC, bench_mul((size_t)g.ndirs, max));
        bench_win_make(&w, o.flavor[f], win_bytes);
        g.ghosts = w.base;
        g.win = w.win;
        if (extensions)
            extensions_setup(&g, o.size);

        for (int i = 0; i < o.nsizes; i++) {
            g.n = o.sizes[i];
            bench_measure(&o, all_variants, nv, 0, &g, suffix, g.n, bench_iters(&o, g.n), 1);
        }
        if (extensions)
            extensions_teardown(&g);
        bench_win_free(&w);
        bench_free(BENCH_MEM_MALLOC, g.sendbuf);
        MPI_Group_free(&g.nbr_group);
    }
    MPI_Group_free(&world_group);
    return bench_finish();
}
