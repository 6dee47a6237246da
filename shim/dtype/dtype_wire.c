/* dtype_wire.c - walking a datatype's type tree: what it is made of, and its wire form.
 *
 * One walk over MPI_Type_get_envelope/MPI_Type_get_contents learns, for the whole tree, the
 * single predefined leaf type (accumulate needs one), whether one element's data forms a single
 * block laid out in typemap order (the memcpy fast path of fr_pack needs that), and, on request,
 * writes the tree in wire form. fr_dtype_decode() rebuilds a datatype from that form.
 *
 * Wire format. The cluster is assumed homogeneous (same binary, same MPI, same ABI, same byte
 * order), so integers are written in native byte order with fixed widths: u8, u32, i32 (MPI int
 * arguments) and i64 (MPI_Aint arguments). Nothing is aligned; fields are read with memcpy.
 *
 *   wire  := u8 version, node
 *   node  := u8 W_NAMED, u32 index             (index into the predefined table)
 *          | u8 code, u32 ni, u32 na, u32 nd, i32 ints[ni], i64 aints[na], node children[nd]
 *
 * ints, aints and children are exactly the arguments MPI_Type_get_contents reports for the
 * combiner, except that the MPI-1 *_INTEGER combiners are written as their MPI-2 equivalents
 * (their integer displacements become aints). The decoder checks every count against the bytes
 * left, the argument shapes and values against what the constructor accepts, and the nesting
 * depth, so malformed input yields FR_ERR_TYPE rather than an MPI error or a crash.
 */
#include "dtype_internal.h"
#include "core/next.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define WIRE_VERSION 1
#define WIRE_MAX_DEPTH 64
#define WIRE_MIN_NODE 5 /* a W_NAMED node: u8 code + u32 index */

enum wire_code {
    W_NAMED = 1,
    W_DUP,
    W_CONTIGUOUS,
    W_VECTOR,
    W_HVECTOR,
    W_INDEXED,
    W_HINDEXED,
    W_INDEXED_BLOCK,
    W_HINDEXED_BLOCK,
    W_STRUCT,
    W_SUBARRAY,
    W_DARRAY,
    W_RESIZED,
    W_F90_REAL,
    W_F90_COMPLEX,
    W_F90_INTEGER,
};

/* The MPI-1 combiners were removed in MPI-3. Open MPI without --enable-mpi1-compatibility keeps
 * their values under other names and turns the old names into compile errors. */
#if defined(OPEN_MPI) && !OMPI_ENABLE_MPI1_COMPAT
#define FR_COMBINER_HVECTOR_INTEGER OMPI_WAS_MPI_COMBINER_HVECTOR_INTEGER
#define FR_COMBINER_HINDEXED_INTEGER OMPI_WAS_MPI_COMBINER_HINDEXED_INTEGER
#define FR_COMBINER_STRUCT_INTEGER OMPI_WAS_MPI_COMBINER_STRUCT_INTEGER
#else
#define FR_COMBINER_HVECTOR_INTEGER MPI_COMBINER_HVECTOR_INTEGER
#define FR_COMBINER_HINDEXED_INTEGER MPI_COMBINER_HINDEXED_INTEGER
#define FR_COMBINER_STRUCT_INTEGER MPI_COMBINER_STRUCT_INTEGER
#endif

/* ------------------------------------------------------------------------------------------ */
/* argument shapes, shared by encoder (checks what MPI reports) and decoder (checks input)    */

static int all_nonneg(const int *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0)
            return 0;
    return 1;
}

static int order_ok(int order)
{
    return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN;
}

/* ints = ndims, sizes[n], subsizes[n], starts[n], order (MPI_Type_create_subarray's rules). */
static int subarray_ok(const int *ints, size_t ni)
{
    int n = ints[0];

    if (n < 1 || ni != 3 * (size_t)n + 2 || !order_ok(ints[1 + 3 * (size_t)n]))
        return 0;
    for (int i = 0; i < n; i++) {
        int size = ints[1 + i], sub = ints[1 + n + i], start = ints[1 + 2 * n + i];
        if (size < 1 || sub < 1 || sub > size || start < 0 || start > size - sub)
            return 0;
    }
    return 1;
}

