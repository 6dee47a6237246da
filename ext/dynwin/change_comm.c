/* change_comm.c - MPI_Win_change_comm: processes join and leave a window while it lives (seed
 * 004, "Window as shared memory"; docs/specification.md section 11).
 *
 * Who calls: the old members of the window (over w->comm: those who remain, and the leavers,
 * who pass MPI_COMM_NULL) and the joiners (each with a window over MPI_COMM_SELF). No
 * communicator spans all of them, so the call runs in phases over the two that exist:
 *
 *    old members (w->comm)            new members (new_comm)           old members (w->comm)
 *  P1 allgather: leaving?, leader?,  P2 allgather: window identity,   P3 the leader broadcasts
 *     local verdict -> v1; the           sizes, units, identities,       the final verdict to the
 *     remaining members check the        verdicts -> final verdict       leavers (only needed
 *     membership against new_comm        (everyone computes the same)    with leavers and joiners)
 *  then, if the final verdict is success:
 *  D  (old members) drain: every member asks every other one for an acknowledgement behind
 *     everything it sent (a BUMP without bump), waits for all of them, then a barrier: every
 *     operation, bump and reply of the old window is complete and nothing is in flight.
 *  R  rebuild in place (same fr_win, same carrier handle): channel and member table are torn
 *     down; new members build them over new_comm (fr_win_open_channel), a leaver over
 *     MPI_COMM_SELF.
 *
 * Nothing changes before every caller knows the final verdict, so an error (an epoch open
 * anywhere, bad arguments) is raised by every caller and leaves every window as it was. A
 * verdict is a reason and the rank it concerns; when several callers find errors, every caller
 * picks the same one (smallest reason, then smallest rank), so all raise the same class.
 *
 * A caller learns whether it is an old member or a joiner from P2: the old members are those
 * whose window has the identity (uid) of the window of peer_rank. So a joiner's own window over
 * MPI_COMM_SELF cannot be confused with a one-member window that others join (whose only member
 * is the leader). Only callers whose window has several members run P1 and P3, so a process
 * that tries to join with a window of several members takes part in P1 of that window: if its
 * fellow members call too, they all find that none of them is peer_rank (R_NOT_LEADER); if
 * they do not, it waits for them, as any collective call does.
 *
 * Identities: remaining members keep their member identity, so counters (MPI_Sync names its
 * owner by identity, ext/syncobj) stay valid; joiners get fresh ones from the window's
 * next_member_id, which the leader hands over and which only grows, so a leaver's counters can
 * never name a joiner. A leaver's window draws a new uid: copies of the old window's counters
 * are then "of another window" there, and it can later join the old window again.
 *
 * Flavors: a joiner brings a window of the joined window's kind (addressing()): dynamic windows
 * address members by absolute address, MPI_Win_create and MPI_Win_allocate windows by
 * displacement, and each process addresses its targets by its own window's flavor; a shared
 * window's members each have a part the others load and store. A dynamic window's regions are
 * this process's own table (w->attached), which the rebuild leaves alone: members and leavers
 * keep theirs, a joiner's become reachable at its new rank. What origins had learned of others'
 * regions lives in the member table (fr_peer.known), which the rebuild drops with the old
 * ranks: they learn again on first use. A shared window's parts stay where they are; in P2 the
 * new members, on one node, map each other's (api/win_shared.h) and agree that all could, so a
 * failure changes nothing; the rebuild then installs the mapped parts (fr_shared_adopt). */
#include "flexrma.h"
#include "api/win_create.h"
#include "api/win_shared.h"
#include "sync/counters.h"
#include "sync/notify.h"
#include "progress/entry.h"
#include "progress/isend.h"
#include "core/next.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "sync/sync.h"

#include <stdlib.h>

