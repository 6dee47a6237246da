/* t_shm_counters.c - synchronization counters in the owner's shared state block (shm_state.h,
 * shm_counter.h, counter_bump.c): node peers bump there (a store into a lane of their own, or an
 * atomic on the counter's word) when every operation of theirs to the owner is known complete
 * there, and by BUMP packet otherwise.
 *
 *   1. the atomic path is taken: each rank bumps its right neighbour's counter with sync-ops
 *      requests that cover nothing (the window's statistics count atomic bumps under the default
 *      transport, packets under FLEXRMA_TRANSPORT=am), and the neighbour consumes them;
 *   2. data before the bump: a lock epoch puts a block (its unlock's acknowledgement makes the
 *      peer settled), then an atomic bump; the owner, once the bump is consumed, finds the block;
 *   3. MPIX_INFO_SYNC_REMOTE_COMPLETE: after the wait the bump is in the counter (the owner reads
 *      it after a message sent once the wait returned);
 *   4. a freed counter whose slot was reallocated receives a stale bump: it does not count (the
 *      word's generation check, also tried directly on the mapped word), a remote-complete
 *      request reports the error, and the new counter works;
 *   5. counters beyond the shared table keep the packet path, and freed slots with a word are
 *      handed out before those beyond;
 *   6. stress: ranks 1..n-1 bump rank 0's counter in rounds, with bumps after a lock epoch and
 *      MPIX_Put_signal (atomics once the put is copied directly, a packet behind a put that
 *      travels), while rank 0 consumes SK bumps per
 *      producer and round with a persistent request, and arms an extra request behind it that
 *      it cancels (or that completed, taking one of the surplus: producers make SK + 1 per
 *      round); in the end consumed plus what is left equals what was bumped: no bump lost or
 *      counted twice;
 *   7. the owner gives bumps consumed from its word back there only in batches
 *      (FR_SHM_TAKE_BATCH): with the owner's private tally just below a batch and three bumps in
 *      the word (as a bumper without a lane leaves them), consuming two gives the whole batch
 *      back: the word holds its generation and one bump; the neighbour's bumps (in its lane)
 *      are counted and consumed on top;
 *   8. lanes (shm_counter.h): counters in low slots take node peers' bumps in a lane of each
 *      bumper, written with a plain store: the left neighbour's zero-byte MPI_Put_notify calls
 *      all land in its lane (the statistics, and the lane word itself, which carries the
 *      counter's generation), and MPI_Win_notify_get_value counts them; counters made anew in
 *      the same slots (the next generation) start from zero; a synchronization counter in such
 *      a slot takes its bumps in lanes too, and consuming them leaves none.
 * Linked with the internal library (tests/unit/CMakeLists.txt): it reads fr_win's statistics,
 * peers' mapped state blocks and fr_opt. */
#include "sync_common.h"
#include "sync/counters.h"
#include "sync/notify.h"
#include "node/shm_counter.h"
#include "transport/shm_state.h"
#include "transport/transport.h"
#include "syncobj/syncobj.h"

static fr_transport_mode mode; /* FLEXRMA_TRANSPORT of this run */
static int shm;                /* node peers reach each other's state blocks */

typedef struct tally {
    uint64_t shm, pkt, gone;
} tally;

static tally stats_of(MPI_Win win)
{
    fr_win *w = fr_win_lookup(win);
    return (tally){w->st.bumps_shm, w->st.bumps_pkt, w->st.bumps_gone};
}

static fr_sync_wire wire_of(MPI_Sync s)
{
    fr_sync_wire h;
    memcpy(&h, &s, sizeof h);
    return h;
}

/* ---- 1 ---- */
#define K 40
#define PATH_CHECKS 5
static void test_path(iwin *iw)
{
    fr_win *w = fr_win_lookup(iw->win);
    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(iw->win, &mine, &all);
    int lazy = fr_chan_lazy(w); /* mapped by the first bump (FLEXRMA_SHM_LAZY=1) */
    ok(!w->peers[right()].state == (!shm || lazy), "right neighbour's state block mapped here: %s",
       !shm ? "no (am)" : lazy ? "not yet (first-use attachment)" : "yes (shm)");
    MPI_Barrier(MPI_COMM_WORLD);
    tally t0 = stats_of(iw->win);
    KEEP_RC(rc, bumps(right(), all[right()], iw->win, K));
    tally t1 = stats_of(iw->win);
    is_int((long long)(t1.shm - t0.shm), shm ? K : 0, "bumps made with an atomic");
    is_int((long long)(t1.pkt - t0.pkt), shm ? 0 : K, "bumps sent as packets");
    KEEP_RC(rc, consume(mine, K, iw->win));
    is_int(sync_value(mine, iw->win), 0, "the left neighbour's %d bumps consumed, none more", K);
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    shared_counter_free(iw->win, &mine, all);
}

