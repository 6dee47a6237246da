/* win.h - a flexrma window: the member table, the epoch state of this process, and the
 * per-member state the synchronization protocols keep.
 *
 * The user's MPI_Win handle is a genuine window of the underlying MPI (the "carrier", a zero-byte
 * window over MPI_COMM_SELF); flexrma maps it to this object. Names, user attributes, error
 * handlers and handle conversion therefore keep working through functions flexrma does not
 * intercept. All traffic of the window runs on a private duplicate of the creation communicator,
 * so it never matches application messages.
 *
 * The member table is an array indexed by window rank, not a communicator: a member's transport,
 * size and protocol state live in fr_peer, so membership can later change without rebuilding the
 * engine around a new communicator.
 */
#ifndef FR_WIN_H
#define FR_WIN_H

#include "core/fr.h"
#include "dtype/dtype.h"
#include "core/u64map.h"
#include "node/shm_adopt.h"
#include "node/shm_seg.h"

struct fr_transport;
struct fr_chan;
struct fr_chan_peer;
struct fr_req;
struct fr_counters;
struct fr_notify;
struct fr_pkt;
struct fr_direct;
struct fr_shm_state;
struct fr_shared;

/* The kind of epoch an RMA operation belongs to; carried in every operation packet so the target
 * can account completions per synchronization method. */
typedef enum fr_epoch {
    FR_EPOCH_NONE = 0,
    FR_EPOCH_FENCE,
    FR_EPOCH_PSCW,
    FR_EPOCH_LOCK,
    FR_EPOCH_COUNTER, /* covered by a started sync-ops request (ext/syncobj) */
} fr_epoch;
const char *fr_epoch_name(fr_epoch e);

/* MPI_Put, MPI_Get, MPI_Accumulate; MPI_Get_accumulate and MPI_Fetch_and_op (GACC: an
 * accumulate that also fetches the values before), MPI_Compare_and_swap. */
typedef enum fr_opkind {
    FR_OP_PUT = 1,
    FR_OP_GET,
    FR_OP_ACC,
    FR_OP_GACC,
    FR_OP_CAS,
    FR_OP_KINDS
} fr_opkind;

/* One RMA operation, queued at the origin until the epoch's closing call issues it
 * (seed 001 section 4: "do everything in the second synchronization call"). It holds references
 * on both datatype descriptions, so the user may free the handles meanwhile. */
typedef struct fr_op {
    fr_opkind kind;
    fr_epoch epoch;
    int op_index;              /* accumulate: fr_op_index() */
    void *origin_addr;
    int origin_count;
    fr_dtype *origin_dt;
    MPI_Aint target_disp;
    int target_count;
    fr_dtype *target_dt;
    MPI_Count bytes;           /* data bytes moved */
    struct fr_req *req;        /* the request that waits for it (MPI_Iput...), or NULL */
    /* GACC, CAS: where the target's values before go, and CAS's comparand (one element) */
    void *result_addr;
    int result_count;
    fr_dtype *result_dt;
    const void *compare_addr;
} fr_op;

/* An accumulate of any kind: combined into the target atomically per element, in program order
 * with the origin's other accumulates (MPI-3.1 11.7). */
static inline int fr_op_is_acc(const fr_op *op) { return op->kind >= FR_OP_ACC; }
/* Does it bring data back (GET, GACC, CAS)? */
static inline int fr_op_fetches(const fr_op *op) { return op->kind == FR_OP_GET || op->kind >= FR_OP_GACC; }

typedef struct fr_opq {
    fr_op *ops;
    size_t n, cap;
} fr_opq;

/* Packets laid end to end, on their way to one target (am_send.c). */
typedef struct fr_batch {
    unsigned char *buf;
    size_t len, cap;
} fr_batch;

/* A packet held at the target until its epoch opens there or the lock it belongs to is granted
 * (am_recv.c): the decoded header (an fr_pkt, transport/packet.h), its body right behind. */
typedef struct fr_held {
    struct fr_held *next;
    unsigned char bytes[];
} fr_held;

