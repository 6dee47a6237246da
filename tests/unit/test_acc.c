/* test_acc.c - accumulate operations (acc.c). One process; run with mpirun -np 1.
 *
 * fr_op_check must accept exactly the (op, type) pairs the MPI library's own MPI_Reduce_local
 * accepts (plus MPI_REPLACE on every type), and at least those of the MPI-2.2 section 5.9.2 table
 * written out independently below;
 * fr_acc_apply with MPI_Reduce_local (or a plain copy for MPI_REPLACE) applied by hand, for every
 * op on every type it accepts; then the layouts that need care: strided targets, pair types
 * with padding, unaligned operands, inputs larger than one internal chunk.
 */
#include "core/mpi_compat.h"
#include "dtype/acc.h"
#include "node/shm_lock.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define NOPS 14
#define OTHER_CHECKS 15

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static const fr_dtype *predef(MPI_Datatype t)
{
    return fr_dtype_predef((uint64_t)fr_dtype_predef_index(t));
}

static const fr_dtype *describe(MPI_Datatype t)
{
    fr_dtype *d = NULL;
    MPI_Type_commit(&t);
    fr_dtype_get(t, &d);
    return d;
}

/* ---- the standard's table ---- */

enum { C_INT, F_INT, FLOATING, LOGICAL, COMPLEX, BYTE, MULTI, PAIR, OTHER, NCLASS };

typedef struct known {
    MPI_Datatype t;
    int c;
} known;

static int class_of(MPI_Datatype t)
{
    /* handles are not constants in every MPI: built at run time */
    const known list[] = {
        {MPI_INT, C_INT}, {MPI_LONG, C_INT}, {MPI_SHORT, C_INT}, {MPI_UNSIGNED_SHORT, C_INT},
        {MPI_UNSIGNED, C_INT}, {MPI_UNSIGNED_LONG, C_INT}, {MPI_LONG_LONG_INT, C_INT},
        {MPI_LONG_LONG, C_INT}, {MPI_UNSIGNED_LONG_LONG, C_INT}, {MPI_SIGNED_CHAR, C_INT},
        {MPI_UNSIGNED_CHAR, C_INT}, {MPI_INT8_T, C_INT}, {MPI_INT16_T, C_INT},
        {MPI_INT32_T, C_INT}, {MPI_INT64_T, C_INT}, {MPI_UINT8_T, C_INT}, {MPI_UINT16_T, C_INT},
        {MPI_UINT32_T, C_INT}, {MPI_UINT64_T, C_INT},
        {MPI_INTEGER, F_INT},
#ifdef MPI_INTEGER1
        {MPI_INTEGER1, F_INT},
#endif
#ifdef MPI_INTEGER2
        {MPI_INTEGER2, F_INT},
#endif
#ifdef MPI_INTEGER4
        {MPI_INTEGER4, F_INT},
#endif
#ifdef MPI_INTEGER8
        {MPI_INTEGER8, F_INT},
#endif
        {MPI_FLOAT, FLOATING}, {MPI_DOUBLE, FLOATING}, {MPI_LONG_DOUBLE, FLOATING},
        {MPI_REAL, FLOATING}, {MPI_DOUBLE_PRECISION, FLOATING},
#ifdef MPI_REAL4
        {MPI_REAL4, FLOATING},
#endif
#ifdef MPI_REAL8
        {MPI_REAL8, FLOATING},
#endif
        {MPI_LOGICAL, LOGICAL}, {MPI_C_BOOL, LOGICAL},
        {MPI_COMPLEX, COMPLEX}, {MPI_DOUBLE_COMPLEX, COMPLEX}, {MPI_C_COMPLEX, COMPLEX},
        {MPI_C_FLOAT_COMPLEX, COMPLEX}, {MPI_C_DOUBLE_COMPLEX, COMPLEX},
        {MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX},
#ifdef MPI_COMPLEX8
        {MPI_COMPLEX8, COMPLEX},
#endif
#ifdef MPI_COMPLEX16
        {MPI_COMPLEX16, COMPLEX},
#endif
        {MPI_BYTE, BYTE},
        {MPI_AINT, MULTI}, {MPI_OFFSET, MULTI}, {MPI_COUNT, MULTI},
        {MPI_FLOAT_INT, PAIR}, {MPI_DOUBLE_INT, PAIR}, {MPI_LONG_INT, PAIR}, {MPI_2INT, PAIR},
        {MPI_SHORT_INT, PAIR}, {MPI_LONG_DOUBLE_INT, PAIR}, {MPI_2REAL, PAIR},
        {MPI_2DOUBLE_PRECISION, PAIR}, {MPI_2INTEGER, PAIR},
        {MPI_CHAR, OTHER}, {MPI_WCHAR, OTHER}, {MPI_PACKED, OTHER}, {MPI_CHARACTER, OTHER},
    };
    for (size_t i = 0; i < sizeof list / sizeof *list; i++)
        if (list[i].t == t)
            return list[i].c;
    return -1;
}

