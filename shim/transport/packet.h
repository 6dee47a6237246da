/* packet.h - the wire format of the message transport.
 *
 * Every flexrma message on a window's private communicator with tag FR_TAG_PKT is a batch of
 * packets laid end to end: all the operations an origin issues to one target at a closing
 * synchronization travel as one message, together with the synchronization packets that open
 * and close the epoch (LOCK ... UNLOCK, ... COMPLETE). That is seed 002's grouping of RMA
 * requests and generalises seed 001's single-operation piggyback to any number of operations.
 *
 * A packet is its header (fr_pkt; in MPI messages encoded compactly, packet_wire.c: varints,
 * 16 bytes for most synchronization packets, 16-24 for a small put, against the struct's 64,
 * see fr_pkt_form), then desc_len bytes of target datatype description, then, when
 * FR_PKTF_INLINE is set, data_len bytes of packed data; all three start 8-byte aligned, so
 * packed elements can be reduced in place. Why compact:
 * a counter-synchronized step (an 8-byte put and its bump) was a 136-byte batch, past the size
 * where MPI libraries leave their shortest message path (MPICH 4.0's ch4:ucx: 0.8 us up to 80
 * bytes, 1.05 from 96); it is 40 to 48 now. Data larger than the eager limit travels in its own
 * message with tag data_tag, straight between user buffer and window memory, typed by the
 * origin and target datatypes (no copy through flexrma buffers). So do the answers of gets and
 * fetching accumulates, except through a ring, where up to fr_transport.answer_max bytes come
 * back in an ANSWER packet (FR_PKTF_ANSWER).
 *
 * A target keeps (in arrival order) the packets it may not run yet: operations of a lock epoch
 * before the grant, of a post/start/complete/wait epoch before its MPI_Win_post, of a fence epoch
 * before it entered the closing fence. So no origin ever waits for a target's permission: every
 * epoch costs one message per origin-target pair (plus the ack of an unlock). (Except several
 * lock epochs at once, taken in MPI_Win_lock order: there LOCK_GRANTED tells the origin; and
 * MPI_Win_lock_all, which holds every lock before it returns: LOCK_TRY, answered LOCK_TRIED.)
 *
 * Processes are assumed homogeneous (same byte order and type sizes), as MPI_Pack with the
 * native representation is.
 */
#ifndef FR_PACKET_H
#define FR_PACKET_H

#include <stddef.h>
#include <stdint.h>

enum {
    FR_TAG_PKT = 1,      /* batches of packets, or the length of a big one (am_inbox.c) */
    FR_TAG_PKT_BIG = 2,  /* a batch bigger than the inbox (FLEXRMA_AM_INBOX), after its length */
    FR_TAG_DATA_MIN = 16 /* data messages: one tag per operation in flight */
};

typedef enum fr_pkt_type {
    FR_PKT_PUT = 1,      /* origin -> target: store data */
    FR_PKT_GET,          /* origin -> target: send data back on data_tag */
    FR_PKT_ACC,          /* origin -> target: combine data with op */
    FR_PKT_LOCK,         /* origin -> target: lock request (lock_type) */
    FR_PKT_UNLOCK,       /* origin -> target: release after `arg` operations from me are done */
    FR_PKT_UNLOCK_ACK,   /* target -> origin: every operation of the lock epoch is complete */
    FR_PKT_COMPLETE,     /* origin -> target: access epoch closed after `arg` operations */
    FR_PKT_FENCE_DONE,   /* origin -> target: fence number `seq` closed after `arg` operations */
    FR_PKT_TYPE_DROP,    /* origin -> target: forget `arg` datatype ids (uint64) that follow */
    FR_PKT_BUMP,         /* origin -> owner: once `arg` operations from me are done, bump counter
                            `dtype` (ext/syncobj key); with FR_PKTF_ACK answer BUMP_ACK(`seq`) */
    FR_PKT_BUMP_ACK,     /* owner -> origin: BUMP number `seq` applied, my operations 1..`arg` are
                            complete (`op` != 0: the bump was dropped) */
    FR_PKT_COUNTER_READ, /* origin -> owner: send the value of counter `dtype` as read `seq` */
    FR_PKT_COUNTER_VALUE,/* owner -> origin: read `seq` found `arg` (`op` != 0: no such counter) */
    FR_PKT_GACC,         /* origin -> target: combine the inline data with op (none for MPI_NO_OP)
                            and send the data_len bytes before back on data_tag */
    FR_PKT_CAS,          /* origin -> target: one element; inline: the new value, then the
                            comparand; the value before goes back on data_tag */
    FR_PKT_REGIONS_READ, /* origin -> target of a dynamic window: send the memory attached there
                            (fr_region array) on data_tag */
    FR_PKT_LOCK_ASK,     /* origin -> target: answer LOCK_GRANTED once my LOCK is granted */
    FR_PKT_LOCK_GRANTED, /* target -> origin: your LOCK (FR_PKTF_TELL, or LOCK_ASK) is granted */
    FR_PKT_LOCK_TRY,     /* origin -> target: a shared lock if it is free for one right now, never
                            queued (MPI_Win_lock_all); answer LOCK_TRIED */
    FR_PKT_LOCK_TRIED,   /* target -> origin: `arg` 1: your LOCK_TRY holds the lock, 0: refused */
    FR_PKT_ANSWER,       /* target -> origin: the data_len bytes inline answer your GET, GACC or
                            CAS sent with FR_PKTF_ANSWER and this data_tag */
} fr_pkt_type;

