/* sync_ops.c - MPI_Win_sync_ops_init: complete my operations to a target, then bump its counter.
 *
 * MPI_Start opens a counter epoch: operations of the covered kinds to the target go to its
 * counter queue (fr_peer.cq) instead of an epoch's queue (epoch.c). The request completes only
 * inside a wait or test call on it (advance), never behind the application's back: an operation
 * issued between two MPI_Test calls must still be covered, so the bump leaves at the moment the
 * request completes, after every covered operation is complete here. Its place behind the
 * operations at the target is kept by its `upto` count (sync_counter.c).
 *
 * Cost: operations whose data travels inside the packet are packed into the target's next batch
 * as they are issued (fr_batch_pack_now) and complete at the origin then, so they and the bump go
 * as one message and the request completes in the same call, as seed 001's one-message lock
 * epoch. Gets and large transfers are flushed first; the bump follows
 * once they completed here.
 *
 * To a node peer whose shared state block holds the counter and that is settled (every
 * operation to it known complete there), the covered operations are issued on their own and the
 * bump is then an atomic in the owner's counter word if the peer is still settled after them
 * (counter_bump.c); otherwise it is a packet, in the operations' batch when they can go together.
 * With MPIX_INFO_SYNC_REMOTE_COMPLETE an atomic bump is remotely complete at once, and a freed
 * counter is found by the origin itself (the request completes with FR_ERR_COUNTER). */
#include "syncobj.h"
#include "progress/entry.h"
#include "core/next.h"
#include "sync/sync.h"

static const fr_opkind kind_of_mode[] = {FR_OP_PUT, FR_OP_GET, FR_OP_ACC};
static const int mode_bits[] = {MPI_MODE_WIN_PUT, MPI_MODE_WIN_GET, MPI_MODE_WIN_ACCUMULATE};
#define ALL_MODES (MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET | MPI_MODE_WIN_ACCUMULATE)

typedef struct sync_ops {
    fr_req req;
    uint32_t owner;     /* member identity of the target (its rank may change: ext/dynwin) */
    int target;         /* its window rank while active; MPI_PROC_NULL: a no-op request */
    int mode;           /* MPI_MODE_WIN_* */
    uint64_t key;       /* the counter, as BUMP carries it */
    int remote;         /* MPIX_INFO_SYNC_REMOTE_COMPLETE */
    int bump_sent;
    uint64_t bump_seq;  /* remote: the acknowledgement of the bump itself */
    uint64_t ack_seq;   /* remote: the last acknowledgement asked for */
    uint64_t acked_upto;/* remote: the operations it covers */
    int direct_rc;      /* remote, bump applied directly: its result */
} sync_ops;

static void cover(sync_ops *so, int delta)
{
    fr_peer *p = &so->req.w->peers[so->target];
    for (int i = 0; i < 3; i++)
        if (so->mode & mode_bits[i])
            p->cover[kind_of_mode[i]] += delta;
}

static void finish(sync_ops *so, int rc)
{
    if (so->target != MPI_PROC_NULL)
        cover(so, -1);
    fr_req_complete(&so->req, rc);
}

