/* syncobj.h - internals of the synchronization counters (seed 004; docs/specification.md §6).
 *
 * Counters live in a per-window table of the process that owns them (counter.c). An MPI_Sync
 * names one by the window's identity, the owner's member identity (not its rank: ranks change
 * with ext/dynwin), a slot and the slot's generation, so a handle of a freed counter stops
 * matching even when the slot is reused. Sync-ops requests (sync_ops.c) bump a counter through
 * the engine's BUMP packet, or, for an owner on the node whose state block is mapped, with an
 * atomic on its counter word (shm_counter.h); sync-object requests (sync_object.c) wait in the
 * counter's queue. A counter's bumps are therefore in two places (counter_shm.c): the word in
 * the owner's shared state block, and a private count for the bumps that came as packets. */
#ifndef FR_SYNCOBJ_H
#define FR_SYNCOBJ_H

#include "flexrma.h"
#include "sync/counters.h"
#include "progress/request.h"
#include "win/win.h"

#include <atomic_ops.h>

/* The bytes of an MPI_Sync. */
typedef struct fr_sync_wire {
    uint64_t win_uid;
    uint32_t owner;  /* member identity of the owner */
    uint32_t slot;
    uint32_t gen;    /* the slot's generation when the counter was allocated */
    uint32_t magic;  /* FR_SYNC_MAGIC: tells a counter from zeroed or stray bytes */
} fr_sync_wire;

#define FR_SYNC_MAGIC 0x53594e43u /* "SYNC" */

struct sync_object;

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
    size_t watch_at;                 /* 1 + its index in the watch list, 0 if not watched */
    struct sync_object *head, *tail; /* armed sync-object requests, in arming order */
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

/* A counter resolved against a window. */
typedef struct fr_sync_ref {
    int owner;         /* window rank of the owner */
    uint64_t key;      /* slot and generation, as BUMP packets carry it */
    fr_counter *mine;  /* the counter itself when this process owns it, else NULL */
} fr_sync_ref;

/* Check s against w (null, foreign window, owner not a member; freed, when I am the owner). */
int fr_sync_resolve(fr_win *w, const MPI_Sync *s, fr_sync_ref *ref);

/* A sync-object request waiting on a counter. */
typedef struct sync_object {
    fr_req req;
    uint64_t key;
    int count;
    int armed;
    struct sync_object *next;
} sync_object;

/* Complete the armed requests at the head of c's queue that its bumps now satisfy; c is watched
 * afterwards exactly while it has a word and armed requests. */
void fr_counter_serve(fr_win *w, fr_counter *c);
/* Take so out of c's queue. */
void fr_counter_unqueue(fr_counter *c, sync_object *so);
/* The counter of mine with this key, or NULL. */
fr_counter *fr_counter_find(fr_win *w, uint64_t key);

/* ---- a counter's bumps in both places (counter_shm.c) ---- */
/* Has slot a word in a shared state block (when the window has one)? */
int fr_counter_slot_shared(size_t slot);
/* A new counter (generation c->gen) in slot: its word, if my block has one for the slot. */
void fr_counter_open(fr_win *w, fr_counter *c, uint32_t slot);
/* The counter is freed: bumps that arrive in its word from now on fail (FR_SHM_GONE). */
void fr_counter_close(fr_win *w, fr_counter *c);
/* Unconsumed bumps (acquire: their data is visible to the caller). */
uint64_t fr_counter_value(const fr_counter *c);
/* Consume n <= fr_counter_value(c) bumps. */
void fr_counter_take(fr_counter *c, uint64_t n);
/* Put c on the watch list, or take it off, as its queue and word say. */
void fr_counter_watch(fr_win *w, fr_counter *c);

#endif
