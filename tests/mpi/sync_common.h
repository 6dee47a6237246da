/* sync_common.h - helpers for the tests of the synchronization counters (t_sync_*.c) and of
 * request-returning RMA (t_iops*.c), on top of common.h. Each helper returns the MPI return code
 * of the first call that failed, so a test can count failures without a check per call. */
#ifndef FLEXRMA_TESTS_SYNC_COMMON_H
#define FLEXRMA_TESTS_SYNC_COMMON_H

#include "common.h"
#include "flexrma.h"

#include <sched.h>

/* Remember the first failing return code of a sequence of calls. */
#define KEEP_RC(var, call)                                                                         \
    do {                                                                                           \
        int keep_rc_ = (call);                                                                     \
        if (keep_rc_ != MPI_SUCCESS && (var) == MPI_SUCCESS)                                       \
            (var) = keep_rc_;                                                                      \
    } while (0)

/* The distinct ring neighbours of this rank, itself excluded: {left, right}, or just one when
 * there are two ranks. Every rank is the neighbour of its neighbours, so a rank receives from
 * exactly as many neighbours as it sends to. */
static inline int neighbours(int nb[2])
{
    nb[0] = left();
    nb[1] = right();
    return left() == right() ? 1 : 2;
}

/* iwin_create, with MPI_ERRORS_RETURN on the window: a failing call then fails a check (the tests
 * keep every return code) instead of aborting the whole program. */
static inline void swin_create(iwin *w, size_t n)
{
    iwin_create(w, n);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
}

static inline int sync_eq(MPI_Sync a, MPI_Sync b) { return memcmp(&a, &b, sizeof a) == 0; }
static inline int sync_is_null(MPI_Sync a) { return sync_eq(a, MPIX_SYNC_NULL); }

/* An info with key = "true"; MPI_INFO_NULL when key is NULL. Free with info_free(). */
static inline MPI_Info info_true(const char *key)
{
    MPI_Info info = MPI_INFO_NULL;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, "true");
    }
    return info;
}

static inline void info_free(MPI_Info *info)
{
    if (*info != MPI_INFO_NULL)
        MPI_Info_free(info);
}

/* Every rank's k counters, rank r's at all[r*k..]: an allgather of MPI_Handle_sync. */
static inline int share_counters(const MPI_Sync *mine, int k, MPI_Sync *all)
{
    return MPI_Allgather(mine, k, MPI_Handle_sync, all, k, MPI_Handle_sync, MPI_COMM_WORLD);
}

/* One new counter per rank on win: *c this rank's, (*all)[r] rank r's (all allocated here).
 * Collective. */
static inline int shared_counter_alloc(MPI_Win win, MPI_Sync *c, MPI_Sync **all)
{
    *c = MPIX_SYNC_NULL;
    *all = xmalloc((size_t)nprocs * sizeof(MPI_Sync));
    int rc = MPI_Win_Sync_alloc_objects(1, c, win, MPI_INFO_NULL);
    KEEP_RC(rc, share_counters(c, 1, *all));
    return rc;
}

/* Free what shared_counter_alloc made (all may be NULL); collective. The barrier first: no rank
 * may bump or read a counter being freed. */
static inline void shared_counter_free(MPI_Win win, MPI_Sync *c, MPI_Sync *all)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_Sync_free_objects(1, c, win);
    free(all);
}

/* *req: a count-n sync-object request on one's own counter c, started (armed). */
static inline int arm_object(MPI_Sync c, int n, MPI_Win win, MPI_Request *req)
{
    int rc = MPI_Win_sync_object_init(c, n, win, MPI_INFO_NULL, req);
    return rc != MPI_SUCCESS ? rc : MPI_Start(req);
}

static inline int start_wait(MPI_Request *req)
{
    int rc = MPI_Start(req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* Bump counter c, owned by rank t, once: a sync-ops request with sync_mode 0, started, waited
 * for and freed. */
static inline int bump_info(int t, MPI_Sync c, MPI_Win win, MPI_Info info)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Win_sync_ops_init(t, 0, c, win, info, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = start_wait(&req);
    int rc2 = MPI_Request_free(&req);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static inline int bump(int t, MPI_Sync c, MPI_Win win)
{
    return bump_info(t, c, win, MPI_INFO_NULL);
}

/* Bump counter c of rank t n times. */
static inline int bumps(int t, MPI_Sync c, MPI_Win win, int n)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = bump(t, c, win);
    return rc;
}

/* Consume n bumps of one's own counter c: a sync-object request of count n, started, waited for
 * and freed. */
static inline int consume(MPI_Sync c, int n, MPI_Win win)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Win_sync_object_init(c, n, win, MPI_INFO_NULL, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = start_wait(&req);
    int rc2 = MPI_Request_free(&req);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* The unconsumed bumps of counter c as this rank reads them (a round trip when another rank owns
 * it); -1000 - rc if the read failed, so a failure never looks like a count. */
static inline long long sync_value(MPI_Sync c, MPI_Win win)
{
    MPI_Count v = -1;
    int rc = MPIX_Win_sync_read(c, win, &v);
    return rc == MPI_SUCCESS ? (long long)v : -1000 - rc;
}

/* Poll counter c until it holds at least n unconsumed bumps (bumps are applied asynchronously:
 * this is how a test knows they have arrived without consuming them); returns the last value
 * read. Says on stderr, without failing anything, when it has been polling for long: a hang here
 * is a bump that never arrived. */
static inline long long await_value(MPI_Sync c, MPI_Win win, long long n)
{
    long long v;
    unsigned long polls = 0;
    while ((v = sync_value(c, win)) < n && v >= 0) {
        if (++polls % 2000000 == 0)
            fprintf(stderr,
                    "# [rank %d] still waiting for a counter to reach %lld (it holds %lld)\n",
                    rank, n, v);
        if (polls % 16 == 0)
            sched_yield();
    }
    return v;
}

/* A sync request's completion status is empty: MPI_ANY_SOURCE, MPI_ANY_TAG, count 0, not
 * cancelled. 1 if so; otherwise a diagnostic. */
static inline int status_empty(const MPI_Status *st, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    int pass = st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
               !cancelled;
    if (!pass)
        diag("%s: status has MPI_SOURCE %d, MPI_TAG %d, count %d, cancelled %d; expected %d, %d, "
             "0, 0",
             what, st->MPI_SOURCE, st->MPI_TAG, count, cancelled, MPI_ANY_SOURCE, MPI_ANY_TAG);
    return pass;
}

#endif