/* ---- 2 and 3 ---- */
#define ROUNDS 30
#define BLOCK 16
#define DATA_CHECKS 5
static void test_data_then_bump(iwin *iw)
{
    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(iw->win, &mine, &all);
    int src[BLOCK], good = 1;
    tally t0 = stats_of(iw->win);
    for (int r = 0; r < ROUNDS; r++) {
        /* round r's block in my slot r of the right neighbour's window */
        fill_pat(src, BLOCK, rank, r);
        KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, iw->win));
        KEEP_RC(rc, MPI_Put(src, BLOCK, MPI_INT, right(), (MPI_Aint)r * BLOCK, BLOCK, MPI_INT,
                            iw->win));
        KEEP_RC(rc, MPI_Win_unlock(right(), iw->win));
        KEEP_RC(rc, bump(right(), all[right()], iw->win));
        /* and mine from the left: the bump is consumed, so its block is here */
        KEEP_RC(rc, consume(mine, 1, iw->win));
        good &= is_pat(iw->buf + (size_t)r * BLOCK, BLOCK, left(), r);
    }
    tally t1 = stats_of(iw->win);
    ok(good, "every round's block was in place once its bump was consumed");
    is_int((long long)(t1.shm - t0.shm), shm ? ROUNDS : 0,
           "after each unlock the bump was an atomic");

    /* 3: remote completion, then a message; the owner reads its counter after the message */
    MPI_Info info = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    KEEP_RC(rc, bump_info(right(), all[right()], iw->win, info));
    info_free(&info);
    int token = rank, got = -1;
    KEEP_RC(rc, MPI_Sendrecv(&token, 1, MPI_INT, right(), 7, &got, 1, MPI_INT, left(), 7,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    is_int(sync_value(mine, iw->win), 1,
           "a remote-complete bump is in the counter when its wait returned");
    KEEP_RC(rc, consume(mine, 1, iw->win));
    is_int(sync_value(mine, iw->win), 0, "consumed");
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    shared_counter_free(iw->win, &mine, all);
}

/* ---- 4 ---- */
#define STALE_CHECKS 9
static void test_stale(iwin *iw)
{
    fr_win *w = fr_win_lookup(iw->win);
    MPI_Sync old, *old_all, fresh = MPIX_SYNC_NULL;
    int rc = shared_counter_alloc(iw->win, &old, &old_all);
    MPI_Sync kept = old;
    /* Free it and allocate again: the slot is reused with the next generation. */
    KEEP_RC(rc, MPI_Win_Sync_free_objects(1, &old, iw->win));
    KEEP_RC(rc, MPI_Win_Sync_alloc_objects(1, &fresh, iw->win, MPI_INFO_NULL));
    fr_sync_wire a = wire_of(kept), b = wire_of(fresh);
    ok(a.slot == b.slot && a.gen != b.gen, "the freed slot %u is reused (generation %u, was %u)",
       b.slot, b.gen, a.gen);
    MPI_Sync *fresh_all = xmalloc((size_t)nprocs * sizeof *fresh_all);
    KEEP_RC(rc, share_counters(&fresh, 1, fresh_all));

    /* The stale handle of the right neighbour's freed counter. */
    MPI_Sync stale = old_all[right()];
    volatile AO_t *word = fr_shm_state_counter(w->peers[right()].state, wire_of(stale).slot);
    uint32_t guess = 0;
    if (shm)
        is_int(fr_shm_counter_bump(word, wire_of(stale).gen, &guess), FR_SHM_GONE,
               "the mapped word refuses the stale generation");
    else
        skip(1, "no shared state block under FLEXRMA_TRANSPORT=am");
    tally t0 = stats_of(iw->win);
    MPI_Info info = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    int src = bump_info(right(), stale, iw->win, info), cls = -1;
    info_free(&info);
    MPI_Error_class(src, &cls);
    is_int(cls, MPI_ERR_ARG, "a remote-complete bump of the freed counter fails (MPI_ERR_ARG)");
    is_int(bump(right(), stale, iw->win), MPI_SUCCESS,
           "a plain bump of the freed counter completes (the drop is reported on stderr)");
    tally t1 = stats_of(iw->win);
    is_int((long long)(t1.gone - t0.gone), shm ? 2 : 0, "dropped by the origin's atomic");
    is_int((long long)(t1.shm - t0.shm), 0, "no atomic bump counted");
    MPI_Barrier(MPI_COMM_WORLD); /* the stale bumps have been made (or, as packets, sent) */
    KEEP_RC(rc, bump(right(), fresh_all[right()], iw->win)); /* one real bump after them */
    KEEP_RC(rc, consume(fresh, 1, iw->win));
    is_int(sync_value(fresh, iw->win), 0,
           "the new counter in the reused slot got exactly the one bump meant for it");
    MPI_Barrier(MPI_COMM_WORLD); /* the right neighbour consumed its bump too */
    if (shm) {
        fr_sync_wire f = wire_of(fresh_all[right()]);
        volatile AO_t *fw = fr_shm_state_counter(w->peers[right()].state, f.slot);
        volatile AO_t *lane = fr_shm_state_lane(w->peers[right()].state, f.slot,
                                                w->peers[w->rank].member_id);
        /* The slot has lanes: the bump is in mine, under the new generation (consumed there, as
         * lanes are never reset); the stale ones went nowhere. */
        ok(fw && AO_load(fw) == fr_shm_word(f.gen, 0) && lane &&
               AO_load(lane) == fr_shm_word(f.gen, 1),
           "the right neighbour's word holds its new generation, my lane there the one bump");
    } else
        skip(1, "no shared state block under FLEXRMA_TRANSPORT=am");
    is_int(rc, MPI_SUCCESS, "every other call succeeded");
    shared_counter_free(iw->win, &fresh, fresh_all);
    free(old_all);
}

/* ---- 5 ---- */
#define BEYOND_CHECKS 4
static void test_beyond_table(iwin *iw)
{
    const int n = (int)FR_SHM_COUNTERS + 2;
    MPI_Sync *mine = xmalloc((size_t)n * sizeof *mine);
    MPI_Sync *theirs = xmalloc((size_t)nprocs * sizeof *theirs);
    int rc = MPI_Win_Sync_alloc_objects(n, mine, iw->win, MPI_INFO_NULL);
    ok(wire_of(mine[n - 1]).slot >= FR_SHM_COUNTERS, "the last of %d counters has slot %u", n,
       wire_of(mine[n - 1]).slot);
    KEEP_RC(rc, share_counters(&mine[n - 1], 1, theirs));
    tally t0 = stats_of(iw->win);
    KEEP_RC(rc, bumps(right(), theirs[right()], iw->win, 3));
    tally t1 = stats_of(iw->win);
    is_int((long long)(t1.pkt - t0.pkt), 3, "bumps of a counter beyond the table are packets");
    KEEP_RC(rc, consume(mine[n - 1], 3, iw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, MPI_Win_Sync_free_objects(n, mine, iw->win));
    MPI_Sync again = MPIX_SYNC_NULL;
    KEEP_RC(rc, MPI_Win_Sync_alloc_objects(1, &again, iw->win, MPI_INFO_NULL));
    ok(wire_of(again).slot < FR_SHM_COUNTERS,
       "after the free, a new counter gets a slot with a shared word again (%u)",
       wire_of(again).slot);
    KEEP_RC(rc, MPI_Win_Sync_free_objects(1, &again, iw->win));
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    free(mine);
    free(theirs);
}

/* ---- 6 ---- */
#define SR 200/* rounds */
#define SK 6  /* atomic bumps per producer and round (plus one packet) */
#define STRESS_CHECKS 4
static void test_stress(iwin *iw)
{
    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(iw->win, &mine, &all);
    const int producers = nprocs - 1;
    long long made = 0, consumed = 0, extra_done = 0;
    int src[BLOCK];
    tally t0 = stats_of(iw->win);
    if (rank == 0) {
        MPI_Request main_req, extra;
        KEEP_RC(rc, MPI_Win_sync_object_init(mine, producers * SK, iw->win, MPI_INFO_NULL,
                                             &main_req));
        KEEP_RC(rc, MPI_Win_sync_object_init(mine, 1, iw->win, MPI_INFO_NULL, &extra));
        for (int r = 0; r < SR; r++) {
            KEEP_RC(rc, MPI_Start(&main_req));
            KEEP_RC(rc, MPI_Start(&extra)); /* behind main_req: served after it */
            KEEP_RC(rc, MPI_Wait(&main_req, MPI_STATUS_IGNORE));
            consumed += producers * SK;
            MPI_Status st;
            KEEP_RC(rc, MPI_Cancel(&extra));
            KEEP_RC(rc, MPI_Wait(&extra, &st));
            int cancelled = 0;
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled) { /* the producers were ahead: it completed and took one */
                consumed++;
                extra_done++;
            }
        }
        MPI_Request_free(&main_req);
        MPI_Request_free(&extra);
    } else {
        MPI_Request sig;
        KEEP_RC(rc, MPI_Win_sync_ops_init(0, 0, all[0], iw->win, MPI_INFO_NULL, &sig));
        for (int r = 0; r < SR; r++) {
            /* a lock epoch, its bump an atomic (the unlock settled me); then atomic bumps; then
             * a put with a packet bump behind it, which leaves me unsettled until next round */
            fill_pat(src, BLOCK, rank, r);
            KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, iw->win));
            KEEP_RC(rc, MPI_Put(src, BLOCK, MPI_INT, 0, (MPI_Aint)rank * BLOCK, BLOCK, MPI_INT,
                                iw->win));
            KEEP_RC(rc, MPI_Win_unlock(0, iw->win));
            for (int k = 0; k < SK; k++) {
                KEEP_RC(rc, MPI_Start(&sig));
                KEEP_RC(rc, MPI_Wait(&sig, MPI_STATUS_IGNORE));
            }
            KEEP_RC(rc, MPIX_Put_signal(src, BLOCK, MPI_INT, 0,
                                        (MPI_Aint)(nprocs + rank) * BLOCK, BLOCK, MPI_INT, all[0],
                                        iw->win));
            made += SK + 1;
        }
        MPI_Request_free(&sig);
    }
    tally t1 = stats_of(iw->win);
    long long total = 0;
    KEEP_RC(rc, MPI_Allreduce(&made, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) {
        /* packet bumps may still be on their way: wait for the count, then it must be exact */
        is_int(await_value(mine, iw->win, total - consumed), total - consumed,
               "counter: bumped %lld, consumed %lld (the extra request completed %lld times): "
               "the rest is left, none lost or counted twice",
               total, consumed, extra_done);
        ok(extra_done <= SR, "the extra request took at most one bump per round");
    } else {
        long long atomic = (long long)(t1.shm - t0.shm), pkt = (long long)(t1.pkt - t0.pkt);
        is_int(atomic + pkt, made, "every bump made once (%lld atomic, %lld packets)", atomic,
               pkt);
        ok(shm ? atomic > 0 : atomic == 0,
           "atomics used under shm, packets only under am (%lld atomic, %lld packets)", atomic,
           pkt);
    }
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long long left = total - consumed;
        KEEP_RC(rc, consume(mine, (int)left, iw->win));
    }
    is_int(rank == 0 ? sync_value(mine, iw->win) : 0, 0, "the counter drained");
    shared_counter_free(iw->win, &mine, all);
}

