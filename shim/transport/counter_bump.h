/* counter_bump.h - the origin's side of a counter bump: into the owner's shared state block (my
 * lane there, or an atomic on its counter word) when it is settled, a BUMP packet behind the
 * operations it follows otherwise (counter_bump.c).
 *
 * A counter is named on the wire by a 64-bit key: its slot in the owner's table in the upper 32
 * bits, the slot's generation in the lower 32 (the slot indexes the owner's shared counter
 * words, whose generation a direct bump checks). The counters themselves, owned by one member
 * each, are sync/counters.h's. */
#ifndef FR_COUNTER_BUMP_H
#define FR_COUNTER_BUMP_H

#include "win/win.h"

static inline uint64_t fr_counter_key(uint32_t slot, uint32_t gen) { return (uint64_t)slot << 32 | gen; }
static inline uint32_t fr_counter_key_slot(uint64_t key) { return (uint32_t)(key >> 32); }
static inline uint32_t fr_counter_key_gen(uint64_t key) { return (uint32_t)key; }

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

#endif
