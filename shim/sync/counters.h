/* counters.h - what the engine needs from the counters of ext/syncobj.
 *
 * The engine carries counter packets (BUMP, COUNTER_READ) and orders them after the operations
 * they follow (sync_counter.c), or bumps them directly in a node peer's shared state block
 * (counter_bump.c); the counters themselves, the MPI_Sync handles and the requests that wait on
 * counters live in ext/syncobj. A counter is named on the wire by a 64-bit key: its slot in the
 * owner's table in the upper 32 bits, the slot's generation in the lower 32 (the slot indexes the
 * owner's shared counter words, whose generation a direct bump checks). */
#ifndef FR_COUNTERS_H
#define FR_COUNTERS_H

#include "win/win.h"

static inline uint32_t fr_counter_key_slot(uint64_t key) { return (uint32_t)(key >> 32); }
static inline uint32_t fr_counter_key_gen(uint64_t key) { return (uint32_t)key; }

/* ---- the origin: a direct bump or a packet (counter_bump.c) ---- */
typedef enum fr_bump_way {
    FR_BUMP_APPLIED, /* added to the owner's shared counter word: nothing to send */
    FR_BUMP_GONE,    /* the owner freed the counter: nothing added (reported on stderr) */
    FR_BUMP_PACKET   /* send a BUMP packet: not settled, no shared word, or the word is full */
} fr_bump_way;
/* Is every operation I issued to p known complete there (nothing in flight either)? */
int fr_peer_settled(const fr_peer *p);
/* Could a bump of target's counter `key` be an atomic now: its word is mapped here and target
 * is settled? Issuing operations never makes it so (counter_bump.c): when 0, send the bump in
 * the operations' batch; when 1, issue them first and try fr_bump_direct. */
int fr_bump_may_go_direct(fr_win *w, int target, uint64_t key);
/* Bump target's counter `key` with an atomic if it has a word here and target is settled. */
fr_bump_way fr_bump_direct(fr_win *w, int target, uint64_t key);
/* The error of a request whose atomic bump found the counter freed (FR_BUMP_GONE). */
int fr_bump_gone_error(int target);

/* Add one bump to my counter `key` of w; an error code (after fr_errorf) if no such counter. */
int fr_counter_bump(fr_win *w, uint64_t key);
/* The unconsumed bumps of my counter `key`. */
int fr_counter_read(fr_win *w, uint64_t key, uint64_t *value);
/* Progress: serve the armed sync-object requests whose counters node peers bumped in my shared
 * state block; returns the number of counters served. */
int fr_counters_poll(fr_win *w);
/* My shared state block for w was just made (a window over myself alone has none until node
 * peers join, ext/dynwin): give my live counters their words, so that peers' atomic bumps reach
 * them. */
void fr_counters_state_made(fr_win *w);
/* w is being freed: release its counters. */
void fr_counters_free(fr_win *w);

/* MPI_Handle_sync and friends, between MPI_Init and MPI_Finalize. */
int fr_syncobj_init(void);
void fr_syncobj_finalize(void);

#endif
