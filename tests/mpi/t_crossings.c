/* t_crossings.c - one epoch of each synchronization kind costs the messages the table in
 * docs/architecture.md ("Network crossings per epoch") gives, and no more, between two
 * processes that reach each other by messages (run with FLEXRMA_TRANSPORT=am, and across hosts in
 * scripts/test's cluster stage).
 *
 * Two ranks: rank 0 is the origin, rank 1 the target. For each kind, EPOCHS epochs with one
 * 8-byte operation each; the messages both ranks sent meanwhile (every one flexrma sends:
 * batches, data, replies; fr_isend_sent) are summed and divided by EPOCHS. A message more than
 * the table's is a regression even where it travels beside another one (a get's data beside the
 * unlock's acknowledgement): on a network each costs both ends a send and a receive. The
 * barriers between the kinds are the MPI library's own messages, not counted. Linked with the
 * internal library: it reads fr_isend_sent and the window's transports. */
#include "common.h"
#include "flexrma.h"
#include "progress/isend.h"
#include "transport/transport.h"
#include "win/win.h"

#define EPOCHS 20

static MPI_Win win;
static int64_t *base;  /* the window: one 8-byte slot */
static int64_t value = 1, fetched;
static MPI_Group peer; /* the other rank */


/* Is rank 1 reached by messages from rank 0, and rank 0 from rank 1? */
static int by_messages(void)
{
    const fr_win *w = fr_win_lookup(win);
    int mine = w->peers[1 - rank].tp == &fr_tp_am, all;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static void put(void) { MPI_Put(&value, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win); }

/* ---- the epochs: each called on every rank, EPOCHS times ---- */

static void fence(void)
{
    if (rank == 0)
        put();
    MPI_Win_fence(0, win);
}

static void pscw(void)
{
    if (rank == 0) {
        MPI_Win_start(peer, 0, win);
        put();
        MPI_Win_complete(win);
    } else {
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
    }
}

static void lock_epoch(int type)
{
    if (rank != 0)
        return;
    MPI_Win_lock(type, 1, 0, win);
    put();
    MPI_Win_unlock(1, win);
}
static void lock_exclusive(void) { lock_epoch(MPI_LOCK_EXCLUSIVE); }
static void lock_shared(void) { lock_epoch(MPI_LOCK_SHARED); }

static void lock_get(void)
{
    if (rank != 0)
        return;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get(&fetched, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
    MPI_Win_unlock(1, win);
}

static void lock_all_epoch(int assert)
{
    if (rank != 0)
        return;
    MPI_Win_lock_all(assert, win);
    put();
    MPI_Win_unlock_all(win);
}
static void lock_all(void) { lock_all_epoch(0); }
static void lock_all_nocheck(void) { lock_all_epoch(MPI_MODE_NOCHECK); }

/* Inside a lock_all held over all the epochs (opened and closed outside the count). */
static void flush(void)
{
    if (rank != 0)
        return;
    put();
    MPI_Win_flush(1, win);
}

static void fetch_and_op(void)
{
    if (rank != 0)
        return;
    MPI_Fetch_and_op(&value, &fetched, MPI_INT64_T, 1, 0, MPI_SUM, win);
    MPI_Win_flush(1, win);
}

static void put_notify(void)
{
    if (rank != 0)
        return;
    MPI_Put_notify(&value, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, 0, win);
    MPI_Win_flush(1, win);
}

/* Counters: rank 0 puts under a sync-ops request on rank 1's counter; rank 1 waits on its
 * counter for the bump. Made once by counters_begin. */
static MPI_Sync counter[2];
static MPI_Request ops, arrived;

static void counter_exchange(void)
{
    if (rank == 0) {
        MPI_Start(&ops);
        put();
        MPI_Wait(&ops, MPI_STATUS_IGNORE);
    } else {
        MPI_Start(&arrived);
        MPI_Wait(&arrived, MPI_STATUS_IGNORE);
    }
}

static void put_signal(void)
{
    if (rank == 0) {
        MPIX_Put_signal(&value, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, counter[1], win);
    } else {
        MPI_Start(&arrived);
        MPI_Wait(&arrived, MPI_STATUS_IGNORE);
    }
}

static void counters_begin(void)
{
    MPI_Win_Sync_alloc_objects(1, &counter[rank], win, MPI_INFO_NULL);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, counter, 1, MPI_Handle_sync,
                  MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Win_sync_ops_init(1, MPI_MODE_WIN_PUT, counter[1], win, MPI_INFO_NULL, &ops);
    else
        MPI_Win_sync_object_init(counter[1], 1, win, MPI_INFO_NULL, &arrived);
}

static void counters_end(void)
{
    MPI_Request_free(rank == 0 ? &ops : &arrived);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody bumps a counter any more */
    MPI_Win_Sync_free_objects(1, &counter[rank], win);
}

/* Messages sent so far; the progress agent counts too, under the engine lock. */
static uint64_t sent_now(void)
{
    fr_engine_lock();
    uint64_t n = fr_isend_sent;
    fr_engine_unlock();
    return n;
}

/* EPOCHS epochs of one kind: the messages both ranks sent, per epoch, against the table's
 * (crossings: how many of them follow one another, for the test's name). */
static void count(const char *what, void (*epoch)(void), int messages, int crossings)
{
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t before = sent_now();
    for (int i = 0; i < EPOCHS; i++)
        epoch();
    MPI_Barrier(MPI_COMM_WORLD); /* the last epoch's answers are in */
    long long mine = (long long)(sent_now() - before), sum;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* At most: with the progress agent an epoch now and then costs a message less (lock_all:
     * 3.9 an epoch in one run; not examined further). More is the regression. */
    ok(sum <= (long long)messages * EPOCHS, "%s: %.2f messages an epoch (at most %d, %d in a row)",
       what, (double)sum / EPOCHS, messages, crossings);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    test_max_ranks(2);
    tap_plan(14);
    MPI_Alloc_mem(sizeof *base, MPI_INFO_NULL, &base);
    *base = 0;
    MPI_Win_create(base, sizeof *base, sizeof *base, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_notify_set_num(win, MPI_INFO_NULL, 1);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Group_free(&world);
    if (!by_messages()) { /* node peers copy directly and use lock words: other counts */
        if (rank == 0)
            diag("the ranks are node peers: run with FLEXRMA_TRANSPORT=am, or one on each host");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Win_fence(0, win); /* opens the first fence epoch */
    /* a batch each way, side by side */
    count("fence, put, fence", fence, 2, 1);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    count("post/start, put, complete/wait", pscw, 1, 1);
    count("lock exclusive, put, unlock", lock_exclusive, 2, 2);
    count("lock shared, put, unlock", lock_shared, 2, 2);
    /* the data comes back beside the acknowledgement */
    count("lock shared, get, unlock", lock_get, 3, 2);
    /* lock_all takes every lock first (sync_lock.c says why): a round trip more */
    count("lock_all, put, unlock_all", lock_all, 4, 4);
    count("lock_all MPI_MODE_NOCHECK, put, unlock_all", lock_all_nocheck, 2, 2);
    if (rank == 0)
        MPI_Win_lock_all(0, win);
    /* the acknowledgement request rides in the operations' batch */
    count("put, flush (in lock_all)", flush, 2, 2);
    /* the old value stands for the acknowledgement: none is asked for (am_send.c) */
    count("MPI_Fetch_and_op, flush (in lock_all)", fetch_and_op, 2, 2);
    /* the put and its notification leave at once, the flush's request after them */
    count("MPI_Put_notify, flush (in lock_all)", put_notify, 3, 2);
    if (rank == 0)
        MPI_Win_unlock_all(win);
    counters_begin();
    count("counter: put under a sync-ops request, the target's wait", counter_exchange, 1, 1);
    count("MPIX_Put_signal, the target's wait", put_signal, 1, 1);
    counters_end();

    /* Every epoch moved its data: rank 1's slot holds the sum of every put and add (each 1). */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        int64_t now = *base;
        MPI_Win_unlock(1, win);
        is_int(now, 1, "the last put left its value (the fetch-and-ops added to it before)");
        MPI_Count notes = 0;
        MPI_Win_notify_get_value(win, 0, &notes);
        is_int(notes, EPOCHS, "every MPI_Put_notify notified");
    } else {
        ok(1, "(rank 1 checks the window)");
        ok(1, "(rank 1 checks the notifications)");
    }
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    MPI_Group_free(&peer);
    return test_done();
}
