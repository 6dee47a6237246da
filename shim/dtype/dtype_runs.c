/* dtype_runs.c - where the elements of a datatype lie in memory, in typemap order.
 *
 * An accumulate that other processes may combine into the same window at the same time works
 * element by element (acc.c), so it needs the address of each target element, in the order of
 * the origin's packed data. MPI has no call that lists a typemap, and rebuilding one from
 * MPI_Type_get_contents means following every combiner (darray included). MPI_Pack knows it
 * already: pack one instance of the type from a buffer whose every byte holds one byte of its
 * own offset, and the first byte of packed element k holds that byte of element k's
 * displacement. One pass per byte of the type's span (two for up to 64 KiB, three for 16 MiB)
 * gives whole displacements. Done once per derived type, on first use, and kept on its
 * description as runs of consecutive elements (a vector of blocks costs one entry per block).
 */
#include "dtype_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct fr_run {
    MPI_Aint disp; /* first element, from the buffer address */
    size_t n;      /* consecutive elements: element j at disp + j * extent of the element type */
} fr_run;

struct fr_runs {
    size_t n;
    fr_run run[];
};

/* Does the element at disp come right after run r (elements stride apart)? */
static int continues(const fr_run *r, MPI_Aint stride, MPI_Aint disp)
{
    return r->n > 0 && r->disp + (MPI_Aint)r->n * stride == disp;
}

static void add_elem(fr_runs **rs, size_t *cap, MPI_Aint disp, MPI_Aint stride)
{
    fr_runs *r = *rs;
    if (r->n > 0 && continues(&r->run[r->n - 1], stride, disp)) {
        r->run[r->n - 1].n++;
        return;
    }
    if (r->n == *cap) {
        *cap *= 2;
        r = *rs = fr_xrealloc(r, sizeof *r + *cap * sizeof r->run[0]);
    }
    r->run[r->n++] = (fr_run){disp, 1};
}

/* The runs of one instance of d, whose leaves are all of type e. */
static int compute(const fr_dtype *d, const fr_dtype *e, fr_runs **out)
{
    size_t cap = 4, nelem = (size_t)(d->size / e->size), span = (size_t)d->true_extent;
    fr_runs *r = fr_xmalloc(sizeof *r + cap * sizeof r->run[0]);
    r->n = 0;
    if (nelem == 0 || span == 0) {
        *out = r;
        return MPI_SUCCESS;
    }
    unsigned char *shadow = fr_xmalloc(span), *packed = fr_xmalloc((size_t)d->size);
    MPI_Aint *disp = fr_xcalloc(nelem, sizeof *disp);
    int rc = MPI_SUCCESS;
    for (unsigned shift = 0; rc == MPI_SUCCESS && shift < 64 && (span - 1) >> shift; shift += 8) {
        for (size_t p = 0; p < span; p++)
            shadow[p] = (unsigned char)(p >> shift);
        /* the buffer address is true_lb bytes before the first byte the type touches */
        rc = fr_pack(shadow - d->true_lb, 1, d, packed, (size_t)d->size);
        for (size_t k = 0; rc == MPI_SUCCESS && k < nelem; k++)
            disp[k] |= (MPI_Aint)packed[k * (size_t)e->size] << shift;
    }
    for (size_t k = 0; rc == MPI_SUCCESS && k < nelem; k++)
        add_elem(&r, &cap, disp[k] + d->true_lb, e->extent);
    free(disp);
    free(packed);
    free(shadow);
    if (rc != MPI_SUCCESS) {
        free(r);
        return rc;
    }
    *out = r;
    return MPI_SUCCESS;
}

void fr_dtype_runs_free(fr_dtype *d)
{
    free(d->runs);
    d->runs = NULL;
}

int fr_dtype_each_run(const fr_dtype *d, int count, const fr_dtype *e, fr_run_fn fn, void *arg)
{
    if (count <= 0 || d->size == 0)
        return MPI_SUCCESS;
    if (d->contiguous && e->contiguous) /* one array of e */
        return fn(arg, 0, 0, (size_t)count * (size_t)(d->size / e->size));
    if (d->predefined) /* e itself, with padding: one element per extent, an array of e too */
        return fn(arg, 0, 0, (size_t)count);
    const fr_runs *r = d->runs;
    if (!r) {
        fr_runs *made;
        int rc = compute(d, e, &made);
        if (rc != MPI_SUCCESS)
            return rc;
        r = ((fr_dtype *)d)->runs = made; /* a cache: callers hold the engine lock */
    }
    /* Runs of consecutive instances, merged where one ends where the next begins. */
    fr_run cur = {0, 0};
    size_t first = 0, done = 0;
    for (int i = 0; i < count; i++) {
        for (size_t k = 0; k < r->n; k++) {
            MPI_Aint disp = (MPI_Aint)i * d->extent + r->run[k].disp;
            if (continues(&cur, e->extent, disp)) {
                cur.n += r->run[k].n;
            } else {
                int rc = cur.n > 0 ? fn(arg, cur.disp, first, cur.n) : MPI_SUCCESS;
                if (rc != MPI_SUCCESS)
                    return rc;
                first = done;
                cur = (fr_run){disp, r->run[k].n};
            }
            done += r->run[k].n;
        }
    }
    return cur.n > 0 ? fn(arg, cur.disp, first, cur.n) : MPI_SUCCESS;
}
