/* dtype_predef.c - the table of predefined datatypes flexrma knows.
 *
 * A predefined datatype travels between processes as its index in this table, because handle
 * values differ between processes (Open MPI handles are addresses of globals). Every process runs
 * the same binary against the same MPI, so the table, and therefore every index, is the same
 * everywhere. The handles are only usable after MPI_Init and are not compile-time constants in
 * every MPI, so the table is filled on first use. Optional names (Fortran sized types, C complex)
 * are compiled in only when mpi.h defines them, and skipped at run time when the library reports
 * them as MPI_DATATYPE_NULL or empty (MPICH without Fortran).
 *
 * Each entry also records the type's class in the sense of MPI-2.2 section 5.9.2, which decides
 * the reduction operations accumulate may apply to it (acc.c).
 */
#include "dtype_internal.h"

#include <string.h>



/* Generous upper bound on the number of entries added by table_fill(). */
#define PREDEF_CAP 96
/* Open-addressing index from handle to entry; a power of two well above PREDEF_CAP. */
#define PREDEF_HASH 256

typedef struct predef {
    const char *name;  /* the macro's name, for diagnostics */
    MPI_Datatype handle;
    int tclass;
    int available;     /* defined by this MPI and described */
    fr_dtype desc;
} predef;

static predef table[PREDEF_CAP];
static unsigned table_len;
static int table_built;
static short hash_slot[PREDEF_HASH]; /* entry index + 1, 0 = empty */

static size_t hash_handle(MPI_Datatype t)
{
    uint64_t x = (uint64_t)(uintptr_t)t;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 40) & (PREDEF_HASH - 1);
}

static void add(const char *name, MPI_Datatype handle, int tclass)
{
    if (table_len == PREDEF_CAP)
        fr_fatal("dtype_predef.c: PREDEF_CAP too small");
    table[table_len].name = name;
    table[table_len].handle = handle;
    table[table_len].tclass = tclass;
    table_len++;
}

#define ADD(h, c) add(#h, h, c)

/* The order of these calls defines the wire indexes. */
static void table_fill(void)
{
    /* C */
    ADD(MPI_CHAR, FR_TC_OTHER);
    ADD(MPI_SIGNED_CHAR, FR_TC_CINT);
    ADD(MPI_UNSIGNED_CHAR, FR_TC_CINT);
    ADD(MPI_BYTE, FR_TC_BYTE);
    ADD(MPI_WCHAR, FR_TC_OTHER);
    ADD(MPI_SHORT, FR_TC_CINT);
    ADD(MPI_UNSIGNED_SHORT, FR_TC_CINT);
    ADD(MPI_INT, FR_TC_CINT);
    ADD(MPI_UNSIGNED, FR_TC_CINT);
    ADD(MPI_LONG, FR_TC_CINT);
    ADD(MPI_UNSIGNED_LONG, FR_TC_CINT);
#ifdef MPI_LONG_LONG_INT
    ADD(MPI_LONG_LONG_INT, FR_TC_CINT);
#endif
#ifdef MPI_LONG_LONG
    ADD(MPI_LONG_LONG, FR_TC_CINT); /* the same handle as MPI_LONG_LONG_INT in most MPIs */
#endif
#ifdef MPI_UNSIGNED_LONG_LONG
    ADD(MPI_UNSIGNED_LONG_LONG, FR_TC_CINT);
#endif
    ADD(MPI_FLOAT, FR_TC_FLOAT);
    ADD(MPI_DOUBLE, FR_TC_FLOAT);
    ADD(MPI_LONG_DOUBLE, FR_TC_FLOAT);
    ADD(MPI_INT8_T, FR_TC_CINT);
    ADD(MPI_UINT8_T, FR_TC_CINT);
    ADD(MPI_INT16_T, FR_TC_CINT);
    ADD(MPI_UINT16_T, FR_TC_CINT);
    ADD(MPI_INT32_T, FR_TC_CINT);
    ADD(MPI_UINT32_T, FR_TC_CINT);
    ADD(MPI_INT64_T, FR_TC_CINT);
    ADD(MPI_UINT64_T, FR_TC_CINT);
    ADD(MPI_C_BOOL, FR_TC_LOGICAL);
#ifdef MPI_C_COMPLEX
    ADD(MPI_C_COMPLEX, FR_TC_COMPLEX);
#endif
#ifdef MPI_C_FLOAT_COMPLEX
    ADD(MPI_C_FLOAT_COMPLEX, FR_TC_COMPLEX);
#endif
#ifdef MPI_C_DOUBLE_COMPLEX
    ADD(MPI_C_DOUBLE_COMPLEX, FR_TC_COMPLEX);
#endif
#ifdef MPI_C_LONG_DOUBLE_COMPLEX
    ADD(MPI_C_LONG_DOUBLE_COMPLEX, FR_TC_COMPLEX);
#endif
    ADD(MPI_AINT, FR_TC_MULTI);
    ADD(MPI_OFFSET, FR_TC_MULTI);
#ifdef MPI_COUNT
    ADD(MPI_COUNT, FR_TC_MULTI);
#endif
    ADD(MPI_PACKED, FR_TC_OTHER);
    /* pairs for MAXLOC/MINLOC */
    ADD(MPI_FLOAT_INT, FR_TC_PAIR);
    ADD(MPI_DOUBLE_INT, FR_TC_PAIR);
    ADD(MPI_LONG_INT, FR_TC_PAIR);
    ADD(MPI_2INT, FR_TC_PAIR);
    ADD(MPI_SHORT_INT, FR_TC_PAIR);
    ADD(MPI_LONG_DOUBLE_INT, FR_TC_PAIR);
    /* Fortran types available in C */
    ADD(MPI_CHARACTER, FR_TC_OTHER);
    ADD(MPI_INTEGER, FR_TC_FINT);
    ADD(MPI_REAL, FR_TC_FLOAT);
    ADD(MPI_DOUBLE_PRECISION, FR_TC_FLOAT);
    ADD(MPI_COMPLEX, FR_TC_COMPLEX);
    ADD(MPI_DOUBLE_COMPLEX, FR_TC_COMPLEX);
    ADD(MPI_LOGICAL, FR_TC_LOGICAL);
    ADD(MPI_2INTEGER, FR_TC_PAIR);
    ADD(MPI_2REAL, FR_TC_PAIR);
    ADD(MPI_2DOUBLE_PRECISION, FR_TC_PAIR);
#ifdef MPI_INTEGER1
    ADD(MPI_INTEGER1, FR_TC_FINT);
#endif
#ifdef MPI_INTEGER2
    ADD(MPI_INTEGER2, FR_TC_FINT);
#endif
#ifdef MPI_INTEGER4
    ADD(MPI_INTEGER4, FR_TC_FINT);
#endif
#ifdef MPI_INTEGER8
    ADD(MPI_INTEGER8, FR_TC_FINT);
#endif
#ifdef MPI_REAL4
    ADD(MPI_REAL4, FR_TC_FLOAT);
#endif
#ifdef MPI_REAL8
    ADD(MPI_REAL8, FR_TC_FLOAT);
#endif
    /* what MPI_Type_match_size() answers for the MPI_Type_create_f90_* types */
#ifdef MPI_COMPLEX8
    ADD(MPI_COMPLEX8, FR_TC_COMPLEX);
#endif
#ifdef MPI_COMPLEX16
    ADD(MPI_COMPLEX16, FR_TC_COMPLEX);
#endif
}