static int ops_start(fr_req *r)
{
    sync_ops *so = (sync_ops *)r;
    if (so->target == MPI_PROC_NULL) {
        fr_req_complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    /* The owner keeps its rank unless the membership changed (ext/dynwin): look it up then. */
    int target = so->target >= 0 && so->target < r->w->size &&
                         r->w->peers[so->target].member_id == so->owner
                     ? so->target
                     : fr_win_rank_of_member(r->w, so->owner);
    if (target < 0)
        return fr_errorf(FR_ERR_COUNTER, "the target of this sync-ops request (the counter's "
                                         "owner) is no longer a member of the window");
    so->target = target;
    so->bump_sent = 0;
    so->ack_seq = so->bump_seq = 0;
    so->direct_rc = MPI_SUCCESS;
    cover(so, +1);
    return MPI_SUCCESS;
}

static int all_eager(const fr_opq *q)
{
    for (size_t i = 0; i < q->n; i++)
        if (!fr_op_is_eager(&q->ops[i]))
            return 0;
    return 1;
}

/* Without packet when every operation to the target is known complete there: the bump as an
 * atomic on its shared counter word, or, for FR_PKTF_NOBUMP, nothing at all (there is nothing
 * left to acknowledge). Returns 1 if done. */
static int bump_direct(sync_ops *so, fr_peer *p, int flags)
{
    fr_win *w = so->req.w;
    if (flags & FR_PKTF_NOBUMP) {
        if (!fr_peer_settled(p))
            return 0;
        so->acked_upto = p->ops_sent;
        return 1;
    }
    fr_bump_way way = fr_bump_direct(w, so->target, so->key);
    if (way == FR_BUMP_PACKET)
        return 0;
    so->acked_upto = p->ops_sent;
    if (way == FR_BUMP_GONE) /* reported on stderr; an error only for a remote request */
        so->direct_rc = so->remote ? fr_bump_gone_error(so->target) : MPI_SUCCESS;
    return 1;
}

/* BUMP (or, with FR_PKTF_NOBUMP, only an acknowledgement) behind every operation sent so far,
 * and behind the queued ones too when with_ops (they travel in the same message). */
static void send_bump(sync_ops *so, fr_peer *p, int flags, int with_ops)
{
    fr_win *w = so->req.w;
    if (!with_ops && bump_direct(so, p, flags))
        return;
    if (!(flags & FR_PKTF_NOBUMP))
        w->st.bumps_pkt++;
    fr_pkt bump = {.type = FR_PKT_BUMP, .dtype = so->key, .flags = (uint8_t)flags,
                   .arg = p->ops_sent}; /* flush sets it to include the queued operations */
    if (so->remote) {
        bump.flags |= FR_PKTF_ACK;
        bump.seq = so->ack_seq = ++p->acks_asked;
    }
    if (with_ops)
        p->tp->flush(w, so->target, &p->cq, NULL, &bump);
    else
        p->tp->notify(w, so->target, &bump);
    if (so->remote)
        so->acked_upto = bump.arg;
}

/* Flush the covered operations; once complete here, send what `flags` says. Returns whether it
 * was sent. */
static int flush_then(sync_ops *so, fr_peer *p, int flags)
{
    /* One message for operations and bump, unless the bump might go without a packet once they
     * are issued (counter_bump.c: issuing never settles a peer that is not settled already). */
    int apart = flags & FR_PKTF_NOBUMP ? fr_peer_settled(p)
                                       : fr_bump_may_go_direct(so->req.w, so->target, so->key);
    if (p->pending == 0 && all_eager(&p->cq) && !apart) {
        send_bump(so, p, flags, 1);
        return 1;
    }
    if (fr_peer_unsent(p))
        p->tp->flush(so->req.w, so->target, &p->cq, NULL, NULL);
    if (p->pending)
        return 0;
    send_bump(so, p, flags, 0);
    return 1;
}

static void ops_advance(fr_req *r)
{
    sync_ops *so = (sync_ops *)r;
    if (!r->active || !r->w)
        return;
    fr_peer *p = &r->w->peers[so->target];
    if (!so->bump_sent) {
        if (!flush_then(so, p, 0))
            return;
        so->bump_sent = 1;
        so->bump_seq = so->ack_seq;
        if (!so->remote) {
            finish(so, MPI_SUCCESS);
            return;
        }
    }
    /* Remote completion: operations covered after the bump left need an acknowledgement too. */
    if ((fr_peer_unsent(p) || p->ops_sent > so->acked_upto) &&
        !flush_then(so, p, FR_PKTF_NOBUMP))
        return;
    if (p->acks_got < so->ack_seq || p->pending)
        return;
    finish(so, so->bump_seq ? fr_bump_ack_result(r->w, so->target, so->bump_seq)
                            : so->direct_rc);
}

static const fr_req_class sync_ops_class = {
    .name = "sync-ops request",
    .start = ops_start,
    .advance = ops_advance,
    .cancel = NULL, /* its operations are issued: there is nothing to take back */
    .destroy = NULL,
};

static int ops_init(fr_win *w, int target, int mode, const MPI_Sync *s, MPI_Info info,
                    MPI_Request *req)
{
    fr_sync_ref ref = {.owner = MPI_PROC_NULL};
    int rc;
    if (!req)
        return fr_errorf(FR_ERR_ARG, "request is NULL");
    if (mode & ~ALL_MODES)
        return fr_errorf(FR_ERR_ARG, "sync_mode 0x%x has bits other than MPI_MODE_WIN_PUT, "
                                     "MPI_MODE_WIN_GET and MPI_MODE_WIN_ACCUMULATE", mode);
    if (target != MPI_PROC_NULL) {
        if ((rc = fr_win_check_rank(w, target)) || (rc = fr_sync_resolve(w, s, &ref)))
            return rc;
        if (ref.owner != target)
            return fr_errorf(FR_ERR_COUNTER, "the counter is owned by rank %d, not by target_rank "
                                             "%d", ref.owner, target);
    }
    sync_ops *so = (sync_ops *)fr_req_new(&sync_ops_class, w, 1, sizeof *so);
    so->target = target;
    so->owner = target == MPI_PROC_NULL ? 0 : w->peers[target].member_id;
    so->mode = mode;
    so->key = ref.key;
    so->remote = fr_info_flag(info, MPIX_INFO_SYNC_REMOTE_COMPLETE) != 0;
    so->req.auto_restart = fr_info_flag(info, MPIX_INFO_SYNC_AUTO_RESTART) != 0;
    *req = so->req.handle;
    return MPI_SUCCESS;
}

FR_API int MPI_Win_sync_ops_init(int target_rank, int sync_mode, MPI_Sync sync_counter,
                                 MPI_Win win, MPI_Info info, MPI_Request *req)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_sync_ops_init"));
    FR_WIN_EXIT("MPI_Win_sync_ops_init",
                ops_init(w, target_rank, sync_mode, &sync_counter, info, req));
}
FR_PMPI(Win_sync_ops_init);
