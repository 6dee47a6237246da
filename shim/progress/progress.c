/* progress.c - internal requests, the progress pass, waiting, and the agent thread. */
#include "progress.h"
#include "isend.h"
#include "request.h"
#include "core/next.h"
#include "win/win.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

typedef struct pending {
    fr_done_fn fn;
    void *ctx;
} pending;

static MPI_Request *reqs;
static pending *waiters;
static int *done_idx;
static MPI_Status *done_st;
/* Changed under the engine lock, but fr_progress_needed reads it without (the hooks ask it before
 * they decide to lock): stores and that load are atomic, relaxed (a hint; see there). */
static int npending, cap_pending;

unsigned fr_entry_calls; /* entry.h: calls since start, to poll every few of them */
static unsigned passes;  /* progress passes since start (fr_entry_poll) */
unsigned fr_entry_passes; /* ... of them, run by fr_entry_poll (tests read it) */

void fr_pending_add(MPI_Request req, fr_done_fn fn, void *ctx)
{
    if (npending == cap_pending) {
        int cap = cap_pending ? cap_pending * 2 : 64;
        reqs = fr_xrealloc(reqs, (size_t)cap * sizeof *reqs);
        waiters = fr_xrealloc(waiters, (size_t)cap * sizeof *waiters);
        done_idx = fr_xrealloc(done_idx, (size_t)cap * sizeof *done_idx);
        done_st = fr_xrealloc(done_st, (size_t)cap * sizeof *done_st);
        cap_pending = cap;
    }
    reqs[npending] = req;
    waiters[npending] = (pending){fn, ctx};
    __atomic_store_n(&npending, npending + 1, __ATOMIC_RELAXED);
}

int fr_pending_count(void) { return __atomic_load_n(&npending, __ATOMIC_RELAXED); }

/* Without the engine lock: a blocking MPI call of one thread asks it while another thread (in
 * MPI_THREAD_MULTIPLE) may be changing the counts under the lock, so they are read atomically.
 * A count that is just changing by another thread's call may be seen either way, as it could if
 * the calls ran in the other order; what this thread itself did it always sees. */
int fr_progress_needed(void)
{
    return __atomic_load_n(&fr_nwindows, __ATOMIC_RELAXED) > 0 ||
           __atomic_load_n(&npending, __ATOMIC_RELAXED) > 0 || fr_req_any();
}

/* Complete what finished. Callbacks may add requests, so the finished entries are taken out
 * of the table first and called afterwards. */
static int complete_pending(void)
{
    if (npending == 0)
        return 0;
    int outcount = 0;
    FR_CHECK_MPI(FR_NEXT(Testsome)(npending, reqs, &outcount, done_idx, done_st));
    if (outcount <= 0 || outcount == MPI_UNDEFINED)
        return 0;
    pending done[outcount];
    MPI_Status st[outcount];
    for (int i = 0; i < outcount; i++) {
        done[i] = waiters[done_idx[i]];
        st[i] = done_st[i];
    }
    int k = 0;
    for (int i = 0; i < npending; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            reqs[k] = reqs[i];
            waiters[k] = waiters[i];
            k++;
        }
    __atomic_store_n(&npending, k, __ATOMIC_RELAXED);
    for (int i = 0; i < outcount; i++)
        done[i].fn(done[i].ctx, &st[i]);
    return outcount;
}

/* What a pass looks at in each window, in order: the layers above register it at MPI_Init
 * (api/init.c), so that this layer, which they all wait through, names none of them. */
#define FR_POLLERS_MAX 8
static fr_poller pollers[FR_POLLERS_MAX];
static int npollers;

void fr_progress_add_poller(fr_poller poll)
{
    if (npollers == FR_POLLERS_MAX)
        fr_fatal("more than %d progress pollers", FR_POLLERS_MAX);
    pollers[npollers++] = poll;
}

static fr_poller rings;

void fr_progress_set_rings(fr_poller poll) { rings = poll; }

int fr_progress_rings(void)
{
    int events = 0;
    if (rings)
        for (fr_win *w = fr_windows; w; w = w->next)
            events += rings(w);
    return events;
}

