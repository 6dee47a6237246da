/* test_shm_ring.c - the single-producer, single-consumer message ring (shm_ring.c) in one process:
 * capacities, attaching, one message straight out of the ring, many laps of wrap-around (skip
 * records), messages larger than the ring (fragments reassembled), a full ring that takes the
 * rest of a message once drained, a malformed record, and a producer and a consumer thread
 * racing over 200000 messages. Run with mpirun -np 1. */
#include "node/shm_ring.h"
#include "tap.h"

#include <mpi.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A ring in private memory: the layout and ordering are the same as in a shared segment. */
static void *ring_mem(size_t cap)
{
    void *p = NULL;
    if (posix_memalign(&p, FR_RING_LINE, fr_ring_footprint(cap)))
        abort();
    memset(p, 0xA5, fr_ring_footprint(cap)); /* init must not rely on zeroed memory */
    return p;
}

/* Message number seq of length len: bytes derived from both, so any mix-up shows. */
static void fill(unsigned char *m, size_t len, unsigned seq)
{
    for (size_t i = 0; i < len; i++)
        m[i] = (unsigned char)(seq * 131u + i * 7u + (i >> 8));
}

static int check(const unsigned char *m, size_t len, unsigned seq)
{
    for (size_t i = 0; i < len; i++)
        if (m[i] != (unsigned char)(seq * 131u + i * 7u + (i >> 8)))
            return 0;
    return 1;
}

/* What the consumer saw. */
typedef struct seen {
    unsigned next;           /* number of the next message expected */
    size_t (*len_of)(unsigned seq);
    int bad;                 /* messages with a wrong length or content */
    int in_ring, copied;     /* handed over straight from the ring / reassembled */
    const unsigned char *lo, *hi; /* the ring's data area */
} seen;

static void on_msg(void *arg, const unsigned char *msg, size_t len)
{
    seen *s = arg;
    if (len != s->len_of(s->next) || !check(msg, len, s->next))
        s->bad++;
    if (msg >= s->lo && msg + len <= s->hi)
        s->in_ring++;
    else
        s->copied++;
    s->next++;
}

/* One message, expected to be message 0 of its length. */
typedef struct one {
    size_t len;
    int good;
    const unsigned char *at;
} one;

static void on_one(void *arg, const unsigned char *msg, size_t len)
{
    one *got = arg;
    got->len = len;
    got->good = check(msg, len, 0);
    got->at = msg;
}

static size_t len_small(unsigned seq) { return 1 + (seq * 37u) % 300; }
static size_t len_mixed(unsigned seq)
{
    return seq % 5 == 4 ? 2500 + seq % 777 : 1 + (seq * 53u) % 700;
}

#define BASIC_CHECKS 12
static void test_basic(void)
{
    is_int((long long)fr_ring_capacity(0), 1024, "capacity: at least 1 KiB");
    is_int((long long)fr_ring_capacity(1025), 2048, "capacity: rounded up to a power of two");
    is_int((long long)fr_ring_capacity((size_t)1 << 40), 1 << 30, "capacity: at most 1 GiB");
    is_int((long long)fr_ring_footprint(4096) % FR_RING_LINE, 0, "footprint: whole cache lines");

    size_t cap = 1024;
    void *mem = ring_mem(cap);
    fr_ring_rx rx;
    fr_ring_tx tx;
    fr_ring_init(&rx, mem, cap);
    ok(!fr_ring_has_producer(&rx), "fresh ring: no producer");
    ok(fr_ring_attach(&tx, mem, fr_ring_footprint(cap) - 8) != 0,
       "attach refuses a ring larger than the mapped bytes");
    ok(fr_ring_attach(&tx, mem, fr_ring_footprint(cap)) == 0 && fr_ring_has_producer(&rx),
       "attach; the consumer sees the producer");

    unsigned char m[13];
    fill(m, sizeof m, 0);
    size_t done = 0;
    ok(fr_ring_put(&tx, m, sizeof m, &done) == 1 && done == sizeof m, "put 13 bytes");
    one got = {0};
    int n = fr_ring_poll(&rx, on_one, &got);
    ok(n == 1 && got.len == 13 && got.good, "poll hands over the message");
    ok(got.at >= rx.data && got.at < rx.data + cap, "... straight out of the ring");
    got.len = 0;
    ok(fr_ring_poll(&rx, on_one, &got) == 0 && got.len == 0, "nothing more to poll");

    memset(mem, 0, sizeof(fr_ring_ctl));
    ok(fr_ring_attach(&tx, mem, fr_ring_footprint(cap)) != 0, "attach refuses unformatted memory");
    free(mem);
}

/* Producer and consumer in turn: put until the ring is full, drain, repeat. */
static seen run_alternating(size_t cap, unsigned count, size_t (*len_of)(unsigned), int *fulls,
                            AO_t *laps)
{
    void *mem = ring_mem(cap);
    fr_ring_rx rx;
    fr_ring_tx tx;
    fr_ring_init(&rx, mem, cap);
    fr_ring_attach(&tx, mem, fr_ring_footprint(cap));
    seen s = {.len_of = len_of, .lo = rx.data, .hi = rx.data + cap};
    unsigned char *m = malloc(1 << 16);
    *fulls = 0;
    for (unsigned seq = 0; seq < count && !s.bad; seq++) {
        size_t len = len_of(seq), done = 0;
        fill(m, len, seq);
        while (!fr_ring_put(&tx, m, len, &done)) {
            (*fulls)++;
            if (tx.tail - rx.head > cap) /* never more in flight than the ring holds */
                s.bad++;
            if (fr_ring_poll(&rx, on_msg, &s) < 0)
                s.bad++;
        }
    }
    while (s.next < count && !s.bad)
        if (fr_ring_poll(&rx, on_msg, &s) <= 0)
            break;
    *laps = tx.tail / cap;
    fr_ring_rx_free(&rx);
    free(m);
    free(mem);
    return s;
}

