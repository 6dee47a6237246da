/* common.c - options, buffers, the interleaved timing loop and CSV rows (see common.h). */
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT */
#include "common.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *const bench_mem_name[] = {"alloc_mem", "malloc"};
const char *const bench_topo_name[] = {"ring", "grid"};
const char *const bench_flavor_name[] = {"create", "allocate", "dynamic", "shared", "malloc"};

static const char *program_name = "bench";
static int world_rank;
static int wrong_results; /* set when a variant failed its check: the exit status says so */

void bench_die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: ", program_name, world_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2); /* not reached */
}

size_t bench_mul(size_t a, size_t b)
{
    if (b != 0 && a > SIZE_MAX / b)
        bench_die("buffer size overflow (%zu * %zu)", a, b);
    return a * b;
}

static void usage(void)
{
    if (world_rank == 0)
        fprintf(stderr,
                "usage: %s [--impl native|flexrma] [--transport LABEL] [--iters N] [--reps R]\n"
                "       [--warmup W] [--sizes LIST] [--nbrs LIST] [--mem LIST] [--topo LIST]\n"
                "       [--blocks K] [--flavor LIST]\n"
                "  --impl, --transport  labels of the CSV rows; --impl must match the library\n"
                "                       that provides MPI_Put (libflexrma when preloaded)\n"
                "  --iters N   timed steps per repetition up to 16 KiB (fewer above)\n"
                "  --reps R    repetitions; rows report medians over them\n"
                "  --warmup W  untimed steps per variant first (default iters/10)\n"
                "  --sizes     bytes, comma-separated, K/M suffixes: 8,1K,1M\n"
                "  --nbrs      neighbour counts, 'p' for all ranks: 1,p\n"
                "  --mem       window memory: alloc_mem,malloc\n"
                "  --topo      ghost exchange topologies: ring,grid\n"
                "  --blocks K  puts per epoch (bandwidth); windows made at once (scale)\n"
                "  --flavor    windows: create (MPI_Alloc_mem memory), allocate, dynamic,\n"
                "              shared, malloc (MPI_Win_create over posix_memalign'ed pages)\n"
                "              (what the program supports; default create)\n"
                "Prints CSV rows: program,variant,implementation,transport,ranks,bytes,"
                "median_us,ratio_to_pt2pt\n",
                program_name);
}

static void bad_option(const char *opt, const char *value)
{
    if (world_rank == 0)
        fprintf(stderr, "%s: bad value '%s' for %s\n", program_name, value ? value : "", opt);
    usage();
    MPI_Finalize();
    exit(2);
}

/* "64K" -> 65536; SIZE_MAX on a malformed number or one above 1 GiB. */
static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *s == '-' || v > (1ull << 30))
        return SIZE_MAX;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end == '\0' && v <= (1ull << 30) ? (size_t)v : SIZE_MAX;
}

/* Split a comma-separated list; each word goes through parse, which returns -1 when invalid. */
static int parse_list(const char *opt, const char *value, int (*parse)(const char *), int *out)
{
    char buf[512];
    int n = 0;
    if (!value || strlen(value) >= sizeof buf)
        bad_option(opt, value);
    strcpy(buf, value);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int x = parse(w);
        if (x < 0 || n == BENCH_MAX_LIST)
            bad_option(opt, value);
        out[n++] = x;
    }
    if (n == 0)
        bad_option(opt, value);
    return n;
}

static int parse_nbrs_word(const char *w)
{
    if (strcmp(w, "p") == 0)
        return 0;
    int x = atoi(w);
    return x > 0 ? x : -1;
}

static int parse_name(const char *w, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(w, names[i]) == 0)
            return i;
    return -1;
}
static int parse_mem_word(const char *w) { return parse_name(w, bench_mem_name, 2); }
static int parse_topo_word(const char *w) { return parse_name(w, bench_topo_name, 2); }
static int parse_flavor_word(const char *w)
{
    return parse_name(w, bench_flavor_name, BENCH_NFLAVOR);
}

static void parse_sizes(bench_opts *o, const char *value)
{
    char buf[512];
    o->nsizes = 0;
    if (!value || strlen(value) >= sizeof buf)
        bad_option("--sizes", value);
    strcpy(buf, value);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        size_t s = parse_size(w);
        if (s == SIZE_MAX || o->nsizes == BENCH_MAX_LIST)
            bad_option("--sizes", value);
        o->sizes[o->nsizes++] = s;
    }
    if (o->nsizes == 0)
        bad_option("--sizes", value);
}

