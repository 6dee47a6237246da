/* transport.h - how operations reach a target, chosen per target in one place
 * (fr_transport_select), and how what arrives is handed up to the protocols.
 *
 * A transport moves the queued operations of one target plus the synchronization packets that
 * open and close the epoch. The protocols themselves (fence counting, PSCW, the fair lock queue,
 * the counters) live in sync/ and are the same for every transport: whatever carried a COMPLETE
 * hands it up through fr_proto, which sync/ binds at MPI_Init.
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
    /* How packet headers are written in its batches, by the sender and for the receiver
     * (packet.h): compact in MPI messages, where bytes cost time; the struct in a ring, where
     * encoding and decoding cost more than the bytes save. */
    fr_pkt_form form;
    /* Fetches (gets, fetching accumulates, compare-and-swaps) with up to this many bytes to bring
     * back ask for them in an ANSWER packet of the target's batches: through a ring, where a
     * data message of the MPI library would cost more than the whole exchange (am_send.c).
     * 0: every answer is a data message. */
    size_t answer_max;
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
/* Target side: answer src's fetch p (sent with FR_PKTF_ANSWER) with the len bytes at data, in
 * an ANSWER packet of my next batch to src, sent now. */
void fr_batch_answer(fr_win *w, int src, const fr_pkt *p, const void *data, size_t len);
/* Origin side: target's ANSWER p arrived, its data at body: into the fetch's buffer, and the
 * fetch is complete. */
void fr_batch_answered(fr_win *w, int target, const fr_pkt *p, const unsigned char *body);
/* Origin side, while w->asking: take back the gets asked through the ring (direct.h) that have
 * waited fr_opt.ask_wait_ns for their answer and that their target has not begun to serve, and
 * read them by cross-memory attach. Returns the number completed so. */
int fr_batch_asks_due(fr_win *w);
/* Origin side, before a closing call stores the close of its epoch in t's state page: wait
 * until the get asked of t, if any, is answered or taken back and read, so that t cannot end
 * the epoch while a get taken back still reads it. */
void fr_batch_ask_settle(fr_win *w, int t);
/* An operation of a counter epoch, whose data travels inside the packet, packed into the head of
 * the next batch to target at once instead of queued: the sync-ops request that closes the epoch
 * then only appends its BUMP. Returns 1 when packed (*rc its result), 0 when it must be queued
 * (a get, a large transfer, or a target whose transport has no batches). */
int fr_batch_pack_now(fr_win *w, int target, const fr_op *op, int *rc);

/* ---- the shared-memory channel (tp_shm.c) ---- */
/* Collective over w->comm unless FLEXRMA_TRANSPORT=am: find the node peers, make this process's
 * incoming rings and attach to its outgoing ones in the peers' segments (or, first-use
 * attachment, only check what they published: fr_chan_attach); peers[r].chan is set for every
 * node peer a ring reaches. Fails (FR_ERR_SHM) only with FLEXRMA_TRANSPORT=shm, when a node
 * peer cannot be reached; the window must then still call fr_chan_agree. */
int fr_chan_create(fr_win *w);
/* Collective like fr_chan_create, after fr_transport_select: every member fails if one failed
 * (rc is this member's result), and learns whether anyone sends it batches as messages
 * (w->am_rx). Returns the window's result. */
int fr_chan_agree(fr_win *w, int rc);
/* Is w attaching to node peers on first use (tp_shm.c: the node agreed at creation)? */
int fr_chan_lazy(const fr_win *w);
/* Make sure this process is attached to node peer r's ring and shared state block, if r is
 * reached through a ring (a no-op otherwise, and once attached). FR_ERR_SHM when the mapping
 * fails (resources: r keeps its ring, and the next use tries again). */
int fr_chan_attach(fr_win *w, int r);
/* Is this process attached to node peer r's ring, with nothing waiting for room in it and at
 * least half of it free? (A get asked through the ring leaves its packet there when taken back,
 * until r polls: direct.h.) */
