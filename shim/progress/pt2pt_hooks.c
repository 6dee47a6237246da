/* pt2pt_hooks.c - progress while the application waits in a blocking MPI call.
 *
 * A target must serve RMA even when it is not in a flexrma call: a rank blocked in MPI_Recv for a
 * message its peer sends only after an unlock on it returns would otherwise deadlock. While
 * flexrma has work (live windows or requests in flight) and no agent thread, the blocking calls
 * below become their nonblocking form plus a wait loop that also runs the progress engine; the
 * collectives of node peers go through flexrma's shared memory instead (coll_shm.h). Their
 * meaning (matching, statuses, errors) is the MPI library's: flexrma only waits differently.
 * The request functions (MPI_Wait*, MPI_Test*, ...) are hooked in req_hooks.c. */
#include "progress.h"
#include "coll_shm.h"
#include "core/next.h"
#include "request.h"

int fr_hooks_on(void) { return fr_active && !fr_opt.async_progress && fr_progress_needed(); }

/* Collectives take flexrma's way (the nonblocking form, or coll_shm.h) whenever flexrma is in
 * charge, windows or not: MPI never matches a blocking collective with a nonblocking one, so the
 * choice must be the same on every process of the communicator, and whether a process has live
 * windows is not (a process that has not joined a window yet, or has left one: ext/dynwin;
 * windows over sub-communicators). The environment (FLEXRMA_DISABLE, FLEXRMA_ASYNC_PROGRESS) is. */
static int coll_hooks_on(void) { return fr_active && !fr_opt.async_progress; }

/* One turn of a hooked wait. The MPI library's own test already drove its progress engine;
 * flexrma's pass (a probe per window) runs every FR_HOOK_POLL_EVERY turns, often enough to serve
 * RMA within a few microseconds, seldom enough not to slow the application's own messages. The
 * turns between look at the incoming rings alone (a load per ring, a tenth of the library's
 * test): a node peer's fetch or unlock waiting for an answer is served at the next turn. With
 * answers through the ring (am_send.c), OSU's fetch-and-op with a flush on a malloc'd window,
 * its target in MPI_Barrier, went from 0.81 to 0.54 us. Three looks per turn gained 0.05 more
 * but made the application's own 8-byte exchange 3% slower (bench/hooks): one look.
 *
 * A wait that holds no request of flexrma's, begun while flexrma has nothing of its own in
 * flight (no internal request pending, no flexrma request alive), runs its first pass only
 * after FR_HOOK_FIRST_PASS turns (fr_hook_start). Safe: no completion such a wait depends on can
 * come from a pass (its requests are the library's alone); what a pass would find is a peer's
 * packet asking for service, and serving it a few turns later (about a microsecond: a turn is
 * the library's test, some 100 ns) changes when, never whether, it is served. The waits that
 * follow the first turns still pass every FR_HOOK_POLL_EVERY turns, and a wait yields the core
 * only after the idle rule's spin (idle.h), which counts these turns too. Why: an application's
 * own small message mostly completes within those turns (an 8-byte Isend/Irecv exchange takes
 * about 0.5 us), and a pass on the first turn, as long as the library's own test, lay right
 * where the message was arriving: with a window alive, that exchange took 1.08 times as long
 * through the hooks as through the library's own MPI_Waitall in the same process, 1.02 with the
 * pass deferred (bench/hooks, medians of 10 runs). Waits that hold flexrma's requests, or begin
 * while flexrma has internal requests or requests in flight, pass on their first turn as
 * before. */
#define FR_HOOK_POLL_EVERY 4
#define FR_HOOK_FIRST_PASS 8

fr_idle fr_hook_start(int ours)
{
    /* Read without the engine lock, as fr_hooks_on does: a count another thread is changing
     * may be seen either way, and the first pass then comes a few turns earlier or later. */
    int defer = !ours && fr_pending_count() == 0 && !fr_req_any();
    return (fr_idle){.turns = defer ? 0 : FR_HOOK_FIRST_PASS, .app = !ours};
}

void fr_hook_turn(fr_idle *idle)
{
    unsigned turn = idle->turns++;
    int events = 0;
    if (turn >= FR_HOOK_FIRST_PASS) { /* the turns before run nothing: no lock either */
        FR_ENTER();
        if ((turn - FR_HOOK_FIRST_PASS) % FR_HOOK_POLL_EVERY == 0) {
            events = fr_progress();
            if (events > 0) /* busy: pass again on the next turn */
                idle->turns = FR_HOOK_FIRST_PASS;
        } else {
            events = fr_progress_rings();
        }
        FR_LEAVE();
    }
    fr_idle_after(idle, events);
}

int fr_hook_wait(MPI_Request *req, MPI_Status *status)
{
    fr_idle idle = fr_hook_start(0);
    for (;;) {
        int flag = 0, rc = FR_NEXT(Test)(req, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        fr_hook_turn(&idle);
    }
}

void fr_hook_poll(void)
{
    if (!fr_active || fr_opt.async_progress || !fr_progress_needed())
        return;
    FR_ENTER();
    fr_progress();
    FR_LEAVE();
}

FR_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    fr_hook_poll();
    return FR_NEXT(Iprobe)(source, tag, comm, flag, status);
}
FR_PMPI(Iprobe);

