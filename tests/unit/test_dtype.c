/* test_dtype.c - datatype descriptions, wire form, packing and element runs (dtype.c,
 * dtype_wire.c, dtype_predef.c, dtype_runs.c). One process; run with mpirun -np 1.
 *
 * Every derived type below goes fr_dtype_get -> wire -> fr_dtype_decode, and the rebuilt type
 * must have the same size and extents, pack and unpack the same bytes at the same places, and
 * serialize to the same wire form. Malformed wire input (every truncation, crafted bad
 * arguments, random bytes, mutations of every valid wire form) must be rejected with an
 * MPI_ERR_TYPE-class code, never crash, and never reach MPI's fatal error handler.
 */
#include "dtype/dtype.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* fr_dtype_user_free reports the id that windows should forget; these tests have no windows. */
static uint64_t forgotten;

#define NTYPES 29
#define RT_CHECKS 9 /* checks per round-tripped type, see roundtrip() */
#define OTHER_CHECKS 35

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static MPI_Count type_size(MPI_Datatype t)
{
    MPI_Count size = 0;
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_size_x(t, &size);
    return size;
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

/* ---- buffers spanning count elements of a type ---- */

typedef struct span {
    unsigned char *mem;    /* allocation */
    unsigned char *origin; /* the buffer address MPI calls get */
    size_t len;
} span;

static span span_new(const fr_dtype *d, int count)
{
    long long last = (long long)(count - 1) * d->extent;
    long long lo = d->true_lb + (last < 0 ? last : 0);
    long long hi = d->true_lb + d->true_extent + (last > 0 ? last : 0);
    span s;

    if (d->size == 0)
        lo = hi = 0;
    s.len = (size_t)(hi - lo);
    s.mem = calloc(s.len + 1, 1);
    s.origin = s.mem - lo;
    return s;
}

/* ---- round trip ---- */

typedef struct rt {
    const char *name;
    MPI_Datatype t;
    MPI_Datatype elem; /* expected */
    int contiguous;    /* expected, or -1: not asserted */
    int f90_top;       /* top-level f90: the rebuilt handle is a dup, its wire differs */
} rt;

static unsigned char *mpi_pack(MPI_Datatype t, const void *buf, int count, int bytes)
{
    unsigned char *out = malloc((size_t)bytes + 1);
    int pos = 0;
    MPI_Pack(buf, count, t, out, bytes, &pos, MPI_COMM_SELF);
    return out;
}

/* Original packs, rebuilt unpacks: the same bytes land at the same places, nothing else is
 * written. The mask of data bytes comes from unpacking 0xFF bytes with the original. */
static int same_placement(const fr_dtype *d, const fr_dtype *r, const unsigned char *packed,
                          const span *a, size_t bytes)
{
    span b = span_new(d, 2), m = span_new(d, 2);
    unsigned char *ones = malloc(bytes + 1);
    int good = 1;

    memset(ones, 0xFF, bytes);
    if (fr_unpack(packed, bytes, b.origin, 2, r) != MPI_SUCCESS ||
        fr_unpack(ones, bytes, m.origin, 2, d) != MPI_SUCCESS)
        good = 0;
    for (size_t i = 0; good && i < a->len; i++)
        good = m.mem[i] ? b.mem[i] == a->mem[i] : b.mem[i] == 0;
    free(ones);
    free(b.mem);
    free(m.mem);
    return good;
}

/* Every proper prefix and one trailing byte too many are rejected with MPI_ERR_TYPE. */
static int rejects_truncations(const unsigned char *wire, size_t len)
{
    unsigned char *longer = malloc(len + 1);
    MPI_Datatype t;
    int good = 1;

    for (size_t n = 0; n < len && good; n++) {
        int rc = fr_dtype_decode(wire, n, &t);
        good = rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_TYPE && t == MPI_DATATYPE_NULL;
    }
    memcpy(longer, wire, len);
    longer[len] = 0;
    if (good)
        good = err_class(fr_dtype_decode(longer, len + 1, &t)) == MPI_ERR_TYPE;
    free(longer);
    return good;
}

static void roundtrip(const rt *c)
{
    fr_dtype *d = NULL, *d2 = NULL, r;
    MPI_Datatype back = MPI_DATATYPE_NULL;
    int rc = fr_dtype_get(c->t, &d);
    span a;
    size_t bytes;
    unsigned char *mine, *theirs;

    if (!ok(rc == MPI_SUCCESS && d->wire && d->id >= FR_DTID_DERIVED_BASE && !d->predefined,
            "%s: described, wire form of %zu bytes", c->name, d ? d->wire_len : 0)) {
        skip(RT_CHECKS - 1, "the type could not be described");
        return;
    }
    rc = fr_dtype_decode(d->wire, d->wire_len, &back);
    ok(rc == MPI_SUCCESS && back != MPI_DATATYPE_NULL, "%s: decodes", c->name);
    memset(&r, 0, sizeof r);
    if (back != MPI_DATATYPE_NULL && fr_dtype_info(back, &r) == MPI_SUCCESS)
        r.handle = back;
    ok(r.handle == back && r.size == d->size && r.lb == d->lb && r.extent == d->extent &&
           r.true_lb == d->true_lb && r.true_extent == d->true_extent,
       "%s: rebuilt size %lld extent %ld true extent %ld match", c->name, (long long)r.size,
       (long)r.extent, (long)r.true_extent);

    /* fr_pack (memcpy when contiguous) agrees with MPI_Pack */
    a = span_new(d, 2);
    for (size_t i = 0; i < a.len; i++)
        a.mem[i] = (unsigned char)(i * 31 + 7);
    bytes = (size_t)fr_dtype_bytes(d, 2);
    mine = malloc(bytes + 1);
    theirs = mpi_pack(c->t, a.origin, 2, (int)bytes);
    ok(fr_pack(a.origin, 2, d, mine, bytes) == MPI_SUCCESS && memcmp(mine, theirs, bytes) == 0,
       "%s: fr_pack matches MPI_Pack (%zu bytes)", c->name, bytes);
    ok(r.handle == back && same_placement(d, &r, mine, &a, bytes),
       "%s: unpacking with the rebuilt type restores the same bytes", c->name);

    if (c->f90_top) {
        ok(1, "%s: (top-level f90 rebuilt as a dup: wire not compared)", c->name);
    } else {
        rc = r.handle == back ? fr_dtype_get(back, &d2) : MPI_ERR_TYPE;
        ok(rc == MPI_SUCCESS && d2->wire_len == d->wire_len &&
               memcmp(d2->wire, d->wire, d->wire_len) == 0,
           "%s: rebuilt type serializes identically", c->name);
    }
    ok(d->elem == c->elem && d->elem_size == type_size(c->elem) && r.elem == c->elem,
       "%s: element type detected", c->name);
    if (c->contiguous < 0)
        ok(1, "%s: contiguity %d (not asserted)", c->name, d->contiguous);
    else
        is_int(d->contiguous, c->contiguous, "%s: contiguity", c->name);
    ok(rejects_truncations(d->wire, d->wire_len), "%s: every truncation rejected", c->name);

    if (back != MPI_DATATYPE_NULL)
        fr_dtype_user_free(&back, &forgotten); /* drops d2 from the registry too */
    free(mine);
    free(theirs);
    free(a.mem);
}

/* ---- the types ---- */

static MPI_Datatype vec(int n, int bl, int stride, MPI_Datatype old)
{
    MPI_Datatype t;
    MPI_Type_vector(n, bl, stride, old, &t);
    return t;
}

static MPI_Datatype struct3(MPI_Datatype a, int na, MPI_Aint da, MPI_Datatype b, int nb,
                            MPI_Aint db, MPI_Datatype c, int nc, MPI_Aint dc, int n)
{
    int bl[3] = {na, nb, nc};
    MPI_Aint disp[3] = {da, db, dc};
    MPI_Datatype types[3] = {a, b, c}, t;
    MPI_Type_create_struct(n, bl, disp, types, &t);
    return t;
}

static MPI_Datatype match(int tclass, MPI_Datatype t)
{
    MPI_Datatype m;
    int size;
    MPI_Type_size(t, &size);
    MPI_Type_match_size(tclass, size, &m);
    return m;
}

static int make_types(rt *c, MPI_Datatype *scratch, int *nscratch)
{
    int n = 0, ns = 0;
    MPI_Datatype t, u, f90r, f90i, f90c;

#define ADD(nm, ty, el, cont) c[n++] = (rt){nm, commit(ty), el, cont, 0}
    MPI_Type_contiguous(3, MPI_INT, &t);
    ADD("contiguous int", t, MPI_INT, 1);
    ADD("vector double", vec(3, 2, 4, MPI_DOUBLE), MPI_DOUBLE, 0);
    ADD("vector without gaps", vec(3, 2, 2, MPI_INT), MPI_INT, 1);
    MPI_Type_create_hvector(2, 3, 40, MPI_SHORT, &t);
    ADD("hvector short", t, MPI_SHORT, 0);
    {
        int bl[3] = {1, 2, 3}, disp[3] = {0, 3, 8};
        MPI_Type_indexed(3, bl, disp, MPI_FLOAT, &t);
        ADD("indexed float", t, MPI_FLOAT, 0);
    }
    {
        int bl[2] = {1, 1}, disp[2] = {1, 0};
        MPI_Type_indexed(2, bl, disp, MPI_INT, &t);
        ADD("indexed in reverse order", t, MPI_INT, 0); /* no gap, but typemap order differs */
    }
    {
        int bl[2] = {2, 1};
        MPI_Aint disp[2] = {16, 0};
        MPI_Type_create_hindexed(2, bl, disp, MPI_LONG, &t);
        ADD("hindexed long", t, MPI_LONG, 0);
    }
    {
        int disp[3] = {0, 5, 10};
        MPI_Type_create_indexed_block(3, 2, disp, MPI_CHAR, &t);
        ADD("indexed_block char", t, MPI_CHAR, 0);
    }
    {
        MPI_Aint disp[2] = {0, 24};
        MPI_Type_create_hindexed_block(2, 1, disp, MPI_DOUBLE, &t);
        ADD("hindexed_block double", t, MPI_DOUBLE, 0);
    }
    ADD("struct of mixed types",
        struct3(MPI_INT, 1, 0, MPI_DOUBLE, 1, 8, MPI_CHAR, 3, 16, 3), MPI_DATATYPE_NULL, 0);
    ADD("struct of ints", struct3(MPI_INT, 2, 0, MPI_INT, 1, 8, MPI_INT, 0, 0, 2), MPI_INT, 1);
    ADD("struct with an empty double member",
        struct3(MPI_DOUBLE, 0, 0, MPI_INT, 2, 0, MPI_INT, 1, 8, 3), MPI_INT, -1);
    {
        int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, start[3] = {1, 1, 3};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
        ADD("subarray C order", t, MPI_INT, 0);
    }
    {
        int sizes[2] = {6, 7}, sub[2] = {6, 2}, start[2] = {0, 3};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
        ADD("subarray Fortran order", t, MPI_DOUBLE, 0);
    }
    {
        int gs[2] = {8, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
        int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
        MPI_Type_create_darray(4, 1, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_FLOAT, &t);
        ADD("darray", t, MPI_FLOAT, 0);
    }
    u = vec(2, 1, 3, MPI_INT);
    scratch[ns++] = u;
    MPI_Type_create_resized(u, -8, 64, &t);
    ADD("resized vector", t, MPI_INT, 0);
    u = struct3(MPI_SHORT, 1, 0, MPI_SHORT, 1, 4, MPI_SHORT, 0, 0, 2);
    scratch[ns++] = u;
    u = vec(2, 1, 3, u);
    scratch[ns++] = u;
    MPI_Type_contiguous(2, u, &t);
    ADD("nested contiguous(vector(struct))", t, MPI_SHORT, 0);
    MPI_Type_dup(MPI_INT, &t);
    ADD("dup of MPI_INT", t, MPI_INT, 1);
    MPI_Type_dup(c[3].t, &t);
    ADD("dup of hvector", t, MPI_SHORT, 0);
    MPI_Type_create_f90_real(15, MPI_UNDEFINED, &f90r);
    MPI_Type_create_f90_integer(9, &f90i);
    MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &f90c);
    c[n++] = (rt){"f90 real", f90r, match(MPI_TYPECLASS_REAL, f90r), 1, 1};
    c[n++] = (rt){"f90 integer", f90i, match(MPI_TYPECLASS_INTEGER, f90i), 1, 1};
    c[n++] = (rt){"f90 complex", f90c, match(MPI_TYPECLASS_COMPLEX, f90c), 1, 1};
    MPI_Type_contiguous(2, f90r, &t);
    ADD("contiguous of f90 real", t, match(MPI_TYPECLASS_REAL, f90r), 1);
    ADD("vector of MPI_DOUBLE_INT", vec(2, 1, 2, MPI_DOUBLE_INT), MPI_DOUBLE_INT, 0);
    MPI_Type_create_resized(MPI_DOUBLE_INT, 0, 12, &t);
    ADD("MPI_DOUBLE_INT resized to 12 bytes", t, MPI_DOUBLE_INT, 1);
    MPI_Type_contiguous(3, MPI_SHORT_INT, &t);
    ADD("contiguous of MPI_SHORT_INT", t, MPI_SHORT_INT, 0);
    MPI_Type_contiguous(0, MPI_INT, &t);
    ADD("empty contiguous", t, MPI_INT, -1);
    MPI_Type_create_hvector(3, 1, -16, MPI_DOUBLE, &t);
    ADD("hvector with negative stride", t, MPI_DOUBLE, 0);
    u = MPI_INT;
    for (int i = 0; i < 40; i++) {
        MPI_Type_contiguous(1, u, &t);
        if (u != MPI_INT)
            scratch[ns++] = u;
        u = t;
    }
    ADD("40 levels of nesting", u, MPI_INT, 1);
#undef ADD
    *nscratch = ns;
    return n;
}

/* ---- predefined table ---- */

static void test_predefined(void)
{
    const MPI_Datatype listed[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT,
        MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT,
        MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_INT8_T,
        MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T, MPI_INT32_T, MPI_UINT32_T, MPI_INT64_T,
        MPI_UINT64_T, MPI_C_BOOL, MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_PACKED, MPI_FLOAT_INT,
        MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_CHARACTER,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
        MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
        MPI_INTEGER8, MPI_REAL4, MPI_REAL8,
    };
    int missing = 0, roundtrip = 1, consistent = 1, get_static = 1, available = 0;
    fr_dtype *d;

    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++) {
        int idx = fr_dtype_predef_index(listed[i]);
        if (idx < 0 || fr_dtype_predef_handle((uint64_t)idx) != listed[i]) {
            char name[MPI_MAX_OBJECT_NAME];
            int len;
            MPI_Type_get_name(listed[i], name, &len);
            diag("missing from the predefined table: %s", name);
            missing++;
        }
    }
    is_int(missing, 0, "every listed predefined type is in the table");
    for (uint64_t i = 0; i < 512; i++) {
        const fr_dtype *p = fr_dtype_predef(i);
        MPI_Datatype h = fr_dtype_predef_handle(i);
        int idx;
        if (!p) {
            roundtrip &= h == MPI_DATATYPE_NULL;
            continue;
        }
        available++;
        idx = fr_dtype_predef_index(h);
        /* aliases (MPI_LONG_LONG) map to their first entry */
        roundtrip &= idx >= 0 && fr_dtype_predef_handle((uint64_t)idx) == h;
        consistent &= p->handle == h && p->predefined && p->id == i && !p->wire &&
                      p->elem == h && p->elem_size == p->size && p->size > 0 &&
                      p->contiguous == (p->true_lb == 0 && p->extent == p->size &&
                                        p->true_extent == p->size);
        get_static &= fr_dtype_get(h, &d) == MPI_SUCCESS && d->id == (uint64_t)idx;
    }
    diag("%d predefined datatypes available", available);
    ok(roundtrip && available >= 50, "index <-> handle round trip for every entry");
    ok(consistent, "predefined descriptions are consistent");
    ok(get_static, "fr_dtype_get on a predefined type returns its static description");
    ok(fr_dtype_predef(100000) == NULL && fr_dtype_predef_handle(100000) == MPI_DATATYPE_NULL &&
           fr_dtype_predef_index(MPI_DATATYPE_NULL) == -1,
       "out of range index and MPI_DATATYPE_NULL are not in the table");
    ok(!fr_dtype_predef(fr_dtype_predef_index(MPI_DOUBLE_INT))->contiguous &&
           fr_dtype_predef(fr_dtype_predef_index(MPI_FLOAT_INT))->contiguous &&
           fr_dtype_predef(fr_dtype_predef_index(MPI_DOUBLE))->contiguous,
       "pair types with padding are not contiguous, others are");
    {
        unsigned char w[6] = {1, 1};
        uint32_t idx = (uint32_t)fr_dtype_predef_index(MPI_INT);
        MPI_Datatype t;
        memcpy(w + 2, &idx, 4);
        ok(fr_dtype_decode(w, sizeof w, &t) == MPI_SUCCESS && t == MPI_INT,
           "a lone predefined leaf decodes to the predefined handle");
    }
}

