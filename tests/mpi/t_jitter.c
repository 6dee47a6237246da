/* t_jitter.c - the test switch FLEXRMA_TEST_JITTER=MAX_US (progress/isend.h) is in effect and
 * keeps MPI's order per destination, tag and communicator. Run with FLEXRMA_TEST_JITTER set and
 * the message transport (FLEXRMA_TRANSPORT=am), so that RMA travels as flexrma's messages.
 *  1. fr_isend itself: every rank sends SENDS messages to its right neighbour through fr_isend,
 *     SPACING us apart, alternating between two tags, each carrying its number within its tag;
 *     the neighbour receives them with MPI_ANY_TAG. Within each tag they arrive in the order
 *     sent, and the two tags overtake each other (the delays are in effect: without them the
 *     messages of one sender arrive as sent).
 *  2. RMA through the held messages: EPOCHS exclusive lock epochs on the right neighbour, each
 *     ACCS accumulates MPI_REPLACE and MPI_SUM into the same two elements (accumulate ordering:
 *     the last replace wins, and a MPI_Get_accumulate after them sees it), then large puts (data
 *     messages of their own, beyond FLEXRMA_EAGER_MAX) into one block, each after a flush, so the
 *     last one's data is what remains.
 *  3. The switch held messages: fr_isend_stats counts them (FLEXRMA_STATS prints the count).
 * Linked with the internal library: it calls fr_isend and the progress engine, reads fr_opt. */
#include "common.h"
#include "progress/isend.h"
#include "progress/progress.h"

#define SENDS 400
#define SPACING 50 /* us between two sends: a quarter of the test's FLEXRMA_TEST_JITTER */
#define EPOCHS 20
#define ACCS 50
#define BIG 4096 /* ints: 16 KiB, beyond the default eager limit of 8 KiB */
#define PUTS 4

static void sent(void *ctx, MPI_Status *st)
{
    (void)st;
    (*(int *)ctx)++;
}

static int all_sent(void *arg) { return *(int *)arg == SENDS; }

static void check_fr_isend(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    static int out[SENDS][2], in[SENDS][2];
    int done = 0;
    for (int i = 0; i < SENDS; i++) {
        int tag = 1 + i % 2;
        out[i][0] = tag;
        out[i][1] = i / 2; /* its number within its tag */
        MPI_Request req;
        FR_ENTER();
        if (fr_isend(out[i], 2, MPI_INT, right(), tag, comm, &req) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        fr_pending_add(req, sent, &done);
        FR_LEAVE();
        /* SPACING us apart, starting due sends meanwhile: sent all at once, each tag's due
         * times would soon all be the first ones' plus MAX_US (never earlier than the one
         * before), and the two tags would leave nearly as sent */
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < SPACING * 1e-6) {
            FR_ENTER();
            fr_progress();
            FR_LEAVE();
        }
    }
    int next[3] = {0, 0, 0}, misordered = 0, overtaken = 0;
    for (int i = 0; i < SENDS; i++) {
        MPI_Request req;
        MPI_Status st;
        int flag = 0;
        MPI_Irecv(in[i], 2, MPI_INT, left(), MPI_ANY_TAG, comm, &req);
        while (!flag) {
            MPI_Test(&req, &flag, &st);
            FR_ENTER();
            fr_progress(); /* my own held sends */
            FR_LEAVE();
        }
        int tag = st.MPI_TAG;
        if (tag != in[i][0] || (tag != 1 && tag != 2) || in[i][1] != next[tag]) {
            if (!misordered++)
                diag("message %d: tag %d carries (%d, %d), expected number %d", i, tag,
                     in[i][0], in[i][1], tag == 1 || tag == 2 ? next[tag] : -1);
        }
        if (tag == 1 || tag == 2) {
            next[tag] = in[i][1] + 1;
            overtaken += in[i][1] * 2 + tag - 1 != i; /* not where it was sent */
        }
    }
    FR_ENTER();
    fr_wait_until(all_sent, &done);
    FR_LEAVE();
    ok(!misordered && next[1] == SENDS / 2 && next[2] == SENDS / 2,
       "%d messages through fr_isend, two tags: each tag in the order sent (%d out of order)",
       SENDS, misordered);
    int anywhere = 0;
    MPI_Allreduce(&overtaken, &anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok(anywhere > 0, "the tags overtook each other: %d messages arrived elsewhere than sent "
                     "(%d over all ranks)", overtaken, anywhere);
    MPI_Comm_free(&comm);
}

static void check_rma(void)
{
    int n = 2 + BIG, *mem, *big = xmalloc(PUTS * BIG * sizeof *big);
    MPI_Win win;
    MPI_Win_allocate(n * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    int bad_fetch = 0, bad_mem = 0;
    for (int e = 0; e < EPOCHS; e++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        memset(mem, 0, n * sizeof *mem);
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, win);
        static int vals[ACCS], one = 1;
        for (int i = 0; i < ACCS; i++) {
            vals[i] = pat(rank, i, e);
            MPI_Accumulate(&vals[i], 1, MPI_INT, right(), 0, 1, MPI_INT, MPI_REPLACE, win);
            MPI_Accumulate(&one, 1, MPI_INT, right(), 1, 1, MPI_INT, MPI_SUM, win);
        }
        int got[2] = {-1, -1};
        MPI_Get_accumulate(NULL, 0, MPI_INT, got, 2, MPI_INT, right(), 0, 2, MPI_INT, MPI_NO_OP,
                           win);
        for (int p = 0; p < PUTS; p++) {
            fill_pat(big + p * BIG, BIG, rank, 1000 * e + p);
            MPI_Put(big + p * BIG, BIG, MPI_INT, right(), 2, BIG, MPI_INT, win);
            if (p + 1 < PUTS)
                MPI_Win_flush(right(), win);
        }
        MPI_Win_unlock(right(), win);
        if (got[0] != vals[ACCS - 1] || got[1] != ACCS) {
            if (!bad_fetch++)
                diag("epoch %d: fetched %d and %d after the accumulates, expected %d and %d", e,
                     got[0], got[1], vals[ACCS - 1], ACCS);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        int *exp = xmalloc(BIG * sizeof *exp);
        fill_pat(exp, BIG, left(), 1000 * e + PUTS - 1);
        if (mem[0] != pat(left(), ACCS - 1, e) || mem[1] != ACCS || !same_ints(mem + 2, exp, BIG))
            if (!bad_mem++)
                diag("epoch %d: my window holds %d and %d, expected %d and %d", e, mem[0],
                     mem[1], pat(left(), ACCS - 1, e), ACCS);
        free(exp);
        MPI_Win_unlock(rank, win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ok(!bad_fetch, "%d lock epochs of %d accumulates each: a get-accumulate after them saw the "
                   "last replace and every sum", EPOCHS, ACCS);
    ok(!bad_mem, "... and the window holds them, and the last of %d large puts, each flushed",
       PUTS);
    MPI_Win_free(&win);
    free(big);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(5);
    if (fr_opt.test_jitter == 0) {
        skip(5, "FLEXRMA_TEST_JITTER is not set");
        return test_done();
    }
    check_fr_isend();
    check_rma();
    uint64_t held = 0, max_wait = 0;
    FR_ENTER();
    fr_isend_stats(&held, &max_wait);
    FR_LEAVE();
    ok(held >= SENDS, "the switch held %llu messages (at least the %d of fr_isend), the longest "
                      "for %llu us (FLEXRMA_TEST_JITTER=%u)",
       (unsigned long long)held, SENDS, (unsigned long long)max_wait, fr_opt.test_jitter);
    return test_done();
}
