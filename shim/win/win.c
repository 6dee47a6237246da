/* win.c - what the layers ask of a window: its epoch names, rank checks, member identities. */
#include "win.h"

const char *fr_epoch_name(fr_epoch e)
{
    switch (e) {
    case FR_EPOCH_FENCE: return "fence";
    case FR_EPOCH_PSCW: return "post/start/complete/wait";
    case FR_EPOCH_LOCK: return "lock";
    case FR_EPOCH_COUNTER: return "sync-ops";
    default: return "none";
    }
}

int fr_win_check_rank(fr_win *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return fr_errorf(FR_ERR_RANK, "rank %d is out of range: the window has %d members (0..%d)",
                         rank, w->size, w->size - 1);
    return MPI_SUCCESS;
}

int fr_win_rank_of_member(const fr_win *w, uint32_t id)
{
    for (int r = 0; r < w->size; r++)
        if (w->peers[r].member_id == id)
            return r;
    return -1;
}

int fr_win_any_epoch(const fr_win *w)
{
    return w->start_active || w->post_active || w->nlocks > 0 ||
           (w->fence == FR_FENCE_ARMED && w->fence_ops > 0);
}