/* ---- errors ---- */

static void test_rejections(void)
{
    fr_dtype *d;
    MPI_Datatype t, u;
    int rc;

    rc = fr_dtype_get(MPI_DATATYPE_NULL, &d);
    is_int(err_class(rc), MPI_ERR_TYPE, "MPI_DATATYPE_NULL rejected with MPI_ERR_TYPE");
    t = vec(2, 1, 2, MPI_INT); /* not committed */
    rc = fr_dtype_get(t, &d);
    is_int(err_class(rc), MPI_ERR_TYPE, "uncommitted datatype rejected with MPI_ERR_TYPE");
    MPI_Type_commit(&t);
    ok(fr_dtype_get(t, &d) == MPI_SUCCESS, "the same type is accepted once committed");
    fr_dtype_user_free(&t, &forgotten);
#ifdef MPI_CXX_BOOL
    rc = fr_dtype_get(MPI_CXX_BOOL, &d);
    is_int(err_class(rc), MPI_ERR_TYPE, "predefined type outside the table rejected");
#else
    skip(1, "no MPI_CXX_BOOL to test a predefined type outside the table");
#endif
    u = MPI_INT;
    for (int i = 0; i < 70; i++) {
        MPI_Type_dup(u, &t);
        if (u != MPI_INT)
            MPI_Type_free(&u);
        u = t;
    }
    MPI_Type_commit(&u);
    rc = fr_dtype_get(u, &d);
    is_int(err_class(rc), MPI_ERR_TYPE, "a type nested 70 deep is rejected");
    MPI_Type_free(&u);
}

