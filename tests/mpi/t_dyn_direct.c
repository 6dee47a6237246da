/* t_dyn_direct.c - dynamic windows between node peers (direct.c, "dynamic windows"): a member's
 * attached MPI_Alloc_mem memory is reached by its node peers with plain copies and atomics, its
 * heap memory by messages, and memory it detached never directly.
 *
 * All ranks run on one node. Every part checks the data at both ends, and, by the window's
 * statistics (fr_win.st.direct), which path carried it:
 *  - puts, gets, accumulates, fetch-and-op and compare-and-swap into a region of the right
 *    neighbour under fence, lock and lock_all with flushes: all direct into MPI_Alloc_mem memory,
 *    none into heap memory;
 *  - regions attached and detached in rounds (heap and MPI_Alloc_mem memory by turns) while the
 *    others put into a region that stays: the new ones are learned again, the MPI_Alloc_mem ones
 *    and the one that stays are reached directly;
 *  - MPI_Alloc_mem memory reached directly, then detached: operations issued before the detach
 *    that reach the target after it travel and are refused there; those issued after it are
 *    MPI_ERR_RMA_RANGE at the origin, which learns the regions again; the memory keeps its
 *    contents; and after MPI_Free_mem too;
 *  - accumulates from every member at once into one member's MPI_Alloc_mem region, which the
 *    owner and its peers combine into under the same accumulate stripes: no update lost.
 * Under FLEXRMA_TRANSPORT=am or FLEXRMA_DIRECT=0 nothing goes directly; the data must still be
 * right. Linked with the internal library: it reads fr_win's statistics and fr_opt. */
#include "common.h"
#include "sync_common.h"
#include "win/win.h"

#define N 64        /* ints per region */
#define BIG 4096    /* ints of the detached region (beyond the eager limit) */

typedef struct {
    MPI_Win win;
    int *alloc;                 /* my MPI_Alloc_mem region, attached for the whole run */
    MPI_Aint *alloc_at;         /* every member's, by rank */
} dwin;

static int direct_on; /* node peers' MPI_Alloc_mem memory is reached directly in this run */

static uint64_t direct_ops(MPI_Win win) { return fr_win_lookup(win)->st.direct; }

static MPI_Aint *everyones(void *p)
{
    MPI_Aint mine, *all = xmalloc((size_t)nprocs * sizeof *all);
    MPI_Get_address(p, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    return all;
}

/* A region of n ints from the heap or from MPI_Alloc_mem, and back. */
static int *region_new(int alloc_mem, size_t n)
{
    int *p;
    if (alloc_mem)
        MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &p);
    else
        p = xmalloc(n * sizeof(int));
    memset(p, 0, n * sizeof(int));
    return p;
}

static void region_free(int alloc_mem, int *p)
{
    if (alloc_mem)
        MPI_Free_mem(p);
    else
        free(p);
}

/* Do got[0..n) hold pat(r, first + i, e)? */
static int is_pat_at(const int *got, int n, int r, int first, int e)
{
    int good = 1;
    for (int i = 0; i < n; i++)
        good = good && got[i] == pat(r, first + i, e);
    return good;
}

typedef enum sync_mode { M_FENCE, M_LOCK, M_LOCK_ALL } sync_mode;
static const char *const mode_name[] = {"fence", "lock", "lock_all+flush"};

/* Part 1 (2 tests per mode and kind of memory): into a region of the right neighbour, attached
 * for the occasion: a put, a get, an accumulate, a fetch-and-op and a compare-and-swap in one
 * epoch of the mode (lock_all: then a flush and a get of the put back). The data must be right
 * at both ends; the operations into MPI_Alloc_mem memory all go directly, into heap memory none. */