/* Why a change fails, in the order of precedence when several callers find errors. */
typedef enum reason {
    R_NONE = 0,
    R_INTERCOMM,      /* new_comm is an intercommunicator (every non-leaver sees it) */
    R_PEER_RANGE,     /* peer_rank outside new_comm (every non-leaver sees it) */
    R_PEER_DIFFERS,   /* peer_rank not the same on every new member */
    R_EPOCH,          /* a member has an epoch open: who = window rank */
    R_REQUESTS,       /* ... active sync requests: who = window rank, arg = how many */
    R_JOINER_SYNC,    /* a joiner has an epoch or requests on its window: who = new_comm rank */
    R_FLAVOR_MIX,     /* new_comm rank `who` brings a window of flavor arg, whose addressing
                         differs from the joined window's (flavor arg2) */
    R_NOT_LEADER,     /* peer_rank is not a current member: arg = peer_rank */
    R_LEAVER_IN,      /* window rank `who` passed MPI_COMM_NULL but is in new_comm */
    R_STAYER_MISSING, /* window rank `who` did not pass MPI_COMM_NULL and is not in new_comm */
    R_TRANSPORT,      /* FLEXRMA_TRANSPORT of new_comm rank `who` (arg) is not rank 0's (arg2) */
    R_SHARED_NODES,   /* a shared window's new_comm spans more than one node */
    R_SHARED_MAP,     /* new_comm rank `who` cannot map another member's part of a shared window */
} reason;

typedef struct verdict {
    int32_t why, who, arg, arg2;
} verdict;

/* What an old member tells the others in P1. */
typedef struct p1_entry {
    int32_t leaving;
    int32_t leader;    /* it remains and is peer_rank in new_comm */
    int32_t peer_rank;
    int32_t pad;
    verdict v;         /* its own findings */
} p1_entry;

/* What a new member tells the others in P2; also the member table of the new window. */
typedef struct p2_entry {
    uint64_t uid;             /* identity of the window it passed */
    int64_t size, disp_unit;
    uint32_t member_id;
    uint32_t next_member_id;
    int32_t transport;        /* FLEXRMA_TRANSPORT */
    int32_t peer_rank;
    int32_t from_old;         /* v is the verdict all old members of a multi-member window share */
    int32_t flavor;           /* MPI_WIN_CREATE_FLAVOR of the window it passed */
    verdict v;
    fr_shared_where where;    /* shared windows: where its part lies */
} p2_entry;

static const char *const CALL = "MPI_Win_change_comm";

static int worse(const verdict *a, const verdict *b)
{
    if (!b->why)
        return 0;
    return !a->why || b->why < a->why || (b->why == a->why && b->who < a->who);
}

static void keep_first(verdict *v, verdict cand)
{
    if (worse(v, &cand))
        *v = cand;
}

static const char *made_by(int flavor)
{
    switch (flavor) {
    case MPI_WIN_FLAVOR_ALLOCATE: return "MPI_Win_allocate";
    case MPI_WIN_FLAVOR_SHARED: return "MPI_Win_allocate_shared";
    case MPI_WIN_FLAVOR_DYNAMIC: return "MPI_Win_create_dynamic";
    default: return "MPI_Win_create";
    }
}

/* Windows whose members may be one window: origins address a dynamic window's members by
 * absolute address and every other window's by displacement, and each process decides that by
 * its own flavor (api/rma_ops.c) and checks arriving operations likewise (am_recv.c), so a
 * window's members must all address alike. Every member of a shared window has a part in memory
 * of the node, which the others load and store (MPI_Win_shared_query). MPI_Win_create and
 * MPI_Win_allocate windows mix. */
static int addressing(int flavor)
{
    return flavor == MPI_WIN_FLAVOR_ALLOCATE ? MPI_WIN_FLAVOR_CREATE : flavor;
}

