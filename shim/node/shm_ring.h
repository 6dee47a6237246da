/* shm_ring.h - a single-producer, single-consumer ring of messages in shared memory: the packet
 * channel from one process to another on the same node (tp_shm.c).
 *
 * Seed 003 section 5 replaces a locked multi-writer queue per receiver by one lock-free
 * single-writer/single-reader packet slot per ordered pair of processes; its section 9.1 proposes
 * many slots used cyclically, so that a sender backs off only when all of them are in use. This
 * ring is that: a byte area in which the producer appends records and the consumer releases them
 * in order, so neither ever takes a lock or waits for the other.
 *
 * Layout (fr_ring_footprint bytes; the consumer formats it, or, when it leaves a fresh zero-filled
 * ring untouched until used (fr_ring_bind), the producer does on attaching (fr_ring_format), with
 * the capacity the consumer chose; the consumer then checks that capacity before reading):
 *   line 0   magic, capacity, producer-attached flag   (written once each, before use)
 *   line 1   tail: bytes the producer has published    (written by the producer only)
 *   line 2   head: bytes the consumer has released     (written by the consumer only)
 *   data     capacity bytes, a power of two
 * head and tail only grow (modulo the word size); a record lives at counter mod capacity. Each
 * counter has a cache line of its own, so the producer's stores to tail never evict the line
 * the consumer writes, and the reverse.
 *
 * Records: an 8-byte header {length, flags}, then the bytes, padded to 8. A record never wraps:
 * where the rest of the area is too small, the producer writes a SKIP record covering it and
 * continues at offset 0, so the consumer can hand a whole message to its caller straight out of
 * the ring (no copy). A message of up to half the capacity always travels whole: it waits for
 * room if need be (once drained, the ring fits it after at most one skip). A larger one is cut
 * into fragments as room opens (MORE on all but the last); the consumer reassembles those in a
 * buffer of its own.
 *
 * Memory ordering (libatomic_ops; the ordering points are the only atomics):
 *   producer: write record bytes, then store tail with release   -> the consumer that sees the
 *             new tail sees the bytes;
 *   consumer: load tail with acquire, then read the records;
 *             done reading a record, store head with release      -> the producer that sees the
 *             new head cannot overwrite bytes the consumer is still reading;
 *   producer: load head with acquire, then write into the freed space.
 * The producer reads head only when the space it remembers is not enough, and the consumer
 * reads tail once per poll, so an idle ring costs one load of a line that stays in cache.
 *
 * Nothing here locks, allocates shared memory or calls MPI; the caller owns both handles. */
#ifndef FR_SHM_RING_H
#define FR_SHM_RING_H

#include <stddef.h>
#include <stdint.h>

#include <atomic_ops.h>

#define FR_RING_LINE 64
#define FR_RING_MIN ((size_t)1 << 10)  /* smallest capacity (bytes of data area) */
#define FR_RING_MAX ((size_t)1 << 30)  /* largest: record lengths fit 32 bits */

typedef struct fr_ring_ctl {
    uint64_t magic;                   /* FR_RING_MAGIC once formatted */
    uint64_t cap;                     /* bytes of the data area */
    volatile AO_t producer;           /* 1 once a producer attached */
    char pad0[FR_RING_LINE - 2 * sizeof(uint64_t) - sizeof(AO_t)];
    volatile AO_t tail;
    char pad1[FR_RING_LINE - sizeof(AO_t)];
    volatile AO_t head;
    char pad2[FR_RING_LINE - sizeof(AO_t)];
} fr_ring_ctl;

/* The producer's handle (in its private memory). */
typedef struct fr_ring_tx {
    fr_ring_ctl *ctl;
    unsigned char *data;
    size_t cap;        /* read once at attach: the shared copy is not trusted again */
    AO_t tail;         /* what I published (only I write ctl->tail) */
    AO_t head;         /* the consumer's head as I last read it */
} fr_ring_tx;

/* The consumer's handle. */
typedef struct fr_ring_rx {
    fr_ring_ctl *ctl;
    unsigned char *data;
    size_t cap;
    AO_t head;         /* what I released (only I write ctl->head) */
    unsigned char *frag; /* a fragmented message being reassembled */
    size_t frag_len, frag_cap;
} fr_ring_rx;

/* The capacity a ring gets when `want` bytes are asked for: a power of two in
 * [FR_RING_MIN, FR_RING_MAX]. */
size_t fr_ring_capacity(size_t want);
/* Bytes a ring of capacity cap occupies (a multiple of FR_RING_LINE). */
size_t fr_ring_footprint(size_t cap);

/* Consumer: format the ring at mem (fr_ring_footprint(cap) bytes, FR_RING_LINE aligned, zeroed
 * or not) and bind rx to it. cap must come from fr_ring_capacity. */
void fr_ring_init(fr_ring_rx *rx, void *mem, size_t cap);
/* Consumer: bind rx to the zero-filled ring at mem without writing (nor touching) it: its
 * producer formats it with cap (fr_ring_format) when it first attaches. */
void fr_ring_bind(fr_ring_rx *rx, void *mem, size_t cap);
/* Consumer: release the reassembly buffer (the ring memory belongs to the caller). */
void fr_ring_rx_free(fr_ring_rx *rx);
/* Consumer: has a producer attached to the ring? 1: yes, and the ring holds my format (magic, my
 * capacity); 0: no producer yet; -1: a producer attached to a ring of another format. */
int fr_ring_has_producer(const fr_ring_rx *rx);

/* Producer: format the zero-filled ring at mem (fr_ring_footprint(cap) bytes) that its consumer
 * bound with fr_ring_bind, cap being what the consumer published; then fr_ring_attach. */
void fr_ring_format(void *mem, size_t cap);

/* Producer: bind tx to the ring its consumer formatted at mem, of which `avail` bytes are
 * mapped. Returns 0, or -1 if mem holds no ring or one larger than avail. */
int fr_ring_attach(fr_ring_tx *tx, void *mem, size_t avail);

/* Producer: append the message msg[0, len) (len > 0), continuing at *done (0 for a new message).
 * Writes as much as fits now, then publishes it; returns 1 when the whole message is in the
 * ring, 0 when it filled first (call again with the same *done once the consumer made room).
 * Never waits. */
int fr_ring_put(fr_ring_tx *tx, const void *msg, size_t len, size_t *done);

/* Producer: are at least `bytes` of the ring free now (by the consumer's head as last read, or
 * read again when that says no)? */
int fr_ring_has_room(fr_ring_tx *tx, size_t bytes);

/* Consumer: hand every whole message published so far to fn, in order; msg is valid only during
 * the call (it may point into the ring). Returns the number handed over, or -1 if the ring holds
 * a record that cannot be right (the producer broke the format). */
typedef void (*fr_ring_fn)(void *arg, const unsigned char *msg, size_t len);
int fr_ring_poll(fr_ring_rx *rx, fr_ring_fn fn, void *arg);

#endif
