/* gakernel.c - an application kernel with Global Arrays' access pattern (NWChem's SCF over
 * GA/ARMCI-MPI), written directly in MPI.
 *
 * Two distributed 2-D arrays of doubles, D (read: a density matrix) and F (accumulated into: a
 * Fock matrix), each rank owning an N x N block of each (--block N; ranks on a 2-D grid made by
 * MPI_Dims_create, blocks stored row by row) in a window of its own: MPI_Win_allocate
 * (variants ".../allocate") or MPI_Win_create over MPI_Alloc_mem memory (".../create"). A task
 * counter (NXTVAL) lives in a small window on rank 0, a window of the same flavor. Every window
 * is opened with MPI_Win_lock_all once. The tasks of a run are numbered 0..T-1 (--tasks T) and
 * handed out in phases of K (--churn K): the ranks take the tasks of phase p with
 * MPI_Fetch_and_op(MPI_SUM, 1 long) on counter p and MPI_Win_flush, until the value fetched is
 * past the phase. A task (all of it drawn from the task number, so the same on every run):
 *
 *   1. MPI_Get of three patches of D from random owners (any rank, itself included): A (m x k),
 *      B (k x n), C (m x n), m and n drawn from --patch (8,16,32,64), k from --inner (8,16);
 *      each either strided through an MPI_Type_vector at the target (3 in 4) or as one get per
 *      row (ARMCI-MPI's two strided methods); then MPI_Win_flush of each owner
 *   2. C += A * B (a naive dgemm of at most 64 x 64 x 16: small, so that communication is a
 *      large share of a task)
 *   3. MPI_Accumulate(MPI_SUM, MPI_DOUBLE) of C into F at a random owner and place (vector type
 *      or row by row, as the gets), MPI_Win_flush
 *
 * Each phase ends with a barrier (GA_Sync). Then, like GA's temporary arrays, the ranks make
 * one MPI_Win_allocate window per --sizes entry (1K,16K,256K,1M), open each with lock_all, put
 * (or accumulate, MPI_REPLACE, every other window) up to 16 KiB of stamped doubles into the
 * right neighbour's part, close it with unlock_all; then a barrier, each rank checks its left
 * neighbour's stamps, and the windows are freed. Last, like ARMCI-MPI's local scratch
 * (ARMCI_Malloc_local), each rank takes an MPI_Alloc_mem block of --scratch bytes (default
 * 40 MiB), writes SCRATCH_PAGES (92) of its pages and frees it: NWChem's SCF does that about 200
 * times a run (a fifth of its CPU time natively, in page faults and munmap). The "/nowinchurn"
 * variants skip the temporary windows and the scratch block (the phase barriers stay), so that
 * their difference is what those cost.
 *
 * Checked after every run (warm-up and timed): D holds small integers and every product of a task
 * is exact in doubles, so F must equal, element by element, the sum of the contributions of every
 * task that targets it, which each rank computes once at the start from D's formula (no
 * communication); the sum of F over all ranks must equal the expected total; each phase's counter
 * must read the phase's tasks plus the number of ranks (every rank fetches once past the phase)
 * and the ranks must have done T tasks in all; every temporary window must hold its neighbour's
 * stamps. A variant with a wrong value gets no row and the program exits with status 1.
 *
 * Rows, each the median over --reps repetitions of the slowest rank's time (variants
 * interleaved repetition by repetition, as bench_measure does; one warm-up run of each first,
 * --warmup tasks):
 *
 *   ga/FLAVOR[/nowinchurn]      time per task of one rank (µs): the task loop's wall time,
 *                               phase barriers and temporary windows included, / (T / ranks)
 *   ga-run/FLAVOR[/nowinchurn]  the whole run (µs): making D, F and the counter window and
 *                               filling D, lock_all, the task loop, unlock_all, and freeing the
 *                               windows (the check in between is not timed)
 *
 *   compute                     the local product alone, per task (µs): each rank's products
 *                               for the check, at the start (no communication), each the
 *                               fastest of three
 *
 * The bytes column is the block of each array a rank owns (N * N * 8); the ratio column is the
 * time over the first flavor's /nowinchurn variant's, repetition by repetition.
 *
 * Defaults (--tasks 200 --churn 50 --reps 3): about 1-3 s natively at 2 ranks here; most of
 * it is Open MPI 4.1's MPI_Win_allocate of the larger temporary windows (tens of ms at 1 MiB)
 * and the patches of its MPI_Win_create windows (osc rdma moves them through btl vader, a
 * transfer per contiguous row: hundreds of µs for 64 x 64). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 8            /* entries of --patch and of --inner */