static int allowed(MPI_Op op, int c)
{
    int integer = c == C_INT || c == F_INT || c == MULTI;
    if (op == MPI_SUM || op == MPI_PROD)
        return integer || c == FLOATING || c == COMPLEX;
    if (op == MPI_MAX || op == MPI_MIN)
        return integer || c == FLOATING;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return c == C_INT || c == LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return integer || c == BYTE;
    if (op == MPI_MAXLOC || op == MPI_MINLOC)
        return c == PAIR;
    return op == MPI_REPLACE || op == MPI_NO_OP;
}

/* Does the MPI library reduce one element of t with op? Asked directly, errors returned. */
static int library_reduces(MPI_Op op, MPI_Datatype t)
{
    if (fr_mpi_reduce_aborts(op, t)) /* the library would abort instead of answering */
        return 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    long double in[4] = {0}, inout[4] = {0};
    int rc = MPI_Reduce_local(in, inout, 1, t, op);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return rc == MPI_SUCCESS;
}

static const char *tname(MPI_Datatype t, char *buf)
{
    int len;
    MPI_Type_get_name(t, buf, &len);
    return buf;
}

/* ---- every op on every type ---- */

/* Bytes of 0 and 1: valid for every type (bools included), deterministic for floats. */
static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(((i * 7 + seed) % 5) < 2);
}

/* The data bytes of n elements of t at a and b agree (padding, e.g. of MPI_SHORT_INT, is not
 * data: MPI_Reduce_local may copy it or not). */
static int same_data(const void *a, const void *b, int n, MPI_Datatype t, size_t bytes)
{
    unsigned char *pa = malloc(bytes), *pb = malloc(bytes);
    int p1 = 0, p2 = 0, same;

    MPI_Pack(a, n, t, pa, (int)bytes, &p1, MPI_COMM_SELF);
    MPI_Pack(b, n, t, pb, (int)bytes, &p2, MPI_COMM_SELF);
    same = memcmp(pa, pb, bytes) == 0;
    free(pa);
    free(pb);
    return same;
}

/* Stripe lock words as a state page holds them: fr_acc_apply then combines as it does where node
 * peers may combine at the same time (hardware atomics, or holding a stripe). */
static fr_lockword stripes[FR_ACC_STRIPES];

/* fr_acc_apply on 5 consecutive elements (the predefined description as target layout), with
 * `packed` at an offset `mis` from an aligned address, against MPI_Reduce_local by hand; alone,
 * fetching the values before (Get_accumulate), and fetching where others may combine too. */
static int apply_matches(MPI_Op op, const fr_dtype *e, size_t mis)
{
    enum { N = 5 };
    size_t tb = N * (size_t)e->extent, pb = N * (size_t)e->size;
    unsigned char *target = calloc(tb, 1), *ref = calloc(tb, 1), *in = calloc(tb, 1);
    unsigned char *raw = calloc(pb + 16, 1), *packed = raw + mis;
    unsigned char *before = calloc(pb, 1), *fetched = calloc(pb, 1);
    int pos = 0, good = 1;

    pattern(target, tb, 1);
    pattern(packed, pb, 3);
    MPI_Pack(target, N, e->handle, before, (int)pb, &pos, MPI_COMM_SELF);
    for (int way = 0; way < 3 && good; way++) {
        fr_acc_share share = {.base = (const char *)target, .stripes = stripes};
        pattern(target, tb, 1);
        memcpy(ref, target, tb);
        pos = 0;
        if (op == MPI_REPLACE) {
            MPI_Unpack(packed, (int)pb, &pos, ref, N, e->handle, MPI_COMM_SELF);
        } else if (op != MPI_NO_OP) {
            MPI_Unpack(packed, (int)pb, &pos, in, N, e->handle, MPI_COMM_SELF);
            fr_mpi_reduce_local(in, ref, N, e->handle, op); /* the library's, but right */
        }
        memset(fetched, 0xee, pb);
        good = fr_acc_apply(way == 2 ? &share : NULL, target, N, e, packed, pb, op,
                            way ? fetched : NULL) == MPI_SUCCESS &&
               same_data(target, ref, N, e->handle, pb) &&
               (way == 0 || memcmp(fetched, before, pb) == 0);
        if (!good)
            diag("%s way %d differs", way == 0 ? "apply" : way == 1 ? "fetch" : "shared fetch", way);
    }
    free(target);
    free(ref);
    free(in);
    free(raw);
    free(before);
    free(fetched);
    return good;
}

