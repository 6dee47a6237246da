/* t_asked_gets.c - small gets from a node peer's window in ordinary memory are asked of it
 * through the packet ring, and taken back by the origin when it does not serve them
 * (direct.h, "Gets asked through the ring").
 *
 * On the node's communicator rank 0 exposes NINTS ints of malloc'd memory (less than a page:
 * nothing is mapped, so without the ring a get is read by cross-memory attach). The others get
 * from it in lock, lock_all (flush, MPI_Rget) and exclusive lock epochs, with contiguous and
 * strided origin buffers, and in lock_all epochs of MANY gets before one flush (the first
 * asked, the others read together by cross-memory attach), and check every value:
 *  1. while rank 0 waits in MPI_Barrier, the origins waiting as long as it takes: the gets
 *     are asked of rank 0 and answered by it through the ring, none taken back;
 *  2. with the default wait, while rank 0 stays out of MPI (it watches a word of an
 *     MPI_Win_allocate_shared window with plain loads, sleeping between looks): every get
 *     still ends, taken back and read by the origin itself; had one waited for rank 0, the word
 *     would never be raised and rank 0 reports it after LIMIT_S seconds;
 *  3. rank 0 in MPI again: it finds the packets of the gets taken back and must skip them (an
 *     answer nobody awaits is fatal at the origin), then answers new ones;
 *  4. a PSCW epoch in which rank 0 stays out of MPI after its post until every origin has
 *     completed: the gets are taken back and the epoch closed in rank 0's state page before
 *     it reads their packets, which must not wait for its next post: the lock epoch the
 *     origins open next, with a put, ends (its packets come behind them);
 *  5, 6. fence and PSCW epochs, round after round: rank 0 stores new values where nobody reads
 *     (a fence epoch without operations; before its post), then the origins get them in the
 *     next epoch while rank 0 computes for 0-16 us, about the default wait, before it closes
 *     that epoch. Some gets are answered, others taken back while rank 0 is closing: each must
 *     be read before rank 0 may leave the epoch and store the next round's values, which the
 *     get would then read.
 * Only where node peers reach each other directly and cross-memory attach works between them
 * (not FLEXRMA_TRANSPORT=am or FLEXRMA_DIRECT=0, not across simulated nodes); with the progress
 * agent rank 0 serves gets while it computes, so part 2 checks the values only. Linked with the
 * internal library for fr_opt and the window's statistics. */
#define _GNU_SOURCE /* process_vm_readv */
#include "outside_common.h"
#include "win/win.h"

#include <sys/uio.h>
#include <unistd.h>

#define NINTS 64
#define EPOCHS 300
#define ROUNDS 1000
#define MANY 40 /* gets before one flush */
#define BIG 2048
#define LIMIT_S 60

/* Does cross-memory attach from every member reach rank 0 (ptrace rules allow it)? */
static int cma_works(MPI_Comm node, int nrank)
{
    static volatile int probe = 0x5eed;
    struct {
        long pid;
        unsigned long addr;
    } at = {getpid(), (unsigned long)&probe};
    MPI_Bcast(&at, (int)sizeof at, MPI_BYTE, 0, node);
    int mine = 1, all;
    if (nrank != 0) {
        int got = 0;
        struct iovec l = {&got, sizeof got}, r = {(void *)at.addr, sizeof got};
        mine = process_vm_readv((pid_t)at.pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof got &&
               got == 0x5eed;
    }
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, node);
    return all;
}

static int value(int phase, int i) { return phase * 1000 + i * 3 + 1; }

/* Rank 0 stores its values into its own window under a lock of its own, with MPI_Win_sync, as
 * MPI asks of local stores that others read: with the progress agent nothing else orders them
 * before the agent thread's reads. */
static void expose(MPI_Win win, int *base, int n, int phase)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    for (int i = 0; i < n; i++)
        base[i] = value(phase, i);
    MPI_Win_sync(win);
    MPI_Win_unlock(0, win);
}