typedef enum fr_lockstate { FR_LK_IDLE = 0, FR_LK_WAITING, FR_LK_GRANTED } fr_lockstate;
/* An origin's own hold on a node peer's shared lock word (direct.h). */
enum { FR_DLOCK_NONE = 0, FR_DLOCK_WAITING, FR_DLOCK_HELD };
/* An origin's LOCK_TRY to a member (MPI_Win_lock_all): none, sent, answered. */
enum { FR_TRY_NONE = 0, FR_TRY_SENT, FR_TRY_GRANTED, FR_TRY_REFUSED };

/* Memory attached to a dynamic window (regions.c): sorted, non-overlapping. A region that lies
 * in one of its owner's shared segments (MPI_Alloc_mem memory, shm_seg.h) also says how node
 * peers map it and the slot of the owner's state page that tells them it is still attached
 * (direct.c); the whole entry travels to origins as bytes (REGIONS_READ). */
typedef struct fr_region {
    uint64_t base, size;
    uint64_t gen;     /* not 0: slot `slot` of the owner's state page holds gen while attached */
    uint32_t slot, pad;
    fr_seg_ref seg;   /* gen != 0: the segment around it */
} fr_region;
typedef struct fr_regions {
    fr_region *r;
    int n, cap;
    uint64_t changes; /* attach, detach or refresh count: tests tell a refresh happened */
} fr_regions;
/* Add r ([r->base, r->base + r->size)): FR_ERR_ATTACH if it overlaps a region already there. */
int fr_regions_add(fr_regions *t, const fr_region *r);
/* Remove the region that starts at base, a copy of it into *gone: FR_ERR_ATTACH if none does. */
int fr_regions_remove(fr_regions *t, uint64_t base, fr_region *gone);
/* 1 if [lo, hi) (lo < hi) is attached: it lies in one region, or in regions attached back to
 * back (each starting where the one before it ends). */
int fr_regions_cover(const fr_regions *t, uint64_t lo, uint64_t hi);
/* The regions that hold [lo, hi) (lo < hi): the index of the first, *last that of the last
 * (empty regions between them hold nothing); -1 if [lo, hi) is not attached. */
int fr_regions_span(const fr_regions *t, uint64_t lo, uint64_t hi, int *last);
/* Replace the table's contents by n regions, sorted (a target's table as an origin learned it). */
void fr_regions_set(fr_regions *t, const fr_region *r, int n);
void fr_regions_free(fr_regions *t);