static int parse_count(const char *opt, const char *value, int min)
{
    char *end;
    long v = value ? strtol(value, &end, 10) : 0;
    if (!value || *end != '\0' || v < min || v > 100000000)
        bad_option(opt, value);
    return (int)v;
}

/* The label must not lie: --impl flexrma only when MPI_Put resolves to libflexrma (preloaded
 * or linked first), --impl native only when it does not. */
static void check_impl(const char *impl)
{
    void *sym = dlsym(RTLD_DEFAULT, "MPI_Put");
    Dl_info info;
    const char *lib = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
    int flexrma = strstr(lib, "libflexrma") != NULL;
    if (strcmp(impl, "flexrma") == 0 ? !flexrma : strcmp(impl, "native") == 0 ? flexrma : 1)
        bench_die("--impl %s, but MPI_Put comes from %s", impl, lib);
}

void bench_init(int *argc, char ***argv, const char *program, const char *default_sizes,
                bench_opts *o)
{
    MPI_Init(argc, argv);
    program_name = program;
    memset(o, 0, sizeof *o);
    o->program = program;
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->size);
    world_rank = o->rank;
    o->impl = "native";
    o->transport = "-";
    o->iters = 200;
    o->reps = 9;
    o->warmup = -1;
    o->blocks = 16;
    parse_sizes(o, default_sizes);
    o->nnbrs = parse_list("--nbrs", "1,p", parse_nbrs_word, o->nbrs);
    o->nmem = parse_list("--mem", "alloc_mem,malloc", parse_mem_word, o->mem);
    o->ntopo = parse_list("--topo", "ring,grid", parse_topo_word, o->topo);
    o->nflavor = parse_list("--flavor", "create", parse_flavor_word, o->flavor);

    char **av = *argv;
    for (int i = 1; i < *argc; i++) {
        const char *opt = av[i], *val = i + 1 < *argc ? av[i + 1] : NULL;
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            MPI_Finalize();
            exit(0);
        }
        if (!val)
            bad_option(opt, NULL);
        i++;
        if (strcmp(opt, "--impl") == 0)
            o->impl = val;
        else if (strcmp(opt, "--transport") == 0)
            o->transport = val;
        else if (strcmp(opt, "--iters") == 0)
            o->iters = parse_count(opt, val, 1);
        else if (strcmp(opt, "--reps") == 0)
            o->reps = parse_count(opt, val, 1);
        else if (strcmp(opt, "--warmup") == 0)
            o->warmup = parse_count(opt, val, 0);
        else if (strcmp(opt, "--blocks") == 0)
            o->blocks = parse_count(opt, val, 1);
        else if (strcmp(opt, "--sizes") == 0)
            parse_sizes(o, val);
        else if (strcmp(opt, "--nbrs") == 0)
            o->nnbrs = parse_list(opt, val, parse_nbrs_word, o->nbrs);
        else if (strcmp(opt, "--mem") == 0)
            o->nmem = parse_list(opt, val, parse_mem_word, o->mem);
        else if (strcmp(opt, "--topo") == 0)
            o->ntopo = parse_list(opt, val, parse_topo_word, o->topo);
        else if (strcmp(opt, "--flavor") == 0)
            o->nflavor = parse_list(opt, val, parse_flavor_word, o->flavor);
        else
            bad_option(opt, val);
    }
    if (o->warmup < 0)
        o->warmup = o->iters / 10 > 2 ? o->iters / 10 : 2;
    check_impl(o->impl);
}

int bench_finish(void)
{
    MPI_Finalize();
    return wrong_results ? 1 : 0;
}

