/* t_iops.c - request-returning RMA (docs/specification.md section 7): MPI_Iput, MPI_Iget,
 * MPI_Iaccumulate, MPIX_Put_signal and MPIX_Iput_signal.
 *
 *  - outstanding requests to every other rank, completed by MPI_Waitall, an MPI_Waitany loop and
 *    an MPI_Testsome loop, in fence, PSCW and lock epochs: every index reported once, empty
 *    statuses, MPI_Iget data there at completion, MPI_Iput data there after the epoch;
 *  - completion means remote completion: after MPI_Wait on an MPI_Iput, before the epoch's
 *    closing call, the origin sends a token and the target, on receiving it, finds the data in
 *    its window (8 B and 1 MiB, in each kind of epoch); the same for MPIX_Put_signal, the target
 *    waiting on a sync-object request, and for MPIX_Iput_signal, whose request completes only
 *    once the bump is applied;
 *  - MPI_Iget into contiguous and vector types; MPI_Iaccumulate MPI_SUM from every rank to rank 0;
 *  - arrays mixing MPI_Isend/MPI_Irecv with RMA requests: indices and statuses;
 *  - MPI_Request_free of active requests: the data still arrives by the end of the epoch;
 *  - MPI_Iput under a started sync-ops request and no other epoch;
 *  - a pipeline: 4 MiB in 64 chunks, each put with a signal, checked as the bumps arrive.
 *
 * Every rank puts into its right neighbour (or every other rank) and checks what its left
 * neighbour (or everybody) put into its own window. The windows use MPI_ERRORS_RETURN and every
 * return code is kept, so a failing call fails a check rather than aborting the run. Reads of
 * the own window after a remote completion are plain loads with no further call in between: the
 * data must be there, since the request said so (flexrma's windows are the program's memory,
 * written in place). */
#include "sync_common.h"

#define K 16                /* ints per region */
#define BIG_INTS (256 * 1024) /* 1 MiB: far beyond the default eager limit of 8 KiB */
#define TAG_TOKEN 70
#define TAG_CHECKED 71
#define TAG_MIXED 72

enum epoch_kind { FENCE, PSCW, LOCK, N_EPOCHS };
static const char *const epoch_name[] = {"fence", "PSCW", "lock"};
enum how { WAITALL, WAITANY, TESTSOME, N_HOWS };
static const char *const how_name[] = {"MPI_Waitall", "MPI_Waitany loop", "MPI_Testsome loop"};

/* Window w, in ints: nprocs regions of K (origin r puts into region r), K ints of source data
 * for gets (pat(rank, i, SRC_E), never changed), N_EPOCHS regions of K for accumulates. */
static iwin w;
#define SRC_E 50
static MPI_Aint region_at(int r) { return (MPI_Aint)r * K; }
static MPI_Aint src_at(void) { return (MPI_Aint)nprocs * K; }
static MPI_Aint acc_at(int kind) { return (MPI_Aint)(nprocs + 1 + kind) * K; }

/* Window rcw: BIG_INTS ints per rank, written by the left neighbour; one counter per rank on it,
 * rctr[r] owned by rank r. */
static iwin rcw;
static MPI_Sync *rctr;

static int next_e = 100; /* pattern generation: every case uses new values */

static int rc_ok(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        diag("%s failed: %s", what, s);
    }
    return rc == MPI_SUCCESS;
}

/* Every rank but this one, into list; returns how many. */
static int others(int *list)
{
    int n = 0;
    for (int r = 0; r < nprocs; r++)
        if (r != rank)
            list[n++] = r;
    return n;
}

/* Open an epoch of the given kind on win: access to the nt ranks tg (PSCW start, shared locks)
 * and exposure to the no ranks og (PSCW post; fence is collective, a lock needs no exposure).
 * Lists hold distinct ranks; either may be empty. */
static int open_epoch(int kind, MPI_Win win, const int *tg, int nt, const int *og, int no)
{
    int rc = MPI_SUCCESS;
    MPI_Group g;
    switch (kind) {
    case FENCE:
        KEEP_RC(rc, MPI_Win_fence(0, win));
        break;
    case PSCW:
        if (no > 0) {
            g = world_subgroup(og, no);
            KEEP_RC(rc, MPI_Win_post(g, 0, win));
            MPI_Group_free(&g);
        }
        if (nt > 0) {
            g = world_subgroup(tg, nt);
            KEEP_RC(rc, MPI_Win_start(g, 0, win));
            MPI_Group_free(&g);
        }
        break;
    case LOCK:
        for (int i = 0; i < nt; i++)
            KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, tg[i], 0, win));
        break;
    }
    return rc;
}

