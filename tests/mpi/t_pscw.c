/* t_pscw.c - generalized active target synchronization (post/start/complete/wait): groups that
 * are subsets of the window group (one target exposed to many origins, one origin accessing many
 * targets, disjoint pairs while a rank stays out), a rank in both roles at once (ring, and
 * all-to-all with itself in both groups), MPI_Win_test polled until it reports completion,
 * MPI_MODE_NOCHECK, puts, gets and accumulates, and many epochs in a row; and epochs of rank 0
 * into rank 1 that alternate between the ways an epoch closes between node peers (the target
 * posting before the puts or only after complete, empty epochs, MPI_Win_test or MPI_Win_wait),
 * each checked for exactly its own data; and empty groups. */
#include "common.h"

#define K 8
static iwin w; /* (nprocs + 2) regions of K ints: region r < nprocs is written by origin r */

/* The group of the world ranks in [lo, hi) except `except` (-1: none). */
static MPI_Group range_group(int lo, int hi, int except)
{
    int ranks[64], n = 0;
    for (int r = lo; r < hi; r++)
        if (r != except)
            ranks[n++] = r;
    return world_subgroup(ranks, n);
}

static MPI_Group one(int r) { return world_subgroup(&r, 1); }

static int *region(int r) { return w.buf + r * K; }

static int sent_sum[K]; /* what we accumulated into the right neighbour so far */

/* One ring epoch: expose to the left neighbour, access the right one. Put into its region
 * `rank`, accumulate into its region nprocs (a running sum), and get its region nprocs+1, where
 * it copied that sum after the previous epoch. Returns 1 if anything was wrong. */

static int ring_epoch(int e, int assert, int barrier)
{
    MPI_Group from = one(left()), to = one(right());
    int src[K], got[K], exp[K], bad = 0;
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, e);
        got[i] = -1;
    }
    MPI_Win_post(from, assert, w.win);
    if (barrier) /* NOCHECK's promise: every post is done before any matching start */
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_start(to, assert, w.win);
    MPI_Get(got, K, MPI_INT, right(), (nprocs + 1) * K, K, MPI_INT, w.win);
    MPI_Put(src, K, MPI_INT, right(), rank * K, K, MPI_INT, w.win);
    MPI_Accumulate(src, K, MPI_INT, right(), nprocs * K, K, MPI_INT, MPI_SUM, w.win);
    MPI_Win_complete(w.win);
    MPI_Win_wait(w.win);

    bad |= memcmp(got, sent_sum, sizeof got) != 0;
    for (int i = 0; i < K; i++) {
        sent_sum[i] += src[i];
        exp[i] = pat(left(), i, e);
    }
    bad |= memcmp(region(left()), exp, sizeof exp) != 0;
    /* Outside the exposure epoch: copy the sum for the next epoch's get (a local store). */
    memcpy(region(nprocs + 1), region(nprocs), K * sizeof(int));
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    return bad;
}

static void ring(void)
{
    memset(w.buf, 0, w.n * sizeof(int));
    memset(sent_sum, 0, sizeof sent_sum);
    MPI_Barrier(MPI_COMM_WORLD);
    ok(!ring_epoch(1, 0, 0), "ring: put, get and accumulate in one epoch");
    ok(!ring_epoch(2, MPI_MODE_NOCHECK, 1), "ring with MPI_MODE_NOCHECK on post and start");
    int bad = 0, first = -1;
    for (int e = 3; e < 203; e++)
        if (ring_epoch(e, e % 2 ? MPI_MODE_NOCHECK : 0, e % 2) && !bad++)
            first = e;
    is_int(bad, 0, "ring: 200 more epochs, every other one with NOCHECK: bad epochs (first %d)",
           first);
}

/* Rank 0 is exposed to all the others; they accumulate into one location and get region 0. */
static void many_to_one(void)
{
    int src[K], got[K], exp[K];
    if (rank == 0) {
        for (int i = 0; i < K; i++) {
            region(0)[i] = 1000 + i;
            region(1)[i] = 0;
        }
        MPI_Group others = range_group(1, nprocs, -1);
        MPI_Win_post(others, 0, w.win);
        MPI_Win_wait(w.win);
        MPI_Group_free(&others);
        for (int i = 0; i < K; i++) /* sum over r of r*(i+1) */
            exp[i] = (i + 1) * nprocs * (nprocs - 1) / 2;
        ok(same_ints(region(1), exp, K), "many-to-one: rank 0 holds the sum of all origins");
    } else {
        MPI_Group target = one(0);
        for (int i = 0; i < K; i++)
            src[i] = rank * (i + 1);
        MPI_Win_start(target, 0, w.win);
        MPI_Accumulate(src, K, MPI_INT, 0, K, K, MPI_INT, MPI_SUM, w.win);
        MPI_Get(got, K, MPI_INT, 0, 0, K, MPI_INT, w.win);
        MPI_Win_complete(w.win);
        MPI_Group_free(&target);
        for (int i = 0; i < K; i++)
            exp[i] = 1000 + i;
        ok(same_ints(got, exp, K), "many-to-one: get from rank 0");
    }
}