FR_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!fr_hooks_on())
        return FR_NEXT(Probe)(source, tag, comm, status);
    fr_idle idle = fr_hook_start(0);
    for (;;) {
        int flag = 0, rc = FR_NEXT(Iprobe)(source, tag, comm, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        fr_hook_turn(&idle);
    }
}
FR_PMPI(Probe);

/* ---- blocking calls turned into nonblocking + wait ---- */

#define FR_BLOCKING(name, params, args, iname, iargs, status)                                     \
    FR_API int MPI_##name params                                                                  \
    {                                                                                             \
        if (!fr_hooks_on())                                                                       \
            return FR_NEXT(name) args;                                                            \
        MPI_Request req;                                                                          \
        int rc = PMPI_##iname iargs;                                                              \
        return rc != MPI_SUCCESS ? rc : fr_hook_wait(&req, status);                               \
    }                                                                                             \
    FR_PMPI(name);

/* A blocking collective: through flexrma's area of a communicator of node peers, or the
 * library's blocking form once every process has entered it there, or the nonblocking form and
 * a hooked wait (coll_shm.h). `way` is the fr_coll_ call that decides, setting rc if it ran the
 * call. */
#define FR_COLLECTIVE(way, name, params, args, iname, iargs)                                      \
    FR_API int MPI_##name params                                                                  \
    {                                                                                             \
        if (!coll_hooks_on())                                                                     \
            return FR_NEXT(name) args;                                                            \
        int rc = MPI_SUCCESS;                                                                     \
        switch (way) {                                                                            \
        case FR_COLL_DONE:                                                                        \
            return rc;                                                                            \
        case FR_COLL_ENTERED:                                                                     \
            return FR_NEXT(name) args;                                                            \
        case FR_COLL_NONE:                                                                        \
            break;                                                                                \
        }                                                                                         \
        MPI_Request req;                                                                          \
        rc = PMPI_##iname iargs;                                                                  \
        return rc != MPI_SUCCESS ? rc : fr_hook_wait(&req, MPI_STATUS_IGNORE);                    \
    }                                                                                             \
    FR_PMPI(name);

#define BUF const void *buf, int count, MPI_Datatype dt
FR_BLOCKING(Recv,
            (void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *st),
            (buf, count, dt, src, tag, comm, st), Irecv, (buf, count, dt, src, tag, comm, &req), st)
FR_BLOCKING(Send, (BUF, int dest, int tag, MPI_Comm comm),
            (buf, count, dt, dest, tag, comm), Isend, (buf, count, dt, dest, tag, comm, &req),
            MPI_STATUS_IGNORE)
FR_BLOCKING(Ssend, (BUF, int dest, int tag, MPI_Comm comm),
            (buf, count, dt, dest, tag, comm), Issend, (buf, count, dt, dest, tag, comm, &req),
            MPI_STATUS_IGNORE)
FR_COLLECTIVE(fr_coll_barrier(comm), Barrier, (MPI_Comm comm), (comm), Ibarrier, (comm, &req))
FR_COLLECTIVE(fr_coll_bcast(buf, count, dt, root, comm, &rc), Bcast,
              (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm),
              (buf, count, dt, root, comm), Ibcast, (buf, count, dt, root, comm, &req))
FR_COLLECTIVE(fr_coll_reduce(sb, rb, count, dt, op, root, comm, &rc), Reduce,
              (const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm),
              (sb, rb, count, dt, op, root, comm), Ireduce,
              (sb, rb, count, dt, op, root, comm, &req))
FR_COLLECTIVE(fr_coll_allreduce(sb, rb, count, dt, op, comm, &rc), Allreduce,
              (const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
              (sb, rb, count, dt, op, comm), Iallreduce, (sb, rb, count, dt, op, comm, &req))
FR_COLLECTIVE(fr_coll_enter(comm), Gather,
              (const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt,
               int root, MPI_Comm comm),
              (sb, sc, st, rb, rc_, rt, root, comm), Igather,
              (sb, sc, st, rb, rc_, rt, root, comm, &req))
FR_COLLECTIVE(fr_coll_enter(comm), Allgather,
              (const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt,
               MPI_Comm comm),
              (sb, sc, st, rb, rc_, rt, comm), Iallgather, (sb, sc, st, rb, rc_, rt, comm, &req))
FR_COLLECTIVE(fr_coll_enter(comm), Alltoall,
              (const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt,
               MPI_Comm comm),
              (sb, sc, st, rb, rc_, rt, comm), Ialltoall, (sb, sc, st, rb, rc_, rt, comm, &req))

FR_API int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!fr_hooks_on())
        return FR_NEXT(Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Request req[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &req[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &req[1]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = fr_hook_wait(&req[1], MPI_STATUS_IGNORE);
    int rrc = fr_hook_wait(&req[0], status);
    return rc != MPI_SUCCESS ? rc : rrc;
}
FR_PMPI(Sendrecv);
