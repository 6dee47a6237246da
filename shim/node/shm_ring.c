/* shm_ring.c - the single-producer, single-consumer message ring (see shm_ring.h). */
#include "shm_ring.h"
#include "core/fr.h"

#include <stdlib.h>
#include <string.h>

#define FR_RING_MAGIC 0x676e6952616d7266ull /* "frmaRing" */
/* Fragments smaller than this are not worth a record: skip to the start of the area instead. */
#define FR_RING_MIN_FRAG 256

typedef struct rec {
    uint32_t len;      /* bytes of message that follow */
    uint32_t flags;
} rec;

enum { REC_SKIP = 1, /* nothing here: continue at offset 0 */
       REC_MORE = 2  /* a fragment: the message goes on in the next record */ };

_Static_assert(sizeof(fr_ring_ctl) == 3 * FR_RING_LINE, "ring control is three cache lines");
_Static_assert(sizeof(rec) == 8, "record header is 8 bytes");

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t fr_ring_capacity(size_t want)
{
    size_t cap = FR_RING_MIN;
    while (cap < want && cap < FR_RING_MAX)
        cap <<= 1;
    return cap;
}

size_t fr_ring_footprint(size_t cap) { return sizeof(fr_ring_ctl) + cap; }

void fr_ring_init(fr_ring_rx *rx, void *mem, size_t cap)
{
    fr_ring_ctl *c = mem;
    memset(c, 0, sizeof *c);
    c->magic = FR_RING_MAGIC;
    c->cap = cap;
    *rx = (fr_ring_rx){.ctl = c, .data = (unsigned char *)mem + sizeof *c, .cap = cap};
}

void fr_ring_bind(fr_ring_rx *rx, void *mem, size_t cap)
{
    *rx = (fr_ring_rx){.ctl = mem, .data = (unsigned char *)mem + sizeof(fr_ring_ctl), .cap = cap};
}

void fr_ring_format(void *mem, size_t cap)
{
    fr_ring_ctl *c = mem; /* head, tail and the producer flag are 0 already */
    c->magic = FR_RING_MAGIC;
    c->cap = cap;
}

void fr_ring_rx_free(fr_ring_rx *rx)
{
    free(rx->frag);
    rx->frag = NULL;
    rx->frag_len = rx->frag_cap = 0;
}

int fr_ring_has_producer(const fr_ring_rx *rx)
{
    /* acquire: pairs with the producer's release in fr_ring_attach, after which magic and cap
     * (written by me, or by the producer before it) are visible. */
    if (AO_load_acquire(&rx->ctl->producer) == 0)
        return 0;
    return rx->ctl->magic == FR_RING_MAGIC && rx->ctl->cap == rx->cap ? 1 : -1;
}

int fr_ring_attach(fr_ring_tx *tx, void *mem, size_t avail)
{
    fr_ring_ctl *c = mem;
    if (avail < sizeof *c || c->magic != FR_RING_MAGIC)
        return -1;
    size_t cap = (size_t)c->cap;
    if (cap < FR_RING_MIN || cap > FR_RING_MAX || (cap & (cap - 1)) ||
        fr_ring_footprint(cap) > avail)
        return -1;
    AO_t tail = c->tail, head = c->head; /* both 0 for a fresh ring */
    *tx = (fr_ring_tx){.ctl = c, .data = (unsigned char *)mem + sizeof *c, .cap = cap,
                       .tail = tail, .head = head};
    /* release: the consumer that sees the flag sees a producer bound to this ring. */
    AO_store_release(&c->producer, 1);
    return 0;
}

/* A record of len bytes at pos; a SKIP record (bytes NULL) only claims the space. */
static void put_rec(fr_ring_tx *tx, size_t pos, uint32_t flags, const void *bytes, size_t len)
{
    rec h = {(uint32_t)len, flags};
    memcpy(tx->data + pos, &h, sizeof h);
    if (bytes && len)
        memcpy(tx->data + pos + sizeof h, bytes, len);
    tx->tail += sizeof h + align8(len);
}

int fr_ring_has_room(fr_ring_tx *tx, size_t bytes)
{
    if (tx->cap - (size_t)(tx->tail - tx->head) >= bytes)
        return 1;
    tx->head = AO_load_acquire(&tx->ctl->head); /* as fr_ring_put reads it */
    return tx->cap - (size_t)(tx->tail - tx->head) >= bytes;
}

