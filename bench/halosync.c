/* halosync.c - one code, every synchronization: a producer-consumer halo exchange and a 2-D
 * Jacobi iteration with halo rows, each run under fence, PSCW, lock_all with flush and a
 * message, flexrma's MPI_Sync counters, the MPI Forum draft's notified RMA, Open MPI's notified
 * RMA extension, and Isend/Irecv (the reference of the ratio column). Issue 34, item 5.
 *
 * The ranks form a periodic 1-D chain: direction 0 is the rank above (rank - 1), direction 1
 * the rank below (rank + 1); with 2 ranks both are the same process. A step is one exchange:
 * every rank sends one halo of n bytes to each neighbour, into that neighbour's ghost slot, and
 * may read its own ghost slots once the step returns.
 *
 *   halo    the exchange alone, as a producer-consumer pipeline (rows "SYNC/halo"); the send
 *           blocks carry stamps, checked after every timed loop.
 *   jacobi  every rank owns R rows (--rows) of a periodic grid n / 8 doubles wide; a step
 *           exchanges the edge rows (the halo is one row, n bytes) and then applies the 5-point
 *           Jacobi stencil, reading the neighbours' rows straight from the ghost slots (rows
 *           "SYNC/jacobi"). After every timed loop the grid's checksum (an exact 64-bit sum of
 *           mixed cell bit patterns) must equal that of the same number of steps computed with
 *           Isend/Irecv: a synchronization that lets a row be read early or overwritten late
 *           changes it, and the run fails without a row.
 *
 * The synchronizations (sync_kinds[]): every step writes one of two halves of the ghost area in
 * turn, so a neighbour that is one step ahead never overwrites what its consumer may still
 * read; two steps ahead it cannot get, because each step waits for the neighbours' data of that
 * step, which they send only after reading the previous one.
 *   isend      MPI_Irecv into the ghost slots, MPI_Isend, MPI_Waitall
 *   fence      one MPI_Win_fence per step (the epoch is opened before the loop)
 *   pscw       post, start, puts, complete, wait with the neighbours
 *   lockall    MPI-3: inside one MPI_Win_lock_all, put, MPI_Win_flush_all, then a zero-byte
 *              message to each neighbour; receiving both, and MPI_Win_sync, makes their data
 *              visible
 *   counter    flexrma's counters (NEC's proposal): puts under a sync-ops request per
 *              neighbour, whose completion bumps the neighbour's counter behind the data; a
 *              sync-object request waits for the neighbours' bumps (as ghost's counter)
 *   notify     the Forum draft: inside lock_all, MPI_Put_notify to notification index HALF;
 *              the consumer polls MPI_Win_notify_get_value until both have come and takes them
 *              with MPI_Win_notify_set_value; MPI_Win_flush_local_all then frees the origin rows
 *   mpix       Open MPI's extension on an MPIX_Win_create_notify window: MPIX_Put_notify with
 *              id HALF, one MPIX_Win_wait_notify per direction, MPI_Win_flush_local_all
 * The flexrma-only ones (counter, notify, mpix) are found at run time (dlsym: the program is
 * plain MPI, built with mpicc alone) and skipped natively, with a note on stderr; their ratios
 * are to the same run's Isend/Irecv. Every step ends with the origin rows free for reuse (the
 * Jacobi overwrites them two steps on), which the reference's MPI_Waitall gives too. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "common.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NDIRS 2
#define TAG_DATA 200   /* + the slot at the receiver */
#define TAG_NOTIFY 210 /* + the slot at the receiver */
#define DEFAULT_ROWS 16
#define MAX_REFS 8

enum kernel { HALO, JACOBI };
static const char *const kernel_name[] = {"halo", "jacobi"};

typedef struct halosync halosync;

/* One synchronization: its exchange, the epoch its timed loops run in, what it needs. */
enum epoch { NO_EPOCH, FENCE_EPOCH, LOCK_ALL_EPOCH };
enum needs { ANY_MPI, COUNTERS, FORUM_NOTIFY, MPIX_NOTIFY };
typedef struct sync_kind {
    const char *name;
    void (*exchange)(halosync *h);
    enum epoch epoch;
    enum needs needs;
} sync_kind;