/* The error every caller raises for verdict v. */
static int verdict_error(const verdict *v)
{
    switch ((reason)v->why) {
    case R_NONE: return MPI_SUCCESS;
    case R_INTERCOMM:
        return fr_errorf(FR_ERR_COMM, "%s: new_comm is an intercommunicator; pass the "
                                      "intracommunicator of the members after the change (for "
                                      "spawned joiners: MPI_Intercomm_merge)", CALL);
    case R_PEER_RANGE:
        return fr_errorf(FR_ERR_RANK, "%s: peer_rank %d is out of range for new_comm (%d "
                                      "processes)", CALL, v->arg, v->arg2);
    case R_PEER_DIFFERS:
        return fr_errorf(FR_ERR_ARG, "%s: peer_rank differs between callers (new_comm rank %d "
                                     "passed %d, rank 0 passed %d)", CALL, v->who, v->arg, v->arg2);
    case R_EPOCH:
        return fr_errorf(FR_ERR_CHANGE_IN_EPOCH, "%s: window rank %d has an access or exposure "
                                                 "epoch open; close every epoch first (as for "
                                                 "MPI_Win_free)", CALL, v->who);
    case R_REQUESTS:
        return fr_errorf(FR_ERR_CHANGE_IN_EPOCH, "%s: window rank %d has %d active sync "
                                                 "request(s) on the window; complete them first",
                         CALL, v->who, v->arg);
    case R_JOINER_SYNC:
        return fr_errorf(FR_ERR_CHANGE_IN_EPOCH, "%s: the joining process at new_comm rank %d "
                                                 "has an epoch open or an active sync request on "
                                                 "the window it passed", CALL, v->who);
    case R_FLAVOR_MIX:
        return fr_errorf(FR_ERR_FLAVOR, "%s: the process at new_comm rank %d brings a window "
                                        "made by %s into one made by %s; a dynamic window is "
                                        "joined only with a window of MPI_Win_create_dynamic, a "
                                        "shared one only with one of MPI_Win_allocate_shared, "
                                        "others only with one of MPI_Win_create or "
                                        "MPI_Win_allocate", CALL, v->who, made_by(v->arg),
                         made_by(v->arg2));
    case R_NOT_LEADER:
        return fr_errorf(FR_ERR_RANK, "%s: peer_rank %d does not name a remaining member of "
                                      "this window (a joining process passes a window over "
                                      "MPI_COMM_SELF, not one of several members)", CALL, v->arg);
    case R_LEAVER_IN:
        return fr_errorf(FR_ERR_COMM, "%s: window rank %d passed MPI_COMM_NULL (leaves) but is "
                                      "in new_comm", CALL, v->who);
    case R_STAYER_MISSING:
        return fr_errorf(FR_ERR_COMM, "%s: window rank %d did not pass MPI_COMM_NULL but is not "
                                      "in new_comm", CALL, v->who);
    case R_TRANSPORT:
        return fr_win_transport_differs(v->who, v->arg, v->arg2);
    case R_SHARED_NODES:
        return fr_errorf(FR_ERR_SHARED, "%s: new_comm spans more than one node; the members of "
                                        "a window of MPI_Win_allocate_shared must share one",
                         CALL);
    case R_SHARED_MAP:
        return fr_errorf(FR_ERR_SHARED, "%s: new_comm rank %d cannot map the part of another "
                                        "member (the process that allocated that memory no "
                                        "longer holds it, or does not let it be taken)", CALL,
                         v->who);
    }
    return fr_errorf(FR_ERR_INTERN, "%s: unknown verdict %d", CALL, v->why);
}

/* ---- the caller's own findings ---- */

typedef struct change {
    fr_win *w;
    int leaving;        /* new_comm == MPI_COMM_NULL */
    int multi;          /* the window has other members: P1, P3 and the drain run */
    MPI_Comm new_comm;
    int peer_rank;
    int new_rank, new_size;
    int args_ok;        /* new_comm and peer_rank usable: P2 runs */
    verdict local;
    fr_shared *shared;  /* shared windows: the new members' parts, mapped here in P2 */
} change;

static void check_local(change *c)
{
    fr_win *w = c->w;
    if (!c->leaving) {
        int inter = 0;
        PMPI_Comm_test_inter(c->new_comm, &inter);
        if (inter) {
            c->local = (verdict){R_INTERCOMM, 0, 0, 0};
            return;
        }
        PMPI_Comm_rank(c->new_comm, &c->new_rank);
        PMPI_Comm_size(c->new_comm, &c->new_size);
        if (c->peer_rank < 0 || c->peer_rank >= c->new_size) {
            c->local = (verdict){R_PEER_RANGE, 0, c->peer_rank, c->new_size};
            return;
        }
        c->args_ok = 1;
    }
    int active = fr_req_win_active(w);
    if (fr_win_any_epoch(w))
        c->local = (verdict){R_EPOCH, w->rank, 0, 0};
    else if (active)
        c->local = (verdict){R_REQUESTS, w->rank, active, 0};
}

