/* request.c - flexrma's requests behind handles of the MPI library (request.h). */
#include "request.h"
#include "next.h"
#include "u64map.h"
#include "win.h"

#include <stdlib.h>
#include <string.h>

static MPI_Comm req_comm = MPI_COMM_NULL; /* private duplicate of MPI_COMM_SELF */
static fr_u64map by_handle;               /* the application's handle -> fr_req */
static fr_u64map by_tag;                  /* tag -> fr_req: tags in use */
static int next_tag = 1, tag_ub;
static int nreqs;
static fr_req *detached;                  /* freed while active, still advancing */

static uint64_t handle_key(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k;
}

int fr_req_any(void) { return nreqs > 0; }

fr_req *fr_req_lookup(MPI_Request handle)
{
    if (nreqs == 0 || handle == MPI_REQUEST_NULL)
        return NULL;
    return fr_u64map_get(&by_handle, handle_key(handle));
}

static int setup(void)
{
    if (req_comm != MPI_COMM_NULL)
        return MPI_SUCCESS;
    FR_CHECK_MPI(PMPI_Comm_dup(MPI_COMM_SELF, &req_comm));
    int *ub, flag = 0;
    PMPI_Comm_get_attr(req_comm, MPI_TAG_UB, &ub, &flag);
    tag_ub = flag ? *ub : 32767;
    return MPI_SUCCESS;
}

/* A tag no live request uses. Tags are recycled round-robin, so one freed a moment ago is not
 * reused while its completion message could still be in flight. */
static int take_tag(fr_req *r)
{
    for (int tries = 0; tries <= tag_ub; tries++) {
        int t = next_tag;
        next_tag = next_tag >= tag_ub ? 1 : next_tag + 1;
        if (!fr_u64map_get(&by_tag, (uint64_t)t)) {
            fr_u64map_put(&by_tag, (uint64_t)t, r);
            return t;
        }
    }
    return -1;
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
    r->tag = take_tag(r);
    if (r->tag < 0)
        fr_fatal("more flexrma requests alive (%d) than tags (%d)", nreqs, tag_ub);
    if (persistent) {
        FR_CHECK_MPI(PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, r->tag, req_comm, &r->handle));
    } else {
        FR_CHECK_MPI(PMPI_Irecv(NULL, 0, MPI_BYTE, 0, r->tag, req_comm, &r->handle));
        r->active = 1;
        r->posted = 1;
    }
    fr_u64map_put(&by_handle, handle_key(r->handle), r);
    list_add(&w->reqs, r);
    nreqs++;
    return r;
}

static void send_signal(fr_req *r)
{
    FR_CHECK_MPI(FR_NEXT(Send)(NULL, 0, MPI_BYTE, 0, r->tag, req_comm));
    r->signalled = 1;
}

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
    fr_u64map_del(&by_tag, (uint64_t)r->tag);
    nreqs--;
    free(r);
}

void fr_req_complete(fr_req *r, int error)
{
    if (!r->active)
        return;
    r->active = 0;
    r->error = error;
    if (r->detached) {
        /* Nobody will look at the handle again: the MPI library frees its request once the
         * message matches it. */
        send_signal(r);
        release(r);
        return;
    }
    if (r->posted)
        send_signal(r);
    /* else fr_req_start sends it once the receive is posted */
}

int fr_req_start(fr_req *r)
{
    if (!r->w)
        return fr_errorf(FR_ERR_WIN, "the window of this %s was freed", r->cls->name);
    if (r->active || r->signalled)
        return fr_errorf(FR_ERR_REQUEST, "MPI_Start on an active %s", r->cls->name);
    r->active = 1;
    r->posted = 0;
    r->restarted = 0;
    r->error = MPI_SUCCESS;
    int rc = r->cls->start(r);
    if (rc != MPI_SUCCESS) {
        r->active = 0;
        return rc;
    }
    FR_CHECK_MPI(FR_NEXT(Start)(&r->handle));
    r->posted = 1;
    if (!r->active) /* completed during start */
        send_signal(r);
    return MPI_SUCCESS;
}

int fr_req_finished(fr_req *r, MPI_Status *st)
{
    if (!r->signalled)
        return MPI_SUCCESS; /* an inactive persistent request: the library's empty status */
    r->signalled = 0;
    int error = r->error;
    fr_req_blank_status(st);
    if (!r->persistent) {
        release(r);
    } else if (r->auto_restart && r->w && error == MPI_SUCCESS) {
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
        disarmed = 1;
    }
    if (!r->active) {
        release(r); /* the caller frees the library's request */
        return disarmed;
    }
    fr_u64map_del(&by_handle, handle_key(r->handle));
    if (r->w)
        list_del(&r->w->reqs, r);
    r->detached = 1;
    list_add(&detached, r);
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
    if (rc == MPI_SUCCESS)
        r->active = 0;
    return rc;
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
    if (req_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&req_comm);
    fr_u64map_destroy(&by_handle);
    fr_u64map_destroy(&by_tag);
}