/* The last rank accesses all the others in each of 50 epochs, putting into region 0 and getting
 * region 1; the targets poll MPI_Win_test until their exposure is over. */
static void one_to_many_test(void)
{
    const int o = nprocs - 1, epochs = 50;
    int bad = 0, first = -1;
    long polls = 0;
    int *src = xmalloc((size_t)o * K * sizeof(int)), *got = xmalloc((size_t)o * K * sizeof(int));
    MPI_Group group = rank == o ? range_group(0, o, -1) : one(o);

    for (int e = 0; e < epochs; e++) {
        int wrong = 0;
        if (rank == o) {
            MPI_Win_start(group, 0, w.win);
            for (int t = 0; t < o; t++) {
                for (int i = 0; i < K; i++) {
                    src[t * K + i] = pat(o, i, 1000 * t + e);
                    got[t * K + i] = -1;
                }
                MPI_Put(src + t * K, K, MPI_INT, t, 0, K, MPI_INT, w.win);
                MPI_Get(got + t * K, K, MPI_INT, t, K, K, MPI_INT, w.win);
            }
            MPI_Win_complete(w.win);
            for (int t = 0; t < o; t++)
                for (int i = 0; i < K; i++)
                    wrong |= got[t * K + i] != pat(t, i, e);
        } else {
            for (int i = 0; i < K; i++)
                region(1)[i] = pat(rank, i, e); /* before post: what the origin will get */
            MPI_Win_post(group, 0, w.win);
            int flag = 0;
            while (!flag) {
                MPI_Win_test(w.win, &flag);
                polls++;
            }
            for (int i = 0; i < K; i++)
                wrong |= region(0)[i] != pat(o, i, 1000 * rank + e);
        }
        if (wrong && !bad++)
            first = e;
    }
    MPI_Group_free(&group);
    free(src);
    free(got);
    if (rank == o)
        is_int(bad, 0, "one-to-many, %d epochs: gets from every target (first bad epoch %d)",
               epochs, first);
    else
        is_int(bad, 0, "one-to-many, %d epochs: MPI_Win_test polled %ld times, puts arrived "
                       "(first bad epoch %d)", epochs, polls, first);
}

/* Every rank exposes to and accesses every rank, itself included. */
static void all_to_all(void)
{
    MPI_Group all = range_group(0, nprocs, -1);
    int src[K], exp[K];
    for (int i = 0; i < K; i++)
        src[i] = pat(rank, i, 77);
    memset(region(nprocs), 0, K * sizeof(int));
    MPI_Win_post(all, 0, w.win);
    MPI_Win_start(all, 0, w.win);
    for (int t = 0; t < nprocs; t++) {
        MPI_Put(src, K, MPI_INT, t, rank * K, K, MPI_INT, w.win);
        MPI_Accumulate(src, K, MPI_INT, t, nprocs * K, K, MPI_INT, MPI_SUM, w.win);
    }
    MPI_Win_complete(w.win);
    MPI_Win_wait(w.win);
    MPI_Group_free(&all);
    int bad = 0;
    for (int i = 0; i < K; i++) {
        exp[i] = 0;
        for (int r = 0; r < nprocs; r++) {
            bad |= region(r)[i] != pat(r, i, 77);
            exp[i] += pat(r, i, 77);
        }
    }
    ok(!bad && same_ints(region(nprocs), exp, K),
       "all-to-all with oneself in both groups: puts and the accumulated sum");
}

/* Disjoint pairs (0,1), (2,3)... exchange in both directions while an odd last rank stays out of
 * every epoch. */