int fr_chan_roomy(fr_win *w, int r);
/* Release the rings and the mapped segments (MPI_Win_free, or a creation that failed). */
void fr_chan_destroy(fr_win *w);
/* Progress (a poller, progress.h): move batches waiting for ring space, and dispatch every batch
 * that arrived in an incoming ring. Returns the number of batches handled. */
int fr_chan_poll(fr_win *w);

/* ---- what the transports hand up to the synchronization protocols (sync/) ----
 * Every transport delivers the same packets, and the protocols above mean the same by them
 * whichever carried them. Transports reach them only through this table, bound once at MPI_Init
 * (api/init.c), so that this layer never calls sync/ by name. */
typedef struct fr_protocol {
    /* A synchronization packet from src (everything but the operations and TYPE_DROP). */
    void (*packet)(fr_win *w, int src, const fr_pkt *p);
    /* src's complete prefix (fr_peer.ops_done) grew: an UNLOCK or a BUMP may now be released. */
    void (*ops_done)(fr_win *w, int src);
    /* My shared state block for w was just made (shm_state.c), before it is published: the
     * counters it holds the words of must get them now, ahead of any peer's atomic bump. */
    void (*state_made)(fr_win *w);
} fr_protocol;
extern fr_protocol fr_proto;

/* ---- completion accounting at the target (completion.c) ---- */
/* An operation from src starts here and completes later (its data moves in its own message):
 * returns its number for fr_target_op_done. */
uint64_t fr_target_op_begin(fr_win *w, int src);
/* An operation from src finished at this target (data stored, combined, or sent back): number
 * from fr_target_op_begin, or 0 for one that starts and finishes now. */
void fr_target_op_done(fr_win *w, int src, fr_epoch epoch, uint64_t number);

/* Replies to this process's own requests (UNLOCK_ACK, LOCK_GRANTED, LOCK_TRIED, BUMP_ACK,
 * COUNTER_VALUE, ANSWER): never held. */
static inline int fr_pkt_is_reply(const fr_pkt *p)
{
    return p->type == FR_PKT_UNLOCK_ACK || p->type == FR_PKT_LOCK_GRANTED ||
           p->type == FR_PKT_LOCK_TRIED || p->type == FR_PKT_BUMP_ACK ||
           p->type == FR_PKT_COUNTER_VALUE || p->type == FR_PKT_ANSWER;
}

/* ---- message transport internals shared by its files (am_*.c) ---- */
/* Handle one batch that src sent me, its headers in the form of its carrier (packet.h). */
void fr_am_dispatch(fr_win *w, int src, fr_pkt_form form, const unsigned char *buf, size_t len);
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
/* The user freed the derived datatype with this id: every window's targets may forget it (its
 * id goes on the drop list of my next batch to each target that cached it). */
void fr_windows_forget_type(uint64_t id);

/* A tag for a data message between this process and a peer (am_send.c): is_reply for one that
 * travels from the peer to me. */
uint32_t fr_am_data_tag(fr_win *w, int is_reply);

/* ---- dynamic windows: learning a target's attached memory (regions_fetch.c) ---- */
/* Judge count elements of dt at address disp of target's memory: against what this process
 * knows of target's attached regions; where that does not cover them, against the regions
 * target sends when asked now (a round trip). FR_ERR_RANGE if they are not attached there. */
int fr_regions_judge(fr_win *w, int target, MPI_Aint disp, int count, const fr_dtype *dt,
                     MPI_Aint *offset);
/* Target side: answer src's REGIONS_READ. */
void fr_regions_answer(fr_win *w, int src, const fr_pkt *p);

/* ---- the target is this process (local.c, tp_self.c) ---- */
/* Apply op to my own window: a copy, or an accumulate (atomic per element as any other). */
int fr_local_op(fr_win *w, const fr_op *op);
/* Run op, whose target is this process, now: fr_local_op, counted as an operation sent to
 * myself and completed here (ops_sent, fence_sent, the target's prefix), its request told
 * that it is complete at both ends. Returns fr_local_op's result. */
int fr_self_run(fr_win *w, const fr_op *op);

#endif
