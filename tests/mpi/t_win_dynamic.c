/* t_win_dynamic.c - MPI_Win_create_dynamic windows are flexrma's: the attributes tell the truth;
 * members attach heap and MPI_Alloc_mem memory and address each other's by absolute address in
 * fence, lock_all and counter epochs, with puts, gets, accumulates, the atomics, MPI_Rput and
 * MPI_Iput (regions attached and detached while others work: t_dyn_direct); an access to
 * memory not attached is MPI_ERR_RMA_RANGE at the origin, and one to memory detached after the
 * origin learned it is refused by the target without touching it; attach and detach errors
 * (MPI_ERR_RMA_ATTACH), the calls on other flavors (MPI_ERR_RMA_FLAVOR); a membership change to
 * the same members keeps the regions (t_change_flavors tests joins and leaves). */
#include "errors_common.h"
#include "sync_common.h"

#define N 64        /* ints per region */
#define BIG 4096    /* ints of the region large transfers use (beyond the eager limit) */

typedef struct {
    MPI_Win win;
    int *heap, *alloc;          /* my regions */
    MPI_Aint *heap_at, *alloc_at; /* every member's, by rank */
} dwin;

static MPI_Aint *everyones(void *p)
{
    MPI_Aint mine, *all = xmalloc((size_t)nprocs * sizeof *all);
    MPI_Get_address(p, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    return all;
}

static void dwin_make(dwin *d)
{
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &d->win);
    d->heap = xmalloc(N * sizeof(int));
    MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &d->alloc);
    memset(d->heap, 0, N * sizeof(int));
    memset(d->alloc, 0, N * sizeof(int));
    MPI_Win_attach(d->win, d->heap, N * sizeof(int));
    MPI_Win_attach(d->win, d->alloc, N * sizeof(int));
    d->heap_at = everyones(d->heap); /* attached before told: MPI's order */
    d->alloc_at = everyones(d->alloc);
}

/* Part 1 (5 tests): the attributes. */
static void attributes(const dwin *d)
{
    int *flavor, *model, *unit, flag[5];
    MPI_Aint *size;
    void *base;
    MPI_Win_get_attr(d->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag[0]);
    MPI_Win_get_attr(d->win, MPI_WIN_MODEL, &model, &flag[1]);
    MPI_Win_get_attr(d->win, MPI_WIN_BASE, &base, &flag[2]);
    MPI_Win_get_attr(d->win, MPI_WIN_SIZE, &size, &flag[3]);
    MPI_Win_get_attr(d->win, MPI_WIN_DISP_UNIT, &unit, &flag[4]);
    ok(flag[0] && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "MPI_WIN_CREATE_FLAVOR is dynamic");
    ok(flag[1] && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL is unified");
    ok(flag[2] && base == MPI_BOTTOM, "MPI_WIN_BASE is MPI_BOTTOM");
    ok(flag[3] && *size == 0, "MPI_WIN_SIZE is 0");
    ok(flag[4] && *unit == 1, "MPI_WIN_DISP_UNIT is 1");
}

/* Part 2 (3 tests): a fence epoch: a put into the right neighbour's heap region, a get of the
 * left neighbour's MPI_Alloc_mem region, an accumulate into everyone's. */
static void fence(dwin *d)
{
    for (int i = 0; i < N / 2; i++)
        d->alloc[i] = pat(rank, i, 1);
    int vals[8], got[8];
    fill_pat(vals, 8, rank, 2);
    MPI_Win_fence(0, d->win);
    MPI_Put(vals, 8, MPI_INT, right(), d->heap_at[right()], 8, MPI_INT, d->win);
    MPI_Get(got, 8, MPI_INT, left(), d->alloc_at[left()], 8, MPI_INT, d->win);
    int one = 1;
    for (int t = 0; t < nprocs; t++)
        MPI_Accumulate(&one, 1, MPI_INT, t, d->alloc_at[t] + (N - 1) * (MPI_Aint)sizeof(int), 1,
                       MPI_INT, MPI_SUM, d->win);
    MPI_Win_fence(0, d->win);
    ok(is_pat(d->heap, 8, left(), 2), "fence: the left neighbour's put is in my heap region");
    ok(is_pat(got, 8, left(), 1), "fence: I got the left neighbour's region");
    ok(d->alloc[N - 1] == nprocs, "fence: everyone's accumulate is in my region (%d)",
       d->alloc[N - 1]);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, d->win);
}

/* Part 3 (2 tests): lock_all: fetch-and-op on rank 0, compare-and-swap and MPI_Rput to the
 * right neighbour. */