/* ints = size, rank, ndims, gsizes[n], distribs[n], dargs[n], psizes[n], order. */
static int darray_ok(const int *ints, size_t ni)
{
    int size = ints[0], rank = ints[1], n = ints[2];
    long long procs = 1;

    if (size < 1 || rank < 0 || rank >= size || n < 1 || ni != 4 * (size_t)n + 4 ||
        !order_ok(ints[3 + 4 * (size_t)n]))
        return 0;
    for (int i = 0; i < n; i++) {
        int gsize = ints[3 + i], distrib = ints[3 + n + i];
        int darg = ints[3 + 2 * n + i], psize = ints[3 + 3 * n + i];
        if (gsize < 1 || psize < 1 || (darg < 1 && darg != MPI_DISTRIBUTE_DFLT_DARG))
            return 0;
        if (distrib != MPI_DISTRIBUTE_BLOCK && distrib != MPI_DISTRIBUTE_CYCLIC &&
            distrib != MPI_DISTRIBUTE_NONE)
            return 0;
        if (distrib == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
            (long long)darg * psize < gsize)
            return 0;
        procs *= psize;
        if (procs > size)
            return 0;
    }
    return procs == size;
}

/* Do ni/na/nd and the integer arguments fit what the constructor for code expects? */
static int shape_ok(int code, const int *ints, size_t ni, size_t na, size_t nd)
{
    size_t c = (ni >= 1 && ints[0] >= 0) ? (size_t)ints[0] : (size_t)-1;

    switch (code) {
    case W_DUP:
        return ni == 0 && na == 0 && nd == 1;
    case W_CONTIGUOUS:
        return ni == 1 && na == 0 && nd == 1 && ints[0] >= 0;
    case W_VECTOR:
        return ni == 3 && na == 0 && nd == 1 && ints[0] >= 0 && ints[1] >= 0;
    case W_HVECTOR:
        return ni == 2 && na == 1 && nd == 1 && ints[0] >= 0 && ints[1] >= 0;
    case W_INDEXED:
        return c != (size_t)-1 && ni == 2 * c + 1 && na == 0 && nd == 1 && all_nonneg(ints + 1, c);
    case W_HINDEXED:
        return c != (size_t)-1 && ni == c + 1 && na == c && nd == 1 && all_nonneg(ints + 1, c);
    case W_INDEXED_BLOCK:
        return c != (size_t)-1 && ni == c + 2 && na == 0 && nd == 1 && ints[1] >= 0;
    case W_HINDEXED_BLOCK:
        return c != (size_t)-1 && ni == 2 && na == c && nd == 1 && ints[1] >= 0;
    case W_STRUCT:
        return c != (size_t)-1 && ni == c + 1 && na == c && nd == c && all_nonneg(ints + 1, c);
    case W_SUBARRAY:
        return ni >= 1 && na == 0 && nd == 1 && subarray_ok(ints, ni);
    case W_DARRAY:
        return ni >= 3 && na == 0 && nd == 1 && darray_ok(ints, ni);
    case W_RESIZED:
        return ni == 0 && na == 2 && nd == 1;
    case W_F90_REAL:
    case W_F90_COMPLEX:
        return ni == 2 && na == 0 && nd == 0;
    case W_F90_INTEGER:
        return ni == 1 && na == 0 && nd == 0;
    default:
        return 0;
    }
}

static int is_f90(int code)
{
    return code == W_F90_REAL || code == W_F90_COMPLEX || code == W_F90_INTEGER;
}

/* ------------------------------------------------------------------------------------------ */
/* reading a node's contents                                                                  */

typedef struct contents {
    int code;             /* enum wire_code */
    size_t ni, na, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;  /* as returned by MPI_Type_get_contents; freed by contents_free */
} contents;

