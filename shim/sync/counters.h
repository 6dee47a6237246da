/* counters.h - the synchronization counters this process owns (seed 004; docs/specification.md
 * section 6), and the requests armed on them.
 *
 * The engine owns the counters: their table per window (counter.c), the bumps that arrive in
 * two places (counter_shm.c: node peers add theirs to the counter's word in this process's
 * shared state block, everyone else sends BUMP packets, sync_counter.c), and the queue of
 * sync-object requests waiting on each, served in arming order. ext/syncobj builds the
 * proposal's API on them: the MPI_Sync handles, the sync-ops and sync-object request classes,
 * MPIX_Win_sync_read. A counter is named by its key (counter_bump.h). */
#ifndef FR_COUNTERS_H
#define FR_COUNTERS_H

#include "flexrma.h"
#include "progress/request.h"
#include "transport/counter_bump.h"
#include "win/win.h"

#include <atomic_ops.h>

/* A request armed on a counter (a sync-object request, ext/syncobj/sync_object.c): it
 * completes, consuming `count` bumps, once it heads the counter's queue and the bumps are there. */
typedef struct fr_counter_waiter {
    fr_req req;
    uint64_t key;
    int count;
    int armed;
    struct fr_counter_waiter *next;
} fr_counter_waiter;

/* Freed slots, reused last-freed first. */
typedef struct fr_slot_stack {
    uint32_t *slot;
    size_t n, cap;
} fr_slot_stack;

typedef struct fr_counter {
    uint64_t value;                  /* bumps that came as packets, not consumed yet */
    volatile AO_t *word;             /* its word in my shared state block, or NULL: node peers
                                        add their bumps there (shm_counter.h) */
    uint32_t taken;                  /* bumps in *word I consumed and not yet subtracted there
                                        (fr_counter_take, FR_SHM_TAKE_BATCH) */
    uint32_t gen;                    /* never 0 once allocated (0 marks a free word) */
    int live;
    volatile AO_t *lanes;            /* its row of lanes in my shared state block, or NULL:
                                        node peers bump there without atomics (shm_counter.h) */
    volatile AO_t *lane_mask;        /* ... and which of them members wrote */
    uint64_t lane_base;              /* what its lanes held when it opened, plus the bumps
                                        consumed from them: its lanes count sum - lane_base */
    size_t watch_at;                 /* 1 + its index in the watch list, 0 if not watched */
    fr_counter_waiter *head, *tail;  /* armed requests, in arming order */
} fr_counter;

struct fr_counters {
    fr_counter *c;
    size_t n, cap;
    fr_slot_stack free_near;         /* freed slots with a word in my shared state block */
    fr_slot_stack free_far;          /* ... and beyond its table (bumped by packets only) */
    uint32_t *watch;                 /* slots with a word and armed requests: the progress
                                        engine polls their words (counter_shm.c) */
    size_t nwatch, cap_watch;
};

/* ---- the table (counter.c) ---- */
/* MPI_Handle_sync, the datatype of a counter's name, between MPI_Init and MPI_Finalize. */
int fr_counters_init(void);
void fr_counters_finalize(void);
/* A new counter of mine in w, in *slot (a slot with a shared word while there is one). */
fr_counter *fr_counter_new(fr_win *w, uint32_t *slot);
/* Free my counter in slot: bumps that arrive from now on are refused. */
void fr_counter_delete(fr_win *w, uint32_t slot);
/* The counter of mine with this key, or NULL. */
fr_counter *fr_counter_find(fr_win *w, uint64_t key);
/* Add one bump to my counter `key` of w (a BUMP packet); an error code (after fr_errorf) if no
 * such counter. */
int fr_counter_bump(fr_win *w, uint64_t key);
/* The unconsumed bumps of c as a read reports them: what its armed requests leave. */
uint64_t fr_counter_read_value(fr_win *w, fr_counter *c);
/* The same for my counter `key` (a COUNTER_READ packet); an error code if no such counter. */
int fr_counter_read(fr_win *w, uint64_t key, uint64_t *value);
/* w is being freed: release its counters. */
void fr_counters_free(fr_win *w);

/* ---- the requests armed on a counter (counter.c) ---- */
/* Queue so behind c's armed requests and serve the queue. */
void fr_counter_arm(fr_win *w, fr_counter *c, fr_counter_waiter *so);
/* Complete the armed requests at the head of c's queue that its bumps now satisfy; c is watched
 * afterwards exactly while it has a word and armed requests. */
void fr_counter_serve(fr_win *w, fr_counter *c);
/* Take so out of c's queue. */
void fr_counter_unqueue(fr_counter *c, fr_counter_waiter *so);

/* ---- a counter's bumps in both places (counter_shm.c) ---- */
/* Has slot a word in a shared state block (when the window has one)? */
int fr_counter_slot_shared(size_t slot);
/* A new counter (generation c->gen) in slot: its word, if my block has one for the slot, and
 * its lanes, if the slot has them. */
void fr_counter_open(fr_win *w, fr_counter *c, uint32_t slot);
/* The counter is freed: bumps that arrive in its word from now on fail (FR_SHM_GONE). */
void fr_counter_close(fr_win *w, fr_counter *c);
/* Unconsumed bumps (acquire: their data is visible to the caller). */
uint64_t fr_counter_value(const fr_counter *c);
/* Consume n <= fr_counter_value(c) bumps. */
void fr_counter_take(fr_counter *c, uint64_t n);
/* Put c on the watch list, or take it off, as its queue and word say. */
void fr_counter_watch(fr_win *w, fr_counter *c);
/* Progress (a poller, progress.h): serve the armed requests whose counters node peers bumped in
 * my shared state block; returns the number of counters served. */
int fr_counters_poll(fr_win *w);
/* My shared state block for w exists now (made when node peers joined a window over myself
 * alone, ext/dynwin, or with the window's channel): give my live counters that have none their
 * words, so that peers' atomic bumps reach them. */
void fr_counters_state_made(fr_win *w);

#endif
