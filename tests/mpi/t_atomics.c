/* t_atomics.c - MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Get_accumulate on flexrma windows:
 * atomic per element against each other and against MPI_Accumulate, whoever applies them (the
 * origin into a window it maps, or the target), in program order with the origin's other
 * accumulates, with MPI_NO_OP, MPI_REPLACE and derived datatypes; their errors; and under a
 * sync-ops request (MPI_MODE_WIN_ACCUMULATE covers them).
 *
 * Atomicity shows in the values fetched: when every process adds 1 to one counter many times,
 * the values fetched before each addition must be exactly 0 .. total - 1, each once. Windows of
 * MPI_Alloc_mem memory (node peers map it and apply operations themselves, with hardware
 * atomics or holding a stripe) and of malloc'd memory (the target applies them). */
#include "errors_common.h"
#include "flexrma.h"

#define ITER 200
#define WIN_BYTES 65536

static MPI_Win win;
static unsigned char *mem;
static int alloc_mem;
static const char *memname;

static void win_open(int use_alloc_mem)
{
    alloc_mem = use_alloc_mem;
    memname = use_alloc_mem ? "MPI_Alloc_mem" : "malloc";
    if (use_alloc_mem)
        MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &mem);
    else
        mem = xmalloc(WIN_BYTES);
    memset(mem, 0, WIN_BYTES);
    MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
}

static void win_close(void)
{
    MPI_Win_free(&win);
    if (alloc_mem)
        MPI_Free_mem(mem);
    else
        free(mem);
}