enum {
    FR_PKTF_INLINE = 1,  /* packed data follows the description */
    FR_PKTF_TYPEDESC = 2,/* the target datatype's description follows the header */
    FR_PKTF_NOCHECK = 4, /* UNLOCK of an epoch opened with MPI_MODE_NOCHECK: no lock was taken */
    FR_PKTF_ACK = 8,     /* BUMP: acknowledge it */
    FR_PKTF_NOBUMP = 16, /* BUMP: only acknowledge, once the operations are done */
    FR_PKTF_TELL = 32,   /* LOCK: answer LOCK_GRANTED at the grant */
    FR_PKTF_ANSWER = 64, /* GET, GACC, CAS: send the data back in an ANSWER packet through the
                            carrier of batches, not as a message on data_tag */
    FR_PKTF_ASKED = 128, /* GET with FR_PKTF_ANSWER: the origin may take it back unserved; the
                            target serves it only if it claims ask `arg` first (direct.h), and
                            never counts it among the origin's operations */
};

typedef struct fr_pkt {
    uint8_t type;        /* fr_pkt_type */
    uint8_t epoch;       /* fr_epoch of an operation */
    uint8_t flags;       /* FR_PKTF_* */
    uint8_t lock_type;   /* LOCK: MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    int32_t op;          /* ACC, GACC: operation index (fr_op_index) */
    int32_t count;       /* target count */
    uint32_t data_tag;   /* tag of the separate data message when not inline */
    int64_t disp;        /* target displacement, in the target's displacement units */
    uint64_t dtype;      /* target datatype id (dtype.h) */
    uint64_t arg;        /* UNLOCK/COMPLETE/FENCE_DONE: my cumulative operation count to the
                            receiver; TYPE_DROP: number of ids; GET with FR_PKTF_ASKED: the
                            number of the ask */
    uint64_t seq;        /* fence-epoch operation, FENCE_DONE: number of the closing fence */
    uint64_t desc_len;   /* bytes of datatype description (or TYPE_DROP id list) */
    uint64_t data_len;   /* bytes of packed data */
} fr_pkt;

static inline uint64_t fr_pkt_align(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* Bytes of inline data: data_len, twice for CAS (the new value and the comparand). */
static inline uint64_t fr_pkt_inline_len(const fr_pkt *p)
{
    if (!(p->flags & FR_PKTF_INLINE))
        return 0;
    return p->type == FR_PKT_CAS ? 2 * p->data_len : p->data_len;
}

/* Bytes of the packet after its header: the description and the inline data. */
static inline uint64_t fr_pkt_body_len(const fr_pkt *p)
{
    return fr_pkt_align(p->desc_len) + fr_pkt_align(fr_pkt_inline_len(p));
}

/* How a header travels. Compact in MPI messages, whose size decides the library's path for
 * them; as the struct itself through a node's rings, where the bytes saved cost more to encode
 * and decode than they save (a fence over a ring, 2 ranks: 0.80-0.83 us a step compact,
 * 0.67-0.70 as the struct). Each transport names its form (fr_transport.form), and the carrier
 * of a pair is fixed for the window's life (tp_shm.c), so a batch is read in the form its
 * producer wrote. */
typedef enum fr_pkt_form {
    FR_PKT_STRUCT,  /* the fr_pkt as it is in memory */
    FR_PKT_COMPACT  /* four bytes, then 9 varints of 1 to 10 bytes, padded to a multiple of 8 */
} fr_pkt_form;
#define FR_PKT_WIRE_MIN 16 /* bytes of the shortest header, in either form */
#define FR_PKT_WIRE_MAX 96 /* ... of the longest */
/* Write h's header at out (room for FR_PKT_WIRE_MAX bytes); returns the bytes written. */
size_t fr_pkt_encode(fr_pkt_form form, const fr_pkt *h, unsigned char *out);
/* Read a header from the avail bytes at in; returns its length, or 0 if they hold none. */
size_t fr_pkt_decode(fr_pkt_form form, const unsigned char *in, size_t avail, fr_pkt *h);

#endif