int fr_ring_put(fr_ring_tx *tx, const void *msg, size_t len, size_t *done)
{
    const unsigned char *src = msg;
    const size_t mask = tx->cap - 1;
    AO_t start = tx->tail;
    int whole = 0, fresh = 0;
    while (*done < len) {
        size_t rest = len - *done;
        size_t want = sizeof(rec) + align8(rest); /* the whole rest as one record */
        size_t pos = (size_t)tx->tail & mask, contig = tx->cap - pos;
        size_t space = tx->cap - (size_t)(tx->tail - tx->head);
        size_t room = contig < space ? contig : space;
        if (want <= room) { /* the common case: one record, no copy at the consumer */
            put_rec(tx, pos, 0, src + *done, rest);
            *done = len;
            whole = 1;
            break;
        }
        if (!fresh && space < tx->cap) {
            /* The head I remember is too old to fit the message: read it again (only then, so
             * a flowing ring does not pull the consumer's line on every message).
             * acquire: the consumer's reads of the space it released happen before my writes. */
            tx->head = AO_load_acquire(&tx->ctl->head);
            fresh = 1;
            continue;
        }
        fresh = 0;
        /* Up to half the ring a message never needs cutting: once the consumer has drained,
         * it fits whole (after at most one skip). Larger ones go in fragments as room opens. */
        int small = want <= tx->cap / 2;
        if (contig < want && contig <= space &&
            (small || want <= space - contig || contig < sizeof(rec) + FR_RING_MIN_FRAG)) {
            /* The end of the area is too short, and either the message fits at the start or the
             * end is too small for a useful fragment: skip to offset 0. */
            put_rec(tx, pos, REC_SKIP, NULL, contig - sizeof(rec));
            continue;
        }
        if (small || room < sizeof(rec) + FR_RING_MIN_FRAG)
            break; /* full: the consumer has to make room */
        size_t frag = room - sizeof(rec); /* a multiple of 8, and less than rest (want > room) */
        put_rec(tx, pos, REC_MORE, src + *done, frag);
        *done += frag;
    }
    if (tx->tail != start)
        /* release: every record byte written above is visible before the new tail. */
        AO_store_release(&tx->ctl->tail, tx->tail);
    return whole;
}

static void frag_add(fr_ring_rx *rx, const unsigned char *bytes, size_t len)
{
    if (rx->frag_len + len > rx->frag_cap)
        fr_grow(&rx->frag, &rx->frag_cap, rx->frag_len + len, 1);
    memcpy(rx->frag + rx->frag_len, bytes, len);
    rx->frag_len += len;
}

/* Release the record space up to rx->head to the producer. */
static void release(fr_ring_rx *rx)
{
    /* release: my reads of the records before head are done before the producer reuses them. */
    AO_store_release(&rx->ctl->head, rx->head);
}

int fr_ring_poll(fr_ring_rx *rx, fr_ring_fn fn, void *arg)
{
    /* acquire: the records before tail are visible before I read them. One snapshot per poll,
     * so a producer that keeps writing cannot hold the consumer here forever. */
    AO_t tail = AO_load_acquire(&rx->ctl->tail);
    const size_t mask = rx->cap - 1;
    int n = 0;
    while (rx->head != tail) {
        size_t pos = (size_t)rx->head & mask;
        rec h;
        memcpy(&h, rx->data + pos, sizeof h); /* read once: the checks and the use agree */
        size_t size = sizeof h + align8(h.len);
        if (size > rx->cap - pos || size > (size_t)(tail - rx->head) ||
            (h.flags & ~(uint32_t)(REC_SKIP | REC_MORE)) ||
            ((h.flags & REC_SKIP) && pos + size != rx->cap))
            return -1;
        const unsigned char *bytes = rx->data + pos + sizeof h;
        if (h.flags & REC_SKIP) {
            rx->head += size;
            release(rx);
        } else if ((h.flags & REC_MORE) || rx->frag_len) {
            frag_add(rx, bytes, h.len);
            rx->head += size; /* copied out: give the space back before the handler runs */
            release(rx);
            if (!(h.flags & REC_MORE)) {
                size_t mlen = rx->frag_len;
                rx->frag_len = 0;
                fn(arg, rx->frag, mlen);
                n++;
                if (rx->frag_cap > ((size_t)1 << 20)) /* do not keep a huge buffer for good */
                    fr_ring_rx_free(rx);
            }
        } else {
            fn(arg, bytes, h.len); /* straight from the ring: the space is released after */
            rx->head += size;
            release(rx);
            n++;
        }
    }
    return n;
}