static int wire_code_of(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_DUP: return W_DUP;
    case MPI_COMBINER_CONTIGUOUS: return W_CONTIGUOUS;
    case MPI_COMBINER_VECTOR: return W_VECTOR;
    case MPI_COMBINER_HVECTOR:
    case FR_COMBINER_HVECTOR_INTEGER: return W_HVECTOR;
    case MPI_COMBINER_INDEXED: return W_INDEXED;
    case MPI_COMBINER_HINDEXED:
    case FR_COMBINER_HINDEXED_INTEGER: return W_HINDEXED;
    case MPI_COMBINER_INDEXED_BLOCK: return W_INDEXED_BLOCK;
    case MPI_COMBINER_HINDEXED_BLOCK: return W_HINDEXED_BLOCK;
    case MPI_COMBINER_STRUCT:
    case FR_COMBINER_STRUCT_INTEGER: return W_STRUCT;
    case MPI_COMBINER_SUBARRAY: return W_SUBARRAY;
    case MPI_COMBINER_DARRAY: return W_DARRAY;
    case MPI_COMBINER_RESIZED: return W_RESIZED;
    case MPI_COMBINER_F90_REAL: return W_F90_REAL;
    case MPI_COMBINER_F90_COMPLEX: return W_F90_COMPLEX;
    case MPI_COMBINER_F90_INTEGER: return W_F90_INTEGER;
    default: return 0;
    }
}

/* Handles MPI_Type_get_contents returns must be freed unless predefined; the types made by
 * MPI_Type_create_f90_* count as predefined (MPI-2.2 section 16.2.5), and Open MPI refuses to
 * free them. */
static void free_returned_type(MPI_Datatype t)
{
    int ni, na, nd, combiner;

    FR_CHECK_MPI(PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
        combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER)
        return;
    FR_CHECK_MPI(FR_NEXT(Type_free)(&t));
}

static void contents_free(contents *c)
{
    for (size_t i = 0; c->types && i < c->nd; i++)
        free_returned_type(c->types[i]);
    free(c->ints);
    free(c->aints);
    free(c->types);
    memset(c, 0, sizeof *c);
}

/* Array of n elements of `size` bytes; never a zero-size allocation. */
static void *alloc_array(size_t n, size_t size)
{
    size_t bytes;

    if (fr_mul_size(n, size, &bytes) != 0)
        fr_fatal("dtype_wire.c: array of %zu elements of %zu bytes overflows", n, size);
    return fr_xmalloc(bytes ? bytes : 1);
}

/* MPI-1 combiners carry displacements in ints; move them to aints so that one encoding and
 * one decoder serve both. ints are rewritten in place (they only shrink). */
static void normalize_mpi1(contents *c, int combiner)
{
    size_t first, count;

    if (combiner == FR_COMBINER_HVECTOR_INTEGER) {
        first = 2; /* count, blocklength, stride */
        count = 1;
    } else if (combiner == FR_COMBINER_HINDEXED_INTEGER || combiner == FR_COMBINER_STRUCT_INTEGER) {
        count = c->ni >= 1 && c->ints[0] >= 0 ? (size_t)c->ints[0] : 0;
        first = count + 1; /* count, blocklengths[count], displacements[count] */
    } else {
        return;
    }
    if (c->ni != first + count || c->na != 0)
        return; /* shape_ok() will reject it */
    free(c->aints);
    c->aints = alloc_array(count, sizeof *c->aints);
    for (size_t i = 0; i < count; i++)
        c->aints[i] = c->ints[first + i];
    c->ni = first;
    c->na = count;
}

