/* notify.h - notification counters: the counters a notified operation (MPI_Put_notify,
 * MPI_Get_notify, MPIX_Put_notify...) increments at its target once its data is visible there
 * (docs/specification.md, section 13).
 *
 * Each member of a window owns `num` of them, indexed 0..num-1; each is one of the engine's
 * counters (counters.h), so a notification is a bump: an atomic in the owner's shared word for a
 * settled node peer, else a BUMP packet behind the operation (transport/counter_bump.h). What
 * this file adds is the index: MPI_Win_notify_set_num (collective) makes the counters and tells
 * every member the keys of everyone's, so an origin checks an index before anything moves, and
 * a value the owner may read and set without consuming bumps (value = bumps - base). */
#ifndef FR_NOTIFY_H
#define FR_NOTIFY_H

#include "core/idle.h"
#include "win/win.h"

typedef struct fr_notify {
    int num;           /* my notification counters */
    uint32_t *slot;    /* their slots in my counter table (counters.h) */
    uint64_t *base;    /* value = bumps - base (mod 2^64) */
    int *peer_num;     /* per window rank: its number of counters */
    size_t *peer_at;   /* ... where its keys start in key[] */
    uint64_t *key;     /* every member's counter keys, rank by rank */
    /* The owner's polls (get_value, test_notify) that found nothing new, as one wait's idle
     * polls: which counter and what value the last poll saw. */
    fr_idle poll;
    int poll_idx;
    MPI_Count poll_value;
} fr_notify;
/* Polls that gave the core away (tests read it). */
extern unsigned fr_notify_poll_yields;

/* MPI_Win_notify_set_num: collective over w's members; num >= 0 each (may differ). Every
 * member's old counters go (after every notification in flight reached them) and num new ones
 * hold 0. An error anywhere fails the call everywhere and changes nothing. */
int fr_notify_set_num(fr_win *w, int num);
/* My number of notification counters on w (0: none). */
int fr_notify_count(const fr_win *w);
/* The key of target's counter idx, or an FR_ERR_NOTIFICATION code. */
int fr_notify_key(fr_win *w, int target, int idx, uint64_t *key);
/* The same without raising anything: 1 and *key when target (any int) is a member with a
 * counter idx, else 0. */
int fr_notify_key_known(const fr_win *w, int target, int idx, uint64_t *key);
/* My counter idx: read (after a progress pass, so that a target that only polls sees it rise),
 * set, and take one (*flag: there was one to take; MPIX_Win_test_notify). */
int fr_notify_get(fr_win *w, int idx, MPI_Count *value);
int fr_notify_set(fr_win *w, int idx, MPI_Count value);
int fr_notify_take(fr_win *w, int idx, int *flag);
/* Wait, serving progress, until my counter idx holds at least one, and take it. */
int fr_notify_wait(fr_win *w, int idx);
/* The window goes (with its counters). */
void fr_notify_free(fr_win *w);
/* Membership changes (ext/dynwin): before the process's counters are dropped, keep my values;
 * after the rebuild (collective over the new w->comm), my counters again (same values) and
 * every member's keys. */
void fr_notify_keep(fr_win *w);
int fr_notify_rebind(fr_win *w);

#endif