static void reach(dwin *d, sync_mode m, int alloc_mem)
{
    const char *mem = alloc_mem ? "MPI_Alloc_mem" : "heap";
    int e = 50 + 2 * (int)m + alloc_mem;
    int *reg = region_new(alloc_mem, N);
    fill_pat(reg, N, rank, e);
    reg[N - 1] = 0;
    reg[N - 2] = 100;
    reg[N - 3] = 0;
    MPI_Win_attach(d->win, reg, N * sizeof(int));
    MPI_Aint *at = everyones(reg);
    MPI_Aint t = at[right()], isz = (MPI_Aint)sizeof(int);
    int vals[4], got[4] = {0}, back[4] = {0}, one = 1, old = -1, mine = rank + 1, cmp = 0,
        seen = -1;
    fill_pat(vals, 4, rank, e + 20);
    uint64_t d0 = direct_ops(d->win);
    if (m == M_FENCE)
        MPI_Win_fence(0, d->win);
    else if (m == M_LOCK)
        MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    else
        MPI_Win_lock_all(0, d->win);
    MPI_Put(vals, 4, MPI_INT, right(), t, 4, MPI_INT, d->win);
    MPI_Get(got, 4, MPI_INT, right(), t + 8 * isz, 4, MPI_INT, d->win);
    MPI_Accumulate(&one, 1, MPI_INT, right(), t + (N - 1) * isz, 1, MPI_INT, MPI_SUM, d->win);
    MPI_Fetch_and_op(&one, &old, MPI_INT, right(), t + (N - 2) * isz, MPI_SUM, d->win);
    MPI_Compare_and_swap(&mine, &cmp, &seen, MPI_INT, right(), t + (N - 3) * isz, d->win);
    if (m == M_LOCK_ALL) {
        MPI_Win_flush(right(), d->win);
        MPI_Get(back, 4, MPI_INT, right(), t, 4, MPI_INT, d->win);
        MPI_Win_flush(right(), d->win);
    }
    if (m == M_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, d->win);
    else if (m == M_LOCK)
        MPI_Win_unlock(right(), d->win);
    else
        MPI_Win_unlock_all(d->win);
    uint64_t moved = direct_ops(d->win) - d0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, d->win);
    MPI_Win_sync(d->win);
    int origin_good = is_pat_at(got, 4, right(), 8, e) && old == 100 && seen == 0 &&
                      (m != M_LOCK_ALL || is_pat(back, 4, rank, e + 20));
    int target_good = is_pat(reg, 4, left(), e + 20) && is_pat_at(reg + 8, 4, rank, 8, e) &&
                      reg[N - 1] == 1 && reg[N - 2] == 101 && reg[N - 3] == left() + 1;
    MPI_Win_unlock_all(d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(origin_good && target_good, "%s, %s memory: put, get, accumulate, fetch-and-op and "
                                   "compare-and-swap landed (origin %d, target %d)",
       mode_name[m], mem, origin_good, target_good);
    is_int((long long)moved, direct_on && alloc_mem ? 5 + (m == M_LOCK_ALL) : 0,
           "%s, %s memory: operations reached directly", mode_name[m], mem);
    MPI_Win_detach(d->win, reg);
    region_free(alloc_mem, reg);
    free(at);
}

static void reach_all(dwin *d)
{
    for (int m = M_FENCE; m <= M_LOCK_ALL; m++)
        for (int alloc_mem = 1; alloc_mem >= 0; alloc_mem--)
            reach(d, (sync_mode)m, alloc_mem);
}

/* Part 2 (2 tests): every round, each member detaches a region and attaches a new one (heap
 * memory in even rounds, MPI_Alloc_mem memory in odd ones), and tells the others its address;
 * meanwhile they put into its MPI_Alloc_mem region, which stays. The origins learn the new
 * regions, map the MPI_Alloc_mem ones and drop the mappings of those detached; nothing lands in
 * detached memory. */
static void churn(dwin *d)
{
    int good = 1;
    int *old = NULL, *fresh = NULL, old_alloc = 0;
    uint64_t d0 = direct_ops(d->win);
    for (int round = 0; round < 4; round++) {
        fresh = region_new(round & 1, N);
        MPI_Win_attach(d->win, fresh, N * sizeof(int));
        if (old) {
            MPI_Win_detach(d->win, old);
            region_free(old_alloc, old);
        }
        old = fresh;
        old_alloc = round & 1;
        MPI_Aint *at = everyones(fresh);
        int vals[4];
        fill_pat(vals, 4, rank, 10 + round);
        MPI_Win_lock_all(0, d->win);
        MPI_Put(vals, 4, MPI_INT, right(), at[right()], 4, MPI_INT, d->win);
        MPI_Put(vals, 4, MPI_INT, right(), d->alloc_at[right()] + 32 * (MPI_Aint)sizeof(int), 4,
                MPI_INT, d->win);
        MPI_Win_unlock_all(d->win);
        MPI_Barrier(MPI_COMM_WORLD);
        /* In a lock epoch on myself: with the progress agent (.async) the agent wrote these, and
         * the lock orders that before my reads where ThreadSanitizer can see it. */
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, d->win);
        good = good && is_pat(fresh, 4, left(), 10 + round) &&
               is_pat(d->alloc + 32, 4, left(), 10 + round);
        MPI_Win_unlock(rank, d->win);
        free(at);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_detach(d->win, old);
    region_free(old_alloc, old);
    ok(good, "regions attached and detached in rounds: every put reached the current one");
    /* each round: the put into the region that stays, and in odd rounds the one into the new */
    is_int((long long)(direct_ops(d->win) - d0), direct_on ? 4 + 2 : 0,
           "churn: the MPI_Alloc_mem regions were reached directly, the heap ones not");
}