/* ---- P1: the old members ---- */

typedef struct old_view {
    p1_entry *e;        /* every old member's entry */
    int nremain, nleave;
    int leader;         /* window rank of the leader, or -1 */
    verdict v1;
} old_view;

static void phase1(change *c, old_view *o)
{
    fr_win *w = c->w;
    p1_entry mine = {.leaving = c->leaving, .peer_rank = c->peer_rank, .v = c->local};
    mine.leader = !c->leaving && c->args_ok && c->new_rank == c->peer_rank;
    o->e = fr_xcalloc((size_t)w->size, sizeof *o->e);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, o->e, (int)sizeof mine,
                                 MPI_BYTE, w->comm, &rq));
    fr_wait_request(&rq);
    int leaders = 0, some_peer = 0;
    o->leader = -1;
    o->v1 = (verdict){0};
    for (int r = 0; r < w->size; r++) {
        keep_first(&o->v1, o->e[r].v);
        if (o->e[r].leaving) {
            o->nleave++;
            continue;
        }
        o->nremain++;
        some_peer = o->e[r].peer_rank;
        if (o->e[r].leader) {
            leaders++;
            o->leader = r;
        }
    }
    if (o->nremain > 0 && leaders != 1)
        keep_first(&o->v1, (verdict){R_NOT_LEADER, 0, some_peer, 0});
}

/* A remaining member checks that new_comm holds exactly the old members that do not leave. */
static verdict check_membership(change *c, const old_view *o)
{
    fr_win *w = c->w;
    verdict v = {0};
    MPI_Group ng;
    PMPI_Comm_group(c->new_comm, &ng);
    int *in = fr_xcalloc((size_t)w->size, sizeof *in), *out = fr_xcalloc((size_t)w->size,
                                                                          sizeof *out);
    for (int r = 0; r < w->size; r++)
        in[r] = r;
    FR_CHECK_MPI(PMPI_Group_translate_ranks(w->group, w->size, in, ng, out));
    for (int r = 0; r < w->size; r++) {
        if (o->e[r].leaving && out[r] != MPI_UNDEFINED)
            keep_first(&v, (verdict){R_LEAVER_IN, r, 0, 0});
        else if (!o->e[r].leaving && out[r] == MPI_UNDEFINED)
            keep_first(&v, (verdict){R_STAYER_MISSING, r, 0, 0});
    }
    free(in);
    free(out);
    PMPI_Group_free(&ng);
    return v;
}

/* ---- P2: the new members ---- */

/* A shared window's new members must share a node, and each maps the others' parts (the
 * joiners' segments are new to the members, the members' to the joiners); every member learns
 * whether all could (collective over new_comm). On success c->shared holds the mappings. */
static verdict share_parts(change *c, const p2_entry *e)
{
    if (!fr_shared_one_node(c->new_comm))
        return (verdict){R_SHARED_NODES, 0, 0, 0};
    fr_shared_where *all = fr_xcalloc((size_t)c->new_size, sizeof *all);
    for (int j = 0; j < c->new_size; j++)
        all[j] = e[j].where;
    int rc = fr_shared_map(c->w, all, c->new_size, c->new_rank, &c->shared);
    free(all);
    int mine = rc == MPI_SUCCESS ? INT32_MAX : c->new_rank, first = INT32_MAX;
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->new_comm, &rq));
    fr_wait_request(&rq);
    if (first == INT32_MAX)
        return (verdict){0};
    fr_shared_drop(c->shared);
    c->shared = NULL;
    return (verdict){R_SHARED_MAP, first, 0, 0};
}

