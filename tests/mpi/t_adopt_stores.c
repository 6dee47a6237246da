/* t_adopt_stores.c - no store is lost while MPI_Win_create and MPI_Win_free move a window's
 * pages (node/page_hold.h, node/shm_seg.c).
 *
 * A second thread of each process stores into the window's memory from before MPI_Win_create
 * until after MPI_Win_free, as a legal program may (no epoch is open, and that thread makes no
 * MPI call): one 8-byte word at a time, at random pages and words, each store with a value of
 * its own, and every eighth store through read(2) from a pipe, so that the kernel writes it.
 * Afterwards the stores are replayed into a model of the memory and every word is compared:
 * a store that landed in the pages being moved out from under it would be missing.
 *
 * Windows from one page to 256 MiB, page aligned or not (part pages at the ends, which stay),
 * half their pages touched beforehand and half never, one of them across two chunks of the
 * move (64 MiB). Each create is checked to have adopted the pages (where this process may
 * hold pages at all; otherwise the stores must survive all the same), and a fence epoch in
 * between puts into word 0 of every page, which the storing thread leaves alone.
 *
 *   t_adopt_stores [--creates N]   N creates in all, cycling through the sizes (default: each
 *                                  size once)
 * Linked with the internal library: it reads fr_win.adopted. */
#include "common.h"
#include "node/page_hold.h"
#include "win/win.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t pg;

/* One window's memory: mapped whole, the window starting `skew` bytes in. */
typedef struct region {
    unsigned char *map;
    size_t map_bytes;
    uint64_t *words; /* the window's memory as words (skew is a multiple of 8) */
    size_t nwords;
} region;

/* The storing thread's sequence: store i goes to word loc(i) with value tag(i). */
typedef struct storer {
    const region *r;
    uint64_t seed;
    atomic_int stop;
    atomic_ulong done; /* stores made */
    int pipe[2];
    int failed_reads;
} storer;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Never word 0 of a page (the fence epoch's puts land there). */
static size_t loc(const storer *s, uint64_t i)
{
    for (uint64_t k = 0;; k++) {
        size_t w = (size_t)(mix(s->seed ^ (i * 0x9E3779B97F4A7C15ull) ^ k) % s->r->nwords);
        if (((uintptr_t)&s->r->words[w] & (pg - 1)) != 0)
            return w;
    }
}

static uint64_t tag(const storer *s, uint64_t i) { return mix(s->seed + i) | 1; }

static void *store_loop(void *arg)
{
    storer *s = arg;
    uint64_t i = 0;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        uint64_t *w = &s->r->words[loc(s, i)];
        uint64_t v = tag(s, i);
        if (i % 8 == 7) { /* the kernel writes this one, for read(2) */
            if (write(s->pipe[1], &v, sizeof v) != (ssize_t)sizeof v ||
                read(s->pipe[0], w, sizeof v) != (ssize_t)sizeof v)
                s->failed_reads++;
        } else {
            *(volatile uint64_t *)w = v;
        }
        atomic_store_explicit(&s->done, ++i, memory_order_release);
        if (i % 256 == 0)
            sched_yield(); /* 2 ranks and 2 storers share 2 cores here */
    }
    return NULL;
}

static void wait_stores(storer *s, unsigned long more)
{
    unsigned long until = atomic_load(&s->done) + more;
    while (atomic_load(&s->done) < until)
        sched_yield();
}

static uint64_t initial(size_t w, size_t touched_every)
{
    return (w * sizeof(uint64_t) / pg) % touched_every == 0 ? mix(w) : 0;
}

/* One create and free of a window of `bytes` bytes, `skew` bytes into its pages, with stores
 * all along. Returns 1 if every word is as the model says. */
