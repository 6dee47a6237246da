/* t_sync_counters.c - the synchronization counters of docs/specification.md section 6: their
 * allocation and transport (MPI_Handle_sync in MPI_Allgather, MPI_Bcast, MPI_Send); the counting
 * rules (surplus bumps carry over, count 0, arming order, MPIX_Win_sync_read, MPI_PROC_NULL,
 * oneself as target); and the proposal's central promise: when a sync-object request completes,
 * the data of the operations whose sync-ops requests bumped the counter is in the owner's window.
 * That is checked on a ring where every rank is producer and consumer, for many rounds of reused
 * requests, with small, large (beyond the eager limit) and derived-datatype puts, with gets,
 * accumulates, MPI_Iput/MPI_Iget, and with a lock or fence epoch open too; then progress: ranks
 * waiting on each other in MPI_Wait, an owner blocked in MPI_Wait or sitting in MPI_Barrier while
 * the others' counter epochs need it.
 *
 * Every window has MPI_ERRORS_RETURN and every return code is checked, so a failing call fails a
 * check instead of aborting. The data is read straight from window memory right after the
 * sync-object request completes: that the data is there is the point of the counters. */
#include "sync_common.h"

#define L (256 * 1024) /* ints: a 1 MiB block, far above the 8 KiB eager limit */
#define ROUNDS 50
#define VK 1000 /* elements of the vector puts */
#define K 64
#define ITER 20

/* The value of MPI_Handle_sync before MPI_Init (it must be MPI_DATATYPE_NULL). */
static int handle_null_before_init;

/* ---- allocation and transport (12 tests) ---- */

static void alloc_and_share(void)
{
    iwin w;
    swin_create(&w, 4);
    MPI_Sync c[4], *all = xmalloc((size_t)nprocs * 4 * sizeof(MPI_Sync));

    ok(handle_null_before_init, "MPI_Handle_sync is MPI_DATATYPE_NULL before MPI_Init");
    int size = -1;
    MPI_Aint lb = -1, extent = -1;
    if (MPI_Handle_sync != MPI_DATATYPE_NULL) {
        MPI_Type_size(MPI_Handle_sync, &size);
        MPI_Type_get_extent(MPI_Handle_sync, &lb, &extent);
    }
    /* Arrays of counters go in one call: the type must describe exactly one MPI_Sync. */
    ok(size == (int)sizeof(MPI_Sync) && lb == 0 && extent == (MPI_Aint)sizeof(MPI_Sync),
       "MPI_Handle_sync is a datatype of size and extent sizeof(MPI_Sync) (size %d, lb %ld, "
       "extent %ld)",
       size, (long)lb, (long)extent);

    is_int(MPI_Win_Sync_alloc_objects(0, NULL, w.win, MPI_INFO_NULL), MPI_SUCCESS,
           "MPI_Win_Sync_alloc_objects of 0 counters");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "flexrma_test_unknown_key", "1"); /* accepted and ignored */
    for (int i = 0; i < 4; i++)
        c[i] = MPIX_SYNC_NULL;
    is_int(MPI_Win_Sync_alloc_objects(4, c, w.win, info), MPI_SUCCESS,
           "MPI_Win_Sync_alloc_objects of 4 counters, with an info it ignores");
    MPI_Info_free(&info);
    int distinct = 1;
    for (int i = 0; i < 4; i++) {
        distinct &= !sync_is_null(c[i]);
        for (int j = 0; j < i; j++)
            distinct &= !sync_eq(c[i], c[j]);
    }
    ok(distinct, "the 4 new counters are distinct and none is MPIX_SYNC_NULL");

    int bad = 0;
    for (int i = 0; i < 4; i++)
        if (sync_value(c[i], w.win) != 0)
            bad++;
    is_int(bad, 0, "new counters that do not read 0 by their owner");

    int rc = share_counters(c, 4, all);
    bad = rc != MPI_SUCCESS;
    for (int i = 0; i < 4; i++)
        bad += !sync_eq(all[rank * 4 + i], c[i]);
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < 4; i++) {
            long long v = sync_value(all[r * 4 + i], w.win);
            if (v != 0 && bad++ < 3)
                diag("counter %d of rank %d reads %lld", i, r, v);
        }
    is_int(bad, 0, "counters of every rank from MPI_Allgather of MPI_Handle_sync that are not "
                   "the owner's or do not read 0 here");
    MPI_Barrier(MPI_COMM_WORLD); /* the reads are over before anyone bumps */

    /* Every rank in turn broadcasts its counters; every rank, the root too, bumps the root's
     * counter 1 through the copy it received, and the root consumes them all. */
    int bad_b = 0, rc_b = MPI_SUCCESS, root_ok = 0;
    for (int root = 0; root < nprocs; root++) {
        MPI_Sync got[4];
        if (rank == root)
            memcpy(got, c, sizeof got);
        else
            memset(got, 0xa5, sizeof got);
        KEEP_RC(rc_b, MPI_Bcast(got, 4, MPI_Handle_sync, root, MPI_COMM_WORLD));
        for (int i = 0; i < 4; i++)
            bad_b += !sync_eq(got[i], all[root * 4 + i]);
        KEEP_RC(rc_b, bump(root, got[1], w.win));
        if (rank == root) {
            int rc_c = consume(c[1], nprocs, w.win);
            long long v = sync_value(c[1], w.win);
            root_ok = rc_c == MPI_SUCCESS && v == 0;
            if (!root_ok)
                diag("consume: rc %d, then the counter reads %lld", rc_c, v);
        }
    }
    is_int(bad_b + (rc_b != MPI_SUCCESS), 0,
           "counters broadcast by every rank (MPI_Bcast) that arrived different or failed to bump "
           "their owner");
    ok(root_ok, "as root: a count-%d request on the broadcast counter consumed every rank's bump",
       nprocs);

    /* Point to point: each rank sends its counter 2 to the right; the receiver bumps it. */
    MPI_Sync from_left = MPIX_SYNC_NULL;
    MPI_Request rr;
    MPI_Status st;
    int n = -1;
    MPI_Irecv(&from_left, 1, MPI_Handle_sync, left(), 7, MPI_COMM_WORLD, &rr);
    MPI_Send(&c[2], 1, MPI_Handle_sync, right(), 7, MPI_COMM_WORLD);
    MPI_Wait(&rr, &st);
    MPI_Get_count(&st, MPI_Handle_sync, &n);
    ok(n == 1 && sync_eq(from_left, all[left() * 4 + 2]),
       "a counter sent with MPI_Send arrives whole (count %d of MPI_Handle_sync)", n);
    int rc_s = bump(left(), from_left, w.win);
    int rc_c = consume(c[2], 1, w.win);
    long long v = sync_value(c[2], w.win);
    ok(rc_s == MPI_SUCCESS && rc_c == MPI_SUCCESS && v == 0,
       "the received counter bumps its owner, whose count-1 request completes (rc %d, %d; then "
       "reads %lld)",
       rc_s, rc_c, v);

    MPI_Barrier(MPI_COMM_WORLD); /* nobody uses our counters any more */
    rc = MPI_Win_Sync_free_objects(4, c, w.win);
    int nulls = 0;
    for (int i = 0; i < 4; i++)
        nulls += sync_is_null(c[i]);
    ok(rc == MPI_SUCCESS && nulls == 4,
       "MPI_Win_Sync_free_objects of the 4 succeeds and sets them to MPIX_SYNC_NULL (rc %d, %d "
       "null)",
       rc, nulls);
    MPI_Barrier(MPI_COMM_WORLD);
    free(all);
    iwin_free(&w);
}