/* One member of the window as seen from this process, in both roles. */
typedef struct fr_peer {
    MPI_Aint size;             /* its window size in bytes */
    int disp_unit;
    fr_regions known;          /* dynamic windows: its attached memory, as last learned */
    uint32_t member_id;        /* identity in the window that survives membership changes */
    const struct fr_transport *tp;
    struct fr_chan_peer *chan; /* a node peer whose ring I attached to: the rings between us */
    struct fr_shm_state *state;/* its shared state block, mapped here (shm_state.h), or NULL */

    /* --- this process as origin, the member as target --- */
    char *mapped;              /* where its window's displacement 0 is here, when this process
                                  maps its memory (direct.c: a node peer reached by plain
                                  copies), or NULL; the short path of an RMA call looks here
                                  first (api/rma_ops.h) */
    MPI_Aint mapped_lo, mapped_hi; /* the bytes of its window mapped: all of them, or an
                                  adopted window's whole pages */
    fr_opq q;                  /* operations waiting for the closing synchronization */
    fr_opq cq;                 /* operations of my counter epochs, waiting for a sync-ops
                                  request's completion */
    fr_batch packed;           /* counter-epoch operations packed as they were issued: the head
                                  of my next batch to it (fr_batch_pack_now) */
    int cover[FR_OP_KINDS];    /* my started sync-ops requests to it covering each kind */
    uint32_t bump_guess;       /* the bumps my last atomic bump to it left in its counter word:
                                  where the next one starts (fr_shm_counter_bump) */
    uint64_t acks_asked;       /* BUMP acknowledgements I asked it for, cumulative */
    uint64_t acks_got;         /* ... and received (they come in order) */
    uint64_t close_ack;        /* the acknowledgement asked for behind my last COMPLETE packet to
                                  it: until it came, that COMPLETE may be unread there, and my
                                  next epoch must not close in its state page (direct.c) */
    uint64_t ack_failed;       /* number of the last acknowledgement reporting a dropped bump */
    uint64_t reads_asked, reads_got; /* counter reads (MPIX_Win_sync_read) */
    uint64_t read_value;
    int read_failed;
    uint64_t ops_sent;         /* operations issued to it, cumulative */
    uint64_t fence_done_sent;  /* number of the last fence I closed to it by a FENCE_DONE */
    uint64_t fence_sent;       /* fence-epoch operations issued to it since my last closing fence,
                                  also the ones a request's wait sent ahead (the reduce-scatter
                                  fence announces them with those still queued) */
    int pending;               /* internal requests to it not yet complete */
    int lock_held;             /* MPI_LOCK_* of my lock epoch on it, 0 if none */
    int lock_nocheck;
    int lock_sent;             /* the LOCK of my lock epoch on it left already (fr_lock_lead) */
    int lock_ordered;          /* it is in w->lk_order: my lock there not known taken yet */
    int lock_asked;            /* ... and I asked it to say when it grants it (LOCK_GRANTED) */
    int lock_granted;          /* ... which it did */
    int lock_try;              /* FR_TRY_*: my lock_all's LOCK_TRY to it (sync_lock.c) */
    int dlock;                 /* FR_DLOCK_*: my lock epoch's lock, taken in its shared lock word */
    uint64_t dlock_ticket;     /* ... with this ticket */
    uint64_t remote_upto;      /* my operations 1..remote_upto to it are known complete there */
    uint64_t replies_cover;    /* my operations after remote_upto up to this one all bring a reply
                                  (gets, fetching accumulates), which proves each complete there:
                                  once the replies_due counted have come, remote_upto reaches it
                                  without an acknowledgement (am_send.c) */
    int replies_due;
    struct fr_xfer *awaited;   /* my fetches it answers in ANSWER packets, oldest first: it
                                  runs my packets in order and answers each at once */
    struct fr_xfer *awaited_last;
    struct fr_xfer *asked;     /* my get asked of it through the ring, until it is answered or
                                  taken back and read (direct.h, "Gets asked through the
                                  ring"), or NULL */
    uint64_t asks;             /* the number of my last such get to it */
    uint64_t asks_after;       /* 0, or when gets to it may be asked again (ns, fr_now_ns): it
                                  left one unserved, so it is computing */
    uint64_t asks_quiet;       /* how long that was: 0 after an answer, else doubled for each
                                  take-back in a row (direct.h) */
    uint64_t ack_upto_asked;   /* the largest operation count an acknowledgement was asked for */
    int unlock_acked;          /* UNLOCK_ACK received for my last unlock */
    int in_start;              /* member of my current access group (PSCW) */
    fr_u64map types_sent;      /* ids of my derived datatypes it has cached */
    uint64_t *types_drop;      /* ids it should forget, sent with my next packet to it */
    size_t ntypes_drop, cap_types_drop;

    /* --- this process as target, the member as origin --- */
    uint64_t ops_run;          /* its operations started here, numbered 1, 2, ... in order */
    uint64_t *open_ops;        /* numbers of those not complete yet, ascending */
    size_t nopen, cap_open;
    int accs_arriving;         /* its accumulates whose data is still arriving in a message of
                                  its own: its later accumulates wait (am_recv.c) */
    uint64_t ops_done;         /* the longest complete prefix: 1..ops_done are all complete
                                  (a count would let a later small operation stand in for an
                                  earlier large one still in flight) */
    int post_open;             /* I posted to it and its COMPLETE has not arrived: its
                                  post/start/complete/wait packets may run */
    uint64_t fence_seq;        /* number of the last fence it told me it closed by a FENCE_DONE
                                  (or in my state page: fr_direct_fence_closed) */
    uint64_t fence_upto;       /* ... covering its operations up to this count */
    int complete_seen;         /* its COMPLETE for my current exposure epoch arrived */
    uint64_t complete_upto;    /* ... covering its operations up to this count */
    fr_lockstate lk;           /* its lock request on my window */
    uint64_t lk_ticket;        /* ... its ticket in my shared lock word, when I have one */
    int lk_type;
    int lk_tell;               /* answer LOCK_GRANTED when its request is granted */
    int unlock_seen;           /* its UNLOCK arrived; release once ops_done >= unlock_upto */
    int unlock_nocheck;
    uint64_t unlock_upto;
    fr_held *held, **held_tail;/* its packets waiting until they may run (packet.h), in order */
    struct fr_pkt *bumps;      /* its BUMPs waiting for the operations they follow */
    size_t nbumps, cap_bumps;
    fr_u64map types_recv;      /* its datatypes rebuilt here: id -> fr_rxtype */

    /* --- this process as origin again, kept last: the hot fields above keep their lines --- */
    uint64_t *lane_last;       /* what I last stored in each of my lanes in its state block, by
                                  counter slot (UINT64_MAX: not known yet), or NULL
                                  (counter_bump.c) */
    uint32_t lane_last_of;     /* 1 + the member id whose lanes lane_last describes */
} fr_peer;