/* ---- 7 ---- */
#define GIVE_BACK_CHECKS 5
static void test_give_back(iwin *iw)
{
    fr_win *w = fr_win_lookup(iw->win);
    MPI_Sync mine, *all;
    int rc = shared_counter_alloc(iw->win, &mine, &all);
    if (!shm) {
        skip(GIVE_BACK_CHECKS - 1, "no shared state block under FLEXRMA_TRANSPORT=am");
    } else {
        /* As if FR_SHM_TAKE_BATCH - 1 bumps had come into the word and been consumed, and 3 more
         * had come (nobody bumps yet: the barrier in shared_counter_alloc came before, the one
         * below after). */
        fr_counter *c = &w->counters->c[wire_of(mine).slot];
        AO_store(c->word, fr_shm_word(c->gen, FR_SHM_TAKE_BATCH - 1 + 3));
        c->taken = FR_SHM_TAKE_BATCH - 1;
        is_int(sync_value(mine, iw->win), 3, "three bumps in the word");
        KEEP_RC(rc, consume(mine, 2, iw->win)); /* crosses the batch: all given back */
        ok(AO_load(c->word) == fr_shm_word(c->gen, 1) && c->taken == 0,
           "the consumed batch was given back to the word (one bump left in it)");
        is_int(sync_value(mine, iw->win), 1, "the counter still holds the unconsumed bump");
        MPI_Barrier(MPI_COMM_WORLD); /* checked before the left neighbour bumps again */
        KEEP_RC(rc, bumps(right(), all[right()], iw->win, 2));
        KEEP_RC(rc, consume(mine, 3, iw->win));
        is_int(sync_value(mine, iw->win), 0, "and goes on counting");
    }
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    shared_counter_free(iw->win, &mine, all);
}