/* ---- the slides' example on a ring: puts, then the owner's count completes (7 tests) ---- */

/* The window: region s (L ints at s*L) is written by rank s. data: bumped by the neighbours'
 * put requests; ack: bumped by the neighbours when they have checked what this rank put, so
 * that it may overwrite it. */
static struct {
    iwin w;
    MPI_Sync data, ack, *data_all, *ack_all;
} R;

enum ring_kind { RING_SMALL, RING_LARGE, RING_VECTOR };
static const char *ring_name[] = {"8-byte puts", "1 MiB puts",
                                  "vector puts (stride 3 at the origin, 2 at the target)"};

static void ring(enum ring_kind kind)
{
    int nb[2], nn = neighbours(nb), n, ostride = 1, tstride = 1, ocount, tcount;
    MPI_Datatype otype = MPI_INT, ttype = MPI_INT;
    if (kind == RING_VECTOR) {
        n = VK;
        ostride = 3;
        tstride = 2;
        MPI_Type_vector(VK, 1, ostride, MPI_INT, &otype);
        MPI_Type_vector(VK, 1, tstride, MPI_INT, &ttype);
        MPI_Type_commit(&otype);
        MPI_Type_commit(&ttype);
        ocount = tcount = 1;
    } else {
        n = kind == RING_SMALL ? 2 : L;
        ocount = tcount = n;
    }
    int *src = xmalloc((size_t)n * ostride * sizeof(int));
    /* What the vector puts must leave alone: the window as this variant finds it. */
    int *before = xmalloc((size_t)nprocs * 2 * VK * sizeof(int));
    for (int s = 0; s < nprocs; s++)
        memcpy(before + s * 2 * VK, R.w.buf + (size_t)s * L, 2 * VK * sizeof(int));

    MPI_Request ops[2], ack_ops[2], obj, ack_obj;
    int rc = MPI_SUCCESS, bad_rounds = 0, holes = 0;
    for (int k = 0; k < nn; k++) {
        KEEP_RC(rc, MPI_Win_sync_ops_init(nb[k], MPI_MODE_WIN_PUT, R.data_all[nb[k]], R.w.win,
                                          MPI_INFO_NULL, &ops[k]));
        KEEP_RC(rc, MPI_Win_sync_ops_init(nb[k], 0, R.ack_all[nb[k]], R.w.win, MPI_INFO_NULL,
                                          &ack_ops[k]));
    }
    KEEP_RC(rc, MPI_Win_sync_object_init(R.data, nn, R.w.win, MPI_INFO_NULL, &obj));
    KEEP_RC(rc, MPI_Win_sync_object_init(R.ack, nn, R.w.win, MPI_INFO_NULL, &ack_obj));
    if (rc != MPI_SUCCESS) {
        diag("creating the requests failed (rc %d): rounds skipped", rc);
        bad_rounds = holes = ROUNDS;
        goto out;
    }

    for (int r = 0; r < ROUNDS; r++) {
        int e = kind * 1000 + r;
        if (r > 0) /* the neighbours have checked what I put last round */
            KEEP_RC(rc, start_wait(&ack_obj));
        for (int i = 0; i < n * ostride; i++)
            src[i] = i % ostride ? -7 : pat(rank, i / ostride, e);
        for (int k = 0; k < nn; k++) {
            KEEP_RC(rc, MPI_Start(&ops[k]));
            KEEP_RC(rc, MPI_Put(src, ocount, otype, nb[k], (MPI_Aint)rank * L, tcount, ttype,
                                R.w.win));
        }
        for (int k = 0; k < nn; k++)
            KEEP_RC(rc, MPI_Wait(&ops[k], MPI_STATUS_IGNORE));

        KEEP_RC(rc, start_wait(&obj)); /* both neighbours' puts of this round are here */
        int wrong = 0;
        for (int k = 0; k < nn; k++) {
            const int *region = R.w.buf + (size_t)nb[k] * L;
            for (int i = 0; i < n; i++)
                if (region[i * tstride] != pat(nb[k], i, e) && !wrong++)
                    diag("%s round %d: from rank %d element %d is %d, expected %d",
                         ring_name[kind], r, nb[k], i, region[i * tstride], pat(nb[k], i, e));
            if (kind == RING_VECTOR)
                for (int i = 0; i + 1 < VK; i++)
                    holes += region[2 * i + 1] != before[nb[k] * 2 * VK + 2 * i + 1];
        }
        bad_rounds += wrong > 0;
        for (int k = 0; k < nn; k++) /* checked: the neighbour may overwrite */
            KEEP_RC(rc, start_wait(&ack_ops[k]));
    }
    KEEP_RC(rc, start_wait(&ack_obj)); /* the last round's acknowledgements */

    for (int k = 0; k < nn; k++) {
        KEEP_RC(rc, MPI_Request_free(&ops[k]));
        KEEP_RC(rc, MPI_Request_free(&ack_ops[k]));
    }
    KEEP_RC(rc, MPI_Request_free(&obj));
    KEEP_RC(rc, MPI_Request_free(&ack_obj));
out:
    is_int(bad_rounds, 0,
           "%s, %d rounds: rounds whose data was not all in the window when the count-%d "
           "sync-object request completed",
           ring_name[kind], ROUNDS, nn);
    is_int(rc, MPI_SUCCESS, "%s: every call succeeded (first failure shown)", ring_name[kind]);
    if (kind == RING_VECTOR)
        is_int(holes, 0, "vector puts: ints between the target elements that changed");
    if (kind == RING_VECTOR) {
        MPI_Type_free(&otype);
        MPI_Type_free(&ttype);
    }
    free(src);
    free(before);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void ring_setup(void)
{
    swin_create(&R.w, (size_t)nprocs * L);
    MPI_Sync c[2];
    MPI_Win_Sync_alloc_objects(2, c, R.w.win, MPI_INFO_NULL);
    R.data = c[0];
    R.ack = c[1];
    R.data_all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    R.ack_all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    share_counters(&R.data, 1, R.data_all);
    share_counters(&R.ack, 1, R.ack_all);
}

static void ring_teardown(void)
{
    MPI_Sync c[2] = {R.data, R.ack};
    MPI_Win_Sync_free_objects(2, c, R.w.win);
    free(R.data_all);
    free(R.ack_all);
    MPI_Barrier(MPI_COMM_WORLD);
    iwin_free(&R.w);
}

/* ---- gets (4 tests) ---- */

/* Each rank publishes n ints at the start of its window, tells its neighbours with a pure signal
 * (sync_mode 0) on their "ready" counters, and they get the block under a sync-ops request for
 * MPI_MODE_WIN_GET whose bump on its "done" counter says they have read it, so the next round may
 * overwrite it. After MPI_Wait of the get request the data is at the origin. */
static void gets(int n, const char *what)
{
    iwin w;
    swin_create(&w, (size_t)n);
    MPI_Sync c[2], *ready_all = xmalloc((size_t)nprocs * sizeof(MPI_Sync)),
                   *done_all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    int rc = MPI_SUCCESS, bad_rounds = 0, nb[2], nn = neighbours(nb);
    KEEP_RC(rc, MPI_Win_Sync_alloc_objects(2, c, w.win, MPI_INFO_NULL));
    KEEP_RC(rc, share_counters(&c[0], 1, ready_all));
    KEEP_RC(rc, share_counters(&c[1], 1, done_all));
    int *got[2] = {xmalloc((size_t)n * sizeof(int)), xmalloc((size_t)n * sizeof(int))};

    MPI_Request get_ops[2], sig_ops[2], ready_obj, done_obj;
    for (int k = 0; k < nn; k++) {
        KEEP_RC(rc, MPI_Win_sync_ops_init(nb[k], MPI_MODE_WIN_GET, done_all[nb[k]], w.win,
                                          MPI_INFO_NULL, &get_ops[k]));
        KEEP_RC(rc, MPI_Win_sync_ops_init(nb[k], 0, ready_all[nb[k]], w.win, MPI_INFO_NULL,
                                          &sig_ops[k]));
    }
    KEEP_RC(rc, MPI_Win_sync_object_init(c[0], nn, w.win, MPI_INFO_NULL, &ready_obj));
    KEEP_RC(rc, MPI_Win_sync_object_init(c[1], nn, w.win, MPI_INFO_NULL, &done_obj));
    if (rc != MPI_SUCCESS) {
        diag("setting up failed (rc %d): rounds skipped", rc);
        bad_rounds = ROUNDS;
        goto out;
    }

    for (int r = 0; r < ROUNDS; r++) {
        int e = 2000 + r;
        if (r > 0) /* the neighbours have read last round's block */
            KEEP_RC(rc, start_wait(&done_obj));
        for (int i = 0; i < n; i++) /* nobody reads the window now: plain stores */
            w.buf[i] = pat(rank, i, e);
        for (int k = 0; k < nn; k++)
            KEEP_RC(rc, start_wait(&sig_ops[k]));
        KEEP_RC(rc, start_wait(&ready_obj)); /* the neighbours' blocks are ready */
        for (int k = 0; k < nn; k++) {
            for (int i = 0; i < n; i++)
                got[k][i] = -1;
            KEEP_RC(rc, MPI_Start(&get_ops[k]));
            KEEP_RC(rc, MPI_Get(got[k], n, MPI_INT, nb[k], 0, n, MPI_INT, w.win));
        }
        int wrong = 0;
        for (int k = 0; k < nn; k++) {
            KEEP_RC(rc, MPI_Wait(&get_ops[k], MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++)
                if (got[k][i] != pat(nb[k], i, e) && !wrong++)
                    diag("%s round %d: element %d from rank %d is %d, expected %d", what, r, i,
                         nb[k], got[k][i], pat(nb[k], i, e));
        }
        bad_rounds += wrong > 0;
    }
    KEEP_RC(rc, start_wait(&done_obj));
    for (int k = 0; k < nn; k++) {
        KEEP_RC(rc, MPI_Request_free(&get_ops[k]));
        KEEP_RC(rc, MPI_Request_free(&sig_ops[k]));
    }
    KEEP_RC(rc, MPI_Request_free(&ready_obj));
    KEEP_RC(rc, MPI_Request_free(&done_obj));
out:
    is_int(bad_rounds, 0, "%s, %d rounds: rounds whose data was not at the origin after MPI_Wait",
           what, ROUNDS);
    is_int(rc, MPI_SUCCESS, "%s: every call succeeded (first failure shown)", what);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(2, c, w.win);
    free(got[0]);
    free(got[1]);
    free(ready_all);
    free(done_all);
    iwin_free(&w);
}

/* ---- accumulates (5 tests) ---- */

/* What rank r adds to element i in iteration it. */
static int addend(int r, int i, int it) { return (r + 1) * (i + 1) + it; }

/* Every rank in turn is the root. Phase 1: every rank, the root too, makes ITER accumulate
 * rounds into the root's first K ints, each under its own started and waited request; the root's
 * count-nprocs*ITER request completes when all are in. Phase 2: only the others, ITER accumulates
 * under one request each; the root's count is nprocs-1. */
static void accumulates(void)
{
    iwin w;
    swin_create(&w, 2 * K);
    MPI_Sync c, *all;
    int rc = MPI_SUCCESS, vals[K], phase1_ok = 0, phase2_ok = 0;
    static int many[ITER][K];
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));

    for (int root = 0; root < nprocs; root++) {
        MPI_Request ops = MPI_REQUEST_NULL, obj = MPI_REQUEST_NULL;
        KEEP_RC(rc, MPI_Win_sync_ops_init(root, MPI_MODE_WIN_ACCUMULATE, all[root], w.win,
                                          MPI_INFO_NULL, &ops));
        if (rank == root) {
            KEEP_RC(rc, MPI_Win_sync_object_init(c, nprocs * ITER, w.win, MPI_INFO_NULL, &obj));
            KEEP_RC(rc, MPI_Start(&obj));
        }
        for (int it = 0; it < ITER; it++) {
            for (int i = 0; i < K; i++)
                vals[i] = addend(rank, i, it);
            KEEP_RC(rc, MPI_Start(&ops));
            KEEP_RC(rc, MPI_Accumulate(vals, K, MPI_INT, root, 0, K, MPI_INT, MPI_SUM, w.win));
            KEEP_RC(rc, MPI_Wait(&ops, MPI_STATUS_IGNORE));
        }
        if (rank == root) {
            KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
            int bad = 0;
            for (int i = 0; i < K; i++) {
                long long exp = 0;
                for (int r = 0; r < nprocs; r++)
                    for (int it = 0; it < ITER; it++)
                        exp += addend(r, i, it);
                bad += w.buf[i] != exp;
            }
            phase1_ok = !bad;
            KEEP_RC(rc, MPI_Request_free(&obj));
        }
        KEEP_RC(rc, MPI_Request_free(&ops));
    }
    ok(phase1_ok, "as root: the sums of %d accumulate rounds of every rank, itself included, are "
                  "complete when its count-%d request completes",
       ITER, nprocs * ITER);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int root = 0; root < nprocs; root++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == root) {
            KEEP_RC(rc, MPI_Win_sync_object_init(c, nprocs - 1, w.win, MPI_INFO_NULL, &req));
            KEEP_RC(rc, start_wait(&req));
            int bad = 0;
            for (int i = 0; i < K; i++) {
                long long exp = 0;
                for (int r = 0; r < nprocs; r++)
                    for (int it = 0; it < ITER && r != root; it++)
                        exp += addend(r, i, it) * 3;
                bad += w.buf[K + i] != exp;
            }
            phase2_ok = !bad;
        } else {
            KEEP_RC(rc, MPI_Win_sync_ops_init(root, MPI_MODE_WIN_ACCUMULATE, all[root], w.win,
                                              MPI_INFO_NULL, &req));
            KEEP_RC(rc, MPI_Start(&req));
            /* The origin buffers belong to the request until it completes: one per accumulate. */
            for (int it = 0; it < ITER; it++) {
                for (int i = 0; i < K; i++)
                    many[it][i] = addend(rank, i, it) * 3;
                KEEP_RC(rc, MPI_Accumulate(many[it], K, MPI_INT, root, K, K, MPI_INT, MPI_SUM,
                                           w.win));
            }
            KEEP_RC(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        KEEP_RC(rc, MPI_Request_free(&req));
    }
    ok(phase2_ok, "as root: the accumulates of the %d others are complete when its count-%d "
                  "request completes",
       nprocs - 1, nprocs - 1);
    is_int(rc, MPI_SUCCESS, "accumulates: every call succeeded (first failure shown)");
    shared_counter_free(w.win, &c, all);
    iwin_free(&w);
}

