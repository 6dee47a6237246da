/* req_hooks.c - MPI's request functions, aware of flexrma's requests (request.h).
 *
 * A flexrma request waited on or tested alone never reaches the MPI library: flexrma completes
 * it itself (the fast path). In a call on several requests the library does the real work,
 * flexrma's requests included (they are requests of the library): matching indices, statuses,
 * freeing; flexrma first hands its requests to the library (fr_req_post). The hooks add:
 *  - progress: waits run flexrma's progress engine (pt2pt_hooks.c explains when);
 *  - advance: flexrma's requests are moved towards completion on every turn, which is where a
 *    sync-ops request flushes its operations and sends its bump;
 *  - take: when one of them is reported complete, its status is made empty and it is released
 *    or restarted (fr_req_take), and an error of its completion is raised.
 * Calls without flexrma requests cost one test of a global counter. */
#include "core/next.h"
#include "progress.h"
#include "request.h"
#include "win/win.h"

#include <stdlib.h>

#define FR_SMALL_ARRAY 16

/* flexrma's requests among an array of handles. */
typedef struct ours {
    fr_req **r; /* r[i]: the request behind handle i, or NULL; NULL when n == 0 */
    int n;
    int all;    /* every handle is MPI_REQUEST_NULL or a flexrma request the library was not
                   handed: the call can be served without the library (fast path) */
    fr_req *small[FR_SMALL_ARRAY];
} ours;

/* Before the library sees the array: find flexrma's requests and, unless the call can do
 * without the library (fast_ok and o->all), hand them to the library. */
static void classify_for(ours *o, int count, const MPI_Request *reqs, int fast_ok)
{
    o->n = 0;
    o->r = NULL;
    o->all = 0;
    if (!fr_active || !fr_req_any() || count <= 0 || !reqs)
        return;
    FR_ENTER();
    for (int i = 0; i < count; i++) {
        fr_req *r = fr_req_lookup(reqs[i]);
        if (!r)
            continue;
        if (!o->r) {
            o->r = count <= FR_SMALL_ARRAY ? o->small : fr_xmalloc((size_t)count * sizeof *o->r);
            for (int k = 0; k < count; k++)
                o->r[k] = NULL;
        }
        o->r[i] = r;
        o->n++;
    }
    o->all = o->n > 0;
    for (int i = 0; o->all && i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && (!o->r[i] || o->r[i]->posted))
            o->all = 0;
    if (!(fast_ok && o->all))
        for (int i = 0; o->r && i < count; i++)
            if (o->r[i])
                fr_req_post(o->r[i]);
    FR_LEAVE();
}

static void classify(ours *o, int count, const MPI_Request *reqs) { classify_for(o, count, reqs, 0); }

static void release_ours(ours *o)
{
    if (o->r && o->r != o->small)
        free(o->r);
}

/* Advance every active request of ours, then (every few turns) the whole engine. */
static void advance(const ours *o, int count)
{
    FR_ENTER();
    for (int i = 0; i < count; i++) {
        fr_req *r = o->r[i];
        if (r && r->active && r->cls->advance)
            r->cls->advance(r);
    }
    FR_LEAVE();
}

/* An error a completion reports goes through the request's window handler. */
static int raise(fr_win *w, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return rc;
    return w ? fr_win_raise(w, call, rc) : fr_comm_raise(MPI_COMM_WORLD, call, rc);
}

/* The library reported handle i (in *slot) complete with status st (NULL: ignored). */
static int finish(const ours *o, int i, MPI_Request *slot, MPI_Status *st, const char *call)
{
    fr_req *r = o->r ? o->r[i] : NULL;
    if (!r)
        return MPI_SUCCESS;
    FR_ENTER();
    fr_win *w = r->w;
    int rc = fr_req_take(r, slot, st, 1);
    FR_LEAVE();
    if (rc != MPI_SUCCESS && st)
        st->MPI_ERROR = rc;
    return raise(w, call, rc);
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? NULL : &statuses[i];
}

/* ---- completion ---- */

static fr_req *lookup(MPI_Request h);

/* The fast path of MPI_Wait/MPI_Test on one flexrma request the library was not handed: one
 * turn, which polls the engine every time (only flexrma can complete the request). Returns 1
 * with *rc set when the request is complete (or inactive). */
