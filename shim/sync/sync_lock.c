/* sync_lock.c - MPI_Win_lock/MPI_Win_unlock and the target's fair lock queue.
 *
 * Origin (seed 001 section 4.3: all work at unlock). MPI_Win_lock only records the lock; RMA calls
 * queue (those to myself run at the call, under my lock on myself: epoch.c). MPI_Win_unlock
 * sends ONE batch: LOCK, the operations (gets last), UNLOCK carrying how many operations I have
 * sent that target in all, then waits for UNLOCK_ACK. A single-operation
 * epoch is therefore one message each way, as in seed 001's piggyback optimisation, and so is an
 * epoch of many small operations. Lock on oneself blocks in MPI_Win_lock until granted, because
 * the program may then access its window with loads and stores.
 *
 * Target (seed 000 section 2, fairness). A request is granted at once when the window is not
 * locked, or when it is shared, the window is held shared and nobody is queued; otherwise it is
 * queued, and the packets behind it in its batch are held until the grant (am_recv.c). When the last holder
 * releases, the head of the queue is granted: an exclusive request alone, or every shared
 * request up to the next exclusive one. A queued exclusive request thus blocks later shared
 * ones, and nobody starves.
 *
 * A holder releases when its UNLOCK has arrived and every operation it announced has completed
 * here; then the target sends UNLOCK_ACK. The ack is needed even after a get: a large put's data
 * travels in its own message and may complete after the get's data was sent.
 *
 * MPI_MODE_NOCHECK (no conflicting lock can exist): no LOCK packet is sent, the operations run at
 * once, and UNLOCK only waits for their completion.
 *
 * MPI_Win_lock_all instead holds a shared lock on every member before it returns, taken all or
 * nothing by tries that never queue (below): taking them one at a time, when first needed,
 * deadlocks against a process that holds several exclusive locks (it holds A and waits for B,
 * the lock_all holds B and waits for A).
 *
 * Several lock epochs at once take their locks in MPI_Win_lock order (below, "the order of my
 * simultaneous locks"): before a lock is taken, those requested before it are taken and granted;
 * a LOCK then asks the target to say when it grants it (LOCK_GRANTED).
 *
 * Shared lock word (shm_lock.h). A target with a shared state page (direct.h) keeps its lock as a
 * ticket lock there instead of the queue above: node peers that map the page take and release
 * it themselves with atomics, the target draws tickets for the origins that send LOCK packets
 * (granting them from the progress engine when their turn comes), and for itself. Such an
 * origin's MPI_Win_unlock waits for its turn, copies its puts and gets straight into the window
 * (direct.c), sends whatever must travel (accumulates) with a request for acknowledgement, and
 * releases once that is acknowledged: no LOCK, UNLOCK or UNLOCK_ACK, and no work for the target
 * when everything is copied.
 */
#include "transport/direct.h"
#include "progress/entry.h"
#include "core/next.h"
#include "node/shm_lock.h"
#include "progress/progress.h"
#include "sync.h"

#include <stdlib.h>
#include <string.h>

/* ---- target side ---- */

static void queue_push(fr_win *w, int rank, int type)
{
    if (w->lk_len == w->lk_cap) {
        size_t cap = w->lk_cap ? w->lk_cap * 2 : 8;
        fr_lockreq *q = fr_xcalloc(cap, sizeof *q);
        for (size_t i = 0; i < w->lk_len; i++)
            q[i] = w->lk_queue[(w->lk_head + i) % w->lk_cap];
        free(w->lk_queue);
        w->lk_queue = q;
        w->lk_cap = cap;
        w->lk_head = 0;
    }
    w->lk_queue[(w->lk_head + w->lk_len) % w->lk_cap] = (fr_lockreq){rank, type};
    w->lk_len++;
}

static fr_lockreq *queue_head(fr_win *w) { return w->lk_len ? &w->lk_queue[w->lk_head] : NULL; }

static void queue_pop(fr_win *w)
{
    w->lk_head = (w->lk_head + 1) % w->lk_cap;
    w->lk_len--;
}

static void tell_granted(fr_win *w, int src)
{
    fr_pkt pkt = {.type = FR_PKT_LOCK_GRANTED};
    w->peers[src].lk_tell = 0;
    w->peers[src].tp->notify(w, src, &pkt);
}

/* src holds the lock now (either mode): run what it sent behind its request. A LOCK_GRANTED
 * leaves before the replay, whose UNLOCK_ACK would close the epoch it speaks of. */
