/* t_acc_atomic.c - accumulates from every member into one window at the same moment lose no
 * update, whichever way acc_shared.c combines each element.
 *
 * Every member, rank 0 included, accumulates into rank 0's MPI_Alloc_mem window under shared
 * locks, ROUNDS times, all over the same elements: node peers then combine straight into the
 * mapped window while rank 0 combines its own and the packets it receives. Each case checks
 * that every element got every update (sums; for PROD, a product whose value does not depend
 * on the order), and, from the windows' statistics summed over the ranks, which way the
 * elements went: with hardware atomics (fetch-and-add for up to 8 int sums in a stripe, also
 * split by a stripe boundary; compare-and-swap for one element of a 1- or 2-byte sum, floating
 * point, complex float or an 8-byte product), or holding the stripe exclusively (two or more
 * elements that would each take a compare-and-swap, many elements, across batches and stripes,
 * a short run over a stripe boundary holding both stripes, strided layouts, 16-byte types,
 * unaligned ints, and one element off its alignment alone, combined in scratch of one
 * element). In the mixed cases half the members take the atomic way and half the exclusive one
 * over the same elements at once. Where nobody maps the window (FLEXRMA_TRANSPORT=am, FLEXRMA_DIRECT=0) only
 * rank 0 combines and no element is counted either way; the data must still be right.
 * Linked with the internal library: it reads fr_win's statistics, fr_opt and the stripe size. */
#include "common.h"
#include "dtype/acc.h"
#include "win/win.h"

#include <complex.h>

#define ROUNDS 150
#define ROUNDS_U8 60 /* no byte sum overflows with up to 4 ranks: overflow is the MPI library's */
#define WIN_BYTES (1 << 20)

typedef enum kind { K_U8, K_U16, K_INT, K_FLOAT, K_DOUBLE, K_ULL, K_FCPLX, K_DCPLX, K_LDBL } kind;
typedef enum way { ATOMIC, LOCKED } way;

typedef struct acase {
    const char *name;
    kind k;
    int n;             /* elements per accumulate */
    MPI_Aint offset;   /* bytes from the window's start to the first element */
    int stride;        /* target layout: every stride-th element (1: contiguous) */
    way expect;        /* where node peers map the window */
    int n_odd;         /* if not 0: odd ranks accumulate this many (the exclusive way) */
} acase;

/* Elements rank r accumulates each round, and the way they go. */
static int count_of(const acase *c, int r) { return c->n_odd && r % 2 ? c->n_odd : c->n; }
static way way_of(const acase *c, int r) { return c->n_odd && r % 2 ? LOCKED : c->expect; }

static MPI_Datatype type_of(kind k)
{
    switch (k) {
    case K_U8: return MPI_UNSIGNED_CHAR;
    case K_U16: return MPI_UNSIGNED_SHORT;
    case K_INT: return MPI_INT;
    case K_FLOAT: return MPI_FLOAT;
    case K_DOUBLE: return MPI_DOUBLE;
    case K_ULL: return MPI_UNSIGNED_LONG_LONG;
    case K_FCPLX: return MPI_C_FLOAT_COMPLEX;
    case K_DCPLX: return MPI_C_DOUBLE_COMPLEX;
    default: return MPI_LONG_DOUBLE;
    }
}

static size_t size_of(kind k)
{
    int s;
    MPI_Type_size(type_of(k), &s);
    return (size_t)s;
}

/* The origin operand: 1 for sums, 3 for the product. */
static void operand(kind k, void *p)
{
    switch (k) {
    case K_U8: *(unsigned char *)p = 1; break;
    case K_U16: *(unsigned short *)p = 1; break;
    case K_INT: *(int *)p = 1; break;
    case K_FLOAT: *(float *)p = 1.0f; break;
    case K_DOUBLE: *(double *)p = 1.0; break;
    case K_ULL: *(unsigned long long *)p = 3; break;
    case K_FCPLX: *(float complex *)p = 1.0f; break;
    case K_DCPLX: *(double complex *)p = 1.0; break;
    case K_LDBL: *(long double *)p = 1.0L; break;
    }
}

/* The starting value: 0 for sums, 1 for the product. */
static void start(kind k, void *p)
{
    memset(p, 0, size_of(k));
    if (k == K_ULL)
        *(unsigned long long *)p = 1;
}

/* Does the element at p (maybe unaligned) hold the result of `updates` updates? */
static int holds(kind k, const void *p, long updates)
{
    unsigned long long prod = 1;
    for (long i = 0; k == K_ULL && i < updates; i++)
        prod *= 3; /* modulo 2^64, the same in any order */
    union {
        unsigned char u8;
        unsigned short u16;
        int i;
        float f;
        double d;
        unsigned long long ull;
        float complex fc;
        double complex dc;
        long double ld;
    } v;
    memcpy(&v, p, size_of(k));
    switch (k) {
    case K_U8: return v.u8 == (unsigned char)updates;
    case K_U16: return v.u16 == (unsigned short)updates;
    case K_INT: return v.i == updates;
    case K_FLOAT: return v.f == (float)updates;
    case K_DOUBLE: return v.d == (double)updates;
    case K_ULL: return v.ull == prod;
    case K_FCPLX: return crealf(v.fc) == (float)updates && cimagf(v.fc) == 0.0f;
    case K_DCPLX: return creal(v.dc) == (double)updates && cimag(v.dc) == 0.0;
    default: return v.ld == (long double)updates;
    }
}

static uint64_t stat_of(MPI_Win win, int atomic)
{
    const fr_win *w = fr_win_lookup(win);
    return atomic ? w->st.acc_atomic : w->st.acc_locked;
}