/* The layout of mixed_kinds, request_inside_lock, request_inside_fence and
 * iops_in_counter_epoch: each rank puts into [0,K) of its right neighbour's window (n ints) and
 * gets the K ints the neighbour published at `pub` (pattern e, written before the window is
 * shared), under one sync-ops request for the kinds in `mode` (ops), whose bump the neighbour
 * consumes with a count-1 sync-object request (obj). src is pattern e + 1, got starts at -1, exp
 * is what the get must find. */
typedef struct {
    iwin w;
    MPI_Sync c, *all;
    MPI_Request ops, obj;
    size_t pub;
    int e, src[K], got[K], exp[K];
} xfer;

static int xfer_setup(xfer *x, size_t n, size_t pub, int e, int mode)
{
    swin_create(&x->w, n);
    x->pub = pub;
    x->e = e;
    for (int i = 0; i < K; i++) {
        x->w.buf[pub + i] = pat(rank, i, e);
        x->src[i] = pat(rank, i, e + 1);
        x->got[i] = -1;
        x->exp[i] = pat(right(), i, e);
    }
    /* Its allgather also means: every rank's block is published. */
    int rc = shared_counter_alloc(x->w.win, &x->c, &x->all);
    x->ops = x->obj = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), mode, x->all[right()], x->w.win, MPI_INFO_NULL,
                                      &x->ops));
    KEEP_RC(rc, MPI_Win_sync_object_init(x->c, 1, x->w.win, MPI_INFO_NULL, &x->obj));
    return rc;
}

