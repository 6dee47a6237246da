/* fr.h - what every flexrma source file needs: options, the engine lock, error raising, and the
 * conventions of the code base.
 *
 * Conventions
 *  - Exported symbols are only the MPI_/PMPI_/MPIX_ entry points, marked FR_API. Everything else
 *    is hidden (-fvisibility=hidden) and internal non-static names start with fr_.
 *  - Internal functions return an MPI error code (MPI_SUCCESS or a code made by fr_errorf()).
 *    Entry points raise that code once, through the window's (or communicator's) error handler.
 *  - The engine is not reentrant: every entry point that touches engine state holds the engine
 *    lock (FR_ENTER/FR_LEAVE). Internal functions assume it is held.
 */
#ifndef FR_H
#define FR_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define FR_API __attribute__((visibility("default")))
#define FR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FR_LIKELY(x) __builtin_expect(!!(x), 1)

/* FLEXRMA_TRANSPORT: how to reach processes on the same node. */
typedef enum fr_transport_mode {
    FR_TRANSPORT_AUTO, /* "auto" (default): shared memory or cross-memory attach where possible */
    FR_TRANSPORT_AM,   /* "am": messages everywhere, as between nodes */
    FR_TRANSPORT_SHM   /* "shm": shared memory, and fail loudly where it cannot be had */
} fr_transport_mode;

/* Run-time options, read once from the environment at MPI_Init (docs/specification.md,
 * section 10). */
typedef struct fr_options {
    int disabled;       /* FLEXRMA_DISABLE=1: pass every call through to the MPI library */
    int async_progress; /* FLEXRMA_ASYNC_PROGRESS=1: an agent thread serves incoming RMA */
    int stats;          /* FLEXRMA_STATS=1: print per-window statistics at MPI_Finalize */
    size_t eager_max;   /* FLEXRMA_EAGER_MAX: largest payload carried inside a packet (bytes) */
    int fence_direct_max; /* FLEXRMA_FENCE_DIRECT_MAX: largest window closing fences directly */
    unsigned spin_polls;  /* FLEXRMA_SPIN_POLLS: idle polls before a wait yields the core */
    fr_transport_mode transport; /* FLEXRMA_TRANSPORT */
    int direct;         /* FLEXRMA_DIRECT (default 1): copy straight into node peers' windows */
    uint64_t ask_wait_ns; /* FLEXRMA_ASK_WAIT_US, in ns: how long a small get asked of a node
                           peer through the ring waits for the answer before the origin reads
                           it itself (transport/direct.h); 0: never asked */
    int adopt;          /* FLEXRMA_ADOPT: share MPI_Win_create windows' ordinary memory with
                           node peers in place (node/shm_adopt.h). 0: never; 1 (default): where
                           pinned pages are refused (Linux 6.8); 2: before 6.8 too, unsafe */
    size_t shm_ring;    /* FLEXRMA_SHM_RING: bytes of each same-node packet ring (rounded up to a
                           power of two, 1 KiB to 1 GiB) */
    int shm_lazy;       /* FLEXRMA_SHM_LAZY=1: attach to node peers on first use in every window,
                           not only in large ones (tp_shm.c) */
    size_t am_inbox;    /* FLEXRMA_AM_INBOX: bytes of the receive posted for batches sent as
                           messages (at least 64); bigger batches go after their length */
    unsigned native_flavors; /* FLEXRMA_NATIVE_FLAVORS: FR_FLAVOR_* bits left to the library */
    unsigned coll_shm;  /* FLEXRMA_COLL_SHM: hooked collectives a communicator of node peers
                           makes before it gets a shared-memory area (progress/coll_shm.h);
                           0: never (default 64) */
    int test_nodes;     /* FLEXRMA_TEST_NODES=K, a test switch: MPI_COMM_WORLD split into K
                           simulated nodes (node/node_comm.h); 0: off */
    unsigned test_jitter; /* FLEXRMA_TEST_JITTER=MAX_US, a test switch: every message flexrma
                           sends waits a random time in [0, MAX_US] us first, in order per
                           destination, tag and communicator (progress/isend.h); 0: off */
    uint64_t test_jitter_seed; /* FLEXRMA_TEST_JITTER_SEED, mixed with the world rank ... */
    int test_jitter_seeded;    /* ... when set; else the pid and the clock seed the delays */
    int test_no_move;   /* FLEXRMA_TEST_NO_MOVE=1, a test switch: behave as on a kernel without
                           UFFDIO_MOVE (before Linux 6.8; node/page_hold.h) */
} fr_options;

