/* bad_collective.c - erroneous collective calls. Every rank makes the same call at the same point
 * (the batch's shared stream chooses it), and its error is certain on every rank: a bad
 * assertion, a fence or MPI_Win_free inside another epoch, window creation with a bad size,
 * unit or communicator, MPI_Win_change_comm with a peer_rank outside new_comm or while every
 * rank has an epoch open or a sync request active (docs/specification.md sections 2, 5, 6, 11). None is made by one rank
 * alone: a collective that wrongly succeeded there would wait for the others forever. */
#include "fuzz.h"

#include <string.h>

static void creation(fz_run *r, fz_rng *g, fz_call *c, int *rc, int *untouched)
{
    static int buf[16];
    MPI_Win win = MPI_WIN_NULL;
    void *base = buf;
    switch (fz_below(g, 7)) {
    case 0:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_create");
        snprintf(c->what, sizeof c->what, "size -1");
        c->expect = MPI_ERR_SIZE;
        *rc = MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    case 1:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_create");
        snprintf(c->what, sizeof c->what, "disp_unit 0");
        c->expect = MPI_ERR_DISP;
        *rc = MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    /* Not fuzzed: a NULL base with a non-zero size, which flexrma refuses or accepts as the
     * library under it does (MPICH 4.0: MPI_ERR_ARG; Open MPI 4.1 creates the window; t_errors
     * checks both). */
    case 2:
    case 3:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_create");
        snprintf(c->what, sizeof c->what, "comm is MPI_COMM_NULL");
        c->expect = MPI_ERR_COMM;
        *rc = MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_NULL, &win);
        break;
    case 4:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_allocate");
        snprintf(c->what, sizeof c->what, "size -8");
        c->expect = MPI_ERR_SIZE;
        *rc = MPI_Win_allocate(-8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        break;
    case 5:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_allocate");
        snprintf(c->what, sizeof c->what, "disp_unit -4");
        c->expect = MPI_ERR_DISP;
        *rc = MPI_Win_allocate(64, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        break;
    default:
        snprintf(c->fn, sizeof c->fn, "MPI_Win_create_dynamic");
        snprintf(c->what, sizeof c->what, "comm is MPI_COMM_NULL");
        c->expect = MPI_ERR_COMM;
        *rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_NULL, &win);
        break;
    }
    *untouched = win == MPI_WIN_NULL && base == buf;
    if (win != MPI_WIN_NULL) /* made by mistake on every rank: free it alike */
        MPI_Win_free(&win);
}

void fz_bad_collective(fz_run *r, fz_rng *g)
{
    fz_call c = {.target = -1};
    MPI_Win win = r->w->win, before = win;
    int rc = MPI_SUCCESS, untouched = 1;
    if (r->cx == CX_NONE) {
        switch (fz_below(g, 3)) {
        case 0: {
            const int bits[] = {1 << 20, MPI_MODE_NOCHECK, -1};
            int v = bits[fz_below(g, 3)];
            snprintf(c.fn, sizeof c.fn, "MPI_Win_fence");
            snprintf(c.what, sizeof c.what, "assert 0x%x, on every rank", v);
            c.expect = MPI_ERR_ASSERT;
            rc = MPI_Win_fence(v, win);
            break;
        }
        case 1:
            creation(r, g, &c, &rc, &untouched);
            break;
        default: {
            const int peer[] = {r->nprocs, r->nprocs + 3, -5};
            int p = peer[fz_below(g, 3)];
            snprintf(c.fn, sizeof c.fn, "MPI_Win_change_comm");
            snprintf(c.what, sizeof c.what, "peer_rank %d outside new_comm (MPI_COMM_WORLD), on "
                                            "every rank", p);
            c.expect = MPI_ERR_RANK;
            rc = MPI_Win_change_comm(MPI_COMM_WORLD, p, win);
            break;
        }
        }
    } else {
        /* a counter epoch does not stop a fence */
        int v = r->cx == CX_COUNTER ? 1 + fz_below(g, 2) : fz_below(g, r->cx == CX_FENCE ? 2 : 3);
        switch (v) {
        case 0:
            snprintf(c.fn, sizeof c.fn, "MPI_Win_fence");
            if (r->cx == CX_FENCE) {
                snprintf(c.what, sizeof c.what, "MPI_MODE_NOPRECEDE after a put in the epoch");
                c.expect = MPI_ERR_ASSERT;
                rc = MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
            } else {
                snprintf(c.what, sizeof c.what, "inside the %s context's epoch",
                         fz_context_name[r->cx]);
                c.expect = MPI_ERR_RMA_SYNC;
                rc = MPI_Win_fence(0, win);
            }
            break;
        case 1:
            snprintf(c.fn, sizeof c.fn, "MPI_Win_free");
            snprintf(c.what, sizeof c.what, "inside the %s context's epoch",
                     fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_free(&win);
            untouched = win == before;
            break;
        default:
            snprintf(c.fn, sizeof c.fn, "MPI_Win_change_comm");
            snprintf(c.what, sizeof c.what, "to the same members, inside the %s context's epoch",
                     fz_context_name[r->cx]);
            c.expect = MPI_ERR_RMA_SYNC;
            rc = MPI_Win_change_comm(MPI_COMM_WORLD, 0, win);
            break;
        }
    }
    fz_check(r, &c, rc, untouched);
}