/* ---- malformed wire input ---- */

typedef struct wb {
    unsigned char b[512];
    size_t n;
} wb;

static void w8(wb *w, unsigned v) { w->b[w->n++] = (unsigned char)v; }
static void w32(wb *w, int32_t v) { memcpy(w->b + w->n, &v, 4); w->n += 4; }
static void w64(wb *w, int64_t v) { memcpy(w->b + w->n, &v, 8); w->n += 8; }
static void whdr(wb *w, unsigned code, int ni, int na, int nd)
{
    w8(w, code);
    w32(w, ni);
    w32(w, na);
    w32(w, nd);
}
static void wint(wb *w) { w8(w, 1); w32(w, fr_dtype_predef_index(MPI_INT)); }

/* Wire codes as dtype_wire.c numbers them. */
enum { W_NAMED = 1, W_DUP, W_CONTIGUOUS, W_VECTOR, W_HVECTOR, W_INDEXED, W_HINDEXED,
       W_INDEXED_BLOCK, W_HINDEXED_BLOCK, W_STRUCT, W_SUBARRAY, W_DARRAY, W_RESIZED,
       W_F90_REAL, W_F90_COMPLEX, W_F90_INTEGER };

static int rejected(const wb *w)
{
    MPI_Datatype t;
    int rc = fr_dtype_decode(w->b, w->n, &t);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&t);
    return rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_TYPE && t == MPI_DATATYPE_NULL;
}