/* A lock request waiting in the target's fair queue (seed 000 section 2). */
typedef struct fr_lockreq {
    int rank;
    int type;
} fr_lockreq;

typedef struct fr_win_stats {
    uint64_t puts, gets, accs, bytes;
    uint64_t fences, pscw, locks;
    uint64_t direct;           /* operations copied straight into or out of a peer's window */
    uint64_t closed_direct;    /* PSCW access epochs closed in the target's state page */
    uint64_t acc_atomic;       /* accumulate elements I combined with a hardware atomic into a
                                  window node peers map (acc_shared.c) */
    uint64_t acc_locked;       /* ... and under a stripe lock there */
    uint64_t bumps_shm;        /* counter bumps I applied in an owner's shared state block */
    uint64_t bumps_lane;       /* ... of them, stored in my own lane there, without an atomic */
    uint64_t bumps_pkt;        /* ... and sent as BUMP packets (including to myself) */
    uint64_t bumps_gone;       /* atomic bumps refused: the owner had freed the counter */
    /* What synchronization costs, counted where it is paid (bench/scale.c reads them): */
    uint64_t batches_ring;     /* batches I wrote into node peers' packet rings (tp_shm.c) */
    uint64_t batches_msg;      /* batches I sent as MPI messages (am_send.c) */
    uint64_t sync_atomics;     /* atomic updates of node peers' synchronization words: lock
                                  tickets and releases, PSCW and fence closes (sync_lock.c,
                                  direct.c);
                                  counter bumps are bumps_shm */
    uint64_t collectives;      /* collective calls synchronization made (reduce-scatter fence) */
    uint64_t held;             /* packets set aside until their epoch opened here (am_recv.c):
                                  each once, however many epochs its origin runs ahead */
    uint64_t gets_asked;       /* gets I asked of node peers through the ring (direct.h) */
    uint64_t gets_taken_back;  /* ... of them, taken back unserved and read by cross-memory
                                  attach */
} fr_win_stats;

typedef enum fr_fence_state {
    FR_FENCE_OFF = 0,  /* no fence epoch: the last fence had MPI_MODE_NOSUCCEED, or none yet */
    FR_FENCE_ARMED,    /* a fence opened an epoch; RMA calls may follow */
} fr_fence_state;

/* A group translated into window ranks once (group_ranks.c). */
typedef struct fr_group_memo {
    int valid;
    MPI_Group held;            /* a reference of ours to the group object */
    int *ranks, n;
} fr_group_memo;
#define FR_GROUP_MEMOS 2       /* a post group and a start group */

/* The window hints MPI-3.1 defines (11.2.1). flexrma acts on one: accumulate_ordering=none
 * lets an accumulate go straight into a node peer's window while an earlier one of the same
 * origin still travels (direct.c). The others are promises it keeps and reports. */
typedef struct fr_win_hints {
    unsigned ordering;     /* FR_ORDER_* bits: which orders of accumulates to one location */
    int no_locks;          /* "no_locks": the window is never locked */
    int same_op;           /* "accumulate_ops" = same_op (else same_op_no_op) */
    int same_size;         /* "same_size" */
    int same_disp_unit;    /* "same_disp_unit" */
} fr_win_hints;
enum { FR_ORDER_RAR = 1, FR_ORDER_RAW = 2, FR_ORDER_WAR = 4, FR_ORDER_WAW = 8 };