/* ---- 8 ---- */
#define LANE_BUMPS 25
#define LANES_CHECKS 8
static uint64_t lane_bumps(MPI_Win win) { return fr_win_lookup(win)->st.bumps_lane; }

/* n zero-byte notifications of each index below nidx to the right neighbour, in a lock_all
 * epoch. */
static int notify_right(MPI_Win win, int n, int nidx)
{
    int rc = MPI_Win_lock_all(0, win);
    for (int i = 0; i < n * nidx && rc == MPI_SUCCESS; i++)
        rc = MPI_Put_notify(NULL, 0, MPI_INT, right(), 0, 0, MPI_INT, i % nidx, win);
    int urc = MPI_Win_unlock_all(win);
    return rc ? rc : urc;
}

static MPI_Count notify_value(MPI_Win win)
{
    MPI_Count v = -1;
    MPI_Win_notify_get_value(win, 0, &v);
    return v;
}

static void test_lanes(iwin *iw)
{
    fr_win *w = fr_win_lookup(iw->win);
    int rc = MPI_Win_notify_set_num(iw->win, MPI_INFO_NULL, 2);
    uint64_t l0 = lane_bumps(iw->win);
    KEEP_RC(rc, notify_right(iw->win, LANE_BUMPS, 2));
    is_int((long long)(lane_bumps(iw->win) - l0), shm ? 2 * LANE_BUMPS : 0,
           "the notifications went into my lane at the right neighbour (%s)",
           shm ? "shm" : "none under am");
    uint64_t key = 0;
    KEEP_RC(rc, fr_notify_key(w, right(), 0, &key));
    volatile AO_t *lane = fr_shm_state_lane(w->peers[right()].state, fr_counter_key_slot(key),
                                            w->peers[w->rank].member_id);
    if (shm)
        ok(lane && AO_load(lane) == fr_shm_word(fr_counter_key_gen(key), LANE_BUMPS),
           "my lane there holds them all, with the counter's generation");
    else
        ok(!lane, "no lane under am");
    MPI_Barrier(MPI_COMM_WORLD); /* every notification is applied once its call returned */
    is_int(notify_value(iw->win), LANE_BUMPS, "MPI_Win_notify_get_value counts the lane's bumps");

    /* Made anew (in one of the same slots, whose lanes hold LANE_BUMPS: the next generation):
     * nothing carries over. */
    KEEP_RC(rc, MPI_Win_notify_set_num(iw->win, MPI_INFO_NULL, 1));
    is_int(notify_value(iw->win), 0, "a notification counter made anew starts from 0");
    MPI_Barrier(MPI_COMM_WORLD); /* read before the left neighbour notifies again */
    KEEP_RC(rc, notify_right(iw->win, 3, 1));
    MPI_Barrier(MPI_COMM_WORLD);
    is_int(notify_value(iw->win), 3, "and counts its own notifications");

    /* No notifications: a synchronization counter takes the slot. */
    uint32_t slot = w->notify->slot[0];
    KEEP_RC(rc, MPI_Win_notify_set_num(iw->win, MPI_INFO_NULL, 0));
    MPI_Sync mine, *all;
    KEEP_RC(rc, shared_counter_alloc(iw->win, &mine, &all));
    uint64_t l1 = lane_bumps(iw->win);
    tally t1 = stats_of(iw->win);
    KEEP_RC(rc, bumps(right(), all[right()], iw->win, 4));
    tally t2 = stats_of(iw->win);
    ok(wire_of(mine).slot == slot && slot < FR_SHM_LANE_SLOTS &&
           lane_bumps(iw->win) - l1 == (shm ? 4u : 0u) && t2.shm - t1.shm == (shm ? 4u : 0u),
       "a synchronization counter in a freed notification slot (%u) is bumped in lanes too",
       slot);
    KEEP_RC(rc, consume(mine, 4, iw->win));
    is_int(sync_value(mine, iw->win), 0, "its 4 bumps consumed, none more");
    is_int(rc, MPI_SUCCESS, "every call succeeded");
    shared_counter_free(iw->win, &mine, all);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    mode = fr_opt.transport;
    shm = mode != FR_TRANSPORT_AM;
    tap_plan(PATH_CHECKS + DATA_CHECKS + STALE_CHECKS + BEYOND_CHECKS + STRESS_CHECKS +
             GIVE_BACK_CHECKS + LANES_CHECKS);
    iwin iw;
    swin_create(&iw, (size_t)(ROUNDS > 2 * nprocs ? ROUNDS : 2 * nprocs) * BLOCK);
    test_path(&iw);  /* first: the lazy variant checks that nothing attached before */
    test_lanes(&iw); /* early: its counters get the low slots, which have lanes */
    test_data_then_bump(&iw);
    test_stale(&iw);
    test_beyond_table(&iw);
    test_stress(&iw);
    test_give_back(&iw);
    iwin_free(&iw);
    return test_done();
}
