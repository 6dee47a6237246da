/* am_types.c - datatypes between origin and target over the message transport.
 *
 * An origin sends a derived target datatype's description with the first operation that uses it
 * on a target, and remembers that it did (fr_peer.types_sent); the target rebuilds the type once
 * and caches it by (origin, id) (fr_peer.types_recv). When the origin frees the type, its id
 * goes on the target's drop list and travels with the next batch (seed 000 section 4: each type
 * is sent at most once, obsolete entries are deleted). The cache is per window because only
 * messages on one communicator are ordered: a description sent on one window could otherwise be
 * overtaken by its first use on another. */
#include "transport.h"
#include "core/next.h"

#include <stdlib.h>

void fr_am_rxtype_hold(const fr_dtype *d)
{
    if (!d->predefined)
        ((fr_dtype *)d)->refs++;
}

void fr_am_rxtype_unhold(const fr_dtype *d)
{
    if (d->predefined)
        return;
    fr_dtype *m = (fr_dtype *)d;
    if (--m->refs == 0) {
        FR_NEXT(Type_free)(&m->handle);
        fr_dtype_runs_free(m);
        free(m);
    }
}

const fr_dtype *fr_am_rxtype(fr_win *w, int src, uint64_t id)
{
    if (id < FR_DTID_DERIVED_BASE)
        return fr_dtype_predef(id);
    return fr_u64map_get(&w->peers[src].types_recv, id);
}

int fr_am_rxtype_add(fr_win *w, int src, uint64_t id, const void *desc, size_t len)
{
    MPI_Datatype t;
    int rc = fr_dtype_decode(desc, len, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    fr_dtype *d = fr_xcalloc(1, sizeof *d);
    rc = fr_dtype_info(t, d);
    if (rc != MPI_SUCCESS) {
        FR_NEXT(Type_free)(&t);
        free(d);
        return rc;
    }
    d->handle = t;
    d->id = id;
    d->refs = 1; /* the cache's */
    fr_am_rxtype_drop(w, src, id); /* a duplicate replaces the old entry */
    fr_u64map_put(&w->peers[src].types_recv, id, d);
    return MPI_SUCCESS;
}

void fr_am_rxtype_drop(fr_win *w, int src, uint64_t id)
{
    fr_dtype *d = fr_u64map_del(&w->peers[src].types_recv, id);
    if (d)
        fr_am_rxtype_unhold(d);
}

static void unhold_entry(uint64_t key, void *val, void *arg) { fr_am_rxtype_unhold(val); }

void fr_am_peer_types_free(fr_peer *p)
{
    fr_u64map_each(&p->types_recv, unhold_entry, NULL);
    fr_u64map_destroy(&p->types_recv);
}

/* The user freed a derived type: targets that cached it may drop it. */
void fr_windows_forget_type(uint64_t id)
{
    for (fr_win *w = fr_windows; w; w = w->next)
        for (int r = 0; r < w->size; r++) {
            fr_peer *p = &w->peers[r];
            if (!fr_u64map_del(&p->types_sent, id))
                continue;
            fr_grow(&p->types_drop, &p->cap_types_drop, p->ntypes_drop + 1,
                    sizeof *p->types_drop);
            p->types_drop[p->ntypes_drop++] = id;
        }
}