static long long sum_over_ranks(long long x)
{
    long long s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

static void run_case(const acase *c, char *base, MPI_Win win, int shared_on)
{
    size_t es = size_of(c->k);
    int n = count_of(c, rank), span = c->n > c->n_odd ? c->n : c->n_odd;
    MPI_Datatype t = type_of(c->k), target = t;
    int tcount = n;
    if (c->stride > 1) {
        MPI_Type_vector(n, 1, c->stride, t, &target);
        MPI_Type_commit(&target);
        tcount = 1;
    }
    unsigned char *src = xmalloc((size_t)n * es);
    for (int i = 0; i < n; i++)
        operand(c->k, src + (size_t)i * es);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < span * c->stride; i++)
        start(c->k, base + c->offset + (size_t)i * es);
    MPI_Win_unlock(rank, win);
    MPI_Op op = c->k == K_ULL ? MPI_PROD : MPI_SUM;
    uint64_t a0 = stat_of(win, 1), l0 = stat_of(win, 0);
    int rounds = c->k == K_U8 ? ROUNDS_U8 : ROUNDS;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < rounds; r++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Accumulate(src, n, t, 0, c->offset, tcount, target, op, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        int lost = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        for (int i = 0; i < span; i++) {
            long updates = 0;
            for (int r = 0; r < nprocs; r++)
                updates += i < count_of(c, r) ? rounds : 0;
            lost += !holds(c->k, base + c->offset + (size_t)i * c->stride * es, updates);
        }
        for (int i = 0; i < span * c->stride; i++) /* the gaps of a strided layout */
            if (i % c->stride != 0) {
                unsigned char zero[32];
                start(c->k, zero);
                lost += memcmp(base + c->offset + (size_t)i * es, zero, es) != 0;
            }
        MPI_Win_unlock(0, win);
        is_int(lost, 0, "%s: accumulates from every member at once lose no update", c->name);
    } else {
        ok(1, "%s: no update lost (checked at rank 0)", c->name);
    }
    long long atomic = sum_over_ranks((long long)(stat_of(win, 1) - a0));
    long long locked = sum_over_ranks((long long)(stat_of(win, 0) - l0));
    long long want[2] = {0, 0}; /* by way */
    for (int r = 0; r < nprocs; r++)
        want[way_of(c, r)] += (long long)rounds * count_of(c, r);
    if (!shared_on)
        ok(atomic == 0 && locked == 0, "%s: combined whole by its owner alone (atomic %lld, "
           "exclusive %lld)", c->name, atomic, locked);
    else
        ok(atomic == want[ATOMIC] && locked == want[LOCKED], "%s: elements combined with "
           "hardware atomics %lld (expected %lld), holding their stripe %lld (expected %lld)",
           c->name, atomic, want[ATOMIC], locked, want[LOCKED]);
    if (target != t)
        MPI_Type_free(&target);
    free(src);
}

int main(int argc, char **argv)
{
    const MPI_Aint edge = FR_ACC_STRIPE_BYTES - 4 * 8; /* 4 doubles before a stripe ends */
    const acase cases[] = {
        {"one unsigned char", K_U8, 1, 0, 1, ATOMIC, 0},
        {"one unsigned short", K_U16, 1, 0, 1, ATOMIC, 0},
        {"int sum", K_INT, 4, 0, 1, ATOMIC, 0},
        {"int sum split by a stripe boundary", K_INT, 8, edge, 1, ATOMIC, 0},
        {"one float", K_FLOAT, 1, 0, 1, ATOMIC, 0},
        {"double sum", K_DOUBLE, 1, 0, 1, ATOMIC, 0},
        {"one unsigned long long product", K_ULL, 1, 0, 1, ATOMIC, 0},
        {"one float complex", K_FCPLX, 1, 0, 1, ATOMIC, 0},
        {"8 and 64 ints at once", K_INT, 8, 0, 1, ATOMIC, 64},
        {"1 and 64 doubles at once", K_DOUBLE, 1, 0, 1, ATOMIC, 64},
        {"unsigned char sum of 8", K_U8, 8, 0, 1, LOCKED, 0},
        {"unsigned short sum of 8", K_U16, 8, 0, 1, LOCKED, 0},
        {"float sum of 8", K_FLOAT, 8, 0, 1, LOCKED, 0},
        {"8 doubles over a stripe boundary, both stripes held", K_DOUBLE, 8, edge, 1, LOCKED, 0},
        {"double sum into a strided layout", K_DOUBLE, 6, 0, 3, LOCKED, 0},
        {"unsigned long long product of 4", K_ULL, 4, 0, 1, LOCKED, 0},
        {"float complex sum of 8", K_FCPLX, 8, 0, 1, LOCKED, 0},
        {"int sum of 64", K_INT, 64, 0, 1, LOCKED, 0},
        {"int sum over batches and stripes", K_INT, 9000, 0, 1, LOCKED, 0},
        {"double sum into a long strided layout", K_DOUBLE, 100, 0, 3, LOCKED, 0},
        {"double complex sum over stripes", K_DCPLX, 2500, 0, 1, LOCKED, 0},
        {"long double sum", K_LDBL, 4, 0, 1, LOCKED, 0},
        {"unaligned int sum", K_INT, 4, 1, 1, LOCKED, 0},
        {"one unaligned int", K_INT, 1, 1, 1, LOCKED, 0},
        {"one double complex off its alignment", K_DCPLX, 1, 8, 1, LOCKED, 0},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);

    test_init(&argc, &argv);
    int shared_on = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct;
    tap_plan(2 * ncases);
    char *base;
    MPI_Win win;
    MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &base);
    memset(base, 0, WIN_BYTES);
    MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < ncases; i++)
        run_case(&cases[i], base, win, shared_on);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    return test_done();
}