static int close_epoch(int kind, MPI_Win win, const int *tg, int nt, int no)
{
    int rc = MPI_SUCCESS;
    switch (kind) {
    case FENCE:
        KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        break;
    case PSCW:
        if (nt > 0)
            KEEP_RC(rc, MPI_Win_complete(win));
        if (no > 0)
            KEEP_RC(rc, MPI_Win_wait(win));
        break;
    case LOCK:
        for (int i = nt - 1; i >= 0; i--)
            KEEP_RC(rc, MPI_Win_unlock(tg[i], win));
        break;
    }
    return rc;
}

/* Complete reqs[0..n) the way `how` says; st[i] gets request i's status. Returns the first error
 * code; *once is 1 if every index was reported exactly once, the handles are all
 * MPI_REQUEST_NULL afterwards and a further call reports nothing left (MPI_UNDEFINED). */
static int complete(int how, int n, MPI_Request *reqs, MPI_Status *st, int *once)
{
    int rc = MPI_SUCCESS, bad = 0, *seen = xmalloc((size_t)n * sizeof(int));
    int *idx = xmalloc((size_t)n * sizeof(int));
    MPI_Status *s = xmalloc((size_t)n * sizeof(MPI_Status));
    memset(seen, 0, (size_t)n * sizeof(int));
    if (how == WAITALL) {
        KEEP_RC(rc, MPI_Waitall(n, reqs, st));
        for (int i = 0; i < n; i++)
            seen[i] = 1;
    } else if (how == WAITANY) {
        for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
            int i = -1;
            KEEP_RC(rc, MPI_Waitany(n, reqs, &i, &s[0]));
            if (i < 0 || i >= n || seen[i]++) {
                diag("MPI_Waitany call %d reported index %d", k, i);
                bad++;
                continue;
            }
            st[i] = s[0];
        }
        int i = 0;
        KEEP_RC(rc, MPI_Waitany(n, reqs, &i, MPI_STATUS_IGNORE));
        bad += i != MPI_UNDEFINED;
    } else {
        int done = 0;
        unsigned long polls = 0;
        while (done < n && rc == MPI_SUCCESS) {
            int outc = -1;
            KEEP_RC(rc, MPI_Testsome(n, reqs, &outc, idx, s));
            if (outc == MPI_UNDEFINED || outc < 0) {
                diag("MPI_Testsome reported outcount %d with %d of %d requests done", outc, done,
                     n);
                bad++;
                break;
            }
            for (int k = 0; k < outc; k++) {
                if (idx[k] < 0 || idx[k] >= n || seen[idx[k]]++) {
                    diag("MPI_Testsome reported index %d", idx[k]);
                    bad++;
                    continue;
                }
                st[idx[k]] = s[k];
            }
            done += outc;
            if (++polls % 64 == 0)
                sched_yield();
        }
        int outc = 0;
        KEEP_RC(rc, MPI_Testsome(n, reqs, &outc, idx, s));
        bad += outc != MPI_UNDEFINED;
    }
    for (int i = 0; i < n; i++)
        bad += seen[i] != 1 || reqs[i] != MPI_REQUEST_NULL;
    *once = bad == 0;
    free(seen);
    free(idx);
    free(s);
    return rc;
}

/* ---- several outstanding requests to every other rank (N_EPOCHS x N_HOWS x 3 tests) ---- */

/* To each other rank t: two MPI_Iputs (the halves of region `rank` at t) and an MPI_Iget of t's
 * source data; all outstanding at once, then completed in whatever order `how` finds. */