/* Part 3 (2 tests): every member, rank 0 included, accumulates 64 ints at once into rank 0's
 * MPI_Alloc_mem region under shared locks, ROUNDS times, over the same elements: rank 0
 * combines its own, node peers combine straight into the mapped region, each holding the
 * accumulate stripe of the elements exclusively. They exclude each other only if they all
 * pick the same stripe word for the same element (direct.c keys a dynamic window's stripes by
 * the owner's addresses): no update may be lost. */
#define ROUNDS 300
#define ACC_N 64
static void concurrent_acc(dwin *d)
{
    int *reg = region_new(1, ACC_N), ones[ACC_N];
    for (int i = 0; i < ACC_N; i++)
        ones[i] = 1;
    MPI_Win_attach(d->win, reg, ACC_N * sizeof(int));
    MPI_Aint *at = everyones(reg);
    const fr_win *w = fr_win_lookup(d->win);
    uint64_t locked0 = w->st.acc_locked;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, d->win);
        MPI_Accumulate(ones, ACC_N, MPI_INT, 0, at[0], ACC_N, MPI_INT, MPI_SUM, d->win);
        MPI_Win_unlock(0, d->win);
    }
    long long locked = (long long)(w->st.acc_locked - locked0), all_locked = 0;
    MPI_Allreduce(&locked, &all_locked, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int good = 1;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, d->win);
        for (int i = 0; i < ACC_N; i++)
            good = good && reg[i] == nprocs * ROUNDS;
        MPI_Win_unlock(0, d->win);
    }
    MPI_Bcast(&good, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok(good, "concurrent accumulates into rank 0's MPI_Alloc_mem region: no update lost");
    /* rank 0 holds stripes as soon as anyone maps its memory; the peers once they map it */
    is_int(all_locked, direct_on ? (long long)nprocs * ROUNDS * ACC_N : 0,
           "concurrent accumulates: every element combined holding its stripe");
    MPI_Win_detach(d->win, reg);
    region_free(1, reg);
    free(at);
}

/* The error class of rc: MPI_SUCCESS, MPI_ERR_RMA_RANGE, ... */
static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Part 4 (4 tests): MPI_Alloc_mem memory, which the origin reaches directly until the target
 * detaches it, and which it keeps as it was:
 *  - operations issued before the detach, in a lock epoch that reaches the target only after
 *    it (MPI_Win_lock is lazy): the origin's copy finds the attach gone, they travel, and the
 *    target refuses them (an erroneous program: MPI requires memory attached while accessed);
 *  - operations issued after the detach: the origin sees the attach gone, learns the regions
 *    again and reports MPI_ERR_RMA_RANGE (where nobody maps memory, the target refuses them);
 *  - the same after the target freed the memory too. */
