/* transport.h - how operations reach a target, chosen per target in one place
 * (fr_transport_select), and the target-side protocol entry points every transport drives.
 *
 * A transport moves the queued operations of one target plus the synchronization packets that
 * open and close the epoch. The protocols themselves (fence counting, PSCW, the fair lock queue)
 * live in the sync_*.c files and are the same for every transport: a transport that receives a
 * COMPLETE calls fr_target_complete(), whatever carried it.
 *
 * Transports today: "self" (the target is this process: direct copies), "am" (active messages
 * over PMPI point-to-point, works between any two processes) and "shm" (the same batches through
 * a shared-memory ring to a node peer, tp_shm.c). am and shm differ only in how a finished batch
 * travels (`deliver`); both build it in am_send.c. Single-copy access to a node peer's window
 * memory (segments, cross-memory attach) plugs in here too.
 */
#ifndef FR_TRANSPORT_H
#define FR_TRANSPORT_H

#include "packet.h"
#include "win/win.h"

typedef struct fr_transport {
    const char *name;
    /* Issue every operation of queue q (one of target's, which it empties), preceded by `lead`
     * and followed by `trail` when they are not NULL. The trail (COMPLETE, UNLOCK, FENCE_DONE,
     * BUMP) gets in `arg` the number of my operations to target that travel, this batch's
     * included: the count the target must have completed before it acts on the trail
     * (operations copied straight into its window, direct.h, are complete already and not
     * counted). Returns without waiting for completion. */
    int (*flush)(fr_win *w, int target, fr_opq *q, const fr_pkt *lead, fr_pkt *trail);
    /* Send one synchronization packet that carries no data (UNLOCK_ACK). */
    int (*notify)(fr_win *w, int target, const fr_pkt *pkt);
    /* Batch transports: carry one batch (malloc'ed) to target. Never waits; batches to one
     * target arrive in the order they were delivered (the protocol needs per-origin FIFO).
     * Returns 1 when it keeps buf (to free it once sent), 0 when buf is already free for the
     * caller's next batch (copied into a ring, or an eager send that completed). NULL for self. */
    int (*deliver)(fr_win *w, int target, unsigned char *buf, size_t len);
} fr_transport;

extern const fr_transport fr_tp_self;
extern const fr_transport fr_tp_am;
extern const fr_transport fr_tp_shm;

/* Pick the transport of every member of w (called at window creation, after fr_chan_create):
 * self, shm for a node peer reachable through a ring, am otherwise. */
void fr_transport_select(fr_win *w);

/* ---- batch building for the batch transports (am_send.c): flush and notify of am and shm ---- */
int fr_batch_flush(fr_win *w, int target, fr_opq *q, const fr_pkt *lead, fr_pkt *trail);
int fr_batch_notify(fr_win *w, int target, const fr_pkt *pkt);
/* An operation of a counter epoch, whose data travels inside the packet, packed into the head of
 * the next batch to target at once instead of queued: the sync-ops request that closes the epoch
 * then only appends its BUMP. Returns 1 when packed (*rc its result), 0 when it must be queued
 * (a get, a large transfer, or a target whose transport has no batches). */
int fr_batch_pack_now(fr_win *w, int target, const fr_op *op, int *rc);

/* ---- the shared-memory channel (tp_shm.c) ---- */
/* Collective over w->comm unless FLEXRMA_TRANSPORT=am: find the node peers, make this process's
 * incoming rings and attach to its outgoing ones in the peers' segments; peers[r].chan is set for
 * every node peer a ring reaches. Fails (FR_ERR_SHM) only with FLEXRMA_TRANSPORT=shm, when a node
 * peer cannot be reached; the window must then still call fr_chan_agree. */
int fr_chan_create(fr_win *w);
/* Collective like fr_chan_create, after fr_transport_select: every member fails if one failed
 * (rc is this member's result), and learns whether anyone sends it batches as messages
 * (w->am_rx). Returns the window's result. */
int fr_chan_agree(fr_win *w, int rc);
/* Release the rings and the mapped segments (MPI_Win_free, or a creation that failed). */
void fr_chan_destroy(fr_win *w);
/* Progress: move batches waiting for ring space, and dispatch every batch that arrived in an
 * incoming ring. Returns the number of batches handled. */
int fr_chan_poll(fr_win *w);

/* ---- target-side protocol (sync_*.c) ---- */
/* An operation from src starts here and completes later (its data moves in its own message):
 * returns its number for fr_target_op_done. */
