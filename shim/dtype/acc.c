/* acc.c - reduction operations for accumulate: which apply to which types, and applying one.
 *
 * The combining itself is MPI's: PMPI_Reduce_local on the predefined element type, so every
 * (op, type) pair computes exactly as the MPI library's own reductions do. flexrma only arranges
 * the data: the origin's bytes arrive packed (consecutive elements of the element type, in
 * MPI_Pack format), the target's may be scattered over any layout. The target's elements are
 * walked in typemap order as runs of consecutive elements (fr_dtype_each_run) and combined in
 * batches of up to ACC_CHUNK: MPI_Reduce_local wants both operands as arrays of the element type
 * in memory layout, suitably aligned; for the common case (contiguous target of a gap-free
 * element type such as MPI_INT or MPI_DOUBLE) that is already so and the reduction runs in place
 * on the window. Where node peers may combine into the same memory, a batch goes to
 * acc_shared.c instead.
 */
#include "acc_internal.h"
#include "dtype_internal.h"
#include "core/mpi_compat.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


#define TC(c) (1u << (c))
#define TC_INTEGER (TC(FR_TC_CINT) | TC(FR_TC_FINT) | TC(FR_TC_MULTI))

/* Elements per batch (one MPI_Reduce_local call): bounds the scratch buffers. */
#define ACC_CHUNK 4096

typedef struct opdesc {
    MPI_Op op;
    const char *name;
} opdesc;

#define NOPS 14
static opdesc ops[NOPS];
static int ops_built;

/* Op handles are not compile-time constants in every MPI; fill the table on first use. The order
 * defines the wire index. */
static void ops_build(void)
{
    const opdesc table[NOPS] = {
        {MPI_SUM, "MPI_SUM"},         {MPI_PROD, "MPI_PROD"},     {MPI_MAX, "MPI_MAX"},
        {MPI_MIN, "MPI_MIN"},         {MPI_LAND, "MPI_LAND"},     {MPI_LOR, "MPI_LOR"},
        {MPI_LXOR, "MPI_LXOR"},       {MPI_BAND, "MPI_BAND"},     {MPI_BOR, "MPI_BOR"},
        {MPI_BXOR, "MPI_BXOR"},       {MPI_MAXLOC, "MPI_MAXLOC"}, {MPI_MINLOC, "MPI_MINLOC"},
        {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"},
    };

    if (FR_LIKELY(ops_built))
        return;
    memcpy(ops, table, sizeof ops);
    ops_built = 1;
}
_Static_assert(FR_OPI_REPLACE == 12 && FR_OPI_NO_OP == 13 && NOPS == 14,
               "acc.h names the table's indexes of MPI_REPLACE and MPI_NO_OP");

int fr_op_index(MPI_Op op)
{
    /* The last operation found: one int, checked against the table, so that even a racing
     * update can only make it miss. */
    static int last;
    ops_build();
    int hit = last;
    if (ops[hit].op == op)
        return hit;
    for (int i = 0; i < NOPS; i++)
        if (ops[i].op == op) {
            last = i;
            return i;
        }
    return -1;
}

MPI_Op fr_op_handle(int index)
{
    ops_build();
    return index >= 0 && index < NOPS ? ops[index].op : MPI_OP_NULL;
}

const char *fr_op_name(int index)
{
    ops_build();
    return index >= 0 && index < NOPS ? ops[index].name : "(invalid operation)";
}

static void type_name(MPI_Datatype t, char name[MPI_MAX_OBJECT_NAME])
{
    int len = 0;

    name[0] = '\0';
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_name(t, name, &len) != MPI_SUCCESS ||
        name[0] == '\0')
        strcpy(name, t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "(unnamed datatype)");
}

/* Error code e with a message naming the operation and the type (names fetched only on error:
 * fr_op_check runs for every accumulate). */
static int op_error(fr_err e, const char *why, const char *op, MPI_Datatype elem)
{
    char name[MPI_MAX_OBJECT_NAME];

    type_name(elem, name);
    return fr_errorf(e, "accumulate with %s on %s: %s", op, name, why);
}