static void pairs(void)
{
    const int partner = rank ^ 1;
    if (partner >= nprocs) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Group g = one(partner);
    int src[K], got[K], exp[K], bad = 0;
    for (int e = 0; e < 20; e++) {
        for (int i = 0; i < K; i++) {
            src[i] = pat(rank, i, 300 + e);
            region(nprocs + 1)[i] = pat(rank, i, 400 + e);
        }
        MPI_Win_post(g, 0, w.win);
        MPI_Win_start(g, 0, w.win);
        MPI_Put(src, K, MPI_INT, partner, 0, K, MPI_INT, w.win);
        MPI_Get(got, K, MPI_INT, partner, (nprocs + 1) * K, K, MPI_INT, w.win);
        MPI_Win_complete(w.win);
        MPI_Win_wait(w.win);
        for (int i = 0; i < K; i++)
            exp[i] = pat(partner, i, 300 + e);
        bad += memcmp(region(0), exp, sizeof exp) != 0;
        for (int i = 0; i < K; i++)
            exp[i] = pat(partner, i, 400 + e);
        bad += memcmp(got, exp, sizeof exp) != 0;
    }
    MPI_Group_free(&g);
    is_int(bad, 0, "pair exchange with rank %d, 20 epochs: wrong puts or gets", partner);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 accesses rank 1, epoch after epoch, in patterns that mix how an epoch closes: when
 * rank 1 posts first, the puts are copied and complete closes in its shared state; when it posts
 * only once rank 0 has issued its puts, its post races rank 0's complete, and puts that lose
 * travel with a COMPLETE packet, which rank 1 may read while still in the epoch before
 * (MPI_Win_test polls first); empty epochs close without any operation. Rank 1 checks after each epoch that its slot holds that epoch's data and that the
 * next slot does not hold the next epoch's yet. */
#define MIX_EPOCHS 350
#define MIX_SLOTS 8
#define TAG_READY 41
#define TAG_ISSUED 42
static void mixed_closes(void)
{
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (nprocs < 2 || rank > 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Win win;
    int *base;
    MPI_Alloc_mem(MIX_SLOTS * K * sizeof(int), MPI_INFO_NULL, &base);
    memset(base, 0, MIX_SLOTS * K * sizeof(int));
    MPI_Win_create(base, MIX_SLOTS * K * sizeof(int), sizeof(int), MPI_INFO_NULL, pair, &win);
    MPI_Group pg, other;
    MPI_Comm_group(pair, &pg);
    int peer = 1 - rank;
    MPI_Group_incl(pg, 1, &peer, &other);
    int bad = 0, first_bad = -1;
    for (int e = 0; e < MIX_EPOCHS; e++) {
        /* runs of late epochs, some empty: an empty late epoch may close in shared state while
         * the COMPLETE packet of the one before is still unread at rank 1 */
        int late = e % 7 >= 1 && e % 7 <= 4, empty = e % 5 == 2 || e % 5 == 3, test = e % 2;
        int *slot = base + (e % MIX_SLOTS) * K, *next = base + ((e + 1) % MIX_SLOTS) * K;
        if (rank == 1) {
            if (late)
                MPI_Recv(NULL, 0, MPI_INT, 0, TAG_ISSUED, pair, MPI_STATUS_IGNORE);
            MPI_Win_post(other, 0, win);
            if (!late)
                MPI_Send(NULL, 0, MPI_INT, 0, TAG_READY, pair);
            for (int flag = 0; test && !flag;)
                MPI_Win_test(win, &flag);
            if (!test)
                MPI_Win_wait(win);
            int wrong = 0;
            for (int i = 0; i < K; i++)
                wrong |= (!empty && slot[i] != pat(0, i, e)) || next[i] == pat(0, i, e + 1);
            if (wrong && first_bad < 0)
                first_bad = e;
            bad += wrong;
        } else {
            int src[K];
            for (int i = 0; i < K; i++)
                src[i] = pat(0, i, e);
            MPI_Win_start(other, 0, win);
            if (!late)
                MPI_Recv(NULL, 0, MPI_INT, 1, TAG_READY, pair, MPI_STATUS_IGNORE);
            if (!empty)
                MPI_Put(src, K, MPI_INT, 1, (e % MIX_SLOTS) * K, K, MPI_INT, win);
            /* Before complete, which may wait for the post (MPI allows it; flexrma does so for
             * operations it copies rather than sends): the post and the complete then race. */
            if (late)
                MPI_Send(NULL, 0, MPI_INT, 1, TAG_ISSUED, pair);
            MPI_Win_complete(win);
        }
    }
    if (rank == 1)
        is_int(bad, 0, "%d epochs closing in mixed ways: each held exactly its data (first bad "
                       "epoch %d)", MIX_EPOCHS, first_bad);
    else
        skip(1, "rank 1 checks the mixed epochs");
    MPI_Group_free(&other);
    MPI_Group_free(&pg);
    MPI_Win_free(&win);
    MPI_Comm_free(&pair);
    MPI_Free_mem(base);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 1 test: MPI_GROUP_EMPTY as the start and the post group of a new window (mpi4py's test_rma
 * does both), twice, the second time from the remembered translation: epochs with nobody,
 * which complete at once and leave the window as it was. (The sanitizer build caught memcpy
 * calls with the NULL rank arrays of a window that never had a group.) */
static void empty_groups(void)
{
    iwin e;
    iwin_create(&e, K);
    for (int i = 0; i < K; i++)
        e.buf[i] = pat(rank, i, 0);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
        if ((rc = MPI_Win_start(MPI_GROUP_EMPTY, 0, e.win)) == MPI_SUCCESS)
            rc = MPI_Win_complete(e.win);
        if (rc == MPI_SUCCESS && (rc = MPI_Win_post(MPI_GROUP_EMPTY, 0, e.win)) == MPI_SUCCESS)
            rc = MPI_Win_wait(e.win);
    }
    int mine[K];
    read_own(&e, mine);
    ok(rc == MPI_SUCCESS && is_pat(mine, K, rank, 0), "start/complete and post/wait with "
       "MPI_GROUP_EMPTY, twice, on a new window: nothing waits, nothing changes");
    iwin_free(&e);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(3 + 1 + 1 + 1 + ((rank ^ 1) < nprocs ? 1 : 0) + (rank <= 1 && nprocs >= 2) + 1);
    iwin_create(&w, (size_t)(nprocs + 2) * K);

    ring();
    many_to_one();
    one_to_many_test();
    all_to_all();
    pairs();
    mixed_closes();
    empty_groups();

    iwin_free(&w);
    return test_done();
}
