/* t_change_flavors.c - MPI_Win_change_comm on windows made by MPI_Win_create_dynamic and
 * MPI_Win_allocate_shared (docs/specification.md section 11). Dynamic windows: members keep the regions they attached, a joiner brings a
 * dynamic window over MPI_COMM_SELF with its regions, which become reachable at its new rank,
 * and a leaver keeps a dynamic window over itself with its regions.
 *
 *  part 1  world ranks 0..n-2 hold a dynamic window, each with a heap and an MPI_Alloc_mem region
 *          attached, and work on it (so every origin has learned the others' regions); world
 *          rank n-1 attaches its own two regions to a dynamic window over MPI_COMM_SELF and
 *          joins. new_comm reverses the world order, so most ranks now name other processes.
 *          Everybody exchanges region addresses afterwards (MPI_Get_address) and puts, gets,
 *          accumulates, fetches-and-ops and compares-and-swaps into everybody's regions; an
 *          address the process at the same rank had attached before the change is judged
 *          against the regions of the process at that rank now (MPI_ERR_RMA_RANGE where it
 *          has none): no origin keeps its copy of another rank's regions across the change.
 *  part 2  world rank 1 leaves with its regions: it uses its window over itself (the regions and
 *          their contents are there, a new region can be attached), the others work on without
 *          it, ranks shifted again.
 *  part 3  the same with windows of MPI_Win_allocate_shared: a joiner brings its own part, and
 *          after the join every member loads and stores every other member's part at the
 *          address MPI_Win_shared_query gives, and RMA reaches every part; world rank 1 leaves
 *          with its part, which lies in the memory world rank 0 allocated for the window and
 *          stays usable after world rank 0 freed its window.
 * Needs at least 3 ranks. */
#include "change_common.h"
#include "nodes.h"
#include "errors_common.h"

#define N 64 /* ints per region (K, change_common.h, is unused here) */

/* A dynamic window and this process's regions; the members' addresses by window rank. */
typedef struct {
    MPI_Win win;
    int *block;            /* the heap region lies at block + world rank * N, so that no two
                              processes' heap regions share an address */
    int *heap, *alloc;
    int wrank, wsize;
    MPI_Aint *heap_at, *alloc_at;
} fwin;

static int planned;

static void fwin_make(fwin *f, MPI_Comm comm)
{
    MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &f->win);
    MPI_Win_set_errhandler(f->win, MPI_ERRORS_RETURN);
    f->block = xmalloc((size_t)nprocs * N * sizeof(int));
    f->heap = f->block + (size_t)rank * N;
    MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &f->alloc);
    memset(f->heap, 0, N * sizeof(int));
    memset(f->alloc, 0, N * sizeof(int));
    MPI_Win_attach(f->win, f->heap, N * sizeof(int));
    MPI_Win_attach(f->win, f->alloc, N * sizeof(int));
    f->heap_at = f->alloc_at = NULL;
}

static void fwin_free(fwin *f)
{
    MPI_Win_detach(f->win, f->heap);
    MPI_Win_detach(f->win, f->alloc);
    MPI_Win_free(&f->win);
    MPI_Free_mem(f->alloc);
    free(f->block);
    free(f->heap_at);
    free(f->alloc_at);
}

/* Window rank and size from the window's group, and every member's region addresses, told
 * after the change (comm: the members, in window rank order). */
static void exchange(fwin *f, MPI_Comm comm)
{
    MPI_Group g;
    MPI_Win_get_group(f->win, &g);
    MPI_Group_rank(g, &f->wrank);
    MPI_Group_size(g, &f->wsize);
    MPI_Group_free(&g);
    free(f->heap_at);
    free(f->alloc_at);
    f->heap_at = xmalloc((size_t)f->wsize * sizeof(MPI_Aint));
    f->alloc_at = xmalloc((size_t)f->wsize * sizeof(MPI_Aint));
    MPI_Aint h, a;
    MPI_Get_address(f->heap, &h);
    MPI_Get_address(f->alloc, &a);
    MPI_Allgather(&h, 1, MPI_AINT, f->heap_at, 1, MPI_AINT, comm);
    MPI_Allgather(&a, 1, MPI_AINT, f->alloc_at, 1, MPI_AINT, comm);
}

static MPI_Aint at(MPI_Aint base, int i) { return base + i * (MPI_Aint)sizeof(int); }

