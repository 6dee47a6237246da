/* syncobj.h - internals of the synchronization counters (seed 004; docs/specification.md §6).
 *
 * Counters live in a per-window table of the process that owns them (counter.c). An MPI_Sync
 * names one by the window's identity, the owner's member identity (not its rank: ranks change
 * with ext/dynwin), a slot and the slot's generation, so a handle of a freed counter stops
 * matching even when the slot is reused. Sync-ops requests (sync_ops.c) bump a counter through
 * the engine's BUMP packet; sync-object requests (sync_object.c) wait in the counter's queue. */
#ifndef FR_SYNCOBJ_H
#define FR_SYNCOBJ_H

#include "flexrma.h"
#include "counters.h"
#include "request.h"
#include "win.h"

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

typedef struct fr_counter {
    uint64_t value;                  /* bumps no completion has consumed */
    uint32_t gen;
    int live;
    struct sync_object *head, *tail; /* armed sync-object requests, in arming order */
} fr_counter;

struct fr_counters {
    fr_counter *c;
    size_t n, cap;
    uint32_t *free_slots;
    size_t nfree, cap_free;
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

/* Complete the armed requests at the head of c's queue that its bumps now satisfy. */
void fr_counter_serve(fr_counter *c);
/* Take so out of c's queue. */
void fr_counter_unqueue(fr_counter *c, sync_object *so);
/* The counter of mine with this key, or NULL. */
fr_counter *fr_counter_find(fr_win *w, uint64_t key);

#endif