/* Which (op, type) pairs accumulate takes is the MPI library's to say, not a table's: flexrma
 * must accept every program the library accepts (Open MPI and MPICH both reduce MPI_CHAR with
 * MPI_SUM, which MPI-2.2's table leaves out) and combines with the library's own
 * MPI_Reduce_local anyway. So each pair is tried once on one zeroed element, with the error
 * handlers MPI_Reduce_local may raise on (MPI_COMM_WORLD in MPI-3, MPI_COMM_SELF in MPI-4) set
 * to return, and the verdict kept. MPI_REPLACE and MPI_NO_OP, which MPI_Reduce_local does not
 * know, flexrma applies itself on every type. Pairs whose question would abort the process
 * (core/mpi_compat.h) are refused without asking. */
#define PREDEF_MAX 128
static signed char verdict[NOPS][PREDEF_MAX]; /* 0 not asked yet, 1 accepted, -1 refused */

static int library_reduces(MPI_Op op, MPI_Datatype t)
{
    if (fr_mpi_reduce_aborts(op, t))
        return 0;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    MPI_Errhandler saved[2];
    for (int i = 0; i < 2; i++) {
        PMPI_Comm_get_errhandler(comms[i], &saved[i]);
        PMPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    }
    _Alignas(max_align_t) unsigned char in[64] = {0}, inout[64] = {0};
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(t, &lb, &extent);
    if (rc == MPI_SUCCESS && extent > 0 && extent <= (MPI_Aint)sizeof in)
        rc = PMPI_Reduce_local(in, inout, 1, t, op);
    else if (rc == MPI_SUCCESS)
        rc = MPI_ERR_TYPE;
    for (int i = 0; i < 2; i++) {
        PMPI_Comm_set_errhandler(comms[i], saved[i]);
        PMPI_Errhandler_free(&saved[i]);
    }
    return rc == MPI_SUCCESS;
}

static int accepted(int oi, int ti, MPI_Datatype elem)
{
    if (ops[oi].op == MPI_REPLACE || ops[oi].op == MPI_NO_OP)
        return 1;
    if (ti >= PREDEF_MAX)
        return library_reduces(ops[oi].op, elem);
    if (FR_UNLIKELY(verdict[oi][ti] == 0))
        verdict[oi][ti] = library_reduces(ops[oi].op, elem) ? 1 : -1;
    return verdict[oi][ti] > 0;
}

int fr_op_reduces(MPI_Op op, MPI_Datatype t)
{
    int oi = fr_op_index(op), ti = fr_dtype_predef_index(t);
    if (oi < 0 || oi == FR_OPI_REPLACE || oi == FR_OPI_NO_OP || ti < 0)
        return 0;
    return accepted(oi, ti, t);
}

fr_op_pair fr_op_accepted;

int fr_op_check_ask(MPI_Op op, MPI_Datatype elem)
{
    int oi = fr_op_index(op), ti, tclass;

    if (op == MPI_OP_NULL)
        return op_error(FR_ERR_OP, "not an operation", "MPI_OP_NULL", elem);
    if (oi < 0)
        return op_error(FR_ERR_OP, "only predefined operations are allowed",
                        "a user-defined operation", elem);
    if (elem == MPI_DATATYPE_NULL)
        return op_error(FR_ERR_TYPE, "the basic components of the datatype are not all of the "
                        "same predefined datatype", ops[oi].name, elem);
    ti = fr_dtype_predef_index(elem);
    tclass = ti < 0 ? -1 : fr_dtype_predef_class((uint64_t)ti);
    if (tclass < 0)
        return op_error(FR_ERR_TYPE, "datatype not supported by flexrma", ops[oi].name, elem);
    if (!accepted(oi, ti, elem))
        return op_error(FR_ERR_OP, "operation not defined on this datatype (the MPI library's "
                        "MPI_Reduce_local refuses it)", ops[oi].name, elem);
    fr_op_accepted = (fr_op_pair){op, elem, 1};
    return MPI_SUCCESS;
}

/* ---- applying --------------------------------------------------------------------------- */

/* Alignment MPI_Reduce_local may assume for an array of e: the largest power of two dividing
 * its extent, at most that of max_align_t. */
static size_t elem_align(const fr_dtype *e)
{
    size_t x = (size_t)e->extent, a = x & -x; /* the lowest bit set (0: extent 0) */

    return a == 0 || a > _Alignof(max_align_t) ? _Alignof(max_align_t) : a;
}

unsigned char *fr_acc_scratch(const acc_run *a, unsigned char **p)
{
    size_t bytes;

    if (!*p) {
        if (fr_mul_size(a->chunk, (size_t)a->e->extent, &bytes) != 0)
            fr_fatal("acc.c: scratch size overflows");
        *p = fr_xmalloc(bytes);
    }
    return *p;
}