static void granted(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    p->lk = FR_LK_GRANTED;
    if (p->lk_tell)
        tell_granted(w, src);
    if (p->held)
        fr_am_replay_held(w, src);
}

/* Queue mode: count the holder. */
static void grant(fr_win *w, int src, int type)
{
    w->lk_mode = type;
    w->lk_holders++;
    granted(w, src);
}

static int exclusive(int type) { return type == MPI_LOCK_EXCLUSIVE; }

int fr_lock_poll(fr_win *w)
{
    if (!w->lk_waiting)
        return 0;
    fr_lockword *lw = fr_direct_lockword(w, w->rank);
    for (int r = 0; r < w->size && w->lk_waiting > 0; r++) {
        fr_peer *p = &w->peers[r];
        if (p->lk == FR_LK_WAITING && fr_lockword_enter(lw, p->lk_ticket, exclusive(p->lk_type))) {
            w->lk_waiting--;
            granted(w, r);
        }
    }
    return 0;
}

int fr_target_lock(fr_win *w, int src, int type, int tell)
{
    fr_peer *p = &w->peers[src];
    fr_lockword *lw = fr_direct_lockword(w, w->rank);
    p->lk_tell = tell;
    if (lw) {
        p->lk_ticket = fr_lockword_take(lw);
        p->lk_type = type;
        if (fr_lockword_enter(lw, p->lk_ticket, exclusive(type))) {
            granted(w, src);
            return 1;
        }
        p->lk = FR_LK_WAITING;
        w->lk_waiting++;
        return 0;
    }
    int free_now = w->lk_holders == 0;
    int share = type == MPI_LOCK_SHARED && w->lk_mode == MPI_LOCK_SHARED && w->lk_len == 0;
    if (free_now || share) {
        grant(w, src, type);
        return 1;
    }
    p->lk = FR_LK_WAITING;
    queue_push(w, src, type);
    return 0;
}

/* A shared lock for src (MPI_Win_lock_all) only if it enters at once: nobody holds the lock
 * exclusively and nobody is queued, so a try never overtakes a waiting request. 1 if granted,
 * held and released like one of fr_target_lock. */
static int try_shared(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    fr_lockword *lw = fr_direct_lockword(w, w->rank);
    p->lk_tell = 0;
    if (lw) {
        AO_t t;
        if (!fr_lockword_try_shared(lw, &t))
            return 0;
        p->lk_ticket = t;
        p->lk_type = MPI_LOCK_SHARED;
        granted(w, src);
        return 1;
    }
    /* (no holder means no queue: the last release grants the head) */
    if (w->lk_holders > 0 && (w->lk_mode != MPI_LOCK_SHARED || w->lk_len > 0))
        return 0;
    grant(w, src, MPI_LOCK_SHARED);
    return 1;
}

void fr_target_lock_try(fr_win *w, int src)
{
    fr_pkt answer = {.type = FR_PKT_LOCK_TRIED, .arg = (uint64_t)try_shared(w, src)};
    w->peers[src].tp->notify(w, src, &answer);
}

/* Its LOCK came before, and it is still in that lock epoch here (batches keep their order). */
void fr_target_lock_ask(fr_win *w, int src)
{
    if (w->peers[src].lk == FR_LK_GRANTED)
        tell_granted(w, src);
    else
        w->peers[src].lk_tell = 1;
}

/* The last holder left: grant the head, and with it every shared request up to an exclusive. */
static void grant_next(fr_win *w)
{
    fr_lockreq *head = queue_head(w);
    if (!head)
        return;
    if (head->type == MPI_LOCK_EXCLUSIVE) {
        int rank = head->rank;
        queue_pop(w);
        grant(w, rank, MPI_LOCK_EXCLUSIVE);
        return;
    }
    while ((head = queue_head(w)) && head->type == MPI_LOCK_SHARED) {
        int rank = head->rank;
        queue_pop(w);
        grant(w, rank, MPI_LOCK_SHARED);
    }
}

/* src, holding my lock, leaves it. */
static void release(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    fr_lockword *lw = fr_direct_lockword(w, w->rank);
    p->lk = FR_LK_IDLE;
    if (lw) {
        fr_lockword_release(lw, p->lk_ticket, exclusive(p->lk_type));
    } else if (--w->lk_holders == 0) {
        w->lk_mode = 0;
        grant_next(w);
    }
}