#define ROUND_TESTS 5
/* A round of RMA among the members into everybody's regions (ROUND_TESTS tests): a fence epoch
 * with a put into the right neighbour's heap region, a get of the left neighbour's MPI_Alloc_mem
 * region and an accumulate into everybody's; a lock_all epoch with a fetch-and-op on member 0,
 * a compare-and-swap and a put into the right neighbour. e tells rounds apart. */
static void round_of(fwin *f, MPI_Comm comm, int e, const char *when)
{
    const int n = f->wsize, me = f->wrank, r = (me + 1) % n, l = (me + n - 1) % n;
    int rc = MPI_SUCCESS, vals[8], got[8], one = 1, old = -1, cmp = 0, mine = me + 1, seen = -1;
    memset(f->heap, 0, N * sizeof(int));
    for (int i = 0; i < 8; i++)
        f->alloc[i] = pat(me, i, e);
    f->alloc[N - 1] = 0;
    fill_pat(vals, 8, me, e + 1);
    KEEP_RC(rc, MPI_Win_fence(0, f->win));
    KEEP_RC(rc, MPI_Put(vals, 8, MPI_INT, r, f->heap_at[r], 8, MPI_INT, f->win));
    KEEP_RC(rc, MPI_Get(got, 8, MPI_INT, l, f->alloc_at[l], 8, MPI_INT, f->win));
    for (int t = 0; t < n; t++)
        KEEP_RC(rc, MPI_Accumulate(&one, 1, MPI_INT, t, at(f->alloc_at[t], N - 1), 1, MPI_INT,
                                   MPI_SUM, f->win));
    KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, f->win));
    ok(is_pat(f->heap, 8, l, e + 1), "%s: fence put from the left neighbour in my heap region",
       when);
    ok(is_pat(got, 8, l, e), "%s: fence get of the left neighbour's MPI_Alloc_mem region", when);
    ok(f->alloc[N - 1] == n, "%s: everybody's accumulate in my region (%d of %d)", when,
       f->alloc[N - 1], n);

    fill_pat(vals, 4, me, e + 2);
    KEEP_RC(rc, MPI_Win_lock_all(0, f->win));
    KEEP_RC(rc, MPI_Fetch_and_op(&one, &old, MPI_INT, 0, at(f->heap_at[0], N - 1), MPI_SUM,
                                 f->win));
    KEEP_RC(rc, MPI_Compare_and_swap(&mine, &cmp, &seen, MPI_INT, r, at(f->heap_at[r], N - 2),
                                     f->win));
    KEEP_RC(rc, MPI_Put(vals, 4, MPI_INT, r, at(f->alloc_at[r], 16), 4, MPI_INT, f->win));
    KEEP_RC(rc, MPI_Win_unlock_all(f->win));
    MPI_Barrier(comm);
    KEEP_RC(rc, MPI_Win_lock_all(0, f->win));
    KEEP_RC(rc, MPI_Win_sync(f->win));
    int good = old >= 0 && old < n && seen == 0 && f->heap[N - 2] == l + 1 &&
               is_pat(f->alloc + 16, 4, l, e + 2) && (me != 0 || f->heap[N - 1] == n);
    KEEP_RC(rc, MPI_Win_unlock_all(f->win));
    MPI_Barrier(comm);
    ok(good, "%s: lock_all: fetch-and-op, compare-and-swap and put landed", when);
    is_int(rc, MPI_SUCCESS, "%s: every RMA call of the round succeeded", when);
}

/* After a change, an origin that was a member before asks each other member t for the memory
 * that the process at window rank t had attached before (old_heap_at[t]): that is judged against
 * what the process at rank t now has attached, MPI_ERR_RMA_RANGE unless it covers the bytes
 * (1 test). */
static void judged_anew(fwin *f, const MPI_Aint *old_heap_at, int old_size, const char *when)
{
    int bad = 0, checked = 0;
    for (int t = 0; t < f->wsize && t < old_size; t++) {
        if (t == f->wrank)
            continue;
        MPI_Aint lo = old_heap_at[t], hi = at(lo, 8);
        int covered = (lo >= f->heap_at[t] && hi <= at(f->heap_at[t], N)) ||
                      (lo >= f->alloc_at[t] && hi <= at(f->alloc_at[t], N));
        int got[8];
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, f->win);
        int rc = MPI_Get(got, 8, MPI_INT, t, lo, 8, MPI_INT, f->win);
        MPI_Win_unlock(t, f->win);
        int cls = error_class(rc);
        if (cls != (covered ? MPI_SUCCESS : MPI_ERR_RMA_RANGE)) {
            diag("rank %d: a get from rank %d at an address the previous rank %d had: %s, "
                 "expected %s", f->wrank, t, t, class_name(cls),
                 class_name(covered ? MPI_SUCCESS : MPI_ERR_RMA_RANGE));
            bad++;
        }
        checked += !covered;
    }
    ok(bad == 0, "%s: addresses of the former holders of the ranks judged against the new ones "
                 "(%d refused)", when, checked);
}