void fr_acc_pieces_add(acc_pieces *l, acc_piece x)
{
    if (l->n == (l->heap ? l->cap : sizeof l->few / sizeof l->few[0])) {
        size_t cap = 2 * l->n;
        acc_piece *p = fr_xmalloc(cap * sizeof *p);
        memcpy(p, fr_acc_pieces(l), l->n * sizeof *p);
        free(l->heap);
        l->heap = p;
        l->cap = cap;
    }
    fr_acc_pieces(l)[l->n++] = x;
}

void fr_acc_pieces_free(acc_pieces *l)
{
    free(l->heap);
    l->heap = NULL;
    l->n = 0;
}

/* Move n elements of e between memory form at `from` and `to` (only the data bytes when e has
 * padding: the padding may be someone else's). */
static int move_elems(const void *from, void *to, size_t n, const fr_dtype *e)
{
    if (e->contiguous) {
        memcpy(to, from, n * (size_t)e->extent);
        return MPI_SUCCESS;
    }
    return fr_copy_typed(from, (int)n, e, to, (int)n, e, n * (size_t)e->size);
}

int fr_acc_reduce_local(const acc_run *a, const void *in, void *inout, size_t n)
{
    if (fr_mpi_reduce_local(in, inout, (int)n, a->e->handle, a->op) != MPI_SUCCESS)
        return fr_errorf(FR_ERR_INTERN, "MPI_Reduce_local failed");
    return MPI_SUCCESS;
}

int fr_acc_gather(const acc_run *a, const acc_piece *p, size_t np, unsigned char *vout)
{
    size_t ext = (size_t)a->e->extent;
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < np && rc == MPI_SUCCESS; i++)
        rc = move_elems(p[i].at, vout + p[i].k0 * ext, p[i].n, a->e);
    return rc;
}

int fr_acc_reduce(acc_run *a, const void *vin, const acc_piece *p, size_t np, size_t n)
{
    size_t ext = (size_t)a->e->extent;
    int rc = MPI_SUCCESS;

    if (a->op == MPI_NO_OP)
        return MPI_SUCCESS;
    if (a->op == MPI_REPLACE) { /* MPI_Reduce_local does not implement it */
        for (size_t i = 0; i < np && rc == MPI_SUCCESS; i++)
            rc = move_elems((const unsigned char *)vin + p[i].k0 * ext, p[i].at, p[i].n, a->e);
        return rc;
    }
    if (np == 1 && a->e->contiguous && fr_acc_aligned(a, p->at))
        return fr_acc_reduce_local(a, vin, p->at, n);
    unsigned char *io = fr_acc_scratch(a, &a->io);
    for (size_t i = 0; i < np && rc == MPI_SUCCESS; i++)
        rc = move_elems(p[i].at, io + p[i].k0 * ext, p[i].n, a->e);
    if (rc == MPI_SUCCESS)
        rc = fr_acc_reduce_local(a, vin, io, n);
    for (size_t i = 0; i < np && rc == MPI_SUCCESS; i++)
        rc = move_elems(io + p[i].k0 * ext, p[i].at, p[i].n, a->e);
    return rc;
}

/* The batch's origin operands as an aligned array of e: in place when the packed form already
 * is one (no padding in e, aligned), else unpacked into scratch. */
static int operands(acc_run *a, const unsigned char **view)
{
    if (!a->packed) { /* MPI_NO_OP: no operands */
        *view = NULL;
        return MPI_SUCCESS;
    }
    const unsigned char *src = a->packed + a->first * (size_t)a->e->size;

    if (a->e->contiguous && fr_acc_aligned(a, src)) {
        *view = src;
        return MPI_SUCCESS;
    }
    unsigned char *in = fr_acc_scratch(a, &a->in);
    *view = in;
    return fr_unpack(src, a->nelems * (size_t)a->e->size, in, (int)a->nelems, a->e);
}

/* Where the values before go: straight into the packed result when the element type has no
 * padding (every way of combining writes them with memcpy, so alignment does not matter), else
 * into scratch, packed after. */
static unsigned char *fetch_to(acc_run *a)
{
    if (!a->fetch)
        return NULL;
    if (a->e->contiguous)
        return a->fetch + a->first * (size_t)a->e->size;
    return fr_acc_scratch(a, &a->old);
}

