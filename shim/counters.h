/* counters.h - what the engine needs from the counters of ext/syncobj.
 *
 * The engine carries counter packets (BUMP, COUNTER_READ) and orders them after the operations
 * they follow (sync_counter.c); the counters themselves, the MPI_Sync handles and the requests
 * that wait on counters live in ext/syncobj. A counter is named on the wire by a 64-bit key
 * (slot and generation), which only its owner interprets. */
#ifndef FR_COUNTERS_H
#define FR_COUNTERS_H

#include "win.h"

/* Add one bump to my counter `key` of w; an error code (after fr_errorf) if no such counter. */
int fr_counter_bump(fr_win *w, uint64_t key);
/* The unconsumed bumps of my counter `key`. */
int fr_counter_read(fr_win *w, uint64_t key, uint64_t *value);
/* w is being freed: release its counters. */
void fr_counters_free(fr_win *w);

/* MPI_Handle_sync and friends, between MPI_Init and MPI_Finalize. */
int fr_syncobj_init(void);
void fr_syncobj_finalize(void);

#endif