static int contents_get(MPI_Datatype t, int ni, int na, int nd, int combiner, contents *c)
{
    memset(c, 0, sizeof *c);
    c->code = wire_code_of(combiner);
    if (c->code == 0 || ni < 0 || na < 0 || nd < 0)
        return fr_errorf(FR_ERR_TYPE, "datatype built with combiner %d cannot be shipped", combiner);
    c->ints = alloc_array((size_t)ni, sizeof *c->ints);
    c->aints = alloc_array((size_t)na, sizeof *c->aints);
    c->types = alloc_array((size_t)nd, sizeof *c->types);
    FR_CHECK_MPI(PMPI_Type_get_contents(t, ni, na, nd, c->ints, c->aints, c->types));
    c->ni = (size_t)ni;
    c->na = (size_t)na;
    c->nd = (size_t)nd;
    normalize_mpi1(c, combiner);
    if (!shape_ok(c->code, c->ints, c->ni, c->na, c->nd))
        return fr_errorf(FR_ERR_TYPE, "MPI reported unexpected arguments for combiner %d", combiner);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* the walk                                                                                   */

/* What the walk learns about one node of the tree. */
typedef struct tnode {
    MPI_Datatype elem; /* the single leaf type; MPI_DATATYPE_NULL if none yet or mixed */
    int mixed;         /* leaves of different types */
    int dense;         /* one element's data fills [true_lb, true_lb + size) in typemap order */
    MPI_Count size;
    MPI_Count extent, true_lb, true_extent;
} tnode;

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
} wbuf;