int fr_progress(void)
{
    int events = 0;
    passes++;
    for (fr_win *w = fr_windows; w; w = w->next)
        for (int i = 0; i < npollers; i++)
            events += pollers[i](w);
    /* Held sends first (FLEXRMA_TEST_JITTER): the generalized requests it completes are in the
     * pending table, and are seen done in this very pass. */
    if (FR_UNLIKELY(fr_opt.test_jitter))
        events += fr_isend_poll();
    events += complete_pending();
    events += fr_req_progress();
    return events;
}

/* Only when no pass ran for two checks in a row (FR_ENTRY_POLL_EVERY calls apart): a program
 * whose epochs wait (and whose waits poll) pays no extra pass. One in the middle of an epoch is
 * not free: with more ranks than cores, the MPI library yields the core when its progress finds
 * nothing (Open MPI's yield_when_idle), so a pass in MPI_Win_start gives the core away before
 * this process has sent its epoch's data (4 ranks on 2 cores, message transport: PSCW 19 us a
 * step instead of 8, depending on which call of the epoch the fourth was). Two checks, not one:
 * a pass that takes in what the next wait waits for spares that wait its poll, which would make
 * the following check find no pass again, and so on, epoch after epoch. */
void fr_entry_poll(void)
{
    static unsigned seen, quiet;
    if (passes != seen) {
        seen = passes;
        quiet = 0;
        return;
    }
    if (++quiet < 2)
        return;
    fr_entry_passes++;
    fr_progress();
    seen = passes;
    quiet = 0;
}

void fr_wait_until(int (*cond)(void *), void *arg)
{
    fr_idle idle = {0};
    /* Satisfied already: no pass. Others are still served: every few entry calls run one
     * (entry.h), and a pass costs as much as a whole short epoch. */
    if (cond(arg))
        return;
    for (;;) {
        int events = fr_progress();
        if (cond(arg))
            return;
        if (events > 0) {
            fr_idle_reset(&idle);
            continue;
        }
        if (!fr_idle_yield_due(&idle))
            continue;
        /* Yield with the engine unlocked: another thread of the program (or the agent) may hold
         * the very call this wait depends on. */
        FR_LEAVE();
        fr_idle_give_way(&idle);
        FR_ENTER();
    }
}

static int request_done(void *arg)
{
    int flag = 0;
    FR_CHECK_MPI(FR_NEXT(Test)((MPI_Request *)arg, &flag, MPI_STATUS_IGNORE));
    return flag;
}

void fr_wait_request(MPI_Request *req) { fr_wait_until(request_done, req); }

void fr_wait_barrier(MPI_Comm comm)
{
    MPI_Request barrier;
    FR_CHECK_MPI(PMPI_Ibarrier(comm, &barrier));
    fr_wait_request(&barrier);
}

/* ---- the agent thread (FLEXRMA_ASYNC_PROGRESS=1) ---- */
static pthread_t agent;
static int agent_running;
/* Set by the thread in MPI_Finalize while the agent reads it, neither holding the engine lock:
 * atomic (volatile is not, and TSan said so). Relaxed: pthread_join orders the rest. */
static int agent_stop;

static void *agent_main(void *arg)
{
    unsigned idle = 0;
    while (!__atomic_load_n(&agent_stop, __ATOMIC_RELAXED)) {
        FR_ENTER();
        int events = fr_active ? fr_progress() : 0;
        FR_LEAVE();
        if (events > 0) {
            idle = 0;
        } else if (++idle < 256) {
            sched_yield();
        } else {
            /* Idle for a while: sleep so the agent does not steal a core from the program. */
            struct timespec ts = {0, idle < 4096 ? 20000 : 200000};
            nanosleep(&ts, NULL);
        }
    }
    return arg;
}

int fr_agent_start(void)
{
    __atomic_store_n(&agent_stop, 0, __ATOMIC_RELAXED);
    if (pthread_create(&agent, NULL, agent_main, NULL) != 0)
        fr_fatal("cannot start the progress agent thread");
    agent_running = 1;
    return MPI_SUCCESS;
}

void fr_agent_stop(void)
{
    if (!agent_running)
        return;
    __atomic_store_n(&agent_stop, 1, __ATOMIC_RELAXED);
    pthread_join(agent, NULL);
    agent_running = 0;
}
