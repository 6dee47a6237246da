/* request.h - flexrma's own requests (sync-ops, sync-object, request-returning RMA).
 *
 * The handle the application holds is a genuine request of the MPI library: a receive on a
 * private duplicate of MPI_COMM_SELF with a tag of its own (persistent requests: PMPI_Recv_init,
 * one-shot ones: PMPI_Irecv). flexrma completes it by sending itself the matching zero-byte
 * message. So every request function of the MPI library (arrays mixed with the application's own
 * requests, Waitany/Waitsome indices, MPI_Request_free, the Fortran bindings) works on it
 * unchanged; the hooks in req_hooks.c only add what the library cannot know: they let flexrma
 * advance the request while the application waits, start it, and blank its status.
 *
 * Life cycle: fr_req_new() -> [MPI_Start -> cls->start] -> cls->advance ... fr_req_complete()
 * -> the application's wait/test sees the message -> fr_req_finished() (one-shot: released;
 * persistent: inactive again, or restarted with auto-restart). MPI_Request_free of an active
 * request detaches it from the handle; it keeps advancing in the progress engine and is released
 * when it completes. */
#ifndef FR_REQUEST_H
#define FR_REQUEST_H

#include "fr.h"

struct fr_win;
typedef struct fr_req fr_req;

typedef struct fr_req_class {
    const char *name; /* "sync-ops request", for error messages */
    /* MPI_Start of a persistent request: check and arm; may call fr_req_complete(). */
    int (*start)(fr_req *r);
    /* The application waits for the request (or it was freed while active): move it towards
     * completion and call fr_req_complete() when it is done. May be NULL. */
    void (*advance)(fr_req *r);
    /* MPI_Cancel: disarm and return MPI_SUCCESS, or an error code; NULL: not cancellable. */
    int (*cancel)(fr_req *r);
    /* Release class data; the request is going away. */
    void (*destroy)(fr_req *r);
    /* For a request that owns an RMA operation (fr_op.req): the operation left as my operation
     * number `ordinal` to its target, complete at the origin already if done_here ... */
    void (*op_issued)(fr_req *r, uint64_t ordinal, int done_here);
    /* ... or later, when its data message completed. */
    void (*op_done_here)(fr_req *r);
    /* Its operations belong to an epoch, whose closing call completes them: MPI_Win_free need
     * not wait for the request (request-returning RMA). */
    int epoch_bound;
} fr_req_class;

struct fr_req {
    const fr_req_class *cls;
    MPI_Request handle;        /* the application's handle (a request of the MPI library) */
    int tag;                   /* its tag on the private communicator */
    struct fr_win *w;          /* NULL once the window was freed */
    int error;                 /* error code the completion reports (MPI_SUCCESS normally) */
    unsigned persistent : 1;
    unsigned active : 1;       /* started and not complete */
    unsigned posted : 1;       /* the MPI library's receive is posted */
    unsigned signalled : 1;    /* completion message sent, not yet seen by a wait or test */
    unsigned detached : 1;     /* MPI_Request_free while active: release when complete */
    unsigned auto_restart : 1; /* MPIX_INFO_SYNC_AUTO_RESTART */
    unsigned restarted : 1;    /* active because auto-restart started it, not the application */
    struct fr_req *next, *prev;/* the window's requests (win.h), or the detached list */
};

/* A new request of class cls on w, size bytes (>= sizeof(fr_req), class data follows). One-shot
 * requests are active from the start. */
fr_req *fr_req_new(const fr_req_class *cls, struct fr_win *w, int persistent, size_t size);
/* The request is done: signal its handle (error: the code its completion reports). */
void fr_req_complete(fr_req *r, int error);
/* The request behind a handle, or NULL. */
fr_req *fr_req_lookup(MPI_Request handle);
/* Any flexrma request alive? (fast path of the hooks) */
int fr_req_any(void);

/* ---- used by req_hooks.c ---- */
/* An RMA request has no sender and no tag: its status is empty, as MPI reports for inactive
 * requests (the count is already 0: the completion message is empty). */
static inline void fr_req_blank_status(MPI_Status *st)
{
    if (st && st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
    }
}
int fr_req_start(fr_req *r);
/* The application saw the completion of r with status st (may be NULL): blank the status, then
 * release a one-shot request or restart an auto-restart one. Returns the completion's error. */
int fr_req_finished(fr_req *r, MPI_Status *st);
/* MPI_Request_free of r. Returns non-zero if the library's receive was left posted by a
 * disarmed request and must be cancelled before it is freed. */
int fr_req_free(fr_req *r);
int fr_req_cancel(fr_req *r);
/* Advance the detached requests (progress engine). */
int fr_req_progress(void);

/* ---- used by windows ---- */
/* Active requests of w, which keep MPI_Win_free from succeeding. */
int fr_req_win_active(const struct fr_win *w);
/* w is being freed: its requests lose their window. */
void fr_req_win_gone(struct fr_win *w);

void fr_req_finalize(void);

#endif
