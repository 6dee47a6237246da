/* dtype.c - datatype descriptions, the registry of derived ones, and packing.
 *
 * The registry maps a user's derived handle to its description (fr_dtype) for as long as the
 * handle lives, so a datatype is described and serialized once however many RMA operations use
 * it. Predefined datatypes never enter it: their descriptions are the static ones of the
 * predefined table (dtype_predef.c).
 *
 * Lifetime of a derived description: the registry holds one reference, each queued operation one
 * more (fr_dtype_retain). MPI_Type_free (fr_dtype_user_free) removes the handle from the registry
 * at once, so a later datatype that reuses the handle value gets a fresh description and id; the
 * PMPI_Type_free itself waits for the last reference. Descriptions waiting that way sit on the
 * `deferred` list so that fr_dtype_finalize() can free them.
 *
 * Packing relies on the MPI_Pack format of a homogeneous run being the data bytes in typemap
 * order (true of Open MPI and MPICH): that is what lets a contiguous datatype pack with memcpy and
 * still match a peer that unpacks with MPI_Unpack.
 */
#include "dtype_internal.h"
#include "core/mpi_compat.h"
#include "core/next.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* A registered description. `d` comes first so that an fr_dtype * converts back to its entry. */
typedef struct entry {
    fr_dtype d;
    struct entry *hnext;         /* registry bucket chain */
    struct entry *dprev, *dnext; /* deferred list, once out of the registry */
    int registered;
    int mpi_owned;               /* MPI_Type_create_f90_* result: the user may not free it */
} entry;

static entry **buckets;  /* registry: hash of handle -> entry, chained */
static size_t nbuckets;  /* power of two, or 0 before the first insert */
static size_t nentries;
static entry *deferred;  /* freed by the user, still referenced */
static uint64_t next_id = FR_DTID_DERIVED_BASE;

static entry *entry_of(fr_dtype *d)
{
    return (entry *)d;
}

static void type_name(MPI_Datatype t, char name[MPI_MAX_OBJECT_NAME])
{
    int len = 0;

    name[0] = '\0';
    if (PMPI_Type_get_name(t, name, &len) != MPI_SUCCESS || name[0] == '\0')
        strcpy(name, "(unnamed derived datatype)");
}

/* ---- registry --------------------------------------------------------------------------- */

static size_t bucket_of(MPI_Datatype t, size_t n)
{
    uint64_t x = (uint64_t)(uintptr_t)t;
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 32) & (n - 1);
}

static entry *registry_find(MPI_Datatype t)
{
    if (nbuckets == 0)
        return NULL;
    for (entry *e = buckets[bucket_of(t, nbuckets)]; e; e = e->hnext)
        if (e->d.handle == t)
            return e;
    return NULL;
}

/* Keep the load factor at most 1. */
static void registry_grow(void)
{
    size_t n = nbuckets ? nbuckets : 32;
    entry **b;

    if (nentries < nbuckets)
        return;
    if (nbuckets && fr_mul_size(nbuckets, 2, &n) != 0)
        fr_fatal("dtype.c: datatype registry too large");
    b = fr_xcalloc(n, sizeof *b);
    for (size_t i = 0; i < nbuckets; i++) {
        entry *e = buckets[i], *next;
        for (; e; e = next) {
            size_t k = bucket_of(e->d.handle, n);
            next = e->hnext;
            e->hnext = b[k];
            b[k] = e;
        }
    }
    free(buckets);
    buckets = b;
    nbuckets = n;
}

static void registry_insert(entry *e)
{
    size_t k;

    registry_grow();
    k = bucket_of(e->d.handle, nbuckets);
    e->hnext = buckets[k];
    buckets[k] = e;
    e->registered = 1;
    nentries++;
}

static void registry_remove(entry *e)
{
    entry **p = &buckets[bucket_of(e->d.handle, nbuckets)];

    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    e->hnext = NULL;
    e->registered = 0;
    nentries--;
}

static void deferred_link(entry *e)
{
    e->dprev = NULL;
    e->dnext = deferred;
    if (deferred)
        deferred->dprev = e;
    deferred = e;
}

static void deferred_unlink(entry *e)
{
    if (e->dprev)
        e->dprev->dnext = e->dnext;
    else if (deferred == e)
        deferred = e->dnext;
    if (e->dnext)
        e->dnext->dprev = e->dprev;
    e->dprev = e->dnext = NULL;
}

/* Free a description; the user's handle too if the user already freed it. */
static void entry_destroy(entry *e)
{
    if (e->d.user_freed)
        FR_CHECK_MPI(FR_NEXT(Type_free)(&e->d.handle));
    free(e->d.wire);
    fr_dtype_runs_free(&e->d);
    free(e);
}

/* ---- descriptions ----------------------------------------------------------------------- */