/* Known Jacobi checksums: after `steps` steps at halo size n, computed with Isend/Irecv. */
typedef struct reference {
    size_t n;
    long steps;
    uint64_t sum;
} reference;

struct halosync {
    int rank, size;
    int nbr[NDIRS];       /* nbr[0] above, nbr[1] below; opposite(d) = d ^ 1 */
    int nd, distinct[NDIRS];
    MPI_Group nbr_group;  /* the distinct neighbours, for post/start */
    enum kernel kernel;
    size_t n, max;        /* halo bytes now; the largest, which sizes the slots */
    int half;             /* the half of the ghost area the latest step wrote */
    long steps;           /* steps since the timed loop began */
    uint64_t stamp;       /* halo: advanced by every timed loop, the same on every rank */
    unsigned char *sendbuf; /* halo: block d goes to nbr[d] */
    int rows;             /* jacobi: rows per rank */
    double *u, *unew;     /* jacobi: my rows, rows x (n / 8) */
    reference ref[MAX_REFS];
    int nref;
    /* the windows: [2 halves][NDIRS slots][max bytes] each; MPIX's made by
     * MPIX_Win_create_notify, used by the mpix synchronization only */
    bench_win w;
    MPI_Win xwin;
    unsigned char *xbase;
    MPI_Win win;            /* the current synchronization's window ... */
    unsigned char *ghosts;  /* ... and my ghost area in it */
    /* counter: my counter per half, a sync-ops request per half and distinct neighbour on
     * that neighbour's counter of the half, my sync-object request per half waiting for one
     * bump per distinct neighbour */
    MPI_Sync mine[2];
    MPI_Request ops[2][NDIRS], arrived[2];
};

/* flexrma's calls, found by name (the counters: bench_ctr, common.h). */
static struct {
    __typeof__(&MPI_Win_notify_set_num) notify_set_num;
    __typeof__(&MPI_Win_notify_get_value) notify_get_value;
    __typeof__(&MPI_Win_notify_set_value) notify_set_value;
    __typeof__(&MPI_Put_notify) put_notify;
    __typeof__(&MPIX_Win_create_notify) x_create;
    __typeof__(&MPIX_Put_notify) x_put_notify;
    __typeof__(&MPIX_Win_wait_notify) x_wait_notify;
} fx;

