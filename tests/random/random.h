/* random.h - random one-sided programs checked against a model (tests/random/).
 *
 * A *program* is one window (a random flavor, size and displacement unit, random initial
 * contents) and a run of *epochs* on it. Every rank generates every rank's part of an epoch from
 * the program's seed (plan.c), so every rank can compute, with the model (model.c), what every
 * window holds afterwards and what every get and fetching operation returns. Each rank then
 * issues its own part through MPI (exec.c), and after the epoch checks its own window and its
 * own results against the model (check.c). A program is reproducible from its seed alone:
 * `t_random --replay SEED` on the same number of ranks runs it again.
 *
 * The window's membership changes too: a *change* epoch (EK_CHANGE, a few percent of epochs)
 * calls MPI_Win_change_comm with a communicator drawn from the seed, a random subset of
 * MPI_COMM_WORLD's ranks in random order (docs/specification.md section 11). Epochs address
 * targets by window rank, the rank in the current communicator; the model keeps every process's
 * memory by world rank. A leaver keeps its memory (a window over itself), which is still checked
 * after every epoch, and may join again later with it, or with a new window whose contents come
 * from the seed. Processes outside the window generate every epoch but take part in none.
 *
 * Only programs MPI defines are generated. In each epoch every target's window is cut into
 * disjoint blocks, and a block is used in one way only:
 *   PUT   one origin puts into it once; in a passive-target epoch it may flush and get the
 *         block back, which must return what it put;
 *   GET   any origins read it; nobody writes it, so they see its contents at the epoch's start;
 *   ACC1  one origin applies a sequence of accumulates, get-accumulates, fetch-and-ops and
 *         compare-and-swaps with any operations; MPI orders accumulates from one origin to the
 *         same location (accumulate_ordering's default), so the model applies them in program
 *         order and knows every fetched value;
 *   ACCN  several origins accumulate with one commutative operation, so the order in which
 *         they land does not matter (nobody fetches there).
 * That makes the synchronization of each origin its own choice within the epoch's kind: in lock
 * and lock_all epochs some origins open a lock_all epoch while others lock several targets at
 * once, shared or exclusive, so lock_all epochs run beside exclusive locks on their targets.
 */
#ifndef FLEXRMA_TESTS_RANDOM_H
#define FLEXRMA_TESTS_RANDOM_H

#include "flexrma.h"
#include "splitmix.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the generator's random numbers: splitmix64, the same on every rank ---- */
typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r) { return splitmix64(&r->s); }
/* Uniform in [0, n); n > 0. */
static inline uint64_t rng_below(rng *r, uint64_t n) { return rng_next(r) % n; }
/* Uniform in [lo, hi]. */
static inline int64_t rng_range(rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo + 1));
}
/* 1 with probability pct percent. */
static inline int rng_pct(rng *r, int pct) { return (int)rng_below(r, 100) < pct; }
/* n random bytes: window contents and operation buffers (plan.c), joiners' new windows
 * (model.c). */
static inline void fill_random(rng *r, unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rng_next(r);
        memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
    }
}
/* A seed derived from another one and an index: programs from a run's seed, and so on. */
static inline uint64_t seed_mix(uint64_t seed, uint64_t i)
{
    rng r = {seed ^ (i * 0xd1b54a32d192ed03ull)};
    return rng_next(&r);
}

/* ---- windows ---- */
typedef enum {
    FL_CREATE_MALLOC,   /* MPI_Win_create over malloc'd memory */
    FL_CREATE_ALLOCMEM, /* MPI_Win_create over MPI_Alloc_mem memory */
    FL_ALLOCATE,        /* MPI_Win_allocate */
    FL_SHARED,          /* MPI_Win_allocate_shared */
    FL_DYNAMIC,         /* MPI_Win_create_dynamic, one attached region per rank */
    FL_COUNT
} flavor;
extern const char *const flavor_name[FL_COUNT];