/* Window flavors flexrma can hand back to the MPI library (FLEXRMA_NATIVE_FLAVORS). Shared and
 * dynamic windows are always the library's for now. */
enum { FR_FLAVOR_ALLOCATE = 1, FR_FLAVOR_SHARED = 2, FR_FLAVOR_DYNAMIC = 4 };

extern fr_options fr_opt;
/* Read fr_opt from the environment (MPI_Init, before anything else). */
void fr_options_read(void);
/* Non-zero between flexrma's MPI_Init and MPI_Finalize when not disabled: flexrma is in charge. */
extern int fr_active;
/* A communicator over this process alone with MPI_ERRORS_RETURN, for local MPI calls (Pack,
 * probes) whose failures flexrma wants to see rather than have abort the program. */
extern MPI_Comm fr_comm_self;

/* The engine lock serializes the engine between application threads and the progress agent.
 * Taken only when fr_engine_locking (init.c says when); the test is inline because every call
 * and every wait turn makes it. */
extern int fr_engine_locking;
void fr_engine_lock(void);
void fr_engine_unlock(void);
#define FR_ENTER()                                                                                \
    do {                                                                                          \
        if (fr_engine_locking)                                                                    \
            fr_engine_lock();                                                                     \
    } while (0)
#define FR_LEAVE()                                                                                \
    do {                                                                                          \
        if (fr_engine_locking)                                                                    \
            fr_engine_unlock();                                                                   \
    } while (0)

/* ---- errors (errors.c) ----
 * Each flexrma error has a standard MPI error class and a fixed explanation, registered once at
 * MPI_Init with MPI_Add_error_code/MPI_Add_error_string, so MPI_Error_class() gives the standard
 * class and MPI_Error_string() the explanation. fr_errorf() also records a detailed message for
 * this occurrence, which is printed when the error handler is MPI_ERRORS_ARE_FATAL. */
/* Error classes flexrma adds (errors.def), negative until MPI_Init makes them: the draft's
 * MPI_ERR_INVALID_NOTIFICATION (flexrma.h names the class made, mpix_err_invalid_notification). */
#define FR_CLASS_INVALID_NOTIFICATION (-1)

typedef enum fr_err {
#define FR_ERROR(name, mpi_class, text) name,
#include "errors.def"
#undef FR_ERROR
    FR_ERR__COUNT
} fr_err;

int fr_errors_register(void);
int fr_errorf(fr_err e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The detail recorded by the last fr_errorf() of this thread ("" when none). */
const char *fr_error_detail(void);

/* Raise rc (an MPI error code) from call `call` through the window's error handler; returns what
 * the handler lets the call return. MPI_SUCCESS passes through untouched. (A flexrma window:
 * fr_win_raise, win.h.) */
int fr_handle_raise(MPI_Win win, const char *call, int rc);
int fr_comm_raise(MPI_Comm comm, const char *call, int rc);

/* Checked size arithmetic: 0 on success, -1 on overflow. */
static inline int fr_mul_size(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Is the boolean info key set to "true" (or "1", "yes")? MPI_INFO_NULL: no. */
int fr_info_flag(MPI_Info info, const char *key);
/* Key's value as a boolean (true/false, yes/no, 1/0, any case); dflt when absent or otherwise. */
int fr_info_bool(MPI_Info info, const char *key, int dflt);

void *fr_xmalloc(size_t n);                 /* aborts the job on exhaustion */
void *fr_xcalloc(size_t n, size_t size);    /* idem, overflow-checked */
void *fr_xrealloc(void *p, size_t n);       /* idem */
/* Make the array *pp (capacity *cap elements of elem bytes) hold at least need elements,
 * doubling; overflow-checked. */
void fr_grow(void *pp, size_t *cap, size_t need, size_t elem);
/* memmove(dst, src, n), large copies in pieces that stay on libc's fastest path (mem.c). */
void fr_copy_bytes(void *dst, const void *src, size_t n);

/* Abort the job on an internal invariant violation or an unexpected MPI failure. */
void fr_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* What fr_fatal runs before it aborts (node/: remove shared-memory names; set at MPI_Init). */
void fr_on_fatal(void (*cleanup)(void));
#define FR_CHECK_MPI(call)                                                                        \
    do {                                                                                          \
        int fr_rc_ = (call);                                                                      \
        if (FR_UNLIKELY(fr_rc_ != MPI_SUCCESS))                                                   \
            fr_fatal("%s:%d: %s failed (MPI error %d)", __FILE__, __LINE__, #call, fr_rc_);       \
    } while (0)

#endif