/* Which of COUNTERS, FORUM_NOTIFY, MPIX_NOTIFY every rank found (ANY_MPI always). */
static unsigned find_calls(void)
{
    *(void **)&fx.notify_set_num = dlsym(RTLD_DEFAULT, "MPI_Win_notify_set_num");
    *(void **)&fx.notify_get_value = dlsym(RTLD_DEFAULT, "MPI_Win_notify_get_value");
    *(void **)&fx.notify_set_value = dlsym(RTLD_DEFAULT, "MPI_Win_notify_set_value");
    *(void **)&fx.put_notify = dlsym(RTLD_DEFAULT, "MPI_Put_notify");
    *(void **)&fx.x_create = dlsym(RTLD_DEFAULT, "MPIX_Win_create_notify");
    *(void **)&fx.x_put_notify = dlsym(RTLD_DEFAULT, "MPIX_Put_notify");
    *(void **)&fx.x_wait_notify = dlsym(RTLD_DEFAULT, "MPIX_Win_wait_notify");
    int have[2] = {fx.notify_set_num && fx.notify_get_value && fx.notify_set_value &&
                       fx.put_notify,
                   fx.x_create && fx.x_put_notify && fx.x_wait_notify};
    MPI_Allreduce(MPI_IN_PLACE, have, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return 1u << ANY_MPI | (unsigned)bench_counters_find() << COUNTERS |
           (unsigned)have[0] << FORUM_NOTIFY | (unsigned)have[1] << MPIX_NOTIFY;
}

static int opposite(int d) { return d ^ 1; }

static MPI_Aint slot(const halosync *h, int half, int d)
{
    return (MPI_Aint)((size_t)(half * NDIRS + d) * h->max);
}

static size_t cols(const halosync *h) { return h->n / sizeof(double); }

/* What block d is: the halo kernel's stamped block, or the Jacobi's edge row (my first row goes
 * up, my last row down). */
static const void *origin(const halosync *h, int d)
{
    if (h->kernel == HALO)
        return h->sendbuf + (size_t)d * h->max;
    return h->u + (d == 0 ? 0 : (size_t)(h->rows - 1) * cols(h));
}

/* My block d lands in nbr[d]'s slot opposite(d): there, I am the neighbour in that direction. */
static void put_blocks(const halosync *h)
{
    for (int d = 0; d < NDIRS; d++)
        MPI_Put(origin(h, d), (int)h->n, MPI_BYTE, h->nbr[d], slot(h, h->half, opposite(d)),
                (int)h->n, MPI_BYTE, h->win);
}

/* ---- the exchanges ---- */

/* The reference. The tag is the slot at the receiver, which tells the two blocks apart when
 * both neighbours are one process. */
static void exchange_isend(halosync *h)
{
    MPI_Request req[2 * NDIRS];
    for (int d = 0; d < NDIRS; d++)
        MPI_Irecv(h->ghosts + slot(h, h->half, d), (int)h->n, MPI_BYTE, h->nbr[d], TAG_DATA + d,
                  MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < NDIRS; d++)
        MPI_Isend(origin(h, d), (int)h->n, MPI_BYTE, h->nbr[d], TAG_DATA + opposite(d),
                  MPI_COMM_WORLD, &req[NDIRS + d]);
    MPI_Waitall(2 * NDIRS, req, MPI_STATUSES_IGNORE);
}

/* One fence per step: it completes this step's puts everywhere and starts the next epoch. A
 * neighbour's next puts go to the other half, so my reads until my next fence are safe. */
static void exchange_fence(halosync *h)
{
    put_blocks(h);
    MPI_Win_fence(0, h->win);
}

/* Post comes before the puts of this step and after my reads of the last one. */
static void exchange_pscw(halosync *h)
{
    MPI_Win_post(h->nbr_group, 0, h->win);
    MPI_Win_start(h->nbr_group, 0, h->win);
    put_blocks(h);
    MPI_Win_complete(h->win);
    MPI_Win_wait(h->win);
}

/* MPI-3 passive target as a program must write it to let the consumer know: the flush makes
 * the puts complete at the targets, the message (posted first, never unexpected) says so, and
 * MPI_Win_sync orders my loads after the neighbours' puts (MPI-3 11.7, the unified model's
 * example). */
static void exchange_lockall(halosync *h)
{
    MPI_Request req[2 * NDIRS];
    for (int d = 0; d < NDIRS; d++)
        MPI_Irecv(NULL, 0, MPI_BYTE, h->nbr[d], TAG_NOTIFY + d, MPI_COMM_WORLD, &req[d]);
    put_blocks(h);
    MPI_Win_flush_all(h->win);
    for (int d = 0; d < NDIRS; d++)
        MPI_Isend(NULL, 0, MPI_BYTE, h->nbr[d], TAG_NOTIFY + opposite(d), MPI_COMM_WORLD,
                  &req[NDIRS + d]);
    MPI_Waitall(2 * NDIRS, req, MPI_STATUSES_IGNORE);
    MPI_Win_sync(h->win);
}

/* The counters: each sync-ops request's completion sends its bump behind my puts to that
 * neighbour; my sync-object request completes once every distinct neighbour's bump came. A
 * counter per half, as the notification index per half below: with one counter, a neighbour
 * one step ahead could bump it twice while the other neighbour's data had not come yet. */
static void exchange_counter(halosync *h)
{
    MPI_Start(&h->arrived[h->half]);
    MPI_Startall(h->nd, h->ops[h->half]);
    put_blocks(h);
    MPI_Waitall(h->nd, h->ops[h->half], MPI_STATUSES_IGNORE);
    MPI_Wait(&h->arrived[h->half], MPI_STATUS_IGNORE);
}

/* The Forum draft: notification index = the half, so a neighbour one step ahead counts in the
 * other index. Both directions' notifications are taken at once (set_value(v - NDIRS)). */
static void exchange_notify(halosync *h)
{
    for (int d = 0; d < NDIRS; d++)
        fx.put_notify(origin(h, d), (int)h->n, MPI_BYTE, h->nbr[d],
                      slot(h, h->half, opposite(d)), (int)h->n, MPI_BYTE, h->half, h->win);
    MPI_Count v = 0;
    while (v < NDIRS)
        fx.notify_get_value(h->win, h->half, &v);
    fx.notify_set_value(h->win, h->half, v - NDIRS);
    MPI_Win_flush_local_all(h->win);
}

/* Open MPI's extension: id = the half; each wait takes one notification. */
static void exchange_mpix(halosync *h)
{
    for (int d = 0; d < NDIRS; d++)
        fx.x_put_notify(origin(h, d), (int)h->n, MPI_BYTE, h->nbr[d],
                        slot(h, h->half, opposite(d)), (int)h->n, MPI_BYTE, h->win, h->half);
    for (int d = 0; d < NDIRS; d++)
        fx.x_wait_notify(h->win, h->half);
    MPI_Win_flush_local_all(h->win);
}

/* The reference must stay first (the ratio column divides by it). */
static const sync_kind sync_kinds[] = {
    {"isend", exchange_isend, NO_EPOCH, ANY_MPI},
    {"fence", exchange_fence, FENCE_EPOCH, ANY_MPI},
    {"pscw", exchange_pscw, NO_EPOCH, ANY_MPI},
    {"lockall", exchange_lockall, LOCK_ALL_EPOCH, ANY_MPI},
    {"counter", exchange_counter, NO_EPOCH, COUNTERS},
    {"notify", exchange_notify, LOCK_ALL_EPOCH, FORUM_NOTIFY},
    {"mpix", exchange_mpix, LOCK_ALL_EPOCH, MPIX_NOTIFY},
};
#define NKINDS ((int)(sizeof sync_kinds / sizeof sync_kinds[0]))

/* ---- the Jacobi grid ---- */

static double initial(long row, size_t col)
{
    return (double)((row * 7919 + (long)col * 104729) % 1000) / 1000;
}

static void jacobi_init(halosync *h)
{
    for (int i = 0; i < h->rows; i++)
        for (size_t j = 0; j < cols(h); j++)
            h->u[(size_t)i * cols(h) + j] = initial((long)h->rank * h->rows + i, j);
}

/* The 5-point stencil over my rows, periodic in both directions; the rows beyond my first and
 * last are the ghost slots the latest step filled. */
static void jacobi_sweep(halosync *h)
{
    const size_t c = cols(h);
    const double *above = (const double *)(h->ghosts + slot(h, h->half, 0));
    const double *below = (const double *)(h->ghosts + slot(h, h->half, 1));
    for (int i = 0; i < h->rows; i++) {
        const double *up = i == 0 ? above : h->u + (size_t)(i - 1) * c;
        const double *down = i == h->rows - 1 ? below : h->u + (size_t)(i + 1) * c;
        const double *row = h->u + (size_t)i * c;
        double *out = h->unew + (size_t)i * c;
        /* the periodic ends apart, so that the inner loop has no division */
        out[0] = 0.25 * (up[0] + down[0] + row[c - 1] + row[c > 1 ? 1 : 0]);
        for (size_t j = 1; j + 1 < c; j++)
            out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
        if (c > 1)
            out[c - 1] = 0.25 * (up[c - 1] + down[c - 1] + row[c - 2] + row[0]);
    }
    double *t = h->u;
    h->u = h->unew;
    h->unew = t;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The whole grid's checksum, the same on every rank: a sum (exact, in any order) of each cell's
 * bit pattern mixed with its place. Any cell off by one bit changes it. */
static uint64_t jacobi_checksum(const halosync *h)
{
    uint64_t sum = 0;
    for (int i = 0; i < h->rows; i++)
        for (size_t j = 0; j < cols(h); j++) {
            uint64_t bits;
            memcpy(&bits, &h->u[(size_t)i * cols(h) + j], sizeof bits);
            uint64_t place = ((uint64_t)h->rank * (uint64_t)h->rows + (uint64_t)i) << 32 | j;
            sum += mix(bits ^ mix(place));
        }
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

/* The checksum after `steps` steps with Isend/Irecv at this size (collective): computed once,
 * on the window's memory as the timed loops use it, then remembered. */
static uint64_t jacobi_reference(halosync *h, long steps)
{
    for (int k = 0; k < h->nref; k++)
        if (h->ref[k].n == h->n && h->ref[k].steps == steps)
            return h->ref[k].sum;
    unsigned char *ghosts = h->ghosts;
    h->ghosts = h->w.base;
    h->half = 0;
    jacobi_init(h);
    for (long s = 0; s < steps; s++) {
        h->half ^= 1;
        exchange_isend(h);
        jacobi_sweep(h);
    }
    uint64_t sum = jacobi_checksum(h);
    h->ghosts = ghosts;
    reference *r = &h->ref[h->nref < MAX_REFS ? h->nref++ : MAX_REFS - 1];
    *r = (reference){h->n, steps, sum};
    return sum;
}

/* ---- the timed loop's callbacks (bench_measure_each: the variant's arg is its sync_kind) ---- */

static void step(void *p)
{
    halosync *h = p;
    const sync_kind *s = bench_variant_arg();
    h->half ^= 1;
    s->exchange(h);
    if (h->kernel == JACOBI)
        jacobi_sweep(h);
    h->steps++;
}

static uint64_t stamp_of(const halosync *h, int r, int d)
{
    return h->stamp << 32 | (uint64_t)r << 8 | (uint64_t)d;
}

static void begin(void *p)
{
    halosync *h = p;
    const sync_kind *s = bench_variant_arg();
    int mpix = s->needs == MPIX_NOTIFY;
    h->win = mpix ? h->xwin : h->w.win;
    h->ghosts = mpix ? h->xbase : h->w.base;
    h->half = 0;
    h->steps = 0;
    if (h->kernel == JACOBI) {
        jacobi_init(h);
    } else {
        h->stamp++;
        for (int d = 0; d < NDIRS; d++)
            bench_stamp(h->sendbuf + (size_t)d * h->max, h->n, stamp_of(h, h->rank, d));
    }
    if (s->epoch == FENCE_EPOCH)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, h->win);
    else if (s->epoch == LOCK_ALL_EPOCH)
        MPI_Win_lock_all(0, h->win);
}

/* Wrong results on this rank: ghost stamps (halo), or the checksum (jacobi, rank 0 counts). */
static int end(void *p)
{
    halosync *h = p;
    const sync_kind *s = bench_variant_arg();
    if (s->epoch == FENCE_EPOCH)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, h->win);
    else if (s->epoch == LOCK_ALL_EPOCH)
        MPI_Win_unlock_all(h->win);
    if (h->kernel == HALO) {
        int wrong = 0;
        for (int d = 0; d < NDIRS; d++)
            wrong += bench_stamp_wrong(h->ghosts + slot(h, h->half, d), h->n,
                                       stamp_of(h, h->nbr[d], opposite(d)));
        return wrong;
    }
    long steps = h->steps;
    uint64_t got = jacobi_checksum(h);
    uint64_t want = jacobi_reference(h, steps);
    if (got != want && h->rank == 0)
        fprintf(stderr, "halosync: %s/jacobi at %zu bytes, %ld steps: checksum %016llx, "
                        "Isend/Irecv's %016llx\n",
                s->name, h->n, steps, (unsigned long long)got, (unsigned long long)want);
    return got != want && h->rank == 0;
}

/* ---- set-up ---- */

typedef struct own_opts {
    int rows;
    unsigned kernels; /* 1 << HALO | 1 << JACOBI */
} own_opts;

static void own_fail(const char *opt, const char *val)
{
    fprintf(stderr, "halosync: bad value '%s' for %s\n"
                    "  own options: --rows R (Jacobi rows per rank, default %d),\n"
                    "               --kernels halo,jacobi (default both)\n",
                    val ? val : "", opt, DEFAULT_ROWS);
    exit(2);
}

/* Takes this program's options out of argv, before bench_init parses the common ones. */
static void own_options(int *argc, char **argv, own_opts *oo)
{
    oo->rows = DEFAULT_ROWS;
    oo->kernels = 1u << HALO | 1u << JACOBI;
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *opt = argv[i], *val = i + 1 < *argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--rows") == 0) {
            char *e;
            long r = val ? strtol(val, &e, 10) : 0;
            if (!val || *e || r < 1 || r > 1 << 20)
                own_fail(opt, val);
            oo->rows = (int)r;
            i++;
        } else if (strcmp(opt, "--kernels") == 0) {
            oo->kernels = 0;
            char buf[64];
            if (!val || strlen(val) >= sizeof buf)
                own_fail(opt, val);
            strcpy(buf, val);
            for (char *sv, *w = strtok_r(buf, ",", &sv); w; w = strtok_r(NULL, ",", &sv))
                if (strcmp(w, "halo") == 0)
                    oo->kernels |= 1u << HALO;
                else if (strcmp(w, "jacobi") == 0)
                    oo->kernels |= 1u << JACOBI;
                else
                    own_fail(opt, val);
            if (!oo->kernels)
                own_fail(opt, val);
            i++;
        } else {
            argv[n++] = argv[i]; /* a common option (and its value, next): bench_init's */
        }
    }
    argv[n] = NULL;
    *argc = n;
}

