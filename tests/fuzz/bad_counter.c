/* bad_counter.c - erroneous calls of the synchronization counters (docs/specification.md section
 * 6): counters that are MPIX_SYNC_NULL, of another window, owned by another rank than the call
 * needs, or freed by their owner (the caller, or another rank that must tell the caller);
 * negative counts, bad sync_mode bits and ranks, NULL outputs, requests of the wrong kind or
 * MPI_REQUEST_NULL (what MPI_Request_free leaves). Outputs must stay as they were: request
 * handles, the value read, the counter arrays. */
#include "fuzz.h"

#include <limits.h>
#include <string.h>

static int same_sync(MPI_Sync a, MPI_Sync b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A counter that is wrong for any call on w, with its description. */
static MPI_Sync wrong_counter(fz_run *r, char *how, size_t n)
{
    switch (fz_below(&r->rng, 3)) {
    case 0:
        snprintf(how, n, "MPIX_SYNC_NULL");
        return MPIX_SYNC_NULL;
    case 1:
        snprintf(how, n, "my counter on another window");
        return r->other->mine;
    default:
        snprintf(how, n, "my own counter, freed");
        return r->w->stale;
    }
}

/* CX_COUNTER: misuse of the started requests, which must stay active and unchanged. */
static int active_misuse(fz_run *r, fz_call *c, int *untouched)
{
    MPI_Request ops = r->ops_active, busy = r->busy_active;
    MPI_Sync a[1] = {r->w->busy};
    int rc;
    c->expect = MPI_ERR_REQUEST;
    switch (fz_below(&r->rng, 4)) {
    case 0:
        snprintf(c->fn, sizeof c->fn, "MPI_Start");
        snprintf(c->what, sizeof c->what, "of the active sync-ops request");
        rc = MPI_Start(&r->ops_active);
        break;
    case 1:
        snprintf(c->fn, sizeof c->fn, "MPI_Start");
        snprintf(c->what, sizeof c->what, "of the armed sync-object request");
        rc = MPI_Start(&r->busy_active);
        break;
    case 2:
        snprintf(c->fn, sizeof c->fn, "MPI_Cancel");
        snprintf(c->what, sizeof c->what, "of the active sync-ops request");
        rc = MPI_Cancel(&r->ops_active);
        break;
    default:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_Sync_free_objects");
        snprintf(c->what, sizeof c->what, "of a counter of mine an armed request waits on");
        c->expect = MPI_ERR_RMA_SYNC;
        rc = MPI_Win_Sync_free_objects(1, a, r->w->win);
        break;
    }
    *untouched = ops == r->ops_active && busy == r->busy_active &&
                 memcmp(a, &r->w->busy, sizeof a) == 0;
    return rc;
}

void fz_bad_counter(fz_run *r)
{
    fz_rng *g = &r->rng;
    fz_win *w = r->w;
    fz_call c = {.target = -1, .expect = MPI_ERR_ARG};
    MPI_Request req = MPI_REQUEST_NULL;
    int rc, untouched = 1;
    char how[64];
    int other = (r->rank + 1 + fz_below(g, r->nprocs - 1)) % r->nprocs; /* not me */
    if (r->cx == CX_COUNTER && fz_below(g, 3) == 0) {
        rc = active_misuse(r, &c, &untouched);
        fz_check(r, &c, rc, untouched);
        return;
    }

    switch (fz_below(g, 6)) {
    case 0: { /* MPI_Win_sync_ops_init */
        int t = fz_below(g, r->nprocs), mode = MPI_MODE_WIN_PUT;
        MPI_Sync s = w->all[t];
        MPI_Request *out = &req;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_sync_ops_init");
        switch (fz_below(g, 5)) {
        case 0: {
            const int v[] = {r->nprocs, -3, INT_MAX};
            t = v[fz_below(g, 3)];
            c.expect = MPI_ERR_RANK;
            snprintf(c.what, sizeof c.what, "target_rank %d", t);
            break;
        }
        case 1: {
            const int v[] = {8, MPI_MODE_WIN_PUT | 1 << 20, -1};
            mode = v[fz_below(g, 3)];
            snprintf(c.what, sizeof c.what, "sync_mode 0x%x", mode);
            break;
        }
        case 2:
            s = wrong_counter(r, how, sizeof how);
            t = r->rank;
            snprintf(c.what, sizeof c.what, "counter is %s, target myself", how);
            break;
        case 3:
            s = w->all[(t + 1 + fz_below(g, r->nprocs - 1)) % r->nprocs];
            snprintf(c.what, sizeof c.what, "counter not owned by target_rank %d", t);
            break;
        default:
            out = NULL;
            snprintf(c.what, sizeof c.what, "request is NULL");
            break;
        }
        rc = MPI_Win_sync_ops_init(t, mode, s, w->win, MPI_INFO_NULL, out);
        break;
    }
    case 1: { /* MPI_Win_sync_object_init */
        MPI_Sync s = w->mine;
        int count = 1;
        MPI_Request *out = &req;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_sync_object_init");
        switch (fz_below(g, 4)) {
        case 0:
            s = wrong_counter(r, how, sizeof how);
            snprintf(c.what, sizeof c.what, "counter is %s", how);
            break;
        case 1:
            s = w->all[other];
            snprintf(c.what, sizeof c.what, "counter of rank %d (not mine)", other);
            break;
        case 2:
            count = fz_below(g, 2) ? -1 : INT_MIN;
            c.expect = MPI_ERR_COUNT;
            snprintf(c.what, sizeof c.what, "count %d", count);
            break;
        default:
            out = NULL;
            snprintf(c.what, sizeof c.what, "request is NULL");
            break;
        }
        rc = MPI_Win_sync_object_init(s, count, w->win, MPI_INFO_NULL, out);
        break;
    }
    case 2: { /* MPIX_Win_sync_read */
        MPI_Count value = -77;
        MPI_Count *out = &value;
        MPI_Sync s;
        snprintf(c.fn, sizeof c.fn, "MPIX_Win_sync_read");
        switch (fz_below(g, 3)) {
        case 0:
            s = wrong_counter(r, how, sizeof how);
            snprintf(c.what, sizeof c.what, "counter is %s", how);
            break;
        case 1: /* only its owner knows: a round trip */
            s = w->all_stale[other];
            c.target = other;
            snprintf(c.what, sizeof c.what, "a counter rank %d freed", other);
            break;
        default:
            s = w->mine;
            out = NULL;
            snprintf(c.what, sizeof c.what, "value is NULL");
            break;
        }
        rc = MPIX_Win_sync_read(s, w->win, out);
        untouched = value == -77;
        break;
    }
    case 3: { /* MPIX_Win_sync_object_change_count */
        MPI_Request q;
        int delta = 1;
        snprintf(c.fn, sizeof c.fn, "MPIX_Win_sync_object_change_count");
        c.expect = MPI_ERR_REQUEST;
        switch (fz_below(g, 5)) {
        case 0:
            q = MPI_REQUEST_NULL;
            snprintf(c.what, sizeof c.what, "MPI_REQUEST_NULL (a freed request)");
            break;
        case 1:
            q = r->p2p;
            snprintf(c.what, sizeof c.what, "a persistent point-to-point request");
            break;
        case 4: {
            MPI_Request null = MPI_REQUEST_NULL;
            snprintf(c.fn, sizeof c.fn, "MPI_Start");
            snprintf(c.what, sizeof c.what, "of MPI_REQUEST_NULL (a freed request)");
            rc = MPI_Start(&null);
            untouched = null == MPI_REQUEST_NULL;
            goto checked;
        }
        case 2:
            q = w->ops_req;
            snprintf(c.what, sizeof c.what, "a sync-ops request");
            break;
        default:
            q = w->obj_req;
            delta = fz_below(g, 2) ? -2 : INT_MIN;
            c.expect = MPI_ERR_COUNT;
            snprintf(c.what, sizeof c.what, "delta %d on a count-1 request", delta);
            break;
        }
        rc = MPIX_Win_sync_object_change_count(q, delta);
        break;
    }
    case 4: { /* MPI_Win_Sync_alloc_objects */
        MPI_Sync a[2] = {MPIX_SYNC_NULL, MPIX_SYNC_NULL};
        int n = fz_below(g, 2) ? -1 : INT_MIN;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_Sync_alloc_objects");
        snprintf(c.what, sizeof c.what, "n_sync %d", n);
        c.expect = MPI_ERR_COUNT;
        rc = MPI_Win_Sync_alloc_objects(n, a, w->win, MPI_INFO_NULL);
        untouched = same_sync(a[0], MPIX_SYNC_NULL) && same_sync(a[1], MPIX_SYNC_NULL);
        break;
    }
    default: { /* MPI_Win_Sync_free_objects: frees none when one entry is wrong */
        /* CX_COUNTER: my counter is armed (freeing it would be a second error): the wrong
         * entry alone */
        int armed = r->cx == CX_COUNTER;
        MPI_Sync a[2] = {w->mine, MPIX_SYNC_NULL}, saved[2];
        int n = 2;
        snprintf(c.fn, sizeof c.fn, "MPI_Win_Sync_free_objects");
        switch (fz_below(g, 3)) {
        case 0:
            n = fz_below(g, 2) ? -1 : INT_MIN;
            c.expect = MPI_ERR_COUNT;
            snprintf(c.what, sizeof c.what, "n_sync %d", n);
            break;
        case 1:
            a[1] = w->all[other];
            snprintf(c.what, sizeof c.what, "%srank %d's counter", armed ? "" : "my counter and ",
                     other);
            break;
        default:
            a[1] = wrong_counter(r, how, sizeof how);
            snprintf(c.what, sizeof c.what, "%s%s", armed ? "" : "my counter and ", how);
            break;
        }
        memcpy(saved, a, sizeof a);
        rc = armed ? MPI_Win_Sync_free_objects(n == 2 ? 1 : n, a + 1, w->win)
                   : MPI_Win_Sync_free_objects(n, a, w->win);
        MPI_Count v = 0; /* unread when armed: a bump may wait for its request */
        untouched = memcmp(saved, a, sizeof a) == 0 &&
                    (armed || MPIX_Win_sync_read(w->mine, w->win, &v) == MPI_SUCCESS) && v == 0;
        break;
    }
    }
checked:
    untouched &= req == MPI_REQUEST_NULL;
    fz_check(r, &c, rc, untouched);
}