/* fr_dtype_info, plus the wire form when wire is requested. */
static int describe(MPI_Datatype t, fr_dtype *d, int want_wire)
{
    MPI_Count size, lb, extent, true_lb, true_extent, elem_size = 0;
    MPI_Datatype elem;
    int dense, rc;

    if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(t, &true_lb, &true_extent) != MPI_SUCCESS)
        return fr_errorf(FR_ERR_TYPE, "cannot query the size and extent of a datatype");
    if (size == MPI_UNDEFINED || size < 0 || (MPI_Aint)extent != extent ||
        (MPI_Aint)true_extent != true_extent)
        return fr_errorf(FR_ERR_TYPE, "datatype size or extent out of range");
    rc = fr_dtype_walk(t, &elem, &dense, want_wire ? &d->wire : NULL, &d->wire_len);
    if (rc != MPI_SUCCESS)
        return rc;
    if (elem != MPI_DATATYPE_NULL)
        FR_CHECK_MPI(PMPI_Type_size_x(elem, &elem_size));
    d->size = size;
    d->lb = (MPI_Aint)lb;
    d->extent = (MPI_Aint)extent;
    d->true_lb = (MPI_Aint)true_lb;
    d->true_extent = (MPI_Aint)true_extent;
    /* One block from the buffer's start, in typemap order, with no gap between elements. */
    d->contiguous = dense && true_lb == 0 && extent == size && true_extent == size;
    d->elem = elem;
    d->elem_size = elem_size;
    return MPI_SUCCESS;
}

int fr_dtype_info(MPI_Datatype t, fr_dtype *d)
{
    return describe(t, d, 0);
}

/* MPI reports no "committed" attribute; a one-element receive from MPI_PROC_NULL checks it
 * (MPI_ERR_TYPE) and writes nothing. One element, not zero: MPICH checks only then. */
static int check_committed(MPI_Datatype t)
{
    MPI_Request req;
    char name[MPI_MAX_OBJECT_NAME], nothing;

    if (PMPI_Irecv(&nothing, 1, t, MPI_PROC_NULL, 0, fr_comm_self, &req) != MPI_SUCCESS) {
        type_name(t, name);
        return fr_errorf(FR_ERR_TYPE, "datatype %s is not committed", name);
    }
    FR_CHECK_MPI(FR_NEXT(Wait)(&req, MPI_STATUS_IGNORE));
    return MPI_SUCCESS;
}

static int is_f90_combiner(int combiner)
{
    return combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
           combiner == MPI_COMBINER_F90_INTEGER;
}

static int register_derived(MPI_Datatype t, int combiner, fr_dtype **out)
{
    entry *e = fr_xcalloc(1, sizeof *e);
    int rc = describe(t, &e->d, 1);

    if (rc != MPI_SUCCESS) {
        free(e->d.wire);
        free(e);
        return rc;
    }
    e->d.handle = t;
    e->d.id = next_id++;
    e->d.refs = 1; /* the registry's */
    e->mpi_owned = is_f90_combiner(combiner);
    registry_insert(e);
    *out = &e->d;
    return MPI_SUCCESS;
}

fr_dtype *fr_dtype_last_predef;

