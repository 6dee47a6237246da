/* process.c - flexrma's process-wide state: the options read from the environment, whether
 * flexrma is in charge, and the engine lock. */
#include "fr.h"

#include <limits.h>
#include <pthread.h>
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
 * once in MPI_Init (api/init.c), before anything takes the lock or the agent starts. */
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

/* A whole number in [lo, hi]; unset or empty is 0, anything else is 0 with a warning that says
 * what was expected (`what`). */
static long env_ranged(const char *name, long lo, long hi, const char *what)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long k = strtol(v, &end, 10);
    if (*end == '\0' && k >= lo && k <= hi)
        return k;
    fprintf(stderr, "flexrma: %s=%s is not %s; ignored\n", name, v, what);
    return 0;
}

/* A comma-separated subset of allocate, shared, dynamic. */
static unsigned env_flavors(const char *name)
{
    static const struct {
        const char *name;
        unsigned bit;
    } flavors[] = {{"allocate", FR_FLAVOR_ALLOCATE}, {"shared", FR_FLAVOR_SHARED},
                   {"dynamic", FR_FLAVOR_DYNAMIC}};
    const char *v = getenv(name);
    unsigned bits = 0;
    while (v && *v) {
        size_t n = strcspn(v, ","), i = 0;
        while (i < sizeof flavors / sizeof *flavors &&
               !(strlen(flavors[i].name) == n && strncmp(v, flavors[i].name, n) == 0))
            i++;
        if (i < sizeof flavors / sizeof *flavors)
            bits |= flavors[i].bit;
        else if (n > 0)
            fprintf(stderr, "flexrma: %s: '%.*s' is not a window flavor (allocate, shared, "
                            "dynamic); ignored\n", name, (int)n, v);
        v += n + (v[n] == ',');
    }
    return bits;
}

void fr_options_read(void)
{
    fr_opt.disabled = env_flag("FLEXRMA_DISABLE");
    fr_opt.async_progress = env_flag("FLEXRMA_ASYNC_PROGRESS");
    fr_opt.stats = env_flag("FLEXRMA_STATS");
    fr_opt.eager_max = env_size("FLEXRMA_EAGER_MAX", 8192);
    fr_opt.fence_direct_max = (int)env_size("FLEXRMA_FENCE_DIRECT_MAX", 8);
    fr_opt.spin_polls = (unsigned)env_size("FLEXRMA_SPIN_POLLS", 32);
    fr_opt.transport = fr_opt.disabled ? FR_TRANSPORT_AUTO : env_transport("FLEXRMA_TRANSPORT");
    fr_opt.shm_ring = env_size("FLEXRMA_SHM_RING", 65536);
    fr_opt.shm_lazy = env_flag("FLEXRMA_SHM_LAZY");
    fr_opt.direct = (int)env_size("FLEXRMA_DIRECT", 1) != 0;
    size_t ask_wait_us = env_size("FLEXRMA_ASK_WAIT_US", 8);
    fr_opt.ask_wait_ns = 1000 * (uint64_t)(ask_wait_us > 1000000 ? 1000000 : ask_wait_us);
    size_t adopt = env_size("FLEXRMA_ADOPT", 1);
    if (adopt > 2)
        fprintf(stderr, "flexrma: FLEXRMA_ADOPT=%s is not 0, 1 or 2; using 1\n",
                getenv("FLEXRMA_ADOPT"));
    fr_opt.adopt = adopt > 2 ? 1 : (int)adopt;
    fr_opt.am_inbox = env_size("FLEXRMA_AM_INBOX", 16384);
    fr_opt.native_flavors = env_flavors("FLEXRMA_NATIVE_FLAVORS");
    size_t coll_shm = env_size("FLEXRMA_COLL_SHM", 64);
    fr_opt.coll_shm = coll_shm > INT_MAX ? INT_MAX : (unsigned)coll_shm;
    /* test switches: simulated nodes (at least 1), and the longest delay of a message in
     * microseconds (up to a second) */
    fr_opt.test_nodes = (int)env_ranged("FLEXRMA_TEST_NODES", 1, INT_MAX,
                                        "a number of nodes (1 or more)");
    fr_opt.test_jitter =
        fr_opt.disabled ? 0
                        : (unsigned)env_ranged("FLEXRMA_TEST_JITTER", 0, 1000000,
                                               "a delay in microseconds (0 to 1000000)");
    const char *seed = getenv("FLEXRMA_TEST_JITTER_SEED");
    fr_opt.test_jitter_seeded = seed && *seed;
    fr_opt.test_jitter_seed = fr_opt.test_jitter_seeded ? strtoull(seed, NULL, 0) : 0;
    fr_opt.test_no_move = env_flag("FLEXRMA_TEST_NO_MOVE");
    if (fr_opt.am_inbox < 64)
        fr_opt.am_inbox = 64;
    if (fr_opt.am_inbox > INT32_MAX)
        fr_opt.am_inbox = INT32_MAX;
}
