/* request.c - flexrma's requests behind handles of the MPI library (request.h). */
#include "request.h"
#include "core/next.h"
#include "core/u64map.h"
#include "win/win.h"

#include <stdlib.h>
#include <string.h>

static MPI_Comm req_comm = MPI_COMM_NULL; /* private duplicate of MPI_COMM_SELF */
static fr_u64map by_handle;               /* the application's handle -> fr_req */
static fr_u64map tags_used;               /* tags of live handles (requests and the pool) */
static int next_tag = 1, tag_ub;
/* Requests alive. Changed under the engine lock, but fr_req_any reads it without: the hooks of
 * every MPI request function ask it first, and the progress agent (or another thread) may be
 * releasing a request meanwhile. So its stores and that load are atomic, relaxed: a request this
 * thread can name (it made it, or got its handle from the thread that did) is always counted. */
static int nreqs;
static fr_req *detached;                  /* freed while active, still advancing */

/* Handles of finished one-shot requests, kept for the next one: creating a receive request
 * costs an allocation in the MPI library, reusing an inactive one nothing. */
#define FR_POOL_MAX 256
typedef struct pooled {
    MPI_Request handle;
    int tag;
} pooled;
static pooled pool[FR_POOL_MAX];
static int npool;

static uint64_t handle_key(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k;
}

int fr_req_any(void) { return __atomic_load_n(&nreqs, __ATOMIC_RELAXED) > 0; }

fr_req *fr_req_lookup(MPI_Request handle)
{
    if (nreqs == 0 || handle == MPI_REQUEST_NULL)
        return NULL;
    return fr_u64map_get(&by_handle, handle_key(handle));
}

static void setup(void)
{
    if (req_comm != MPI_COMM_NULL)
        return;
    FR_CHECK_MPI(PMPI_Comm_dup(MPI_COMM_SELF, &req_comm));
    int *ub, flag = 0;
    PMPI_Comm_get_attr(req_comm, MPI_TAG_UB, &ub, &flag);
    tag_ub = flag ? *ub : 32767;
}

/* A tag no live handle uses. */
static int take_tag(void)
{
    for (int tries = 0; tries <= tag_ub; tries++) {
        int t = next_tag;
        next_tag = next_tag >= tag_ub ? 1 : next_tag + 1;
        if (!fr_u64map_get(&tags_used, (uint64_t)t)) {
            fr_u64map_put(&tags_used, (uint64_t)t, &tags_used);
            return t;
        }
    }
    fr_fatal("more flexrma requests alive (%d) than tags (%d)", nreqs, tag_ub);
}

/* A fresh inactive persistent receive of the MPI library, with a tag of its own. */
static void new_handle(fr_req *r)
{
    if (!r->persistent && npool > 0) {
        npool--;
        r->handle = pool[npool].handle;
        r->tag = pool[npool].tag;
        return;
    }
    r->tag = take_tag();
    FR_CHECK_MPI(PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, r->tag, req_comm, &r->handle));
}

/* A one-shot request's inactive handle goes back to the pool. */
static void pool_handle(MPI_Request handle, int tag)
{
    if (npool < FR_POOL_MAX) {
        pool[npool++] = (pooled){handle, tag};
        return;
    }
    fr_u64map_del(&tags_used, (uint64_t)tag);
    FR_CHECK_MPI(FR_NEXT(Request_free)(&handle));
}

static void list_add(fr_req **head, fr_req *r)
{
    r->prev = NULL;
    r->next = *head;
    if (*head)
        (*head)->prev = r;
    *head = r;
}

static void list_del(fr_req **head, fr_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        *head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
}

fr_req *fr_req_new(const fr_req_class *cls, fr_win *w, int persistent, size_t size)
{
    setup();
    fr_req *r = fr_xcalloc(1, size);
    r->cls = cls;
    r->w = w;
    r->persistent = persistent != 0;
    r->active = !persistent;
    new_handle(r);
    fr_u64map_put(&by_handle, handle_key(r->handle), r);
    list_add(&w->reqs, r);
    __atomic_store_n(&nreqs, nreqs + 1, __ATOMIC_RELAXED);
    return r;
}

/* Drop flexrma's side of r; its handle is the caller's business. */
static void release(fr_req *r)
{
    if (r->cls->destroy)
        r->cls->destroy(r);
    if (r->detached)
        list_del(&detached, r);
    else if (r->w)
        list_del(&r->w->reqs, r);
    if (!r->detached)
        fr_u64map_del(&by_handle, handle_key(r->handle));
    __atomic_store_n(&nreqs, nreqs - 1, __ATOMIC_RELAXED);
    free(r);
}

static void send_signal(fr_req *r)
{
    FR_CHECK_MPI(FR_NEXT(Send)(NULL, 0, MPI_BYTE, 0, r->tag, req_comm));
    r->signalled = 1;
}

void fr_req_complete(fr_req *r, int error)
{
    if (!r->active)
        return;
    r->active = 0;
    r->error = error;
    if (r->posted) {
        send_signal(r); /* the library's receive is what the application waits on now */
        if (r->detached) {
            fr_u64map_del(&tags_used, (uint64_t)r->tag);
            release(r); /* the library frees its request once the message matches */
        }
        return;
    }
    if (r->detached) {
        release(r); /* the application freed the handle; nobody will look */
        return;
    }
    r->done = 1;
}