static p2_entry *phase2(change *c, const verdict *mine_v, int from_old, verdict *final)
{
    fr_win *w = c->w;
    p2_entry mine = {.uid = w->uid, .size = w->win_size, .disp_unit = w->disp_unit,
                     .member_id = w->peers[w->rank].member_id,
                     .next_member_id = w->next_member_id,
                     .transport = fr_opt.transport, .peer_rank = c->peer_rank,
                     .from_old = from_old, .flavor = w->attr_flavor, .v = *mine_v};
    if (w->shared)
        fr_shared_where_mine(w, &mine.where);
    p2_entry *e = fr_xcalloc((size_t)c->new_size, sizeof *e);
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, e, (int)sizeof mine,
                                 MPI_BYTE, c->new_comm, &rq));
    fr_wait_request(&rq);
    /* The old members' verdict (the leavers have it already) wins over anything found here. */
    for (int j = 0; j < c->new_size; j++)
        if (e[j].from_old && e[j].v.why) {
            *final = e[j].v;
            return e;
        }
    verdict v = {0};
    for (int j = 0; j < c->new_size; j++)
        if (e[j].peer_rank != e[0].peer_rank)
            keep_first(&v, (verdict){R_PEER_DIFFERS, j, e[j].peer_rank, e[0].peer_rank});
    if (!v.why) {
        uint64_t uid = e[c->peer_rank].uid;
        for (int j = 0; j < c->new_size; j++) {
            int joiner = e[j].uid != uid;
            verdict f = e[j].v;
            if (joiner && (f.why == R_EPOCH || f.why == R_REQUESTS))
                f = (verdict){R_JOINER_SYNC, j, 0, 0};
            keep_first(&v, f);
            if (joiner && addressing(e[j].flavor) != addressing(e[c->peer_rank].flavor))
                keep_first(&v, (verdict){R_FLAVOR_MIX, j, e[j].flavor, e[c->peer_rank].flavor});
            if (e[j].transport != e[0].transport)
                keep_first(&v, (verdict){R_TRANSPORT, j, e[j].transport, e[0].transport});
        }
    }
    if (!v.why && e[c->peer_rank].flavor == MPI_WIN_FLAVOR_SHARED)
        v = share_parts(c, e);
    *final = v;
    return e;
}

/* ---- D: the drain ---- */

/* fr_win_drain (sync/sync_flush.c): every member's operations, bumps and replies on the old
 * window complete, nothing in flight, so the channel and the communicator can go and leavers'
 * memory is never touched again. */

/* ---- R: the rebuild ---- */

/* One member of the window being built. */
typedef struct member {
    MPI_Aint size;
    int disp_unit;
    uint32_t member_id;
} member;

/* Tear down w's channel, member table and epoch state and build them again over comm (whose
 * ranks are the window ranks; members[] in that order). Collective over comm. The epochs are
 * all closed and nothing is in flight (drain), so no protocol state needs to survive: every
 * member starts afresh, fence epoch off. */
static int rebuild(fr_win *w, MPI_Comm comm, const member *members, uint64_t uid,
                   uint32_t next_member_id)
{
    if (w->pending || w->target_pending)
        fr_fatal("%s: %d send(s), %d receive(s) still in flight after the drain", CALL,
                 w->pending, w->target_pending);
    fr_win_close_channel(w);
    fr_win_peers_free(w);
    fr_win_groups_free(w);
    PMPI_Group_free(&w->group);
    fr_isend_release(w->comm); /* FLEXRMA_TEST_JITTER: nothing may start on a freed comm */
    PMPI_Comm_free(&w->comm);
    w->start_active = w->post_active = 0;
    w->self_starts = w->self_posts = 0; /* my window rank changes; both epochs are closed */
    w->nlocks = 0;
    w->fence = FR_FENCE_OFF;
    w->fence_ops = w->fence_count = w->fence_opened = w->fence_closes = 0;
    w->fence_expected = w->fence_done = 0;
    w->lk_mode = w->lk_holders = 0;
    w->lk_head = w->lk_len = 0;
    w->lk_waiting = 0;

    fr_win_bind_comm(w, comm);
    fr_win_peers_alloc(w);
    for (int r = 0; r < w->size; r++) {
        w->peers[r].size = members[r].size;
        w->peers[r].disp_unit = members[r].disp_unit;
        w->peers[r].member_id = members[r].member_id;
    }
    w->uid = uid;
    w->next_member_id = next_member_id;
    return fr_win_open_channel(w);
}

/* The process takes on another window's identity (it joined, or it left): what belonged to
 * its former window - its counters, its requests - does not carry over. */