static int fast_turn(fr_req *r, MPI_Request *request, MPI_Status *status, const char *call,
                     int *rc, fr_idle *idle)
{
    FR_ENTER();
    int events = 0;
    if (r->active && r->cls->advance)
        r->cls->advance(r);
    if (r->active)
        events = fr_progress();
    if (r->active) {
        FR_LEAVE();
        if (idle)
            fr_idle_after(idle, events);
        return 0;
    }
    fr_win *w = r->w;
    int err = fr_req_take(r, request, status == MPI_STATUS_IGNORE ? NULL : status, 0);
    FR_LEAVE();
    *rc = raise(w, call, err);
    return 1;
}

/* Wait on one flexrma request the library was not handed, turn after turn. */
static int fast_wait(fr_req *r, MPI_Request *request, MPI_Status *status, const char *call)
{
    fr_idle idle = {0};
    int rc;
    while (!fast_turn(r, request, status, call, &rc, &idle))
        ;
    return rc;
}

/* Has the library been handed r (it then waits on r like on any request)? */
static int posted(fr_req *r)
{
    FR_ENTER();
    int p = r->posted;
    FR_LEAVE();
    return p;
}

FR_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    fr_req *r = request ? lookup(*request) : NULL;
    if (r && !posted(r))
        return fast_wait(r, request, status, "MPI_Wait");
    ours o = {.r = r ? &r : NULL, .n = r != NULL};
    if (!r && !fr_hooks_on())
        return FR_NEXT(Wait)(request, status);
    fr_idle idle = fr_hook_start(o.n);
    for (;;) {
        if (o.n)
            advance(&o, 1);
        int flag = 0, rc = FR_NEXT(Test)(request, &flag, status);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            return finish(&o, 0, request, status == MPI_STATUS_IGNORE ? NULL : status, "MPI_Wait");
        fr_hook_turn(&idle);
    }
}
FR_PMPI(Wait);

FR_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    fr_req *r = request ? lookup(*request) : NULL;
    if (r && !posted(r)) {
        int rc = MPI_SUCCESS;
        *flag = fast_turn(r, request, status, "MPI_Test", &rc, NULL);
        return rc;
    }
    fr_hook_poll();
    ours o = {.r = r ? &r : NULL, .n = r != NULL};
    if (o.n)
        advance(&o, 1);
    int rc = FR_NEXT(Test)(request, flag, status);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    return finish(&o, 0, request, status == MPI_STATUS_IGNORE ? NULL : status, "MPI_Test");
}
FR_PMPI(Test);

/* Finish every request of ours after MPI_Waitall/MPI_Testall reported all complete. */
static int finish_all(ours *o, int count, MPI_Request requests[], MPI_Status statuses[],
                      const char *call)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; o->n && i < count; i++) {
        int frc = finish(o, i, &requests[i], status_at(statuses, i), call);
        if (frc != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = statuses == MPI_STATUSES_IGNORE ? frc : MPI_ERR_IN_STATUS;
    }
    release_ours(o);
    return rc;
}

/* MPI_Waitall/MPI_Testall on flexrma requests only, without the library: one turn. Returns 1
 * with *rc set once all are complete (or inactive). */
static int fast_all_turn(ours *o, int count, MPI_Request requests[], MPI_Status statuses[],
                         const char *call, int *rc, fr_idle *idle)
{
    FR_ENTER();
    int active = 0, events = 0;
    for (int i = 0; i < count; i++) {
        fr_req *r = o->r[i];
        if (r && r->active && r->cls->advance)
            r->cls->advance(r);
        active += r && r->active;
    }
    if (active) {
        events = fr_progress();
        active = 0;
        for (int i = 0; i < count; i++)
            active += o->r[i] && o->r[i]->active;
    }
    if (active) {
        FR_LEAVE();
        if (idle)
            fr_idle_after(idle, events);
        return 0;
    }
    int err = MPI_SUCCESS;
    fr_win *errwin = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = status_at(statuses, i);
        if (!o->r[i]) {
            if (st) /* MPI_REQUEST_NULL: the empty status */
                fr_req_status(&(fr_req){0}, st, 0);
            continue;
        }
        fr_win *w = o->r[i]->w;
        int e = fr_req_take(o->r[i], &requests[i], st, 0);
        if (st)
            st->MPI_ERROR = e;
        if (e != MPI_SUCCESS && err == MPI_SUCCESS) {
            err = e;
            errwin = w;
        }
    }
    FR_LEAVE();
    *rc = err == MPI_SUCCESS ? MPI_SUCCESS : raise(errwin, call, err);
    if (err != MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
        *rc = MPI_ERR_IN_STATUS;
    return 1;
}