static void detached_direct(dwin *d)
{
    int *gone = region_new(1, BIG), *src = xmalloc(BIG * sizeof(int));
    int *got = xmalloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        gone[i] = -1, src[i] = rank, got[i] = 5;
    MPI_Win_attach(d->win, gone, BIG * sizeof(int));
    MPI_Aint *at = everyones(gone);
    MPI_Aint t = at[right()], isz = (MPI_Aint)sizeof(int);
    uint64_t d0 = direct_ops(d->win);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win); /* the origin learns and maps it */
    MPI_Get(got, 1, MPI_INT, right(), t, 1, MPI_INT, d->win);
    MPI_Win_unlock(right(), d->win);
    uint64_t learned = direct_ops(d->win) - d0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* issued, then the target detaches, then the epoch reaches it: each target holds its own
     * window exclusively meanwhile, so that its origin's lock is not free at the first
     * operation (sync_lock.c, fr_lock_take_early) and the operations wait in the queue */
    int rc = MPI_SUCCESS, one = 1, old = 9, cmp = -1, seen = 9, token = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    d0 = direct_ops(d->win);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    KEEP_RC(rc, MPI_Put(src, 1, MPI_INT, right(), t, 1, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Put(src, BIG, MPI_INT, right(), t, BIG, MPI_INT, d->win));
    KEEP_RC(rc, MPI_Accumulate(src, 4, MPI_INT, right(), t, 4, MPI_INT, MPI_SUM, d->win));
    KEEP_RC(rc, MPI_Fetch_and_op(&one, &old, MPI_INT, right(), t + 4 * isz, MPI_SUM, d->win));
    MPI_Sendrecv(&token, 1, MPI_INT, right(), 1, &token, 1, MPI_INT, left(), 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE); /* "issued" to my target, from my origin */
    MPI_Win_detach(d->win, gone);
    MPI_Sendrecv(&token, 1, MPI_INT, left(), 2, &token, 1, MPI_INT, right(), 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE); /* "detached" to my origin, from my target */
    MPI_Win_unlock(rank, d->win);
    KEEP_RC(rc, MPI_Win_unlock(right(), d->win));
    uint64_t raced = direct_ops(d->win) - d0;
    MPI_Barrier(MPI_COMM_WORLD);
    int untouched = 1;
    for (int i = 0; i < BIG; i++)
        untouched = untouched && gone[i] == -1;
    ok(rc == MPI_SUCCESS && untouched && got[0] == -1 && raced == 0,
       "detached while its operations waited: the target refused them and kept its contents "
       "(rc %d, direct %d)", rc, (int)raced);

    /* issued after the detach */
    int cls[5];
    d0 = direct_ops(d->win);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    cls[0] = class_of(MPI_Put(src, 1, MPI_INT, right(), t, 1, MPI_INT, d->win));
    cls[1] = class_of(MPI_Put(src, BIG, MPI_INT, right(), t, BIG, MPI_INT, d->win));
    cls[2] = class_of(MPI_Get(got + 1, BIG - 1, MPI_INT, right(), t, BIG - 1, MPI_INT, d->win));
    cls[3] = class_of(MPI_Accumulate(src, 4, MPI_INT, right(), t, 4, MPI_INT, MPI_SUM, d->win));
    cls[4] = class_of(MPI_Compare_and_swap(&one, &cmp, &seen, MPI_INT, right(), t + 5 * isz,
                                           d->win));
    rc = MPI_Win_unlock(right(), d->win);
    uint64_t after = direct_ops(d->win) - d0;
    MPI_Barrier(MPI_COMM_WORLD);
    int want = direct_on ? MPI_ERR_RMA_RANGE : MPI_SUCCESS, as_wanted = 1;
    for (int i = 0; i < 5; i++)
        as_wanted = as_wanted && cls[i] == want;
    for (int i = 0; i < BIG; i++)
        untouched = untouched && gone[i] == -1;
    ok(rc == MPI_SUCCESS && as_wanted && untouched,
       "issued after the detach: %s, the memory kept its contents",
       direct_on ? "MPI_ERR_RMA_RANGE at the origin" : "refused by the target");
    is_int((long long)(learned * 10 + after), direct_on ? 10 : 0,
           "detached MPI_Alloc_mem memory: reached directly before the detach (x10), not after");

    /* and once the target has freed it */
    MPI_Free_mem(gone);
    MPI_Barrier(MPI_COMM_WORLD);
    d0 = direct_ops(d->win);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, d->win);
    cls[0] = class_of(MPI_Put(src, BIG, MPI_INT, right(), t, BIG, MPI_INT, d->win));
    cls[1] = class_of(MPI_Accumulate(src, 4, MPI_INT, right(), t, 4, MPI_INT, MPI_SUM, d->win));
    rc = MPI_Win_unlock(right(), d->win);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(rc == MPI_SUCCESS && cls[0] == want && cls[1] == want && direct_ops(d->win) == d0,
       "detached and freed MPI_Alloc_mem memory: never reached directly");
    free(at);
    free(src);
    free(got);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    direct_on = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct;
    tap_plan(3 * 2 * 2 + 2 + 2 + 4);
    dwin d;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &d.win);
    MPI_Win_set_errhandler(d.win, MPI_ERRORS_RETURN);
    d.alloc = region_new(1, N);
    MPI_Win_attach(d.win, d.alloc, N * sizeof(int));
    d.alloc_at = everyones(d.alloc);
    reach_all(&d);
    churn(&d);
    concurrent_acc(&d);
    detached_direct(&d);
    MPI_Win_detach(d.win, d.alloc);
    MPI_Win_free(&d.win);
    MPI_Free_mem(d.alloc);
    free(d.alloc_at);
    return test_done();
}
