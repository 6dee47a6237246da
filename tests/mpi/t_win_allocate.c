/* t_win_allocate.c - MPI_Win_allocate windows are flexrma's: attributes tell the truth (flavor,
 * base, size, unit, model), every synchronization and operation works on them (fence, PSCW,
 * lock_all with flush, the atomics, MPI_Iput, the proposal's counters with MPIX_Put_signal),
 * also with a member that allocates no memory and with alloc_shm=false; bad arguments give
 * MPI_ERR_SIZE and MPI_ERR_DISP on the communicator; a process joins with an MPI_Win_allocate
 * window over MPI_COMM_SELF and leaves again with its memory (MPI_Win_change_comm); MPI_Win_free
 * frees the memory (the sanitizer build's leak check). */
#include "errors_common.h"
#include "sync_common.h"

#define N 64 /* ints per rank */

typedef struct {
    MPI_Win win;
    int *base;
} awin;

static void awin_allocate(awin *a, MPI_Aint ints, MPI_Info info)
{
    MPI_Win_allocate(ints * (MPI_Aint)sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &a->base,
                     &a->win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, a->win);
    if (ints)
        memset(a->base, 0, (size_t)ints * sizeof(int));
    MPI_Win_unlock(rank, a->win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 1 (5 tests): the attributes. */
static void attributes(awin *a)
{
    int *flavor, *model, *unit, flag[5];
    MPI_Aint *size;
    void *base;
    MPI_Win_get_attr(a->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag[0]);
    MPI_Win_get_attr(a->win, MPI_WIN_MODEL, &model, &flag[1]);
    MPI_Win_get_attr(a->win, MPI_WIN_BASE, &base, &flag[2]);
    MPI_Win_get_attr(a->win, MPI_WIN_SIZE, &size, &flag[3]);
    MPI_Win_get_attr(a->win, MPI_WIN_DISP_UNIT, &unit, &flag[4]);
    ok(flag[0] && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "MPI_WIN_CREATE_FLAVOR is allocate");
    ok(flag[1] && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL is unified");
    ok(flag[2] && base == a->base, "MPI_WIN_BASE is the memory MPI_Win_allocate returned");
    ok(flag[3] && *size == N * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE is the size asked for");
    ok(flag[4] && *unit == (int)sizeof(int), "MPI_WIN_DISP_UNIT is the unit asked for");
}

/* Part 2 (3 tests): fence puts, PSCW gets, lock_all with flush and fetch-and-op. */
static void epochs(awin *a)
{
    int vals[8], got[8];
    fill_pat(vals, 8, rank, 1);
    MPI_Win_fence(0, a->win);
    MPI_Put(vals, 8, MPI_INT, right(), 0, 8, MPI_INT, a->win);
    MPI_Win_fence(0, a->win);
    ok(is_pat(a->base, 8, left(), 1), "fence: the left neighbour's put is in my window");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, a->win);

    MPI_Group from = world_subgroup((int[]){left()}, 1), to = world_subgroup((int[]){right()}, 1);
    MPI_Win_post(from, 0, a->win);
    MPI_Win_start(to, 0, a->win);
    MPI_Get(got, 8, MPI_INT, right(), 0, 8, MPI_INT, a->win);
    MPI_Win_complete(a->win);
    MPI_Win_wait(a->win);
    ok(is_pat(got, 8, rank, 1), "pscw: my get from the right neighbour returns my own put");
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every rank adds 1 to rank 0's element 8, K times; the fetched values are all distinct. */
    enum { K = 20 };
    int one = 1, old, bad = 0;
    MPI_Win_lock_all(0, a->win);
    for (int k = 0; k < K; k++) {
        MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 8, MPI_SUM, a->win);
        MPI_Win_flush(0, a->win);
        bad += old < 0 || old >= K * nprocs;
    }
    MPI_Win_unlock_all(a->win);
    MPI_Barrier(MPI_COMM_WORLD);
    int total = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, a->win);
    MPI_Get(&total, 1, MPI_INT, 0, 8, 1, MPI_INT, a->win);
    MPI_Win_unlock(0, a->win);
    ok(bad == 0 && total == K * nprocs, "lock_all: %d fetch-and-adds from every rank sum up", K);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 3 (2 tests): MPI_Iput in a lock epoch; MPIX_Put_signal with a counter. */
static void extensions(awin *a)
{
    int vals[8];
    fill_pat(vals, 8, rank, 2);
    MPI_Request r;
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, a->win);
    MPI_Iput(vals, 8, MPI_INT, right(), 16, 8, MPI_INT, a->win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_unlock(right(), a->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(is_pat(a->base + 16, 8, left(), 2), "MPI_Iput: the left neighbour's data is in my window");

    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(a->win, &mine, &all);
    fill_pat(vals, 8, rank, 3);
    KEEP_RC(rc, MPIX_Put_signal(vals, 8, MPI_INT, right(), 24, 8, MPI_INT, all[right()], a->win));
    MPI_Request obj;
    KEEP_RC(rc, arm_object(mine, 1, a->win, &obj));
    KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && is_pat(a->base + 24, 8, left(), 3),
       "MPIX_Put_signal: the data is there when the counter says so");
    MPI_Request_free(&obj);
    shared_counter_free(a->win, &mine, all);
}

/* Part 4 (2 tests): a member that allocates nothing (rank 0, with more than 2 ranks), and
 * alloc_shm=false. Each rank puts into the next rank that has memory. */
static int without_memory(int r, int round) { return round == 0 && r == 0 && nprocs > 2; }
static int target_of(int o, int round)
{
    int t = (o + 1) % nprocs;
    return without_memory(t, round) ? 1 : t;
}

static void special_memory(void)
{
    for (int round = 0; round < 2; round++) {
        MPI_Info info = MPI_INFO_NULL;
        if (round == 1) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "alloc_shm", "false");
        }
        awin a;
        awin_allocate(&a, without_memory(rank, round) ? 0 : N, info);
        int vals[4], t = target_of(rank, round);
        fill_pat(vals, 4, rank, 4 + round);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, a.win);
        MPI_Put(vals, 4, MPI_INT, t, 4 * rank, 4, MPI_INT, a.win);
        MPI_Win_unlock(t, a.win);
        MPI_Barrier(MPI_COMM_WORLD);
        int bad = 0;
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, a.win);
        for (int o = 0; o < nprocs; o++)
            if (target_of(o, round) == rank)
                bad += !is_pat(a.base + 4 * o, 4, o, 4 + round);
        MPI_Win_unlock(rank, a.win);
        ok(bad == 0, "%s: every put reached its target",
           round == 0 ? "a member without memory" : "alloc_shm=false");
        MPI_Win_free(&a.win);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
}

