/* am_inbox.c - where batches sent as messages arrive: a receive posted in advance.
 *
 * A probe for an unknown message (MPI_Improbe, then MPI_Mrecv) makes Open MPI build and match a
 * request on every poll, most of which find nothing: it was half the time of a short epoch over
 * the message transport. A persistent receive (any source, FR_TAG_PKT, FLEXRMA_AM_INBOX bytes)
 * is only tested instead, and restarted for the next batch (a restart skips the request
 * allocation and datatype setup of a new MPI_Irecv). The restart is lazy, by the next poll after
 * a batch came: the wait that received the batch returns sooner, and in an exchange the next
 * poll comes after this process sent its own batch, while the reply is on its way (a batch that
 * comes first waits as an unexpected message meanwhile, in order). A batch too big for the inbox
 * comes as its length first (a uint64_t, shorter than any packet), then itself with
 * FR_TAG_PKT_BIG: the length arrives in order with the origin's other batches, and the batch is
 * received right then from that origin, so per-origin order holds. */
#include "core/next.h"
#include "progress/isend.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(uint64_t) < FR_PKT_WIRE_MIN, "a length message must not look like a batch");

struct fr_inbox {
    MPI_Request req;  /* a persistent receive: starting it costs less than a new MPI_Irecv */
    int posted;       /* req is started and not yet complete */
    int polling;      /* a poll is running: a nested one (from a packet's handler) returns */
    unsigned char *buf;
};

static void post(struct fr_inbox *in)
{
    FR_CHECK_MPI(FR_NEXT(Start)(&in->req));
    in->posted = 1;
}

void fr_am_inbox_open(fr_win *w)
{
    if (w->am_rx == 0 || w->inbox)
        return;
    struct fr_inbox *in = fr_xcalloc(1, sizeof *in);
    in->buf = fr_xmalloc(fr_opt.am_inbox);
    FR_CHECK_MPI(PMPI_Recv_init(in->buf, (int)fr_opt.am_inbox, MPI_BYTE, MPI_ANY_SOURCE,
                                FR_TAG_PKT, w->comm, &in->req));
    w->inbox = in;
    post(in);
}

/* Run what one completed receive brought. */
static void arrived(fr_win *w, const unsigned char *buf, const MPI_Status *st)
{
    int len = 0;
    PMPI_Get_count(st, MPI_BYTE, &len);
    if (len != (int)sizeof(uint64_t)) {
        fr_am_dispatch(w, st->MPI_SOURCE, fr_tp_am.form, buf, (size_t)len);
        return;
    }
    uint64_t big;
    memcpy(&big, buf, sizeof big);
    if (big > INT32_MAX)
        fr_fatal("rank %d announced a batch of %llu bytes", st->MPI_SOURCE,
                 (unsigned long long)big);
    unsigned char *body = fr_xmalloc((size_t)big);
    FR_CHECK_MPI(fr_isend_recv(body, (int)big, MPI_BYTE, st->MPI_SOURCE, FR_TAG_PKT_BIG,
                               w->comm, MPI_STATUS_IGNORE));
    fr_am_dispatch(w, st->MPI_SOURCE, fr_tp_am.form, body, (size_t)big);
    free(body);
}

int fr_am_poll(fr_win *w)
{
    struct fr_inbox *in = w->inbox;
    if (!in || in->polling)
        return 0; /* no member sends me messages, or a poll of w is running further up */
    if (!in->posted)
        post(in);
    int flag = 0;
    MPI_Status st;
    FR_CHECK_MPI(FR_NEXT(Test)(&in->req, &flag, &st));
    if (flag) { /* one batch per poll: the caller polls again while there are events */
        in->posted = 0;
        in->polling = 1;
        arrived(w, in->buf, &st);
        in->polling = 0;
    }
    return flag;
}

void fr_am_inbox_close(fr_win *w)
{
    struct fr_inbox *in = w->inbox;
    if (!in)
        return;
    MPI_Status st;
    int cancelled = 0;
    if (!in->posted) /* a batch may have come since the last poll */
        post(in);
    FR_CHECK_MPI(FR_NEXT(Cancel)(&in->req));
    FR_CHECK_MPI(FR_NEXT(Wait)(&in->req, &st));
    FR_CHECK_MPI(PMPI_Test_cancelled(&st, &cancelled));
    FR_CHECK_MPI(FR_NEXT(Request_free)(&in->req));
    w->inbox = NULL;
    if (!cancelled) /* a batch beat the cancel: it is still one to run */
        arrived(w, in->buf, &st);
    free(in->buf);
    free(in);
}