static void test_op(int oi)
{
    MPI_Op op = fr_op_handle(oi);
    const char *name = fr_op_name(oi);
    int table_ok = 1, apply_ok = 1, ntypes = 0, naccepted = 0, nbeyond = 0;
    char buf[MPI_MAX_OBJECT_NAME];

    for (uint64_t i = 0; i < 512; i++) {
        const fr_dtype *e = fr_dtype_predef(i);
        int c, rc, want;
        if (!e || fr_dtype_predef_index(e->handle) != (int)i)
            continue; /* unavailable, or an alias */
        ntypes++;
        c = class_of(e->handle);
        if (c < 0) {
            diag("type %s is not in the test's table", tname(e->handle, buf));
            table_ok = 0;
            continue;
        }
        want = op == MPI_REPLACE || op == MPI_NO_OP || library_reduces(op, e->handle);
        rc = fr_op_check(op, e->handle);
        if (want != (rc == MPI_SUCCESS) || (!want && err_class(rc) != MPI_ERR_OP) ||
            (allowed(op, c) && !want)) {
            diag("%s on %s: fr_op_check gave %d (the library %s it, MPI-2.2 %s it)", name,
                 tname(e->handle, buf), rc, want ? "accepts" : "refuses",
                 allowed(op, c) ? "allows" : "does not allow");
            table_ok = 0;
        }
        nbeyond += want && !allowed(op, c);
        if (!want || rc != MPI_SUCCESS)
            continue;
        naccepted++;
        if (!apply_matches(op, e, 0) || !apply_matches(op, e, 1)) {
            diag("%s on %s: result differs from MPI_Reduce_local", name, tname(e->handle, buf));
            apply_ok = 0;
        }
    }
    ok(table_ok, "%s: accepted exactly where the library reduces, a superset of the standard's "
       "types (%d of %d; %d beyond the standard)", name, naccepted, ntypes, nbeyond);
    ok(apply_ok && naccepted > 0, "%s: applies like MPI_Reduce_local, aligned or not", name);
}

/* ---- layouts ---- */

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
}

static void test_checks(void)
{
    MPI_Op user;
    int rc, names = 1;

    rc = fr_op_check(MPI_OP_NULL, MPI_INT);
    is_int(err_class(rc), MPI_ERR_OP, "MPI_OP_NULL rejected with MPI_ERR_OP");
    MPI_Op_create(user_fn, 1, &user);
    rc = fr_op_check(user, MPI_INT);
    is_int(err_class(rc), MPI_ERR_OP, "user-defined op rejected with MPI_ERR_OP");
    MPI_Op_free(&user);
    rc = fr_op_check(MPI_SUM, MPI_DATATYPE_NULL);
    is_int(err_class(rc), MPI_ERR_TYPE, "mixed element types rejected with MPI_ERR_TYPE");
    for (int i = 0; i < NOPS; i++)
        names &= fr_op_index(fr_op_handle(i)) == i && fr_op_name(i) &&
                 strncmp(fr_op_name(i), "MPI_", 4) == 0;
    ok(names && fr_op_handle(NOPS) == MPI_OP_NULL && fr_op_handle(-1) == MPI_OP_NULL &&
           fr_op_index(MPI_OP_NULL) == -1 && fr_op_index(MPI_REPLACE) >= 0,
       "op index, handle and name agree");
}