/* Memory a window owns (api/alloc_mem.h): a block of this process, or a node peer's segment
 * mapped here (the shared window's, owned by its first member). */
typedef struct fr_win_mem {
    void *addr;                  /* NULL: the window owns no memory */
    int kind;                    /* fr_block_kind */
    struct fr_peer_proc *owner;  /* FR_BLOCK_MAPPED: the segment's owner (node/shm_map.h) */
    uint64_t serial;             /* ... and the segment's serial there */
} fr_win_mem;

typedef struct fr_win {
    MPI_Win handle;            /* the carrier the user holds */
    MPI_Comm comm;             /* private duplicate of the creation communicator */
    MPI_Group group;
    int rank, size;
    void *base;
    MPI_Aint win_size;
    int disp_unit;
    fr_peer *peers;            /* indexed by window rank */
    int id;                    /* creation order in this process, for statistics */
    uint64_t uid;              /* identity shared by all members, drawn at creation */
    uint32_t next_member_id;   /* the identity the next joiner gets (ext/dynwin): identities are
                                  never reused, so a leaver's counters never name a joiner */
    struct fr_req *reqs;       /* flexrma requests on this window (request.h) */
    struct fr_counters *counters; /* counters this process owns (ext/syncobj) */
    struct fr_notify *notify;     /* notification counters (sync/notify.c), NULL: none */

    /* access epochs of this process (origin side) */
    fr_fence_state fence;
    uint64_t fence_ops;        /* operations issued in the current fence epoch */
    uint64_t fence_count;      /* MPI_Win_fence calls this process has entered */
    uint64_t fence_opened;     /* number of the fence that opened the current fence epoch */
    uint64_t fence_closes;     /* of those, the ones that closed an epoch (no MPI_MODE_NOPRECEDE):
                                  the same count on every member */
    int start_active;
    int *start_ranks, nstart, start_cap; /* the start group in window ranks; kept between epochs */
    uint64_t self_starts;      /* MPI_Win_start calls whose group held me */
    uint64_t self_posts;       /* MPI_Win_post calls whose group held me: my k-th access epoch to
                                  myself reaches my window once my k-th post is open (epoch.c) */
    int nlocks;                /* members I hold a lock epoch on */
    int lock_all;              /* those are every member, from MPI_Win_lock_all */
    int *lk_order;             /* members I locked with MPI_Win_lock (not MPI_MODE_NOCHECK) whose
                                  lock is not known taken yet, in MPI_Win_lock order: the order
                                  I take them in (sync_lock.c) */
    int lk_norder, lk_order_cap;
    int lk_tries;              /* my lock_all's LOCK_TRYs not answered yet */

    /* exposure epochs of this process (target side) */
    int post_active;
    int *post_ranks, npost, post_cap;    /* the post group in window ranks; kept between epochs */
    fr_group_memo group_memo[FR_GROUP_MEMOS]; /* the last groups translated, most recent first */
    uint64_t fence_expected;   /* fence-epoch operations announced by reduce-scatter, cumulative */
    uint64_t fence_done;       /* fence-epoch operations completed here, cumulative */

    /* passive target: the lock on my window */
    int lk_mode;               /* 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    int lk_holders;
    int lk_waiting;            /* origins whose ticket in my shared lock word waits its turn */
    fr_lockreq *lk_queue;
    size_t lk_head, lk_len, lk_cap; /* ring buffer, FIFO */

    /* transport */
    int pending;               /* my requests as origin not yet complete */
    int target_pending;        /* requests serving other origins' operations not yet complete */
    int asking;                /* members with a get of mine asked through the ring (fr_peer.asked) */
    int tag_ub, next_tag;      /* data messages use tags in [FR_TAG_DATA_MIN, tag_ub] */
    struct fr_chan *chan;      /* shared-memory rings with node peers, or NULL (tp_shm.c) */
    struct fr_shm_state *state;/* my shared state block, or NULL (shm_state.h) */
    int am_rx;                 /* members sending me batches as messages: 0, no inbox */
    struct fr_inbox *inbox;    /* the receive posted for them, or NULL (am_inbox.c) */
    struct fr_direct *direct;  /* single-copy access to node peers' windows (direct.h) */

    /* predefined attributes, returned by MPI_Win_get_attr (the carrier's would be wrong) */
    int attr_flavor, attr_model;
    fr_win_hints hints; /* the info keys of MPI-3.1 11.2.1, as given (hints.c) */
    fr_win_mem own_mem; /* memory MPI_Win_allocate(_shared) made for it (none: the user's) */
    fr_adopted adopted; /* MPI_Win_create: the pages of the user's memory it shares in place
                           (node/shm_adopt.h; transport/direct.c adopts them, the window's
                           free gives them back) */
    fr_regions attached; /* MPI_Win_create_dynamic: memory attached here (MPI_Win_attach) */
    struct fr_shared *shared; /* MPI_Win_allocate_shared: every member's part, mapped here
                                 (api/win_shared.h) */

    fr_win_stats st;
    struct fr_win *next, *prev;/* the list of live windows the progress engine serves */
} fr_win;

