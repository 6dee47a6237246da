/* sync.h - the synchronization protocols (fence, post/start/complete/wait, lock, counters) as the
 * other layers see them: which epoch an operation belongs to, the target-side handling of the
 * packets the transports hand up (fr_sync_protocol, bound to fr_proto at MPI_Init), and what
 * the extensions need to ask a target for acknowledgements.
 *
 * Every synchronization file opens with its protocol and memory-ordering comment. */
#ifndef FR_SYNC_H
#define FR_SYNC_H

#include "transport/transport.h"
#include "win/win.h"

/* The epoch an operation of `kind` to `target` would belong to now, or an fr_errorf() code
 * (epoch.c). */
int fr_win_access_epoch(fr_win *w, int target, fr_opkind kind, fr_epoch *out);
/* Issue now what is queued to target in any epoch (an operation's request is waited for before
 * the epoch's closing call), opening a lock epoch at the target if needed (epoch.c). trail, if
 * not NULL, goes at the end of the epoch queue's batch, behind its operations (its arg set to
 * the operations sent, as fr_batch_flush does): only when that queue leaves, which the caller
 * sees as the queue becoming empty. */
int fr_win_issue_now(fr_win *w, int target, fr_pkt *trail);
/* An operation of epoch e to myself (api/rma_ops.c): may it run at the call? First runs what
 * is queued to myself, if its epoch lets it reach my window now (*rc: the first error of
 * those); then 1 when e lets the new operation reach my window now and nothing is queued to
 * myself any more (it would be overtaken). 0: queue it, for the epoch's closing call. */
int fr_win_self_ready(fr_win *w, fr_epoch e, int *rc);
/* The protocols' side of what the transports carry (epoch.c): the value of fr_proto. */
extern const fr_protocol fr_sync_protocol;

/* ---- target side and replies (sync_*.c) ---- */
void fr_target_complete(fr_win *w, int src, uint64_t upto);
void fr_target_fence_done(fr_win *w, int src, uint64_t seq, uint64_t upto);
/* Lock request of src; returns non-zero if granted at once. tell: answer LOCK_GRANTED at the
 * grant. */
int fr_target_lock(fr_win *w, int src, int lock_type, int tell);
/* src asks to be told when its lock request (sent before) is granted. */
void fr_target_lock_ask(fr_win *w, int src);
void fr_origin_lock_granted(fr_win *w, int src);
/* src's LOCK_TRY (MPI_Win_lock_all): a shared lock if it enters at once, answered LOCK_TRIED. */
void fr_target_lock_try(fr_win *w, int src);
void fr_origin_lock_tried(fr_win *w, int src, int granted);
void fr_target_unlock(fr_win *w, int src, uint64_t upto, int nocheck);
/* An operation of src completed: an UNLOCK of src may now be released (sync_lock.c). */
void fr_lock_op_done(fr_win *w, int src);
void fr_origin_unlock_acked(fr_win *w, int src);
/* Progress (a poller, progress.h): grant the lock requests waiting in my shared lock word whose
 * turn came. Returns 0: a grant is no event a wait counts. */
int fr_lock_poll(fr_win *w);
/* May what is queued to target be issued now? Not while a lock I requested before the one of my
 * lock epoch on it (MPI_Win_lock order) is not taken yet (requesting it, sync_lock.c), nor while
 * that epoch waits for its turn in its shared lock word (drawing the ticket on the first call). */
int fr_lock_may_issue(fr_win *w, int target);
/* The first operation of my lock epoch on a node peer whose shared lock word I take myself:
 * take the lock now if it is my turn (drawing my ticket), so that this operation and the next
 * are copied at the call instead of queued for the flush. Never waits; 1 once the lock is held.
 * Only when no lock listed before it in MPI_Win_lock order is still to be taken. */
int fr_lock_take_early(fr_win *w, int target);
/* Is my lock epoch on myself open to my operations (holding the lock, or MPI_MODE_NOCHECK)?
 * Takes the lock first if the epoch has not yet (blocking). 0: no lock epoch on myself. */
int fr_lock_self_open(fr_win *w);
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
/* The same request as a packet to trail a batch of operations (fr_win_issue_now), so that it
 * costs no message of its own; fr_ack_trailed records it once that batch has left. */
fr_pkt *fr_ack_packet(fr_win *w, int target, fr_pkt *ask);
void fr_ack_trailed(fr_win *w, int target, const fr_pkt *ask);
/* Collective over w's members: every operation, bump and reply of every member on w is complete
 * and nothing is in flight (sync_flush.c). */
void fr_win_drain(fr_win *w);
/* What acknowledgement number seq of a BUMP reports: MPI_SUCCESS, or the error of a bump the
 * owner dropped (its counter was freed). */
int fr_bump_ack_result(fr_win *w, int target, uint64_t seq);
void fr_origin_counter_value(fr_win *w, int src, const fr_pkt *p);

#endif
