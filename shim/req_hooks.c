/* req_hooks.c - MPI's request functions, aware of flexrma's requests (request.h).
 *
 * The MPI library does the real work on every request, flexrma's included (they are requests of
 * the library): matching indices, statuses, freeing. The hooks add three things:
 *  - progress: waits run flexrma's progress engine (pt2pt_hooks.c explains when);
 *  - advance: flexrma's requests in the array are moved towards completion on every turn, which
 *    is where a sync-ops request flushes its operations and sends its bump;
 *  - finish: when the library reports one of them complete, its status is blanked and it is
 *    released or restarted (fr_req_finished), and an error of its completion is raised.
 * Arrays without flexrma requests cost one test of a global counter. */
#include "next.h"
#include "progress.h"
#include "request.h"
#include "win.h"

#include <stdlib.h>

#define FR_SMALL_ARRAY 16

/* flexrma's requests among an array of handles. */
typedef struct ours {
    fr_req **r; /* r[i]: the request behind handle i, or NULL; NULL when n == 0 */
    int n;
    fr_req *small[FR_SMALL_ARRAY];
} ours;

/* Before the library sees the array: completed one-shot handles become MPI_REQUEST_NULL. */
static void classify(ours *o, int count, const MPI_Request *reqs)
{
    o->n = 0;
    o->r = NULL;
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
    FR_LEAVE();
}

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

static void poll_once(void)
{
    if (!fr_active)
        return;
    FR_ENTER();
    fr_progress();
    FR_LEAVE();
}

/* An error a completion reports goes through the request's window handler. */
static int raise(fr_win *w, const char *call, int rc)
{
    if (rc == MPI_SUCCESS)
        return rc;
    return w ? fr_win_raise(w, call, rc) : fr_comm_raise(MPI_COMM_WORLD, call, rc);
}

/* The library reported handle i complete with status st (NULL: ignored). */
static int finish(const ours *o, int i, MPI_Status *st, const char *call)
{
    fr_req *r = o->r ? o->r[i] : NULL;
    if (!r)
        return MPI_SUCCESS;
    FR_ENTER();
    fr_win *w = r->w;
    int rc = fr_req_finished(r, st);
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

FR_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    ours o;
    classify(&o, 1, request);
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Wait)(request, status);
    unsigned spins = 0;
    for (;;) {
        if (o.n)
            advance(&o, 1);
        int flag = 0, rc = FR_NEXT(Test)(request, &flag, status);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            return finish(&o, 0, status == MPI_STATUS_IGNORE ? NULL : status, "MPI_Wait");
        fr_hook_turn(&spins);
    }
}
FR_PMPI(Wait);

FR_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    ours o;
    classify(&o, 1, request);
    if (o.n)
        advance(&o, 1);
    fr_hook_poll();
    int rc = FR_NEXT(Test)(request, flag, status);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    return finish(&o, 0, status == MPI_STATUS_IGNORE ? NULL : status, "MPI_Test");
}
FR_PMPI(Test);

/* Finish every request of ours after MPI_Waitall/MPI_Testall reported all complete. */
static int finish_all(ours *o, int count, MPI_Status statuses[], const char *call)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; o->n && i < count; i++) {
        int frc = finish(o, i, status_at(statuses, i), call);
        if (frc != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = statuses == MPI_STATUSES_IGNORE ? frc : MPI_ERR_IN_STATUS;
    }
    release_ours(o);
    return rc;
}

FR_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    ours o;
    classify(&o, count, requests);
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Waitall)(count, requests, statuses);
    unsigned spins = 0;
    for (;;) {
        if (o.n)
            advance(&o, count);
        int flag = 0, rc = FR_NEXT(Testall)(count, requests, &flag, statuses);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (flag)
            return finish_all(&o, count, statuses, "MPI_Waitall");
        fr_hook_turn(&spins);
    }
}
FR_PMPI(Waitall);

FR_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    ours o;
    classify(&o, count, requests);
    if (o.n)
        advance(&o, count);
    fr_hook_poll();
    int rc = FR_NEXT(Testall)(count, requests, flag, statuses);
    if (rc != MPI_SUCCESS || !*flag) {
        release_ours(&o);
        return rc;
    }
    return finish_all(&o, count, statuses, "MPI_Testall");
}
FR_PMPI(Testall);

static int finish_any(ours *o, int index, MPI_Status *status, const char *call)
{
    int rc = MPI_SUCCESS;
    if (index != MPI_UNDEFINED)
        rc = finish(o, index, status == MPI_STATUS_IGNORE ? NULL : status, call);
    release_ours(o);
    return rc;
}

FR_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    ours o;
    classify(&o, count, requests);
    if (o.n == 0 && !fr_hooks_on())
        return FR_NEXT(Waitany)(count, requests, index, status);
    unsigned spins = 0;
    for (;;) {
        if (o.n)
            advance(&o, count);
        int flag = 0, rc = FR_NEXT(Testany)(count, requests, index, &flag, status);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (flag)
            return finish_any(&o, *index, status, "MPI_Waitany");
        fr_hook_turn(&spins);
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
    return finish_any(&o, *index, status, "MPI_Testany");
}
FR_PMPI(Testany);

static int finish_some(ours *o, int outcount, const int indices[], MPI_Status statuses[],
                       const char *call)
{
    int rc = MPI_SUCCESS;
    for (int k = 0; o->n && outcount != MPI_UNDEFINED && k < outcount; k++) {
        int frc = finish(o, indices[k], status_at(statuses, k), call);
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
    unsigned spins = 0;
    for (;;) {
        if (o.n)
            advance(&o, incount);
        int rc = FR_NEXT(Testsome)(incount, requests, outcount, indices, statuses);
        if (rc != MPI_SUCCESS) {
            release_ours(&o);
            return rc;
        }
        if (*outcount != 0)
            return finish_some(&o, *outcount, indices, statuses, "MPI_Waitsome");
        fr_hook_turn(&spins);
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
    return finish_some(&o, *outcount, indices, statuses, "MPI_Testsome");
}
FR_PMPI(Testsome);

FR_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    ours o;
    classify(&o, 1, &request);
    if (o.n) {
        advance(&o, 1);
        poll_once();
    }
    int rc = FR_NEXT(Request_get_status)(request, flag, status);
    if (rc == MPI_SUCCESS && *flag && o.n) {
        /* The request stays alive: only its status is ours to blank. */
        FR_ENTER();
        if (o.r[0]->signalled)
            fr_req_blank_status(status);
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
        int disarmed = fr_req_free(r); /* an active request completes in the background */
        FR_LEAVE();
        if (disarmed)
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
    int was_active = r->active;
    int rc = fr_req_cancel(r);
    FR_LEAVE();
    if (rc != MPI_SUCCESS)
        return raise(w, "MPI_Cancel", rc);
    /* Disarmed: the library's receive is cancelled too, so MPI_Test_cancelled says so. */
    return was_active ? FR_NEXT(Cancel)(request) : MPI_SUCCESS;
}
FR_PMPI(Cancel);
