/* t_datatypes.c - derived datatypes at origin and target of put, get and accumulate: vector,
 * hvector, indexed, hindexed (unsorted), indexed_block, struct (mixed and all-int), subarray
 * (C and Fortran order, 2-D and 3-D), resized (with a negative lower bound), dup, nested types,
 * counts above one, and different origin and target types with the same type signature. Also a
 * type freed by the user right after the RMA call and before the closing fence, one type used
 * in many epochs, and types freed and re-created so that handle values get reused, within one
 * epoch too; and origin data at MPI_BOTTOM addressed by a datatype of absolute addresses.
 *
 * Every case is one fence epoch in a ring: each rank moves data to (put, accumulate) or from
 * (get) its right neighbour. The expected memory is computed with MPI_Pack/MPI_Unpack, which
 * apply a type map to ordinary memory without RMA: packing the source with its type and
 * unpacking into a copy of the destination with the other type is what the RMA call must do. */
#include "common.h"

#define WIN_BYTES 65536
#define ORG_BYTES 65536
#define ORG_OFF 512 /* origin data start: room for negative displacements */

enum kind { PUT, GET, ACC_SUM, ACC_REPLACE };
static const char *kind_name[] = {"put", "get", "accumulate(SUM)", "accumulate(REPLACE)"};

static unsigned char *mem;         /* window memory, disp_unit 1 */
static MPI_Win win;
static unsigned char org[ORG_BYTES]; /* origin buffer */

/* Initial window and origin contents of rank r in epoch e: ints, small enough that sums of a
 * few never overflow, different for every rank, position and epoch. */
static void init_window(void *b, int r, int e)
{
    int *p = b;
    for (int i = 0; i < WIN_BYTES / 4; i++)
        p[i] = (r + 1) * 1000000 + e * 10000 + i;
}

static void init_origin(void *b, int r, int e)
{
    int *p = b;
    for (int i = 0; i < ORG_BYTES / 4; i++)
        p[i] = -((r + 1) * 1000000 + e * 10000 + i);
}

/* What the RMA operation does to dst, done with MPI_Pack/MPI_Unpack: src (sc elements of st)
 * moved into dst (dc elements of dt); for accumulate, added int by int instead of stored. */
static void reference(const void *src, int sc, MPI_Datatype st, void *dst, size_t dst_bytes,
                      MPI_Aint dst_off, int dc, MPI_Datatype dt, enum kind k)
{
    int psize = 0, pos = 0, upos = 0;
    MPI_Pack_size(sc, st, MPI_COMM_WORLD, &psize);
    char *packed = xmalloc((size_t)psize);
    MPI_Pack(src, sc, st, packed, psize, &pos, MPI_COMM_WORLD);
    if (k != ACC_SUM) {
        MPI_Unpack(packed, pos, &upos, (char *)dst + dst_off, dc, dt, MPI_COMM_WORLD);
    } else {
        int *delta = calloc(1, dst_bytes), *d = dst;
        MPI_Unpack(packed, pos, &upos, (char *)delta + dst_off, dc, dt, MPI_COMM_WORLD);
        for (size_t i = 0; i < dst_bytes / sizeof(int); i++)
            d[i] += delta[i];
        free(delta);
    }
    free(packed);
}

/* Free the derived types among a and b (once if they are the same). */
static void free2(MPI_Datatype a, MPI_Datatype b)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(b, &ni, &na, &nd, &combiner);
    if (b != a && combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&b);
    MPI_Type_get_envelope(a, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&a);
}

/* When set, issue() moves the origin data from MPI_BOTTOM with this type: the caller's origin
 * type placed at the absolute address of the origin data (see from_bottom). */
static MPI_Datatype absolute_origin = MPI_DATATYPE_NULL;

static void issue(enum kind k, int oc, MPI_Datatype ot, MPI_Aint disp, int tc, MPI_Datatype tt)
{
    void *o = org + ORG_OFF;
    if (absolute_origin != MPI_DATATYPE_NULL) {
        o = MPI_BOTTOM;
        ot = absolute_origin;
    }
    if (k == PUT)
        MPI_Put(o, oc, ot, right(), disp, tc, tt, win);
    else if (k == GET)
        MPI_Get(o, oc, ot, right(), disp, tc, tt, win);
    else
        MPI_Accumulate(o, oc, ot, right(), disp, tc, tt, k == ACC_SUM ? MPI_SUM : MPI_REPLACE, win);
}