/* ---- epochs ---- */
typedef enum {
    EK_FENCE,   /* MPI_Win_fence, random assertions */
    EK_PSCW,    /* post/start/complete/wait (or test), groups from who accesses whom */
    EK_LOCK,    /* MPI_Win_lock per target, shared or exclusive, one or several at once */
    EK_LOCKALL, /* MPI_Win_lock_all, flushes, request operations (MPI_Rput...) */
    EK_COUNTER, /* sync-ops requests at the origins, sync-object requests at the targets */
    EK_SIGNAL,  /* MPIX_Put_signal / MPIX_Iput_signal, counted by sync-object requests */
    EK_CHANGE,  /* MPI_Win_change_comm: members leave, others join, ranks renumbered; no RMA */
    EK_COUNT
} epoch_kind;
extern const char *const epoch_name[EK_COUNT];

typedef enum {
    OP_PUT,
    OP_GET,
    OP_ACC,   /* MPI_Accumulate */
    OP_GACC,  /* MPI_Get_accumulate */
    OP_FOP,   /* MPI_Fetch_and_op */
    OP_CAS,   /* MPI_Compare_and_swap */
    OP_FLUSH, /* MPI_Win_flush(target) */
    OP_FLUSH_LOCAL,
    OP_FLUSH_ALL,
    OP_FLUSH_LOCAL_ALL,
    OP_WAIT, /* complete the request of an earlier operation (`waits`) */
    OP_KINDS
} op_kind;
extern const char *const op_name[OP_KINDS];

/* How an operation is issued. */
typedef enum {
    VIA_PLAIN,  /* MPI_Put, MPI_Get, ... */
    VIA_I,      /* flexrma's MPI_Iput, MPI_Iget, MPI_Iaccumulate: remote completion */
    VIA_R,      /* MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate */
    VIA_SIGNAL, /* MPIX_Put_signal */
    VIA_ISIGNAL, /* MPIX_Iput_signal */
    VIA_NOTIFY,  /* MPI_Put_notify, MPI_Get_notify: notification counter 0 of the target */
    VIA_XNOTIFY  /* Open MPI's MPIX_Put_notify, MPIX_Get_notify: notification id 1 */
} op_via;

/* Where the elements of one side of an operation lie, in elements from its start. */
typedef enum { LAY_CONTIG, LAY_VECTOR, LAY_INDEXED } layout_kind;
typedef struct layout {
    layout_kind kind;
    int n;             /* elements */
    int count, blen;   /* vector: count blocks of blen elements, */
    int stride;        /*         stride elements apart */
    int nblk;          /* indexed: blocks */
    int *blens, *disp; /*          their lengths and displacements (increasing) */
    int extent;        /* elements from the start to the end of the last one */
} layout;

typedef struct op {
    op_kind kind;
    op_via via;
    int origin, target;
    int esize;         /* element size: 4 (MPI_UINT32_T) or 8 (MPI_UINT64_T) */
    int mop;           /* index into the operation table (model.c) */
    size_t toff;       /* byte offset of the target side in the target's window */
    layout tl, ol, rl; /* target, origin (data or get destination), result (get_accumulate) */
    unsigned char *obuf;   /* origin data; a get's destination */
    size_t obytes;
    unsigned char *cbuf;   /* compare-and-swap's compare value */
    unsigned char *rbuf;   /* get_accumulate's, fetch_and_op's and compare_and_swap's result */
    size_t rbytes;
    unsigned char *expect; /* what a get's destination (or rbuf) must hold afterwards */
    int waits;             /* OP_WAIT: index of the operation whose request it completes */
    int waited;            /* the request was completed by an OP_WAIT in the program */
    int block;             /* the block it belongs to (diagnostics) */
    MPI_Request req;
    MPI_Datatype ttype, otype, rtype; /* built by exec.c */
} op;

typedef enum { BL_PUT, BL_GET, BL_ACC1, BL_ACCN } block_use;
extern const char *const block_name[4];

typedef struct block {
    int target;
    size_t off, len; /* bytes of the target's window */
    block_use use;
} block;