#define STAMP_MAX 16384       /* bytes put into each temporary window */
#define DEFAULT_TASKS 200
#define DEFAULT_REPS 3
#define DEFAULT_CHURN 50
#define DEFAULT_BLOCK 128
#define DEFAULT_SCRATCH ((long)40 << 20)
#define SCRATCH_PAGES 92

typedef struct patch {
    int owner, row, col; /* the owner's block, and the patch's first element in it */
    int ih, iw;          /* indices of the height and width in ga.dim */
    int by_rows;         /* moved as one operation per row, not through a vector type */
} patch;

typedef struct task {
    int m, n, k;
    patch a, b, c, out;
} task;

typedef struct ga {
    int rank, size, pr, pc; /* the rank grid: pr x pc */
    int N;                  /* block edge */
    int ndim, dim[2 * MAX_DIMS];
    int nedge, edge[MAX_DIMS];   /* indices in dim */
    int ninner, inner[MAX_DIMS]; /* indices in dim */
    MPI_Datatype type[2 * MAX_DIMS][2 * MAX_DIMS]; /* h x w patch of an N-wide block */
    int churn;                                     /* K */
    long scratch_bytes;                            /* --scratch */
    const size_t *tmp_sizes;
    int ntmp;
    bench_win D, F, ctr;
    double *a, *b, *c, *scratch, *stamp;
} ga;

/* ---- options of this program (the others are common.c's) ---- */

static const char *opt_error; /* reported once MPI is up */
static char opt_error_text[160];

static void opt_fail(const char *fmt, const char *a, const char *b)
{
    if (!opt_error) {
        snprintf(opt_error_text, sizeof opt_error_text, fmt, a, b ? b : "");
        opt_error = opt_error_text;
    }
}

static int parse_int(const char *opt, const char *v, int min, int max)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < min || x > max) {
        opt_fail("bad value '%s' for %s", v ? v : "", opt);
        return min;
    }
    return (int)x;
}

static int parse_ints(const char *opt, const char *v, int *out, int max)
{
    char buf[256];
    int n = 0;
    if (!v || strlen(v) >= sizeof buf) {
        opt_fail("bad value '%s' for %s", v ? v : "", opt);
        return 0;
    }
    strcpy(buf, v);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            opt_fail("too many values in %s %s", opt, v);
            return n;
        }
        out[n++] = parse_int(opt, w, 1, 4096);
    }
    if (n == 0)
        opt_fail("bad value '%s' for %s", v, opt);
    return n;
}

typedef struct own_opts {
    int help, tasks, churn, block, warmup_given, flavor_given, reps_given;
    long scratch;
    int nedge, edge[MAX_DIMS], ninner, inner[MAX_DIMS];
} own_opts;

/* Takes this program's options out of argv (before bench_init, which parses the common ones
 * and refuses the rest) and notes which common ones were given. */