int bench_iters(const bench_opts *o, size_t bytes)
{
    const size_t knee = 16384;
    int n = o->iters;
    if (bytes > knee) {
        size_t scaled = (size_t)o->iters * knee / bytes;
        int floor = o->iters / 25 > 3 ? o->iters / 25 : 3;
        n = scaled < (size_t)floor ? floor : (int)scaled;
    }
    return n < o->iters ? n : o->iters;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n, double *scratch)
{
    memcpy(scratch, v, (size_t)n * sizeof *v);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

void bench_row(const bench_opts *o, const char *name, size_t bytes, const double *t,
               const double *ref, int reps, double *ratio, double *scratch)
{
    char ratio_text[32] = "";
    if (ref) {
        for (int r = 0; r < reps; r++)
            ratio[r] = t[r] / ref[r];
        snprintf(ratio_text, sizeof ratio_text, "%.4f", bench_median(ratio, reps, scratch));
    }
    printf("%s,%s,%s,%s,%d,%zu,%.3f,%s\n", o->program, name, o->impl, o->transport, o->size,
           bytes, bench_median(t, reps, scratch), ratio_text);
}

static const void *current_arg; /* the arg of the variant whose loop runs */

const void *bench_variant_arg(void) { return current_arg; }

double bench_loop(const bench_variant *v, const void *arg, void *ctx, int iters, int *errors)
{
    current_arg = arg;
    if (v->begin)
        v->begin(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        v->step(ctx);
    double t = MPI_Wtime() - t0;
    if (v->end)
        *errors += v->end(ctx);
    current_arg = NULL;
    return t * 1e6 / iters;
}

void bench_measure(const bench_opts *o, const bench_variant *v, int nv, int ref, void *ctx,
                   const char *suffix, size_t bytes, int iters, int ops)
{
    int *each = malloc(bench_mul((size_t)nv, sizeof *each));
    if (!each)
        bench_die("out of memory");
    for (int k = 0; k < nv; k++)
        each[k] = ops;
    bench_measure_each(o, v, nv, ref, ctx, suffix, bytes, iters, each, NULL);
    free(each);
}

void bench_measure_each(const bench_opts *o, const bench_variant *v, int nv, int ref, void *ctx,
                        const char *suffix, size_t bytes, int iters, const int *ops,
                        const void *const *args)
{
    int reps = o->reps;
    double *t = malloc(bench_mul(bench_mul((size_t)nv, (size_t)reps), sizeof *t));
    double *ratio = malloc(bench_mul((size_t)reps, sizeof *ratio));
    double *scratch = malloc(bench_mul((size_t)reps, sizeof *scratch));
    int *errors = calloc((size_t)nv, sizeof *errors);
    if (!t || !ratio || !scratch || !errors)
        bench_die("out of memory");

    for (int k = 0; k < nv; k++)
        if (o->warmup > 0)
            bench_loop(&v[k], args ? args[k] : NULL, ctx, o->warmup, &errors[k]);
    /* Interleave: every repetition runs every variant, starting one further each time, so that
     * no variant always follows the same one (caches, the other jobs on the machine). */
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nv; j++) {
            int k = (j + r) % nv;
            double mine = bench_loop(&v[k], args ? args[k] : NULL, ctx, iters, &errors[k]) /
                          ops[k];
            MPI_Allreduce(&mine, &t[k * reps + r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
    MPI_Allreduce(MPI_IN_PLACE, errors, nv, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    for (int k = 0; k < nv && o->rank == 0; k++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s%s", v[k].name, suffix && *suffix ? "/" : "",
                 suffix ? suffix : "");
        if (errors[k]) {
            /* Never report a time for a step that did not do its job. */
            fprintf(stderr, "%s: %s at %zu bytes: %d WRONG results, no row written\n",
                    o->program, name, bytes, errors[k]);
            wrong_results = 1;
            continue;
        }
        bench_row(o, name, bytes, &t[k * reps], ref >= 0 && !errors[ref] ? &t[ref * reps] : NULL,
                  reps, ratio, scratch);
    }
    if (o->rank == 0)
        fflush(stdout);
    MPI_Bcast(&wrong_results, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(errors);
    free(scratch);
    free(ratio);
    free(t);
}

void *bench_alloc(int mem, size_t bytes)
{
    void *p = NULL;
    size_t n = bytes ? bytes : 1;
    if (mem == BENCH_MEM_ALLOC_MEM) {
        if (MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p) != MPI_SUCCESS)
            p = NULL;
    } else if (posix_memalign(&p, 64, n) != 0) { /* 64-byte aligned, as MPI_Alloc_mem's */
        p = NULL;
    }
    if (!p)
        bench_die("cannot allocate %zu bytes (%s)", n, bench_mem_name[mem]);
    memset(p, 0, n);
    return p;
}

void bench_free(int mem, void *p)
{
    if (mem == BENCH_MEM_ALLOC_MEM)
        MPI_Free_mem(p);
    else
        free(p);
}

void bench_flavors_allowed(const bench_opts *o, unsigned mask)
{
    for (int i = 0; i < o->nflavor; i++)
        if (!(mask & 1u << o->flavor[i])) {
            if (o->rank == 0)
                fprintf(stderr, "%s: --flavor %s: this program makes no such windows\n",
                        o->program, bench_flavor_name[o->flavor[i]]);
            MPI_Finalize();
            exit(2);
        }
}

int bench_neighbours(int topo, int rank, int size, int nbr[BENCH_MAX_DIRS])
{
    if (topo == BENCH_TOPO_RING) {
        nbr[0] = (rank + size - 1) % size;
        nbr[1] = (rank + 1) % size;
        return 2;
    }
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    if (dims[0] < 2 || dims[1] < 2)
        return 0;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart); /* no reorder: same ranks */
    MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
    MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);
    MPI_Comm_free(&cart);
    return 4;
}

bench_counter_calls bench_ctr;

int bench_counters_find(void)
{
    *(void **)&bench_ctr.alloc_objects = dlsym(RTLD_DEFAULT, "MPI_Win_Sync_alloc_objects");
    *(void **)&bench_ctr.free_objects = dlsym(RTLD_DEFAULT, "MPI_Win_Sync_free_objects");
    *(void **)&bench_ctr.ops_init = dlsym(RTLD_DEFAULT, "MPI_Win_sync_ops_init");
    *(void **)&bench_ctr.object_init = dlsym(RTLD_DEFAULT, "MPI_Win_sync_object_init");
    bench_ctr.handle_sync = dlsym(RTLD_DEFAULT, "MPI_Handle_sync");
    int found = bench_ctr.alloc_objects && bench_ctr.free_objects && bench_ctr.ops_init &&
                bench_ctr.object_init && bench_ctr.handle_sync;
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return found;
}

void bench_counters_setup(MPI_Win win, int size, const int *targets, int nd, MPI_Sync *mine,
                          MPI_Request *ops, MPI_Sync *all)
{
    MPI_Sync *every = all ? all : malloc(bench_mul((size_t)size, sizeof *every));
    if (!every)
        bench_die("out of memory");
    if (bench_ctr.alloc_objects(1, mine, win, MPI_INFO_NULL) != MPI_SUCCESS)
        bench_die("MPI_Win_Sync_alloc_objects failed");
    MPI_Allgather(mine, 1, *bench_ctr.handle_sync, every, 1, *bench_ctr.handle_sync,
                  MPI_COMM_WORLD);
    for (int k = 0; k < nd; k++)
        if (bench_ctr.ops_init(targets[k], MPI_MODE_WIN_PUT, every[targets[k]], win,
                               MPI_INFO_NULL, &ops[k]) != MPI_SUCCESS)
            bench_die("MPI_Win_sync_ops_init failed");
    if (!all)
        free(every);
}

void bench_win_make(bench_win *w, int flavor, size_t bytes)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    w->flavor = flavor;
    w->bytes = bytes;
    w->disp = calloc((size_t)size, sizeof *w->disp);
    if (!w->disp)
        bench_die("out of memory");
    void *base = NULL;
    switch (flavor) {
    case BENCH_FLAVOR_CREATE:
        w->base = bench_alloc(BENCH_MEM_ALLOC_MEM, bytes);
        MPI_Win_create(w->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        return;
    case BENCH_FLAVOR_MALLOC: {
        long page = sysconf(_SC_PAGESIZE);
        if (posix_memalign(&base, page > 0 ? (size_t)page : 4096, bytes ? bytes : 1) != 0)
            bench_die("cannot allocate %zu bytes (posix_memalign)", bytes);
        memset(base, 0, bytes ? bytes : 1);
        w->base = base;
        MPI_Win_create(w->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        return;
    }
    case BENCH_FLAVOR_ALLOCATE:
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w->win);
        break;
    case BENCH_FLAVOR_SHARED:
        MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                &w->win);
        break;
    case BENCH_FLAVOR_DYNAMIC: {
        MPI_Aint mine;
        w->base = bench_alloc(BENCH_MEM_ALLOC_MEM, bytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->base, (MPI_Aint)bytes);
        MPI_Get_address(w->base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w->disp, 1, MPI_AINT, MPI_COMM_WORLD);
        return;
    }
    default:
        bench_die("unknown window flavor %d", flavor);
    }
    /* The window's own memory: contents undefined until stored into, and not yet faulted in.
     * The stores go under a lock of my own window (MPI-2's separate model, were it that). */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    w->base = base;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win);
    if (bytes)
        memset(w->base, 0, bytes);
    MPI_Win_unlock(rank, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

void bench_win_free(bench_win *w)
{
    MPI_Barrier(MPI_COMM_WORLD); /* nobody reaches my memory any more */
    if (w->flavor == BENCH_FLAVOR_DYNAMIC)
        MPI_Win_detach(w->win, w->base);
    MPI_Win_free(&w->win);
    if (w->flavor == BENCH_FLAVOR_CREATE || w->flavor == BENCH_FLAVOR_DYNAMIC)
        bench_free(BENCH_MEM_ALLOC_MEM, w->base);
    else if (w->flavor == BENCH_FLAVOR_MALLOC)
        free(w->base);
    free(w->disp);
}

void bench_shift_init(bench_shift *s, int n)
{
    int rank, p;
    MPI_Group world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (n < 1 || n > p)
        bench_die("%d neighbours with %d ranks", n, p);
    s->n = n;
    s->tgt = malloc(bench_mul((size_t)n, sizeof *s->tgt));
    s->org = malloc(bench_mul((size_t)n, sizeof *s->org));
    if (!s->tgt || !s->org)
        bench_die("out of memory");
    for (int j = 1; j <= n; j++) {
        s->tgt[j - 1] = (rank + j) % p;
        s->org[j - 1] = (rank - j % p + p) % p;
    }
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, s->tgt, &s->tgt_group);
    MPI_Group_incl(world, n, s->org, &s->org_group);
    MPI_Group_free(&world);
}

void bench_shift_free(bench_shift *s)
{
    MPI_Group_free(&s->tgt_group);
    MPI_Group_free(&s->org_group);
    free(s->tgt);
    free(s->org);
}

int bench_nbrs(const bench_opts *o, int k, int mem, char *suffix, size_t len)
{
    int n = o->nbrs[k] ? o->nbrs[k] : o->size;
    if (n > o->size) {
        if (o->rank == 0)
            fprintf(stderr, "%s: %d neighbours need %d ranks, skipped\n", o->program, n, n);
        return 0;
    }
    if (o->nbrs[k])
        snprintf(suffix, len, "n=%d/%s", n, bench_mem_name[mem]);
    else
        snprintf(suffix, len, "n=p/%s", bench_mem_name[mem]);
    return n;
}

void bench_stamp(unsigned char *b, size_t n, unsigned long long v)
{
    memcpy(b, &v, sizeof v);
    memcpy(b + n - sizeof v, &v, sizeof v);
}

int bench_stamp_wrong(const unsigned char *b, size_t n, unsigned long long want)
{
    unsigned long long first, last;
    memcpy(&first, b, sizeof first);
    memcpy(&last, b + n - sizeof last, sizeof last);
    return (first != want) + (last != want);
}

/* ---- the core-to-core round trip ---- */

#define C2C_LINE 128 /* two cache lines: the two words never share a line pair */

/* A POSIX shared memory object made by rank 0 and mapped by rank 1: plain loads and stores,
 * no MPI in between, in the native run and under flexrma alike. */
void bench_c2c_setup(bench_c2c *c, const char *program)
{
    char name[96];
    long id = (long)getpid();
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    c->seq = 0;
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "/flexrma-bench-%s-%ld", program, id);
    int fd = -1;
    if (c->rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, 2 * C2C_LINE) != 0)
            bench_die("shm_open %s failed", name);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 1 && (fd = shm_open(name, O_RDWR, 0600)) < 0)
        bench_die("shm_open %s failed", name);
    if (c->rank <= 1) {
        void *m = mmap(NULL, 2 * C2C_LINE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            bench_die("mmap of %s failed", name);
        close(fd);
        c->ping = m;
        c->pong = (_Atomic unsigned long long *)((char *)m + C2C_LINE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0)
        shm_unlink(name);
}

void bench_c2c_teardown(bench_c2c *c)
{
    if (c->rank <= 1)
        munmap((void *)c->ping, 2 * C2C_LINE);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spin until *w reaches want; yield now and then, so that two ranks sharing one core (a
 * loaded machine) still make progress. Returns what it read. */
static unsigned long long await_value(_Atomic unsigned long long *w, unsigned long long want)
{
    unsigned long long v;
    for (unsigned spins = 1; (v = atomic_load_explicit(w, memory_order_acquire)) < want; spins++)
        if (spins % 256 == 0)
            sched_yield();
        else
            cpu_relax();
    return v;
}

int bench_c2c_step(bench_c2c *c)
{
    if (c->rank > 1)
        return 0;
    unsigned long long s = ++c->seq;
    if (c->rank == 0) {
        atomic_store_explicit(c->ping, s, memory_order_release);
        return await_value(c->pong, s) != s;
    }
    int wrong = await_value(c->ping, s) != s;
    atomic_store_explicit(c->pong, s, memory_order_release);
    return wrong;
}

int bench_native_cas_crashes(const bench_opts *o, int flavor)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    return strcmp(o->impl, "native") == 0 && flavor == BENCH_FLAVOR_ALLOCATE &&
           strstr(version, "Open MPI v4.") != NULL && getenv("BENCH_NATIVE_CAS") == NULL;
}