typedef struct epoch {
    epoch_kind kind;
    int nprocs;
    op **prog;     /* prog[r][0..nprog[r]): rank r's operations in program order */
    int *nprog;
    block *blocks;
    int nblocks;
    /* synchronization choices, the same on every rank */
    int noprecede, nosucceed; /* fence */
    int nocheck;              /* pscw (with a barrier between post and start), lock, lock_all */
    int use_test;             /* pscw: MPI_Win_test loop instead of MPI_Win_wait */
    int multi;                /* lock: every target locked at once instead of one after another */
    int *lock_type;           /* lock, lock_all: lock_type[origin * nprocs + target] */
    int *lock_order;          /* lock, lock_all: the order in which an origin that locks several
                                 targets at once locks them (a permutation of the members, the
                                 same for every origin) */
    int *lockall_of;          /* lock, lock_all: by origin, 1 if it opens a lock_all epoch, 0 if
                                 it locks targets (every one at once in a lock_all epoch), so
                                 that lock_all epochs meet exclusive locks of others */
    int remote_complete;      /* counter: MPIX_INFO_SYNC_REMOTE_COMPLETE on the sync-ops requests */
    int arm_first;            /* counter, signal: targets start their sync-object request first */
    long nops;                /* RMA operations of every rank (flushes and waits not counted) */
    /* change: the new communicator and what each joiner brings (arrays by world rank) */
    int *new_member;          /* new_member[i]: the world rank that becomes window rank i */
    int nnew;
    int leader;               /* peer_rank: a remaining member's rank in the new communicator */
    int *new_rank;            /* by world rank: its rank in the new communicator, or -1 */
    int *fresh;               /* by world rank: a joiner brings a new window (0: the one it kept
                                 when it left) */
    flavor *fresh_fl;         /* by world rank: that new window's flavor, */
    size_t *fresh_bytes;      /*                size */
    int *fresh_unit;          /*                and displacement unit */
    int *fresh_allocmem;      /* by world rank: a new dynamic window's region is MPI_Alloc_mem's */
} epoch;

/* A window of a program, as every rank sees it. */
typedef struct program {
    uint64_t seed;
    int nprocs, rank;
    flavor fl;
    size_t bytes;             /* the first members' window size */
    int disp_unit;            /* and displacement unit */
    size_t *bytes_of;         /* by world rank: its window size (a joiner's new window may */
    int *unit_of;             /* differ) and displacement unit */
    int nepochs;
    unsigned kinds;           /* epoch kinds allowed: bit (1 << epoch_kind) */
    unsigned char **model;    /* model[w]: what world rank w's window memory must hold */
    /* membership (model.c keeps it; every rank the same) */
    int nmembers;
    int *member;              /* member[i]: the world rank at window rank i */
    int *wrank_of;            /* by world rank: its window rank, or -1 outside the window */
    int wrank;                /* mine */
    MPI_Comm comm;            /* the members in window rank order; MPI_COMM_NULL outside */
    MPI_Aint *base;           /* dynamic windows: each world rank's region's address */
    MPI_Win win;              /* outside the window: my window over myself */
    flavor my_fl;             /* how my window memory was made (a joiner's may differ) */
    int my_allocmem;          /* dynamic windows: my region is MPI_Alloc_mem memory */
    unsigned char *mem;       /* my window memory */
    void *dyn;                /* dynamic windows: my attached region */
    MPI_Sync *counters;       /* counters[w]: world rank w's counter (counter and signal epochs) */
    MPI_Sync my_counter;
    int have_counter;         /* I own my_counter (members only: a leaver frees it) */
} program;

/* plan.c */
void plan_program(program *p, uint64_t seed, int nprocs, int rank, unsigned kinds,
                  unsigned flavors);
void plan_epoch(const program *p, int index, epoch *e);
void epoch_free(epoch *e);
int layout_at(const layout *l, int i); /* element i's place, in elements from the start */

/* model.c: apply every rank's operations of e to p->model, filling each op's `expect`; for a
 * change epoch, the contents joiners' new windows bring. */
void model_epoch(program *p, epoch *e, int index);
/* After a change epoch: the new membership (every rank, members or not). */
void model_change(program *p, const epoch *e);
extern const MPI_Op model_ops[];
extern const char *const model_op_names[];
int model_op_count(void);

/* exec.c; exec_epoch is called by every rank, members or not */
void exec_window_create(program *p);
void exec_window_free(program *p);
void exec_epoch(program *p, epoch *e, int index);

/* check.c: 0 if my window and my results match the model; otherwise prints what differs. */
int check_epoch(const program *p, const epoch *e, int index);

#endif