FR_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    fr_req *one = count == 1 && requests ? lookup(requests[0]) : NULL;
    if (one && !posted(one)) { /* MPI_Wait's fast path, with MPI_Waitall's error convention */
        MPI_Status *st = status_at(statuses, 0);
        int rc = fast_wait(one, requests, st ? st : MPI_STATUS_IGNORE, "MPI_Waitall");
        if (!st)
            return rc;
        st->MPI_ERROR = rc;
        return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_IN_STATUS;
    }
    ours o;
    classify_for(&o, count, requests, 1);
    if (o.all) {
        fr_idle idle = {0};
        int rc;
        while (!fast_all_turn(&o, count, requests, statuses, "MPI_Waitall", &rc, &idle))
            ;
        release_ours(&o);
        return rc;
    }
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Waitall)(count, requests, statuses);
    fr_idle idle = fr_hook_start(o.n);
    for (;;) {
        if (o.n)
            advance(&o, count);
        int flag = 0, rc = FR_NEXT(Testall)(count, requests, &flag, statuses);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (flag)
            return finish_all(&o, count, requests, statuses, "MPI_Waitall");
        fr_hook_turn(&idle);
    }
}
FR_PMPI(Waitall);

FR_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    ours o;
    classify_for(&o, count, requests, 1);
    if (o.all) {
        int rc = MPI_SUCCESS;
        *flag = fast_all_turn(&o, count, requests, statuses, "MPI_Testall", &rc, NULL);
        release_ours(&o);
        return rc;
    }
    if (o.n)
        advance(&o, count);
    fr_hook_poll();
    int rc = FR_NEXT(Testall)(count, requests, flag, statuses);
    if (rc != MPI_SUCCESS || !*flag) {
        release_ours(&o);
        return rc;
    }
    return finish_all(&o, count, requests, statuses, "MPI_Testall");
}
FR_PMPI(Testall);

static int finish_any(ours *o, MPI_Request requests[], int index, MPI_Status *status,
                      const char *call)
{
    int rc = MPI_SUCCESS;
    if (index != MPI_UNDEFINED)
        rc = finish(o, index, &requests[index], status == MPI_STATUS_IGNORE ? NULL : status,
                    call);
    release_ours(o);
    return rc;
}

FR_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    ours o;
    classify(&o, count, requests);
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Waitany)(count, requests, index, status);
    fr_idle idle = fr_hook_start(o.n);
    for (;;) {
        if (o.n)
            advance(&o, count);
        int flag = 0, rc = FR_NEXT(Testany)(count, requests, index, &flag, status);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (flag)
            return finish_any(&o, requests, *index, status, "MPI_Waitany");
        fr_hook_turn(&idle);
    }
}
FR_PMPI(Waitany);

FR_API int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    ours o;
    classify(&o, count, requests);
    if (o.n)
        advance(&o, count);
    fr_hook_poll();
    int rc = FR_NEXT(Testany)(count, requests, index, flag, status);
    if (rc != MPI_SUCCESS || !*flag) {
        release_ours(&o);
        return rc;
    }
    return finish_any(&o, requests, *index, status, "MPI_Testany");
}
FR_PMPI(Testany);

static int finish_some(ours *o, MPI_Request requests[], int outcount, const int indices[],
                       MPI_Status statuses[], const char *call)
{
    int rc = MPI_SUCCESS;
    for (int k = 0; o->n && outcount != MPI_UNDEFINED && k < outcount; k++) {
        int frc = finish(o, indices[k], &requests[indices[k]], status_at(statuses, k), call);
        if (frc != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = statuses == MPI_STATUSES_IGNORE ? frc : MPI_ERR_IN_STATUS;
    }
    release_ours(o);
    return rc;
}

FR_API int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    ours o;
    classify(&o, incount, requests);
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Waitsome)(incount, requests, outcount, indices, statuses);
    fr_idle idle = fr_hook_start(o.n);
    for (;;) {
        if (o.n)
            advance(&o, incount);
        int rc = FR_NEXT(Testsome)(incount, requests, outcount, indices, statuses);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (*outcount != 0)
            return finish_some(&o, requests, *outcount, indices, statuses, "MPI_Waitsome");
        fr_hook_turn(&idle);
    }
}
FR_PMPI(Waitsome);

