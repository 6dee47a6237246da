/* t_accumulate.c - MPI_Accumulate with every predefined operation on the predefined types MPI
 * allows for it (MPI-2.2 section 5.9.2): SUM, PROD, MAX, MIN on integers and floating point
 * (SUM/PROD on double complex too), LAND/LOR/LXOR on integers and C_BOOL, BAND/BOR/BXOR on
 * integers and MPI_BYTE, MAXLOC/MINLOC on MPI_2INT and MPI_DOUBLE_INT, and MPI_REPLACE.
 *
 * In each case every rank accumulates into the same elements of every rank at once (one fence
 * epoch); the expected result is computed by applying the same operation with MPI_Reduce_local,
 * rank after rank. Values are small integers, so floating point results are exact whatever the
 * order. Then atomicity under shared locks: many concurrent accumulates to the same counters
 * and arrays must give the exact sums, and concurrent REPLACEs never tear an element. */
#include "common.h"

#include <complex.h>
#include <stddef.h>
#include <stdbool.h>

#define COUNT 8      /* elements per case... */
#define LARGE 9000   /* ...and again with more than flexrma's default eager size (8 KiB) */
#define ELEM 16      /* largest element extent (double complex, double_int) */

enum tkind { T_INT, T_UNSIGNED, T_LL, T_FLOAT, T_DOUBLE, T_SCHAR, T_UCHAR, T_BYTE, T_BOOL,
             T_DCOMPLEX, T_2INT, T_DOUBLE_INT, T__N };

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t ext;
} tdesc;

typedef struct {
    double v;
    int i;
} double_int;

static tdesc types[T__N];

static void init_types(void)
{
    tdesc t[T__N] = {
        [T_INT] = {"MPI_INT", MPI_INT, sizeof(int)},
        [T_UNSIGNED] = {"MPI_UNSIGNED", MPI_UNSIGNED, sizeof(unsigned)},
        [T_LL] = {"MPI_LONG_LONG", MPI_LONG_LONG, sizeof(long long)},
        [T_FLOAT] = {"MPI_FLOAT", MPI_FLOAT, sizeof(float)},
        [T_DOUBLE] = {"MPI_DOUBLE", MPI_DOUBLE, sizeof(double)},
        [T_SCHAR] = {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1},
        [T_UCHAR] = {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1},
        [T_BYTE] = {"MPI_BYTE", MPI_BYTE, 1},
        [T_BOOL] = {"MPI_C_BOOL", MPI_C_BOOL, sizeof(bool)},
        [T_DCOMPLEX] = {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, sizeof(double complex)},
        [T_2INT] = {"MPI_2INT", MPI_2INT, 2 * sizeof(int)},
        [T_DOUBLE_INT] = {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(double_int)},
    };
    memcpy(types, t, sizeof t);
}

enum opkind { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
              O_MAXLOC, O_MINLOC, O_REPLACE, O__N };
static const char *op_name[O__N] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND",
                                    "BOR", "BXOR", "MAXLOC", "MINLOC", "REPLACE"};
static MPI_Op ops[O__N];

static void init_ops(void)
{
    MPI_Op o[O__N] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                      MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE};
    memcpy(ops, o, sizeof o);
}

/* The (op, type) pairs MPI-2.2 defines, and which this test runs. */
static int applies(int op, int t)
{
    int integer = t == T_INT || t == T_UNSIGNED || t == T_LL || t == T_SCHAR || t == T_UCHAR;
    int fp = t == T_FLOAT || t == T_DOUBLE, pair = t == T_2INT || t == T_DOUBLE_INT;
    switch (op) {
    case O_MAX: case O_MIN: return integer || fp;
    case O_SUM: case O_PROD: return integer || fp || t == T_DCOMPLEX;
    case O_LAND: case O_LOR: case O_LXOR: return integer || t == T_BOOL;
    case O_BAND: case O_BOR: case O_BXOR: return integer || t == T_BYTE;
    case O_MAXLOC: case O_MINLOC: return pair;
    case O_REPLACE: return t == T_INT || t == T_DOUBLE || t == T_BYTE || t == T_DCOMPLEX || pair;
    }
    return 0;
}

