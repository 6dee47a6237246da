/* t_lock.c - passive target synchronization (MPI_Win_lock/unlock): shared and exclusive locks;
 * puts, gets and accumulates; epochs with one small operation (the cases an implementation may
 * shortcut) and with many; a lock on oneself around local loads and stores; counters that every
 * rank increments many times under exclusive and under shared locks, which must come out exact;
 * MPI_MODE_NOCHECK; a 256 KiB transfer; a token passed back and forth thousands of times by
 * flags under locks. */
#include "common.h"

#define K 16
#define ITER 200
/* Window layout, in ints: 2*nprocs regions of K (origin r puts into region r and accumulates
 * into region nprocs+r), 2 counters, K ints of scratch the owner stores into locally, 1 slot. */
static iwin w;

static int *region(int *base, int r) { return base + r * K; }
static int counter_at(void) { return 2 * nprocs * K; }
static int scratch_at(void) { return 2 * nprocs * K + 2; }
static int slot_at(void) { return 2 * nprocs * K + 2 + K; }

/* Exclusive lock on every target in turn; put into region `rank`. Then each rank checks the
 * regions the others wrote. */
static void exclusive_puts(void)
{
    int src[K], exp[K], bad = 0;
    for (int i = 0; i < K; i++)
        src[i] = pat(rank, i, 1);
    for (int d = 0; d < nprocs; d++) {
        int t = (rank + d) % nprocs; /* start at a different target on each rank */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
        MPI_Put(src, K, MPI_INT, t, rank * K, K, MPI_INT, w.win);
        MPI_Win_unlock(t, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every epoch on us is over */
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    for (int r = 0; r < nprocs; r++) {
        for (int i = 0; i < K; i++)
            exp[i] = pat(r, i, 1);
        bad |= memcmp(region(mine, r), exp, sizeof exp) != 0;
    }
    ok(!bad, "puts under exclusive locks from every rank, itself included");
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Shared locks held on all targets at once: get every rank's region `r` for every r. */
static void shared_gets(void)
{
    int *got = xmalloc((size_t)nprocs * nprocs * K * sizeof(int)), bad = 0;
    for (int t = 0; t < nprocs; t++)
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
    for (int t = 0; t < nprocs; t++)
        MPI_Get(got + t * nprocs * K, nprocs * K, MPI_INT, t, 0, nprocs * K, MPI_INT, w.win);
    for (int t = nprocs - 1; t >= 0; t--)
        MPI_Win_unlock(t, w.win);
    for (int t = 0; t < nprocs; t++)
        for (int r = 0; r < nprocs; r++)
            for (int i = 0; i < K; i++)
                bad += got[(t * nprocs + r) * K + i] != pat(r, i, 1);
    is_int(bad, 0, "gets under shared locks held on every rank at once: wrong ints");
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Counters on every rank: ITER exclusive epochs adding 1 to counter 0 of every rank,
 * then ITER shared epochs adding rank+1 to counter 1. Accumulates of the same op are atomic
 * under a shared lock, so both come out exact. */
static void counters(void)
{
    int one = 1, mine = rank + 1;
    for (int it = 0; it < ITER; it++)
        for (int d = 0; d < nprocs; d++) {
            int t = (rank + d + it) % nprocs;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
            MPI_Accumulate(&one, 1, MPI_INT, t, counter_at(), 1, MPI_INT, MPI_SUM, w.win);
            MPI_Win_unlock(t, w.win);
        }
    for (int it = 0; it < ITER; it++)
        for (int d = 0; d < nprocs; d++) {
            int t = (rank + d + it) % nprocs;
            MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
            MPI_Accumulate(&mine, 1, MPI_INT, t, counter_at() + 1, 1, MPI_INT, MPI_SUM, w.win);
            MPI_Win_unlock(t, w.win);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    int *all = xmalloc(w.n * sizeof(int));
    read_own(&w, all);
    is_int(all[counter_at()], (long long)ITER * nprocs,
           "counter incremented %d times by every rank under exclusive locks", ITER);
    is_int(all[counter_at() + 1], (long long)ITER * nprocs * (nprocs + 1) / 2,
           "counter incremented %d times by every rank under shared locks", ITER);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Epochs of one small operation each, to the right neighbour: a put of one int, a get of one
 * int, an accumulate of one int; each checked by a later epoch. */
static void single_op_epochs(void)
{
    const int t = right(), slot = slot_at(); /* only the left neighbour writes ours */
    int v = pat(rank, 0, 9), got = -1, three = 3, one = 1;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    MPI_Put(&v, 1, MPI_INT, t, slot, 1, MPI_INT, w.win);
    MPI_Win_unlock(t, w.win);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
    MPI_Get(&got, 1, MPI_INT, t, slot, 1, MPI_INT, w.win);
    MPI_Win_unlock(t, w.win);
    is_int(got, v, "single-put epoch, then single-get epoch reads it back");

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    MPI_Accumulate(&three, 1, MPI_INT, t, slot, 1, MPI_INT, MPI_SUM, w.win);
    MPI_Win_unlock(t, w.win);
    got = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    MPI_Get(&got, 1, MPI_INT, t, slot, 1, MPI_INT, w.win);
    MPI_Win_unlock(t, w.win);
    is_int(got, v + 3, "single-accumulate epoch adds to the value");

    /* The same, 100 times in a row, alternating lock types. */
    int bad = 0;
    for (int it = 0; it < 100; it++) {
        int lt = it % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, x = pat(rank, it, 10), y = -1;
        MPI_Win_lock(lt, t, 0, w.win);
        MPI_Put(&x, 1, MPI_INT, t, slot, 1, MPI_INT, w.win);
        MPI_Win_unlock(t, w.win);
        MPI_Win_lock(lt, t, 0, w.win);
        MPI_Accumulate(&one, 1, MPI_INT, t, slot, 1, MPI_INT, MPI_SUM, w.win);
        MPI_Win_unlock(t, w.win);
        MPI_Win_lock(lt, t, 0, w.win);
        MPI_Get(&y, 1, MPI_INT, t, slot, 1, MPI_INT, w.win);
        MPI_Win_unlock(t, w.win);
        bad += y != x + 1;
    }
    is_int(bad, 0, "100 rounds of single put, accumulate and get epochs: wrong values");
    MPI_Barrier(MPI_COMM_WORLD);
}


/* One exclusive epoch with many operations to the right neighbour, on distinct locations:
 * K/2 one-int puts and one K/2-int put, a K-int accumulate, a get of data nobody changes. */
static void multi_op_epoch(void)
{
    const int t = right();
    int src[K], add[K], got[K], exp[K];
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, 11);
        add[i] = i + rank;
        got[i] = -1;
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    for (int i = 0; i < K / 2; i++)
        MPI_Put(&src[i], 1, MPI_INT, t, rank * K + i, 1, MPI_INT, w.win);
    MPI_Put(&src[K / 2], K / 2, MPI_INT, t, rank * K + K / 2, K / 2, MPI_INT, w.win);
    MPI_Accumulate(add, K, MPI_INT, t, (nprocs + rank) * K, K, MPI_INT, MPI_SUM, w.win);
    MPI_Get(got, K, MPI_INT, t, t * K, K, MPI_INT, w.win); /* t's own put: nobody changes it */
    MPI_Win_unlock(t, w.win);
    for (int i = 0; i < K; i++)
        exp[i] = pat(t, i, 1);
    ok(same_ints(got, exp, K), "multi-operation epoch: the get");

    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int)), bad = 0;
    read_own(&w, mine);
    for (int i = 0; i < K; i++) {
        bad |= region(mine, left())[i] != pat(left(), i, 11);
        bad |= region(mine, nprocs + left())[i] != i + left();
    }
    ok(!bad, "multi-operation epoch: the puts and the accumulate arrived");
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Local loads and stores under a lock on oneself, seen by (and seeing) remote epochs. */
static void self_lock(void)
{
    int *mine = xmalloc(w.n * sizeof(int)), got[K], exp[K], v = pat(rank, 0, 12), bad = 0;

    /* Local stores inside an exclusive epoch on oneself... */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
    for (int i = 0; i < K; i++)
        w.buf[scratch_at() + i] = pat(rank, i, 13);
    MPI_Win_unlock(rank, w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* ...are what the left neighbour's get sees. */
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, w.win);
    MPI_Get(got, K, MPI_INT, right(), scratch_at(), K, MPI_INT, w.win);
    MPI_Win_unlock(right(), w.win);
    for (int i = 0; i < K; i++)
        exp[i] = pat(right(), i, 13);
    ok(same_ints(got, exp, K), "get of the target's local stores made under a lock on itself");
    MPI_Barrier(MPI_COMM_WORLD);

    /* A put to oneself under a lock, then a local load under another. */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
    MPI_Put(&v, 1, MPI_INT, rank, slot_at(), 1, MPI_INT, w.win);
    MPI_Win_unlock(rank, w.win);
    read_own(&w, mine);
    is_int(mine[slot_at()], v, "put to oneself under a shared lock, read by a local load");

    /* Loads and a get of oneself in the same shared epoch agree. */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
    MPI_Get(got, K, MPI_INT, rank, scratch_at(), K, MPI_INT, w.win);
    for (int i = 0; i < K; i++)
        bad |= w.buf[scratch_at() + i] != pat(rank, i, 13);
    MPI_Win_unlock(rank, w.win);
    for (int i = 0; i < K; i++)
        bad |= got[i] != pat(rank, i, 13);
    ok(!bad, "local loads and a get of oneself in one shared epoch");
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_MODE_NOCHECK: while every rank only takes shared locks (no conflicting lock exists), each
 * puts into its own region of every rank. */
static void nocheck(void)
{
    int src[K], *mine = xmalloc(w.n * sizeof(int)), bad = 0;
    for (int i = 0; i < K; i++)
        src[i] = pat(rank, i, 15);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody holds or asks for an exclusive lock from here... */
    for (int d = 0; d < nprocs; d++) {
        int t = (rank + d) % nprocs;
        MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, w.win);
        MPI_Put(src, K, MPI_INT, t, rank * K, K, MPI_INT, w.win);
        MPI_Win_unlock(t, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* ...to here */
    read_own(&w, mine);
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < K; i++)
            bad += region(mine, r)[i] != pat(r, i, 15);
    is_int(bad, 0, "puts under shared locks with MPI_MODE_NOCHECK: wrong ints");
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 256 KiB put under an exclusive lock, read back by a get under a shared lock. */
static void large(void)
{
    const int n = 64 * 1024;
    int *mem, *src = xmalloc(n * sizeof(int)), *got = xmalloc(n * sizeof(int));
    MPI_Alloc_mem(n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &mem);
    MPI_Win win;
    MPI_Win_create(mem, n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < n; i++) {
        src[i] = pat(rank, i, 14);
        got[i] = -1;
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, win);
    MPI_Put(src, n, MPI_INT, right(), 0, n, MPI_INT, win);
    MPI_Win_unlock(right(), win);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, win);
    MPI_Get(got, n, MPI_INT, right(), 0, n, MPI_INT, win);
    MPI_Win_unlock(right(), win);
    ok(same_ints(got, src, (size_t)n), "256 KiB put and get back under locks");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(src);
    free(got);
}

/* A token passed back and forth between ranks 0 and 1 by flags, thousands of times: a rank
 * waits for the token by polling its own window under shared locks of itself, then passes it
 * on with an exclusive lock, a put and an unlock of the other. The target's own shared locks
 * and the origin's exclusive ones meet in one lock word at a high rate: an exclusive release
 * that lost a shared holder's concurrent release (found by bench/notify's lock-flag) hangs
 * here. Two ranks only: with more processes than cores, a ring's pollers crowd out the holder. */
#define TOKEN_ROUNDS 20000
static void token_pair(void)
{
    const int other = !rank;
    MPI_Aint *flag, seen = 0;
    MPI_Alloc_mem(sizeof *flag, MPI_INFO_NULL, &flag);
    *flag = 0;
    MPI_Win win;
    MPI_Win_create(flag, sizeof *flag, sizeof *flag, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (MPI_Aint round = 1; rank < 2 && round <= TOKEN_ROUNDS; round++) {
        /* Rank 0 holds the token at the start of a round; rank 1 waits for it. */
        MPI_Aint want = rank == 0 ? round - 1 : round;
        while (seen < want) {
            MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
            seen = *flag;
            MPI_Win_unlock(rank, win);
        }
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, other, 0, win);
        MPI_Put(&round, 1, MPI_AINT, other, 0, 1, MPI_AINT, win);
        MPI_Win_unlock(other, win);
    }
    while (rank == 0 && seen < TOKEN_ROUNDS) { /* the last round's token coming back */
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        seen = *flag;
        MPI_Win_unlock(rank, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    is_int((int)*flag, rank < 2 ? TOKEN_ROUNDS : 0, "a token passed %d times each way by lock, "
           "put and unlock, awaited under shared locks of oneself", TOKEN_ROUNDS);
    MPI_Win_free(&win);
    MPI_Free_mem(flag);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(1 + 1 + 2 + 3 + 2 + 3 + 1 + 1 + 1);
    iwin_create(&w, (size_t)2 * nprocs * K + 2 + K + 1);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone's window is zeroed before anyone locks it */

    exclusive_puts();
    shared_gets();
    counters();
    single_op_epochs();
    multi_op_epoch();
    self_lock();
    nocheck();
    large();
    token_pair();

    iwin_free(&w);
    return test_done();
}