static MPI_Aint *copy_at(const fwin *f)
{
    MPI_Aint *c = xmalloc((size_t)f->wsize * sizeof *c);
    memcpy(c, f->heap_at, (size_t)f->wsize * sizeof *c);
    return c;
}

/* ---- part 1: a dynamic joiner ---- */

static void part1(fwin *f)
{
    const int joiner = rank == nprocs - 1;
    MPI_Comm oc = world_split(!joiner);
    fwin_make(f, joiner ? MPI_COMM_SELF : oc);
    MPI_Aint *old_at = NULL;
    int old_size = 0;
    if (!joiner) {
        exchange(f, oc);
        planned += ROUND_TESTS;
        round_of(f, oc, 10, "before the join");
        old_at = copy_at(f);
        old_size = f->wsize;
    } else { /* data in the joiner's regions before it joins */
        fill_pat(f->heap + 40, 8, rank, 5);
    }

    /* new_comm in reverse world order: the joiner is rank 0, world rank 0 the last. */
    MPI_Comm nc;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - 1 - rank, &nc);
    int rc = MPI_Win_change_comm(nc, nprocs - 1, f->win);
    is_int(rc, MPI_SUCCESS, "join: MPI_Win_change_comm");
    exchange(f, nc);
    ok(f->wrank == nprocs - 1 - rank && f->wsize == nprocs, "join: window rank %d of %d",
       f->wrank, f->wsize);
    int *flavor, flag = 0;
    MPI_Win_get_attr(f->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    ok(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "join: MPI_WIN_CREATE_FLAVOR is dynamic");
    planned += 3;

    if (!joiner) { /* first: nothing may have refreshed the origins' copies yet */
        judged_anew(f, old_at, old_size, "join");
        planned++;
    }
    MPI_Barrier(nc);
    /* The joiner's data, stored before it joined, read at its new rank 0. */
    int got[8];
    rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, f->win);
    KEEP_RC(rc, MPI_Get(got, 8, MPI_INT, 0, at(f->heap_at[0], 40), 8, MPI_INT, f->win));
    KEEP_RC(rc, MPI_Win_unlock(0, f->win));
    ok(rc == MPI_SUCCESS && is_pat(got, 8, nprocs - 1, 5),
       "join: the joiner's region attached before the join is read at its new rank");
    planned++;
    MPI_Barrier(nc);
    planned += ROUND_TESTS;
    round_of(f, nc, 20, "after the join");
    free(old_at);
    MPI_Comm_free(&nc);
    if (oc != MPI_COMM_NULL)
        MPI_Comm_free(&oc);
}

/* ---- part 2: world rank 1 leaves with its regions ---- */

static void part2(fwin *f)
{
    const int leaver = rank == 1;
    MPI_Aint *old_at = copy_at(f);
    int old_size = f->wsize;
    /* The last round's data in the leaver's heap region: its left neighbour's put. */
    const int left_then = (f->wrank + f->wsize - 1) % f->wsize;
    fill_pat(f->alloc + 48, 8, rank, 30);
    MPI_Comm nc = world_split(!leaver); /* world order again: ranks shift once more */
    int rc = MPI_Win_change_comm(leaver ? MPI_COMM_NULL : nc, 0, f->win);
    is_int(rc, MPI_SUCCESS, "leave: MPI_Win_change_comm");
    planned++;
    if (leaver) {
        exchange(f, MPI_COMM_SELF);
        ok(f->wrank == 0 && f->wsize == 1, "leave: the leaver's window is over itself");
        int vals[8], got[8], got2[8], one = 1, old = -1;
        fill_pat(vals, 8, rank, 31);
        int *fresh = xmalloc(N * sizeof(int));
        memset(fresh, 0, N * sizeof(int));
        rc = MPI_Win_attach(f->win, fresh, N * sizeof(int));
        MPI_Aint fresh_at;
        MPI_Get_address(fresh, &fresh_at);
        KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, f->win));
        KEEP_RC(rc, MPI_Get(got, 8, MPI_INT, 0, f->heap_at[0], 8, MPI_INT, f->win));
        KEEP_RC(rc, MPI_Get(got2, 8, MPI_INT, 0, at(f->alloc_at[0], 48), 8, MPI_INT, f->win));
        KEEP_RC(rc, MPI_Put(vals, 8, MPI_INT, 0, fresh_at, 8, MPI_INT, f->win));
        KEEP_RC(rc, MPI_Fetch_and_op(&one, &old, MPI_INT, 0, at(f->alloc_at[0], 60), MPI_SUM,
                                     f->win));
        KEEP_RC(rc, MPI_Win_unlock(0, f->win));
        is_int(rc, MPI_SUCCESS, "leave: RMA into the leaver's regions over itself succeeds");
        ok(is_pat(got, 8, left_then, 21) && is_pat(got2, 8, rank, 30),
           "leave: the leaver's regions kept their contents");
        ok(is_pat(fresh, 8, rank, 31) && f->alloc[60] == 1 && old == 0,
           "leave: a region attached after leaving takes RMA too");
        planned += 4;
        MPI_Win_detach(f->win, fresh);
        free(fresh);
    } else {
        exchange(f, nc);
        ok(f->wrank == (rank == 0 ? 0 : rank - 1) && f->wsize == nprocs - 1,
           "leave: window rank %d of %d", f->wrank, f->wsize);
        planned++;
        judged_anew(f, old_at, old_size, "leave");
        planned++;
        MPI_Barrier(nc);
        planned += ROUND_TESTS;
        round_of(f, nc, 40, "after rank 1 left");
        MPI_Comm_free(&nc);
    }
    free(old_at);
    fwin_free(f);
}