static void own_options(int *argc, char **argv, own_opts *g)
{
    g->tasks = DEFAULT_TASKS;
    g->churn = DEFAULT_CHURN;
    g->block = DEFAULT_BLOCK;
    g->scratch = DEFAULT_SCRATCH;
    g->nedge = parse_ints("--patch", "8,16,32,64", g->edge, MAX_DIMS);
    g->ninner = parse_ints("--inner", "8,16", g->inner, MAX_DIMS);
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *opt = argv[i], *val = i + 1 < *argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            g->help = 1;
            continue;
        }
        if (strcmp(opt, "--tasks") == 0)
            g->tasks = parse_int(opt, val, 1, 100000000);
        else if (strcmp(opt, "--churn") == 0)
            g->churn = parse_int(opt, val, 1, 100000000);
        else if (strcmp(opt, "--block") == 0)
            g->block = parse_int(opt, val, 8, 4096);
        else if (strcmp(opt, "--scratch") == 0)
            g->scratch = (long)parse_int(opt, val, 0, 1 << 30);
        else if (strcmp(opt, "--patch") == 0)
            g->nedge = parse_ints(opt, val, g->edge, MAX_DIMS);
        else if (strcmp(opt, "--inner") == 0)
            g->ninner = parse_ints(opt, val, g->inner, MAX_DIMS);
        else if (strcmp(opt, "--iters") == 0 || strcmp(opt, "--nbrs") == 0 ||
                 strcmp(opt, "--mem") == 0 || strcmp(opt, "--topo") == 0 ||
                 strcmp(opt, "--blocks") == 0) {
            opt_fail("%s does not apply to gakernel%s", opt,
                     strcmp(opt, "--iters") == 0 ? " (--tasks: tasks per run)" : "");
        } else {
            /* a common option and its value: left for bench_init */
            g->warmup_given |= strcmp(opt, "--warmup") == 0;
            g->flavor_given |= strcmp(opt, "--flavor") == 0;
            g->reps_given |= strcmp(opt, "--reps") == 0;
            argv[n++] = argv[i];
            if (val)
                argv[n++] = argv[i + 1];
        }
        i++; /* its value */
    }
    argv[n] = NULL;
    *argc = n;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: gakernel [--impl native|flexrma] [--transport LABEL] [--tasks T] [--reps R]\n"
            "       [--warmup W] [--churn K] [--block N] [--scratch BYTES] [--patch LIST]\n"
            "       [--inner LIST]\n"
            "       [--sizes LIST] [--flavor LIST]\n"
            "  --impl, --transport  labels of the CSV rows; --impl must match the library\n"
            "                       that provides MPI_Put (libflexrma when preloaded)\n"
            "  --tasks T     tasks per run, over all ranks (default %d)\n"
            "  --reps R      timed runs of each variant; rows report medians (default %d)\n"
            "  --warmup W    tasks of the untimed first run of each variant, 0 for none\n"
            "                (default K, one phase)\n"
            "  --churn K     tasks per phase: temporary windows and a barrier after each\n"
            "                (default %d)\n"
            "  --block N     each rank's block of each array: N x N doubles (default %d)\n"
            "  --scratch B   an MPI_Alloc_mem block of B bytes taken and freed per phase, %d of\n"
            "                its pages written; 0 for none (default 40 MiB)\n"
            "  --patch LIST  patch heights and widths m, n to draw from (default 8,16,32,64)\n"
            "  --inner LIST  inner dimensions k of the product (default 8,16)\n"
            "  --sizes LIST  the temporary windows of a phase, bytes (default 1K,16K,256K,1M)\n"
            "  --flavor      the arrays' windows: allocate (MPI_Win_allocate), create\n"
            "                (MPI_Win_create over MPI_Alloc_mem memory); default allocate,create\n"
            "Prints CSV rows: program,variant,implementation,transport,ranks,bytes,"
            "median_us,ratio_to_pt2pt\n",
            DEFAULT_TASKS, DEFAULT_REPS, DEFAULT_CHURN, DEFAULT_BLOCK, SCRATCH_PAGES);
}

/* ---- the tasks ---- */

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void draw_patch(const ga *g, uint64_t *s, patch *p, int ih, int iw)
{
    p->ih = ih;
    p->iw = iw;
    p->owner = (int)(next(s) % (uint64_t)g->size);
    p->row = (int)(next(s) % (uint64_t)(g->N - g->dim[ih] + 1));
    p->col = (int)(next(s) % (uint64_t)(g->N - g->dim[iw] + 1));
    p->by_rows = next(s) % 4 == 0;
}