/* Every fetched value 0 .. n-1 exactly once (gathered at rank 0); 1 test. */
static void check_tickets(const long long *mine, int n_per_rank, const char *what)
{
    int total = n_per_rank * nprocs;
    long long *all = rank == 0 ? xmalloc((size_t)total * sizeof *all) : NULL;
    MPI_Gather(mine, n_per_rank, MPI_LONG_LONG, all, n_per_rank, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        char *seen = calloc((size_t)total, 1);
        for (int i = 0; i < total; i++) {
            if (all[i] < 0 || all[i] >= total || seen[all[i]]++) {
                if (!bad++)
                    diag("%s: value %lld fetched twice or out of range", what, all[i]);
            }
        }
        free(seen);
        free(all);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    is_int(bad, 0, "%s, %s window: fetched values not each of 0..%d once", what, memname,
           total - 1);
}

/* Part 1 (4 tests): fetch-and-add on one counter at rank 0 by everyone, for four types: 8- and
 * 4-byte integers (a hardware fetch-and-add), 2-byte integers and doubles (compare-and-swap of
 * MPI_Reduce_local's result). */
static void fetch_add(MPI_Datatype t, int size, const char *what)
{
    long long mine[ITER];
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITER; i++) {
        unsigned char one[8] = {0}, got[8] = {0};
        if (t == MPI_DOUBLE) {
            double d = 1;
            memcpy(one, &d, sizeof d);
        } else {
            one[0] = 1; /* little endian: 1 in any integer width */
        }
        MPI_Fetch_and_op(one, got, t, 0, 64, MPI_SUM, win);
        MPI_Win_flush(0, win);
        if (t == MPI_DOUBLE) {
            double d;
            memcpy(&d, got, sizeof d);
            mine[i] = (long long)d;
        } else {
            long long v = 0;
            memcpy(&v, got, (size_t)size);
            mine[i] = v;
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    check_tickets(mine, ITER, what);
    if (rank == 0) { /* reset the counter for the next type */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        memset(mem + 64, 0, 8);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 2 (1 test): an increment by compare-and-swap, retried until it holds, starting from a
 * fetch with MPI_NO_OP: the counter ends at ITER * nprocs and every swap that held saw a
 * distinct value. */
static void cas_increment(void)
{
    long long mine[ITER];
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITER; i++) {
        long long cur = 0, next, got, dummy = 0;
        MPI_Fetch_and_op(&dummy, &cur, MPI_LONG_LONG, 0, 128, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
        for (;;) {
            next = cur + 1;
            MPI_Compare_and_swap(&next, &cur, &got, MPI_LONG_LONG, 0, 128, win);
            MPI_Win_flush(0, win);
            if (got == cur)
                break;
            cur = got;
        }
        mine[i] = cur;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    check_tickets(mine, ITER, "MPI_Compare_and_swap increments");
}

/* Part 3 (2 tests): MPI_Get_accumulate of 16 ints through a strided target layout (every other
 * int) into a contiguous result, adding 1 to each: every element's fetched values are
 * 0 .. total - 1 once (checked for element 0 and element 15). */
static void get_accumulate_strided(void)
{
    enum { K = 16, REPS = 50 };
    MPI_Datatype strided;
    MPI_Type_vector(K, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int ones[K], got[K];
    for (int k = 0; k < K; k++)
        ones[k] = 1;
    long long first[REPS], last[REPS];
    for (int r = 0; r < REPS; r++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get_accumulate(ones, K, MPI_INT, got, K, MPI_INT, 0, 1024, 1, strided, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        first[r] = got[0];
        last[r] = got[K - 1];
    }
    MPI_Type_free(&strided);
    MPI_Barrier(MPI_COMM_WORLD);
    check_tickets(first, REPS, "MPI_Get_accumulate, strided, element 0");
    check_tickets(last, REPS, "MPI_Get_accumulate, strided, element 15");
}

/* Part 4 (3 tests): program order with MPI_Accumulate, and what MPI_NO_OP and MPI_REPLACE fetch:
 * a large MPI_REPLACE accumulate, then a swap (MPI_REPLACE) of its first elements, then a fetch
 * with MPI_NO_OP, all in one epoch to the right neighbour. */
static void order_and_ops(void)
{
    enum { L = 4096 }; /* ints: 16 KiB, beyond the eager limit */
    int *big = xmalloc(L * sizeof(int)), swap[4], before[4], after[4], none = 0;
    fill_pat(big, L, rank, 5);
    for (int i = 0; i < 4; i++)
        swap[i] = -1 - i - rank * 10;
    memset(before, 0, sizeof before);
    memset(after, 0, sizeof after);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, win);
    MPI_Accumulate(big, L, MPI_INT, right(), 4096, L, MPI_INT, MPI_REPLACE, win);
    MPI_Get_accumulate(swap, 4, MPI_INT, before, 4, MPI_INT, right(), 4096, 4, MPI_INT,
                       MPI_REPLACE, win);
    MPI_Get_accumulate(&none, 0, MPI_INT, after, 4, MPI_INT, right(), 4096, 4, MPI_INT,
                       MPI_NO_OP, win);
    MPI_Win_unlock(right(), win);
    ok(is_pat(before, 4, rank, 5), "MPI_REPLACE fetched the large accumulate's values before it");
    ok(same_ints(after, swap, 4), "MPI_NO_OP fetched what the swap left");
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = (int *)(mem + 4096), *exp = xmalloc(L * sizeof(int));
    fill_pat(exp, L, left(), 5);
    for (int i = 0; i < 4; i++)
        exp[i] = -1 - i - left() * 10;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    int good = same_ints(mine, exp, L);
    MPI_Win_unlock(rank, win);
    free(exp);
    ok(good, "the window holds the swap's values, then the large accumulate's");
    MPI_Barrier(MPI_COMM_WORLD);
    free(big);
}

/* Part 5 (8 tests): errors, each of its class, nothing written; MPI_PROC_NULL does nothing. */
static void errors(void)
{
    int v = 1, got = -7;
    long long ll = 1;
    MPI_Datatype pairs = MPI_DOUBLE_INT;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    expect(MPI_ERR_RMA_SYNC, "MPI_Fetch_and_op outside an epoch",
           MPI_Fetch_and_op(&v, &got, MPI_INT, right(), 0, MPI_SUM, win));
    MPI_Win_lock_all(0, win);
    expect(MPI_ERR_OP, "MPI_Fetch_and_op with a user-less op it cannot apply (MPI_MAXLOC on int)",
           MPI_Fetch_and_op(&v, &got, MPI_INT, right(), 0, MPI_MAXLOC, win));
    expect(MPI_ERR_TYPE, "MPI_Get_accumulate with a result of other size",
           MPI_Get_accumulate(&v, 1, MPI_INT, &got, 2, MPI_INT, right(), 0, 1, MPI_INT, MPI_SUM,
                              win));
    expect(MPI_ERR_TYPE, "MPI_Compare_and_swap on a type with padding",
           MPI_Compare_and_swap(&v, &v, &got, pairs, right(), 0, win));
    expect(MPI_ERR_RANK, "MPI_Compare_and_swap to a rank out of range",
           MPI_Compare_and_swap(&ll, &ll, &ll, MPI_LONG_LONG, nprocs, 0, win));
    expect(MPI_ERR_RMA_RANGE, "MPI_Fetch_and_op beyond the window",
           MPI_Fetch_and_op(&v, &got, MPI_INT, right(), WIN_BYTES - 2, MPI_SUM, win));
    expect(MPI_SUCCESS, "MPI_Fetch_and_op to MPI_PROC_NULL",
           MPI_Fetch_and_op(&v, &got, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
    MPI_Win_unlock_all(win);
    is_int(got, -7, "the failed and the MPI_PROC_NULL calls fetched nothing");
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Part 6 (1 test): a sync-ops request with MPI_MODE_WIN_ACCUMULATE covers MPI_Fetch_and_op: no
 * other epoch is open; when the request completes the result is there, and the owner's counter
 * says the operations are complete in its window. */
static void under_sync_ops(void)
{
    MPI_Sync mine, theirs;
    MPI_Win_Sync_alloc_objects(1, &mine, win, MPI_INFO_NULL);
    MPI_Sendrecv(&mine, 1, MPI_Handle_sync, left(), 3, &theirs, 1, MPI_Handle_sync, right(), 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request done, arrived;
    MPI_Win_sync_object_init(mine, 1, win, MPI_INFO_NULL, &arrived);
    MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_ACCUMULATE, theirs, win, MPI_INFO_NULL, &done);
    long long add = 5, got[3] = {-1, -1, -1};
    MPI_Start(&arrived);
    MPI_Start(&done);
    for (int i = 0; i < 3; i++)
        MPI_Fetch_and_op(&add, &got[i], MPI_LONG_LONG, right(), 256, MPI_SUM, win);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
    MPI_Wait(&arrived, MPI_STATUS_IGNORE);
    long long *counter = (long long *)(mem + 256);
    int good = got[0] == 0 && got[1] == 5 && got[2] == 10 && *counter == 15;
    if (!good)
        diag("fetched %lld %lld %lld, counter %lld", got[0], got[1], got[2], *counter);
    ok(good, "MPI_Fetch_and_op under a sync-ops request: results and window complete");
    MPI_Request_free(&done);
    MPI_Request_free(&arrived);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(1, &mine, win);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(2 * (4 + 1 + 2 + 3 + 8 + 1));
    for (int m = 1; m >= 0; m--) {
        win_open(m);
        fetch_add(MPI_LONG_LONG, 8, "MPI_Fetch_and_op(MPI_SUM) on long long");
        fetch_add(MPI_INT, 4, "MPI_Fetch_and_op(MPI_SUM) on int");
        fetch_add(MPI_SHORT, 2, "MPI_Fetch_and_op(MPI_SUM) on short");
        fetch_add(MPI_DOUBLE, 8, "MPI_Fetch_and_op(MPI_SUM) on double");
        cas_increment();
        get_accumulate_strided();
        order_and_ops();
        errors();
        under_sync_ops();
        win_close();
    }
    return test_done();
}
