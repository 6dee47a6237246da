/* syncobj.h - the proposal's synchronization counters as the application sees them (seed 004;
 * docs/specification.md section 6): MPI_Sync handles, sync-ops and sync-object requests.
 *
 * The counters themselves are the engine's (sync/counters.h: the owner's table, bumps by packet
 * or by atomic, the queue of armed requests). An MPI_Sync names one by the window's identity,
 * the owner's member identity (not its rank: ranks change with ext/dynwin), a slot and the
 * slot's generation, so a handle of a freed counter stops matching even when the slot is reused.
 * Sync-ops requests (sync_ops.c) bump a counter through the engine's BUMP packet, or, for an
 * owner on the node whose state block is mapped, with an atomic on its counter word
 * (counter_bump.h); sync-object requests (sync_object.c) wait in the counter's queue. */
#ifndef FR_SYNCOBJ_H
#define FR_SYNCOBJ_H

#include "flexrma.h"
#include "sync/counters.h"
#include "progress/request.h"
#include "win/win.h"

/* The bytes of an MPI_Sync. */
typedef struct fr_sync_wire {
    uint64_t win_uid;
    uint32_t owner;  /* member identity of the owner */
    uint32_t slot;
    uint32_t gen;    /* the slot's generation when the counter was allocated */
    uint32_t magic;  /* FR_SYNC_MAGIC: tells a counter from zeroed or stray bytes */
} fr_sync_wire;

#define FR_SYNC_MAGIC 0x53594e43u /* "SYNC" */

/* A counter resolved against a window. */
typedef struct fr_sync_ref {
    int owner;         /* window rank of the owner */
    uint64_t key;      /* slot and generation, as BUMP packets carry it */
    fr_counter *mine;  /* the counter itself when this process owns it, else NULL */
} fr_sync_ref;

/* Check s against w (null, foreign window, owner not a member; freed, when I am the owner). */
int fr_sync_resolve(fr_win *w, const MPI_Sync *s, fr_sync_ref *ref);

#endif