/* Element i contributed by `who` (a rank; 100 + rank for a window's initial value), as a small
 * integer v (and aux: imaginary part or location) chosen to suit the operation. */
static long long value(int op, int t, int who, int i_full, long long *aux)
{
    static const int prod[] = {1, 2, -1, -2};
    int unsig = t == T_UNSIGNED || t == T_UCHAR, i = i_full % 13; /* sums fit a signed char */
    *aux = 0;
    switch (op) {
    case O_PROD:
        if (t == T_DCOMPLEX) {
            static const int re[] = {1, 0, -1, 2}, im[] = {0, 1, 1, -1};
            *aux = im[(who * 3 + i) % 4];
            return re[(who + i) % 4];
        }
        return unsig ? prod[(who + i) % 2] : prod[(who + i) % 4];
    case O_SUM:
        *aux = i - who % 3;
        return (who % 5) + i - (unsig ? 0 : 2);
    case O_MAX: case O_MIN:
        return (who * 7 + i * 5) % 11 - (unsig ? 0 : 5);
    case O_LAND: case O_LOR: case O_LXOR:
        return (who + i) % 3; /* 2 is true as well */
    case O_BAND: case O_BOR: case O_BXOR:
        return (who * 37 + i * 11 + 5) & 0x7f;
    case O_MAXLOC: case O_MINLOC:
        *aux = who * 10 + i_full; /* ties on the value are frequent: the lower location wins */
        return (who + i) % 3;
    default: /* REPLACE */
        *aux = -(who * 100 + i_full + 1);
        return who * 100 + i_full + 1;
    }
}

static void store(int t, void *p, long long v, long long aux)
{
    switch (t) {
    case T_INT: *(int *)p = (int)v; break;
    case T_UNSIGNED: *(unsigned *)p = (unsigned)v; break;
    case T_LL: *(long long *)p = v; break;
    case T_FLOAT: *(float *)p = (float)v; break;
    case T_DOUBLE: *(double *)p = (double)v; break;
    case T_SCHAR: *(signed char *)p = (signed char)v; break;
    case T_UCHAR: case T_BYTE: *(unsigned char *)p = (unsigned char)v; break;
    case T_BOOL: *(bool *)p = v != 0; break;
    case T_DCOMPLEX: *(double complex *)p = (double)v + (double)aux * I; break;
    case T_2INT: ((int *)p)[0] = (int)v; ((int *)p)[1] = (int)aux; break;
    case T_DOUBLE_INT: ((double_int *)p)->v = (double)v; ((double_int *)p)->i = (int)aux; break;
    }
}

static void fill(int op, int t, int who, unsigned char *buf, int count)
{
    memset(buf, 0, (size_t)count * ELEM); /* padding bytes too */
    for (int i = 0; i < count; i++) {
        long long aux, v = value(op, t, who, i, &aux);
        store(t, buf + i * types[t].ext, v, aux);
    }
}

/* 1 if the count elements are equal; floating point by value, since the sign of a zero
 * depends on the order in which the origins' contributions were applied. */
static int same_elements(int t, const unsigned char *got, const unsigned char *exp, int count)
{
    const size_t ext = types[t].ext;
    for (int i = 0; i < count; i++) {
        const void *g = got + i * ext, *e = exp + i * ext;
        int eq;
        switch (t) {
        case T_FLOAT: eq = *(const float *)g == *(const float *)e; break;
        case T_DOUBLE: eq = *(const double *)g == *(const double *)e; break;
        case T_DCOMPLEX: eq = *(const double complex *)g == *(const double complex *)e; break;
        case T_DOUBLE_INT:
            eq = ((const double_int *)g)->v == ((const double_int *)e)->v &&
                 ((const double_int *)g)->i == ((const double_int *)e)->i;
            break;
        default: eq = !memcmp(g, e, ext);
        }
        if (!eq) {
            diag("element %d differs; got bytes:", i);
            same_bytes(g, e, ext);
            return 0;
        }
    }
    return 1;
}