/* The put and the get under ops, waited for; then obj consumes the left neighbour's bump. */
static int xfer_put_get(xfer *x)
{
    int rc = MPI_SUCCESS;
    KEEP_RC(rc, MPI_Start(&x->ops));
    KEEP_RC(rc, MPI_Put(x->src, K, MPI_INT, right(), 0, K, MPI_INT, x->w.win));
    KEEP_RC(rc, MPI_Get(x->got, K, MPI_INT, right(), (MPI_Aint)x->pub, K, MPI_INT, x->w.win));
    KEEP_RC(rc, MPI_Wait(&x->ops, MPI_STATUS_IGNORE));
    KEEP_RC(rc, start_wait(&x->obj));
    return rc;
}

/* Ints of [0,K) of my window that are not the left neighbour's src. */
static int xfer_put_wrong(const xfer *x)
{
    int bad = 0;
    for (int i = 0; i < K; i++)
        bad += x->w.buf[i] != pat(left(), i, x->e + 1);
    return bad;
}

static void xfer_free(xfer *x)
{
    MPI_Request_free(&x->ops);
    MPI_Request_free(&x->obj);
    shared_counter_free(x->w.win, &x->c, x->all);
    iwin_free(&x->w);
}

/* One request covering all three kinds, to the right neighbour: a put, an accumulate and a get
 * (of a block the owner wrote before the window existed). 2 tests. */