/* The counters' requests and the notification counters, on the windows (collective). */
static void extensions_setup(halosync *h, unsigned have)
{
    if (have & 1u << COUNTERS) {
        MPI_Sync *all = malloc(bench_mul((size_t)h->size, 2 * sizeof *all));
        if (!all)
            bench_die("out of memory");
        if (bench_ctr.alloc_objects(2, h->mine, h->w.win, MPI_INFO_NULL) != MPI_SUCCESS)
            bench_die("MPI_Win_Sync_alloc_objects failed");
        MPI_Allgather(h->mine, 2, *bench_ctr.handle_sync, all, 2, *bench_ctr.handle_sync,
                      MPI_COMM_WORLD);
        for (int half = 0; half < 2; half++) {
            for (int k = 0; k < h->nd; k++)
                if (bench_ctr.ops_init(h->distinct[k], MPI_MODE_WIN_PUT,
                                       all[2 * h->distinct[k] + half], h->w.win, MPI_INFO_NULL,
                                       &h->ops[half][k]) != MPI_SUCCESS)
                    bench_die("MPI_Win_sync_ops_init failed");
            bench_ctr.object_init(h->mine[half], h->nd, h->w.win, MPI_INFO_NULL,
                                  &h->arrived[half]);
        }
        free(all);
    }
    if (have & 1u << FORUM_NOTIFY)
        fx.notify_set_num(h->w.win, MPI_INFO_NULL, 2); /* one index per half */
    if (have & 1u << MPIX_NOTIFY) {
        size_t bytes = bench_mul(2 * NDIRS, h->max);
        h->xbase = bench_alloc(BENCH_MEM_ALLOC_MEM, bytes);
        fx.x_create(h->xbase, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &h->xwin);
    }
}

