/* regions_fetch.c - dynamic windows: what an origin knows of a target's attached memory.
 *
 * An origin checks every operation against its copy of the target's region table
 * (fr_peer.known), learned lazily: only when the copy does not cover an operation does it ask
 * the target (REGIONS_READ, answered at once, never held behind an epoch) and judge again
 * against the answer. So a program that attaches first and tells its peers (MPI requires that
 * order) pays one round trip per target and region change, and an access outside every region
 * is MPI_ERR_RMA_RANGE at the origin call. A region detached after the origin learned it is
 * caught by the target's own check (am_recv.c), which refuses the operation without touching
 * memory; where the origin reaches the region directly, its slot in the target's state page
 * tells the origin of the detach at the call, and it learns again (direct.c). */
#include "direct.h"
#include "progress/isend.h"
#include "progress/progress.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

typedef struct answer_wait {
    fr_win *w;
    int target;
    int tag;
    MPI_Message msg;
    MPI_Status st;
} answer_wait;

static int answered(void *arg)
{
    answer_wait *a = arg;
    int flag = 0;
    FR_CHECK_MPI(PMPI_Improbe(a->target, a->tag, a->w->comm, &flag, &a->msg, &a->st));
    return flag;
}

static void learn(fr_win *w, int target)
{
    fr_pkt read = {.type = FR_PKT_REGIONS_READ, .data_tag = fr_am_data_tag(w, 1)};
    FR_CHECK_MPI(w->peers[target].tp->notify(w, target, &read));
    answer_wait a = {w, target, (int)read.data_tag, MPI_MESSAGE_NULL, {0}};
    fr_wait_until(answered, &a);
    int bytes = 0;
    PMPI_Get_count(&a.st, MPI_BYTE, &bytes);
    fr_region *r = fr_xmalloc((size_t)bytes + 1);
    FR_CHECK_MPI(PMPI_Mrecv(r, bytes, MPI_BYTE, &a.msg, MPI_STATUS_IGNORE));
    fr_regions_set(&w->peers[target].known, r, bytes / (int)sizeof *r);
    free(r);
    fr_direct_regions_learned(w, target); /* node peer: map what lies in its segments */
}

int fr_regions_judge(fr_win *w, int target, MPI_Aint disp, int count, const fr_dtype *dt,
                     MPI_Aint *offset)
{
    if (target == w->rank)
        return fr_win_attached_range(&w->attached, disp, count, dt, target, offset);
    MPI_Aint lo, hi;
    int rc = fr_win_span(1, disp, count, dt, offset, &lo, &hi);
    if (rc != MPI_SUCCESS || hi == lo)
        return rc;
    if (lo < 0 || !fr_regions_cover(&w->peers[target].known, (uint64_t)lo, (uint64_t)hi) ||
        !fr_direct_region_current(w, target, (uint64_t)lo, (uint64_t)hi))
        learn(w, target);
    return fr_win_attached_range(&w->peers[target].known, disp, count, dt, target, offset);
}

static void answer_sent(void *ctx, MPI_Status *st)
{
    (void)st;
    free(ctx);
}

void fr_regions_answer(fr_win *w, int src, const fr_pkt *p)
{
    size_t bytes = (size_t)w->attached.n * sizeof(fr_region);
    if (bytes > INT32_MAX)
        fr_fatal("%d attached regions exceed an MPI count", w->attached.n);
    void *copy = fr_xmalloc(bytes + 1); /* the table may change before the send completes */
    if (bytes)
        memcpy(copy, w->attached.r, bytes);
    MPI_Request req;
    FR_CHECK_MPI(fr_isend(copy, (int)bytes, MPI_BYTE, src, (int)p->data_tag, w->comm, &req));
    fr_pending_add(req, answer_sent, copy);
}
