/* idle.h - how a wait that found nothing to do spends its time: spin, yield the core only when
 * what it waits for may need this very core (more ranks than cores, or other threads in MPI), and
 * sleep once the wait is long, so more ranks than cores, or other work on the node, still leave
 * it fast. Every wait uses it (fr_wait_until, the request and point-to-point hooks, the
 * accumulate stripes' lock), whatever it polls. */
#ifndef FR_IDLE_H
#define FR_IDLE_H

#include "fr.h"

/* Between polls that found nothing. fr_idle holds one wait's run of idle polls; every wait
 * (fr_wait_until() in progress.h, the request and point-to-point hooks) spins FLEXRMA_SPIN_POLLS
 * idle polls, then, where yields help, at least FR_SPIN_MIN_NS more (none on an oversubscribed
 * node, but for `app` waits) before its first yield; elsewhere it spins until it sleeps (idle.c). */
typedef struct fr_idle {
    unsigned polls;   /* idle polls in a row */
    uint64_t since;   /* when the FLEXRMA_SPIN_POLLS-th of them was, in ns */
    uint64_t idle_ns; /* how long ago that was, as of the last fr_idle_yield_due() */
    unsigned turns;   /* a hooked wait's turns (progress/pt2pt_hooks.c: when it passes) */
    int app;          /* it waits for the application's own messages alone: keeps the time
                         floor even on an oversubscribed node (idle.c says why) */
} fr_idle;
/* Does this node run more ranks than it has cores (the launcher's local rank count against the
 * cores this process may use)? */
int fr_node_oversubscribed(void);
/* At MPI_Init, once fr_engine_locking is set: whether waits yield, and after how long (idle.c). */
void fr_idle_setup(void);
/* The monotonic clock, in ns. */
uint64_t fr_now_ns(void);
/* A poll found something: spin afresh. */
static inline void fr_idle_reset(fr_idle *i) { i->polls = 0; }
/* A poll found nothing: 1 once the wait has spun enough that it should yield now. */
int fr_idle_yield_due(fr_idle *i);
/* Give the core away, once due: yield, or sleep briefly once the wait has idled for a
 * millisecond (idle.c says why). Engine lock not held. */
void fr_idle_give_way(fr_idle *i);
/* A poll found nothing, engine lock not held: spin on, or give the core away when due. */
void fr_backoff(fr_idle *i);
/* After a poll that handled `events`, engine lock not held: spin afresh if it found something,
 * else back off. */
void fr_idle_after(fr_idle *i, int events);

#endif