static int flush(acc_run *a)
{
    const unsigned char *vin = NULL;
    int rc = a->nelems ? operands(a, &vin) : MPI_SUCCESS;
    unsigned char *vout = fetch_to(a);

    if (rc == MPI_SUCCESS && a->nelems) {
        if (a->share) {
            rc = fr_acc_shared(a, vin, vout);
        } else {
            /* Nobody else combines here: the values before are simply read first. */
            if (vout)
                rc = fr_acc_gather(a, fr_acc_pieces(&a->pieces), a->pieces.n, vout);
            if (rc == MPI_SUCCESS)
                rc = fr_acc_reduce(a, vin, fr_acc_pieces(&a->pieces), a->pieces.n, a->nelems);
        }
    }
    if (rc == MPI_SUCCESS && vout && vout == a->old && a->nelems) {
        size_t size = (size_t)a->e->size;
        rc = fr_pack(vout, (int)a->nelems, a->e, a->fetch + a->first * size, a->nelems * size);
    }
    a->first += a->nelems;
    a->pieces.n = a->nelems = 0;
    return rc;
}

/* fr_run_fn: add a run of target elements to the batch, combining each time it fills. */
static int add_run(void *arg, MPI_Aint disp, size_t first, size_t n)
{
    acc_run *a = arg;
    char *at = a->target + disp;
    int rc = MPI_SUCCESS;

    while (n > 0 && rc == MPI_SUCCESS) {
        size_t m = a->chunk - a->nelems < n ? a->chunk - a->nelems : n;
        fr_acc_pieces_add(&a->pieces, (acc_piece){at, m, a->nelems});
        a->nelems += m;
        at += (MPI_Aint)m * a->e->extent;
        n -= m;
        if (a->nelems == a->chunk)
            rc = flush(a);
    }
    return rc;
}

#define SMALL_BYTES 64

/* Do the n bytes at x and at y overlap? */
static int overlap(const unsigned char *x, const unsigned char *y, size_t n)
{
    return x < y + n && y < x + n;
}

/* The n elements at target_addr, straight to their stripes (fr_acc_shared_run) without a batch;
 * the scratch its exclusive branch may take for them (chunk n) is freed here. */
static int shared_run(acc_run *a, void *target_addr, size_t n, const unsigned char *vin,
                      unsigned char *vout)
{
    a->chunk = n;
    a->io = NULL;
    int rc = fr_acc_shared_run(a, target_addr, n, vin, vout);
    free(a->io);
    return rc;
}

/* A few consecutive elements (at most SMALL_BYTES) into memory others combine into too
 * (MPI_Fetch_and_op, short accumulates): straight to their stripe, without a batch's pieces
 * and scratch buffers. The operands are copied to aligned memory on the stack only when they
 * are not aligned already (MPI_Reduce_local may assume the element's alignment); the values
 * before go straight to a->fetch (every way of combining writes them with memcpy) unless that
 * overlaps the operands (MPI forbids it; a copy keeps the operands intact all the same).
 * a: only the fields about the operation are set (the batch's are not zeroed: an acc_run is
 * large, and zeroing it was a fifth of an 8-byte MPI_Get_accumulate); run_group reads no
 * others (shared_run). */
static int small_shared(acc_run *a, void *target_addr, size_t n, size_t bytes)
{
    union {
        max_align_t align;
        unsigned char b[SMALL_BYTES];
    } in, old;
    const unsigned char *vin = a->packed;
    unsigned char *vout = a->fetch;
    if (vin && !fr_acc_aligned(a, vin)) {
        memcpy(in.b, vin, bytes);
        vin = in.b;
    }
    if (vout && vin && overlap(vout, vin, bytes))
        vout = old.b;
    int rc = shared_run(a, target_addr, n, vin, vout);
    if (rc == MPI_SUCCESS && vout == old.b)
        memcpy(a->fetch, old.b, bytes);
    return rc;
}

/* One contiguous run of any length into shared memory, without a batch's pieces (zeroing an
 * acc_run and walking the type's runs cost a sixth of a 1 KiB accumulate): when the operands
 * are aligned for MPI_Reduce_local in place, as the batch would then use them, and the values
 * before, if fetched, do not overlap them (MPI forbids it; the batch path copes). a: as for
 * small_shared. */
static int whole_run(const acc_run *a, const void *target_addr, size_t bytes)
{
    const unsigned char *in = a->packed, *out = a->fetch;
    return (!in || fr_acc_aligned(a, in)) && fr_acc_aligned(a, target_addr) &&
           !(in && out && overlap(out, in, bytes));
}

