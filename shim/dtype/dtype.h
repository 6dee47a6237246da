/* dtype.h - what flexrma knows about an MPI datatype, and how a datatype travels to a target.
 *
 * Origin side: fr_dtype_get() describes a handle once (sizes, extents, contiguity, the one
 * predefined element type if there is one) and keeps the description in a registry keyed by the
 * handle. For a derived type it also serializes the type tree, read with MPI_Type_get_envelope /
 * MPI_Type_get_contents, into a compact byte string: the "light-weight representation" of seed 000
 * section 4. Its size is proportional to the type tree, not to the data it describes.
 *
 * Target side: fr_dtype_decode() rebuilds an equivalent, committed datatype from those bytes with
 * the MPI type constructors; the window keeps it in a per-origin cache (see am_types.c) so each
 * (origin, datatype) pair travels once.
 *
 * Lifetime: a derived description holds a reference on the user's handle. When the user frees the
 * handle (MPI_Type_free is intercepted) while queued RMA operations still use it, the PMPI_Type_free
 * is deferred until the last of them releases it, as MPI requires ("communication currently using
 * this datatype completes normally"). Ids are never reused, so a freed type can never be confused
 * with a later type that gets the same handle value.
 */
#ifndef FR_DTYPE_H
#define FR_DTYPE_H

#include "core/fr.h"

/* Ids below FR_DTID_DERIVED_BASE name predefined datatypes (index into the predefined table). */
#define FR_DTID_DERIVED_BASE 1024u

typedef struct fr_dtype {
    MPI_Datatype handle;    /* the local handle this describes */
    uint64_t id;            /* predefined: table index; derived: >= FR_DTID_DERIVED_BASE, unique */
    int predefined;         /* named type (combiner MPI_COMBINER_NAMED) */
    int refs;               /* registry entry while the user's handle lives + one per holder */
    int user_freed;         /* the user called MPI_Type_free; PMPI_Type_free at last release */
    MPI_Count size;         /* MPI_Type_size: bytes of data in one element */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    int contiguous;         /* count elements form one block in typemap order: true_lb == 0,
                               extent == size == true_extent, elements in memory order */
    MPI_Datatype elem;      /* predefined type of every leaf (pair types count as one leaf), or
                               MPI_DATATYPE_NULL when leaves differ; accumulate requires one */
    MPI_Count elem_size;    /* size of elem, 0 if none */
    unsigned char *wire;    /* serialized type tree (derived types only), NULL for predefined */
    size_t wire_len;
    struct fr_runs *runs;   /* where its elements lie (fr_dtype_each_run), made on first use */
} fr_dtype;

/* Describe `t`. Returns MPI_SUCCESS and *out, or an fr_errorf() code: FR_ERR_TYPE for
 * MPI_DATATYPE_NULL, an uncommitted derived type, or a combiner/named type flexrma cannot ship.
 * The returned description stays valid until released by every holder; callers that keep it past
 * the current call must fr_dtype_retain() it. Predefined descriptions are static. */
int fr_dtype_lookup(MPI_Datatype t, fr_dtype **out);
/* The predefined description fr_dtype_lookup returned last: an RMA call names the same type
 * call after call. One pointer, checked against its own handle, so that a racing update can
 * only make the check miss. */
extern fr_dtype *fr_dtype_last_predef;
static inline int fr_dtype_get(MPI_Datatype t, fr_dtype **out)
{
    fr_dtype *d = fr_dtype_last_predef;
    if (d && d->handle == t) {
        *out = d;
        return MPI_SUCCESS;
    }
    return fr_dtype_lookup(t, out);
}
void fr_dtype_retain(fr_dtype *d);
void fr_dtype_release(fr_dtype *d); /* only for descriptions from fr_dtype_get() */

/* Fill the size/extent/contiguity/elem fields of *d for any committed handle (used for types
 * rebuilt at a target too). Does not touch id, refs, wire. */
int fr_dtype_info(MPI_Datatype t, fr_dtype *d);

/* MPI_Type_free interception: returns what MPI_Type_free must return. *forget gets the id of a
 * derived type that targets may have cached (the caller tells the windows), else 0. */
int fr_dtype_user_free(MPI_Datatype *t, uint64_t *forget);

/* Rebuild a committed datatype from wire bytes. The caller frees it with PMPI_Type_free unless
 * it is predefined (fr_dtype_predef_index(t) >= 0). Malformed input gives FR_ERR_TYPE, never a crash. */
int fr_dtype_decode(const void *wire, size_t len, MPI_Datatype *out);

/* Predefined datatypes travel by index into one table, because handle values differ between
 * processes. Index of t, or -1 if t is not a predefined type flexrma knows. */
int fr_dtype_predef_index(MPI_Datatype t);
MPI_Datatype fr_dtype_predef_handle(uint64_t index); /* MPI_DATATYPE_NULL if out of range */
const fr_dtype *fr_dtype_predef(uint64_t index);     /* static description, NULL if out of range */

/* Process teardown (MPI_Finalize): free every description and deferred handle. */
void fr_dtype_finalize(void);

/* ---- packing (contiguous fast path, MPI_Pack/MPI_Unpack otherwise) ---- */
/* Bytes of data in count elements of d, or -1 on overflow. */
static inline MPI_Count fr_dtype_bytes(const fr_dtype *d, int count)
{
    MPI_Count bytes;
    if (count < 0 || d->size < 0 || __builtin_mul_overflow(d->size, (MPI_Count)count, &bytes))
        return -1;
    return bytes;
}
/* Copy count elements at buf (layout d) into the contiguous buffer out of outlen bytes. */
int fr_pack(const void *buf, int count, const fr_dtype *d, void *out, size_t outlen);
/* Copy the packed bytes `in` (len bytes) into count elements at buf (layout d). */
int fr_unpack(const void *in, size_t len, void *buf, int count, const fr_dtype *d);
/* Move `bytes` of data from (src, scount, sdt) to (dst, dcount, ddt): one memmove when both
 * layouts are contiguous, one pack or unpack when one is, pack + unpack through a temporary
 * otherwise. */
int fr_copy_typed(const void *src, int scount, const fr_dtype *sdt, void *dst, int dcount,
                  const fr_dtype *ddt, size_t bytes);

/* ---- where the elements lie (dtype_runs.c) ---- */
typedef struct fr_runs fr_runs;
/* Called for each run of consecutive elements: n elements of the element type, the first at
 * disp bytes from the buffer address (element j at disp + j * its extent), and at index `first`
 * of the packed form. A return other than MPI_SUCCESS stops the walk and is returned. */
typedef int (*fr_run_fn)(void *arg, MPI_Aint disp, size_t first, size_t n);
/* Walk count elements of layout d, whose leaves are all of predefined type e, in typemap
 * order, adjacent runs merged. A derived d learns its runs on first use (MPI_Pack tells where
 * its elements are) and keeps them: callers hold the engine lock. */
int fr_dtype_each_run(const fr_dtype *d, int count, const fr_dtype *e, fr_run_fn fn, void *arg);
void fr_dtype_runs_free(fr_dtype *d); /* by whoever frees a description */

#endif
