/* acc.c - reduction operations for accumulate: which apply to which types, and applying one.
 *
 * The combining itself is MPI's: PMPI_Reduce_local on the predefined element type, so every
 * (op, type) pair computes exactly as the MPI library's own reductions do. flexrma only arranges
 * the data: the origin's bytes arrive packed (consecutive elements of the element type, in
 * MPI_Pack format), the target's may be scattered over any layout. MPI_Reduce_local wants both
 * operands as arrays of the element type in memory layout, suitably aligned; for the common case
 * (contiguous target of a gap-free element type such as MPI_INT or MPI_DOUBLE) that is already
 * so and the reduction runs in place on the window.
 */
#include "acc.h"
#include "dtype_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


#define TC(c) (1u << (c))
#define TC_INTEGER (TC(FR_TC_CINT) | TC(FR_TC_FINT) | TC(FR_TC_MULTI))
#define TC_ANY 0xFFFFu

/* Elements per MPI_Reduce_local call: bounds the scratch buffers of the general path. */
#define ACC_CHUNK 65536

typedef struct opdesc {
    MPI_Op op;
    const char *name;
    unsigned classes; /* TC() bits of the type classes the op is defined on */
} opdesc;

#define NOPS 13
static opdesc ops[NOPS];
static int ops_built;

/* Op handles are not compile-time constants in every MPI; fill the table on first use. The order
 * defines the wire index. */
static void ops_build(void)
{
    const opdesc table[NOPS] = {
        {MPI_SUM, "MPI_SUM", TC_INTEGER | TC(FR_TC_FLOAT) | TC(FR_TC_COMPLEX)},
        {MPI_PROD, "MPI_PROD", TC_INTEGER | TC(FR_TC_FLOAT) | TC(FR_TC_COMPLEX)},
        {MPI_MAX, "MPI_MAX", TC_INTEGER | TC(FR_TC_FLOAT)},
        {MPI_MIN, "MPI_MIN", TC_INTEGER | TC(FR_TC_FLOAT)},
        {MPI_LAND, "MPI_LAND", TC(FR_TC_CINT) | TC(FR_TC_LOGICAL)},
        {MPI_LOR, "MPI_LOR", TC(FR_TC_CINT) | TC(FR_TC_LOGICAL)},
        {MPI_LXOR, "MPI_LXOR", TC(FR_TC_CINT) | TC(FR_TC_LOGICAL)},
        {MPI_BAND, "MPI_BAND", TC_INTEGER | TC(FR_TC_BYTE)},
        {MPI_BOR, "MPI_BOR", TC_INTEGER | TC(FR_TC_BYTE)},
        {MPI_BXOR, "MPI_BXOR", TC_INTEGER | TC(FR_TC_BYTE)},
        {MPI_MAXLOC, "MPI_MAXLOC", TC(FR_TC_PAIR)},
        {MPI_MINLOC, "MPI_MINLOC", TC(FR_TC_PAIR)},
        {MPI_REPLACE, "MPI_REPLACE", TC_ANY},
    };

    if (FR_LIKELY(ops_built))
        return;
    memcpy(ops, table, sizeof ops);
    ops_built = 1;
}

int fr_op_index(MPI_Op op)
{
    ops_build();
    for (int i = 0; i < NOPS; i++)
        if (ops[i].op == op)
            return i;
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

int fr_op_check(MPI_Op op, MPI_Datatype elem)
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
    if (!(ops[oi].classes & TC(tclass)))
        return op_error(FR_ERR_OP, "operation not defined on this datatype (MPI-2.2 5.9.2)",
                        ops[oi].name, elem);
    return MPI_SUCCESS;
}

/* ---- applying --------------------------------------------------------------------------- */

/* Alignment MPI_Reduce_local may assume for an array of e: the largest power of two dividing
 * its extent, at most that of max_align_t. */
static size_t elem_align(const fr_dtype *e)
{
    size_t a = 1;

    while (a < _Alignof(max_align_t) && e->extent % (MPI_Aint)(2 * a) == 0)
        a *= 2;
    return a;
}

/* The scratch state of one application. */
typedef struct acc_run {
    const fr_dtype *e;   /* the element type */
    MPI_Op op;
    size_t align;
    size_t chunk;        /* elements per MPI_Reduce_local call */
    unsigned char *in;   /* scratch arrays of `chunk` elements of e, allocated on demand */
    unsigned char *io;
} acc_run;