static void mixed_kinds(void)
{
    xfer x; /* [0,K): written by the left neighbour's put; [K,2K): its accumulate; [2K,3K): pub */
    int rc = xfer_setup(&x, 3 * K, 2 * K, 77,
                        MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET | MPI_MODE_WIN_ACCUMULATE);
    int add[K];
    for (int i = 0; i < K; i++)
        add[i] = addend(rank, i, 0);
    KEEP_RC(rc, MPI_Start(&x.ops));
    KEEP_RC(rc, MPI_Put(x.src, K, MPI_INT, right(), 0, K, MPI_INT, x.w.win));
    KEEP_RC(rc, MPI_Accumulate(add, K, MPI_INT, right(), K, K, MPI_INT, MPI_SUM, x.w.win));
    KEEP_RC(rc, MPI_Get(x.got, K, MPI_INT, right(), (MPI_Aint)x.pub, K, MPI_INT, x.w.win));
    KEEP_RC(rc, MPI_Wait(&x.ops, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && same_ints(x.got, x.exp, K),
       "put, accumulate and get under one request for all three kinds: the get's data is at the "
       "origin after MPI_Wait (rc %d)",
       rc);
    KEEP_RC(rc, start_wait(&x.obj));
    int bad = 0;
    for (int i = 0; i < K; i++)
        bad += x.w.buf[i] != pat(left(), i, x.e + 1) || x.w.buf[K + i] != addend(left(), i, 0);
    ok(rc == MPI_SUCCESS && !bad,
       "... and the put and the accumulate are in the target window when its request completes "
       "(rc %d, %d wrong)",
       rc, bad);
    xfer_free(&x);
}

/* ---- counting rules with pure signals (13 tests) ---- */

/* Every rank bumps the counter of its right neighbour (sync_mode 0) and consumes the bumps of its
 * left one. Barriers keep the ranks in step, so "before" and "after" are well defined. */
static void signals(void)
{
    iwin w;
    swin_create(&w, 1);
    MPI_Sync c, *all;
    int rc = MPI_SUCCESS;
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));
    const MPI_Sync right_c = all[right()];

    /* A producer running ahead: 3 bumps before the consumer arms anything. */
    KEEP_RC(rc, bumps(right(), right_c, w.win, 3));
    is_int(await_value(c, w.win, 3), 3,
           "3 bumps before anything is armed: the counter holds 3 unconsumed bumps");
    MPI_Barrier(MPI_COMM_WORLD);
    is_int(sync_value(right_c, w.win), 3,
           "MPIX_Win_sync_read of the right neighbour's counter from here: 3");
    MPI_Barrier(MPI_COMM_WORLD); /* read before anyone consumes */
    int rc_c = MPI_SUCCESS;
    for (int i = 0; i < 3; i++)
        KEEP_RC(rc_c, consume(c, 1, w.win));
    long long v = sync_value(c, w.win);
    ok(rc_c == MPI_SUCCESS && v == 0,
       "3 count-1 requests armed after the 3 bumps: each completes (surplus carries over), then "
       "the counter holds %lld", v);
    KEEP_RC(rc, rc_c);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A count-2 completion consumes exactly 2. */
    KEEP_RC(rc, bumps(right(), right_c, w.win, 3));
    await_value(c, w.win, 3);
    KEEP_RC(rc, consume(c, 2, w.win));
    is_int(sync_value(c, w.win), 1, "3 bumps, then a count-2 completion: 1 left");
    KEEP_RC(rc, consume(c, 1, w.win));
    is_int(sync_value(c, w.win), 0, "then a count-1 completion: 0 left");
    MPI_Barrier(MPI_COMM_WORLD);

    /* count 0 completes at once and consumes nothing. */
    KEEP_RC(rc, bump(right(), right_c, w.win));
    await_value(c, w.win, 1);
    MPI_Request z = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag = 0;
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 0, w.win, MPI_INFO_NULL, &z));
    KEEP_RC(rc, MPI_Start(&z));
    KEEP_RC(rc, MPI_Test(&z, &flag, &st));
    ok(flag && status_empty(&st, "count-0 request"),
       "a count-0 request completes at once: the first MPI_Test after MPI_Start says so");
    is_int(sync_value(c, w.win), 1, "the count-0 request consumed nothing: 1 bump still held");
    KEEP_RC(rc, consume(c, 1, w.win));
    KEEP_RC(rc, MPI_Request_free(&z));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Two armed requests on one counter are served in arming order: a (count 2), then b
     * (count 1). b must not take the first bump although its count is met. */
    MPI_Request a = MPI_REQUEST_NULL, b = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 2, w.win, MPI_INFO_NULL, &a));
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 1, w.win, MPI_INFO_NULL, &b));
    KEEP_RC(rc, MPI_Start(&a));
    KEEP_RC(rc, MPI_Start(&b));
    MPI_Barrier(MPI_COMM_WORLD); /* armed everywhere: the bumps come only now */
    KEEP_RC(rc, bump(right(), right_c, w.win));
    int fa = 0, fb = 0;
    for (;;) { /* until the bump has arrived (read 1) or a request took it */
        MPI_Test(&a, &fa, MPI_STATUS_IGNORE);
        MPI_Test(&b, &fb, MPI_STATUS_IGNORE);
        long long v1 = sync_value(c, w.win);
        if (fa || fb || v1 != 0)
            break;
        sched_yield();
    }
    if (!fa && !fb) {
        MPI_Test(&a, &fa, MPI_STATUS_IGNORE);
        MPI_Test(&b, &fb, MPI_STATUS_IGNORE);
    }
    int first_ok = ok(!fa && !fb, "after 1 bump, neither the count-2 request armed first nor the "
                                  "count-1 request armed second has completed (a %d, b %d)",
                      fa, fb);
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    if (first_ok) {
        KEEP_RC(rc, MPI_Wait(&a, MPI_STATUS_IGNORE));
        KEEP_RC(rc, MPI_Test(&b, &fb, MPI_STATUS_IGNORE));
        ok(!fb, "after 2 bumps: the count-2 request completed, the count-1 request still waits");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    KEEP_RC(rc, bump(right(), right_c, w.win));
    if (first_ok) {
        KEEP_RC(rc, MPI_Wait(&b, MPI_STATUS_IGNORE));
        is_int(sync_value(c, w.win), 0, "after 3 bumps the count-1 request completed; 0 left");
    } else { /* the order is broken: do not wait for what may never come */
        if (!fa) {
            MPI_Cancel(&a);
            MPI_Wait(&a, MPI_STATUS_IGNORE);
        }
        if (!fb) {
            MPI_Cancel(&b);
            MPI_Wait(&b, MPI_STATUS_IGNORE);
        }
        skip(2, "the arming order is already broken");
    }
    MPI_Request_free(&a);
    MPI_Request_free(&b);
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPI_PROC_NULL as target: completes at once, bumps nothing. */
    MPI_Request p = MPI_REQUEST_NULL;
    flag = 0;
    int rc_p = MPI_Win_sync_ops_init(MPI_PROC_NULL, MPI_MODE_WIN_PUT, right_c, w.win,
                                     MPI_INFO_NULL, &p);
    if (rc_p == MPI_SUCCESS)
        rc_p = MPI_Start(&p);
    if (rc_p == MPI_SUCCESS) {
        int one = 1;
        KEEP_RC(rc_p, MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w.win));
        KEEP_RC(rc_p, MPI_Test(&p, &flag, &st));
    }
    ok(rc_p == MPI_SUCCESS && flag && status_empty(&st, "MPI_PROC_NULL request"),
       "a sync-ops request to MPI_PROC_NULL completes at once (rc %d, flag %d)", rc_p, flag);
    if (p != MPI_REQUEST_NULL)
        MPI_Request_free(&p);
    MPI_Barrier(MPI_COMM_WORLD);
    is_int(sync_value(c, w.win), 0, "... and bumped no counter");
    is_int(rc, MPI_SUCCESS, "signals: every call succeeded (first failure shown)");

    shared_counter_free(w.win, &c, all);
    iwin_free(&w);
}

