/* t_win_shared.c - MPI_Win_allocate_shared windows are flexrma's: attributes and
 * MPI_Win_shared_query tell the truth (every member's part, contiguous by default, page aligned
 * with alloc_shared_noncontig, MPI_PROC_NULL naming the first member with memory); processes
 * load and store each other's parts; RMA, the atomics, MPI_Iput and the proposal's counters work
 * on them; bad arguments give MPI_ERR_RANK, MPI_ERR_SIZE and MPI_ERR_RMA_FLAVOR (the query on
 * a dynamic window), and change nothing; a membership change to the same members succeeds
 * (t_change_flavors tests joins and leaves); an empty part's base is NULL in a noncontiguous
 * window, where the next part starts in a contiguous one (t_shared_query: the query on windows
 * of MPI_Win_allocate and MPI_Win_create). */
#include "errors_common.h"
#include "sync_common.h"

#include <stdint.h>
#include <unistd.h>

#define N 48 /* ints per rank, times (rank + 1); rank 0 has none when there are more than 2 */

static int ints_of(int r) { return r == 0 && nprocs > 2 ? 0 : N * (r + 1); }

typedef struct {
    MPI_Win win;
    int *base;
} swin;

static void swin_allocate(swin *s, int noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    MPI_Win_allocate_shared(ints_of(rank) * (MPI_Aint)sizeof(int), sizeof(int), info,
                            MPI_COMM_WORLD, &s->base, &s->win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    for (int i = 0; i < ints_of(rank); i++) /* no epoch yet: our memory to store into */
        s->base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
}

static int *part_of(const swin *s, int r, MPI_Aint *size, int *unit)
{
    int *p = NULL;
    MPI_Win_shared_query(s->win, r, size, unit, &p);
    return p;
}

/* Part 1 (5 tests): the attributes. */
static void attributes(const swin *s)
{
    int *flavor, *model, *unit, flag[5];
    MPI_Aint *size;
    void *base;
    MPI_Win_get_attr(s->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag[0]);
    MPI_Win_get_attr(s->win, MPI_WIN_MODEL, &model, &flag[1]);
    MPI_Win_get_attr(s->win, MPI_WIN_BASE, &base, &flag[2]);
    MPI_Win_get_attr(s->win, MPI_WIN_SIZE, &size, &flag[3]);
    MPI_Win_get_attr(s->win, MPI_WIN_DISP_UNIT, &unit, &flag[4]);
    ok(flag[0] && *flavor == MPI_WIN_FLAVOR_SHARED, "MPI_WIN_CREATE_FLAVOR is shared");
    ok(flag[1] && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL is unified");
    ok(flag[2] && base == s->base, "MPI_WIN_BASE is the memory MPI_Win_allocate_shared returned");
    ok(flag[3] && *size == ints_of(rank) * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE is my part");
    ok(flag[4] && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT is the unit asked for");
}

/* Part 2 (3 tests): MPI_Win_shared_query of every member, and of MPI_PROC_NULL. */
static void query(const swin *s, int noncontig)
{
    long page = sysconf(_SC_PAGESIZE);
    int sizes_ok = 1, layout_ok = 1, unit;
    MPI_Aint size;
    char *prev_end = NULL;
    for (int r = 0; r < nprocs; r++) {
        char *p = (char *)part_of(s, r, &size, &unit);
        sizes_ok &= size == ints_of(r) * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int);
        if (r == rank)
            layout_ok &= p == (char *)s->base;
        if (r > 0 && noncontig)
            layout_ok &= (uintptr_t)p % (uintptr_t)page == 0;
        else if (r > 0)
            layout_ok &= p == prev_end;
        prev_end = p + size;
    }
    ok(sizes_ok, "every member's size and unit");
    ok(layout_ok, noncontig ? "every part is page aligned (alloc_shared_noncontig)"
                            : "the parts follow each other in rank order");
    int first = nprocs > 2 ? 1 : 0;
    MPI_Aint first_size;
    char *any = (char *)part_of(s, MPI_PROC_NULL, &size, &unit);
    char *want = (char *)part_of(s, first, &first_size, &unit);
    ok(any == want && size == first_size, "MPI_PROC_NULL: the first member with memory (rank %d)",
       first);
}

/* Part 3 (1 test): stores into my part are loads in everyone else's, after MPI_Win_sync and a
 * barrier in a lock_all epoch (the MPI-3 idiom for the unified model). */
static void load_store(const swin *s, int round)
{
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    for (int i = 0; i < ints_of(rank); i++)
        s->base[i] = pat(rank, i, 10 + round);
    MPI_Win_sync(s->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(s->win);
    int bad = 0, unit;
    MPI_Aint size;
    for (int r = 0; r < nprocs; r++) {
        const int *p = part_of(s, r, &size, &unit);
        bad += !is_pat(p, (size_t)ints_of(r), r, 10 + round);
    }
    MPI_Win_unlock_all(s->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(bad == 0, "%s: every member's stores are visible to my loads",
       round ? "noncontiguous" : "contiguous");
}

/* Part 4 (3 tests): fence puts, lock_all fetch-and-op, MPI_Iput and MPIX_Put_signal, each seen
 * by plain loads at the target. Targets are the members with memory. */
static int target_of(int o)
{
    int t = (o + 1) % nprocs;
    return ints_of(t) ? t : 1;
}

/* Rank 1 is the target of rank 0 and, when rank 0 has no memory, of the last rank too. */
static int slot_of(int o) { return o == nprocs - 1 && nprocs > 2 ? 1 : 0; }

static int arrived(const swin *s, int at, int e)
{
    int bad = 0;
    for (int o = 0; o < nprocs; o++)
        if (target_of(o) == rank)
            bad += !is_pat(s->base + at + 8 * slot_of(o), 8, o, e);
    return bad == 0;
}

static void rma(const swin *s)
{
    int vals[8], t = target_of(rank);
    fill_pat(vals, 8, rank, 20);
    if (rank == 1)
        s->base[40] = 0; /* the fetch-and-op counter; the fence orders this store */
    MPI_Win_fence(0, s->win);
    MPI_Put(vals, 8, MPI_INT, t, 8 * slot_of(rank), 8, MPI_INT, s->win);
    MPI_Win_fence(0, s->win);
    ok(arrived(s, 0, 20), "fence: puts are in the targets' parts");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);

    int one = 1, old;
    MPI_Win_lock_all(0, s->win);
    for (int k = 0; k < 5; k++)
        MPI_Fetch_and_op(&one, &old, MPI_INT, 1, 40, MPI_SUM, s->win);
    MPI_Win_unlock_all(s->win);
    MPI_Barrier(MPI_COMM_WORLD);
    int unit;
    MPI_Aint size;
    const int *p1 = part_of(s, 1, &size, &unit);
    MPI_Win_lock_all(0, s->win);
    MPI_Win_sync(s->win);
    int total = p1[40];
    MPI_Win_unlock_all(s->win);
    ok(total == 5 * nprocs, "fetch-and-op: rank 1's counter is %d (got %d)", 5 * nprocs, total);

    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(s->win, &mine, &all);
    fill_pat(vals, 8, rank, 21);
    int arrivals = 0;
    for (int o = 0; o < nprocs; o++)
        arrivals += target_of(o) == rank;
    MPI_Request obj = MPI_REQUEST_NULL;
    if (arrivals > 0) /* rank 0 without memory is nobody's target */
        KEEP_RC(rc, arm_object(mine, arrivals, s->win, &obj));
    KEEP_RC(rc, MPIX_Put_signal(vals, 8, MPI_INT, t, 16 + 8 * slot_of(rank), 8, MPI_INT, all[t],
                                s->win));
    if (arrivals > 0)
        KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && arrived(s, 16, 21),
       "MPIX_Put_signal: the data is there when the counter says so");
    if (obj != MPI_REQUEST_NULL)
        MPI_Request_free(&obj);
    shared_counter_free(s->win, &mine, all);
}

/* Part 5 (4 tests): errors, raised on the window or the communicator; nothing changes. */
static void errors(const swin *s)
{
    MPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Aint size;
    int unit, *p;
    expect(MPI_ERR_RANK, "MPI_Win_shared_query of rank nprocs",
           MPI_Win_shared_query(s->win, nprocs, &size, &unit, &p));
    expect(MPI_SUCCESS, "MPI_Win_change_comm of a shared window to the same members",
           MPI_Win_change_comm(MPI_COMM_WORLD, 0, s->win));
    int *base;
    MPI_Win win;
    expect(MPI_ERR_SIZE, "MPI_Win_allocate_shared of -8 bytes",
           MPI_Win_allocate_shared(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win dwin; /* MPI-4.1 allows the query on shared, allocated and created windows */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dwin);
    MPI_Win_set_errhandler(dwin, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query of a window of MPI_Win_create_dynamic",
           MPI_Win_shared_query(dwin, 0, &size, &unit, &p));
    MPI_Win_free(&dwin);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Part 6 (1 test): no member allocates anything. */
static void empty(void)
{
    int *base;
    MPI_Win win;
    MPI_Win_allocate_shared(0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Aint size = -1;
    int unit = 0, *p;
    MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &p);
    ok(size == 0 && unit == 1, "all parts empty: MPI_PROC_NULL gives size 0");
    MPI_Win_free(&win);
}

/* Part 7 (2 tests): odd ranks allocate nothing. With alloc_shared_noncontig an empty part has
 * no address: NULL from MPI_Win_allocate_shared and MPI_Win_shared_query (as Open MPI and MPICH
 * answer; MPICH's win_shared_noncontig_put checks it); in a contiguous window it starts where
 * the next part starts, which programs count addresses from (as Open MPI answers). */
static void empty_parts(int noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    int unset, *base = &unset, *got; /* the call must set it, NULL or not */
    MPI_Win win;
    MPI_Aint mine = rank % 2 ? 0 : 16 * sizeof(int), size, prev_size = 0;
    MPI_Win_allocate_shared(mine, sizeof(int), info, MPI_COMM_WORLD, &base, &win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    int good = rank % 2 == 0 || noncontig == (base == NULL), unit;
    char *prev = NULL;
    for (int r = 0; r < nprocs; r++) {
        MPI_Win_shared_query(win, r, &size, &unit, &got);
        good &= size == (r % 2 ? 0 : 16 * (MPI_Aint)sizeof(int)) && unit == (int)sizeof(int);
        if (r == rank)
            good &= got == base;
        if (r % 2 && noncontig)
            good &= got == NULL;
        else if (r % 2 || !noncontig)
            good &= got != NULL && (r == 0 || (char *)got == prev + prev_size);
        prev = (char *)got;
        prev_size = size;
    }
    ok(good, "%s window, odd ranks empty: %s", noncontig ? "noncontiguous" : "contiguous",
       noncontig ? "an empty part's base is NULL" : "an empty part starts where the next one does");
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5 + 3 + 1 + 3 + 4 + (3 + 1) + 1 + 2);
    swin s;
    swin_allocate(&s, 0);
    attributes(&s);
    query(&s, 0);
    load_store(&s, 0);
    rma(&s);
    errors(&s);
    MPI_Win_free(&s.win);

    swin_allocate(&s, 1);
    query(&s, 1);
    load_store(&s, 1);
    MPI_Win_free(&s.win);
    empty();
    empty_parts(1);
    empty_parts(0);
    return test_done();
}