/* Part 5 (2 tests): bad arguments, raised on the communicator. */
static void errors(void)
{
    int *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect(MPI_ERR_SIZE, "MPI_Win_allocate of -8 bytes",
           MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    expect(MPI_ERR_DISP, "MPI_Win_allocate with displacement unit 0",
           MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Part 6 (3 tests): the last rank joins the others' window with an MPI_Win_allocate window over
 * MPI_COMM_SELF, then leaves again keeping its memory. */
static void membership(void)
{
    const int joiner = nprocs - 1;
    MPI_Comm others;
    MPI_Comm_split(MPI_COMM_WORLD, rank == joiner, rank, &others);
    awin a;
    MPI_Win_allocate(N * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                     rank == joiner ? MPI_COMM_SELF : others, &a.base, &a.win);
    memset(a.base, 0, N * sizeof(int)); /* no epoch yet: our memory to store into */
    int rc = MPI_Win_change_comm(MPI_COMM_WORLD, 0, a.win);

    int vals[8], *flavor, flag = 0;
    fill_pat(vals, 8, rank, 6);
    MPI_Win_fence(0, a.win);
    MPI_Put(vals, 8, MPI_INT, right(), 32, 8, MPI_INT, a.win);
    MPI_Win_fence(0, a.win);
    ok(rc == MPI_SUCCESS && is_pat(a.base + 32, 8, left(), 6),
       "joined: the left neighbour's put is in my window");
    MPI_Win_get_attr(a.win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    ok(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE,
       "joined: MPI_WIN_CREATE_FLAVOR is still allocate");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, a.win);

    rc = MPI_Win_change_comm(rank == joiner ? MPI_COMM_NULL : others, 0, a.win);
    int good = rc == MPI_SUCCESS;
    if (rank == joiner) { /* a window over itself, over the memory it allocated */
        void *base;
        MPI_Win_get_attr(a.win, MPI_WIN_BASE, &base, &flag);
        fill_pat(vals, 8, rank, 7);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, a.win);
        MPI_Put(vals, 8, MPI_INT, 0, 48, 8, MPI_INT, a.win);
        MPI_Win_unlock(0, a.win);
        good = good && flag && base == a.base && is_pat(a.base + 48, 8, rank, 7);
    }
    ok(good, "left: the leaver keeps its allocated memory as a window over itself");
    MPI_Win_free(&a.win);
    MPI_Comm_free(&others);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5 + 3 + 2 + 2 + 2 + 3);
    awin a;
    awin_allocate(&a, N, MPI_INFO_NULL);
    attributes(&a);
    epochs(&a);
    extensions(&a);
    MPI_Win_free(&a.win);
    special_memory();
    errors();
    membership();
    return test_done();
}