/* ---- the window's hints (hints.c) ---- */
/* Reads the keys MPI defines for windows from info (MPI_INFO_NULL: none) into h; keys absent
 * keep their values, values MPI does not define are ignored, as hints are. */
void fr_win_hints_read(fr_win_hints *h, MPI_Info info);
/* The defaults MPI gives them. */
fr_win_hints fr_win_hints_default(void);
/* A new info object holding every key with its current value (the caller frees it). */
int fr_win_hints_info(const fr_win_hints *h, MPI_Info *info);

/* ---- the live windows (registry.c) ---- */
/* Window lookup on every call: the flexrma window behind a user handle, or NULL for a native
 * window (which the entry points then pass through to PMPI). */
fr_win *fr_win_lookup(MPI_Win handle);
/* Live windows, for the progress engine. fr_nwindows changes under the engine lock with atomic
 * stores, and may be read atomically without it (fr_progress_needed). */
extern fr_win *fr_windows;
extern int fr_nwindows;
/* A window made (MPI_Win_create) joins both; a window freed leaves them. */
void fr_win_register(fr_win *w);
void fr_win_unregister(fr_win *w);
/* The error to raise for a call that needs a flexrma window but got `win`. */
int fr_not_flexrma_win(MPI_Win win, const char *call);
/* Raise rc from call `call` through w's error handler (fr_handle_raise, fr.h). */
static inline int fr_win_raise(fr_win *w, const char *call, int rc)
{
    return fr_handle_raise(w->handle, call, rc);
}


/* ---- what every layer asks of a window (win.c) ---- */
int fr_win_check_rank(fr_win *w, int rank);
/* The window rank of the member with identity id, or -1. */
int fr_win_rank_of_member(const fr_win *w, uint32_t id);
/* Non-zero if any access or exposure epoch of this process is open on w. */
int fr_win_any_epoch(const fr_win *w);
/* Translate a group into window ranks, into *ranks (grown to *cap as needed, kept by the caller
 * for the next epoch); FR_ERR_GROUP if a member is not in w (group_ranks.c). */
int fr_win_group_ranks(fr_win *w, MPI_Group g, int **ranks, int *cap, int *n);
/* Free the start and post rank arrays and forget the remembered translations: at window free,
 * and when the members change (window ranks change meaning). */
void fr_win_groups_free(fr_win *w);

/* The bytes [*lo, *hi) that count elements of dt at displacement disp (unit disp_unit) touch,
 * and *offset, the byte offset of disp; lo == hi when nothing is touched. Errors: a negative
 * displacement, overflows. Inline: every operation passes it twice, at origin and target. */