static void try_release(fr_win *w, int src)
{
    fr_peer *p = &w->peers[src];
    if (!p->unlock_seen || p->ops_done < p->unlock_upto)
        return;
    p->unlock_seen = 0;
    if (!p->unlock_nocheck)
        release(w, src);
    fr_pkt ack = {.type = FR_PKT_UNLOCK_ACK};
    p->tp->notify(w, src, &ack);
}

void fr_target_unlock(fr_win *w, int src, uint64_t upto, int nocheck)
{
    fr_peer *p = &w->peers[src];
    p->unlock_seen = 1;
    p->unlock_upto = upto;
    p->unlock_nocheck = nocheck;
    try_release(w, src);
}

/* Operations completing may be what an UNLOCK is waiting for. */
void fr_lock_op_done(fr_win *w, int src)
{
    if (w->peers[src].unlock_seen)
        try_release(w, src);
}

/* ---- origin side ---- */

void fr_origin_unlock_acked(fr_win *w, int src) { w->peers[src].unlock_acked = 1; }

void fr_origin_lock_granted(fr_win *w, int src) { w->peers[src].lock_granted = 1; }

void fr_origin_lock_tried(fr_win *w, int src, int granted)
{
    w->peers[src].lock_try = granted ? FR_TRY_GRANTED : FR_TRY_REFUSED;
    w->lk_tries--;
}

/* My lock epoch on target takes the lock in target's shared lock word myself. */
static fr_lockword *own_lockword(fr_win *w, int target)
{
    fr_peer *p = &w->peers[target];
    if (!p->lock_held || p->lock_nocheck || target == w->rank)
        return NULL;
    return fr_direct_lockword(w, target);
}

/* My turn in target's lock word: draw the ticket on the first call; 1 once I hold the lock. */
static int lockword_turn(fr_win *w, int target, fr_lockword *lw)
{
    fr_peer *p = &w->peers[target];
    if (p->dlock == FR_DLOCK_NONE) {
        p->dlock_ticket = fr_lockword_take(lw);
        p->dlock = FR_DLOCK_WAITING;
        w->st.sync_atomics++;
    }
    if (p->dlock == FR_DLOCK_WAITING &&
        fr_lockword_enter(lw, p->dlock_ticket, exclusive(p->lock_held)))
        p->dlock = FR_DLOCK_HELD;
    return p->dlock == FR_DLOCK_HELD;
}

/* ---- the order of my simultaneous locks ----
 * A lock is taken when first needed (above), but the locks of several lock epochs at once are
 * taken in MPI_Win_lock order, as an MPI that locks inside MPI_Win_lock would: otherwise two
 * processes that lock the same targets in the same order, and each hold one the other needs next,
 * deadlock. w->lk_order lists the members locked with MPI_Win_lock whose lock is not known taken
 * yet; before taking one, every lock listed before it is taken and granted. The lock on myself
 * is taken in MPI_Win_lock, after those before it (never listed); MPI_MODE_NOCHECK takes none
 * and lock_all takes all of its own in MPI_Win_lock_all (not listed). A lock taken by packet is
 * granted at the target, which says so (LOCK_GRANTED) only when asked: when later locks wait for
 * it. One lock at a time never waits here and sends nothing more. */

static void order_push(fr_win *w, int rank)
{
    if (w->lk_norder == w->lk_order_cap) {
        w->lk_order_cap = w->lk_order_cap ? 2 * w->lk_order_cap : 8;
        w->lk_order = fr_xrealloc(w->lk_order, (size_t)w->lk_order_cap * sizeof(int));
    }
    w->lk_order[w->lk_norder++] = rank;
    w->peers[rank].lock_ordered = 1;
}

static void order_remove(fr_win *w, int rank)
{
    int i = 0;
    while (i < w->lk_norder && w->lk_order[i] != rank)
        i++;
    if (i == w->lk_norder)
        return;
    memmove(&w->lk_order[i], &w->lk_order[i + 1], (size_t)(w->lk_norder - i - 1) * sizeof(int));
    w->lk_norder--;
    w->peers[rank].lock_ordered = 0;
}

/* One step towards holding my lock on rank, listed before the one I need: my turn in its lock
 * word, or a LOCK asking to be told of the grant (a LOCK_ASK if the LOCK left before without).
 * 1 once it is granted. */
