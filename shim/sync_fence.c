/* sync_fence.c - MPI_Win_fence without a barrier (seed 001 section 4.1).
 *
 * Protocol. The opening fence does nothing. RMA calls queue their operations. The closing fence:
 *   1. performs the operations whose target is this process (local copies);
 *   2. reduce-scatters the per-target operation counts: member i learns how many operations of
 *      this epoch target it. Entering the reduce-scatter is also what tells the origins that
 *      this target has finished its local accesses of the epoch, so data may now arrive;
 *   3. issues its queued operations (one batch per target);
 *   4. waits until its own operations are complete locally and the announced number of
 *      operations targeting it has completed here.
 * No barrier: a member leaves as soon as its own traffic is done.
 *
 * Memory ordering: every store into window memory is done by this process (unpack, reduce,
 * receive into the window) before its completion is counted, and counted before the fence
 * returns, so the program sees the data when MPI_Win_fence returns; no extra barrier is needed.
 *
 * MPI_MODE_NOPRECEDE skips steps 1-4 (MPI requires every member to give it, so the
 * reduce-scatter is skipped consistently). MPI_MODE_NOSUCCEED disarms the fence epoch.
 * MPI_MODE_NOSTORE and MPI_MODE_NOPUT are accepted; the message transport has no cache to
 * flush, so they change nothing.
 */
#include "entry.h"
#include "progress.h"
#include "transport.h"

#include <stdlib.h>

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

typedef struct fence_wait {
    fr_win *w;
    MPI_Request rs;  /* the reduce-scatter, until it completes */
} fence_wait;

static int reduce_scatter_done(void *arg)
{
    fence_wait *f = arg;
    int flag = 0;
    FR_CHECK_MPI(PMPI_Test(&f->rs, &flag, MPI_STATUS_IGNORE));
    return flag;
}

static int fence_complete(void *arg)
{
    fr_win *w = arg;
    return w->pending == 0 && w->fence_done >= w->fence_expected;
}

static int fence_close(fr_win *w)
{
    int me = w->rank;
    uint64_t *counts = fr_xcalloc((size_t)w->size, sizeof *counts);
    for (int t = 0; t < w->size; t++)
        counts[t] = w->peers[t].q.n; /* my own count included: local operations are counted too */
    int rc = w->peers[me].tp->flush(w, me, NULL, NULL);
    uint64_t incoming = 0;
    fence_wait f = {w, MPI_REQUEST_NULL};
    FR_CHECK_MPI(PMPI_Ireduce_scatter_block(counts, &incoming, 1, MPI_UINT64_T, MPI_SUM, w->comm,
                                            &f.rs));
    fr_wait_until(reduce_scatter_done, &f);
    w->fence_expected += incoming;
    for (int t = 0; t < w->size; t++)
        if (t != me && w->peers[t].q.n > 0) {
            int trc = w->peers[t].tp->flush(w, t, NULL, NULL);
            if (rc == MPI_SUCCESS)
                rc = trc;
        }
    fr_wait_until(fence_complete, w);
    free(counts);
    return rc;
}

static int fence(fr_win *w, int assert)
{
    if (assert & ~FENCE_ASSERTS)
        return fr_errorf(FR_ERR_ASSERT, "assertion 0x%x has bits MPI_Win_fence does not know",
                         assert);
    if (w->start_active || w->post_active || w->nlocks > 0)
        return fr_errorf(FR_ERR_EPOCH_NESTED, "MPI_Win_fence while a %s epoch is open",
                         w->nlocks > 0 ? "lock" : "post/start/complete/wait");
    int rc = MPI_SUCCESS;
    if (assert & MPI_MODE_NOPRECEDE) {
        if (w->fence_ops > 0)
            return fr_errorf(FR_ERR_ASSERT, "MPI_MODE_NOPRECEDE, but %llu RMA operations were "
                                            "issued since the last fence",
                             (unsigned long long)w->fence_ops);
    } else {
        rc = fence_close(w);
    }
    w->fence_ops = 0;
    w->fence = (assert & MPI_MODE_NOSUCCEED) ? FR_FENCE_OFF : FR_FENCE_ARMED;
    w->st.fences++;
    return rc;
}

FR_API int MPI_Win_fence(int assert, MPI_Win win)
{
    FR_WIN_ENTRY(win, PMPI_Win_fence(assert, win));
    FR_WIN_EXIT("MPI_Win_fence", fence(w, assert));
}