static void passive(dwin *d)
{
    int one = 1, old, cmp = 0, mine = rank + 1, seen = -1, vals[4];
    fill_pat(vals, 4, rank, 3);
    MPI_Win_lock_all(0, d->win);
    MPI_Fetch_and_op(&one, &old, MPI_INT, 0, d->heap_at[0] + (N - 1) * (MPI_Aint)sizeof(int),
                     MPI_SUM, d->win);
    MPI_Compare_and_swap(&mine, &cmp, &seen, MPI_INT, right(),
                         d->heap_at[right()] + (N - 2) * (MPI_Aint)sizeof(int), d->win);
    MPI_Request r;
    MPI_Rput(vals, 4, MPI_INT, right(), d->heap_at[right()] + 16 * (MPI_Aint)sizeof(int), 4,
             MPI_INT, d->win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, d->win);
    MPI_Win_sync(d->win);
    int good = seen == 0 && d->heap[N - 2] == left() + 1 && is_pat(d->heap + 16, 4, left(), 3);
    if (rank == 0)
        good = good && d->heap[N - 1] == nprocs;
    MPI_Win_unlock_all(d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(good, "lock_all: fetch-and-op, compare-and-swap and MPI_Rput landed");

    /* MPI_Iput and MPIX_Put_signal with the proposal's counters */
    MPI_Sync c, *all;
    int rc = shared_counter_alloc(d->win, &c, &all);
    fill_pat(vals, 4, rank, 4);
    MPI_Request obj, ip;
    KEEP_RC(rc, arm_object(c, 1, d->win, &obj));
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    KEEP_RC(rc, MPI_Iput(vals, 4, MPI_INT, right(), d->heap_at[right()] + 20 * (MPI_Aint)sizeof(int),
                         4, MPI_INT, d->win, &ip));
    KEEP_RC(rc, MPI_Wait(&ip, MPI_STATUS_IGNORE));
    MPI_Win_unlock(right(), d->win);
    KEEP_RC(rc, MPIX_Put_signal(vals, 4, MPI_INT, right(),
                                d->heap_at[right()] + 24 * (MPI_Aint)sizeof(int), 4, MPI_INT,
                                all[right()], d->win));
    KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    ok(rc == MPI_SUCCESS && is_pat(d->heap + 20, 4, left(), 4) && is_pat(d->heap + 24, 4, left(), 4),
       "MPI_Iput and MPIX_Put_signal: the data is there");
    MPI_Request_free(&obj);
    shared_counter_free(d->win, &c, all);
}

/* Part 4 (7 tests): errors. */
static void errors(dwin *d)
{
    MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN);
    int v = 7;
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    expect(MPI_ERR_RMA_RANGE, "a put past the end of the right neighbour's region",
           MPI_Put(&v, 1, MPI_INT, right(), d->heap_at[right()] + N * (MPI_Aint)sizeof(int), 1,
                   MPI_INT, d->win));
    MPI_Win_unlock(right(), d->win);
    expect(MPI_ERR_RMA_ATTACH, "attaching memory that overlaps a region",
           MPI_Win_attach(d->win, d->heap + 8, 8 * sizeof(int)));
    expect(MPI_ERR_RMA_ATTACH, "detaching memory never attached",
           MPI_Win_detach(d->win, d->heap + 8));
    expect(MPI_SUCCESS, "MPI_Win_change_comm of a dynamic window to the same members",
           MPI_Win_change_comm(MPI_COMM_WORLD, 0, d->win));

    int buf[4] = {0};
    MPI_Win cwin;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
    MPI_Win_set_errhandler(cwin, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach on a window of MPI_Win_create",
           MPI_Win_attach(cwin, buf, sizeof buf));
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach on a window of MPI_Win_create",
           MPI_Win_detach(cwin, buf));
    MPI_Win_free(&cwin);

    /* A region the origin learned, detached since: the target refuses a small and a large put
     * and get (eager and data message) and never touches the memory, which it keeps. */
    int *gone = xmalloc(BIG * sizeof(int)), *src = xmalloc(BIG * sizeof(int));
    int *got = xmalloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        gone[i] = -1, src[i] = rank, got[i] = 5;
    MPI_Win_attach(d->win, gone, BIG * sizeof(int));
    MPI_Aint *at = everyones(gone);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win); /* the origin learns the region */
    MPI_Get(got, 1, MPI_INT, right(), at[right()], 1, MPI_INT, d->win);
    MPI_Win_unlock(right(), d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(d->win, gone);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_SUCCESS;
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    KEEP_RC(rc, MPI_Put(src, 1, MPI_INT, right(), at[right()], 1, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Put(src, BIG, MPI_INT, right(), at[right()], BIG, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Get(got + 1, BIG - 1, MPI_INT, right(), at[right()], BIG - 1, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Win_unlock(right(), d->win));
    MPI_Barrier(MPI_COMM_WORLD);
    int untouched = 1;
    for (int i = 0; i < BIG; i++)
        untouched = untouched && gone[i] == -1;
    ok(rc == MPI_SUCCESS && untouched && got[0] == -1,
       "detached memory: the target refused the puts and gets and kept its contents");
    free(at);
    free(gone);
    free(src);
    free(got);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5 + 3 + 2 + 7);
    dwin d;
    dwin_make(&d);
    attributes(&d);
    fence(&d);
    passive(&d);
    errors(&d);
    MPI_Win_detach(d.win, d.heap);
    MPI_Win_detach(d.win, d.alloc);
    MPI_Win_free(&d.win);
    free(d.heap);
    MPI_Free_mem(d.alloc);
    free(d.heap_at);
    free(d.alloc_at);
    return test_done();
}