static int order_take(fr_win *w, int rank)
{
    fr_peer *p = &w->peers[rank];
    fr_lockword *lw = own_lockword(w, rank);
    if (lw)
        return lockword_turn(w, rank, lw);
    if (!p->lock_sent) {
        fr_pkt lock = {.type = FR_PKT_LOCK, .flags = FR_PKTF_TELL,
                       .lock_type = (uint8_t)p->lock_held};
        p->tp->notify(w, rank, &lock);
        p->lock_sent = p->lock_asked = 1;
    } else if (!p->lock_asked) {
        fr_pkt ask = {.type = FR_PKT_LOCK_ASK};
        p->tp->notify(w, rank, &ask);
        p->lock_asked = 1;
    }
    return p->lock_granted;
}

/* Is every lock listed before rank's (all of them when rank is not listed) taken? Moves the
 * first one not taken along; never waits. */
static int order_ready(fr_win *w, int rank)
{
    while (w->lk_norder > 0 && w->lk_order[0] != rank) {
        int first = w->lk_order[0];
        if (!order_take(w, first))
            return 0;
        order_remove(w, first);
    }
    return 1;
}

int fr_lock_may_issue(fr_win *w, int target)
{
    fr_peer *p = &w->peers[target];
    if (p->lock_ordered && w->lk_order[0] != target && !order_ready(w, target))
        return 0;
    fr_lockword *lw = own_lockword(w, target);
    if (!lw)
        return 1;
    if (!lockword_turn(w, target, lw))
        return 0;
    if (p->lock_ordered)
        order_remove(w, target);
    return 1;
}

int fr_lock_take_early(fr_win *w, int target)
{
    fr_peer *p = &w->peers[target];
    if (p->dlock == FR_DLOCK_HELD)
        return 1;
    if (!own_lockword(w, target) || (p->lock_ordered && w->lk_order[0] != target))
        return 0;
    return fr_lock_may_issue(w, target);
}

const fr_pkt *fr_lock_lead(fr_win *w, int target, fr_pkt *buf)
{
    fr_peer *p = &w->peers[target];
    /* The lock on myself was taken in MPI_Win_lock; NOCHECK takes none; a shared lock word is
     * taken by the origin itself (fr_lock_may_issue). */
    if (!p->lock_held || p->lock_nocheck || target == w->rank || p->lock_sent ||
        own_lockword(w, target))
        return NULL;
    /* Listed with later locks behind it: they will wait for its grant, so ask to be told. */
    p->lock_asked = p->lock_ordered && w->lk_norder > 1;
    *buf = (fr_pkt){.type = FR_PKT_LOCK, .flags = p->lock_asked ? FR_PKTF_TELL : 0,
                    .lock_type = (uint8_t)p->lock_held};
    p->lock_sent = 1;
    return buf;
}

typedef struct peer_wait {
    fr_win *w;
    int rank;
} peer_wait;

static int self_granted(void *arg)
{
    peer_wait *pw = arg;
    return pw->w->peers[pw->rank].lk == FR_LK_GRANTED;
}

static int unlock_done(void *arg)
{
    peer_wait *pw = arg;
    fr_peer *p = &pw->w->peers[pw->rank];
    return p->unlock_acked && p->pending == 0;
}

static int may_issue(void *arg)
{
    peer_wait *pw = arg;
    return fr_lock_may_issue(pw->w, pw->rank);
}

static int earlier_taken(void *arg)
{
    peer_wait *pw = arg;
    return order_ready(pw->w, pw->rank);
}

static int acked(void *arg)
{
    peer_wait *pw = arg;
    fr_peer *p = &pw->w->peers[pw->rank];
    return p->remote_upto >= p->ops_sent && p->pending == 0;
}

/* Closing my lock epoch on rank is two steps, so that MPI_Win_unlock_all sends to every target
 * before it waits for any. unlock_begin sends what closes the epoch: for a lock taken in the
 * target's shared lock word, my operations (copied or sent, after waiting for my turn) and a
 * request for acknowledgement; otherwise one batch LOCK, operations, UNLOCK. unlock_end waits
 * for the acknowledgement (UNLOCK_ACK) and releases. */