static void extensions_teardown(halosync *h, unsigned have)
{
    MPI_Barrier(MPI_COMM_WORLD); /* nobody bumps my counter or reaches my windows any more */
    if (have & 1u << COUNTERS) {
        for (int half = 0; half < 2; half++) {
            for (int k = 0; k < h->nd; k++)
                MPI_Request_free(&h->ops[half][k]);
            MPI_Request_free(&h->arrived[half]);
        }
        bench_ctr.free_objects(2, h->mine, h->w.win);
    }
    if (have & 1u << MPIX_NOTIFY) {
        MPI_Win_free(&h->xwin);
        bench_free(BENCH_MEM_ALLOC_MEM, h->xbase);
    }
}

int main(int argc, char **argv)
{
    own_opts oo;
    own_options(&argc, argv, &oo);
    bench_opts o;
    bench_init(&argc, &argv, "halosync", "8,64,1K,16K,64K", &o);
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_CREATE);
    if (o.size < 2)
        bench_die("needs at least 2 ranks");
    halosync h = {.rank = o.rank, .size = o.size, .rows = oo.rows};
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] < sizeof(double) || o.sizes[i] % sizeof(double))
            bench_die("--sizes: halos of whole doubles (multiples of 8 bytes)");
        h.max = o.sizes[i] > h.max ? o.sizes[i] : h.max;
    }

    unsigned have = find_calls();
    const sync_kind *args[NKINDS];
    bench_variant v[NKINDS];
    int nv = 0;
    for (int k = 0; k < NKINDS; k++) {
        if (have & 1u << sync_kinds[k].needs) {
            args[nv] = &sync_kinds[k];
            v[nv++] = (bench_variant){sync_kinds[k].name, step, begin, end};
        } else if (o.rank == 0) {
            fprintf(stderr, "halosync: %s skipped: this MPI has no %s\n", sync_kinds[k].name,
                    sync_kinds[k].needs == COUNTERS       ? "MPI_Sync counters"
                    : sync_kinds[k].needs == FORUM_NOTIFY ? "MPI_Put_notify"
                                                          : "MPIX_Put_notify");
        }
    }
    int ops[NKINDS];
    for (int k = 0; k < nv; k++)
        ops[k] = 1;

    h.nbr[0] = (o.rank + o.size - 1) % o.size;
    h.nbr[1] = (o.rank + 1) % o.size;
    h.distinct[h.nd++] = h.nbr[0];
    if (h.nbr[1] != h.nbr[0])
        h.distinct[h.nd++] = h.nbr[1];
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, h.nd, h.distinct, &h.nbr_group);
    MPI_Group_free(&world);

    size_t grid = bench_mul((size_t)h.rows, h.max);
    h.sendbuf = bench_alloc(BENCH_MEM_MALLOC, bench_mul(NDIRS, h.max));
    h.u = bench_alloc(BENCH_MEM_MALLOC, grid);
    h.unew = bench_alloc(BENCH_MEM_MALLOC, grid);
    bench_win_make(&h.w, BENCH_FLAVOR_CREATE, bench_mul(2 * NDIRS, h.max));
    extensions_setup(&h, have);

    for (int kn = HALO; kn <= JACOBI; kn++) {
        if (!(oo.kernels & 1u << kn))
            continue;
        h.kernel = kn;
        for (int i = 0; i < o.nsizes; i++) {
            h.n = o.sizes[i];
            bench_measure_each(&o, v, nv, 0, &h, kernel_name[kn], h.n, bench_iters(&o, h.n),
                               ops, (const void *const *)args);
            if (kn == JACOBI && o.rank == 0 && h.nref > 0)
                fprintf(stderr, "halosync: jacobi %d x %zu per rank, %zu bytes a row: every "
                                "synchronization's checksum checked against Isend/Irecv's "
                                "(%ld steps: %016llx)\n",
                        h.rows, cols(&h), h.n, h.ref[h.nref - 1].steps,
                        (unsigned long long)h.ref[h.nref - 1].sum);
        }
    }

    extensions_teardown(&h, have);
    bench_win_free(&h.w);
    bench_free(BENCH_MEM_MALLOC, h.unew);
    bench_free(BENCH_MEM_MALLOC, h.u);
    bench_free(BENCH_MEM_MALLOC, h.sendbuf);
    MPI_Group_free(&h.nbr_group);
    return bench_finish();
}