static void test_strided(void)
{
    MPI_Datatype v;
    const fr_dtype *d;
    int target[16], sum[16], repl[16], packed[8];

    MPI_Type_vector(4, 1, 2, MPI_INT, &v);
    d = describe(v);
    for (int i = 0; i < 16; i++)
        target[i] = sum[i] = repl[i] = 100 + i;
    for (int i = 0; i < 8; i++)
        packed[i] = i + 1;
    /* vector(4,1,2) has an extent of 7 ints: 2 elements cover 0,2,4,6 and 7,9,11,13 */
    for (int e = 0; e < 2; e++)
        for (int j = 0; j < 4; j++) {
            sum[7 * e + 2 * j] += packed[4 * e + j];
            repl[7 * e + 2 * j] = packed[4 * e + j];
        }
    ok(fr_acc_apply(NULL, target, 2, d, packed, sizeof packed, MPI_SUM, NULL) == MPI_SUCCESS,
       "MPI_SUM on a strided target");
    ok(memcmp(target, sum, sizeof sum) == 0, "strided MPI_SUM: data summed, gaps untouched");
    for (int i = 0; i < 16; i++)
        target[i] = 100 + i;
    ok(fr_acc_apply(NULL, target, 2, d, packed, sizeof packed, MPI_REPLACE, NULL) == MPI_SUCCESS &&
           memcmp(target, repl, sizeof repl) == 0,
       "MPI_REPLACE on a strided target stores data, leaves gaps");
    is_int(err_class(fr_acc_apply(NULL, target, 2, d, packed, sizeof packed - 4, MPI_SUM, NULL)),
           MPI_ERR_TYPE, "payload size mismatch rejected with MPI_ERR_TYPE");
    MPI_Type_free(&v);
}

typedef struct {
    double v;
    int k;
} dbl_int;

static void test_pairs(void)
{
    dbl_int target[4] = {{1.0, 0}, {5.0, 1}, {2.0, 2}, {7.0, 3}};
    unsigned char packed[4 * 12];
    const dbl_int in[4] = {{3.0, 10}, {5.0, 0}, {1.0, 12}, {7.5, 13}};
    MPI_Datatype v, r;
    const fr_dtype *d;
    int good;

    for (int i = 0; i < 4; i++) { /* the packed form: 12 bytes per pair, no padding */
        memcpy(packed + 12 * i, &in[i].v, 8);
        memcpy(packed + 12 * i + 8, &in[i].k, 4);
    }
    good = fr_acc_apply(NULL, target, 4, predef(MPI_DOUBLE_INT), packed, sizeof packed,
                        MPI_MAXLOC, NULL) ==
           MPI_SUCCESS;
    ok(good && target[0].v == 3.0 && target[0].k == 10 && target[1].v == 5.0 &&
           target[1].k == 0 && target[2].v == 2.0 && target[2].k == 2 && target[3].v == 7.5 &&
           target[3].k == 13,
       "MPI_MAXLOC on MPI_DOUBLE_INT (ties keep the lower index)");

    /* MINLOC through a vector of pairs: elements 0 and 2 */
    {
        const dbl_int in2[2] = {{0.5, 20}, {2.0, 1}};
        unsigned char p2[24];
        for (int i = 0; i < 2; i++) {
            memcpy(p2 + 12 * i, &in2[i].v, 8);
            memcpy(p2 + 12 * i + 8, &in2[i].k, 4);
        }
        MPI_Type_vector(2, 1, 2, MPI_DOUBLE_INT, &v);
        d = describe(v);
        good = fr_acc_apply(NULL, target, 1, d, p2, sizeof p2, MPI_MINLOC, NULL) == MPI_SUCCESS;
        ok(good && target[0].v == 0.5 && target[0].k == 20 && target[2].v == 2.0 &&
               target[2].k == 1 && target[1].v == 5.0 && target[1].k == 0 && target[3].k == 13,
           "MPI_MINLOC on a strided vector of MPI_DOUBLE_INT");
        MPI_Type_free(&v);
    }

    /* A contiguous target whose element type has padding: pairs packed 12 bytes apart */
    {
        unsigned char t12[36];
        MPI_Type_create_resized(MPI_DOUBLE_INT, 0, 12, &r);
        d = describe(r);
        memcpy(t12, packed, 36);
        for (int i = 0; i < 3; i++) {
            double x = 4.0;
            memcpy(t12 + 12 * i, &x, 8);
        }
        good = d->contiguous && fr_acc_apply(NULL, t12, 3, d, packed, 36, MPI_MAXLOC, NULL) == MPI_SUCCESS;
        for (int i = 0; i < 3; i++) {
            double x;
            int k;
            memcpy(&x, t12 + 12 * i, 8);
            memcpy(&k, t12 + 12 * i + 8, 4);
            good &= x == (in[i].v > 4.0 ? in[i].v : 4.0) && k == in[i].k;
        }
        ok(good, "MPI_MAXLOC on a contiguous target of 12-byte MPI_DOUBLE_INT");
        MPI_Type_free(&r);
    }
}