uint64_t fr_target_op_begin(fr_win *w, int src);
/* An operation from src finished at this target (data stored, combined, or sent back): number
 * from fr_target_op_begin, or 0 for one that starts and finishes now. */
void fr_target_op_done(fr_win *w, int src, fr_epoch epoch, uint64_t number);
void fr_target_complete(fr_win *w, int src, uint64_t upto);
void fr_target_fence_done(fr_win *w, int src, uint64_t seq, uint64_t upto);
/* Lock request of src; returns non-zero if granted at once. */
int fr_target_lock(fr_win *w, int src, int lock_type);
void fr_target_unlock(fr_win *w, int src, uint64_t upto, int nocheck);
/* An operation of src completed: an UNLOCK of src may now be released (sync_lock.c). */
void fr_lock_op_done(fr_win *w, int src);
void fr_origin_unlock_acked(fr_win *w, int src);
/* Progress: grant the lock requests waiting in my shared lock word whose turn came. */
void fr_lock_poll(fr_win *w);
/* May what is queued to target be issued now? Not while my lock epoch on it waits for its turn
 * in its shared lock word (drawing the ticket on the first call). */
int fr_lock_may_issue(fr_win *w, int target);
/* The LOCK packet that must precede my next batch to target (in *buf), or NULL if none is due:
 * not a lock epoch, MPI_MODE_NOCHECK, myself, or already sent this epoch. */
const fr_pkt *fr_lock_lead(fr_win *w, int target, fr_pkt *buf);
/* Counter packets (sync_counter.c): BUMP from an origin, BUMP_ACK and COUNTER_VALUE replies. */
void fr_target_bump(fr_win *w, int src, const fr_pkt *p);
void fr_target_counter_read(fr_win *w, int src, const fr_pkt *p);
/* Operations of src completed: BUMPs of src waiting for them may now apply. */
void fr_bumps_op_done(fr_win *w, int src);
void fr_origin_bump_acked(fr_win *w, int src, const fr_pkt *p);
/* Make sure target was asked to acknowledge once my operations 1..upto to it are complete
 * there (a BUMP without bump, covering everything sent so far; at most one per need). */
void fr_ack_ask(fr_win *w, int target, uint64_t upto);
/* What acknowledgement number seq of a BUMP reports: MPI_SUCCESS, or the error of a bump the
 * owner dropped (its counter was freed). */
int fr_bump_ack_result(fr_win *w, int target, uint64_t seq);
void fr_origin_counter_value(fr_win *w, int src, const fr_pkt *p);
/* Dispatch a synchronization packet (everything but the operations and TYPE_DROP) from src. */
void fr_sync_packet(fr_win *w, int src, const fr_pkt *p);
/* Replies to this process's own requests (UNLOCK_ACK, BUMP_ACK, COUNTER_VALUE): never held. */
static inline int fr_pkt_is_reply(const fr_pkt *p)
{
    return p->type == FR_PKT_UNLOCK_ACK || p->type == FR_PKT_BUMP_ACK ||
           p->type == FR_PKT_COUNTER_VALUE;
}

/* ---- message transport internals shared by its files (am_*.c) ---- */
/* Handle one batch that src sent me. */
void fr_am_dispatch(fr_win *w, int src, const unsigned char *buf, size_t len);
/* Run the packets held for src that may now run (a lock was granted, a post or fence entered). */
void fr_am_replay_held(fr_win *w, int src);
/* Receive and dispatch every batch waiting on w as a message; returns the number handled
 * (am_inbox.c). */
int fr_am_poll(fr_win *w);
/* Post / cancel w's receive for batches; open when members send me messages (w->am_rx), close
 * before w->comm goes. */
void fr_am_inbox_open(fr_win *w);
void fr_am_inbox_close(fr_win *w);
/* Target datatype by id from src (predefined or cached); NULL if unknown. */
const fr_dtype *fr_am_rxtype(fr_win *w, int src, uint64_t id);
/* Decode and cache a datatype description src sent. */
int fr_am_rxtype_add(fr_win *w, int src, uint64_t id, const void *desc, size_t len);
void fr_am_rxtype_drop(fr_win *w, int src, uint64_t id);
/* Keep a rebuilt datatype alive while a request uses it (predefined ones are static). */
void fr_am_rxtype_hold(const fr_dtype *d);
void fr_am_rxtype_unhold(const fr_dtype *d);
void fr_am_peer_types_free(fr_peer *p);

#endif
