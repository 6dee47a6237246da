/* sync_flush.c - MPI_Win_flush, MPI_Win_flush_all, MPI_Win_flush_local, MPI_Win_flush_local_all
 * and MPI_Win_sync: completing a passive-target epoch's operations without ending it (MPI-3.1
 * section 11.5.4).
 *
 * flush(rank): every operation I issued to rank is complete there. What is still queued leaves
 * at once (fr_win_issue_now: LOCK first if the epoch has not reached rank yet, or my turn in its
 * lock word); then, unless everything I sent is already known complete (remote_upto, from an
 * UNLOCK_ACK or an earlier acknowledgement) or will be once the replies on their way have come
 * (replies_cover: a get or fetch-and-op and its flush are one round trip, am_send.c), one
 * acknowledgement request (a BUMP without bump,
 * fr_ack_ask) that the target answers once its prefix of my operations covers everything sent,
 * the machinery MPI_Iput's remote completion uses. A flush with nothing new costs no message,
 * and operations copied straight into a node peer's window are complete already.
 * flush_local(rank): my buffers are free again: queued operations leave (eager ones are copied
 * into the batch) and I wait for my own sends and get replies to finish (fr_peer.pending).
 * The _all variants send to every target first and wait afterwards, so n targets cost one round
 * trip, not n.
 *
 * MPI_Win_sync: flexrma's windows have one copy of the memory (the model is unified), so it is a
 * full memory barrier plus a progress pass: a target that polls its window for a flag another
 * process puts sees operations that travel as packets applied. Valid at any time, as in Open
 * MPI.
 *
 * fr_win_drain: the collective form of flush_all, over every member and every kind of
 * operation, for the calls that replace what operations in flight would reach
 * (MPI_Win_change_comm, MPI_Win_notify_set_num). */
#include "core/next.h"
#include "progress/entry.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "sync.h"

#include <atomic_ops.h>

typedef struct flush_wait {
    fr_win *w;
    int rank;  /* a target, or -1: every target of my passive epochs */
    int local; /* complete at the origin only */
} flush_wait;

static int is_passive(const fr_win *w, int rank) { return w->peers[rank].lock_held != 0; }

/* Is the flush of rank done? */
static int rank_flushed(const fr_win *w, int rank, int local)
{
    const fr_peer *p = &w->peers[rank];
    return p->pending == 0 && (local || p->remote_upto >= p->ops_sent);
}

static int flushed(void *arg)
{
    flush_wait *fw = arg;
    if (fw->rank >= 0)
        return rank_flushed(fw->w, fw->rank, fw->local);
    for (int r = 0; r < fw->w->size; r++)
        if (is_passive(fw->w, r) && !rank_flushed(fw->w, r, fw->local))
            return 0;
    return 1;
}

static int may_issue(void *arg)
{
    flush_wait *fw = arg;
    return fr_lock_may_issue(fw->w, fw->rank);
}

/* Send what a flush of rank needs: the queued operations, and the acknowledgement request. The
 * request rides at the end of the operations' batch: one message to the target, not two (put
 * and flush: 2 messages in all, 3 before; tests/mpi/t_crossings.c). */
static int flush_begin(fr_win *w, int rank, int local)
{
    fr_peer *p = &w->peers[rank];
    int rc = MPI_SUCCESS;
    if (p->q.n > 0 || fr_peer_unsent(p)) {
        flush_wait fw = {w, rank, local};
        fr_wait_until(may_issue, &fw); /* my turn in its lock word, when I take it there */
        fr_pkt ask;
        /* the queue leaves now (may_issue holds): the request with it */
        int ride = !local && p->q.n > 0 && fr_lock_may_issue(w, rank) &&
                   !fr_peer_replies_will_cover(p);
        rc = fr_win_issue_now(w, rank, ride ? fr_ack_packet(w, rank, &ask) : NULL);
        if (ride)
            fr_ack_trailed(w, rank, &ask);
    }
    /* Replies still on their way that cover every operation not known complete will do. */
    if (!local && p->remote_upto < p->ops_sent && p->replies_cover < p->ops_sent)
        fr_ack_ask(w, rank, p->ops_sent);
    return rc;
}

