/* change_common.h - helpers for the tests of MPI_Win_change_comm (t_change_*.c), on top of
 * common.h and sync_common.h: a window whose membership changes, and a round of RMA over every
 * synchronization method that checks the data, run after each change. */
#ifndef FLEXRMA_TESTS_CHANGE_COMMON_H
#define FLEXRMA_TESTS_CHANGE_COMMON_H

#include "sync_common.h"

/* Areas of every member's window, K ints each: FENCE (put by the left neighbour in a fence
 * epoch), ACC (member 0's: every member adds 1), PSCW and LOCK (put by the left neighbour in
 * those epochs), KEEP (written before a change, checked after it). A member's window has
 * DWIN_INTS + its world rank ints, so the members' sizes differ. */
#define K 8
enum { A_FENCE = 0, A_ACC = K, A_PSCW = 2 * K, A_LOCK = 3 * K, A_KEEP = 4 * K, DWIN_INTS = 5 * K };

/* A window with changing membership, MPI_ERRORS_RETURN on it. */
typedef struct {
    MPI_Win win;
    int *buf;
    int n;
    int wrank, wsize; /* in the window, refreshed by dwin_refresh */
} dwin;

/* Collective over comm (MPI_COMM_SELF for a future joiner). */
static inline void dwin_create(dwin *d, MPI_Comm comm, int extra)
{
    d->n = DWIN_INTS + extra;
    MPI_Alloc_mem((MPI_Aint)d->n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &d->buf);
    memset(d->buf, 0, (size_t)d->n * sizeof(int));
    MPI_Win_create(d->buf, (MPI_Aint)d->n * (MPI_Aint)sizeof(int), (int)sizeof(int),
                   MPI_INFO_NULL, comm, &d->win);
    MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN);
}

/* This process's rank and the size of the window's group; 1 if they are as expected. */
static inline int dwin_refresh(dwin *d)
{
    MPI_Group g;
    int rc = MPI_Win_get_group(d->win, &g);
    if (rc != MPI_SUCCESS)
        return 0;
    MPI_Group_rank(g, &d->wrank);
    MPI_Group_size(g, &d->wsize);
    MPI_Group_free(&g);
    return 1;
}

static inline void dwin_free(dwin *d)
{
    MPI_Win_free(&d->win);
    MPI_Free_mem(d->buf);
}

static inline int dleft(const dwin *d) { return (d->wrank + d->wsize - 1) % d->wsize; }
static inline int dright(const dwin *d) { return (d->wrank + 1) % d->wsize; }

/* The group of the window's ranks left and right (one of them with two members or fewer). */
static inline MPI_Group dwin_neighbours(const dwin *d)
{
    MPI_Group g, nb;
    int r[2] = {dleft(d), dright(d)};
    MPI_Win_get_group(d->win, &g);
    MPI_Group_incl(g, r[0] == r[1] ? 1 : 2, r, &nb);
    MPI_Group_free(&g);
    return nb;
}

/* Local access to one's own window between passive-target epochs of others. */
static inline void dwin_read(dwin *d, int at, int *out)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, d->wrank, 0, d->win);
    memcpy(out, d->buf + at, K * sizeof(int));
    MPI_Win_unlock(d->wrank, d->win);
}

#define RING_TESTS 6
/* A round of RMA among the members (comm: theirs, in window rank order), each result checked
 * (RING_TESTS tests): fence put and get, accumulate, PSCW put, lock put, and every call's
 * return code. e tells rounds apart. Closes with a fence that leaves no fence epoch armed. */
static inline void ring(dwin *d, MPI_Comm comm, int e, const char *when)
{
    int rc = MPI_SUCCESS, got[K], mine[K], ones[K];
    for (int i = 0; i < K; i++)
        ones[i] = 1;
    fill_pat(mine, K, d->wrank, e);
    if (d->wrank == 0)
        memset(d->buf + A_ACC, 0, K * sizeof(int));
    /* fence: put to the right, accumulate into member 0; then get back what I put */
    KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOPRECEDE, d->win));
    KEEP_RC(rc, MPI_Put(mine, K, MPI_INT, dright(d), A_FENCE, K, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Accumulate(ones, K, MPI_INT, 0, A_ACC, K, MPI_INT, MPI_SUM, d->win));
    KEEP_RC(rc, MPI_Win_fence(0, d->win));
    ok(is_pat(d->buf + A_FENCE, K, dleft(d), e), "%s: fence put from the left neighbour", when);
    KEEP_RC(rc, MPI_Get(got, K, MPI_INT, dright(d), A_FENCE, K, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, d->win));
    ok(is_pat(got, K, d->wrank, e), "%s: fence get from the right neighbour", when);
    if (d->wrank == 0) {
        int exp[K];
        for (int i = 0; i < K; i++)
            exp[i] = d->wsize;
        ok(same_ints(d->buf + A_ACC, exp, K), "%s: accumulate of %d members", when, d->wsize);
    } else {
        ok(1, "%s: accumulate (checked by member 0)", when);
    }
    /* PSCW with both neighbours */
    MPI_Group nb = dwin_neighbours(d);
    fill_pat(mine, K, d->wrank, e + 1);
    KEEP_RC(rc, MPI_Win_post(nb, 0, d->win));
    KEEP_RC(rc, MPI_Win_start(nb, 0, d->win));
    KEEP_RC(rc, MPI_Put(mine, K, MPI_INT, dright(d), A_PSCW, K, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Win_complete(d->win));
    KEEP_RC(rc, MPI_Win_wait(d->win));
    MPI_Group_free(&nb);
    ok(is_pat(d->buf + A_PSCW, K, dleft(d), e + 1), "%s: PSCW put from the left neighbour",
       when);
    /* lock */
    fill_pat(mine, K, d->wrank, e + 2);
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, dright(d), 0, d->win));
    KEEP_RC(rc, MPI_Put(mine, K, MPI_INT, dright(d), A_LOCK, K, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Win_unlock(dright(d), d->win));
    MPI_Barrier(comm);
    dwin_read(d, A_LOCK, got);
    ok(is_pat(got, K, dleft(d), e + 2), "%s: lock put from the left neighbour", when);
    is_int(rc, MPI_SUCCESS, "%s: every RMA call of the round succeeded", when);
}

/* MPI_Win_change_comm with the result checked (1 test), then the new rank and size (1 test). */
#define CHANGE_TESTS 2
static inline int change(dwin *d, MPI_Comm new_comm, int peer, int exp_rank, int exp_size,
                         const char *what)
{
    int rc = MPI_Win_change_comm(new_comm, peer, d->win);
    is_int(rc, MPI_SUCCESS, "%s: MPI_Win_change_comm", what);
    int fine = dwin_refresh(d) && d->wrank == exp_rank && d->wsize == exp_size;
    if (!fine)
        diag("window rank %d of %d, expected %d of %d", d->wrank, d->wsize, exp_rank, exp_size);
    ok(fine, "%s: window rank and size", what);
    return rc;
}

/* The communicator of the world ranks for which in(rank) is true, in world rank order;
 * MPI_COMM_NULL elsewhere. Collective over MPI_COMM_WORLD. */
static inline MPI_Comm world_split(int in)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &c);
    return c;
}

#endif