/* One fence epoch of operation k: oc elements of ot at the origin, tc elements of tt at byte
 * displacement disp of the right neighbour's window. With free_early the caller's types are
 * freed between the call and the closing fence. Returns 1 if the result is right (the
 * neighbour's window for put/accumulate, our origin buffer for get). */
static int xfer(enum kind k, int oc, MPI_Datatype ot, MPI_Aint disp, int tc, MPI_Datatype tt,
                int epoch, int free_early)
{
    static unsigned char exp[WIN_BYTES > ORG_BYTES ? WIN_BYTES : ORG_BYTES], tmp[ORG_BYTES];
    init_window(mem, rank, epoch);
    init_origin(org, rank, epoch);
    if (k == GET) { /* our origin buffer after getting from the right neighbour */
        init_origin(exp, rank, epoch);
        init_window(tmp, right(), epoch);
        reference(tmp + disp, tc, tt, exp + ORG_OFF, ORG_BYTES - ORG_OFF, 0, oc, ot, k);
    } else { /* our window after the left neighbour's operation */
        init_window(exp, rank, epoch);
        init_origin(tmp, left(), epoch);
        reference(tmp + ORG_OFF, oc, ot, exp, WIN_BYTES, disp, tc, tt, k);
    }

    MPI_Win_fence(0, win);
    issue(k, oc, ot, disp, tc, tt);
    if (free_early)
        free2(ot, tt);
    MPI_Win_fence(0, win);
    if (k == GET)
        return same_bytes(org, exp, ORG_BYTES);
    return same_bytes(mem, exp, WIN_BYTES);
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

/* ---- the types ---- */
static MPI_Datatype vector_4x3s5(void) /* 12 ints */
{
    MPI_Datatype t;
    MPI_Type_vector(4, 3, 5, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype vector_2000x3s5(void) /* 6000 ints: more than an eager message */
{
    MPI_Datatype t;
    MPI_Type_vector(2000, 3, 5, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype vector_3x4s7(void) /* 12 ints, another layout */
{
    MPI_Datatype t;
    MPI_Type_vector(3, 4, 7, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype hvector_3x2(void) /* 6 ints, stride 20 bytes */
{
    MPI_Datatype t;
    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype indexed_6(void) /* 6 ints, extent 11 ints */
{
    MPI_Datatype t;
    int bl[] = {1, 3, 2}, d[] = {0, 4, 9};
    MPI_Type_indexed(3, bl, d, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype hindexed_unsorted_6(void) /* 6 ints, displacements not in order */
{
    MPI_Datatype t;
    int bl[] = {2, 1, 3};
    MPI_Aint d[] = {40, 0, 12};
    MPI_Type_create_hindexed(3, bl, d, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype indexed_block_8(void) /* 8 ints */
{
    MPI_Datatype t;
    int d[] = {0, 3, 7, 12};
    MPI_Type_create_indexed_block(4, 2, d, MPI_INT, &t);
    return commit(t);
}

/* {2 ints, double, 3 chars}: origin and target layouts differ, the signature does not. */
static MPI_Datatype struct_mixed(int variant)
{
    MPI_Datatype t, types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    int bl[] = {2, 1, 3};
    MPI_Aint d0[] = {0, 16, 28}, d1[] = {40, 8, 1};
    MPI_Type_create_struct(3, bl, variant ? d1 : d0, types, &t);
    return commit(t);
}

static MPI_Datatype struct_ints(void) /* 3 ints as {int at 4, 2 ints at 12} */
{
    MPI_Datatype t, types[] = {MPI_INT, MPI_INT};
    int bl[] = {1, 2};
    MPI_Aint d[] = {4, 12};
    MPI_Type_create_struct(2, bl, d, types, &t);
    return commit(t);
}

static MPI_Datatype subarray(int ndims, int order)
{
    MPI_Datatype t;
    int sizes2[] = {8, 10}, sub2[] = {3, 4}, start2[] = {2, 5};
    int sizes3[] = {4, 5, 6}, sub3[] = {2, 3, 2}, start3[] = {1, 1, 3};
    if (ndims == 2)
        MPI_Type_create_subarray(2, sizes2, sub2, start2, order, MPI_INT, &t);
    else
        MPI_Type_create_subarray(3, sizes3, sub3, start3, order, MPI_INT, &t);
    return commit(t);
}

static MPI_Datatype resized_int_12(void) /* one int every 12 bytes */
{
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_INT, 0, 12, &t);
    return commit(t);
}

/* ints at byte displacements -8 and 4, resized to lb -8, extent 24: data before the buffer. */
static MPI_Datatype resized_negative_lb(void)
{
    MPI_Datatype h, t;
    int bl[] = {1, 1};
    MPI_Aint d[] = {-8, 4};
    MPI_Type_create_hindexed(2, bl, d, MPI_INT, &h);
    MPI_Type_create_resized(h, -8, 24, &t);
    MPI_Type_free(&h);
    return commit(t);
}

/* struct { hvector(3, 1, 28 bytes, indexed{2 at 0, 1 at 3}) at 0, 2 ints at 100 }: 11 ints,
 * three levels deep; the inner types are freed at once (the outer one keeps them alive). */
static MPI_Datatype nested_11(void)
{
    MPI_Datatype inner, mid, t;
    int bl[] = {2, 1}, d[] = {0, 3};
    MPI_Type_indexed(2, bl, d, MPI_INT, &inner);
    MPI_Type_create_hvector(3, 1, 28, inner, &mid);
    int sbl[] = {1, 2};
    MPI_Aint sd[] = {0, 100};
    MPI_Datatype st[] = {mid, MPI_INT};
    MPI_Type_create_struct(2, sbl, sd, st, &t);
    MPI_Type_free(&inner);
    MPI_Type_free(&mid);
    return commit(t);
}

static MPI_Datatype contiguous(int n, MPI_Datatype of)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, of, &t);
    return commit(t);
}

static MPI_Datatype dup(MPI_Datatype of)
{
    MPI_Datatype t;
    MPI_Type_dup(of, &t);
    return commit(t);
}

/* One case: types made by the caller, freed here (1 test). */
static int epoch_no;
static void one_case(const char *what, enum kind k, int oc, MPI_Datatype ot, MPI_Aint disp,
                     int tc, MPI_Datatype tt)
{
    ok(xfer(k, oc, ot, disp, tc, tt, ++epoch_no, 0), "%s: %s", kind_name[k], what);
    free2(ot, tt);
}

/* The same pair of types for put, get, accumulate(SUM) and accumulate(REPLACE) (4 tests). */
static void all_kinds(const char *what, MPI_Datatype (*mk_o)(void), int oc, MPI_Aint disp,
                      int tc, MPI_Datatype (*mk_t)(void))
{
    for (int k = PUT; k <= ACC_REPLACE; k++)
        one_case(what, (enum kind)k, oc, mk_o ? mk_o() : MPI_INT, disp, tc, mk_t ? mk_t() : MPI_INT);
}

static MPI_Datatype sub2c(void) { return subarray(2, MPI_ORDER_C); }
static MPI_Datatype sub2f(void) { return subarray(2, MPI_ORDER_FORTRAN); }
static MPI_Datatype sub3c(void) { return subarray(3, MPI_ORDER_C); }
static MPI_Datatype contig6(void) { return contiguous(6, MPI_INT); }
static MPI_Datatype contig12(void) { return contiguous(12, MPI_INT); }
static MPI_Datatype vec_of_indexed(void) /* 2 x indexed_6, 3 extents apart: 12 ints */
{
    MPI_Datatype in = indexed_6(), t;
    MPI_Type_vector(2, 1, 3, in, &t);
    MPI_Type_free(&in);
    return commit(t);
}
static MPI_Datatype dup_vector(void)
{
    MPI_Datatype v = vector_4x3s5(), t = dup(v);
    MPI_Type_free(&v);
    return t;
}

/* 19 cases x 4 kinds; the last two move more than flexrma's default eager size (8 KiB) */
static void layouts(void)
{
    all_kinds("vector origin, contiguous target", vector_4x3s5, 1, 64, 12, NULL);
    all_kinds("contiguous origin, vector target", NULL, 12, 64, 1, vector_4x3s5);
    all_kinds("vector to a different vector", vector_4x3s5, 1, 128, 1, vector_3x4s7);
    all_kinds("hvector", hvector_3x2, 2, 32, 12, NULL);
    all_kinds("indexed, count 2, to hvector count 2", indexed_6, 2, 0, 2, hvector_3x2);
    all_kinds("hindexed with unsorted displacements", hindexed_unsorted_6, 1, 100 * 4, 1, contig6);
    all_kinds("contiguous to unsorted hindexed", contig6, 1, 16, 1, hindexed_unsorted_6);
    all_kinds("indexed_block", indexed_block_8, 1, 40, 8, NULL);
    all_kinds("struct of ints at both ends", struct_ints, 4, 8, 4, struct_ints);
    all_kinds("2-D subarray, C order, to contiguous", sub2c, 1, 256, 1, contig12);
    all_kinds("contiguous to 2-D subarray, Fortran order", contig12, 1, 256, 1, sub2f);
    all_kinds("3-D subarray to vector", sub3c, 1, 1024, 1, vector_4x3s5);
    all_kinds("resized int (extent 12)", resized_int_12, 5, 4, 5, NULL);
    all_kinds("resized with a negative lower bound, count 3", resized_negative_lb, 3, 512, 6, NULL);
    all_kinds("nested struct/hvector/indexed to vector", nested_11, 1, 200, 11, resized_int_12);
    all_kinds("vector of indexed to dup of vector", vec_of_indexed, 1, 300, 1, dup_vector);
    all_kinds("count 3 of a vector to count 6 of contiguous(6)", vector_4x3s5, 3, 512, 6, contig6);
    all_kinds("large vector (6000 ints) to contiguous", vector_2000x3s5, 1, 4, 6000, NULL);
    all_kinds("1500 structs of ints to resized ints", struct_ints, 1500, 8, 4500, resized_int_12);
}

/* Mixed-type struct: put and get only (accumulate needs one element type), small and large
 * (4 tests). */
static void mixed_struct(void)
{
    for (int k = PUT; k <= GET; k++)
        for (int count = 2; count <= 1000; count += 998)
            one_case(count == 2 ? "2 structs {int[2], double, char[3]} to another layout"
                                : "1000 structs {int[2], double, char[3]} to another layout",
                     (enum kind)k, count, struct_mixed(0), 64, count, struct_mixed(1));
}

/* Types freed by the user right after the call, before the closing fence (4 tests). */
static void freed_early(void)
{
    for (int k = PUT; k <= ACC_REPLACE; k++)
        ok(xfer((enum kind)k, 1, nested_11(), 64, 11, resized_int_12(), ++epoch_no, 1),
           "%s: origin and target types freed before the closing fence", kind_name[k]);
}

/* One pair of types in 120 epochs of every kind: whatever is cached must stay right (1 test). */
static void reused_type(void)
{
    MPI_Datatype a = vector_4x3s5(), b = vector_3x4s7();
    int bad = 0, first = -1;
    for (int e = 0; e < 120; e++)
        if (!xfer((enum kind)(e % 4), 1, a, 8 * e, 1, b, ++epoch_no, 0) && !bad++)
            first = e;
    is_int(bad, 0, "one pair of types in 120 epochs: wrong epochs (first %d)", first);
    free2(a, b);
}

/* Free a type and create another, 60 times, cycling through three layouts: MPI hands freed
 * handle values out again (Open MPI alternates between two), so a cache keyed by handle value
 * would apply an old layout to a new type (1 test). */
static void recycled_handles(void)
{
    int bad = 0, reused = 0;
    MPI_Datatype seen[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    for (int e = 0; e < 60; e++) {
        int layout = e % 3;
        MPI_Datatype t = layout == 0 ? vector_4x3s5() : layout == 1 ? vector_3x4s7() : indexed_6();
        reused += t == seen[0] || t == seen[1];
        seen[1] = seen[0];
        seen[0] = t;
        bad += !xfer((enum kind)(e % 4), layout == 2 ? 2 : 1, t, 64, 12, MPI_INT, ++epoch_no, 1);
    }
    is_int(bad, 0, "60 types freed and re-created (%d reused a recent handle value): wrong epochs",
           reused);
}

/* Within one epoch: an operation with type A, A freed, B created (often with A's handle value)
 * and used (1 test per kind: put, get, accumulate). */
static void recycled_in_one_epoch(void)
{
    static unsigned char exp[WIN_BYTES], tmp[WIN_BYTES];
    const MPI_Aint disp_a = 0, disp_b = 1024, org_b = 2048;
    for (int k = PUT; k <= ACC_SUM; k++) {
        int e = ++epoch_no;
        MPI_Datatype a = vector_4x3s5(), b = indexed_6(), c = contig12();
        init_window(mem, rank, e);
        init_origin(org, rank, e);
        if (k == GET) {
            init_origin(exp, rank, e);
            init_window(tmp, right(), e);
            reference(tmp + disp_a, 12, MPI_INT, exp + ORG_OFF, ORG_BYTES - ORG_OFF, 0, 1, a, k);
            reference(tmp + disp_b, 12, MPI_INT, exp + org_b, ORG_BYTES - org_b, 0, 2, b, k);
        } else {
            init_window(exp, rank, e);
            init_origin(tmp, left(), e);
            reference(tmp + ORG_OFF, 1, a, exp, WIN_BYTES, disp_a, 12, MPI_INT, k);
            reference(tmp + org_b, 2, b, exp, WIN_BYTES, disp_b, 12, MPI_INT, k);
        }
        MPI_Type_free(&b);
        MPI_Type_free(&c);

        MPI_Win_fence(0, win);
        issue((enum kind)k, 1, a, disp_a, 12, MPI_INT);
        MPI_Type_free(&a);
        b = indexed_6(); /* the same layout as above, now probably with a's old handle */
        if (k == PUT)
            MPI_Put(org + org_b, 2, b, right(), disp_b, 12, MPI_INT, win);
        else if (k == GET)
            MPI_Get(org + org_b, 2, b, right(), disp_b, 12, MPI_INT, win);
        else
            MPI_Accumulate(org + org_b, 2, b, right(), disp_b, 12, MPI_INT, MPI_SUM, win);
        MPI_Type_free(&b);
        MPI_Win_fence(0, win);
        ok(k == GET ? same_bytes(org, exp, ORG_BYTES) : same_bytes(mem, exp, WIN_BYTES),
           "%s: type freed and another created and used in the same epoch", kind_name[k]);
    }
}

static MPI_Datatype two_blocks(int second) /* 3 ints, then `second` ints 10 ints further */
{
    MPI_Datatype t;
    MPI_Type_indexed(2, (int[]){3, second}, (int[]){0, 10}, MPI_INT, &t);
    return commit(t);
}

/* The origin at MPI_BOTTOM with a datatype of absolute addresses (MPI_Get_address), which MPI
 * allows for any buffer: the same bytes move as with the relative type from the origin data.
 * Small and beyond the eager size, every kind (8 tests). */
static void from_bottom(void)
{
    for (int second = 5; second <= 3000; second += 2995)
        for (int k = PUT; k <= ACC_REPLACE; k++) {
            MPI_Datatype rel = two_blocks(second);
            MPI_Aint at;
            MPI_Get_address(org + ORG_OFF, &at);
            MPI_Type_create_struct(1, (int[]){1}, &at, &rel, &absolute_origin);
            MPI_Type_commit(&absolute_origin);
            ok(xfer((enum kind)k, 1, rel, 64, 3 + second, MPI_INT, ++epoch_no, 0),
               "%s: %d ints from MPI_BOTTOM with a datatype of absolute addresses",
               kind_name[k], 3 + second);
            MPI_Type_free(&absolute_origin);
            absolute_origin = MPI_DATATYPE_NULL;
            MPI_Type_free(&rel);
        }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(19 * 4 + 4 + 4 + 1 + 1 + 3 + 8);
    MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &mem);
    MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    layouts();
    mixed_struct();
    freed_early();
    reused_type();
    recycled_handles();
    recycled_in_one_epoch();
    from_bottom();

    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    return test_done();
}
