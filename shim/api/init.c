/* init.c - start and end of flexrma's life in a process: options, MPI_Init/MPI_Finalize,
 * the engine lock, and the small allocation and failure helpers.
 *
 * flexrma does nothing at load time: a process that inherits LD_PRELOAD without calling MPI_Init
 * (mpirun itself) is unaffected. */
#include "core/fr.h"
#include "core/next.h"
#include "dtype/dtype.h"
#include "sync/counters.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "node/shm_map.h"
#include "node/shm_seg.h"
#include "stats.h"
#include "win/win.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fr_options fr_opt;
int fr_active;
MPI_Comm fr_comm_self = MPI_COMM_NULL;

/* The engine lock serializes threads inside flexrma: the progress agent and the program's own
 * threads under MPI_THREAD_MULTIPLE. Below that level the program never enters MPI from two
 * threads at once and orders its own calls, so the lock would only cost its atomic
 * instructions, several per call and per wait turn (a fifth of a short epoch's time). Decided
 * once in start_engine, before anything takes the lock or the agent starts. */
static pthread_mutex_t engine_mutex = PTHREAD_MUTEX_INITIALIZER;
int fr_engine_locking = 1;

void fr_engine_lock(void) { pthread_mutex_lock(&engine_mutex); }

void fr_engine_unlock(void) { pthread_mutex_unlock(&engine_mutex); }

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end == '\0' ? (size_t)n : dflt;
}

static fr_transport_mode env_transport(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v || strcmp(v, "auto") == 0)
        return FR_TRANSPORT_AUTO;
    if (strcmp(v, "am") == 0)
        return FR_TRANSPORT_AM;
    if (strcmp(v, "shm") == 0)
        return FR_TRANSPORT_SHM;
    fprintf(stderr, "flexrma: %s=%s is neither auto, am nor shm; using auto\n", name, v);
    return FR_TRANSPORT_AUTO;
}

static void read_options(void)
{
    fr_opt.disabled = env_flag("FLEXRMA_DISABLE");
    fr_opt.async_progress = env_flag("FLEXRMA_ASYNC_PROGRESS");
    fr_opt.stats = env_flag("FLEXRMA_STATS");
    fr_opt.eager_max = env_size("FLEXRMA_EAGER_MAX", 8192);
    fr_opt.fence_direct_max = (int)env_size("FLEXRMA_FENCE_DIRECT_MAX", 8);
    fr_opt.spin_polls = (unsigned)env_size("FLEXRMA_SPIN_POLLS", 32);
    fr_opt.transport = fr_opt.disabled ? FR_TRANSPORT_AUTO : env_transport("FLEXRMA_TRANSPORT");
    fr_opt.shm_ring = env_size("FLEXRMA_SHM_RING", 65536);
    fr_opt.direct = (int)env_size("FLEXRMA_DIRECT", 1) != 0;
    fr_opt.am_inbox = env_size("FLEXRMA_AM_INBOX", 16384);
    if (fr_opt.am_inbox < 64)
        fr_opt.am_inbox = 64;
    if (fr_opt.am_inbox > INT32_MAX)
        fr_opt.am_inbox = INT32_MAX;
}

/* Everything that needs MPI to be initialized. */
static int start_engine(void)
{
    if (fr_opt.disabled)
        return MPI_SUCCESS;
    int level;
    FR_CHECK_MPI(PMPI_Query_thread(&level));
    fr_engine_locking = fr_opt.async_progress || level == MPI_THREAD_MULTIPLE;
    FR_CHECK_MPI(PMPI_Comm_dup(MPI_COMM_SELF, &fr_comm_self));
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(fr_comm_self, MPI_ERRORS_RETURN));
    fr_errors_register();
    fr_syncobj_init();
    if (fr_opt.transport != FR_TRANSPORT_AM)
        fr_peer_access_allow();
    fr_active = 1;
    if (fr_opt.async_progress)
        return fr_agent_start();
    return MPI_SUCCESS;
}

FR_API int MPI_Init(int *argc, char ***argv)
{
    read_options();
    if (fr_opt.async_progress && !fr_opt.disabled) {
        int provided;
        int rc = FR_NEXT(Init_thread)(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            return rc;
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "flexrma: FLEXRMA_ASYNC_PROGRESS=1 needs MPI_THREAD_MULTIPLE, which "
                            "this MPI does not provide; continuing without the progress agent\n");
            fr_opt.async_progress = 0;
        }
        return start_engine();
    }
    int rc = FR_NEXT(Init)(argc, argv);
    return rc == MPI_SUCCESS ? start_engine() : rc;
}
FR_PMPI(Init);

FR_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    read_options();
    int ask = required;
    if (fr_opt.async_progress && !fr_opt.disabled)
        ask = MPI_THREAD_MULTIPLE; /* the agent thread calls MPI concurrently with the program */
    int rc = FR_NEXT(Init_thread)(argc, argv, ask, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ask == MPI_THREAD_MULTIPLE && *provided < MPI_THREAD_MULTIPLE && fr_opt.async_progress) {
        fprintf(stderr, "flexrma: FLEXRMA_ASYNC_PROGRESS=1 needs MPI_THREAD_MULTIPLE, which this "
                        "MPI does not provide; continuing without the progress agent\n");
        fr_opt.async_progress = 0;
    }
    return start_engine();
}
FR_PMPI(Init_thread);

FR_API int MPI_Finalize(void)
{
    if (fr_active) {
        fr_agent_stop();
        FR_ENTER();
        /* Drain what is still in flight (sends whose completion nobody waited for). */
        fr_idle idle = {0, 0};
        while (fr_pending_count() > 0) {
            if (fr_progress() == 0)
                fr_backoff(&idle);
        }
        if (fr_opt.stats)
            fr_stats_print();
        fr_dtype_finalize();
        fr_syncobj_finalize();
        fr_req_finalize();
        fr_shm_map_finalize();
        fr_seg_unlink_all(); /* segments stay mapped: the program may still use its memory */
        fr_active = 0;
        FR_LEAVE();
        PMPI_Comm_free(&fr_comm_self);
    }
    return FR_NEXT(Finalize)();
}
FR_PMPI(Finalize);

void *fr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fr_fatal("out of memory allocating %zu bytes", n);
    return p;
}

void *fr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fr_fatal("out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *fr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        fr_fatal("out of memory reallocating %zu bytes", n);
    return q;
}

void fr_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 8, bytes;
    while (n < need)
        if (fr_mul_size(n, 2, &n))
            fr_fatal("array of %zu elements overflows", need);
    if (fr_mul_size(n, elem, &bytes))
        fr_fatal("array of %zu x %zu bytes overflows", n, elem);
    *(void **)pp = fr_xrealloc(*(void **)pp, bytes);
    *cap = n;
}

void fr_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "flexrma: fatal: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    fr_seg_unlink_all(); /* the abort may kill us before MPI_Finalize would have */
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}