static void put(wbuf *b, const void *src, size_t n)
{
    if (!b)
        return;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 64;
        while (n > cap - b->len)
            if (fr_mul_size(cap, 2, &cap) != 0)
                fr_fatal("dtype_wire.c: wire form too large");
        b->p = fr_xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u8(wbuf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    put(b, &x, 1);
}

static void put_u32(wbuf *b, size_t v)
{
    uint32_t x = (uint32_t)v;
    put(b, &x, 4);
}

static void put_header(wbuf *b, const contents *c)
{
    put_u8(b, (unsigned)c->code);
    put_u32(b, c->ni);
    put_u32(b, c->na);
    put_u32(b, c->nd);
    for (size_t i = 0; i < c->ni; i++) {
        int32_t v = c->ints[i];
        put(b, &v, 4);
    }
    for (size_t i = 0; i < c->na; i++) {
        int64_t v = c->aints[i];
        put(b, &v, 8);
    }
}

static int node_sizes(MPI_Datatype t, tnode *n)
{
    MPI_Count lb;

    if (PMPI_Type_size_x(t, &n->size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(t, &lb, &n->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(t, &n->true_lb, &n->true_extent) != MPI_SUCCESS)
        return fr_errorf(FR_ERR_TYPE, "cannot query the size and extent of a datatype");
    return MPI_SUCCESS;
}

/* Merge a child's leaves into its parent's. */
static void leaf_merge(tnode *parent, const tnode *child)
{
    if (child->mixed)
        parent->mixed = 1;
    else if (child->elem == MPI_DATATYPE_NULL)
        return; /* no leaves */
    else if (parent->elem == MPI_DATATYPE_NULL && !parent->mixed)
        parent->elem = child->elem;
    else if (parent->elem != child->elem)
        parent->mixed = 1;
    if (parent->mixed)
        parent->elem = MPI_DATATYPE_NULL;
}

/* A struct member with blocklength 0 contributes no basic component. */
static int child_counts(const contents *c, size_t k)
{
    return c->code != W_STRUCT || c->ints[1 + k] > 0;
}

static int nblocks(const contents *c)
{
    switch (c->code) {
    case W_CONTIGUOUS: return 1;
    case W_VECTOR:
    case W_HVECTOR: return c->ints[0] < 2 ? c->ints[0] : 2; /* regular: two blocks tell */
    case W_INDEXED:
    case W_HINDEXED:
    case W_INDEXED_BLOCK:
    case W_HINDEXED_BLOCK:
    case W_STRUCT: return c->ints[0];
    default: return -1;
    }
}

/* Block k of a node in typemap order: byte offset, repetitions of child *ci. 0, or -1 on
 * overflow. */
static int block_at(const contents *c, const tnode *kids, int k, long long *off, long long *reps,
                    size_t *ci)
{
    long long ext = kids[0].extent, count = c->ints[0], disp = 0;
    int ok = 1;

    *ci = 0;
    switch (c->code) {
    case W_CONTIGUOUS: *reps = count; *off = 0; return 0;
    case W_VECTOR: *reps = c->ints[1];
        ok = !__builtin_mul_overflow((long long)k, (long long)c->ints[2], &disp) &&
             !__builtin_mul_overflow(disp, ext, off);
        break;
    case W_HVECTOR: *reps = c->ints[1];
        ok = !__builtin_mul_overflow((long long)k, (long long)c->aints[0], off);
        break;
    case W_INDEXED: *reps = c->ints[1 + k];
        ok = !__builtin_mul_overflow((long long)c->ints[1 + count + k], ext, off);
        break;
    case W_INDEXED_BLOCK: *reps = c->ints[1];
        ok = !__builtin_mul_overflow((long long)c->ints[2 + k], ext, off);
        break;
    case W_HINDEXED: *reps = c->ints[1 + k]; *off = c->aints[k]; break;
    case W_HINDEXED_BLOCK: *reps = c->ints[1]; *off = c->aints[k]; break;
    case W_STRUCT: *reps = c->ints[1 + k]; *off = c->aints[k]; *ci = (size_t)k; break;
    default: return -1;
    }
    return ok ? 0 : -1;
}

/* Are the blocks of this node, in typemap order, one gap-free ascending run? */
static int blocks_dense(const contents *c, const tnode *kids)
{
    int n = nblocks(c), started = 0;
    long long cursor = 0;

    if (n < 0)
        return 0; /* subarray, darray: not worth proving */
    for (int k = 0; k < n; k++) {
        long long off, reps, start, len;
        size_t ci;
        if (block_at(c, kids, k, &off, &reps, &ci) != 0)
            return 0;
        const tnode *kid = &kids[ci];
        if (reps == 0 || kid->size == 0)
            continue;
        if (!kid->dense || (reps > 1 && kid->extent != kid->size))
            return 0;
        if (__builtin_add_overflow(off, kid->true_lb, &start) ||
            __builtin_mul_overflow(reps, kid->size, &len))
            return 0;
        if (started && start != cursor)
            return 0;
        if (__builtin_add_overflow(start, len, &cursor))
            return 0;
        started = 1;
    }
    return 1;
}

/* The predefined type an MPI_Type_create_f90_* type stands for (MPI_Type_match_size). */
static MPI_Datatype f90_leaf(int code, MPI_Count size)
{
    int tclass = code == W_F90_REAL ? MPI_TYPECLASS_REAL
               : code == W_F90_COMPLEX ? MPI_TYPECLASS_COMPLEX : MPI_TYPECLASS_INTEGER;
    MPI_Datatype t = MPI_DATATYPE_NULL;

    if (size <= 0 || size > INT_MAX || PMPI_Type_match_size(tclass, (int)size, &t) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    return t;
}

static int walk_node(MPI_Datatype t, int depth, wbuf *b, tnode *out);

static int walk_named(MPI_Datatype t, wbuf *b, tnode *out)
{
    out->elem = t;
    out->dense = out->size == out->true_extent; /* false for pairs with inner padding */
    if (b) {
        int index = fr_dtype_predef_index(t);
        char name[MPI_MAX_OBJECT_NAME] = "";
        int len;
        if (index < 0) {
            PMPI_Type_get_name(t, name, &len);
            return fr_errorf(FR_ERR_TYPE, "predefined datatype %s is not supported by flexrma",
                             name[0] ? name : "(unnamed)");
        }
        put_u8(b, W_NAMED);
        put_u32(b, (size_t)index);
    }
    return MPI_SUCCESS;
}

static int walk_derived(MPI_Datatype t, int depth, int ni, int na, int nd, int combiner, wbuf *b,
                        tnode *out)
{
    contents c;
    tnode *kids = NULL;
    int rc = contents_get(t, ni, na, nd, combiner, &c);

    if (rc != MPI_SUCCESS)
        goto done;
    if (b)
        put_header(b, &c);
    kids = alloc_array(c.nd, sizeof *kids);
    for (size_t k = 0; k < c.nd; k++) {
        rc = walk_node(c.types[k], depth + 1, b, &kids[k]);
        if (rc != MPI_SUCCESS)
            goto done;
        if (child_counts(&c, k))
            leaf_merge(out, &kids[k]);
    }
    if (is_f90(c.code)) {
        out->elem = f90_leaf(c.code, out->size);
        out->mixed = out->elem == MPI_DATATYPE_NULL;
        out->dense = 1;
    } else if (c.code == W_DUP || c.code == W_RESIZED) {
        out->dense = kids[0].dense; /* same typemap */
    } else {
        out->dense = blocks_dense(&c, kids);
    }
done:
    free(kids);
    contents_free(&c);
    return rc;
}

static int walk_node(MPI_Datatype t, int depth, wbuf *b, tnode *out)
{
    int ni, na, nd, combiner;
    int rc;

    memset(out, 0, sizeof *out);
    out->elem = MPI_DATATYPE_NULL;
    if (depth >= WIRE_MAX_DEPTH)
        return fr_errorf(FR_ERR_TYPE, "datatype nested more than %d levels deep", WIRE_MAX_DEPTH);
    rc = node_sizes(t, out);
    if (rc != MPI_SUCCESS)
        return rc;
    FR_CHECK_MPI(PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    if (combiner == MPI_COMBINER_NAMED)
        return walk_named(t, b, out);
    return walk_derived(t, depth, ni, na, nd, combiner, b, out);
}

/* Walk t's tree (see the top of the file). elem: the single leaf, or MPI_DATATYPE_NULL when
 * leaves differ or there are none. dense: one element's data is a single block in typemap order.
 * With wire != NULL also serialize (*wire is malloc'ed, the caller frees it). */
int fr_dtype_walk(MPI_Datatype t, MPI_Datatype *elem, int *dense, unsigned char **wire,
                  size_t *wire_len)
{
    wbuf buf = {0}, *b = wire ? &buf : NULL;
    tnode root;
    int rc;

    put_u8(b, WIRE_VERSION);
    rc = walk_node(t, 0, b, &root);
    if (rc != MPI_SUCCESS) {
        free(buf.p);
        return rc;
    }
    *elem = root.elem;
    *dense = root.dense;
    if (wire) {
        *wire = buf.p;
        *wire_len = buf.len;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* decoding                                                                                   */

typedef struct reader {
    const unsigned char *p;
    size_t left;
    size_t start_len; /* for error messages: offset = start_len - left */
} reader;

/* Who may free a decoded handle. */
enum hold { HOLD_NAMED, HOLD_OWNED, HOLD_MPI /* MPI_Type_create_f90_*: never freed */ };

static int take(reader *r, void *dst, size_t n)
{
    if (r->left < n)
        return -1;
    memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
    return 0;
}

static int malformed(const reader *r, const char *what)
{
    return fr_errorf(FR_ERR_TYPE, "malformed datatype wire form: %s at byte %zu", what,
                     r->start_len - r->left);
}

static void release_kid(MPI_Datatype *t, int hold)
{
    if (hold == HOLD_OWNED)
        FR_CHECK_MPI(FR_NEXT(Type_free)(t));
}

static int construct(const contents *c, MPI_Datatype *out)
{
    const int *I = c->ints;
    const MPI_Aint *A = c->aints;
    MPI_Datatype k0 = c->nd ? c->types[0] : MPI_DATATYPE_NULL;
    int n = c->ni ? I[0] : 0;

    switch (c->code) {
    case W_DUP: return PMPI_Type_dup(k0, out);
    case W_CONTIGUOUS: return PMPI_Type_contiguous(n, k0, out);
    case W_VECTOR: return PMPI_Type_vector(n, I[1], I[2], k0, out);
    case W_HVECTOR: return PMPI_Type_create_hvector(n, I[1], A[0], k0, out);
    case W_INDEXED: return PMPI_Type_indexed(n, I + 1, I + 1 + n, k0, out);
    case W_HINDEXED: return PMPI_Type_create_hindexed(n, I + 1, A, k0, out);
    case W_INDEXED_BLOCK: return PMPI_Type_create_indexed_block(n, I[1], I + 2, k0, out);
    case W_HINDEXED_BLOCK: return PMPI_Type_create_hindexed_block(n, I[1], A, k0, out);
    case W_STRUCT: return PMPI_Type_create_struct(n, I + 1, A, c->types, out);
    case W_SUBARRAY:
        return PMPI_Type_create_subarray(n, I + 1, I + 1 + n, I + 1 + 2 * n, I[1 + 3 * n], k0, out);
    case W_DARRAY: {
        int d = I[2];
        return PMPI_Type_create_darray(I[0], I[1], d, I + 3, I + 3 + d, I + 3 + 2 * d,
                                       I + 3 + 3 * d, I[3 + 4 * d], k0, out);
    }
    case W_RESIZED: return PMPI_Type_create_resized(k0, A[0], A[1], out);
    case W_F90_REAL: return PMPI_Type_create_f90_real(I[0], I[1], out);
    case W_F90_COMPLEX: return PMPI_Type_create_f90_complex(I[0], I[1], out);
    case W_F90_INTEGER: return PMPI_Type_create_f90_integer(I[0], out);
    default: return MPI_ERR_TYPE;
    }
}

/* Read ni/na/nd and the argument arrays of a non-named node into c; *nd: children that follow
 * (c->nd stays 0: it counts the children decoded so far). */
static int read_args(reader *r, int code, contents *c, size_t *nd_out)
{
    uint32_t ni, na, nd;
    uint64_t need;

    if (take(r, &ni, 4) || take(r, &na, 4) || take(r, &nd, 4))
        return malformed(r, "truncated node header");
    need = 4 * (uint64_t)ni + 8 * (uint64_t)na + WIRE_MIN_NODE * (uint64_t)nd;
    if (need > r->left || ni > INT_MAX || na > INT_MAX || nd > INT_MAX)
        return malformed(r, "argument counts exceed the remaining bytes");
    c->code = code;
    c->ni = ni;
    c->na = na;
    c->ints = alloc_array(ni, sizeof *c->ints);
    c->aints = alloc_array(na, sizeof *c->aints);
    c->types = alloc_array(nd, sizeof *c->types);
    *nd_out = nd;
    /* `need` covers both arrays: copy them straight out of the input */
    for (size_t i = 0; i < ni; i++, r->p += 4, r->left -= 4) {
        int32_t v;
        memcpy(&v, r->p, 4);
        c->ints[i] = v;
    }
    for (size_t i = 0; i < na; i++, r->p += 8, r->left -= 8) {
        int64_t v;
        memcpy(&v, r->p, 8);
        if ((int64_t)(MPI_Aint)v != v)
            return malformed(r, "address argument out of range");
        c->aints[i] = (MPI_Aint)v;
    }
    if (!shape_ok(code, c->ints, ni, na, nd))
        return malformed(r, "arguments do not fit the combiner");
    return MPI_SUCCESS;
}

static int decode_node(reader *r, int depth, MPI_Datatype *out, int *hold);

/* Decode the children into c->types (c->nd counts the decoded ones, so cleanup frees exactly
 * those), then construct. */
static int decode_derived(reader *r, int depth, int code, MPI_Datatype *out, int *hold)
{
    contents c;
    int *kh = NULL;
    size_t want = 0;
    MPI_Datatype t;
    int rc;

    memset(&c, 0, sizeof c);
    rc = read_args(r, code, &c, &want);
    if (rc != MPI_SUCCESS)
        goto done;
    kh = alloc_array(want, sizeof *kh);
    for (; c.nd < want; c.nd++) {
        rc = decode_node(r, depth + 1, &c.types[c.nd], &kh[c.nd]);
        if (rc != MPI_SUCCESS)
            goto done;
    }
    if (construct(&c, &t) != MPI_SUCCESS) {
        rc = malformed(r, "MPI rejected the decoded constructor arguments");
        goto done;
    }
    *out = t;
    *hold = is_f90(code) ? HOLD_MPI : HOLD_OWNED;
done:
    for (size_t i = 0; i < c.nd; i++)
        release_kid(&c.types[i], kh[i]);
    free(kh);
    free(c.ints);
    free(c.aints);
    free(c.types);
    return rc;
}

static int decode_node(reader *r, int depth, MPI_Datatype *out, int *hold)
{
    uint8_t code;
    uint32_t index;
    MPI_Datatype t;

    if (depth >= WIRE_MAX_DEPTH)
        return malformed(r, "nesting too deep");
    if (take(r, &code, 1))
        return malformed(r, "truncated node");
    if (code != W_NAMED)
        return decode_derived(r, depth, code, out, hold);
    if (take(r, &index, 4))
        return malformed(r, "truncated predefined index");
    t = fr_dtype_predef_handle(index);
    if (t == MPI_DATATYPE_NULL)
        return malformed(r, "unknown predefined datatype index");
    *out = t;
    *hold = HOLD_NAMED;
    return MPI_SUCCESS;
}

/* Constructors report bad arguments through MPI_COMM_WORLD's (MPI-2) or MPI_COMM_SELF's (MPI-4)
 * error handler, which by default aborts. Arguments are validated first, but some (the f90
 * precision and range) can only be judged by MPI, so decoding runs with both set to return. */
static void quiet_begin(MPI_Errhandler saved[2])
{
    FR_CHECK_MPI(PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved[0]));
    FR_CHECK_MPI(PMPI_Comm_get_errhandler(MPI_COMM_SELF, &saved[1]));
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

static void quiet_end(MPI_Errhandler saved[2])
{
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(MPI_COMM_WORLD, saved[0]));
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(MPI_COMM_SELF, saved[1]));
    FR_CHECK_MPI(PMPI_Errhandler_free(&saved[0]));
    FR_CHECK_MPI(PMPI_Errhandler_free(&saved[1]));
}

/* The caller frees what it gets unless predefined: give it a freeable, committed handle. */
static int finish(reader *r, MPI_Datatype *t, int *hold)
{
    if (*hold == HOLD_MPI) {
        MPI_Datatype f90 = *t;
        if (PMPI_Type_dup(f90, t) != MPI_SUCCESS)
            return malformed(r, "cannot duplicate the f90 datatype");
        *hold = HOLD_OWNED;
    }
    if (*hold == HOLD_OWNED && PMPI_Type_commit(t) != MPI_SUCCESS)
        return malformed(r, "MPI rejected the decoded datatype at commit");
    return MPI_SUCCESS;
}

int fr_dtype_decode(const void *wire, size_t len, MPI_Datatype *out)
{
    reader r = {wire, len, len};
    MPI_Errhandler saved[2];
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int hold = HOLD_NAMED;
    uint8_t version;
    int rc;

    *out = MPI_DATATYPE_NULL;
    if (!wire || take(&r, &version, 1) || version != WIRE_VERSION)
        return malformed(&r, "missing or unknown version");
    quiet_begin(saved);
    rc = decode_node(&r, 0, &t, &hold);
    if (rc == MPI_SUCCESS && r.left != 0)
        rc = malformed(&r, "trailing bytes");
    if (rc == MPI_SUCCESS)
        rc = finish(&r, &t, &hold);
    if (rc != MPI_SUCCESS && t != MPI_DATATYPE_NULL)
        release_kid(&t, hold);
    quiet_end(saved);
    if (rc == MPI_SUCCESS)
        *out = t;
    return rc;
}