static inline int fr_win_span(int disp_unit, MPI_Aint disp, int count, const fr_dtype *dt,
                              MPI_Aint *offset, MPI_Aint *lo, MPI_Aint *hi)
{
    *offset = *lo = *hi = 0;
    if (disp < 0)
        return fr_errorf(FR_ERR_DISP, "target displacement %ld is negative", (long)disp);
    MPI_Aint start, last;
    if (__builtin_mul_overflow(disp, (MPI_Aint)disp_unit, &start))
        return fr_errorf(FR_ERR_RANGE, "target displacement %ld overflows", (long)disp);
    *offset = *lo = *hi = start;
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    /* The accessed span is the union of the first and the last element's true extents (the
     * extent may be negative). */
    if (__builtin_mul_overflow((MPI_Aint)(count - 1), dt->extent, &last))
        return fr_errorf(FR_ERR_RANGE, "target access of %d elements overflows", count);
    MPI_Aint l = dt->true_lb + (last < 0 ? last : 0);
    MPI_Aint h = dt->true_lb + dt->true_extent + (last > 0 ? last : 0);
    if (__builtin_add_overflow(start, l, lo) || __builtin_add_overflow(start, h, hi))
        return fr_errorf(FR_ERR_RANGE, "target access at displacement %ld overflows", (long)disp);
    return MPI_SUCCESS;
}

/* Check that count elements of dt at displacement disp lie inside a window of win_size bytes
 * with unit disp_unit; *offset gets the byte offset of disp. */
static inline int fr_win_range(MPI_Aint win_size, int disp_unit, MPI_Aint disp, int count,
                               const fr_dtype *dt, int target, MPI_Aint *offset)
{
    MPI_Aint lo, hi;
    int rc = fr_win_span(disp_unit, disp, count, dt, offset, &lo, &hi);
    if (rc == MPI_SUCCESS && hi > lo && (lo < 0 || hi > win_size))
        return fr_errorf(FR_ERR_RANGE,
                         "target range [%ld, %ld) at rank %d lies outside its window of %ld bytes",
                         (long)lo, (long)hi, target, (long)win_size);
    return rc;
}

/* Dynamic windows: the same against the memory attached at the target (addresses are
 * displacements, the unit is 1). */
static inline int fr_win_attached_range(const fr_regions *t, MPI_Aint disp, int count,
                                        const fr_dtype *dt, int target, MPI_Aint *offset)
{
    MPI_Aint lo, hi;
    int rc = fr_win_span(1, disp, count, dt, offset, &lo, &hi);
    if (rc == MPI_SUCCESS && hi > lo && (lo < 0 || !fr_regions_cover(t, (uint64_t)lo, (uint64_t)hi)))
        return fr_errorf(FR_ERR_RANGE, "target range [%p, %p) at rank %d is not in memory "
                                       "attached to the window there",
                         (void *)lo, (void *)hi, target);
    return rc;
}

/* Operation queues (opq.c). */
void fr_opq_push(fr_opq *q, const fr_op *op);
void fr_opq_clear(fr_opq *q); /* releases the datatype references of every op */
void fr_op_release(fr_op *op);
/* Operations issued to the target that have not left yet, in either form. */
static inline int fr_peer_unsent(const fr_peer *p) { return p->cq.n > 0 || p->packed.len > 0; }

/* My operations to p up to this one are known complete there, or will be by the replies
 * already counted (fr_peer.replies_cover, am_send.c). */
static inline uint64_t fr_peer_replies_known(const fr_peer *p)
{
    return p->replies_cover > p->remote_upto ? p->replies_cover : p->remote_upto;
}

/* Will the replies of what is sent to p, once the operations queued for it leave, prove all of
 * it complete? Then a flush asks for no acknowledgement. */
static inline int fr_peer_replies_will_cover(const fr_peer *p)
{
    if (fr_peer_replies_known(p) != p->ops_sent || fr_peer_unsent(p))
        return 0;
    for (size_t i = 0; i < p->q.n; i++)
        if (!fr_op_fetches(&p->q.ops[i]))
            return 0;
    return 1;
}

/* Does the operation's data travel inside the packet (so it is complete at the origin once
 * queued for sending)? Not an operation that brings data back. */
static inline int fr_op_is_eager(const fr_op *op)
{
    return !fr_op_fetches(op) && (size_t)op->bytes <= fr_opt.eager_max;
}

/* Does w close fences with the direct scheme (one close per pair) rather than by
 * reduce-scatter? Depends only on the window size, so every member agrees (sync_fence.c); the
 * single-copy path (direct.c) relies on the direct scheme. */
static inline int fr_fence_is_direct(const fr_win *w)
{
    return w->size <= fr_opt.fence_direct_max;
}

#endif