/* ---- part 3: shared windows ---- */

static int ints_of(int world) { return 16 * (world + 1); }

/* A shared window's members, and what MPI_Win_shared_query says of each. */
typedef struct {
    MPI_Win win;
    int *base;
    int wrank, wsize;
    int *world;   /* by window rank: its world rank */
    int **part;   /* by window rank: its part, as MPI_Win_shared_query answers */
} swin;

/* Window rank, size, and every member's world rank (comm: the members in window rank order);
 * then MPI_Win_shared_query of every member: its size and unit are its own, its part is mine
 * for me (2 tests). */
static void query_all(swin *s, MPI_Comm comm, const char *when)
{
    MPI_Group g;
    MPI_Win_get_group(s->win, &g);
    MPI_Group_rank(g, &s->wrank);
    MPI_Group_size(g, &s->wsize);
    MPI_Group_free(&g);
    free(s->world);
    free(s->part);
    s->world = xmalloc((size_t)s->wsize * sizeof *s->world);
    s->part = xmalloc((size_t)s->wsize * sizeof *s->part);
    MPI_Allgather(&rank, 1, MPI_INT, s->world, 1, MPI_INT, comm);
    int bad = 0;
    for (int r = 0; r < s->wsize; r++) {
        MPI_Aint size = -1;
        int unit = -1;
        bad += MPI_Win_shared_query(s->win, r, &size, &unit, &s->part[r]) != MPI_SUCCESS;
        bad += size != ints_of(s->world[r]) * (MPI_Aint)sizeof(int) || unit != (int)sizeof(int) ||
               !s->part[r];
    }
    ok(bad == 0 && s->part[s->wrank] == s->base,
       "%s: MPI_Win_shared_query answers every member's size, unit and part", when);
    MPI_Aint size;
    int unit, *first = NULL;
    MPI_Win_shared_query(s->win, MPI_PROC_NULL, &size, &unit, &first);
    ok(first == s->part[0] && size == ints_of(s->world[0]) * (MPI_Aint)sizeof(int),
       "%s: MPI_PROC_NULL names rank 0's part", when);
}

#define SHARED_TESTS 6
/* Loads of every member's part, stores into the right neighbour's, and RMA (fence put, get,
 * accumulate) among the members (SHARED_TESTS tests with query_all's). e: the pattern every
 * member wrote into all of its part before (element i of world rank w: pat(w, i, e)). */