static void outstanding(int kind, int how)
{
    const char *en = epoch_name[kind], *hn = how_name[how];
    int e = next_e++, rc = MPI_SUCCESS, ot[64], no = others(ot), n = 3 * no, once = 0;
    int src[K], *got = xmalloc((size_t)no * K * sizeof(int));
    MPI_Request *reqs = xmalloc((size_t)n * sizeof(MPI_Request));
    MPI_Status *st = xmalloc((size_t)n * sizeof(MPI_Status));
    fill_pat(src, K, rank, e);
    for (int i = 0; i < no * K; i++)
        got[i] = -1;

    KEEP_RC(rc, open_epoch(kind, w.win, ot, no, ot, no));
    for (int j = 0; j < no; j++) {
        int k = (j + rank) % no, t = ot[k]; /* every rank starts with a different target */
        KEEP_RC(rc, MPI_Iput(src, K / 2, MPI_INT, t, region_at(rank), K / 2, MPI_INT, w.win,
                             &reqs[3 * j]));
        KEEP_RC(rc, MPI_Iget(got + k * K, K, MPI_INT, t, src_at(), K, MPI_INT, w.win,
                             &reqs[3 * j + 1]));
        KEEP_RC(rc, MPI_Iput(src + K / 2, K / 2, MPI_INT, t, region_at(rank) + K / 2, K / 2,
                             MPI_INT, w.win, &reqs[3 * j + 2]));
    }
    KEEP_RC(rc, complete(how, n, reqs, st, &once));
    int empty = 1;
    for (int i = 0; i < n; i++)
        empty &= status_empty(&st[i], hn);
    ok(rc_ok(rc, hn) && once && empty,
       "%s epoch, %d outstanding requests to %d ranks, %s: each index once, empty statuses", en,
       n, no, hn);
    int gets = 1;
    for (int k = 0; k < no; k++)
        gets &= is_pat(got + k * K, K, ot[k], SRC_E);
    ok(gets, "%s epoch, %s: every MPI_Iget's data is there when its request completes", en, hn);
    rc = close_epoch(kind, w.win, ot, no, no);

    MPI_Barrier(MPI_COMM_WORLD); /* every epoch on us is over */
    int *mine = xmalloc(w.n * sizeof(int)), puts = 1;
    read_own(&w, mine);
    for (int r = 0; r < nprocs; r++)
        if (r != rank)
            puts &= is_pat(mine + region_at(r), K, r, e);
    ok(rc_ok(rc, "closing the epoch") && puts,
       "%s epoch, %s: every other rank's MPI_Iputs are in my window after the epoch", en, hn);
    free(mine);
    free(got);
    free(reqs);
    free(st);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- completion is remote completion (N_EPOCHS x 2 + 2 + 4 tests) ---- */

/* The token protocol: tell the right neighbour my request completed; learn from the left one
 * that its did. */
static void token_exchange(int tag)
{
    int token = rank;
    MPI_Sendrecv(&token, 1, MPI_INT, right(), tag, &token, 1, MPI_INT, left(), tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Under ThreadSanitizer only, with the progress agent: order the agent's writes into my window
 * before this thread's plain loads. The agent copied the left neighbour's data, and this thread
 * learns of it from a message that went through another process and through Open MPI, neither of
 * which TSan sees, so it would report the load as racing with the copy. MPI_Win_sync takes the
 * engine lock the agent copied under. Nowhere else: the call also runs a progress pass, which
 * would apply a put that arrived late and hide the very failure these tests look for. */
static void tsan_see_agent_writes(MPI_Win win)
{
#if defined(__SANITIZE_THREAD__)
    const char *agent = getenv("FLEXRMA_ASYNC_PROGRESS");
    if (agent && *agent && strcmp(agent, "0") != 0) /* as flexrma reads it */
        MPI_Win_sync(win);
#else
    (void)win;
#endif
}

/* An MPI_Iput of n ints into the right neighbour's rcw inside an epoch of the given kind,
 * MPI_Wait on it, then the token; the left neighbour's data must be in my window when its token
 * arrives. Only after everybody has looked does anybody close the epoch (whose closing call
 * would complete the put anyway). */
static void remote_iput(int kind, int n)
{
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left();
    int *src = xmalloc((size_t)n * sizeof(int));
    fill_pat(src, n, rank, e);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    KEEP_RC(rc, open_epoch(kind, rcw.win, &t, 1, &o, 1));
    KEEP_RC(rc, MPI_Iput(src, n, MPI_INT, t, 0, n, MPI_INT, rcw.win, &req));
    KEEP_RC(rc, MPI_Wait(&req, &st));
    token_exchange(TAG_TOKEN);
    tsan_see_agent_writes(rcw.win);
    int there = is_pat(rcw.buf, n, o, e); /* a plain load; nothing called since, but under TSan */
    token_exchange(TAG_CHECKED);
    KEEP_RC(rc, close_epoch(kind, rcw.win, &t, 1, 1));
    ok(rc_ok(rc, "MPI_Iput round") && there,
       "%s epoch, MPI_Iput of %d B: the data is in the target's window when the origin's MPI_Wait "
       "has returned, before the epoch closes", epoch_name[kind], (int)(n * sizeof(int)));
    free(src);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPIX_Put_signal of n ints to the right neighbour, no epoch; the source is overwritten as soon
 * as the call returns (the origin buffer may be reused then). The target waits on a sync-object
 * request for the bump, then finds the data. */
static void remote_put_signal(int n)
{
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left();
    int *src = xmalloc((size_t)n * sizeof(int));
    fill_pat(src, n, rank, e);
    KEEP_RC(rc, MPIX_Put_signal(src, n, MPI_INT, t, 0, n, MPI_INT, rctr[t], rcw.win));
    memset(src, 0xff, (size_t)n * sizeof(int));
    KEEP_RC(rc, consume(rctr[rank], 1, rcw.win));
    int there = is_pat(rcw.buf, n, o, e);
    ok(rc_ok(rc, "MPIX_Put_signal round") && there,
       "MPIX_Put_signal of %d B, no epoch: the data is in the window when the sync-object "
       "request has seen the bump (source reused at once)", (int)(n * sizeof(int)));
    free(src);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPIX_Iput_signal of n ints: once the origin's request completes, the bump is applied at the
 * target, so the target finds, on the token, the data and one unconsumed bump. */
static void remote_iput_signal(int n)
{
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left();
    int *src = xmalloc((size_t)n * sizeof(int));
    fill_pat(src, n, rank, e);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    KEEP_RC(rc, MPIX_Iput_signal(src, n, MPI_INT, t, 0, n, MPI_INT, rctr[t], rcw.win, &req));
    KEEP_RC(rc, MPI_Wait(&req, &st));
    int empty = status_empty(&st, "MPIX_Iput_signal");
    token_exchange(TAG_TOKEN);
    tsan_see_agent_writes(rcw.win);
    int there = is_pat(rcw.buf, n, o, e);
    long long bumps = sync_value(rctr[rank], rcw.win);
    ok(rc_ok(rc, "MPIX_Iput_signal round") && empty && there,
       "MPIX_Iput_signal of %d B: the data is in the window when the origin's MPI_Wait has "
       "returned", (int)(n * sizeof(int)));
    is_int(bumps, 1, "MPIX_Iput_signal of %d B: the bump is applied when the origin's MPI_Wait "
                     "has returned", (int)(n * sizeof(int)));
    consume(rctr[rank], 1, rcw.win);
    free(src);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Iget: contiguous and vector types (N_EPOCHS x 2 tests) ---- */

static void iget(int kind)
{
    int rc = MPI_SUCCESS, t = right(), o = left(), got[K], gotv[K / 2], gotv2[K];
    MPI_Datatype vec, ovec; /* K/2 ints, every other one */
    MPI_Type_vector(K / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_dup(vec, &ovec);
    MPI_Type_commit(&ovec);
    for (int i = 0; i < K; i++)
        got[i] = gotv2[i] = -1;
    for (int i = 0; i < K / 2; i++)
        gotv[i] = -1;
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};

    KEEP_RC(rc, open_epoch(kind, w.win, &t, 1, &o, 1));
    KEEP_RC(rc, MPI_Iget(got, K, MPI_INT, t, src_at(), K, MPI_INT, w.win, &req[0]));
    /* target side a vector: the even ints of t's source; origin side a vector: t's first K/2
     * ints into my even slots. The types are freed before the requests complete. */
    KEEP_RC(rc, MPI_Iget(gotv, K / 2, MPI_INT, t, src_at(), 1, vec, w.win, &req[1]));
    KEEP_RC(rc, MPI_Iget(gotv2, 1, ovec, t, src_at(), K / 2, MPI_INT, w.win, &req[2]));
    MPI_Type_free(&vec);
    MPI_Type_free(&ovec);
    KEEP_RC(rc, MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    int contig = is_pat(got, K, t, SRC_E);
    KEEP_RC(rc, MPI_Waitall(2, &req[1], MPI_STATUSES_IGNORE));
    int vbad = 0;
    for (int i = 0; i < K / 2; i++) {
        vbad += gotv[i] != pat(t, 2 * i, SRC_E);
        vbad += gotv2[2 * i] != pat(t, i, SRC_E) || gotv2[2 * i + 1] != -1;
    }
    KEEP_RC(rc, close_epoch(kind, w.win, &t, 1, 1));
    ok(rc_ok(rc, "MPI_Iget round") && contig,
       "%s epoch: contiguous MPI_Iget's data is there when MPI_Wait returns", epoch_name[kind]);
    is_int(vbad, 0, "%s epoch: MPI_Iget with a vector target type and with a vector origin type "
                    "(both freed before the wait): wrong ints", epoch_name[kind]);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Iaccumulate MPI_SUM from every rank to rank 0 (N_EPOCHS tests, + N_EPOCHS at 0) ---- */

static void iaccumulate(int kind)
{
    int rc = MPI_SUCCESS, zero = 0, add[K], all[64], na = 0;
    for (int r = 0; r < nprocs; r++)
        all[na++] = r;
    for (int i = 0; i < K; i++)
        add[i] = (rank + 1) * (i + 1);
    MPI_Request req[2];
    /* Rank 0 exposes its window to everybody, itself included; everybody accesses rank 0. */
    KEEP_RC(rc, open_epoch(kind, w.win, &zero, 1, all, rank == 0 ? na : 0));
    KEEP_RC(rc, MPI_Iaccumulate(add, K, MPI_INT, 0, acc_at(kind), K, MPI_INT, MPI_SUM, w.win,
                                &req[0]));
    KEEP_RC(rc, MPI_Iaccumulate(add, K, MPI_INT, 0, acc_at(kind), K, MPI_INT, MPI_SUM, w.win,
                                &req[1]));
    KEEP_RC(rc, MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    KEEP_RC(rc, close_epoch(kind, w.win, &zero, 1, rank == 0 ? na : 0));
    ok(rc_ok(rc, "MPI_Iaccumulate round"), "%s epoch: two MPI_Iaccumulates to rank 0, waited for",
       epoch_name[kind]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int *mine = xmalloc(w.n * sizeof(int)), bad = 0;
        read_own(&w, mine);
        for (int i = 0; i < K; i++)
            bad += mine[acc_at(kind) + i] != 2 * (i + 1) * nprocs * (nprocs + 1) / 2;
        is_int(bad, 0, "%s epoch: MPI_Iaccumulate MPI_SUM from all %d ranks at rank 0: wrong ints",
               epoch_name[kind], nprocs);
        free(mine);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- arrays mixing point-to-point and RMA requests (N_EPOCHS x N_HOWS x 3 tests) ---- */

/* [0] MPI_Irecv from the left, [1] MPI_Iput to the right, [2] MPI_Isend to the right,
 * [3] MPI_Iget from the right, [4] MPI_Irecv from the right (another tag), [5] MPI_Isend to the
 * left: one completion call for all six. */
static void mixed(int kind, int how)
{
    const char *en = epoch_name[kind], *hn = how_name[how];
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left(), once = 0;
    int src[K], out[K], in_l[K], in_r[K], got[K];
    fill_pat(src, K, rank, e);
    fill_pat(out, K, rank, e + 1);
    for (int i = 0; i < K; i++)
        in_l[i] = in_r[i] = got[i] = -1;
    MPI_Request req[6];
    MPI_Status st[6];
    const int tag_r = TAG_MIXED, tag_l = TAG_MIXED + 1; /* to the right, to the left */
    KEEP_RC(rc, open_epoch(kind, w.win, &t, 1, &o, 1));
    KEEP_RC(rc, MPI_Irecv(in_l, K, MPI_INT, o, tag_r, MPI_COMM_WORLD, &req[0]));
    KEEP_RC(rc, MPI_Iput(src, K, MPI_INT, t, region_at(rank), K, MPI_INT, w.win, &req[1]));
    KEEP_RC(rc, MPI_Isend(out, K, MPI_INT, t, tag_r, MPI_COMM_WORLD, &req[2]));
    KEEP_RC(rc, MPI_Iget(got, K, MPI_INT, t, src_at(), K, MPI_INT, w.win, &req[3]));
    KEEP_RC(rc, MPI_Irecv(in_r, K, MPI_INT, t, tag_l, MPI_COMM_WORLD, &req[4]));
    KEEP_RC(rc, MPI_Isend(out, K, MPI_INT, o, tag_l, MPI_COMM_WORLD, &req[5]));
    KEEP_RC(rc, complete(how, 6, req, st, &once));

    int n0 = -1, n4 = -1;
    MPI_Get_count(&st[0], MPI_INT, &n0);
    MPI_Get_count(&st[4], MPI_INT, &n4);
    int p2p = st[0].MPI_SOURCE == o && st[0].MPI_TAG == tag_r && n0 == K &&
              st[4].MPI_SOURCE == t && st[4].MPI_TAG == tag_l && n4 == K;
    if (!p2p)
        diag("receive statuses: [0] source %d tag %d count %d (expected %d %d %d), [4] source %d "
             "tag %d count %d (expected %d %d %d)", st[0].MPI_SOURCE, st[0].MPI_TAG, n0, o, tag_r,
             K, st[4].MPI_SOURCE, st[4].MPI_TAG, n4, t, tag_l, K);
    int data = is_pat(in_l, K, o, e + 1) && is_pat(in_r, K, t, e + 1);
    ok(rc_ok(rc, hn) && once && p2p && data,
       "%s epoch, %s over 2 MPI_Irecv, 2 MPI_Isend, MPI_Iput, MPI_Iget: every index once, the "
       "receives' statuses and data right", en, hn);
    ok(status_empty(&st[1], "MPI_Iput") && status_empty(&st[3], "MPI_Iget"),
       "%s epoch, %s: the RMA requests' statuses are empty (MPI_ANY_SOURCE, MPI_ANY_TAG)", en, hn);
    int gets = is_pat(got, K, t, SRC_E);
    rc = close_epoch(kind, w.win, &t, 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    ok(rc_ok(rc, "closing the epoch") && gets && is_pat(mine + region_at(o), K, o, e),
       "%s epoch, %s: the MPI_Iget's data at completion, the MPI_Iput's after the epoch", en, hn);
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Request_free of active requests (N_EPOCHS x 2 tests) ---- */

static void request_free(int kind)
{
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left(), src[K], got[K];
    fill_pat(src, K, rank, e);
    for (int i = 0; i < K; i++)
        got[i] = -1;
    MPI_Request req[2];
    KEEP_RC(rc, open_epoch(kind, w.win, &t, 1, &o, 1));
    KEEP_RC(rc, MPI_Iput(src, K, MPI_INT, t, region_at(rank), K, MPI_INT, w.win, &req[0]));
    KEEP_RC(rc, MPI_Iget(got, K, MPI_INT, t, src_at(), K, MPI_INT, w.win, &req[1]));
    KEEP_RC(rc, MPI_Request_free(&req[0]));
    KEEP_RC(rc, MPI_Request_free(&req[1]));
    int nulled = req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL;
    KEEP_RC(rc, close_epoch(kind, w.win, &t, 1, 1));
    ok(rc_ok(rc, "round") && nulled && is_pat(got, K, t, SRC_E),
       "%s epoch: MPI_Request_free of an active MPI_Iget: its data is there after the epoch",
       epoch_name[kind]);
    MPI_Barrier(MPI_COMM_WORLD);
    int *mine = xmalloc(w.n * sizeof(int));
    read_own(&w, mine);
    ok(is_pat(mine + region_at(o), K, o, e),
       "%s epoch: MPI_Request_free of an active MPI_Iput: its data is there after the epoch",
       epoch_name[kind]);
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- MPI_Iput under a started sync-ops request, no other epoch (4 tests) ---- */

/* On rcw: a sync-ops request (MPI_MODE_WIN_PUT) on the right neighbour's counter covers two
 * MPI_Iputs of n ints each: the first waited for before the sync-ops request, the second after
 * it (round 1), or both with it in one MPI_Waitall (round 2). The owner's sync-object request
 * completes on the bump, and then both puts are in its window. */
static void under_sync_ops(int n, int round)
{
    int e = next_e++, rc = MPI_SUCCESS, t = right(), o = left();
    int *src = xmalloc((size_t)2 * n * sizeof(int));
    fill_pat(src, 2 * n, rank, e);
    MPI_Request ops = MPI_REQUEST_NULL, obj = MPI_REQUEST_NULL, r[3];
    KEEP_RC(rc, MPI_Win_sync_ops_init(t, MPI_MODE_WIN_PUT, rctr[t], rcw.win, MPI_INFO_NULL, &ops));
    KEEP_RC(rc, MPI_Win_sync_object_init(rctr[rank], 1, rcw.win, MPI_INFO_NULL, &obj));
    KEEP_RC(rc, MPI_Start(&ops));
    KEEP_RC(rc, MPI_Iput(src, n, MPI_INT, t, 0, n, MPI_INT, rcw.win, &r[0]));
    if (round == 1) {
        KEEP_RC(rc, MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        KEEP_RC(rc, MPI_Iput(src + n, n, MPI_INT, t, n, n, MPI_INT, rcw.win, &r[1]));
        KEEP_RC(rc, MPI_Wait(&ops, MPI_STATUS_IGNORE));
        KEEP_RC(rc, MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    } else {
        KEEP_RC(rc, MPI_Iput(src + n, n, MPI_INT, t, n, n, MPI_INT, rcw.win, &r[1]));
        r[2] = ops;
        KEEP_RC(rc, MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        ops = r[2]; /* persistent: the handle stays */
    }
    ok(rc_ok(rc, "sync-ops round"), "sync-ops round %d, %d B MPI_Iputs: every call and completion "
                                    "succeeds", round, (int)(n * sizeof(int)));
    KEEP_RC(rc, MPI_Start(&obj));
    KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
    ok(rc_ok(rc, "sync-object request") && is_pat(rcw.buf, 2 * n, o, e),
       "sync-ops round %d: both MPI_Iputs are in my window once my sync-object request has seen "
       "the bump", round);
    MPI_Request_free(&ops);
    MPI_Request_free(&obj);
    free(src);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a pipeline (producer 2 tests, consumer 3) ---- */

#define PIPE_INTS (1024 * 1024) /* 4 MiB */
#define CHUNKS 64
#define CHUNK (PIPE_INTS / CHUNKS)
#define IN_FLIGHT 8 /* MPIX_Iput_signal requests the producer keeps outstanding */

static int pipe_value(int g, int round) { return g * 3 + 1 + round * 7; } /* never 0 */

/* Chunks of buf not yet seen complete that are complete now: marked, counted. */
static int scan_chunks(const int *buf, char *complete_, int round)
{
    int found = 0;
    for (int c = 0; c < CHUNKS; c++) {
        if (complete_[c])
            continue;
        int whole = 1;
        for (int i = 0; i < CHUNK && whole; i++)
            whole = buf[c * CHUNK + i] == pipe_value(c * CHUNK + i, round);
        if (whole) {
            complete_[c] = 1;
            found++;
        }
    }
    return found;
}

/* Rank 0 sends 4 MiB to rank nprocs-1 in CHUNKS chunks, each an MPIX_Put_signal (round 1) or an
 * MPIX_Iput_signal with at most IN_FLIGHT requests outstanding (round 2). The consumer waits for
 * one bump at a time: a count-1 sync-object request restarted per chunk (round 1), or one made
 * with MPIX_INFO_SYNC_AUTO_RESTART and started once (round 2). After the k-th bump at least k
 * chunks must be complete (a bump trails the data of its own put; the spec promises no order
 * between chunks, so the check takes them as a set). */
static void pipeline(int round)
{
    const int prod = 0, cons = nprocs - 1;
    int rc = MPI_SUCCESS, *buf = NULL;
    MPI_Aint size = rank == cons ? (MPI_Aint)PIPE_INTS * (MPI_Aint)sizeof(int) : 0;
    MPI_Win pw;
    if (size)
        MPI_Alloc_mem(size, MPI_INFO_NULL, &buf);
    if (buf)
        memset(buf, 0, (size_t)size);
    MPI_Win_create(buf, size, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &pw);
    MPI_Win_set_errhandler(pw, MPI_ERRORS_RETURN);
    MPI_Sync c = MPIX_SYNC_NULL;
    if (rank == cons)
        KEEP_RC(rc, MPI_Win_Sync_alloc_objects(1, &c, pw, MPI_INFO_NULL));
    MPI_Bcast(&c, 1, MPI_Handle_sync, cons, MPI_COMM_WORLD);

    if (rank == prod) {
        int *src = xmalloc((size_t)PIPE_INTS * sizeof(int));
        for (int g = 0; g < PIPE_INTS; g++)
            src[g] = pipe_value(g, round);
        MPI_Request fly[IN_FLIGHT];
        for (int k = 0; k < IN_FLIGHT; k++)
            fly[k] = MPI_REQUEST_NULL;
        for (int ch = 0; ch < CHUNKS; ch++) {
            const int *from = src + (size_t)ch * CHUNK;
            MPI_Aint at = (MPI_Aint)ch * CHUNK;
            if (round == 1) {
                KEEP_RC(rc, MPIX_Put_signal(from, CHUNK, MPI_INT, cons, at, CHUNK, MPI_INT, c, pw));
            } else {
                int slot = ch;
                if (ch >= IN_FLIGHT)
                    KEEP_RC(rc, MPI_Waitany(IN_FLIGHT, fly, &slot, MPI_STATUS_IGNORE));
                if (slot < 0 || slot >= IN_FLIGHT) {
                    diag("MPI_Waitany over %d active requests reported index %d", IN_FLIGHT,
                         slot);
                    KEEP_RC(rc, MPI_ERR_OTHER);
                    break;
                }
                KEEP_RC(rc, MPIX_Iput_signal(from, CHUNK, MPI_INT, cons, at, CHUNK, MPI_INT, c, pw,
                                             &fly[slot]));
            }
        }
        KEEP_RC(rc, MPI_Waitall(IN_FLIGHT, fly, MPI_STATUSES_IGNORE));
        ok(rc_ok(rc, "producer"), "pipeline %d: %d chunks of %d KiB sent with %s", round, CHUNKS,
           (int)(CHUNK * sizeof(int) / 1024), round == 1 ? "MPIX_Put_signal" : "MPIX_Iput_signal");
        free(src);
    }
    if (rank == cons) {
        MPI_Request obj = MPI_REQUEST_NULL;
        MPI_Info info = info_true(round == 2 ? MPIX_INFO_SYNC_AUTO_RESTART : NULL);
        KEEP_RC(rc, MPI_Win_sync_object_init(c, 1, pw, info, &obj));
        info_free(&info);
        char done[CHUNKS] = {0};
        int seen = 0, late = -1, late_seen = 0;
        if (round == 2)
            KEEP_RC(rc, MPI_Start(&obj));
        for (int k = 1; k <= CHUNKS && rc == MPI_SUCCESS; k++) {
            if (round == 1)
                KEEP_RC(rc, MPI_Start(&obj));
            KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
            seen += scan_chunks(buf, done, round);
            if (seen < k && late < 0) {
                late = k;
                late_seen = seen;
            }
        }
        if (late >= 0)
            diag("after bump %d only %d chunks were complete", late, late_seen);
        if (round == 2) { /* end the cycle: the request is armed again */
            KEEP_RC(rc, MPI_Cancel(&obj));
            KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
        }
        KEEP_RC(rc, MPI_Request_free(&obj));
        ok(rc_ok(rc, "consumer") && late < 0 && seen == CHUNKS,
           "pipeline %d: after each bump, one more chunk of the 4 MiB is complete (%s)", round,
           round == 1 ? "count-1 request restarted per chunk" : "MPIX_INFO_SYNC_AUTO_RESTART");
        is_int(sync_value(c, pw), 0, "pipeline %d: no bump left over", round);
        KEEP_RC(rc, MPI_Win_Sync_free_objects(1, &c, pw));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int frc = MPI_Win_free(&pw);
    if (rank == prod || rank == cons)
        ok(rc_ok(frc, "MPI_Win_free"), "pipeline %d: MPI_Win_free", round);
    if (buf)
        MPI_Free_mem(buf);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    test_max_ranks(64);
    const int prod = 0, cons = nprocs - 1;
    int plan = N_EPOCHS * N_HOWS * 3  /* outstanding */
               + N_EPOCHS * 2 + 2 + 4 /* remote completion */
               + N_EPOCHS * 2         /* iget */
               + N_EPOCHS             /* iaccumulate */
               + N_EPOCHS * N_HOWS * 3 /* mixed */
               + N_EPOCHS * 2         /* request_free */
               + 4;                   /* sync-ops */
    if (rank == 0)
        plan += N_EPOCHS; /* the accumulated sums */
    if (rank == prod)
        plan += 2 * 2;
    if (rank == cons)
        plan += 2 * 3;
    tap_plan(plan);

    swin_create(&w, (size_t)(nprocs + 1 + N_EPOCHS) * K);
    fill_pat(w.buf + src_at(), K, rank, SRC_E);
    swin_create(&rcw, BIG_INTS);
    MPI_Sync mine;
    shared_counter_alloc(rcw.win, &mine, &rctr);
    MPI_Barrier(MPI_COMM_WORLD); /* every window initialized before anybody accesses it */

    for (int kind = 0; kind < N_EPOCHS; kind++)
        for (int how = 0; how < N_HOWS; how++)
            outstanding(kind, how);
    for (int kind = 0; kind < N_EPOCHS; kind++) {
        remote_iput(kind, 2);
        remote_iput(kind, BIG_INTS);
    }
    remote_put_signal(2);
    remote_put_signal(BIG_INTS);
    remote_iput_signal(2);
    remote_iput_signal(BIG_INTS);
    for (int kind = 0; kind < N_EPOCHS; kind++)
        iget(kind);
    for (int kind = 0; kind < N_EPOCHS; kind++)
        iaccumulate(kind);
    for (int kind = 0; kind < N_EPOCHS; kind++)
        for (int how = 0; how < N_HOWS; how++)
            mixed(kind, how);
    for (int kind = 0; kind < N_EPOCHS; kind++)
        request_free(kind);
    under_sync_ops(4, 1);
    under_sync_ops(16 * 1024, 2); /* 64 KiB each: beyond the eager limit */
    pipeline(1);
    pipeline(2);

    shared_counter_free(rcw.win, &mine, rctr);
    iwin_free(&rcw);
    iwin_free(&w);
    return test_done();
}
