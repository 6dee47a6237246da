/* test_packet_wire.c - a packet header's forms (transport/packet_wire.c) in one process: in
 * either form, headers with every field at its extremes come back equal; in the compact one,
 * each encoding is a multiple of 8 bytes between FR_PKT_WIRE_MIN and FR_PKT_WIRE_MAX, the
 * packets of a counter step (an 8-byte put and its bump) take 16 bytes of header each, and a
 * decoder handed a cut header, a varint longer than 64 bits or a field wider than its struct
 * member finds no header (returns 0) instead of reading on (nor does one handed a struct
 * header one byte short). Run with mpirun -np 1. */
#include "transport/packet.h"
#include "tap.h"

#include <mpi.h>

#include <stdint.h>
#include <string.h>

static int same(const fr_pkt *a, const fr_pkt *b)
{
    return a->type == b->type && a->epoch == b->epoch && a->flags == b->flags &&
           a->lock_type == b->lock_type && a->op == b->op && a->count == b->count &&
           a->data_tag == b->data_tag && a->disp == b->disp && a->dtype == b->dtype &&
           a->arg == b->arg && a->seq == b->seq && a->desc_len == b->desc_len &&
           a->data_len == b->data_len;
}

static const fr_pkt cases[] = {
    {0},
    {.type = FR_PKT_PUT, .epoch = 3, .flags = FR_PKTF_INLINE, .count = 1, .disp = 8, .dtype = 5,
     .data_len = 8},
    {.type = 255, .epoch = 255, .flags = 255, .lock_type = 255, .op = INT32_MAX,
     .count = INT32_MAX, .data_tag = UINT32_MAX, .disp = INT64_MAX, .dtype = UINT64_MAX,
     .arg = UINT64_MAX, .seq = UINT64_MAX, .desc_len = UINT64_MAX, .data_len = UINT64_MAX},
    {.type = FR_PKT_ACC, .op = INT32_MIN, .count = INT32_MIN, .disp = INT64_MIN},
    {.type = FR_PKT_GET, .op = -1, .count = -1, .disp = -1, .dtype = 1024, .data_tag = 17},
    {.type = FR_PKT_BUMP, .flags = FR_PKTF_ACK, .dtype = (uint64_t)4000 << 32 | 77,
     .arg = 1u << 20, .seq = 300},
};
#define NCASES (int)(sizeof cases / sizeof *cases)
#define CASE_CHECKS (4 * NCASES)

static void test_round_trip(void)
{
    for (int i = 0; i < NCASES; i++) {
        unsigned char buf[FR_PKT_WIRE_MAX + 8];
        memset(buf, 0xa5, sizeof buf);
        size_t n = fr_pkt_encode(FR_PKT_COMPACT, &cases[i], buf);
        ok(n % 8 == 0 && n >= FR_PKT_WIRE_MIN && n <= FR_PKT_WIRE_MAX,
           "case %d: %zu bytes, a multiple of 8 within the bounds", i, n);
        fr_pkt back;
        memset(&back, 0x5a, sizeof back);
        is_int((long long)fr_pkt_decode(FR_PKT_COMPACT, buf, n, &back), (long long)n,
               "case %d: decoded from exactly the bytes written", i);
        ok(same(&back, &cases[i]), "case %d: every field comes back", i);
        memset(&back, 0x5a, sizeof back);
        ok(fr_pkt_encode(FR_PKT_STRUCT, &cases[i], buf) == sizeof back &&
               fr_pkt_decode(FR_PKT_STRUCT, buf, sizeof back, &back) == sizeof back &&
               same(&back, &cases[i]),
           "case %d: as the struct too", i);
    }
}

#define SIZE_CHECKS 3
static void test_sizes(void)
{
    unsigned char buf[FR_PKT_WIRE_MAX];
    fr_pkt put = {.type = FR_PKT_PUT, .epoch = 4, .flags = FR_PKTF_INLINE, .count = 1,
                  .disp = 1000, .dtype = 11, .data_len = 8};
    fr_pkt bump = {.type = FR_PKT_BUMP, .dtype = 3, .arg = 100000};
    fr_pkt complete = {.type = FR_PKT_COMPLETE, .arg = 1u << 20};
    fr_pkt_form c = FR_PKT_COMPACT;
    is_int((long long)fr_pkt_encode(c, &put, buf), 16, "an 8-byte put's header: 16 bytes");
    is_int((long long)fr_pkt_encode(c, &bump, buf), 16, "a bump's header: 16 bytes");
    is_int((long long)fr_pkt_encode(c, &complete, buf), 16, "a COMPLETE's header: 16 bytes");
}

#define BAD_CHECKS 6
static void test_malformed(void)
{
    unsigned char buf[FR_PKT_WIRE_MAX + 16];
    fr_pkt back;
    size_t n = fr_pkt_encode(FR_PKT_COMPACT, &cases[2], buf); /* every varint at its longest */
    int cut_found = 0;
    for (size_t avail = 0; avail < n; avail++)
        cut_found |= fr_pkt_decode(FR_PKT_COMPACT, buf, avail, &back) != 0;
    ok(!cut_found, "a header cut anywhere short of its %zu bytes is no header", n);
    is_int((long long)fr_pkt_decode(FR_PKT_STRUCT, buf, sizeof(fr_pkt) - 1, &back), 0,
           "a struct header one byte short is no header");

    /* 4 bytes, then a varint of 11 bytes (all with the continuation bit) */
    memset(buf, 0, sizeof buf);
    memset(buf + 4, 0xff, 11);
    is_int((long long)fr_pkt_decode(FR_PKT_COMPACT, buf, sizeof buf, &back), 0,
           "a varint longer than 10 bytes is refused");

    /* op = 2^31 (zigzag 2^32): wider than int32_t */
    memset(buf, 0, sizeof buf);
    unsigned char big[] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^32 */
    memcpy(buf + 4, big, sizeof big);
    is_int((long long)fr_pkt_decode(FR_PKT_COMPACT, buf, sizeof buf, &back), 0,
           "an op beyond int32 is refused");
    memset(buf, 0, sizeof buf);
    memcpy(buf + 5, big, sizeof big); /* count */
    is_int((long long)fr_pkt_decode(FR_PKT_COMPACT, buf, sizeof buf, &back), 0,
           "a count beyond int32 is refused");
    memset(buf, 0, sizeof buf);
    unsigned char tag[] = {0x80, 0x80, 0x80, 0x80, 0x20}; /* 2^33 */
    memcpy(buf + 6, tag, sizeof tag); /* data_tag */
    is_int((long long)fr_pkt_decode(FR_PKT_COMPACT, buf, sizeof buf, &back), 0,
           "a data_tag beyond uint32 is refused");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_plan(CASE_CHECKS + SIZE_CHECKS + BAD_CHECKS);
    test_round_trip();
    test_sizes();
    test_malformed();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