int fr_acc_apply(fr_acc_share *share, void *target_addr, int target_count, const fr_dtype *tinfo,
                 const void *packed, size_t packed_len, MPI_Op op, void *fetched)
{
    MPI_Count bytes = fr_dtype_bytes(tinfo, target_count);
    int rc = fr_op_check(op, tinfo->elem);

    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes < 0 || (size_t)bytes != packed_len)
        return fr_errorf(FR_ERR_TYPE_MISMATCH, "accumulate: %zu bytes of origin data for %lld "
                         "bytes of target data", packed_len, (long long)bytes);
    if (packed_len == 0)
        return MPI_SUCCESS;
    /* a predefined description is its table entry (id: its index) */
    int ti = tinfo->predefined ? (int)tinfo->id : fr_dtype_predef_index(tinfo->elem);
    const fr_dtype *e = fr_dtype_predef((uint64_t)ti);
    if (packed_len % (size_t)e->size != 0)
        return fr_errorf(FR_ERR_INTERN, "accumulate: %zu bytes are not whole elements", packed_len);
    int tclass = fr_dtype_predef_class((uint64_t)ti);
    /* Not for 1- and 2-byte integers: how their sums overflow is the MPI library's to say
     * (Open MPI 4.1's vector code saturates, open-mpi/ompi#8045); a wrapping add could differ. */
    int int_sum = op == MPI_SUM && e->size >= 4 && (TC(tclass) & TC_INTEGER);
    if (share && tinfo->contiguous && e->contiguous) {
        acc_run one; /* see small_shared: not zeroed */
        one.e = e;
        one.op = op;
        one.int_sum = int_sum;
        one.atomic = fr_acc_atomic_width(e) != 0;
        one.align = elem_align(e);
        one.share = share;
        one.packed = op == MPI_NO_OP ? NULL : packed;
        one.fetch = fetched;
        size_t n = packed_len / (size_t)e->size;
        if (packed_len <= SMALL_BYTES)
            return small_shared(&one, target_addr, n, packed_len);
        if (whole_run(&one, target_addr, packed_len))
            return shared_run(&one, target_addr, n, one.packed, one.fetch);
    }
    acc_run a = {.e = e, .op = op, .share = share, .int_sum = int_sum, .target = target_addr,
                 .packed = op == MPI_NO_OP ? NULL : packed, .fetch = fetched};
    if (!share && (op == MPI_REPLACE || op == MPI_NO_OP)) {
        /* Nobody else combines here: read the old values, then store (MPI_Reduce_local knows
         * neither operation). */
        if (fetched && (rc = fr_pack(target_addr, target_count, tinfo, fetched, packed_len)))
            return rc;
        return op == MPI_NO_OP ? MPI_SUCCESS
                               : fr_unpack(packed, packed_len, target_addr, target_count, tinfo);
    }
    a.atomic = fr_acc_atomic_width(a.e) != 0;
    a.align = elem_align(a.e);
    size_t nelem = packed_len / (size_t)a.e->size;
    /* Batches exist for the scratch arrays. A contiguous target and aligned operands used in
     * place, any values before fetched straight into the result (fetch_to), need none: then the
     * whole accumulate is one batch, combined with one MPI_Reduce_local (acc_shared.c: over all
     * its stripes at once). */
    int in_place = tinfo->contiguous && a.e->contiguous && a.packed &&
                   fr_acc_aligned(&a, a.packed) && fr_acc_aligned(&a, target_addr);
    a.chunk = (in_place && nelem <= INT_MAX) || nelem < ACC_CHUNK ? nelem : ACC_CHUNK;
    rc = fr_dtype_each_run(tinfo, target_count, a.e, add_run, &a);
    if (rc == MPI_SUCCESS)
        rc = flush(&a);
    fr_acc_pieces_free(&a.pieces);
    fr_acc_pieces_free(&a.group);
    free(a.in);
    free(a.io);
    free(a.old);
    return rc;
}

int fr_acc_cas(fr_acc_share *share, void *target, const fr_dtype *e, const void *origin,
               const void *compare, void *result)
{
    if (share)
        return fr_acc_shared_cas(share, target, e, origin, compare, result);
    size_t n = (size_t)e->size; /* nobody else combines here */
    memcpy(result, target, n);
    if (memcmp(result, compare, n) == 0)
        memcpy(target, origin, n);
    return MPI_SUCCESS;
}