static unsigned char *scratch(const acc_run *a, unsigned char **p)
{
    size_t bytes;

    if (!*p) {
        if (fr_mul_size(a->chunk, (size_t)a->e->extent, &bytes) != 0)
            fr_fatal("acc.c: scratch size overflows");
        *p = fr_xmalloc(bytes);
    }
    return *p;
}

/* n packed elements at src viewed as an array of e: in place when the packed form already is
 * one (no holes in e, aligned), else unpacked into the scratch buffer *p. */
static int as_array(const acc_run *a, const unsigned char *src, int n, unsigned char **p,
                    void **view)
{
    size_t len = (size_t)n * (size_t)a->e->size;

    if (a->e->contiguous && (uintptr_t)src % a->align == 0) {
        *view = (void *)src;
        return MPI_SUCCESS;
    }
    *view = scratch(a, p);
    return fr_unpack(src, len, *view, n, a->e);
}

/* One chunk: tgt[i] = in[i] op tgt[i] for n elements, both operands in packed form. */
static int reduce_chunk(acc_run *a, const unsigned char *in, unsigned char *tgt, int n)
{
    void *vin, *vio;
    int rc = as_array(a, in, n, &a->in, &vin);

    if (rc == MPI_SUCCESS)
        rc = as_array(a, tgt, n, &a->io, &vio);
    if (rc != MPI_SUCCESS)
        return rc;
    if (PMPI_Reduce_local(vin, vio, n, a->e->handle, a->op) != MPI_SUCCESS)
        return fr_errorf(FR_ERR_INTERN, "MPI_Reduce_local failed");
    if (vio != tgt) /* worked on a copy: store it back */
        rc = fr_pack(vio, n, a->e, tgt, (size_t)n * (size_t)a->e->size);
    return rc;
}

static int reduce_all(acc_run *a, const unsigned char *in, unsigned char *tgt, size_t nelem)
{
    size_t esize = (size_t)a->e->size;
    int rc = MPI_SUCCESS;

    a->chunk = nelem < ACC_CHUNK ? nelem : ACC_CHUNK;
    for (size_t done = 0; done < nelem && rc == MPI_SUCCESS;) {
        int n = nelem - done < a->chunk ? (int)(nelem - done) : (int)a->chunk;
        rc = reduce_chunk(a, in + done * esize, tgt + done * esize, n);
        done += (size_t)n;
    }
    return rc;
}

int fr_acc_apply(void *target_addr, int target_count, const fr_dtype *tinfo,
                 const void *packed, size_t packed_len, MPI_Op op)
{
    acc_run a = {.op = op};
    MPI_Count bytes = fr_dtype_bytes(tinfo, target_count);
    unsigned char *tgt = NULL;
    int rc = fr_op_check(op, tinfo->elem);

    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes < 0 || (size_t)bytes != packed_len)
        return fr_errorf(FR_ERR_TYPE_MISMATCH, "accumulate: %zu bytes of origin data for %lld "
                         "bytes of target data", packed_len, (long long)bytes);
    if (packed_len == 0)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) /* MPI_Reduce_local does not implement it */
        return fr_unpack(packed, packed_len, target_addr, target_count, tinfo);
    a.e = fr_dtype_predef((uint64_t)fr_dtype_predef_index(tinfo->elem));
    a.align = elem_align(a.e);
    if (packed_len % (size_t)a.e->size != 0)
        return fr_errorf(FR_ERR_INTERN, "accumulate: %zu bytes are not whole elements", packed_len);
    /* The target in packed form: itself when contiguous, else a packed copy. */
    if (tinfo->contiguous) {
        tgt = target_addr;
    } else {
        tgt = fr_xmalloc(packed_len);
        rc = fr_pack(target_addr, target_count, tinfo, tgt, packed_len);
    }
    if (rc == MPI_SUCCESS)
        rc = reduce_all(&a, packed, tgt, packed_len / (size_t)a.e->size);
    if (rc == MPI_SUCCESS && tgt != target_addr)
        rc = fr_unpack(tgt, packed_len, target_addr, target_count, tinfo);
    if (tgt != target_addr)
        free(tgt);
    free(a.in);
    free(a.io);
    return rc;
}