#define WRAP_CHECKS 6
static void test_wrap_and_fragments(void)
{
    int fulls;
    AO_t laps;
    seen s = run_alternating(1024, 20000, len_small, &fulls, &laps);
    ok(s.bad == 0 && s.next == 20000,
       "20000 messages of 1-300 bytes through a 1 KiB ring, in order");
    ok(laps > 1000, "the ring wrapped around (%lu laps)", (unsigned long)laps);
    ok(fulls > 0, "and filled up (%d times)", fulls);
    ok(s.in_ring == 20000, "messages up to half the ring are never cut: all handed over straight "
       "from the ring (%d reassembled)", s.copied);

    s = run_alternating(2048, 5000, len_mixed, &fulls, &laps);
    ok(s.bad == 0 && s.next == 5000,
       "5000 messages, every fifth larger than the 2 KiB ring, in order");
    ok(s.copied >= 1000, "the large ones were cut into fragments and reassembled (%d)", s.copied);
}

#define FULL_CHECKS 9
static void test_full(void)
{
    size_t cap = 1024;
    void *mem = ring_mem(cap);
    fr_ring_rx rx;
    fr_ring_tx tx;
    fr_ring_init(&rx, mem, cap);
    fr_ring_attach(&tx, mem, fr_ring_footprint(cap));
    unsigned char m[5000];
    fill(m, sizeof m, 0);
    ok(fr_ring_has_room(&tx, cap) && !fr_ring_has_room(&tx, cap + 1),
       "an empty ring has room for its capacity, and no more");
    size_t done = 0;
    int r = fr_ring_put(&tx, m, sizeof m, &done);
    ok(!fr_ring_has_room(&tx, cap / 2), "a full ring has no room for half of it");
    ok(r == 0 && done > 0 && done < cap,
       "a 5000-byte message: the first fragment fills the ring (%zu)", done);
    size_t before = done;
    ok(fr_ring_put(&tx, m, sizeof m, &done) == 0 && done == before,
       "full: nothing more goes in until the consumer polls");
    one got = {0};
    ok(fr_ring_poll(&rx, on_one, &got) == 0 && got.len == 0,
       "an incomplete message is not handed over");
    int rounds = 0;
    while (!fr_ring_put(&tx, m, sizeof m, &done) && rounds < 100) {
        fr_ring_poll(&rx, on_one, &got);
        rounds++;
    }
    ok(done == sizeof m, "the rest went in as the consumer drained (%d rounds)", rounds);
    (void)fr_ring_poll(&rx, on_one, &got);
    ok(fr_ring_has_room(&tx, cap), "once drained, the producer sees the room again (it reads "
                                   "the consumer's head anew)");
    ok(got.len == 5000 && got.good && (got.at < rx.data || got.at >= rx.data + cap),
       "the consumer reassembled the 5000 bytes in a buffer of its own");

    /* A record that cannot be right: length past the end of the area. */
    done = 0;
    fr_ring_put(&tx, m, 16, &done);
    size_t pos = (size_t)rx.head & (cap - 1);
    uint32_t huge = (uint32_t)cap;
    memcpy(rx.data + pos, &huge, sizeof huge);
    ok(fr_ring_poll(&rx, on_one, &got) == -1, "a malformed record is reported");
    fr_ring_rx_free(&rx);
    free(mem);
}

/* ---- two threads ---- */

typedef struct race {
    fr_ring_tx tx;
    fr_ring_rx rx;
    unsigned count;
} race;

static size_t len_race(unsigned seq)
{
    return seq % 97 == 0 ? 3000 + seq % 1000 : 1 + (seq * 29u) % 200;
}

static void *producer(void *arg)
{
    race *r = arg;
    unsigned char *m = malloc(8192);
    for (unsigned seq = 0; seq < r->count; seq++) {
        size_t len = len_race(seq), done = 0;
        fill(m, len, seq);
        while (!fr_ring_put(&r->tx, m, len, &done))
            ; /* spin: the consumer runs on its own thread */
    }
    free(m);
    return NULL;
}

#define RACE_CHECKS 1
static void test_threads(void)
{
    size_t cap = 4096;
    void *mem = ring_mem(cap);
    race r = {.count = 200000};
    fr_ring_init(&r.rx, mem, cap);
    fr_ring_attach(&r.tx, mem, fr_ring_footprint(cap));
    seen s = {.len_of = len_race, .lo = r.rx.data, .hi = r.rx.data + cap};
    pthread_t t;
    pthread_create(&t, NULL, producer, &r);
    while (s.next < r.count && !s.bad)
        if (fr_ring_poll(&r.rx, on_msg, &s) < 0)
            s.bad++;
    pthread_join(t, NULL);
    ok(s.bad == 0 && s.next == r.count,
       "producer and consumer threads: 200000 messages intact and in order (%d reassembled)",
       s.copied);
    fr_ring_rx_free(&r.rx);
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_plan(BASIC_CHECKS + WRAP_CHECKS + FULL_CHECKS + RACE_CHECKS);
    test_basic();
    test_wrap_and_fragments();
    test_full();
    test_threads();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
