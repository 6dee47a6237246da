/* request.h - flexrma's own requests (sync-ops, sync-object, request-returning RMA).
 *
 * The handle the application holds is a genuine request of the MPI library: a persistent
 * receive (PMPI_Recv_init) on a private duplicate of MPI_COMM_SELF with a tag of its own, also
 * for one-shot requests (their handles are reused). When the library must see the request (it
 * takes part in an array), flexrma starts the receive and completes it by sending itself the
 * matching zero-byte message. So every request function of the MPI library (arrays mixed with the application's own
 * requests, Waitany/Waitsome indices, MPI_Request_free, the Fortran bindings) works on it
 * unchanged; the hooks in req_hooks.c only add what the library cannot know: they let flexrma
 * advance the request while the application waits, start it, and blank its status.
 *
 * Life cycle: fr_req_new() -> [MPI_Start -> cls->start] -> cls->advance ... fr_req_complete()
 * -> the application's wait/test sees it -> fr_req_take() (one-shot: released; persistent:
 * inactive again, or restarted with auto-restart). MPI_Request_free of an active
 * request detaches it from the handle; it keeps advancing in the progress engine and is released
 * when it completes. */
#ifndef FR_REQUEST_H
#define FR_REQUEST_H

#include "core/fr.h"

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
    unsigned posted : 1;       /* the MPI library's receive is started (fr_req_post) */
    unsigned signalled : 1;    /* completion message sent, not yet seen by a wait or test */
    unsigned done : 1;         /* complete, not posted, not yet seen (the fast path) */
    unsigned cancelled : 1;    /* ... by MPI_Cancel */
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

/* ---- used by req_hooks.c ----
 * The fast path: a request the application waits on alone is completed by flexrma without the
 * MPI library (`done`). Only when it takes part in a call on several requests, or its status is
 * asked for, is the library's receive started (fr_req_post) and the completion sent as a
 * message, so the library's own array logic sees it. */
/* Hand r to the library: start its receive, and signal it if r is done already. */
void fr_req_post(fr_req *r);
int fr_req_start(fr_req *r);
/* The application sees r's completion (from the library: from_library): fill or blank the
 * status, then release a one-shot request (its handle slot becomes MPI_REQUEST_NULL) or restart
 * an auto-restart one. An inactive request gives an empty status. Returns the completion's
 * error. */
int fr_req_take(fr_req *r, MPI_Request *slot, MPI_Status *st, int from_library);
/* Only the status, the request stays (MPI_Request_get_status). */
void fr_req_status(const fr_req *r, MPI_Status *st, int from_library);
/* MPI_Request_free of r. Returns 0: free the library's request; 1: cancel it first (a disarmed
 * request left it posted); -1: leave it (flexrma keeps the inactive handle for reuse). */
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