static unsigned char *mem; /* LARGE * ELEM bytes, disp_unit 1 */
static MPI_Win win;

/* Every rank accumulates `count` elements into every rank at once; compare with the reference
 * (1 test). For REPLACE the winner of each element is not defined: it must be one whole
 * contribution. */
static void one_case(int op, int t, int count)
{
    const size_t ext = types[t].ext, bytes = (size_t)count * ELEM;
    unsigned char *src = xmalloc(bytes), *exp = xmalloc(bytes), *tmp = xmalloc(bytes);
    fill(op, t, 100 + rank, mem, count);
    fill(op, t, rank, src, count);
    MPI_Win_fence(0, win);
    for (int d = 0; d < nprocs; d++)
        MPI_Accumulate(src, count, types[t].type, (rank + d) % nprocs, 0, count, types[t].type,
                       ops[op], win);
    MPI_Win_fence(0, win);

    if (op == O_REPLACE) {
        int bad = 0;
        unsigned char *all = xmalloc(bytes * (size_t)nprocs);
        for (int r = 0; r < nprocs; r++)
            fill(op, t, r, all + r * bytes, count);
        for (int i = 0; i < count; i++) {
            int match = 0;
            for (int r = 0; r < nprocs && !match; r++)
                match = !memcmp(mem + i * ext, all + r * bytes + i * ext, ext);
            bad += !match;
        }
        free(all);
        is_int(bad, 0, "REPLACE of %d %s from all ranks at once: elements that are no rank's value",
               count, types[t].name);
    } else {
        fill(op, t, 100 + rank, exp, count);
        for (int r = 0; r < nprocs; r++) {
            fill(op, t, r, tmp, count);
            MPI_Reduce_local(tmp, exp, count, types[t].type, ops[op]);
        }
        ok(same_elements(t, mem, exp, count), "%s of %d %s from all ranks at once", op_name[op],
           count, types[t].name);
    }
    free(src);
    free(exp);
    free(tmp);
    MPI_Barrier(MPI_COMM_WORLD); /* the next case rewrites the window before its fence */
}

/* Run (or just count) every (op, type) case with `count` elements. */
static int matrix(int count)
{
    int n = 0;
    for (int op = 0; op < O__N; op++)
        for (int t = 0; t < T__N; t++)
            if (applies(op, t)) {
                n++;
                if (count)
                    one_case(op, t, count);
            }
    return n;
}

/* REPLACE from one origin only is deterministic: the right neighbour's values (1 test). */
static void single_replace(void)
{
    unsigned char src[COUNT * ELEM], exp[COUNT * ELEM];
    fill(O_SUM, T_DOUBLE_INT, 100 + rank, mem, COUNT);
    fill(O_REPLACE, T_DOUBLE_INT, rank, src, COUNT);
    MPI_Win_fence(0, win);
    MPI_Accumulate(src, COUNT, MPI_DOUBLE_INT, right(), 0, COUNT, MPI_DOUBLE_INT, MPI_REPLACE, win);
    MPI_Win_fence(0, win);
    fill(O_REPLACE, T_DOUBLE_INT, left(), exp, COUNT);
    ok(same_elements(T_DOUBLE_INT, mem, exp, COUNT), "REPLACE on MPI_DOUBLE_INT from one origin");
}

/* Atomicity under shared locks held by every rank at the same time (4 tests). */
#define ITER 300
#define BIG 16384
#define NCPLX 1024
typedef struct {
    long long count;
    double half;
    int big[BIG];
    double complex c[NCPLX];
} shared_area;