static int unlock_begin(fr_win *w, int rank)
{
    fr_peer *p = &w->peers[rank];
    int rc;
    peer_wait pw = {w, rank};
    fr_wait_until(may_issue, &pw); /* the locks before it taken, and my turn in its lock word */
    if (own_lockword(w, rank)) {
        rc = p->q.n ? p->tp->flush(w, rank, &p->q, NULL, NULL) : MPI_SUCCESS;
        if (p->remote_upto < p->ops_sent)
            fr_ack_ask(w, rank, p->ops_sent);
        return rc;
    }
    fr_pkt lockpkt;
    fr_pkt unlockpkt = {.type = FR_PKT_UNLOCK, .flags = p->lock_nocheck ? FR_PKTF_NOCHECK : 0};
    p->unlock_acked = 0;
    const fr_pkt *lead = fr_lock_lead(w, rank, &lockpkt);
    /* A later lock waits for the UNLOCK_ACK instead of a LOCK_GRANTED, and no LOCK_ASK may
     * follow the UNLOCK (order_take): the lock may be released by the time it arrives. */
    if (lead)
        lockpkt.flags &= (uint8_t)~FR_PKTF_TELL;
    p->lock_asked = 1;
    return p->tp->flush(w, rank, &p->q, lead, &unlockpkt);
}

static void unlock_end(fr_win *w, int rank)
{
    fr_peer *p = &w->peers[rank];
    peer_wait pw = {w, rank};
    fr_lockword *lw = own_lockword(w, rank);
    if (lw) {
        fr_wait_until(acked, &pw);
        fr_lockword_release(lw, p->dlock_ticket, exclusive(p->lock_held));
        p->dlock = FR_DLOCK_NONE;
        w->st.sync_atomics++;
    } else {
        fr_wait_until(unlock_done, &pw);
        /* The UNLOCK counted every operation sent to rank, and nothing was sent since. */
        if (p->remote_upto < p->ops_sent)
            p->remote_upto = p->ops_sent;
    }
    p->lock_held = 0;
    p->lock_nocheck = 0;
    p->lock_sent = 0;
    p->lock_asked = 0;
    p->lock_granted = 0; /* a LOCK_GRANTED comes before the UNLOCK_ACK */
    if (p->lock_ordered)
        order_remove(w, rank);
    w->nlocks--;
}

/* Take the lock on myself, after the locks I requested before it (MPI_Win_lock order). Blocks:
 * the program may load and store its window once it holds it. */
static void take_self(fr_win *w, int type)
{
    peer_wait pw = {w, w->rank};
    fr_wait_until(earlier_taken, &pw);
    if (!fr_target_lock(w, w->rank, type, 0))
        fr_wait_until(self_granted, &pw);
}

int fr_lock_self_open(fr_win *w)
{
    fr_peer *me = &w->peers[w->rank];
    if (!me->lock_held)
        return 0;
    /* MPI_Win_lock and MPI_Win_lock_all take it already; whoever defers that one day finds
     * it taken here, at the first operation that needs it (MPI lets that block). */
    if (!me->lock_nocheck && me->lk != FR_LK_GRANTED)
        take_self(w, me->lock_held);
    return 1;
}

static int lock(fr_win *w, int type, int rank, int assert)
{
    int rc;
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return fr_errorf(FR_ERR_LOCKTYPE, "lock type %d is neither MPI_LOCK_SHARED nor "
                                          "MPI_LOCK_EXCLUSIVE", type);
    if (assert & ~MPI_MODE_NOCHECK)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_lock does not know", assert);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = fr_win_check_rank(w, rank)))
        return rc;
    fr_peer *p = &w->peers[rank];
    if (w->lock_all)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock inside an MPI_Win_lock_all epoch");
    if (p->lock_held)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "rank %d is already locked by this process", rank);
    if (w->start_active)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock inside a post/start/complete/wait "
                                              "access epoch");
    if (w->fence == FR_FENCE_ARMED && w->fence_ops > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock inside a fence epoch");
    p->lock_held = type;
    p->lock_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    w->nlocks++;
    w->fence = FR_FENCE_OFF;
    if (p->lock_nocheck)
        return MPI_SUCCESS;
    if (rank != w->rank) {
        order_push(w, rank); /* taken when first needed, after those before it */
        return MPI_SUCCESS;
    }
    take_self(w, type);
    return MPI_SUCCESS;
}

