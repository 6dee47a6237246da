/* sync_object.c - MPI_Win_sync_object_init: the owner waits for `count` bumps of a counter.
 *
 * Starting the request arms it in its counter's queue (the engine's, sync/counter.c): bumps
 * accumulate in the counter whether or not anybody is armed, and the head of the queue
 * completes, consuming exactly its count, as soon as the counter holds that many, in arming
 * order. Bumps of node peers land in the counter's shared word without telling me
 * (sync/counter_shm.c): a counter with armed requests is therefore watched, and progress serves
 * it when its word grew. */
#include "syncobj.h"
#include "progress/entry.h"
#include "core/next.h"

/* A sync-object request is the engine's waiter on a counter (sync/counters.h). */
typedef fr_counter_waiter sync_object;

static const fr_req_class sync_object_class;

static fr_counter *counter_of(sync_object *so)
{
    return so->req.w ? fr_counter_find(so->req.w, so->key) : NULL;
}

static int object_start(fr_req *r)
{
    sync_object *so = (sync_object *)r;
    fr_counter *c = counter_of(so);
    if (!c)
        return fr_errorf(FR_ERR_COUNTER, "the counter of this sync-object request was freed");
    fr_counter_arm(r->w, c, so);
    return MPI_SUCCESS;
}

/* A wait or test on the request looks at its own counter first: when the bumps are there it
 * completes without a progress pass (which would read the same word, and every ring besides). */
static void object_advance(fr_req *r)
{
    sync_object *so = (sync_object *)r;
    fr_counter *c = so->armed ? counter_of(so) : NULL;
    if (c)
        fr_counter_serve(r->w, c);
}

static int object_cancel(fr_req *r)
{
    sync_object *so = (sync_object *)r;
    fr_counter *c = counter_of(so);
    if (c && so->armed) {
        fr_counter_unqueue(c, so);
        fr_counter_serve(r->w, c); /* the next in line may be satisfied already */
    }
    return MPI_SUCCESS;
}

static void object_destroy(fr_req *r)
{
    sync_object *so = (sync_object *)r;
    fr_counter *c = counter_of(so);
    if (c && so->armed) {
        fr_counter_unqueue(c, so);
        fr_counter_watch(r->w, c);
    }
}

static const fr_req_class sync_object_class = {
    .name = "sync-object request",
    .start = object_start,
    .advance = object_advance, /* bumps complete it, also from the progress engine */
    .cancel = object_cancel,
    .destroy = object_destroy,
};

static int object_init(fr_win *w, const MPI_Sync *s, int count, MPI_Info info, MPI_Request *req)
{
    fr_sync_ref ref;
    int rc;
    if (!req)
        return fr_errorf(FR_ERR_ARG, "request is NULL");
    if ((rc = fr_sync_resolve(w, s, &ref)))
        return rc;
    if (!ref.mine)
        return fr_errorf(FR_ERR_COUNTER, "the counter is owned by rank %d: a sync-object request "
                                         "is made by the counter's owner", ref.owner);
    if (count < 0)
        return fr_errorf(FR_ERR_COUNT, "count %d is negative", count);
    sync_object *so = (sync_object *)fr_req_new(&sync_object_class, w, 1, sizeof *so);
    so->key = ref.key;
    so->count = count;
    so->req.auto_restart = fr_info_flag(info, MPIX_INFO_SYNC_AUTO_RESTART) != 0;
    *req = so->req.handle;
    return MPI_SUCCESS;
}

FR_API int MPI_Win_sync_object_init(MPI_Sync sync_counter, int count, MPI_Win win, MPI_Info info,
                                    MPI_Request *req)
{
    FR_WIN_ENTRY(win, fr_not_flexrma_win(win, "MPI_Win_sync_object_init"));
    FR_WIN_EXIT("MPI_Win_sync_object_init", object_init(w, &sync_counter, count, info, req));
}
FR_PMPI(Win_sync_object_init);

/* ---- MPIX_Win_sync_object_change_count ---- */

static int change_count(fr_req *r, int delta)
{
    if (r->cls != &sync_object_class)
        return fr_errorf(FR_ERR_REQUEST, "the request is a %s, not a sync-object request",
                         r->cls->name);
    sync_object *so = (sync_object *)r;
    long long count = (long long)so->count + delta;
    if (count < 0 || count > INT32_MAX)
        return fr_errorf(FR_ERR_COUNT, "count %d %+d is out of range", so->count, delta);
    so->count = (int)count;
    fr_counter *c = counter_of(so);
    if (c && so->armed)
        fr_counter_serve(r->w, c);
    return MPI_SUCCESS;
}

FR_API int MPIX_Win_sync_object_change_count(MPI_Request req, int delta)
{
    if (!fr_active)
        return MPI_ERR_REQUEST;
    FR_ENTER();
    fr_req *r = fr_req_lookup(req);
    int rc = r ? change_count(r, delta)
               : fr_errorf(FR_ERR_REQUEST, "the request is not a flexrma sync-object request");
    fr_win *w = r ? r->w : NULL;
    FR_LEAVE();
    if (rc == MPI_SUCCESS)
        return rc;
    return w ? fr_win_raise(w, "MPIX_Win_sync_object_change_count", rc)
             : fr_comm_raise(MPI_COMM_WORLD, "MPIX_Win_sync_object_change_count", rc);
}
FR_PMPIX(Win_sync_object_change_count);