FR_API int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    ours o;
    classify(&o, incount, requests);
    if (o.n)
        advance(&o, incount);
    fr_hook_poll();
    int rc = FR_NEXT(Testsome)(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS) {
        release_ours(&o);
        return rc;
    }
    return finish_some(&o, requests, *outcount, indices, statuses, "MPI_Testsome");
}
FR_PMPI(Testsome);

FR_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    fr_req *r = lookup(request);
    if (!r)
        return FR_NEXT(Request_get_status)(request, flag, status);
    FR_ENTER();
    if (r->active && r->cls->advance)
        r->cls->advance(r);
    fr_progress();
    int in_library = r->posted;
    if (!in_library) {
        /* The request stays alive: only its status is reported. */
        *flag = !r->active;
        if (*flag)
            fr_req_status(r, status, 0);
    }
    FR_LEAVE();
    if (!in_library)
        return MPI_SUCCESS;
    int rc = FR_NEXT(Request_get_status)(request, flag, status);
    if (rc == MPI_SUCCESS && *flag) {
        FR_ENTER();
        fr_req_status(r, status, 1);
        FR_LEAVE();
    }
    return rc;
}
FR_PMPI(Request_get_status);

/* ---- persistent requests, freeing, cancelling ---- */

static fr_req *lookup(MPI_Request h)
{
    if (!fr_active || !fr_req_any())
        return NULL;
    FR_ENTER();
    fr_req *r = fr_req_lookup(h);
    FR_LEAVE();
    return r;
}

static int start_one(fr_req *r, MPI_Request *handle)
{
    if (!r)
        return FR_NEXT(Start)(handle);
    FR_ENTER();
    fr_win *w = r->w;
    int rc = fr_req_start(r);
    FR_LEAVE();
    return raise(w, "MPI_Start", rc);
}

FR_API int MPI_Start(MPI_Request *request)
{
    return start_one(request ? lookup(*request) : NULL, request);
}
FR_PMPI(Start);

FR_API int MPI_Startall(int count, MPI_Request requests[])
{
    if (count == 1) /* MPI_Start's work, without sorting an array (a sync request is often alone) */
        return start_one(requests ? lookup(*requests) : NULL, requests);
    ours o;
    classify(&o, count, requests);
    if (o.n == 0)
        return FR_NEXT(Startall)(count, requests);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        rc = start_one(o.r[i], &requests[i]);
    release_ours(&o);
    return rc;
}
FR_PMPI(Startall);

FR_API int MPI_Request_free(MPI_Request *request)
{
    fr_req *r = request ? lookup(*request) : NULL;
    if (r) {
        FR_ENTER();
        int how = fr_req_free(r); /* an active request completes in the background */
        FR_LEAVE();
        if (how < 0) {
            *request = MPI_REQUEST_NULL; /* flexrma keeps the handle for its next request */
            return MPI_SUCCESS;
        }
        if (how > 0)
            FR_NEXT(Cancel)(request);
    }
    return FR_NEXT(Request_free)(request);
}
FR_PMPI(Request_free);

FR_API int MPI_Cancel(MPI_Request *request)
{
    fr_req *r = request ? lookup(*request) : NULL;
    if (!r)
        return FR_NEXT(Cancel)(request);
    FR_ENTER();
    fr_win *w = r->w;
    int in_library = r->active && r->posted;
    int rc = fr_req_cancel(r);
    FR_LEAVE();
    if (rc != MPI_SUCCESS)
        return raise(w, "MPI_Cancel", rc);
    /* Disarmed: a receive the library was handed is cancelled too, so MPI_Test_cancelled says
     * so (otherwise fr_req_take reports it). */
    return in_library ? FR_NEXT(Cancel)(request) : MPI_SUCCESS;
}
FR_PMPI(Cancel);
