/* common.h - what every flexrma benchmark shares: command-line options, buffers, the timing
 * loop and the CSV row.
 *
 * A benchmark program is a table of variants (one function each that performs one step: an
 * exchange, an empty epoch, a round trip) and a loop over sizes and configurations that hands the
 * table to bench_measure(). bench_measure() runs the variants interleaved, repetition by
 * repetition, so that every variant and its point-to-point reference see the same machine load;
 * this is what makes the ratios meaningful on a shared, noisy machine. Each repetition's time is
 * the maximum over the ranks (the exchange is done when the slowest rank is done); the row
 * reports the median over repetitions, and the median of the per-repetition ratios.
 *
 * The programs are plain MPI: they know nothing of flexrma. bench/run runs them natively and
 * under flexrma-run, and says which through --impl/--transport, which only label the rows
 * (bench_init() refuses a label that contradicts the library that provides MPI_Put). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>

#include "../include/flexrma.h" /* types and constants only: see bench_counter_calls */

#define BENCH_MAX_LIST 32

typedef struct bench_opts {
    const char *program;   /* the CSV 'program' column */
    const char *impl;      /* --impl: native | flexrma (checked) */
    const char *transport; /* --transport: a label, e.g. default | am | - */
    int iters;             /* --iters: timed steps per repetition at small sizes */
    int reps;              /* --reps: timed repetitions */
    int warmup;            /* --warmup: untimed steps per variant before the repetitions */
    int nsizes;            /* --sizes */
    size_t sizes[BENCH_MAX_LIST];
    int nnbrs; /* --nbrs: neighbour counts; 0 stands for p, the number of ranks */
    int nbrs[BENCH_MAX_LIST];
    int nmem; /* --mem: window memory kinds (BENCH_MEM_*) */
    int mem[BENCH_MAX_LIST];
    int ntopo; /* --topo: ghost topologies (BENCH_TOPO_*) */
    int topo[BENCH_MAX_LIST];
    int blocks; /* --blocks: puts per epoch (bandwidth) */
    int nflavor; /* --flavor: how windows are made (BENCH_FLAVOR_*; bench_flavors_allowed) */
    int flavor[BENCH_MAX_LIST];
    int rank, size;
} bench_opts;

enum { BENCH_MEM_ALLOC_MEM, BENCH_MEM_MALLOC }; /* seed 000's "global" and "local" windows */
enum { BENCH_TOPO_RING, BENCH_TOPO_GRID };

/* A ghost exchange's neighbours: on a ring (2: left, right), or on a periodic 2-D grid of at
 * least 2 x 2 (4, in opposite pairs d and d ^ 1); 0 when the rank count allows no grid. */
#define BENCH_MAX_DIRS 4
int bench_neighbours(int topo, int rank, int size, int nbr[BENCH_MAX_DIRS]);

/* flexrma's synchronization counters (flexrma.h), found at run time by name: the programs are
 * plain MPI (bench/run builds them with mpicc alone); under flexrma-run, the preloaded
 * libflexrma provides them, natively they do not exist. */
typedef struct bench_counter_calls {
    __typeof__(&MPI_Win_Sync_alloc_objects) alloc_objects;
    __typeof__(&MPI_Win_Sync_free_objects) free_objects;
    __typeof__(&MPI_Win_sync_ops_init) ops_init;
    __typeof__(&MPI_Win_sync_object_init) object_init;
    MPI_Datatype *handle_sync; /* &MPI_Handle_sync */
} bench_counter_calls;
extern bench_counter_calls bench_ctr;
/* 1 if every rank found every call (collective over MPI_COMM_WORLD). */
int bench_counters_find(void);
/* Collective over MPI_COMM_WORLD, on win: allocate my counter (*mine), and make a persistent
 * sync-ops request (MPI_MODE_WIN_PUT) on the counter of each of the nd ranks targets[] (ops[]);
 * all (size entries, or NULL) receives every rank's counter. */