/* ---- oneself as target (3 tests) ---- */

static void self_target(void)
{
    iwin w; /* [0,K) put, [K,2K) accumulate, [2K,3K) read by the get */
    swin_create(&w, 3 * K);
    for (int i = 0; i < K; i++)
        w.buf[2 * K + i] = pat(rank, i, 90);
    MPI_Sync c;
    int rc = MPI_SUCCESS, src[K], add[K], got[K], exp[K];
    KEEP_RC(rc, MPI_Win_Sync_alloc_objects(1, &c, w.win, MPI_INFO_NULL));
    for (int i = 0; i < K; i++) {
        src[i] = pat(rank, i, 91);
        add[i] = addend(rank, i, 5);
        got[i] = -1;
        exp[i] = pat(rank, i, 90);
    }
    MPI_Request ops = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_ops_init(rank,
                                      MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET | MPI_MODE_WIN_ACCUMULATE,
                                      c, w.win, MPI_INFO_NULL, &ops));
    KEEP_RC(rc, MPI_Start(&ops));
    KEEP_RC(rc, MPI_Put(src, K, MPI_INT, rank, 0, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Accumulate(add, K, MPI_INT, rank, K, K, MPI_INT, MPI_SUM, w.win));
    KEEP_RC(rc, MPI_Get(got, K, MPI_INT, rank, 2 * K, K, MPI_INT, w.win));
    KEEP_RC(rc, MPI_Wait(&ops, MPI_STATUS_IGNORE));
    ok(same_ints(got, exp, K), "get from oneself: the data is there after MPI_Wait");
    KEEP_RC(rc, consume(c, 1, w.win));
    int bad = 0;
    for (int i = 0; i < K; i++)
        bad += w.buf[i] != src[i] || w.buf[K + i] != add[i];
    ok(rc == MPI_SUCCESS && !bad,
       "put and accumulate into one's own window under one's own counter: there when the "
       "count-1 request completes (rc %d, %d wrong)", rc, bad);
    KEEP_RC(rc, MPI_Request_free(&ops));
    KEEP_RC(rc, bump(rank, c, w.win));
    KEEP_RC(rc, consume(c, 1, w.win));
    ok(rc == MPI_SUCCESS && sync_value(c, w.win) == 0,
       "a pure signal to one's own counter is consumed by a count-1 request (rc %d)", rc);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(1, &c, w.win);
    iwin_free(&w);
}

/* ---- progress while waiting (5 tests) ---- */

/* Every rank puts 1 MiB into its right neighbour and then waits, first in MPI_Wait for its put
 * request (a large put needs the target to take part), then in MPI_Wait for its left neighbour's
 * bump; with two ranks both wait on each other. 3 rounds. */