static void shared_round(swin *s, MPI_Comm comm, int e, const char *when)
{
    query_all(s, comm, when);
    const int n = s->wsize, me = s->wrank, r = (me + 1) % n, l = (me + n - 1) % n;
    int rc = MPI_SUCCESS, bad = 0;
    KEEP_RC(rc, MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win));
    KEEP_RC(rc, MPI_Win_sync(s->win));
    for (int t = 0; t < n; t++)
        bad += !is_pat(s->part[t], (size_t)ints_of(s->world[t]), s->world[t], e);
    ok(bad == 0, "%s: loads see every member's part", when);
    MPI_Barrier(comm); /* everybody has read before anybody stores */
    for (int i = 0; i < 4; i++)
        s->part[r][i] = pat(me, i, e + 1);
    KEEP_RC(rc, MPI_Win_sync(s->win));
    MPI_Barrier(comm);
    KEEP_RC(rc, MPI_Win_sync(s->win));
    ok(is_pat(s->base, 4, l, e + 1), "%s: the left neighbour's stores are in my part", when);
    KEEP_RC(rc, MPI_Win_unlock_all(s->win));

    int vals[4], got[4], one = 1;
    fill_pat(vals, 4, me, e + 2);
    KEEP_RC(rc, MPI_Win_fence(0, s->win));
    KEEP_RC(rc, MPI_Put(vals, 4, MPI_INT, r, 4, 4, MPI_INT, s->win));
    KEEP_RC(rc, MPI_Get(got, 4, MPI_INT, l, 12, 4, MPI_INT, s->win));
    for (int t = 0; t < n; t++)
        KEEP_RC(rc, MPI_Accumulate(&one, 1, MPI_INT, t, 8, 1, MPI_INT, MPI_SUM, s->win));
    KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win));
    int exp_got[4];
    for (int i = 0; i < 4; i++)
        exp_got[i] = pat(s->world[l], 12 + i, e);
    ok(is_pat(s->base + 4, 4, l, e + 2) && same_ints(got, exp_got, 4) &&
           s->base[8] == pat(rank, 8, e) + n,
       "%s: fence put, get and everybody's accumulate", when);
    is_int(rc, MPI_SUCCESS, "%s: every call of the round succeeded", when);
}

/* Every member writes its whole part anew (no epoch is open: the program's own memory). */
static void shared_fill(swin *s, int e)
{
    fill_pat(s->base, (size_t)ints_of(rank), rank, e);
    MPI_Win_sync(s->win);
}

static void part3(void)
{
    if (!on_one_node(MPI_COMM_WORLD)) { /* the shared windows would span nodes */
        planned++;
        skip(1, "part 3: the world spans nodes, where MPI_Win_allocate_shared is refused");
        return;
    }
    const int joiner = rank == nprocs - 1;
    MPI_Comm oc = world_split(!joiner);
    swin s = {0};
    MPI_Win_allocate_shared(ints_of(rank) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                            joiner ? MPI_COMM_SELF : oc, &s.base, &s.win);
    MPI_Win_set_errhandler(s.win, MPI_ERRORS_RETURN);
    shared_fill(&s, 50);
    if (!joiner) {
        planned += SHARED_TESTS;
        MPI_Barrier(oc);
        shared_round(&s, oc, 50, "shared, before the join");
    }
    shared_fill(&s, 52);
    MPI_Comm nc;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - 1 - rank, &nc);
    planned += 1 + SHARED_TESTS;
    is_int(MPI_Win_change_comm(nc, nprocs - 1, s.win), MPI_SUCCESS,
           "shared, join: MPI_Win_change_comm");
    shared_round(&s, nc, 52, "shared, after the join");
    MPI_Comm_free(&nc);
    if (oc != MPI_COMM_NULL)
        MPI_Comm_free(&oc);

    /* World rank 1 leaves; its part lies in the segment world rank 0 allocated, which world
     * rank 0 frees with its window before the leaver uses its part again. */
    const int leaver = rank == 1;
    MPI_Barrier(MPI_COMM_WORLD);
    shared_fill(&s, 54);
    int *mine = s.base;
    nc = world_split(!leaver);
    planned++;
    is_int(MPI_Win_change_comm(leaver ? MPI_COMM_NULL : nc, 0, s.win), MPI_SUCCESS,
           "shared, leave: MPI_Win_change_comm");
    if (!leaver) {
        planned += SHARED_TESTS;
        shared_round(&s, nc, 54, "shared, after rank 1 left");
        MPI_Win_free(&s.win);
        MPI_Comm_free(&nc);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the others' windows, world rank 0's segment too, are gone */
    if (leaver) {
        planned += SHARED_TESTS;
        shared_round(&s, MPI_COMM_SELF, 54, "shared, the leaver over itself");
        ok(s.part[0] == mine, "shared, the leaver's part stayed where it was");
        planned++;
        MPI_Win_free(&s.win);
    }
    free(s.world);
    free(s.part);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (nprocs < 3) {
        if (rank == 0)
            fprintf(stderr, "t_change_flavors needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fwin f;
    part1(&f);
    part2(&f);
    part3();
    tap_plan(planned);
    return test_done();
}