void bench_counters_setup(MPI_Win win, int size, const int *targets, int nd, MPI_Sync *mine,
                          MPI_Request *ops, MPI_Sync *all);

/* MPI-3's window flavors: MPI_Win_create over MPI_Alloc_mem memory, MPI_Win_allocate,
 * MPI_Win_create_dynamic with MPI_Alloc_mem memory attached, MPI_Win_allocate_shared, and
 * MPI_Win_create over ordinary memory (posix_memalign'ed pages, as osu_*_latency -w create). */
enum { BENCH_FLAVOR_CREATE, BENCH_FLAVOR_ALLOCATE, BENCH_FLAVOR_DYNAMIC, BENCH_FLAVOR_SHARED,
       BENCH_FLAVOR_MALLOC, BENCH_NFLAVOR };

extern const char *const bench_mem_name[];    /* "alloc_mem", "malloc" */
extern const char *const bench_topo_name[];   /* "ring", "grid" */
extern const char *const bench_flavor_name[]; /* "create", "allocate", "dynamic", "shared",
                                                 "malloc" */

/* One way of doing a step. step is timed; begin and end (optional) run outside the timing
 * around every timed loop: begin to prepare (stamp send data, open an MPI-3 epoch), end to
 * close and check, returning the number of wrong results found on this rank (0 = correct). */
typedef struct bench_variant {
    const char *name;
    void (*step)(void *ctx);
    void (*begin)(void *ctx);
    int (*end)(void *ctx);
} bench_variant;

/* MPI_Init, then the options: defaults (sizes: default_sizes, in --sizes syntax), then argv.
 * Exits on a bad option, and aborts when --impl contradicts the library providing MPI_Put. */
void bench_init(int *argc, char ***argv, const char *program, const char *default_sizes,
                bench_opts *o);
/* MPI_Finalize; returns the exit status: 0, or 1 if a measurement found wrong results. */
int bench_finish(void);

/* The timed steps per repetition at this size: o->iters up to 16 KiB, then fewer so that large
 * sizes do not dominate the run time (at least o->iters / 25, and 3). */
int bench_iters(const bench_opts *o, size_t bytes);
/* Median of v[0..n), sorted in scratch[0..n) (v keeps its order: the per-repetition ratios pair
 * the variants' times by repetition). */
double bench_median(const double *v, int n, double *scratch);
/* Print one CSV row (rank 0): program, name, implementation, transport, ranks, bytes, the median
 * of t[0..reps), and the median of t[r] / ref[r] (empty when ref is NULL). ratio and scratch:
 * reps doubles each. */
void bench_row(const bench_opts *o, const char *name, size_t bytes, const double *t,
               const double *ref, int reps, double *ratio, double *scratch);

/* Time every variant of v[0..nv) at one configuration and print one CSV row each (rank 0):
 * iters timed steps per repetition; the time reported is per step divided by ops (a step may
 * do several operations, e.g. the puts of one epoch, or both halves of a round trip). ref is the
 * index of the point-to-point reference for the ratio column, or -1 for none. The row's variant
 * is "NAME" or "NAME/SUFFIX". Collective over MPI_COMM_WORLD. */
void bench_measure(const bench_opts *o, const bench_variant *v, int nv, int ref, void *ctx,
                   const char *suffix, size_t bytes, int iters, int ops);
/* The same with operations per step given per variant (ops[k]), and with each variant's own
 * description args[k] (or args NULL), which its callbacks read with bench_variant_arg(): one
 * set of callbacks can then serve a table of variants built at run time. */
void bench_measure_each(const bench_opts *o, const bench_variant *v, int nv, int ref, void *ctx,
                        const char *suffix, size_t bytes, int iters, const int *ops,
                        const void *const *args);
/* The args[k] of the variant whose timed loop (begin, steps, end) runs now; NULL outside one. */
const void *bench_variant_arg(void);
/* One timed loop of variant v (its arg: arg): begin, barrier, iters steps, end. Returns this
 * rank's time per step in microseconds; adds the wrong results end found to *errors. Not
 * collective beyond what v's callbacks do. */
