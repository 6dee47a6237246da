/* packet_wire.c - a packet header as it travels (fr_pkt_form, packet.h).
 *
 * Compact: the four one-byte fields as they are, then the nine wider ones in declaration order,
 * each as an unsigned LEB128 varint (7 bits a byte, low first, the top bit saying more follow);
 * op, count and disp zigzag-encoded first, so small negative values stay short. Zero padding up
 * to the next multiple of 8. A field of zero costs one byte: most of a packet's fields are zero
 * or small (a put's 8-byte datatype id is a table index, its displacement a few bytes).
 * Struct: the fr_pkt's bytes. */
#include "packet.h"

#include <string.h>

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

static unsigned char *put_varint(unsigned char *out, uint64_t v)
{
    while (v >= 0x80) {
        *out++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *out++ = (unsigned char)v;
    return out;
}

/* NULL when the varint runs past end or past 10 bytes (more than 64 bits). */
static const unsigned char *get_varint(const unsigned char *in, const unsigned char *end,
                                       uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70 && in < end; shift += 7) {
        unsigned char b = *in++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return in;
        }
    }
    return NULL;
}

static size_t encode_compact(const fr_pkt *h, unsigned char *out)
{
    unsigned char *p = out;
    *p++ = h->type;
    *p++ = h->epoch;
    *p++ = h->flags;
    *p++ = h->lock_type;
    p = put_varint(p, zigzag(h->op));
    p = put_varint(p, zigzag(h->count));
    p = put_varint(p, h->data_tag);
    p = put_varint(p, zigzag(h->disp));
    p = put_varint(p, h->dtype);
    p = put_varint(p, h->arg);
    p = put_varint(p, h->seq);
    p = put_varint(p, h->desc_len);
    p = put_varint(p, h->data_len);
    size_t len = (size_t)(p - out), padded = (size_t)fr_pkt_align(len);
    memset(p, 0, padded - len);
    return padded;
}

static size_t decode_compact(const unsigned char *in, size_t avail, fr_pkt *h)
{
    const unsigned char *p = in, *end = in + avail;
    if (avail < FR_PKT_WIRE_MIN)
        return 0;
    *h = (fr_pkt){.type = p[0], .epoch = p[1], .flags = p[2], .lock_type = p[3]};
    p += 4;
    uint64_t v[9];
    for (int i = 0; i < 9; i++)
        if (!(p = get_varint(p, end, &v[i])))
            return 0;
    int64_t op = unzigzag(v[0]), count = unzigzag(v[1]);
    if (op != (int32_t)op || count != (int32_t)count || v[2] > UINT32_MAX)
        return 0;
    h->op = (int32_t)op;
    h->count = (int32_t)count;
    h->data_tag = (uint32_t)v[2];
    h->disp = unzigzag(v[3]);
    h->dtype = v[4];
    h->arg = v[5];
    h->seq = v[6];
    h->desc_len = v[7];
    h->data_len = v[8];
    size_t len = (size_t)fr_pkt_align((uint64_t)(p - in));
    return len <= avail ? len : 0;
}

_Static_assert(sizeof(fr_pkt) % 8 == 0 && sizeof(fr_pkt) >= FR_PKT_WIRE_MIN &&
                   sizeof(fr_pkt) <= FR_PKT_WIRE_MAX,
               "the struct form keeps the bounds and the body's alignment");

size_t fr_pkt_encode(fr_pkt_form form, const fr_pkt *h, unsigned char *out)
{
    if (form == FR_PKT_COMPACT)
        return encode_compact(h, out);
    memcpy(out, h, sizeof *h);
    return sizeof *h;
}

size_t fr_pkt_decode(fr_pkt_form form, const unsigned char *in, size_t avail, fr_pkt *h)
{
    if (form == FR_PKT_COMPACT)
        return decode_compact(in, avail, h);
    if (avail < sizeof *h)
        return 0;
    memcpy(h, in, sizeof *h);
    return sizeof *h;
}