static void test_crafted(void)
{
    int bad = 0, n = 0;
    wb w;

#define CASE(what, body)                                                                          \
    do {                                                                                          \
        memset(&w, 0, sizeof w);                                                                  \
        w8(&w, 1);                                                                                \
        body;                                                                                     \
        n++;                                                                                      \
        if (!rejected(&w)) {                                                                      \
            diag("crafted input accepted: %s", what);                                             \
            bad++;                                                                                \
        }                                                                                         \
    } while (0)

    CASE("unknown code", w8(&w, 99); w32(&w, 0));
    CASE("predefined index out of range", w8(&w, W_NAMED); w32(&w, 99999));
    CASE("contiguous with 2 ints", whdr(&w, W_CONTIGUOUS, 2, 0, 1); w32(&w, 1); w32(&w, 1); wint(&w));
    CASE("contiguous count -1", whdr(&w, W_CONTIGUOUS, 1, 0, 1); w32(&w, -1); wint(&w));
    CASE("vector without child", whdr(&w, W_VECTOR, 3, 0, 0); w32(&w, 1); w32(&w, 1); w32(&w, 1));
    CASE("indexed count disagrees with ni", whdr(&w, W_INDEXED, 3, 0, 1); w32(&w, 2);
         w32(&w, 1); w32(&w, 0); wint(&w));
    CASE("indexed negative blocklength", whdr(&w, W_INDEXED, 3, 0, 1); w32(&w, 1);
         w32(&w, -5); w32(&w, 0); wint(&w));
    CASE("struct with fewer types than count", whdr(&w, W_STRUCT, 3, 2, 1); w32(&w, 2);
         w32(&w, 1); w32(&w, 1); w64(&w, 0); w64(&w, 8); wint(&w));
    CASE("subarray start out of range", whdr(&w, W_SUBARRAY, 5, 0, 1); w32(&w, 1); w32(&w, 4);
         w32(&w, 2); w32(&w, 3); w32(&w, MPI_ORDER_C); wint(&w));
    CASE("subarray bad order", whdr(&w, W_SUBARRAY, 5, 0, 1); w32(&w, 1); w32(&w, 4);
         w32(&w, 2); w32(&w, 0); w32(&w, 12345); wint(&w));
    CASE("darray process grid does not match size", whdr(&w, W_DARRAY, 8, 0, 1); w32(&w, 4);
         w32(&w, 0); w32(&w, 1); w32(&w, 8); w32(&w, MPI_DISTRIBUTE_BLOCK);
         w32(&w, MPI_DISTRIBUTE_DFLT_DARG); w32(&w, 3); w32(&w, MPI_ORDER_C); wint(&w));
    CASE("darray rank outside size", whdr(&w, W_DARRAY, 8, 0, 1); w32(&w, 2); w32(&w, 2);
         w32(&w, 1); w32(&w, 8); w32(&w, MPI_DISTRIBUTE_BLOCK);
         w32(&w, MPI_DISTRIBUTE_DFLT_DARG); w32(&w, 2); w32(&w, MPI_ORDER_C); wint(&w));
    CASE("darray block too small", whdr(&w, W_DARRAY, 8, 0, 1); w32(&w, 2); w32(&w, 0);
         w32(&w, 1); w32(&w, 8); w32(&w, MPI_DISTRIBUTE_BLOCK); w32(&w, 1); w32(&w, 2);
         w32(&w, MPI_ORDER_C); wint(&w));
    CASE("ni beyond the input", whdr(&w, W_INDEXED, -1, 0, 1); wint(&w));
    CASE("nd beyond the input", whdr(&w, W_STRUCT, 1, 0, 100000); w32(&w, 0));
    CASE("resized without addresses", whdr(&w, W_RESIZED, 0, 0, 1); wint(&w));
    CASE("f90 real with an impossible precision", whdr(&w, W_F90_REAL, 2, 0, 0); w32(&w, 1000);
         w32(&w, MPI_UNDEFINED));
    CASE("f90 integer with an impossible range", whdr(&w, W_F90_INTEGER, 1, 0, 0);
         w32(&w, 1000));
    CASE("dup nested 65 deep", for (int i = 0; i < 65; i++) whdr(&w, W_DUP, 0, 0, 1); wint(&w));
    CASE("trailing garbage", whdr(&w, W_DUP, 0, 0, 1); wint(&w); w8(&w, 0));
    memset(&w, 0, sizeof w);
    w8(&w, 77);
    wint(&w);
    n++;
    bad += !rejected(&w);
    n++;
    bad += fr_dtype_decode(NULL, 0, &(MPI_Datatype){0}) == MPI_SUCCESS;
#undef CASE
    is_int(bad, 0, "%d crafted malformed inputs rejected with MPI_ERR_TYPE", n);
}