static void draw_task(const ga *g, long id, task *t)
{
    uint64_t s = 0x6761u ^ (uint64_t)id * 0x2545f4914f6cdd1dull;
    int im = g->edge[next(&s) % (uint64_t)g->nedge];
    int in = g->edge[next(&s) % (uint64_t)g->nedge];
    int ik = g->inner[next(&s) % (uint64_t)g->ninner];
    t->m = g->dim[im];
    t->n = g->dim[in];
    t->k = g->dim[ik];
    draw_patch(g, &s, &t->a, im, ik);
    draw_patch(g, &s, &t->b, ik, in);
    draw_patch(g, &s, &t->c, im, in);
    draw_patch(g, &s, &t->out, im, in);
}

/* D's value at element (r, c) of rank q's block: a small integer, so every sum is exact. */
static double d_value(const ga *g, int q, int r, int c)
{
    long gi = (long)(q / g->pc) * g->N + r, gj = (long)(q % g->pc) * g->N + c;
    return (double)((gi * 3 + gj * 5) % 7 - 3);
}

static MPI_Aint elem_disp(const ga *g, const bench_win *w, const patch *p, int r)
{
    return w->disp[p->owner] +
           (MPI_Aint)((((size_t)p->row + (size_t)r) * (size_t)g->N + (size_t)p->col) *
                      sizeof(double));
}

static void get_patch(const ga *g, const patch *p, double *buf)
{
    int h = g->dim[p->ih], w = g->dim[p->iw];
    if (p->by_rows)
        for (int r = 0; r < h; r++)
            MPI_Get(buf + (size_t)r * w, w, MPI_DOUBLE, p->owner, elem_disp(g, &g->D, p, r), w,
                    MPI_DOUBLE, g->D.win);
    else
        MPI_Get(buf, h * w, MPI_DOUBLE, p->owner, elem_disp(g, &g->D, p, 0), 1,
                g->type[p->ih][p->iw], g->D.win);
}

static void acc_patch(const ga *g, const patch *p, const double *buf)
{
    int h = g->dim[p->ih], w = g->dim[p->iw];
    if (p->by_rows)
        for (int r = 0; r < h; r++)
            MPI_Accumulate(buf + (size_t)r * w, w, MPI_DOUBLE, p->owner,
                           elem_disp(g, &g->F, p, r), w, MPI_DOUBLE, MPI_SUM, g->F.win);
    else
        MPI_Accumulate(buf, h * w, MPI_DOUBLE, p->owner, elem_disp(g, &g->F, p, 0), 1,
                       g->type[p->ih][p->iw], MPI_SUM, g->F.win);
}

/* c (m x n) += a (m x k) * b (k x n) */
static void dgemm(int m, int n, int k, const double *a, const double *b, double *c)
{
    for (int i = 0; i < m; i++)
        for (int l = 0; l < k; l++) {
            double x = a[i * k + l];
            const double *bl = b + (size_t)l * n;
            double *ci = c + (size_t)i * n;
            for (int j = 0; j < n; j++)
                ci[j] += x * bl[j];
        }
}

static void do_task(ga *g, long id)
{
    task t;
    draw_task(g, id, &t);
    get_patch(g, &t.a, g->a);
    get_patch(g, &t.b, g->b);
    get_patch(g, &t.c, g->c);
    MPI_Win_flush(t.a.owner, g->D.win);
    if (t.b.owner != t.a.owner)
        MPI_Win_flush(t.b.owner, g->D.win);
    if (t.c.owner != t.a.owner && t.c.owner != t.b.owner)
        MPI_Win_flush(t.c.owner, g->D.win);
    dgemm(t.m, t.n, t.k, g->a, g->b, g->c);
    acc_patch(g, &t.out, g->c);
    MPI_Win_flush(t.out.owner, g->F.win);
}

/* What a patch of D holds, from the formula. */
static void fill_patch(const ga *g, const patch *p, double *buf)
{
    int h = g->dim[p->ih], w = g->dim[p->iw];
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
            buf[(size_t)r * w + c] = d_value(g, p->owner, p->row + r, p->col + c);
}