static int unlock(fr_win *w, int rank)
{
    int rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = fr_win_check_rank(w, rank)))
        return rc;
    fr_peer *p = &w->peers[rank];
    if (w->lock_all)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_unlock(%d) inside an MPI_Win_lock_all "
                                              "epoch: close it with MPI_Win_unlock_all", rank);
    if (!p->lock_held)
        return fr_errorf(FR_ERR_EPOCH_NOT_OPEN, "MPI_Win_unlock(%d) without a matching "
                                                "MPI_Win_lock", rank);
    rc = unlock_begin(w, rank);
    unlock_end(w, rank);
    w->st.locks++;
    return rc;
}

/* ---- MPI_Win_lock_all / MPI_Win_unlock_all ----
 * A shared lock on every member, myself included, taken inside MPI_Win_lock_all all or nothing.
 * An attempt tries each lock without queueing: mine and those in the lock words of node peers I
 * map with atomics (fr_lockword_try_shared), the others with one LOCK_TRY each, all sent before
 * any answer is awaited (one round trip). If any is refused it releases those it got, backs off
 * and tries again. So a lock_all never holds a lock while it waits for another, and no pattern of
 * other locks deadlocks with it; being greedy, it may wait as long as exclusive epochs keep
 * overlapping (specification, section 5). The epoch's operations then need no lock request, and
 * MPI_Win_unlock_all releases every member, as MPICH's does. MPI_MODE_NOCHECK takes no lock. */

/* The pause after a refused attempt doubles from 1 us to 1 ms; fr_wait_until spends it serving
 * progress, spinning, then yielding, then sleeping, so holders on the same cores get to run. */
#define TRY_PAUSE_MIN_NS 1000u
#define TRY_PAUSE_MAX_NS 1000000u

static int tries_answered(void *arg) { return ((fr_win *)arg)->lk_tries == 0; }

static int tries_released(void *arg)
{
    fr_win *w = arg;
    for (int r = 0; r < w->size; r++)
        if (w->peers[r].lock_try == FR_TRY_GRANTED && !w->peers[r].unlock_acked)
            return 0;
    return 1;
}

static int time_passed(void *arg) { return fr_now_ns() >= *(uint64_t *)arg; }

/* A member whose lock I take by packet: not me, and no lock word of its I map. */
static int by_packet(fr_win *w, int r) { return r != w->rank && !fr_direct_lockword(w, r); }

/* Give back the locks a refused attempt got. A lock taken by packet is released like a lock
 * epoch without operations (UNLOCK, then its ack), so the next LOCK_TRY finds it released. */
static void lock_all_release(fr_win *w)
{
    if (w->peers[w->rank].lk == FR_LK_GRANTED)
        release(w, w->rank);
    for (int r = 0; r < w->size; r++) {
        fr_peer *p = &w->peers[r];
        if (p->dlock == FR_DLOCK_HELD) {
            fr_lockword_release(fr_direct_lockword(w, r), p->dlock_ticket, 0);
            p->dlock = FR_DLOCK_NONE;
            w->st.sync_atomics++;
        } else if (p->lock_try == FR_TRY_GRANTED) {
            fr_pkt unlockpkt = {.type = FR_PKT_UNLOCK};
            p->unlock_acked = 0;
            p->tp->flush(w, r, &p->q, NULL, &unlockpkt); /* (no operations are queued) */
        }
    }
    fr_wait_until(tries_released, w);
    for (int r = 0; r < w->size; r++) {
        fr_peer *p = &w->peers[r];
        if (p->lock_try == FR_TRY_GRANTED && p->remote_upto < p->ops_sent)
            p->remote_upto = p->ops_sent; /* the UNLOCK counted every operation sent */
        p->lock_try = FR_TRY_NONE;
    }
}

/* One attempt at every member's shared lock: 1 holding them all, 0 holding none. */
static int lock_all_attempt(fr_win *w)
{
    int got = try_shared(w, w->rank);
    /* Node peers' lock words next: a refusal there costs no round trip. */
    for (int r = 0; got && r < w->size; r++) {
        fr_lockword *lw = r == w->rank ? NULL : fr_direct_lockword(w, r);
        AO_t t;
        if (!lw)
            continue;
        w->st.sync_atomics++;
        if (!fr_lockword_try_shared(lw, &t)) {
            got = 0;
            break;
        }
        w->peers[r].dlock_ticket = t;
        w->peers[r].dlock = FR_DLOCK_HELD;
    }
    if (got) {
        for (int r = 0; r < w->size; r++)
            if (by_packet(w, r)) {
                fr_pkt try = {.type = FR_PKT_LOCK_TRY};
                w->peers[r].lock_try = FR_TRY_SENT;
                w->lk_tries++;
                w->peers[r].tp->notify(w, r, &try);
            }
        fr_wait_until(tries_answered, w);
        for (int r = 0; r < w->size; r++)
            if (w->peers[r].lock_try == FR_TRY_REFUSED)
                got = 0;
    }
    if (!got) {
        lock_all_release(w);
        return 0;
    }
    for (int r = 0; r < w->size; r++)
        if (w->peers[r].lock_try == FR_TRY_GRANTED) {
            w->peers[r].lock_try = FR_TRY_NONE;
            w->peers[r].lock_sent = 1; /* held: no LOCK leads its batches (fr_lock_lead) */
        }
    return 1;
}