/* Describe one entry; entries this MPI does not provide stay unavailable. */
static void entry_describe(predef *p, uint64_t index)
{
    MPI_Count size = 0;

    if (p->handle == MPI_DATATYPE_NULL)
        return;
    if (PMPI_Type_size_x(p->handle, &size) != MPI_SUCCESS || size <= 0)
        return; /* e.g. a Fortran type of an MPI built without Fortran */
    if (fr_dtype_info(p->handle, &p->desc) != MPI_SUCCESS)
        return;
    p->desc.handle = p->handle;
    p->desc.id = index;
    p->desc.predefined = 1;
    p->desc.refs = 1;
    p->desc.user_freed = 0;
    p->desc.wire = NULL;
    p->desc.wire_len = 0;
    p->available = 1;
}

/* Aliases (MPI_LONG_LONG, MPI_C_COMPLEX) share a handle: the first entry wins. */
static void hash_insert(unsigned index)
{
    size_t h = hash_handle(table[index].handle);

    while (hash_slot[h] != 0) {
        if (table[hash_slot[h] - 1].handle == table[index].handle)
            return;
        h = (h + 1) & (PREDEF_HASH - 1);
    }
    hash_slot[h] = (short)(index + 1);
}

static void table_build(void)
{
    if (FR_LIKELY(table_built))
        return;
    table_fill();
    for (unsigned i = 0; i < table_len; i++) {
        entry_describe(&table[i], i);
        if (table[i].available)
            hash_insert(i);
    }
    table_built = 1;
}

int fr_dtype_predef_index(MPI_Datatype t)
{
    /* The last entry found: an RMA call looks up its origin and target types, mostly the same
     * one, call after call. One int, checked against the entry itself, so that even a racing
     * update can only make it miss. */
    static int last = -1;
    size_t h;

    if (t == MPI_DATATYPE_NULL)
        return -1;
    int hit = last;
    if (hit >= 0 && table[hit].handle == t)
        return hit;
    table_build();
    for (h = hash_handle(t); hash_slot[h] != 0; h = (h + 1) & (PREDEF_HASH - 1))
        if (table[hash_slot[h] - 1].handle == t) {
            last = hash_slot[h] - 1;
            return hash_slot[h] - 1;
        }
    return -1;
}

static const predef *entry(uint64_t index)
{
    table_build();
    if (index >= table_len || !table[index].available)
        return NULL;
    return &table[index];
}

MPI_Datatype fr_dtype_predef_handle(uint64_t index)
{
    const predef *p = entry(index);
    return p ? p->handle : MPI_DATATYPE_NULL;
}

const fr_dtype *fr_dtype_predef(uint64_t index)
{
    const predef *p = entry(index);
    return p ? &p->desc : NULL;
}

/* Class of entry index (enum fr_tclass), or -1 if out of range. */
int fr_dtype_predef_class(uint64_t index)
{
    const predef *p = entry(index);
    return p ? p->tclass : -1;
}