void fr_req_post(fr_req *r)
{
    if (r->posted || (!r->active && !r->done))
        return; /* already the library's, or inactive: the library reports it so */
    FR_CHECK_MPI(FR_NEXT(Start)(&r->handle));
    r->posted = 1;
    if (r->done) {
        r->done = 0;
        send_signal(r);
    }
}

int fr_req_start(fr_req *r)
{
    if (!r->w)
        return fr_errorf(FR_ERR_WIN, "the window of this %s was freed", r->cls->name);
    if (r->active || r->done || r->signalled)
        return fr_errorf(FR_ERR_REQUEST, "MPI_Start on an active %s", r->cls->name);
    r->active = 1;
    r->restarted = 0;
    r->cancelled = 0;
    r->error = MPI_SUCCESS;
    int rc = r->cls->start(r); /* may complete it at once */
    if (rc != MPI_SUCCESS)
        r->active = 0;
    return rc;
}

void fr_req_status(const fr_req *r, MPI_Status *st, int from_library)
{
    if (!st || st == MPI_STATUS_IGNORE)
        return;
    /* An RMA request has no sender and no tag: its status is empty, as MPI reports for inactive
     * requests. The library's status of a completion message only needs blanking. */
    if (from_library && !r->signalled)
        return; /* not our completion (inactive, or cancelled in the library): keep it */
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    if (!from_library) {
        PMPI_Status_set_elements(st, MPI_BYTE, 0);
        PMPI_Status_set_cancelled(st, r->done && r->cancelled);
    }
}

int fr_req_take(fr_req *r, MPI_Request *slot, MPI_Status *st, int from_library)
{
    int error = r->error, cancelled = r->cancelled;
    fr_req_status(r, st, from_library);
    if (from_library)
        r->posted = 0; /* the library's persistent receive is inactive again */
    if (!r->signalled && !r->done)
        return MPI_SUCCESS; /* an inactive persistent request */
    r->done = r->signalled = r->posted = 0;
    r->error = MPI_SUCCESS;
    if (!r->persistent) {
        MPI_Request h = r->handle;
        int tag = r->tag;
        release(r);
        pool_handle(h, tag);
        *slot = MPI_REQUEST_NULL;
    } else if (r->auto_restart && r->w && error == MPI_SUCCESS && !cancelled) {
        int rc = fr_req_start(r);
        if (rc != MPI_SUCCESS)
            error = rc;
        r->restarted = 1;
    }
    return error;
}

int fr_req_free(fr_req *r)
{
    /* Freeing ends an auto-restart cycle: a round the application did not start itself is
     * disarmed if it can be (a sync-object request), not left waiting forever. */
    int disarmed = 0;
    if (r->active && r->restarted && r->cls->cancel && r->cls->cancel(r) == MPI_SUCCESS) {
        r->active = 0;
        disarmed = r->posted;
    }
    if (!r->active) {
        if (!r->persistent && !r->posted && !disarmed) {
            /* Finished but never seen: its handle can still serve another request. */
            MPI_Request h = r->handle;
            int tag = r->tag;
            release(r);
            pool_handle(h, tag);
            return -1;
        }
        fr_u64map_del(&tags_used, (uint64_t)r->tag);
        release(r); /* the caller frees the library's request */
        return disarmed;
    }
    fr_u64map_del(&by_handle, handle_key(r->handle));
    if (r->w)
        list_del(&r->w->reqs, r);
    r->detached = 1;
    list_add(&detached, r);
    if (!r->posted)
        fr_u64map_del(&tags_used, (uint64_t)r->tag); /* the caller frees the handle now */
    if (r->cls->advance)
        r->cls->advance(r);
    return 0;
}

int fr_req_cancel(fr_req *r)
{
    if (!r->cls->cancel)
        return fr_errorf(FR_ERR_REQUEST, "a %s cannot be cancelled", r->cls->name);
    if (!r->active)
        return MPI_SUCCESS; /* MPI: cancelling a complete or inactive request has no effect */
    int rc = r->cls->cancel(r);
    if (rc != MPI_SUCCESS)
        return rc;
    r->active = 0;
    if (!r->posted) {
        r->done = 1; /* the next test or wait reports it cancelled */
        r->cancelled = 1;
    }
    return MPI_SUCCESS;
}

int fr_req_progress(void)
{
    int before = nreqs;
    for (fr_req *r = detached, *next; r; r = next) {
        next = r->next;
        if (r->cls->advance)
            r->cls->advance(r); /* may release r */
    }
    return before - nreqs; /* requests that completed */
}

int fr_req_win_active(const fr_win *w)
{
    int n = 0;
    for (const fr_req *r = w->reqs; r; r = r->next)
        n += r->active && !r->cls->epoch_bound;
    for (const fr_req *r = detached; r; r = r->next)
        n += r->w == w && !r->cls->epoch_bound;
    return n;
}

/* Every epoch of w is closed, so the operations of epoch-bound requests are complete. */
void fr_req_win_gone(fr_win *w)
{
    for (fr_req *r = detached, *next; r; r = next) {
        next = r->next;
        if (r->w == w)
            fr_req_complete(r, MPI_SUCCESS); /* releases it */
    }
    for (fr_req *r = w->reqs; r; r = r->next) {
        fr_req_complete(r, MPI_SUCCESS);
        r->w = NULL;
    }
    w->reqs = NULL;
}

void fr_req_finalize(void)
{
    for (int i = 0; i < npool; i++)
        FR_NEXT(Request_free)(&pool[i].handle);
    npool = 0;
    if (req_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&req_comm);
    fr_u64map_destroy(&by_handle);
    fr_u64map_destroy(&tags_used);
}
