/* fuzz.h - the argument fuzzer (t_fuzz): what its parts share.
 *
 * A run is a sequence of batches. Every rank agrees on a batch's window (one per flavor) and
 * epoch context (the shared stream of the batch's seed); each rank then makes its own random
 * erroneous calls (its own stream), each with exactly one thing wrong, and checks the class
 * the specification prescribes, that the error was raised once through the handler, and that
 * the call's outputs are untouched. After the batch every rank's window must hold exactly what
 * the batch's valid operations put there (checksums gathered to all ranks), and a valid put/get
 * made in the same epoch must have moved the right data. */
#ifndef FLEXRMA_FUZZ_H
#define FLEXRMA_FUZZ_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrma.h"
#include "splitmix.h"

/* ---- random numbers: splitmix64, one stream per (seed, batch, rank) ---- */
typedef struct {
    uint64_t s;
} fz_rng;

static inline uint64_t fz_next(fz_rng *r) { return splitmix64(&r->s); }
static inline int fz_below(fz_rng *r, int n) { return (int)(fz_next(r) % (uint64_t)n); }
/* The stream of (seed, batch, who); who = -1: the one every rank shares. */
static inline fz_rng fz_stream(uint64_t seed, int batch, int who)
{
    fz_rng r = {seed * 0x2545F4914F6CDD1Dull ^ ((uint64_t)(unsigned)batch << 20) ^
                (uint64_t)(unsigned)(who + 1)};
    fz_next(&r);
    return r;
}

/* ---- windows (windows.c) ---- */
#define FZ_NW 128   /* ints in each rank's window */
#define FZ_SLOT 2   /* ints of one valid put: slot[s][origin] at ints (s * nprocs + origin) * 2 */
#define FZ_BAIT 64  /* ints [FZ_BAIT, FZ_NW): where erroneous calls aim */
#define FZ_NOTIFY 2 /* notification counters of each rank on each window (MPI_Win_notify_set_num) */
#define FZ_MAX_RANKS 16

typedef enum { FL_CREATE, FL_ALLOCATE, FL_DYNAMIC, FL_SHARED, FL_COUNT } fz_flavor;
extern const char *const fz_flavor_name[FL_COUNT];

typedef struct {
    fz_flavor flavor;
    MPI_Win win;
    int *mem;         /* this rank's FZ_NW ints */
    int unit;         /* displacement unit: 4 (create), 1 (allocate, dynamic) */
    MPI_Aint *base;   /* per rank: displacement of int 0 (dynamic: its address) */
    int model[FZ_NW]; /* what this rank's window must hold */
    int last[2];      /* the batch whose valid puts slot s holds; -1: none yet */
    MPI_Sync mine, stale; /* my counter on it; one I allocated and freed */
    MPI_Sync busy;        /* a counter of mine nobody bumps (CX_COUNTER arms a request on it) */
    MPI_Sync *all, *all_stale; /* every rank's */
    MPI_Request ops_req, obj_req; /* inactive: sync-ops to right, sync-object of count 1 */
} fz_win;

void fz_windows_create(fz_win w[FL_COUNT]);
void fz_windows_free(fz_win w[FL_COUNT]);
/* The displacement of int i of rank t's window. */
static inline MPI_Aint fz_disp(const fz_win *w, int t, int i)
{
    return w->base[t] + (MPI_Aint)i * (MPI_Aint)(sizeof(int) / (size_t)w->unit);
}
uint64_t fz_checksum(const void *p, size_t n);

/* ---- epoch contexts (epochs.c) ---- */
/* CX_COUNTER: a sync-ops request for puts and gets started to right, and a sync-object request
 * armed on my counter for left's (docs/specification.md section 6); one more armed on a counter
 * nobody bumps, for the misuse of an armed request (the first may complete at any time). */
typedef enum { CX_NONE, CX_FENCE, CX_LOCK, CX_LOCK_ALL, CX_PSCW, CX_COUNTER, CX_COUNT } fz_context;
extern const char *const fz_context_name[CX_COUNT];

/* ---- the run (t_fuzz.c) ---- */
typedef struct {
    uint64_t seed;
    int batch, rank, nprocs, right, left;
    fz_win *w;          /* the batch's window */
    fz_win *other;      /* another window (its counters are "of another window") */
    fz_context cx;
    fz_rng rng;         /* this rank's stream for the batch */
    int lock_type;      /* CX_LOCK: the type held on right */
    /* bad-call buffers: what erroneous calls read from, write into */
    unsigned char src[512], sink[512], cmp[64];
    /* datatypes and operations for the mutations (t_fuzz.c) */
    MPI_Datatype contig2, uncommitted, freed, wide;
    MPI_Op user_op;
    MPI_Op bad_op[8];
    MPI_Datatype bad_op_type[8];
    int nbad_op;
    MPI_Request p2p;    /* an inactive persistent point-to-point request */
    MPI_Request ops_active, obj_active; /* CX_COUNTER's started requests */
    MPI_Request busy_active; /* ... and one armed on w->busy, which never completes */
} fz_run;

/* One erroneous (or, for MPI_PROC_NULL, valid) call: its description, the class expected. */
typedef struct {
    char fn[40];       /* the function */
    char what[160];    /* which argument is wrong, and how */
    int target;        /* the rank it aims at, or -1 */
    int expect;        /* the error class the specification prescribes */
} fz_call;

/* Check one call's result (and that the error was raised exactly once through a handler, and
 * that `untouched` holds: the outputs the call must leave alone). Counts and reports. */
void fz_check(fz_run *r, const fz_call *c, int rc, int untouched);
/* Handler invocations so far (windows' and MPI_COMM_WORLD's). */
extern int fz_raised;

/* The groups of the PSCW context. */
extern MPI_Group fz_left_group, fz_right_group;
/* Every rank alike: open the batch's context; the valid put (in CX_NONE after the erroneous
 * calls, in a fence epoch of its own) and get; close; then check the get (epochs.c). */
void fz_epoch_open(fz_run *r);
int fz_valid_put(fz_run *r);
int fz_valid_get(fz_run *r);
void fz_epoch_close(fz_run *r);
int fz_valid_after(fz_run *r);
/* The windows' error handler: counts, and returns (t_fuzz.c). */
int fz_win_errhandler_set(MPI_Win win);

/* ---- the kinds of bad calls: each makes one call and checks it ---- */
void fz_bad_rma(fz_run *r);      /* bad_rma.c: communication calls */
void fz_bad_sync(fz_run *r);     /* bad_sync.c: synchronization calls in the wrong epoch */
void fz_bad_counter(fz_run *r);  /* bad_counter.c: the counters' calls */
void fz_bad_notify(fz_run *r);   /* bad_notify.c: the notification counters' calls */
void fz_bad_window(fz_run *r);   /* bad_sync.c: attach, detach, shared_query */
/* bad_collective.c: one collective call, erroneous on every rank alike; the shared stream
 * chooses it. Run inside the context, with a valid operation issued already. */
void fz_bad_collective(fz_run *r, fz_rng *shared);

#endif
