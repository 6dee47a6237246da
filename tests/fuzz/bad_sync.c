/* bad_sync.c - synchronization calls that do not fit the epoch the batch is in, or carry a bad
 * lock type, assertion or rank (docs/specification.md sections 5 and 12.1), and the window calls
 * of other flavors (attach, detach, shared_query: sections 2 and 9). Every call here is local:
 * none that is collective (fence, free) is made by one rank alone. */
#include "fuzz.h"

#include <limits.h>
#include <string.h>

#define IN(...) in_context(r->cx, (const fz_context[]){__VA_ARGS__, CX_COUNT})

static int in_context(fz_context cx, const fz_context *list)
{
    for (; *list != CX_COUNT; list++)
        if (*list == cx)
            return 1;
    return 0;
}

static int bad_lock_type(fz_rng *g)
{
    const int v[] = {-1, 0, 12345, MPI_LOCK_SHARED + MPI_LOCK_EXCLUSIVE, INT_MIN};
    int t;
    do
        t = v[fz_below(g, 5)];
    while (t == MPI_LOCK_SHARED || t == MPI_LOCK_EXCLUSIVE);
    return t;
}

static int pick_bits(fz_rng *g, const int *v, int n) { return v[fz_below(g, n)]; }

static int out_of_range(fz_rng *g, int nprocs)
{
    const int v[] = {nprocs, nprocs + 5, INT_MAX, -3, INT_MIN}; /* -3: never MPI_PROC_NULL */
    return v[fz_below(g, 5)];
}

/* A rank the context holds no lock on (CX_NONE: any; CX_LOCK: myself). */
static int unlocked(fz_run *r) { return r->cx == CX_LOCK ? r->rank : fz_below(&r->rng, r->nprocs); }