static int flush_one(fr_win *w, int rank, int local, const char *call)
{
    int rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = fr_win_check_rank(w, rank)))
        return rc;
    if (!is_passive(w, rank))
        return fr_errorf(FR_ERR_NOT_PASSIVE, "%s(%d) outside a passive-target epoch on rank %d "
                                             "(MPI_Win_lock or MPI_Win_lock_all)", call, rank, rank);
    /* Nothing waits to leave and all is complete already (operations copied into a node
     * peer's window are): flush_begin would send nothing, and the wait would return at once. */
    const fr_peer *p = &w->peers[rank];
    if (p->q.n == 0 && !fr_peer_unsent(p) && rank_flushed(w, rank, local))
        return MPI_SUCCESS;
    rc = flush_begin(w, rank, local);
    flush_wait fw = {w, rank, local};
    fr_wait_until(flushed, &fw);
    return rc;
}

static int flush_all(fr_win *w, int local, const char *call)
{
    if (w->nlocks == 0)
        return fr_errorf(FR_ERR_NOT_PASSIVE, "%s outside a passive-target epoch (MPI_Win_lock or "
                                             "MPI_Win_lock_all)", call);
    int rc = MPI_SUCCESS;
    for (int r = 0; r < w->size; r++)
        if (is_passive(w, r)) {
            int brc = flush_begin(w, r, local);
            if (rc == MPI_SUCCESS)
                rc = brc;
        }
    flush_wait fw = {w, -1, local};
    fr_wait_until(flushed, &fw);
    return rc;
}

FR_API int MPI_Win_flush(int rank, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_flush)(rank, win));
    FR_WIN_EXIT("MPI_Win_flush", flush_one(w, rank, 0, "MPI_Win_flush"));
}
FR_PMPI(Win_flush);

FR_API int MPI_Win_flush_local(int rank, MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_flush_local)(rank, win));
    FR_WIN_EXIT("MPI_Win_flush_local", flush_one(w, rank, 1, "MPI_Win_flush_local"));
}
FR_PMPI(Win_flush_local);

FR_API int MPI_Win_flush_all(MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_flush_all)(win));
    FR_WIN_EXIT("MPI_Win_flush_all", flush_all(w, 0, "MPI_Win_flush_all"));
}
FR_PMPI(Win_flush_all);

FR_API int MPI_Win_flush_local_all(MPI_Win win)
{
    FR_WIN_ENTRY(win, FR_NEXT(Win_flush_local_all)(win));
    FR_WIN_EXIT("MPI_Win_flush_local_all", flush_all(w, 1, "MPI_Win_flush_local_all"));
}
FR_PMPI(Win_flush_local_all);

FR_API int MPI_Win_sync(MPI_Win win)
{
    FR_WIN_ENTRY_QUIET(win, FR_NEXT(Win_sync)(win));
    AO_nop_full();
    fr_progress();
    AO_nop_full();
    FR_WIN_EXIT("MPI_Win_sync", MPI_SUCCESS);
}
FR_PMPI(Win_sync);

/* ---- the drain ---- */

static int drained(void *arg)
{
    fr_win *w = arg;
    if (w->pending || w->target_pending)
        return 0;
    for (int t = 0; t < w->size; t++)
        if (w->peers[t].acks_got < w->peers[t].acks_asked)
            return 0;
    return 1;
}

/* Every member's operations, bumps and replies on the window are complete and nothing is in
 * flight. An acknowledgement travels behind everything this process sent to its target (on the
 * same ordered channel) and is answered only once all of it is complete there and every earlier
 * bump applied; replies it triggered travel before the answer. Once every member has its
 * answers (the barrier), nothing of the window moves any more. */
void fr_win_drain(fr_win *w)
{
    for (int t = 0; t < w->size; t++)
        if (t != w->rank)
            fr_ack_ask(w, t, UINT64_MAX); /* always a fresh one, behind everything sent */
    fr_wait_until(drained, w);
    fr_wait_barrier(w->comm);
    /* Requests of closed epochs (MPI_Iput... not waited for yet, or freed) learn here that their
     * operations are complete, while their target ranks still mean the same members. */
    for (fr_req *r = w->reqs; r; r = r->next)
        if (r->active && r->cls->advance)
            r->cls->advance(r);
    fr_req_progress();
}
