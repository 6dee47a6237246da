/* shm_lock.h - the passive-target lock of a window member, as a fair reader-writer ticket lock in
 * its shared state (direct.c), so that node peers take and release it with atomics and no help
 * from the target (Mellor-Crummey and Scott's ticket discipline, after seed 000 section 2).
 *
 * Every request draws a ticket (`next`, fetch-and-add). Requests enter in ticket order:
 *   shared     enters when read == its ticket, and lets the next ticket in (read + 1), so a run
 *              of shared requests holds the lock together;
 *   exclusive  enters when write == its ticket: every earlier holder has released.
 * Releasing adds one to write (shared), or one to read and to write (exclusive). A
 * queued exclusive request therefore blocks every later shared one (read stops at its ticket),
 * and nobody starves: seed 000's fairness rules. Each of read and write has one writer at a time
 * (the request whose turn it is, or the exclusive holder) except write, which an exclusive
 * holder's release and the next shared holder's release may move at once: every release adds,
 * none stores.
 *
 * Tickets are 64-bit counters: they never wrap in practice. The target process itself draws
 * tickets for origins that reach it by packets (sync_lock.c), so all lockers share one queue.
 *
 * Memory ordering: entering loads read/write with acquire, releasing stores them with release,
 * so whatever a holder wrote into the window (or read from it) happens before the next holder's
 * accesses. */
#ifndef FR_SHM_LOCK_H
#define FR_SHM_LOCK_H

#include <atomic_ops.h>

typedef struct fr_lockword {
    volatile AO_t next;  /* next ticket to draw */
    volatile AO_t read;  /* the ticket that may enter shared */
    volatile AO_t write; /* the ticket that may enter exclusive: releases so far */
    AO_t pad[5];         /* a cache line of its own */
} fr_lockword;

static inline AO_t fr_lockword_take(fr_lockword *l) { return AO_fetch_and_add1(&l->next); }

/* Try to enter with ticket t; 1 once entered (call again only while it returns 0). */
static inline int fr_lockword_enter(fr_lockword *l, AO_t t, int exclusive)
{
    if (exclusive) /* acquire: the previous holders' accesses come first */
        return AO_load_acquire(&l->write) == t;
    if (AO_load_acquire(&l->read) != t)
        return 0;
    AO_store_release(&l->read, t + 1); /* release: the next shared ticket may enter with me */
    return 1;
}

/* Take a shared ticket only if it enters at once (MPI_Win_lock_all's tries, sync_lock.c): 1 with
 * the ticket in *t, held and released like any shared one; 0 having drawn nothing. Fails when
 * an exclusive holds or anyone queued (read != next), or when another ticket is drawn meanwhile.
 * Correct because read == next == t means no ticket is outstanding: read moves only at the hands
 * of the ticket it names, so it stays t until ticket t is drawn, and a CAS of next from t to
 * t + 1 that wins draws it for us (next only grows, so it was t all along). */
static inline int fr_lockword_try_shared(fr_lockword *l, AO_t *t)
{
    AO_t n = AO_load(&l->next);
    if (AO_load_acquire(&l->read) != n) /* acquire: the last exclusive holder's accesses first */
        return 0;
    if (!AO_compare_and_swap_full(&l->next, n, n + 1))
        return 0;
    AO_store_release(&l->read, n + 1); /* as fr_lockword_enter: later shared tickets may enter */
    *t = n;
    return 1;
}

static inline void fr_lockword_release(fr_lockword *l, AO_t t, int exclusive)
{
    (void)t;
    if (exclusive) {
        /* read and write both equal my ticket while I hold the lock; each moves one on, by an
         * atomic add rather than a store: once read has moved, the next (shared) ticket may
         * enter and even release (adding one to write) before my own add to write lands, and
         * a store of t + 1 there would erase its release (release: my accesses come before the
         * next holder's). */
        AO_fetch_and_add1_release(&l->read);
        AO_fetch_and_add1_release(&l->write);
    } else {
        AO_fetch_and_add1_release(&l->write); /* release: my accesses before a later writer's */
    }
}

#endif