static int one_window(size_t bytes, size_t skew, int c, int *adopted)
{
    region r;
    r.map_bytes = (skew + bytes + pg - 1) / pg * pg;
    r.map = mmap(NULL, r.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r.map == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    r.words = (uint64_t *)(r.map + skew);
    r.nwords = bytes / sizeof(uint64_t);
    /* every other page touched, the rest never */
    for (size_t w = 0; w < r.nwords; w++)
        if (initial(w, 2))
            r.words[w] = initial(w, 2);

    storer s = {.r = &r, .seed = mix((uint64_t)c * 131 + (uint64_t)rank)};
    if (pipe(s.pipe) != 0) {
        perror("pipe");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_t t;
    pthread_create(&t, NULL, store_loop, &s);
    wait_stores(&s, 1000);

    MPI_Win win;
    MPI_Win_create(r.words, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    *adopted = fr_win_lookup(win)->adopted.at != NULL;
    /* a put into word 0 of each of my right neighbour's pages that hold one */
    MPI_Win_fence(0, win);
    uint64_t mark = mix((uint64_t)c * 7 + (uint64_t)rank + 1);
    for (size_t w = 0; w < r.nwords; w++) /* the neighbour's layout is the same as mine */
        if ((((uintptr_t)&r.words[w]) & (pg - 1)) == 0)
            MPI_Put(&mark, 1, MPI_UINT64_T, right(), (MPI_Aint)(w * sizeof mark), 1,
                    MPI_UINT64_T, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);

    wait_stores(&s, 1000);
    atomic_store(&s.stop, 1);
    pthread_join(t, NULL);
    close(s.pipe[0]);
    close(s.pipe[1]);

    /* The model: the initial contents, the neighbour's marks, then every store in order. */
    uint64_t *model = malloc(r.nwords * sizeof *model);
    if (!model) {
        perror("malloc");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t left_mark = mix((uint64_t)c * 7 + (uint64_t)left() + 1);
    for (size_t w = 0; w < r.nwords; w++)
        model[w] = (((uintptr_t)&r.words[w]) & (pg - 1)) == 0 ? left_mark : initial(w, 2);
    unsigned long n = atomic_load(&s.done);
    for (uint64_t i = 0; i < n; i++)
        model[loc(&s, i)] = tag(&s, i);
    size_t bad = 0, first = 0;
    for (size_t w = 0; w < r.nwords; w++)
        if (r.words[w] != model[w] && !bad++)
            first = w;
    if (bad)
        diag("%zu of %lu stores lost or words wrong in a window of %zu bytes (+%zu); first at "
             "word %zu (page %zu): got %#llx, expected %#llx",
             bad, n, bytes, skew, first, (first * 8 + skew) / pg,
             (unsigned long long)r.words[first], (unsigned long long)model[first]);
    if (s.failed_reads)
        diag("%d stores through read(2) failed", s.failed_reads);
    free(model);
    munmap(r.map, r.map_bytes);
    return !bad && !s.failed_reads;
}

static const struct {
    size_t bytes, skew;
} sizes[] = {
    {4096, 0},                               /* one whole page */
    {4096, 8},                               /* no whole page: nothing moves */
    {64 << 10, 0},      {1 << 20, 24},       /* part pages at both ends */
    {16 << 20, 0},      {(64 << 20) + 4096, 0}, /* two chunks of the move */
    {256 << 20, 4088},
};
#define NSIZES (sizeof sizes / sizeof *sizes)

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    pg = (size_t)sysconf(_SC_PAGESIZE);
    int creates = (int)NSIZES;
    for (int a = 1; a + 1 < argc; a++)
        if (strcmp(argv[a], "--creates") == 0)
            creates = atoi(argv[a + 1]);
    const char *why;
    int can_adopt = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct &&
                    fr_adopt_enabled(&why);
    if (!can_adopt)
        diag("pages are not adopted here (%s): the stores must survive all the same",
             *why ? why : "switched off");
    tap_plan(creates);
    int lost_windows = 0;
    for (int c = 0; c < creates; c++) {
        size_t k = (size_t)c % NSIZES;
        int adopted = 0;
        int kept = one_window(sizes[k].bytes, sizes[k].skew, c, &adopted);
        size_t lo = (sizes[k].skew + pg - 1) / pg, hi = (sizes[k].skew + sizes[k].bytes) / pg;
        int whole_page = hi > lo;
        int adopted_ok = adopted == (can_adopt && whole_page);
        lost_windows += !kept;
        ok(kept && adopted_ok, "create %d: %zu bytes +%zu: %s, every store kept", c,
           sizes[k].bytes, sizes[k].skew,
           adopted ? "pages adopted" : (adopted_ok ? "not adopted" : "NOT ADOPTED"));
    }
    if (creates > (int)NSIZES)
        diag("%d creates, %d with a store lost", creates, lost_windows);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