static void test_big_and_unaligned(void)
{
    enum { N = 200000 };
    MPI_Datatype v, s;
    const fr_dtype *d;
    int *target = malloc(2 * N * sizeof(int)), *packed = malloc(N * sizeof(int)), good = 1;
    unsigned char raw[8 * 5 + 1];
    double x[5];

    MPI_Type_vector(N, 1, 2, MPI_INT, &v);
    d = describe(v);
    for (int i = 0; i < 2 * N; i++)
        target[i] = i;
    for (int i = 0; i < N; i++)
        packed[i] = 3;
    good = fr_acc_apply(NULL, target, 1, d, packed, N * sizeof(int), MPI_PROD, NULL) == MPI_SUCCESS;
    for (int i = 0; i < 2 * N && good; i++)
        good = target[i] == (i % 2 ? i : 3 * i);
    ok(good, "MPI_PROD over %d strided elements (several internal chunks)", N);
    MPI_Type_free(&v);
    free(target);
    free(packed);

    /* an unaligned contiguous target */
    for (int i = 0; i < 5; i++)
        x[i] = i + 0.5;
    memcpy(raw + 1, x, sizeof x);
    good = fr_acc_apply(NULL, raw + 1, 5, predef(MPI_DOUBLE), x, sizeof x, MPI_SUM, NULL) == MPI_SUCCESS;
    memcpy(x, raw + 1, sizeof x);
    ok(good && x[0] == 1.0 && x[4] == 9.0, "MPI_SUM on an unaligned MPI_DOUBLE target");

    /* a struct of mixed types has no single element type */
    {
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, disp, types, &s);
        d = describe(s);
        is_int(err_class(fr_acc_apply(NULL, raw, 1, d, raw, 12, MPI_SUM, NULL)), MPI_ERR_TYPE,
               "accumulate on a mixed struct rejected with MPI_ERR_TYPE");
        MPI_Type_free(&s);
    }
}

/* v as an unsigned integer of n bytes at p. */
static void store_n(unsigned char *p, size_t n, uint64_t v)
{
    uint8_t v1 = (uint8_t)v;
    uint16_t v2 = (uint16_t)v;
    uint32_t v4 = (uint32_t)v;
    memcpy(p, n == 1 ? (void *)&v1 : n == 2 ? (void *)&v2 : n == 4 ? (void *)&v4 : (void *)&v, n);
}

/* MPI_MIN and MPI_MAX on unsigned integers compare them as unsigned (mpi_compat.h: MPICH 4.0.2
 * compares them as signed): 0x80.. against 9, in every unsigned type, through fr_acc_apply. */
static void test_unsigned_min_max(void)
{
    const MPI_Datatype types[] = {MPI_UNSIGNED_CHAR, MPI_UINT8_T, MPI_UNSIGNED_SHORT,
                                  MPI_UINT16_T, MPI_UNSIGNED, MPI_UINT32_T, MPI_UNSIGNED_LONG,
                                  MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T};
    int good = 1;
    char buf[MPI_MAX_OBJECT_NAME];
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        for (int max = 0; max < 2; max++) {
            const fr_dtype *e = predef(types[i]);
            size_t n = (size_t)e->size;
            unsigned char big[8] = {0}, nine[8] = {0}, target[8] = {0};
            store_n(big, n, 1ull << (8 * n - 1));
            store_n(nine, n, 9);
            memcpy(target, nine, n);
            int rc = fr_acc_apply(NULL, target, 1, e, big, n, max ? MPI_MAX : MPI_MIN, NULL);
            if (rc != MPI_SUCCESS || memcmp(target, max ? big : nine, n) != 0) {
                diag("%s on %s: not an unsigned comparison", max ? "MPI_MAX" : "MPI_MIN",
                     tname(types[i], buf));
                good = 0;
            }
        }
    ok(good, "MPI_MIN and MPI_MAX compare unsigned integers as unsigned");
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    /* an unsupported (op, type) reaching MPI_Reduce_local should fail a test, not abort */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tap_plan(2 * NOPS + OTHER_CHECKS);
    for (int i = 0; i < NOPS; i++)
        test_op(i);
    test_checks();          /* 4 */
    test_strided();         /* 4 */
    test_pairs();           /* 3 */
    test_big_and_unaligned(); /* 3 */
    test_unsigned_min_max(); /* 1 */
    rc = tap_done();
    MPI_Finalize();
    return rc;
}