void fz_bad_sync(fz_run *r)
{
    fz_rng *g = &r->rng;
    MPI_Win win = r->w->win;
    fz_call c = {.target = -1};
    int rc = MPI_SUCCESS, untouched = 1;
    for (;;) {
        int t, v;
        switch (fz_below(g, 19)) {
        case 0:
            if (!IN(CX_NONE, CX_LOCK))
                continue;
            t = unlocked(r), v = bad_lock_type(g);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock");
            snprintf(c.what, sizeof c.what, "lock_type %d, rank %d", v, t);
            c.expect = MPI_ERR_LOCKTYPE;
            rc = MPI_Win_lock(v, t, 0, win);
            break;
        case 1: {
            if (!IN(CX_NONE, CX_LOCK))
                continue;
            const int bits[] = {MPI_MODE_NOPRECEDE, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, 1 << 20,
                                MPI_MODE_NOCHECK | MPI_MODE_NOSUCCEED};
            t = unlocked(r), v = pick_bits(g, bits, 5);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock");
            snprintf(c.what, sizeof c.what, "assert 0x%x, rank %d", v, t);
            c.expect = MPI_ERR_ASSERT;
            rc = MPI_Win_lock(MPI_LOCK_SHARED, t, v, win);
            break;
        }
        case 2:
            if (!IN(CX_NONE, CX_LOCK))
                continue;
            v = out_of_range(g, r->nprocs);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock");
            snprintf(c.what, sizeof c.what, "rank %d out of range", v);
            c.expect = MPI_ERR_RANK;
            rc = MPI_Win_lock(MPI_LOCK_SHARED, v, 0, win);
            break;
        case 3:
            if (!IN(CX_LOCK, CX_LOCK_ALL, CX_PSCW, CX_FENCE))
                continue;
            t = r->cx == CX_LOCK ? r->right : fz_below(g, r->nprocs);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock");
            snprintf(c.what, sizeof c.what, "rank %d inside the %s context's epoch", t,
                     fz_context_name[r->cx]);
            c.target = t;
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_lock(fz_below(g, 2) ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, win);
            break;
        case 4:
            if (r->cx == CX_LOCK && fz_below(g, 3) == 0) { /* the one locked, but a bad rank */
                v = out_of_range(g, r->nprocs);
                snprintf(c.fn, sizeof c.fn, "MPI_Win_unlock");
                snprintf(c.what, sizeof c.what, "rank %d out of range", v);
                c.expect = MPI_ERR_RANK;
                rc = MPI_Win_unlock(v, win);
                break;
            }
            t = unlocked(r);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_unlock");
            snprintf(c.what, sizeof c.what, "rank %d, not locked by MPI_Win_lock (%s context)", t,
                     fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_unlock(t, win);
            break;
        case 5: {
            if (!IN(CX_NONE))
                continue;
            const int bits[] = {MPI_MODE_NOPRECEDE, MPI_MODE_NOSTORE, 1 << 20, -1};
            v = pick_bits(g, bits, 4);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock_all");
            snprintf(c.what, sizeof c.what, "assert 0x%x", v);
            c.expect = MPI_ERR_ASSERT;
            rc = MPI_Win_lock_all(v, win);
            break;
        }
        case 6:
            if (!IN(CX_LOCK, CX_LOCK_ALL, CX_PSCW, CX_FENCE))
                continue;
            snprintf(c.fn, sizeof c.fn, "MPI_Win_lock_all");
            snprintf(c.what, sizeof c.what, "inside the %s context's epoch",
                     fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_lock_all(0, win);
            break;
        case 7:
            if (r->cx == CX_LOCK_ALL)
                continue;
            snprintf(c.fn, sizeof c.fn, "MPI_Win_unlock_all");
            snprintf(c.what, sizeof c.what, "without MPI_Win_lock_all (%s context)",
                     fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_unlock_all(win);
            break;
        case 8: {
            const int bits[] = {MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE, 1 << 20};
            if (r->cx == CX_COUNTER)
                continue;
            if (r->cx == CX_NONE) {
                v = pick_bits(g, bits, 4);
                snprintf(c.what, sizeof c.what, "assert 0x%x", v);
                c.expect = MPI_ERR_ASSERT;
            } else {
                v = 0;
                snprintf(c.what, sizeof c.what, "inside the %s context's epoch",
                         fz_context_name[r->cx]);
                c.expect = MPI_ERR_RMA_SYNC;
            }
            snprintf(c.fn, sizeof c.fn, "MPI_Win_start");
            rc = MPI_Win_start(fz_right_group, v, win);
            break;
        }
        case 9: {
            const int bits[] = {MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED, 1 << 20};
            if (r->cx == CX_COUNTER)
                continue;
            if (IN(CX_NONE, CX_LOCK, CX_LOCK_ALL)) {
                v = pick_bits(g, bits, 3);
                snprintf(c.what, sizeof c.what, "assert 0x%x", v);
                c.expect = MPI_ERR_ASSERT;
            } else {
                v = 0;
                snprintf(c.what, sizeof c.what, "inside the %s context's epoch",
                         fz_context_name[r->cx]);
                c.expect = MPI_ERR_RMA_SYNC;
            }
            snprintf(c.fn, sizeof c.fn, "MPI_Win_post");
            rc = MPI_Win_post(fz_left_group, v, win);
            break;
        }
        case 10: case 11: case 12: {
            if (r->cx == CX_PSCW)
                continue;
            int which = fz_below(g, 3), flag = -7;
            static const char *const fn[] = {"MPI_Win_complete", "MPI_Win_wait", "MPI_Win_test"};
            snprintf(c.fn, sizeof c.fn, "%s", fn[which]);
            snprintf(c.what, sizeof c.what, "without %s (%s context)",
                     which ? "MPI_Win_post" : "MPI_Win_start", fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = which == 0 ? MPI_Win_complete(win)
                 : which == 1 ? MPI_Win_wait(win) : MPI_Win_test(win, &flag);
            untouched = flag == -7;
            break;
        }
        case 13: case 14: {
            int local = fz_below(g, 2);
            snprintf(c.fn, sizeof c.fn, "%s", local ? "MPI_Win_flush_local" : "MPI_Win_flush");
            if (IN(CX_LOCK, CX_LOCK_ALL) && fz_below(g, 2)) {
                t = out_of_range(g, r->nprocs);
                snprintf(c.what, sizeof c.what, "rank %d out of range", t);
                c.expect = MPI_ERR_RANK;
            } else if (r->cx == CX_LOCK_ALL) {
                continue;
            } else {
                t = unlocked(r);
                snprintf(c.what, sizeof c.what, "rank %d, not locked (%s context)", t,
                         fz_context_name[r->cx]);
                c.expect = MPI_ERR_RMA_SYNC;
            }
            rc = local ? MPI_Win_flush_local(t, win) : MPI_Win_flush(t, win);
            break;
        }
        case 15: {
            if (!IN(CX_NONE, CX_FENCE, CX_PSCW, CX_COUNTER))
                continue;
            int local = fz_below(g, 2);
            snprintf(c.fn, sizeof c.fn, "%s", local ? "MPI_Win_flush_local_all" : "MPI_Win_flush_all");
            snprintf(c.what, sizeof c.what, "no lock held (%s context)", fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = local ? MPI_Win_flush_local_all(win) : MPI_Win_flush_all(win);
            break;
        }
        case 16: case 17: case 18: {
            /* MPI_WIN_NULL in a call that would be valid here */
            c.expect = MPI_ERR_WIN;
            snprintf(c.what, sizeof c.what, "win is MPI_WIN_NULL");
            if (r->cx == CX_NONE) {
                snprintf(c.fn, sizeof c.fn, "MPI_Win_lock");
                rc = MPI_Win_lock(MPI_LOCK_SHARED, r->right, 0, MPI_WIN_NULL);
            } else if (IN(CX_LOCK, CX_LOCK_ALL)) {
                snprintf(c.fn, sizeof c.fn, "MPI_Win_flush");
                rc = MPI_Win_flush(r->right, MPI_WIN_NULL);
            } else {
                snprintf(c.fn, sizeof c.fn, "MPI_Win_sync");
                rc = MPI_Win_sync(MPI_WIN_NULL);
            }
            break;
        }
        }
        break;
    }
    fz_check(r, &c, rc, untouched);
}

void fz_bad_window(fz_run *r)
{
    fz_rng *g = &r->rng;
    fz_win *w = r->w;
    fz_call c = {.target = -1};
    int rc, untouched = 1;
    static int spare[8];
    int query_ok = w->flavor != FL_DYNAMIC; /* MPI-4.1: shared, allocated and created windows */
    if (query_ok && fz_below(g, 3) == 0) {
        MPI_Aint size = -5;
        int unit = -5;
        void *base = spare;
        const int bad[] = {r->nprocs, r->nprocs + 9, -3, -77};
        int t = bad[fz_below(g, 4)];
        snprintf(c.fn, sizeof c.fn, "MPI_Win_shared_query");
        snprintf(c.what, sizeof c.what, "rank %d (not MPI_PROC_NULL)", t);
        c.expect = MPI_ERR_RANK;
        rc = MPI_Win_shared_query(w->win, t, &size, &unit, &base);
        untouched = size == -5 && unit == -5 && base == spare;
    } else if (w->flavor != FL_DYNAMIC) {
        c.expect = MPI_ERR_RMA_FLAVOR;
        snprintf(c.what, sizeof c.what, "on a window of MPI_Win_%s", fz_flavor_name[w->flavor]);
        if (fz_below(g, 2) == 0) {
            snprintf(c.fn, sizeof c.fn, "MPI_Win_attach");
            rc = MPI_Win_attach(w->win, spare, sizeof spare);
        } else {
            snprintf(c.fn, sizeof c.fn, "MPI_Win_detach");
            rc = MPI_Win_detach(w->win, w->mem);
        }
    } else {
        switch (fz_below(g, 5)) {
        case 0: {
            int off = fz_below(g, FZ_NW);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_attach");
            snprintf(c.what, sizeof c.what, "8 bytes at int %d of the region attached already",
                     off);
            c.expect = MPI_ERR_RMA_ATTACH;
            rc = MPI_Win_attach(w->win, w->mem + off, 8);
            break;
        }
        case 1: {
            MPI_Aint size = fz_below(g, 2) ? -1 : LONG_MIN;
            snprintf(c.fn, sizeof c.fn, "MPI_Win_attach");
            snprintf(c.what, sizeof c.what, "size %ld", (long)size);
            c.expect = MPI_ERR_SIZE;
            rc = MPI_Win_attach(w->win, spare, size);
            break;
        }
        case 2:
            snprintf(c.fn, sizeof c.fn, "MPI_Win_attach");
            snprintf(c.what, sizeof c.what, "a NULL base with 16 bytes");
            c.expect = MPI_ERR_ARG;
            rc = MPI_Win_attach(w->win, NULL, 16);
            break;
        case 3: {
            MPI_Aint size = -5;
            int unit = -5;
            void *base = spare;
            snprintf(c.fn, sizeof c.fn, "MPI_Win_shared_query");
            snprintf(c.what, sizeof c.what, "on a window of MPI_Win_create_dynamic");
            c.expect = MPI_ERR_RMA_FLAVOR;
            rc = MPI_Win_shared_query(w->win, fz_below(g, r->nprocs), &size, &unit, &base);
            untouched = size == -5 && unit == -5 && base == spare;
            break;
        }
        default: {
            int inside = fz_below(g, 2);
            snprintf(c.fn, sizeof c.fn, "MPI_Win_detach");
            snprintf(c.what, sizeof c.what, "%s", inside ? "an address inside the attached region"
                                                         : "memory never attached");
            c.expect = MPI_ERR_RMA_ATTACH;
            rc = MPI_Win_detach(w->win, inside ? (void *)(w->mem + 1 + fz_below(g, FZ_NW - 1))
                                               : (void *)spare);
            break;
        }
        }
    }
    fz_check(r, &c, rc, untouched);
}
