/* isend.h - every message flexrma itself sends (batches, data messages, answers) leaves through
 * fr_isend: PMPI_Isend, or, under the test switch FLEXRMA_TEST_JITTER=MAX_US, the same send held
 * back for a random time first.
 *
 * Real networks deliver messages after varying delays; on one machine they arrive almost at
 * once and nearly in the order they were sent. The switch makes each message wait a random time
 * in [0, MAX_US] microseconds before its real PMPI_Isend starts, so messages to different
 * destinations, or with different tags, overtake each other as MPI allows them to. What MPI
 * forbids stays forbidden: a later message to the same destination with the same tag and
 * communicator never starts before an earlier one (its due time is at least the earlier one's,
 * and messages are started in the order they were sent). The caller gets a generalized request
 * (MPI_Grequest_start) that completes only once the real send completed, so it keeps its buffer
 * (and its datatype) until then exactly as before, and tests it or hands it to fr_pending_add
 * unchanged. Each progress pass (fr_progress) starts the held sends that are due and completes
 * the generalized requests of those that finished; nothing else drives them, so every request
 * fr_isend returns must be waited for through the engine (fr_pending_add, fr_wait_until), never
 * with a bare MPI_Wait.
 *
 * Off (the default), fr_isend is PMPI_Isend behind one predictable branch, and the progress
 * pass pays one more. */
#ifndef FR_ISEND_H
#define FR_ISEND_H

#include "core/fr.h"

/* The held path (isend.c). */
int fr_isend_jitter(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm, MPI_Request *req);

/* Messages this process has sent through fr_isend (engine lock held): what an epoch costs
 * between nodes, read by tests/mpi/t_crossings.c. */
extern uint64_t fr_isend_sent;

static inline int fr_isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    fr_isend_sent++;
    if (FR_LIKELY(fr_opt.test_jitter == 0))
        return PMPI_Isend(buf, count, type, dest, tag, comm, req);
    return fr_isend_jitter(buf, count, type, dest, tag, comm, req);
}

/* A blocking receive inside the progress pass (am_inbox.c: a big batch right after its length).
 * Under the switch it keeps starting this process's held sends while it waits: the process it
 * waits for may itself wait so for a message held here, and neither would ever send. Off: the
 * library's MPI_Recv. */
int fr_isend_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Status *st);

/* One progress pass's part (fr_progress, only under the switch): start the held sends that are
 * due, complete those whose real send finished. Returns the sends started and completed. */
int fr_isend_poll(void);
/* comm is about to be freed (a window's, at MPI_Win_free or MPI_Win_change_comm): start every
 * send still held on it now, in order; their completion is noticed by later passes as usual. */
void fr_isend_release(MPI_Comm comm);
/* Held sends not yet completed. */
int fr_isend_held(void);

/* What the switch did, for FLEXRMA_STATS (api/stats.c): messages held, and the longest a
 * message waited before its real send started, in microseconds. */
void fr_isend_stats(uint64_t *held, uint64_t *max_wait_us);

#endif