int fr_dtype_lookup(MPI_Datatype t, fr_dtype **out)
{
    int index, ni, na, nd, combiner, rc;
    entry *e;
    char name[MPI_MAX_OBJECT_NAME];

    if (t == MPI_DATATYPE_NULL)
        return fr_errorf(FR_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    index = fr_dtype_predef_index(t);
    /* the static table entry is not const; only the accessor's view is */
    fr_dtype *predef = index >= 0 ? (fr_dtype *)fr_dtype_predef((uint64_t)index) : NULL;
    if (predef) {
        *out = fr_dtype_last_predef = predef;
        return MPI_SUCCESS;
    }
    e = registry_find(t);
    if (e) {
        *out = &e->d;
        return MPI_SUCCESS;
    }
    FR_CHECK_MPI(PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    if (combiner == MPI_COMBINER_NAMED) {
        type_name(t, name);
        return fr_errorf(FR_ERR_TYPE, "predefined datatype %s is not supported by flexrma", name);
    }
    rc = check_committed(t);
    if (rc != MPI_SUCCESS)
        return rc;
    return register_derived(t, combiner, out);
}

void fr_dtype_retain(fr_dtype *d)
{
    if (d && !d->predefined)
        d->refs++;
}

void fr_dtype_release(fr_dtype *d)
{
    entry *e;

    if (!d || d->predefined || --d->refs > 0)
        return;
    e = entry_of(d);
    if (e->registered)
        fr_fatal("dtype.c: datatype id %llu released more often than retained",
                 (unsigned long long)d->id);
    deferred_unlink(e);
    entry_destroy(e);
}

int fr_dtype_user_free(MPI_Datatype *t, uint64_t *forget)
{
    entry *e;
    int rc;

    *forget = 0;
    if (!t)
        return fr_errorf(FR_ERR_ARG, "MPI_Type_free: the datatype argument is NULL");
    e = *t == MPI_DATATYPE_NULL ? NULL : registry_find(*t);
    if (e && !e->mpi_owned) {
        registry_remove(e);
        e->d.user_freed = 1;
        *forget = e->d.id;
        deferred_link(e);
        fr_dtype_release(&e->d); /* the registry's reference */
        *t = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
    }
    /* Not ours to defer (never used for RMA, predefined, or f90): MPI decides. */
    rc = FR_NEXT(Type_free)(t);
    if (rc == MPI_SUCCESS)
        *t = MPI_DATATYPE_NULL;
    return rc;
}

/* Holders still referencing a description after this are a bug of the caller: MPI is ending. */
void fr_dtype_finalize(void)
{
    fr_dtype_last_predef = NULL;
    for (size_t i = 0; i < nbuckets; i++) {
        entry *e = buckets[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            entry_destroy(e); /* the user's live handle is MPI_Finalize's to reclaim */
        }
    }
    free(buckets);
    buckets = NULL;
    nbuckets = nentries = 0;
    while (deferred) {
        entry *e = deferred;
        deferred_unlink(e);
        entry_destroy(e);
    }
}

/* ---- packing ---------------------------------------------------------------------------- */

/* MPI_Pack and MPI_Unpack count in int: split count into runs of at most INT_MAX bytes. */
static int run_length(const fr_dtype *d, int left)
{
    MPI_Count per = d->size ? INT_MAX / d->size : left;
    return per < left ? (int)per : left;
}

static int check_sizes(const fr_dtype *d, int count, size_t have, int exact, MPI_Count *bytes,
                       const char *what)
{
    *bytes = fr_dtype_bytes(d, count);
    if (*bytes < 0)
        return fr_errorf(FR_ERR_COUNT, "%s: %d elements of %lld bytes overflow", what, count,
                         (long long)d->size);
    if (d->size > INT_MAX && !d->contiguous)
        return fr_errorf(FR_ERR_TYPE, "%s: datatype of %lld bytes exceeds MPI_Pack's int limits",
                         what, (long long)d->size);
    if ((MPI_Count)have < *bytes || (exact && (MPI_Count)have != *bytes))
        return fr_errorf(exact ? FR_ERR_TYPE_MISMATCH : FR_ERR_INTERN,
                         "%s: %zu bytes of buffer for %lld bytes of data", what, have,
                         (long long)*bytes);
    return MPI_SUCCESS;
}

int fr_pack(const void *buf, int count, const fr_dtype *d, void *out, size_t outlen)
{
    MPI_Count bytes;
    int rc = check_sizes(d, count, outlen, 0, &bytes, "pack");

    if (rc != MPI_SUCCESS || bytes == 0)
        return rc;
    if (d->contiguous) {
        fr_copy_bytes(out, buf, (size_t)bytes);
        return MPI_SUCCESS;
    }
    for (int done = 0, n; done < count; done += n) {
        int pos = 0;
        n = run_length(d, count - done);
        const void *from;
        MPI_Datatype view;
        rc = fr_mpi_pack_view((const char *)buf + (MPI_Aint)done * d->extent, d->handle, &from,
                              &view);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Pack(from, n, view, (char *)out + (MPI_Count)done * d->size,
                           (int)(n * d->size), &pos, fr_comm_self);
            fr_mpi_pack_view_free(d->handle, &view);
        }
        if (rc != MPI_SUCCESS || pos != n * d->size)
            return fr_errorf(FR_ERR_INTERN, "MPI_Pack failed (MPI error %d)", rc);
    }
    return MPI_SUCCESS;
}

int fr_unpack(const void *in, size_t len, void *buf, int count, const fr_dtype *d)
{
    MPI_Count bytes;
    int rc = check_sizes(d, count, len, 1, &bytes, "unpack");

    if (rc != MPI_SUCCESS || bytes == 0)
        return rc;
    if (d->contiguous) {
        fr_copy_bytes(buf, in, (size_t)bytes);
        return MPI_SUCCESS;
    }
    for (int done = 0, n; done < count; done += n) {
        int pos = 0;
        n = run_length(d, count - done);
        const void *to;
        MPI_Datatype view;
        rc = fr_mpi_pack_view((char *)buf + (MPI_Aint)done * d->extent, d->handle, &to, &view);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Unpack((const char *)in + (MPI_Count)done * d->size, (int)(n * d->size),
                             &pos, (void *)to, n, view, fr_comm_self);
            fr_mpi_pack_view_free(d->handle, &view);
        }
        if (rc != MPI_SUCCESS || pos != n * d->size)
            return fr_errorf(FR_ERR_INTERN, "MPI_Unpack failed (MPI error %d)", rc);
    }
    return MPI_SUCCESS;
}

int fr_copy_typed(const void *src, int scount, const fr_dtype *sdt, void *dst, int dcount,
                  const fr_dtype *ddt, size_t bytes)
{
    if (bytes == 0)
        return MPI_SUCCESS;
    if (sdt->contiguous && ddt->contiguous) {
        fr_copy_bytes(dst, src, bytes);
        return MPI_SUCCESS;
    }
    if (sdt->contiguous)
        return fr_unpack(src, bytes, dst, dcount, ddt);
    if (ddt->contiguous)
        return fr_pack(src, scount, sdt, dst, bytes);
    void *tmp = fr_xmalloc(bytes);
    int rc = fr_pack(src, scount, sdt, tmp, bytes);
    if (rc == MPI_SUCCESS)
        rc = fr_unpack(tmp, bytes, dst, dcount, ddt);
    free(tmp);
    return rc;
}