static void mutual_wait(void)
{
    iwin w;
    swin_create(&w, L);
    MPI_Sync c, *all;
    int rc = MPI_SUCCESS, bad = 0, *src = xmalloc((size_t)L * sizeof(int));
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));
    MPI_Request ops = MPI_REQUEST_NULL, obj = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Win_sync_ops_init(right(), MPI_MODE_WIN_PUT, all[right()], w.win,
                                      MPI_INFO_NULL, &ops));
    KEEP_RC(rc, MPI_Win_sync_object_init(c, 1, w.win, MPI_INFO_NULL, &obj));
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < L; i++)
            src[i] = pat(rank, i, 300 + r);
        KEEP_RC(rc, MPI_Start(&obj));
        KEEP_RC(rc, MPI_Start(&ops));
        KEEP_RC(rc, MPI_Put(src, L, MPI_INT, right(), 0, L, MPI_INT, w.win));
        KEEP_RC(rc, MPI_Wait(&ops, MPI_STATUS_IGNORE));
        KEEP_RC(rc, MPI_Wait(&obj, MPI_STATUS_IGNORE));
        for (int i = 0; i < L; i++)
            bad += w.buf[i] != pat(left(), i, 300 + r);
        MPI_Barrier(MPI_COMM_WORLD); /* checked before the next round overwrites */
    }
    ok(rc == MPI_SUCCESS && !bad,
       "ranks waiting in MPI_Wait on each other's counters, 1 MiB puts, 3 rounds: no deadlock, "
       "data right (rc %d, %d wrong ints)", rc, bad);
    MPI_Request_free(&ops);
    MPI_Request_free(&obj);
    shared_counter_free(w.win, &c, all);
    free(src);
    iwin_free(&w);
}

/* Every rank in turn blocks in MPI_Wait on a count-(nprocs-1) request before the others even
 * start: their 256 KiB puts into its window can only be served by that wait. */
static void blocked_owner(void)
{
    const int n = 64 * 1024;
    iwin w;
    swin_create(&w, (size_t)nprocs * n);
    MPI_Sync c, *all;
    int rc = MPI_SUCCESS, mine_ok = 0, *src = xmalloc((size_t)n * sizeof(int));
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));
    for (int root = 0; root < nprocs; root++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == root) {
            KEEP_RC(rc, MPI_Win_sync_object_init(c, nprocs - 1, w.win, MPI_INFO_NULL, &req));
            KEEP_RC(rc, MPI_Start(&req));
            MPI_Barrier(MPI_COMM_WORLD);
            KEEP_RC(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
            int bad = 0;
            for (int s = 0; s < nprocs; s++)
                for (int i = 0; i < n && s != rank; i++)
                    bad += w.buf[(size_t)s * n + i] != pat(s, i, 400 + root);
            mine_ok = !bad;
        } else {
            for (int i = 0; i < n; i++)
                src[i] = pat(rank, i, 400 + root);
            KEEP_RC(rc, MPI_Win_sync_ops_init(root, MPI_MODE_WIN_PUT, all[root], w.win,
                                              MPI_INFO_NULL, &req));
            MPI_Barrier(MPI_COMM_WORLD); /* the root is (about to be) blocked in MPI_Wait */
            KEEP_RC(rc, MPI_Start(&req));
            KEEP_RC(rc, MPI_Put(src, n, MPI_INT, root, (MPI_Aint)rank * n, n, MPI_INT, w.win));
            KEEP_RC(rc, MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        KEEP_RC(rc, MPI_Request_free(&req));
    }
    ok(mine_ok, "blocked in MPI_Wait on its sync-object request, a rank receives the 256 KiB puts "
                "of all others into its window");
    is_int(rc, MPI_SUCCESS, "blocked owner: every call succeeded (first failure shown)");
    shared_counter_free(w.win, &c, all);
    free(src);
    iwin_free(&w);
}

/* A put covered by a started request while a shared lock on the same target is open belongs to
 * the request: its completion, not the unlock, completes the put. Each rank locks its right
 * neighbour, puts under a request, and unlocks only after that neighbour has seen the data. A
 * get (a kind the request does not cover) belongs to the lock epoch. */
static void request_inside_lock(void)
{
    xfer x; /* [0,K) put by the left neighbour; [K,2K) read by the right one */
    int rc = xfer_setup(&x, 2 * K, K, 500, MPI_MODE_WIN_PUT), token = 0;
    MPI_Request sr;
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, x.w.win));
    KEEP_RC(rc, xfer_put_get(&x));
    int bad = xfer_put_wrong(&x);
    ok(rc == MPI_SUCCESS && !bad,
       "a covered put inside a lock epoch is in the window when the request's bump is consumed, "
       "before the origin unlocks (rc %d, %d wrong)", rc, bad);
    /* Tell the left neighbour we have seen its put; unlock once the right one has seen ours. */
    MPI_Isend(&token, 1, MPI_INT, left(), 8, MPI_COMM_WORLD, &sr);
    MPI_Recv(&token, 1, MPI_INT, right(), 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    KEEP_RC(rc, MPI_Win_unlock(right(), x.w.win));
    ok(rc == MPI_SUCCESS && same_ints(x.got, x.exp, K),
       "the get (not covered) in the same lock epoch is complete at the unlock (rc %d)", rc);
    xfer_free(&x);
}

/* The other order: the lock epoch closes while the request is still active, so the unlock's
 * message to the target carries the covered put issued before it (packed at MPI_Put over the
 * message transport), and the bump, sent alone at MPI_Wait, must still count it. (1 test) */
static void unlock_before_request(void)
{
    xfer x; /* [0,K) put by the left neighbour; [K,2K) read by the right one */
    int rc = xfer_setup(&x, 2 * K, K, 505, MPI_MODE_WIN_PUT);
    KEEP_RC(rc, MPI_Start(&x.ops));
    KEEP_RC(rc, MPI_Put(x.src, K, MPI_INT, right(), 0, K, MPI_INT, x.w.win));
    KEEP_RC(rc, MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, x.w.win));
    KEEP_RC(rc, MPI_Get(x.got, K, MPI_INT, right(), (MPI_Aint)x.pub, K, MPI_INT, x.w.win));
    KEEP_RC(rc, MPI_Win_unlock(right(), x.w.win));
    int got_ok = same_ints(x.got, x.exp, K);
    KEEP_RC(rc, MPI_Wait(&x.ops, MPI_STATUS_IGNORE));
    KEEP_RC(rc, start_wait(&x.obj));
    int bad = xfer_put_wrong(&x);
    ok(rc == MPI_SUCCESS && got_ok && !bad,
       "a lock epoch opened and closed inside a request's epoch: the get is complete at the "
       "unlock, the covered put in the window when the bump is consumed (rc %d, %d wrong)", rc,
       bad);
    xfer_free(&x);
}