static void atomicity(void)
{
    shared_area *a;
    MPI_Alloc_mem(sizeof *a, MPI_INFO_NULL, &a);
    memset(a, 0, sizeof *a);
    MPI_Win w2;
    MPI_Win_create(a, sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
    MPI_Barrier(MPI_COMM_WORLD);

    long long one = 1;
    double half = 0.5;
    for (int it = 0; it < ITER; it++) {
        int t = (rank + it) % nprocs;
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w2);
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, offsetof(shared_area, count), 1, MPI_LONG_LONG,
                       MPI_SUM, w2);
        MPI_Accumulate(&half, 1, MPI_DOUBLE, t, offsetof(shared_area, half), 1, MPI_DOUBLE,
                       MPI_SUM, w2);
        MPI_Win_unlock(t, w2);
    }
    int *big = xmalloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = rank + 1 + i % 5;
    for (int it = 0; it < 8; it++)
        for (int d = 0; d < nprocs; d++) {
            int t = (rank + d) % nprocs;
            MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w2);
            MPI_Accumulate(big, BIG, MPI_INT, t, offsetof(shared_area, big), BIG, MPI_INT, MPI_SUM, w2);
            MPI_Win_unlock(t, w2);
        }
    double complex *c = xmalloc(NCPLX * sizeof *c);
    for (int i = 0; i < NCPLX; i++)
        c[i] = (rank + 1) - (rank + 1) * I;
    for (int d = 0; d < nprocs; d++) {
        int t = (rank + d) % nprocs;
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w2);
        MPI_Accumulate(c, NCPLX, MPI_C_DOUBLE_COMPLEX, t, offsetof(shared_area, c), NCPLX,
                       MPI_C_DOUBLE_COMPLEX, MPI_REPLACE, w2);
        MPI_Win_unlock(t, w2);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w2);
    is_int(a->count, (long long)ITER, "%d shared-lock accumulates of 1 (long long) from all ranks",
           ITER);
    ok(a->half == ITER * 0.5, "%d shared-lock accumulates of 0.5 (double): %g", ITER, a->half);
    long bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += a->big[i] != 8 * (nprocs * (nprocs + 1) / 2 + nprocs * (i % 5));
    is_int(bad, 0, "8 x %d-int accumulates from every rank at once: wrong sums", BIG);
    bad = 0;
    for (int i = 0; i < NCPLX; i++) {
        double re = creal(a->c[i]);
        bad += re < 1 || re > nprocs || re != (int)re || cimag(a->c[i]) != -re;
    }
    is_int(bad, 0, "concurrent REPLACEs of %d double complex: torn or foreign elements", NCPLX);
    MPI_Win_unlock(rank, w2);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w2);
    MPI_Free_mem(a);
    free(big);
    free(c);
}

/* MPI_SUM on MPI_CHAR, outside MPI-2.2's table but reduced by Open MPI and MPICH alike (what
 * osu_acc_latency does): accepted, and exact (1 test). */
static void library_pairs(void)
{
    enum { TIMES = 10, N = 8 };
    char *bytes;
    MPI_Win cw;
    MPI_Alloc_mem(N, MPI_INFO_NULL, &bytes);
    memset(bytes, 0, N);
    MPI_Win_create(bytes, N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cw);
    MPI_Win_set_errhandler(cw, MPI_ERRORS_RETURN);
    char one[N];
    memset(one, 1, N);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < TIMES && rc == MPI_SUCCESS; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cw);
        rc = MPI_Accumulate(one, N, MPI_CHAR, 0, 0, N, MPI_CHAR, MPI_SUM, cw);
        MPI_Win_unlock(0, cw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = rc != MPI_SUCCESS;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cw);
        for (int i = 0; i < N; i++)
            bad += bytes[i] != (char)(TIMES * nprocs);
        MPI_Win_unlock(0, cw);
    }
    is_int(bad, 0, "MPI_SUM on MPI_CHAR from every rank (rc %d): wrong bytes", rc);
    MPI_Win_free(&cw);
    MPI_Free_mem(bytes);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    init_types();
    init_ops();
    tap_plan(2 * matrix(0) + 1 + 4 + 1);
    MPI_Alloc_mem(LARGE * ELEM, MPI_INFO_NULL, &mem);
    MPI_Win_create(mem, LARGE * ELEM, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    matrix(COUNT);
    matrix(LARGE);
    single_replace();
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    atomicity();
    library_pairs();

    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    return test_done();
}