static double compute_s; /* time spent in expected()'s dgemm calls */
static long compute_n;   /* and their number */

/* Adds task id's result to want when its output patch is in my block of F. */
static void contribute(ga *g, long id, double *want)
{
    task t;
    draw_task(g, id, &t);
    if (t.out.owner != g->rank)
        return;
    fill_patch(g, &t.a, g->a);
    fill_patch(g, &t.b, g->b);
    fill_patch(g, &t.c, g->c);
    /* The product timed three times (on copies): the fastest, so that a preemption of this
     * short pass does not count. */
    double best = 0;
    size_t cn = (size_t)t.m * (size_t)t.n;
    for (int i = 0; i < 3; i++) {
        memcpy(g->scratch, g->c, cn * sizeof(double));
        double t0 = MPI_Wtime();
        dgemm(t.m, t.n, t.k, g->a, g->b, g->scratch);
        double dt = MPI_Wtime() - t0;
        best = i == 0 || dt < best ? dt : best;
    }
    compute_s += best;
    compute_n++;
    dgemm(t.m, t.n, t.k, g->a, g->b, g->c);
    for (int r = 0; r < t.m; r++)
        for (int c = 0; c < t.n; c++)
            want[((size_t)t.out.row + r) * g->N + t.out.col + c] += g->c[(size_t)r * t.n + c];
}

/* My block of F after tasks 0..T-1 (into want) and after 0..W-1 (into warm): the sum of the
 * results of the tasks whose output patch is mine. Computed once, without communication. */
static void expected(ga *g, long T, long W, double *want, double *warm)
{
    size_t nn = (size_t)g->N * (size_t)g->N;
    long common = T < W ? T : W;
    memset(want, 0, nn * sizeof *want);
    for (long id = 0; id < common; id++)
        contribute(g, id, want);
    memcpy(warm, want, nn * sizeof *want);
    for (long id = common; id < T; id++)
        contribute(g, id, want);
    for (long id = common; id < W; id++)
        contribute(g, id, warm);
}

/* ---- temporary windows ---- */

/* Element j of what rank q puts into temporary window i of phase ph: an exact integer. */
static double stamp_value(int ph, int i, int q, size_t j)
{
    return (double)((((uint64_t)ph * 64 + (uint64_t)i) * 65536 + (uint64_t)q) * 4096 + j % 4096);
}

/* One phase's temporary windows, made after the phase's barrier (GA_Sync: no operation of
 * the tasks is in flight): all made, each used in an epoch of its own, a barrier, all checked
 * and freed. Returns the wrong stamps found in mine. (Made right after a rank's last task,
 * without the barrier first, MPI_Win_allocate would be entered while other ranks' gets on
 * the arrays still wait for this rank: legal MPI, but under flexrma with FLEXRMA_TRANSPORT=am
 * that deadlocked when this was written.) */