/* A decode result is either a clean MPI_ERR_TYPE or a usable, committed type. */
static int decode_any(const unsigned char *b, size_t n, int *accepted)
{
    MPI_Datatype t;
    MPI_Count size;
    int rc = fr_dtype_decode(b, n, &t);

    if (rc != MPI_SUCCESS)
        return err_class(rc) == MPI_ERR_TYPE && t == MPI_DATATYPE_NULL;
    (*accepted)++;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS)
        return 0;
    if (fr_dtype_predef_index(t) < 0)
        MPI_Type_free(&t);
    return 1;
}

static void test_fuzz(const rt *types, int ntypes)
{
    unsigned seed = 12345;
    int good = 1, accepted = 0, tries = 0;
    unsigned char buf[256];
    MPI_Errhandler eh;

    for (int i = 0; i < 3000 && good; i++) {
        size_t n = (size_t)(rand_r(&seed) % sizeof buf);
        for (size_t k = 0; k < n; k++)
            buf[k] = (unsigned char)rand_r(&seed);
        if (n)
            buf[0] = 1; /* get past the version byte */
        if (n > 1)
            buf[1] = (unsigned char)(1 + rand_r(&seed) % 16);
        good = decode_any(buf, n, &accepted);
        tries++;
    }
    ok(good, "%d random inputs: no crash, %d accepted as valid types", tries, accepted);

    good = 1;
    accepted = tries = 0;
    for (int i = 0; i < ntypes && good; i++) {
        fr_dtype *d;
        if (fr_dtype_get(types[i].t, &d) != MPI_SUCCESS)
            continue;
        unsigned char *m = malloc(d->wire_len);
        for (size_t k = 1; k < d->wire_len && good; k++) {
            static const unsigned char vals[] = {0x00, 0xFF, 0x80, 0x7F, 0x01, 0x02};
            for (size_t v = 0; v < sizeof vals && good; v++) {
                memcpy(m, d->wire, d->wire_len);
                m[k] = vals[v] == m[k] ? (unsigned char)(m[k] ^ 0x10) : vals[v];
                good = decode_any(m, d->wire_len, &accepted);
                tries++;
            }
        }
        free(m);
    }
    ok(good, "%d mutations of valid wire forms: no crash, %d accepted", tries, accepted);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    ok(eh == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's error handler is restored after decoding");
    MPI_Errhandler_free(&eh);
}

/* ---- lifetime ---- */

static void test_lifetime(void)
{
    MPI_Datatype t = commit(vec(3, 1, 2, MPI_INT)), u;
    fr_dtype *d, *d2;
    int src[6] = {1, 2, 3, 4, 5, 6}, out[3] = {0};
    uint64_t id;

    ok(fr_dtype_get(t, &d) == MPI_SUCCESS && fr_dtype_get(t, &d2) == MPI_SUCCESS && d == d2,
       "the same handle gives the same description");
    id = d->id;
    fr_dtype_retain(d);
    ok(fr_dtype_user_free(&t, &forgotten) == MPI_SUCCESS && t == MPI_DATATYPE_NULL,
       "user free of a retained type succeeds and nulls the handle");
    ok(d->user_freed && d->refs == 1 &&
           fr_pack(src, 1, d, out, sizeof out) == MPI_SUCCESS && out[0] == 1 && out[1] == 3 &&
           out[2] == 5,
       "the retained description still packs after the user's free");
    u = commit(vec(3, 1, 2, MPI_INT)); /* may reuse the handle value */
    ok(fr_dtype_get(u, &d2) == MPI_SUCCESS && d2 != d && d2->id > id,
       "a new type gets a new description and id");
    fr_dtype_release(d); /* the deferred PMPI_Type_free happens here */
    ok(1, "last release of a user-freed type");
    MPI_Type_free(&u);
    u = commit(vec(2, 1, 2, MPI_INT));
    ok(fr_dtype_user_free(&u, &forgotten) == MPI_SUCCESS && u == MPI_DATATYPE_NULL,
       "user free of a type never described goes straight to MPI");
}

/* ---- element runs ---- */

typedef struct runlist {
    int n;
    MPI_Aint disp[16];
    size_t first[16], len[16];
    const fr_dtype *e;
    unsigned char *origin; /* scatter: packed element k goes to its place here */
    const unsigned char *packed;
} runlist;

static int collect(void *arg, MPI_Aint disp, size_t first, size_t n)
{
    runlist *l = arg;
    if (l->n < 16) {
        l->disp[l->n] = disp;
        l->first[l->n] = first;
        l->len[l->n] = n;
    }
    l->n++;
    for (size_t j = 0; l->origin && j < n; j++) /* the element's bytes, as its type lays them */
        fr_unpack(l->packed + (first + j) * (size_t)l->e->size, (size_t)l->e->size,
                  l->origin + disp + (MPI_Aint)j * l->e->extent, 1, l->e);
    return MPI_SUCCESS;
}

/* Runs of count elements of t, checked against the expected (disp, first, n) triples. */
static int runs_are(MPI_Datatype t, int count, int n, const long long *want)
{
    fr_dtype *d;
    runlist l = {0};
    if (fr_dtype_get(t, &d) != MPI_SUCCESS)
        return 0;
    l.e = fr_dtype_predef((uint64_t)fr_dtype_predef_index(d->elem));
    if (fr_dtype_each_run(d, count, l.e, collect, &l) != MPI_SUCCESS || l.n != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (l.disp[i] != want[3 * i] || (long long)l.first[i] != want[3 * i + 1] ||
            (long long)l.len[i] != want[3 * i + 2])
            return 0;
    return 1;
}

/* Scattering random packed bytes element by element along the runs puts every byte where
 * MPI_Unpack puts it, for 1 and 3 elements of every round-trip type with one element type. */
static void test_runs(const rt *types, int ntypes)
{
    int bad = 0, tried = 0;
    for (int i = 0; i < ntypes; i++) {
        fr_dtype *d;
        if (fr_dtype_get(types[i].t, &d) != MPI_SUCCESS || d->elem == MPI_DATATYPE_NULL)
            continue;
        for (int count = 1; count <= 3; count += 2) {
            size_t bytes = (size_t)d->size * (size_t)count;
            span a = span_new(d, count), b = span_new(d, count);
            unsigned char *packed = malloc(bytes + 1);
            for (size_t k = 0; k < bytes; k++)
                packed[k] = (unsigned char)(rand() | 1);
            runlist l = {.e = fr_dtype_predef((uint64_t)fr_dtype_predef_index(d->elem)),
                         .origin = a.origin, .packed = packed};
            int good = fr_dtype_each_run(d, count, l.e, collect, &l) == MPI_SUCCESS &&
                       fr_unpack(packed, bytes, b.origin, count, d) == MPI_SUCCESS &&
                       memcmp(a.mem, b.mem, a.len) == 0;
            if (!good) {
                diag("%s, count %d: runs place the data elsewhere than MPI_Unpack", types[i].name,
                     count);
                bad++;
            }
            tried++;
            free(packed);
            free(a.mem);
            free(b.mem);
        }
    }
    ok(bad == 0 && tried > 20, "element runs agree with MPI_Unpack (%d layouts)", tried);

    const long long contig[] = {0, 0, 5};
    ok(runs_are(MPI_INT, 5, 1, contig), "runs: 5 ints are one run");
    MPI_Datatype v = commit(vec(3, 2, 5, MPI_INT));
    /* blocks at 0, 20, 40 bytes; the second instance starts at 48, right after the third */
    const long long vruns[] = {0, 0, 2, 20, 2, 2, 40, 4, 4, 68, 8, 2, 88, 10, 2};
    ok(runs_are(v, 2, 5, vruns), "runs: a vector's blocks, merged across instances");
    int bl[2] = {1, 2}, dsp[2] = {5, 0};
    MPI_Datatype rev;
    MPI_Type_indexed(2, bl, dsp, MPI_INT, &rev);
    rev = commit(rev);
    const long long rruns[] = {20, 0, 1, 0, 1, 2};
    ok(runs_are(rev, 1, 2, rruns), "runs: typemap order, not memory order");
    int one[3] = {1, 1, 1};
    MPI_Aint far[3] = {-8, 70000, 300};
    MPI_Datatype h;
    MPI_Type_create_hindexed(3, one, far, MPI_DOUBLE, &h);
    h = commit(h);
    const long long hruns[] = {-8, 0, 1, 70000, 1, 1, 300, 2, 1};
    ok(runs_are(h, 1, 3, hruns), "runs: negative and three-byte displacements");
    MPI_Datatype pad;
    MPI_Type_create_resized(MPI_DOUBLE_INT, 0, 12, &pad);
    pad = commit(pad);
    const long long pruns[] = {0, 0, 1, 12, 1, 1, 24, 2, 1};
    ok(runs_are(pad, 3, 3, pruns), "runs: pairs closer than their extent stay apart");
    MPI_Type_free(&pad);
    MPI_Type_free(&h);
    MPI_Type_free(&rev);
    MPI_Type_free(&v);
}

/* ---- packing bounds ---- */

static void test_pack_bounds(void)
{
    MPI_Datatype t = commit(vec(2, 1, 2, MPI_INT)), big, huge;
    fr_dtype *d, *c;
    int src[4] = {1, 2, 3, 4};
    unsigned char out[16];
    int rc;

    fr_dtype_get(t, &d);
    memset(out, 0xAB, sizeof out);
    rc = fr_pack(src, 2, d, out, 15);
    ok(rc != MPI_SUCCESS && out[0] == 0xAB, "pack into a too small buffer fails untouched");
    rc = fr_unpack(out, 15, src, 2, d);
    is_int(err_class(rc), MPI_ERR_TYPE, "unpack of the wrong byte count fails with MPI_ERR_TYPE");
    fr_dtype_get(MPI_INT, &c);
    rc = fr_pack(src, 4, c, out, 15);
    ok(rc != MPI_SUCCESS && out[0] == 0xAB, "contiguous pack into a too small buffer fails");
    MPI_Type_contiguous(1 << 20, MPI_CHAR, &big);
    MPI_Type_contiguous(1 << 30, big, &huge);
    MPI_Type_commit(&huge);
    ok(fr_dtype_get(huge, &d) == MPI_SUCCESS && fr_dtype_bytes(d, 1 << 14) == -1 &&
           fr_dtype_bytes(d, -1) == -1 && fr_dtype_bytes(c, 3) == 12,
       "fr_dtype_bytes reports overflow and negative counts");
    MPI_Type_free(&huge);
    MPI_Type_free(&big);
    MPI_Type_free(&t);
}

/* ---- large contiguous copies (fr_copy_bytes: in pieces, core/mem.c) ---- */

/* n bytes from src to dst through a contiguous MPI_BYTE copy, checked against memmove's result
 * on a second copy of the same memory. */
static int copy_matches(unsigned char *mem, unsigned char *ref, size_t len, size_t dst,
                        size_t src, size_t n)
{
    for (size_t i = 0; i < len; i++)
        mem[i] = ref[i] = (unsigned char)(i * 131 + (i >> 12) * 7 + 1);
    fr_dtype *b;
    fr_dtype_get(MPI_BYTE, &b);
    int rc = fr_copy_typed(mem + src, (int)n, b, mem + dst, (int)n, b, n);
    memmove(ref + dst, ref + src, n);
    return rc == MPI_SUCCESS && memcmp(mem, ref, len) == 0;
}

static void test_large_copies(void)
{
    const size_t piece = (size_t)256 << 10, len = 4 * piece + 8192;
    unsigned char *mem = malloc(len), *ref = malloc(len);
    int ok_sizes = 1;
    /* around the piece and its multiples, from and to odd places */
    const size_t sizes[] = {piece - 1, piece, piece + 1, 2 * piece + 3, (size_t)1 << 20,
                            3 * piece + 4095};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        ok_sizes &= copy_matches(mem, ref, len, len - sizes[i] - 5, 3, sizes[i]);
    ok(ok_sizes, "large contiguous copies, in pieces, land every byte where memmove does");
    ok(copy_matches(mem, ref, len, 4096, 0, 3 * piece + 1000),
       "an overlapping large copy forward (destination above the source) is right");
    ok(copy_matches(mem, ref, len, 0, 4096 + 17, 3 * piece + 1000),
       "an overlapping large copy backward (destination below the source) is right");
    free(mem);
    free(ref);
}

int main(int argc, char **argv)
{
    rt types[64];
    MPI_Datatype scratch[64];
    int ntypes, nscratch, rc;

    MPI_Init(&argc, &argv);
    tap_plan(NTYPES * RT_CHECKS + OTHER_CHECKS);
    ntypes = make_types(types, scratch, &nscratch);
    if (ntypes != NTYPES)
        diag("BUG: %d types made, NTYPES is %d", ntypes, NTYPES);
    for (int i = 0; i < ntypes; i++)
        roundtrip(&types[i]);
    test_predefined();  /* 7 */
    test_rejections();  /* 5 */
    test_crafted();     /* 1 */
    test_fuzz(types, ntypes); /* 3 */
    test_lifetime();    /* 6 */
    test_pack_bounds(); /* 4 */
    test_large_copies(); /* 3 */
    test_runs(types, ntypes); /* 6 */
    for (int i = 0; i < ntypes; i++)
        if (fr_dtype_predef_index(types[i].t) < 0 && strncmp(types[i].name, "f90 ", 4) != 0)
            MPI_Type_free(&types[i].t);
    for (int i = 0; i < nscratch; i++)
        MPI_Type_free(&scratch[i]);
    rc = tap_done();
    MPI_Finalize();
    return rc;
}