/* EPOCHS epochs of gets from rank 0; returns the number of wrong values. */
static int get_all(MPI_Win win, int nrank, int phase)
{
    int bad = 0;
    MPI_Datatype strided;
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int e = 0; e < EPOCHS; e++) {
        int slot = (e * 7 + nrank) % (NINTS - 4), one = -1, two = -1, four[8];
        for (int k = 0; k < 8; k++)
            four[k] = -1;
        MPI_Request rq;
        int many[MANY];
        switch (e % 4) {
        case 0:
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(&one, 1, MPI_INT, 0, slot, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
            two = value(phase, slot + 1);
            break;
        case 1:
            MPI_Win_lock_all(0, win);
            MPI_Get(&one, 1, MPI_INT, 0, slot, 1, MPI_INT, win);
            MPI_Win_flush(0, win);
            MPI_Rget(&two, 1, MPI_INT, 0, slot + 1, 1, MPI_INT, win, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Win_unlock_all(win);
            break;
        case 2:
            MPI_Win_lock_all(0, win);
            for (int k = 0; k < MANY; k++) {
                many[k] = -1;
                MPI_Get(&many[k], 1, MPI_INT, 0, (slot + 3 * k) % NINTS, 1, MPI_INT, win);
            }
            MPI_Win_flush(0, win);
            MPI_Win_unlock_all(win);
            for (int k = 0; k < MANY; k++)
                bad += many[k] != value(phase, (slot + 3 * k) % NINTS);
            one = value(phase, slot);
            two = value(phase, slot + 1);
            break;
        default:
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Get(four, 1, strided, 0, slot, 4, MPI_INT, win);
            MPI_Win_unlock(0, win);
            one = four[0];
            two = value(phase, slot + 1);
            for (int k = 1; k < 4; k++)
                bad += four[2 * k] != value(phase, slot + k) || four[2 * k - 1] != -1;
        }
        bad += one != value(phase, slot) || two != value(phase, slot + 1);
    }
    MPI_Type_free(&strided);
    return bad;
}

/* Out of MPI for us microseconds. */
static void compute_us(int us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}

/* Parts 4 (fence) and 5 (pscw): ROUNDS rounds of gets of a whole window of BIG ints (8 KiB,
 * the most a get is asked for, and the longest a take-back reads), into got; returns the
 * number of wrong values. zero: the group of rank 0, others: the group of the origins. */
static int active_rounds(MPI_Win win, int *base, int *got, int nrank, int pscw, MPI_Group zero,
                         MPI_Group others)
{
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int phase = 10 + r;
        if (!pscw)
            MPI_Win_fence(0, win); /* opens an epoch without operations */
        if (nrank == 0)
            for (int i = 0; i < BIG; i++)
                base[i] = value(phase, i);
        if (pscw && nrank == 0) {
            MPI_Win_post(others, 0, win);
            compute_us(r % 17);
            MPI_Win_wait(win);
        } else if (pscw) {
            MPI_Win_start(zero, 0, win);
            MPI_Get(got, BIG, MPI_INT, 0, 0, BIG, MPI_INT, win);
            MPI_Win_complete(win);
        } else {
            MPI_Win_fence(0, win);
            if (nrank == 0)
                compute_us(r % 17);
            else
                MPI_Get(got, BIG, MPI_INT, 0, 0, BIG, MPI_INT, win);
        }
        if (!pscw)
            MPI_Win_fence(0, win);
        for (int i = 0; nrank != 0 && i < BIG; i++)
            bad += got[i] != value(phase, i);
    }
    return bad;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    int nrank, nsize;
    MPI_Comm node = outside_node(&nrank, &nsize);
    tap_plan(9);
    if (!outside_direct(node, nsize) || !cma_works(node, nrank)) {
        skip(9, "node peers do not read each other's ordinary memory here (no direct access "
                "or no cross-memory attach): gets travel and the target serves them");
        MPI_Comm_free(&node);
        return test_done();
    }
    MPI_Win wordwin;
    int *word = outside_word(node, nrank, &wordwin);
    int *base = nrank == 0 ? xmalloc(NINTS * sizeof(int)) : NULL;
    MPI_Win win;
    MPI_Win_create(base, nrank == 0 ? NINTS * (MPI_Aint)sizeof(int) : 0, sizeof(int),
                   MPI_INFO_NULL, node, &win);
    const fr_win_stats *st = &fr_win_lookup(win)->st;

    /* 1: rank 0 inside MPI. The origins wait as long as it takes for its answers (on a node
     * with more ranks than cores it may be off its core for longer than the default wait). */
    uint64_t wait_ns = fr_opt.ask_wait_ns;
    fr_opt.ask_wait_ns = (uint64_t)LIMIT_S * 1000000000u;
    if (nrank == 0)
        expose(win, base, NINTS, 1);
    MPI_Barrier(node);
    int bad = nrank == 0 ? 0 : get_all(win, nrank, 1);
    MPI_Barrier(node);
    fr_opt.ask_wait_ns = wait_ns;
    ok(bad == 0, "rank 0 in MPI_Barrier: %d epochs of gets read its values (%d wrong)", EPOCHS,
       bad);
    if (nrank == 0)
        ok(st->gets_asked == 0, "rank 0 asked nothing of itself");
    else
        ok(st->gets_asked > 0 && st->gets_taken_back == 0,
           "its gets were asked of rank 0 and answered through the ring (%llu asked, %llu "
           "taken back)", (unsigned long long)st->gets_asked,
           (unsigned long long)st->gets_taken_back);

    /* 2: rank 0 outside MPI */
    if (nrank == 0)
        expose(win, base, NINTS, 2);
    MPI_Barrier(node);
    if (nrank == 0) {
        /* The origins start once the word says rank 0 left the barrier, in which it could
         * still serve their first gets. */
        __atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL);
        ok(outside_watch(word, nsize, LIMIT_S),
           "every member's gets ended while rank 0 stayed out of MPI (within %d s)", LIMIT_S);
        ok(st->gets_taken_back == 0, "rank 0 took back nothing");
        ok(st->gets_asked == 0, "rank 0 still asked nothing");
    } else {
        uint64_t taken = st->gets_taken_back;
        bad = !outside_watch_at_least(word, 1, LIMIT_S);
        bad += get_all(win, nrank, 2);
        __atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL);
        ok(bad == 0, "rank 0 out of MPI: %d epochs of gets read its values (%d wrong)", EPOCHS,
           bad);
        if (fr_opt.async_progress)
            skip(1, "rank 0's progress agent serves gets while it computes");
        else
            ok(st->gets_taken_back > taken, "gets were taken back unserved and read here "
                                            "(%llu)", (unsigned long long)(st->gets_taken_back -
                                                                           taken));
        ok(st->gets_taken_back <= st->gets_asked, "no more gets taken back than asked");
    }
    /* 3: rank 0 meets the packets of the gets taken back: skipped, never answered (an answer
     * would reach the origin ahead of the answers to the gets asked now, and be fatal). */
    MPI_Barrier(node);
    fr_opt.ask_wait_ns = (uint64_t)LIMIT_S * 1000000000u;
    bad = nrank == 0 ? 0 : get_all(win, nrank, 2);
    MPI_Barrier(node);
    fr_opt.ask_wait_ns = wait_ns;
    ok(bad == 0, "rank 0 back in MPI: %d epochs of gets answered through the ring read its "
                 "values (%d wrong)", EPOCHS, bad);

    /* 4-6: active target, rank 0 closing the epochs while gets are taken back. The window
     * spans whole pages: FLEXRMA_ADOPT=0 keeps it in place, unmapped by node peers. */
    MPI_Group all, zero, others;
    MPI_Comm_group(node, &all);
    int first = 0;
    MPI_Group_incl(all, 1, &first, &zero);
    MPI_Group_excl(all, 1, &first, &others);
    int adopt = fr_opt.adopt;
    fr_opt.adopt = 0;
    int *big = xmalloc(BIG * sizeof(int)), *got = xmalloc(BIG * sizeof(int));
    MPI_Win bigwin;
    MPI_Win_create(big, nrank == 0 ? BIG * (MPI_Aint)sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                   node, &bigwin);
    fr_opt.adopt = adopt;
    st = &fr_win_lookup(bigwin)->st;

    /* 4: gets taken back in a PSCW epoch, then a lock epoch. A put first attaches the ring
     * (no get is asked before). */
    if (nrank != 0) {
        int mark = 0;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, bigwin);
        MPI_Put(&mark, 1, MPI_INT, 0, nrank, 1, MPI_INT, bigwin);
        MPI_Win_unlock(0, bigwin);
    }
    MPI_Barrier(node);
    uint64_t taken = st->gets_taken_back;
    bad = 0;
    int posted = __atomic_load_n(word, __ATOMIC_ACQUIRE) + 1; /* (the same on every member) */
    MPI_Barrier(node);
    if (nrank == 0) {
        expose(bigwin, big, BIG, 4);
        MPI_Win_post(others, 0, bigwin);
        /* The origins start once the word says so (outside MPI: no MPI call of rank 0 may
         * serve their gets) */
        __atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL);
        bad = !outside_watch(word, posted + nsize - 1, LIMIT_S);
        MPI_Win_wait(bigwin);
    } else {
        bad = !outside_watch_at_least(word, posted, LIMIT_S); /* (others may go on) */
        MPI_Win_start(zero, 0, bigwin);
        MPI_Get(got, BIG, MPI_INT, 0, 0, BIG, MPI_INT, bigwin);
        MPI_Win_complete(bigwin);
        __atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL);
        for (int i = 0; i < BIG; i++)
            bad += got[i] != value(4, i);
    }
    MPI_Barrier(node); /* (the puts must not meet another origin's gets) */
    if (nrank != 0) {
        int mark = -nrank;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, bigwin);
        MPI_Put(&mark, 1, MPI_INT, 0, nrank, 1, MPI_INT, bigwin);
        MPI_Win_unlock(0, bigwin);
    }
    MPI_Barrier(node);
    if (nrank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, bigwin);
        MPI_Win_sync(bigwin);
        for (int o = 1; o < nsize; o++)
            bad += big[o] != -o;
        MPI_Win_unlock(0, bigwin);
        ok(bad == 0, "pscw, rank 0 out of MPI until every origin completed (within %d s): "
                     "then every origin's put of a lock epoch landed", LIMIT_S);
    } else if (fr_opt.async_progress) {
        ok(bad == 0, "pscw, rank 0 out of MPI: the gets read its values (%d wrong); its "
                     "progress agent served them", bad);
    } else {
        ok(bad == 0 && st->gets_taken_back > taken,
           "pscw, rank 0 out of MPI: the gets were taken back (%llu) and read its values (%d "
           "wrong), and the lock epoch after ended", (unsigned long long)(st->gets_taken_back -
                                                                          taken), bad);
    }

    for (int pscw = 0; pscw <= 1; pscw++) {
        uint64_t asked = st->gets_asked;
        taken = st->gets_taken_back;
        /* Each part starts without the pause that a take-back before left (up to 64 ms, in
         * which no get is asked: direct.h). */
        fr_win_lookup(bigwin)->peers[0].asks_after = 0;
        fr_win_lookup(bigwin)->peers[0].asks_quiet = 0;
        MPI_Win_fence(0, bigwin);
        bad = active_rounds(bigwin, big, got, nrank, pscw, zero, others);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, bigwin);
        if (nrank == 0)
            ok(bad == 0 && st->gets_asked == asked, "%s: rank 0 closed %d epochs",
               pscw ? "pscw" : "fence", ROUNDS);
        else
            ok(bad == 0 && st->gets_asked > asked,
               "%s: %d epochs of gets asked of rank 0 (%llu, %llu taken back) read the epoch's "
               "values (%d wrong)", pscw ? "pscw" : "fence", ROUNDS,
               (unsigned long long)(st->gets_asked - asked),
               (unsigned long long)(st->gets_taken_back - taken), bad);
    }
    MPI_Win_free(&bigwin);
    free(got);
    free(big);
    MPI_Group_free(&others);
    MPI_Group_free(&zero);
    MPI_Group_free(&all);
    MPI_Win_free(&win);
    free(base);
    MPI_Win_free(&wordwin);
    MPI_Comm_free(&node);
    return test_done();
}