static int churn(ga *g, int ph)
{
    MPI_Win win[BENCH_MAX_LIST];
    double *base[BENCH_MAX_LIST];
    int right = (g->rank + 1) % g->size, left = (g->rank + g->size - 1) % g->size, wrong = 0;
    for (int i = 0; i < g->ntmp; i++)
        MPI_Win_allocate((MPI_Aint)g->tmp_sizes[i], 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base[i],
                         &win[i]);
    for (int i = 0; i < g->ntmp; i++) {
        size_t s = g->tmp_sizes[i], len = (s < STAMP_MAX ? s : STAMP_MAX) / sizeof(double);
        MPI_Win_lock_all(0, win[i]);
        for (size_t j = 0; j < len; j++)
            g->stamp[j] = stamp_value(ph, i, g->rank, j);
        MPI_Aint disp = (MPI_Aint)(s - len * sizeof(double));
        if (i % 2 == 0)
            MPI_Put(g->stamp, (int)len, MPI_DOUBLE, right, disp, (int)len, MPI_DOUBLE, win[i]);
        else
            MPI_Accumulate(g->stamp, (int)len, MPI_DOUBLE, right, disp, (int)len, MPI_DOUBLE,
                           MPI_REPLACE, win[i]);
        MPI_Win_unlock_all(win[i]); /* complete at the target too */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < g->ntmp; i++) {
        size_t s = g->tmp_sizes[i], len = (s < STAMP_MAX ? s : STAMP_MAX) / sizeof(double);
        const double *got = base[i] + (s / sizeof(double) - len);
        MPI_Win_lock(MPI_LOCK_SHARED, g->rank, 0, win[i]);
        for (size_t j = 0; j < len; j++)
            wrong += got[j] != stamp_value(ph, i, left, j);
        MPI_Win_unlock(g->rank, win[i]);
    }
    for (int i = 0; i < g->ntmp; i++)
        MPI_Win_free(&win[i]);
    if (g->scratch_bytes > 0) {
        char *scratch;
        MPI_Alloc_mem((MPI_Aint)g->scratch_bytes, MPI_INFO_NULL, &scratch);
        for (long off = 0; off < (long)SCRATCH_PAGES * 4096 && off < g->scratch_bytes; off += 4096)
            scratch[off] = (char)(off >> 12);
        MPI_Free_mem(scratch);
    }
    return wrong;
}

/* ---- one run ---- */

typedef struct run_time {
    double task_us, run_us;
} run_time;

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

/* Make D, F and the counter window, run T tasks (with temporary windows or not), check, free.
 * Returns the wrong values found (summed over the ranks; the same on every rank) and the
 * slowest rank's times in *rt. */
static int run_once(ga *g, int flavor, int with_churn, long T, const double *want,
                    double want_total, run_time *rt)
{
    size_t nn = (size_t)g->N * (size_t)g->N;
    int K = g->churn, nph = (int)((T + K - 1) / K);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    bench_win_make(&g->D, flavor, nn * sizeof(double));
    bench_win_make(&g->F, flavor, nn * sizeof(double));
    bench_win_make(&g->ctr, flavor, g->rank == 0 ? align64((size_t)nph * sizeof(long)) : 0);
    double *d = (double *)g->D.base;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g->rank, 0, g->D.win);
    for (int r = 0; r < g->N; r++)
        for (int c = 0; c < g->N; c++)
            d[(size_t)r * g->N + c] = d_value(g, g->rank, r, c);
    MPI_Win_unlock(g->rank, g->D.win);
    /* Before anyone's lock_all: its shared lock on me would hold my exclusive one off. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, g->D.win);
    MPI_Win_lock_all(0, g->F.win);
    MPI_Win_lock_all(0, g->ctr.win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    long one = 1, v, done = 0;
    int wrong = 0;
    for (int ph = 0; ph < nph; ph++) {
        long nk = T - (long)ph * K < K ? T - (long)ph * K : K;
        for (;;) {
            MPI_Fetch_and_op(&one, &v, MPI_LONG, 0,
                             g->ctr.disp[0] + (MPI_Aint)((size_t)ph * sizeof(long)), MPI_SUM,
                             g->ctr.win);
            MPI_Win_flush(0, g->ctr.win);
            if (v >= nk)
                break;
            do_task(g, (long)ph * K + v);
            done++;
        }
        MPI_Barrier(MPI_COMM_WORLD); /* the phase's end (GA_Sync) */
        if (with_churn)
            wrong += churn(g, ph);
    }
    double t2 = MPI_Wtime();
    MPI_Win_unlock_all(g->ctr.win);
    MPI_Win_unlock_all(g->F.win);
    MPI_Win_unlock_all(g->D.win);
    double t3 = MPI_Wtime();

    /* The check (not timed): every rank's operations are complete (unlock_all), so behind a
     * barrier each reads its own blocks under a lock of its own window. */
    MPI_Barrier(MPI_COMM_WORLD);
    double sum = 0;
    const double *f = (const double *)g->F.base;
    MPI_Win_lock(MPI_LOCK_SHARED, g->rank, 0, g->F.win);
    for (size_t i = 0; i < nn; i++) {
        wrong += f[i] != want[i];
        sum += f[i];
    }
    MPI_Win_unlock(g->rank, g->F.win);
    if (g->rank == 0) {
        const long *ctr = (const long *)g->ctr.base;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, g->ctr.win);
        for (int ph = 0; ph < nph; ph++) {
            long nk = T - (long)ph * K < K ? T - (long)ph * K : K;
            wrong += ctr[ph] != nk + g->size;
        }
        MPI_Win_unlock(0, g->ctr.win);
    }
    MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (g->rank == 0)
        wrong += (done != T) + (sum != want_total);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    double t4 = MPI_Wtime();
    bench_win_free(&g->ctr);
    bench_win_free(&g->F);
    bench_win_free(&g->D);
    double t5 = MPI_Wtime();
    double mine[2] = {(t2 - t1) * 1e6 * g->size / (double)T, (t3 - t0 + t5 - t4) * 1e6};
    MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    rt->task_us = mine[0];
    rt->run_us = mine[1];
    return wrong;
}

