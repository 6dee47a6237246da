/* isend.c - the held sends of the test switch FLEXRMA_TEST_JITTER (isend.h). */
#include "isend.h"
#include "core/idle.h"
#include "core/next.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* One send set aside, in the order fr_isend was called. */
typedef struct held {
    const void *buf;
    int count;
    MPI_Datatype type;
    int dest, tag;
    MPI_Comm comm;
    uint64_t since, due; /* fr_now_ns: when it was sent, when its real send may start */
    MPI_Request real;    /* the real send, once started */
    MPI_Request greq;    /* what the caller holds */
    int started;
} held;

static held *q;
static size_t nq, capq;
uint64_t fr_isend_sent;
static uint64_t rng;          /* xorshift64* state; 0: not seeded yet */
static uint64_t total_held;   /* FLEXRMA_STATS */
static uint64_t max_wait_ns;

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Per process: FLEXRMA_TEST_JITTER_SEED (the same sequence run after run) mixed with the world
 * rank, else the pid and the clock. */
static void seed(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uint64_t s = fr_opt.test_jitter_seeded ? fr_opt.test_jitter_seed
                                           : (uint64_t)getpid() ^ fr_now_ns();
    rng = splitmix(s ^ splitmix((uint64_t)rank + 1));
    if (rng == 0)
        rng = 1;
}

/* Uniform in [0, max] (the bias of the modulo does not matter here). */
static uint64_t draw(uint64_t max)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (rng * 0x2545f4914f6cdd1dull) % (max + 1);
}

static int query(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int release(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int no_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int fr_isend_jitter(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm, MPI_Request *req)
{
    if (rng == 0)
        seed();
    uint64_t now = fr_now_ns();
    uint64_t due = now + draw(fr_opt.test_jitter) * 1000;
    /* MPI's non-overtaking rule: not before the last held send with the same key. Sends are
     * started in queue order, so one with an equal due time still goes after it. */
    for (size_t i = nq; i-- > 0;) {
        const held *h = &q[i];
        if (h->dest == dest && h->tag == tag && h->comm == comm) {
            if (!h->started && h->due > due)
                due = h->due;
            break;
        }
    }
    int rc = PMPI_Grequest_start(query, release, no_cancel, NULL, req);
    if (rc != MPI_SUCCESS)
        return rc;
    fr_grow(&q, &capq, nq + 1, sizeof *q);
    q[nq++] = (held){buf, count, type, dest, tag, comm, now, due, MPI_REQUEST_NULL, *req, 0};
    total_held++;
    return MPI_SUCCESS;
}

static void start(held *h, uint64_t now)
{
    FR_CHECK_MPI(PMPI_Isend(h->buf, h->count, h->type, h->dest, h->tag, h->comm, &h->real));
    h->started = 1;
    if (now - h->since > max_wait_ns)
        max_wait_ns = now - h->since;
}

int fr_isend_poll(void)
{
    if (nq == 0)
        return 0;
    uint64_t now = fr_now_ns();
    int events = 0;
    size_t k = 0;
    for (size_t i = 0; i < nq; i++) {
        held h = q[i];
        if (!h.started && h.due <= now) {
            start(&h, now);
            events++;
        }
        if (h.started) {
            int flag = 0;
            FR_CHECK_MPI(FR_NEXT(Test)(&h.real, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                FR_CHECK_MPI(PMPI_Grequest_complete(h.greq));
                events++;
                continue;
            }
        }
        q[k++] = h;
    }
    nq = k;
    return events;
}

int fr_isend_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Status *st)
{
    if (fr_opt.test_jitter == 0)
        return FR_NEXT(Recv)(buf, count, type, src, tag, comm, st);
    MPI_Request req;
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    fr_idle idle = {0};
    for (;;) {
        int flag = 0;
        rc = FR_NEXT(Test)(&req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (fr_isend_poll() > 0)
            fr_idle_reset(&idle);
        else if (fr_idle_yield_due(&idle))
            fr_idle_give_way(&idle); /* as the library's MPI_Recv would, engine lock held */
    }
}

void fr_isend_release(MPI_Comm comm)
{
    uint64_t now = fr_now_ns();
    for (size_t i = 0; i < nq; i++)
        if (!q[i].started && q[i].comm == comm)
            start(&q[i], now);
}

int fr_isend_held(void) { return (int)nq; }

void fr_isend_stats(uint64_t *held_out, uint64_t *max_wait_us)
{
    *held_out = total_held;
    *max_wait_us = max_wait_ns / 1000;
}