double bench_loop(const bench_variant *v, const void *arg, void *ctx, int iters, int *errors);

/* The machine's core-to-core round trip, the same natively and under flexrma: ranks 0 and 1
 * ping-pong a cache line in a POSIX shared mapping of their own (no MPI in between). Setup and
 * teardown are collective over MPI_COMM_WORLD; ranks above 1 take no part in the steps. */
typedef struct bench_c2c {
    int rank;
    _Atomic unsigned long long *ping, *pong; /* written by rank 0, by rank 1 */
    unsigned long long seq;
} bench_c2c;
void bench_c2c_setup(bench_c2c *c, const char *program);
void bench_c2c_teardown(bench_c2c *c);
/* One round trip; returns 1 if the peer's sequence number was not the one expected. */
int bench_c2c_step(bench_c2c *c);

/* 1 when a native run must skip MPI_Compare_and_swap on windows of this flavor: Open MPI 4.1's
 * osc rdma (its choice for MPI_Win_allocate windows between node peers) kills the target with
 * a segmentation fault in btl vader on it (osc sm and pt2pt do not). BENCH_NATIVE_CAS=1 runs
 * it anyway. */
int bench_native_cas_crashes(const bench_opts *o, int flavor);

/* Exits (with a message naming them) when --flavor lists a flavor outside mask, a set of
 * 1 << BENCH_FLAVOR_* bits: the flavors this program can make its windows in. */
void bench_flavors_allowed(const bench_opts *o, unsigned mask);

/* A window of one flavor over MPI_COMM_WORLD, displacement unit 1, bytes of my memory (every
 * byte written once, zero). disp[r] is where rank r's memory starts in displacements: 0, or
 * for a dynamic window its address (MPI_Get_address, exchanged after the attach). */
typedef struct bench_win {
    MPI_Win win;
    int flavor;
    unsigned char *base; /* my memory in the window */
    size_t bytes;
    MPI_Aint *disp; /* [size] */
} bench_win;
void bench_win_make(bench_win *w, int flavor, size_t bytes);
void bench_win_free(bench_win *w); /* collective; every epoch on it must be closed */

/* Seed 000's exchange pattern with n neighbours (1 <= n <= p): for j = 1..n, rank i supplies a
 * block to (i + j) mod p and requests one from (i - j) mod p; n = p includes i itself. */
typedef struct bench_shift {
    int n;
    int *tgt;            /* tgt[j - 1] = (i + j) mod p: where my j-th block goes */
    int *org;            /* org[j - 1] = (i - j) mod p: whose j-th block comes to me */
    MPI_Group tgt_group; /* the tgt ranks (distinct), for MPI_Win_start of puts */
    MPI_Group org_group; /* the org ranks, for MPI_Win_post of puts */
} bench_shift;
void bench_shift_init(bench_shift *s, int n);
void bench_shift_free(bench_shift *s);
/* The neighbour count of --nbrs entry k (p for 'p'), and the row suffix "n=K/MEM" ("n=p/MEM")
 * in suffix; 0 (and a note on stderr) when there are fewer ranks than that. */
int bench_nbrs(const bench_opts *o, int k, int mem, char *suffix, size_t len);

/* Memory of the given kind (BENCH_MEM_*), every byte written once (so that page faults are not
 * timed); bench_free releases it. Exits when out of memory. */
void *bench_alloc(int mem, size_t bytes);
void bench_free(int mem, void *p);

/* Stamps that let a benchmark check that a block arrived: v in the first and the last 8 bytes
 * of the n-byte block b (n >= 8); bench_stamp_wrong counts the ends that differ from want. */
void bench_stamp(unsigned char *b, size_t n, unsigned long long v);
int bench_stamp_wrong(const unsigned char *b, size_t n, unsigned long long want);

/* Overflow-checked a * b for buffer sizes; exits on overflow. */
size_t bench_mul(size_t a, size_t b);

/* Print a message on stderr (rank-prefixed) and abort the job. */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