/* ---- main ---- */

/* The index of value x in g->dim, added when new. */
static int dim_index(ga *g, int x)
{
    for (int i = 0; i < g->ndim; i++)
        if (g->dim[i] == x)
            return i;
    g->dim[g->ndim] = x;
    return g->ndim++;
}

int main(int argc, char **argv)
{
    own_opts oo = {0};
    own_options(&argc, argv, &oo);
    bench_opts o;
    bench_init(&argc, &argv, "gakernel", "1K,16K,256K,1M", &o);
    if (oo.help || opt_error) {
        if (o.rank == 0) {
            if (opt_error)
                fprintf(stderr, "gakernel: %s\n", opt_error);
            usage();
        }
        MPI_Finalize();
        return opt_error ? 2 : 0;
    }
    bench_flavors_allowed(&o, 1u << BENCH_FLAVOR_ALLOCATE | 1u << BENCH_FLAVOR_CREATE);
    if (!oo.flavor_given) {
        o.nflavor = 2;
        o.flavor[0] = BENCH_FLAVOR_ALLOCATE;
        o.flavor[1] = BENCH_FLAVOR_CREATE;
    }
    if (!oo.reps_given)
        o.reps = DEFAULT_REPS;
    long T = oo.tasks;
    long W = oo.warmup_given ? o.warmup : (oo.churn < T ? oo.churn : T);

    ga g = {.rank = o.rank, .size = o.size, .N = oo.block, .churn = oo.churn,
            .scratch_bytes = oo.scratch, .tmp_sizes = o.sizes, .ntmp = o.nsizes};
    int dims[2] = {0, 0};
    MPI_Dims_create(o.size, 2, dims);
    g.pr = dims[0];
    g.pc = dims[1];
    int maxdim = 0;
    for (int i = 0; i < oo.nedge; i++) {
        g.edge[g.nedge++] = dim_index(&g, oo.edge[i]);
        maxdim = oo.edge[i] > maxdim ? oo.edge[i] : maxdim;
    }
    for (int i = 0; i < oo.ninner; i++) {
        g.inner[g.ninner++] = dim_index(&g, oo.inner[i]);
        maxdim = oo.inner[i] > maxdim ? oo.inner[i] : maxdim;
    }
    if (maxdim > g.N)
        bench_die("--patch and --inner: at most the block edge (--block %d)", g.N);
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] < 16 || o.sizes[i] % 16)
            bench_die("--sizes: multiples of 16 bytes");
    for (int h = 0; h < g.ndim; h++)
        for (int w = 0; w < g.ndim; w++) {
            MPI_Type_vector(g.dim[h], g.dim[w], g.N, MPI_DOUBLE, &g.type[h][w]);
            MPI_Type_commit(&g.type[h][w]);
        }
    size_t nn = (size_t)g.N * (size_t)g.N, patch = bench_mul((size_t)maxdim, (size_t)maxdim);
    g.a = bench_alloc(BENCH_MEM_MALLOC, patch * sizeof(double));
    g.b = bench_alloc(BENCH_MEM_MALLOC, patch * sizeof(double));
    g.c = bench_alloc(BENCH_MEM_MALLOC, patch * sizeof(double));
    g.scratch = bench_alloc(BENCH_MEM_MALLOC, patch * sizeof(double));
    g.stamp = bench_alloc(BENCH_MEM_MALLOC, STAMP_MAX);
    double *want = bench_alloc(BENCH_MEM_MALLOC, nn * sizeof(double));
    double *warm = bench_alloc(BENCH_MEM_MALLOC, nn * sizeof(double));
    expected(&g, T, W, want, warm);
    double totals[2] = {0, 0};
    for (size_t i = 0; i < nn; i++) {
        totals[0] += want[i];
        totals[1] += warm[i];
    }
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* The local product alone, per task: what a task costs without communication. */
    double compute_us = compute_n ? compute_s * 1e6 / (double)compute_n : 0;
    MPI_Allreduce(MPI_IN_PLACE, &compute_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    /* Variants: per flavor, /nowinchurn (the first flavor's is the ratios' reference) and with
     * temporary windows. */
    int nv = 2 * o.nflavor, reps = o.reps;
    double *task_t = malloc(bench_mul(bench_mul((size_t)nv, (size_t)reps), sizeof(double)));
    double *run_t = malloc(bench_mul(bench_mul((size_t)nv, (size_t)reps), sizeof(double)));
    double *ratio = malloc(bench_mul((size_t)reps, sizeof(double)));
    double *scratch = malloc(bench_mul((size_t)reps, sizeof(double)));
    int *errors = calloc((size_t)nv, sizeof *errors);
    if (!task_t || !run_t || !ratio || !scratch || !errors)
        bench_die("out of memory");
    run_time rt;
    if (W > 0)
        for (int k = 0; k < nv; k++)
            errors[k] += run_once(&g, o.flavor[k / 2], k % 2, W, warm, totals[1], &rt);
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nv; j++) {
            int k = (j + r) % nv;
            errors[k] += run_once(&g, o.flavor[k / 2], k % 2, T, want, totals[0], &rt);
            task_t[k * reps + r] = rt.task_us;
            run_t[k * reps + r] = rt.run_us;
        }

    int failed = 0;
    for (int kind = 0; kind < 2 && o.rank == 0; kind++) {
        const double *t = kind == 0 ? task_t : run_t;
        for (int k = 0; k < nv; k++) {
            char name[96];
            snprintf(name, sizeof name, "%s/%s%s", kind == 0 ? "ga" : "ga-run",
                     bench_flavor_name[o.flavor[k / 2]], k % 2 ? "" : "/nowinchurn");
            if (errors[k]) {
                fprintf(stderr, "gakernel: %s: %d WRONG results, no row written\n", name,
                        errors[k]);
                failed = 1;
                continue;
            }
            bench_row(&o, name, nn * sizeof(double), &t[k * reps], errors[0] ? NULL : t, reps,
                      ratio, scratch);
        }
    }
    if (o.rank == 0) {
        printf("%s,compute,%s,%s,%d,%zu,%.3f,\n", o.program, o.impl, o.transport, o.size,
               nn * sizeof(double), compute_us);
        fflush(stdout);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (int h = 0; h < g.ndim; h++)
        for (int w = 0; w < g.ndim; w++)
            MPI_Type_free(&g.type[h][w]);
    free(errors);
    free(scratch);
    free(ratio);
    free(run_t);
    free(task_t);
    bench_free(BENCH_MEM_MALLOC, warm);
    bench_free(BENCH_MEM_MALLOC, want);
    bench_free(BENCH_MEM_MALLOC, g.stamp);
    bench_free(BENCH_MEM_MALLOC, g.scratch);
    bench_free(BENCH_MEM_MALLOC, g.c);
    bench_free(BENCH_MEM_MALLOC, g.b);
    bench_free(BENCH_MEM_MALLOC, g.a);
    int rc = bench_finish();
    return rc ? rc : failed;
}