static int lock_all(fr_win *w, int assert)
{
    if (assert & ~MPI_MODE_NOCHECK)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_lock_all does not know",
                         assert);
    if (w->lock_all)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock_all inside an MPI_Win_lock_all epoch");
    if (w->nlocks > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock_all while this process holds a lock "
                                              "epoch from MPI_Win_lock");
    if (w->start_active)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock_all inside a post/start/complete/wait "
                                              "access epoch");
    if (w->fence == FR_FENCE_ARMED && w->fence_ops > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_lock_all inside a fence epoch");
    int nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    for (int r = 0; r < w->size; r++) {
        w->peers[r].lock_held = MPI_LOCK_SHARED;
        w->peers[r].lock_nocheck = nocheck;
    }
    w->nlocks = w->size;
    w->lock_all = 1;
    w->fence = FR_FENCE_OFF;
    uint64_t pause = TRY_PAUSE_MIN_NS;
    while (!nocheck && !lock_all_attempt(w)) {
        uint64_t until = fr_now_ns() + pause;
        fr_wait_until(time_passed, &until);
        pause = pause < TRY_PAUSE_MAX_NS ? 2 * pause : TRY_PAUSE_MAX_NS;
    }
    return MPI_SUCCESS;
}

/* MPI_MODE_NOCHECK took no lock: only members my operations reached need closing (operations
 * queued or in flight, or not yet known complete), so locking all of 1000 members and talking
 * to two pays for two. */
static int reached(fr_win *w, int rank)
{
    fr_peer *p = &w->peers[rank];
    return p->q.n > 0 || fr_peer_unsent(p) || p->pending > 0 || p->remote_upto < p->ops_sent;
}

static int unlock_all(fr_win *w)
{
    if (!w->lock_all)
        return fr_errorf(FR_ERR_EPOCH_NOT_OPEN, "MPI_Win_unlock_all without a matching "
                                                "MPI_Win_lock_all");
    int rc = MPI_SUCCESS;
    int nocheck = w->peers[w->rank].lock_nocheck;
    char few[64]; /* most windows: no allocation in a call OSU times in a loop */
    char *busy = w->size <= (int)sizeof few ? few : fr_xcalloc((size_t)w->size, 1);
    for (int r = 0; r < w->size; r++)
        if ((busy[r] = (char)(!nocheck || reached(w, r)))) {
            int brc = unlock_begin(w, r);
            if (rc == MPI_SUCCESS)
                rc = brc;
        }
    for (int r = 0; r < w->size; r++) {
        if (busy[r]) {
            unlock_end(w, r);
        } else {
            w->peers[r].lock_held = 0;
            w->peers[r].lock_nocheck = 0;
            w->nlocks--;
        }
    }
    if (busy != few)
        free(busy);
    w->lock_all = 0;
    w->st.locks++;
    return rc;
}

FR_API int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_lock)(lock_type, rank, assert, win));
    FR_WIN_EXIT("MPI_Win_lock", lock(w, lock_type, rank, assert));
}
FR_PMPI(Win_lock);

FR_API int MPI_Win_unlock(int rank, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_unlock)(rank, win));
    FR_WIN_EXIT("MPI_Win_unlock", unlock(w, rank));
}
FR_PMPI(Win_unlock);

FR_API int MPI_Win_lock_all(int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_lock_all)(assert, win));
    FR_WIN_EXIT("MPI_Win_lock_all", lock_all(w, assert));
}
FR_PMPI(Win_lock_all);

FR_API int MPI_Win_unlock_all(MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_unlock_all)(win));
    FR_WIN_EXIT("MPI_Win_unlock_all", unlock_all(w));
}
FR_PMPI(Win_unlock_all);