/* The same inside a fence epoch: the covered put is in the window when the request's bump is
 * consumed, before the closing fence; the get (not covered) is complete at the closing fence. */
static void request_inside_fence(void)
{
    xfer x; /* [0,K) put by the left neighbour; [K,2K) read by the right one */
    int rc = xfer_setup(&x, 2 * K, K, 510, MPI_MODE_WIN_PUT);
    KEEP_RC(rc, MPI_Win_fence(0, x.w.win));
    KEEP_RC(rc, xfer_put_get(&x));
    int bad = xfer_put_wrong(&x);
    KEEP_RC(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, x.w.win));
    ok(rc == MPI_SUCCESS && !bad && same_ints(x.got, x.exp, K),
       "in a fence epoch: the covered put is in the window when the request's bump is consumed, "
       "before the closing fence; the get completes at the fence (rc %d, %d wrong)", rc, bad);
    xfer_free(&x);
}

/* The owner need not call anything for counter epochs on its window: every rank in turn sits in
 * MPI_Barrier while the others put into its window under requests with remote completion, whose
 * MPI_Wait needs the bump applied there. Then, with nothing armed, it finds the bumps and the
 * data. (1 test) */
static void owner_in_barrier(void)
{
    iwin w;
    swin_create(&w, (size_t)nprocs * K);
    MPI_Sync c, *all;
    MPI_Info info = info_true(MPIX_INFO_SYNC_REMOTE_COMPLETE);
    int rc = MPI_SUCCESS, mine_ok = 0, src[K];
    KEEP_RC(rc, shared_counter_alloc(w.win, &c, &all));
    for (int root = 0; root < nprocs; root++) {
        if (rank == root) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD); /* the others' requests complete while we sit here */
            long long v = sync_value(c, w.win);
            int bad = 0;
            for (int s = 0; s < nprocs; s++)
                for (int i = 0; i < K && s != rank; i++)
                    bad += w.buf[s * K + i] != pat(s, i, 520 + root);
            mine_ok = rc == MPI_SUCCESS && v == nprocs - 1 && !bad;
            if (!mine_ok)
                diag("counter %lld (expected %d), %d wrong ints, rc %d", v, nprocs - 1, bad, rc);
            KEEP_RC(rc, consume(c, nprocs - 1, w.win));
        } else {
            MPI_Request o = MPI_REQUEST_NULL;
            for (int i = 0; i < K; i++)
                src[i] = pat(rank, i, 520 + root);
            KEEP_RC(rc, MPI_Win_sync_ops_init(root, MPI_MODE_WIN_PUT, all[root], w.win, info, &o));
            MPI_Barrier(MPI_COMM_WORLD);
            KEEP_RC(rc, MPI_Start(&o));
            KEEP_RC(rc, MPI_Put(src, K, MPI_INT, root, (MPI_Aint)rank * K, K, MPI_INT, w.win));
            KEEP_RC(rc, MPI_Wait(&o, MPI_STATUS_IGNORE));
            MPI_Barrier(MPI_COMM_WORLD);
            KEEP_RC(rc, MPI_Request_free(&o));
        }
    }
    ok(mine_ok, "while it sits in MPI_Barrier, the others' remote-complete put requests to its "
                "window complete; then it holds their %d bumps and their data", nprocs - 1);
    info_free(&info);
    shared_counter_free(w.win, &c, all);
    iwin_free(&w);
}

/* MPI_Iput and MPI_Iget under a started sync-ops request, which covers them: no other epoch. The
 * Iget's data is there after its MPI_Wait; the Iput's data is in the target window when the
 * request's bump is consumed. (2 tests) */
static void iops_in_counter_epoch(void)
{
    xfer x; /* [0,K) put by the left neighbour; [K,2K) read by the right one */
    int rc = xfer_setup(&x, 2 * K, K, 530, MPI_MODE_WIN_PUT | MPI_MODE_WIN_GET);
    MPI_Request ip = MPI_REQUEST_NULL, ig = MPI_REQUEST_NULL;
    KEEP_RC(rc, MPI_Start(&x.ops));
    KEEP_RC(rc, MPI_Iput(x.src, K, MPI_INT, right(), 0, K, MPI_INT, x.w.win, &ip));
    KEEP_RC(rc, MPI_Iget(x.got, K, MPI_INT, right(), (MPI_Aint)x.pub, K, MPI_INT, x.w.win, &ig));
    KEEP_RC(rc, MPI_Wait(&ig, MPI_STATUS_IGNORE));
    ok(rc == MPI_SUCCESS && same_ints(x.got, x.exp, K),
       "MPI_Iget under a started sync-ops request: the data is there after its MPI_Wait (rc %d)",
       rc);
    KEEP_RC(rc, MPI_Wait(&ip, MPI_STATUS_IGNORE));
    KEEP_RC(rc, MPI_Wait(&x.ops, MPI_STATUS_IGNORE));
    KEEP_RC(rc, start_wait(&x.obj));
    int bad = xfer_put_wrong(&x);
    ok(rc == MPI_SUCCESS && !bad,
       "MPI_Iput under a started sync-ops request: in the window when the request's bump is "
       "consumed (rc %d, %d wrong)", rc, bad);
    xfer_free(&x);
}

int main(int argc, char **argv)
{
    handle_null_before_init = MPI_Handle_sync == MPI_DATATYPE_NULL;
    test_init(&argc, &argv);
    tap_plan(12 + 13 + 3 + 7 + 4 + 5 + 2 + 5 + 1 + 1 + 1);

    /* The counting rules first: if they are broken, the rounds below may hang (a lost bump is
     * waited for forever), and the failures already reported say why. */
    alloc_and_share();
    signals();
    self_target();

    ring_setup();
    ring(RING_SMALL);
    ring(RING_LARGE);
    ring(RING_VECTOR);
    ring_teardown();

    gets(2, "8-byte gets");
    gets(L, "1 MiB gets");

    accumulates();
    mixed_kinds();
    iops_in_counter_epoch();

    mutual_wait();
    blocked_owner();
    owner_in_barrier();
    request_inside_lock();
    unlock_before_request();
    request_inside_fence();

    return test_done();
}