static void drop_identity(fr_win *w)
{
    fr_notify_keep(w); /* its notification values stay, in counters made anew */
    fr_counters_free(w);
    fr_req_win_gone(w);
}

static int become_alone(fr_win *w)
{
    member me = {w->win_size, w->disp_unit, 0};
    fr_shared *alone = NULL;
    if (w->shared) { /* its part alone: only its own memory, nothing to map */
        fr_shared_where mine;
        fr_shared_where_mine(w, &mine);
        if (fr_shared_map(w, &mine, 1, 0, &alone) != MPI_SUCCESS)
            fr_fatal("%s: a leaver's own part of a shared window: %s", CALL, fr_error_detail());
    }
    drop_identity(w);
    int rc = rebuild(w, MPI_COMM_SELF, &me, fr_win_draw_uid(), 1);
    if (alone)
        fr_shared_adopt(w, alone);
    return rc ? rc : fr_notify_rebind(w);
}

static int become_new_member(change *c, const p2_entry *e)
{
    fr_win *w = c->w;
    const p2_entry *lead = &e[c->peer_rank];
    member *m = fr_xcalloc((size_t)c->new_size, sizeof *m);
    uint32_t next = lead->next_member_id;
    for (int j = 0; j < c->new_size; j++) {
        m[j].size = (MPI_Aint)e[j].size;
        m[j].disp_unit = (int)e[j].disp_unit;
        m[j].member_id = e[j].uid == lead->uid ? e[j].member_id : next++;
    }
    if (w->uid != lead->uid)
        drop_identity(w);
    int rc = rebuild(w, c->new_comm, m, lead->uid, next);
    free(m);
    if (c->shared) /* after the rebuild: direct copies into node peers' parts need its channel */
        fr_shared_adopt(w, c->shared);
    c->shared = NULL;
    return rc ? rc : fr_notify_rebind(w); /* every member's notification counters, anew */
}

/* ---- the call ---- */

/* The leader tells every old member the final verdict (P3): only the remaining members took
 * part in P2. */
static void phase3(fr_win *w, const old_view *o, verdict *final)
{
    MPI_Request rq;
    FR_CHECK_MPI(PMPI_Ibcast(final, (int)sizeof *final, MPI_BYTE, o->leader, w->comm, &rq));
    fr_wait_request(&rq);
}

static int change_comm(fr_win *w, MPI_Comm new_comm, int peer_rank)
{
    change c = {.w = w, .leaving = new_comm == MPI_COMM_NULL, .multi = w->size > 1,
                .new_comm = new_comm, .peer_rank = peer_rank};
    check_local(&c);
    if (!c.multi && c.leaving) /* a window over oneself alone stays one */
        return verdict_error(&c.local);

    old_view o = {0};
    verdict final = c.local, mine = c.local;
    if (c.multi) {
        phase1(&c, &o);
        final = mine = o.v1;
        if (!c.leaving && c.args_ok && !o.v1.why)
            final = mine = check_membership(&c, &o);
    }
    int p3 = c.multi && !o.v1.why && o.nleave > 0 && o.nremain > 0;
    p2_entry *e = NULL;
    /* P2 needs usable arguments, which every new member judges alike; it is skipped when a
     * leaver sits in new_comm, since that leaver would never enter it. */
    if (!c.leaving && c.args_ok && mine.why != R_LEAVER_IN)
        e = phase2(&c, &mine, c.multi, &final);
    if (p3)
        phase3(w, &o, &final);
    int rc = verdict_error(&final);
    if (rc == MPI_SUCCESS) {
        if (c.multi)
            fr_win_drain(w);
        rc = c.leaving ? become_alone(w) : become_new_member(&c, e);
    }
    fr_shared_drop(c.shared); /* mapped in P2, but the change failed */
    free(o.e);
    free(e);
    return rc;
}

FR_API int MPI_Win_change_comm(MPI_Comm new_comm, int peer_rank, MPI_Win win)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, CALL));
    FR_WIN_EXIT(CALL, change_comm(w, new_comm, peer_rank));
}
FR_PMPI(Win_change_comm);
