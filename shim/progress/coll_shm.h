/* coll_shm.h - the blocking collectives of a communicator whose processes are all node peers,
 * through a shared-memory area of flexrma's own, for the collective hooks (pt2pt_hooks.c):
 * MPI_Barrier, and MPI_Bcast, MPI_Reduce and MPI_Allreduce of small data, run there; the others
 * meet there before the library's blocking form.
 *
 * Why: a process blocked in a collective must still serve RMA, so the hooks turn blocking
 * collectives into their nonblocking form and a polled wait, and the MPI libraries' nonblocking
 * collectives are slower: an 8-byte MPI_Iallreduce and its wait take 1.9 times MPI_Allreduce's
 * time over Open MPI 4.1 (libnbc), 1.45 times over MPICH 4.0, at 2 ranks, in every preloaded
 * program, windows or not. In shared memory a member writes its data and an arrival word, and
 * polls the others' words, serving RMA meanwhile; the MPI library's progress runs every few
 * polls, as in its own blocking calls (coll_shm.c).
 *
 * The way a call takes must be the same on every process of the communicator, since MPI never
 * matches a nonblocking collective with a blocking one, and two processes of it may differ in
 * everything flexrma knows of them but what they all see alike: the environment, the
 * communicator's size and kind, where its processes run, the size of the data (one type
 * signature everywhere), the root and the operation. The choice is made of those alone, and an
 * area is made only after an agreement over the communicator. */
#ifndef FR_COLL_SHM_H
#define FR_COLL_SHM_H

#include "core/fr.h"

/* How a hooked collective goes (the same on every process of the communicator):
 *  - FR_COLL_DONE: it ran through the area; its return code is in *rc;
 *  - FR_COLL_ENTERED: every process of the communicator has entered the call (they met in the
 *    area, serving RMA meanwhile), so the library's blocking form waits for nobody who needs
 *    this process: the caller runs it (data too large for the area, arguments for the library
 *    to judge, or a collective the area does not carry);
 *  - FR_COLL_NONE: no area: the caller takes the nonblocking way. */
typedef enum fr_coll_way { FR_COLL_NONE, FR_COLL_DONE, FR_COLL_ENTERED } fr_coll_way;

fr_coll_way fr_coll_barrier(MPI_Comm comm);
fr_coll_way fr_coll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, int *rc);
fr_coll_way fr_coll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Comm comm, int *rc);
fr_coll_way fr_coll_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                          int *rc);
/* Any other hooked collective: FR_COLL_ENTERED or FR_COLL_NONE. */
fr_coll_way fr_coll_enter(MPI_Comm comm);
/* How many calls on comm went through shared memory (tests). */
uint64_t fr_coll_shm_calls(MPI_Comm comm);
/* FLEXRMA_STATS: areas made, and the calls that went through them: barriers, allreduces,
 * broadcasts, reductions, and calls that only met there before the library's collective.
 * Engine lock held. */
void fr_coll_stats(uint64_t *made, uint64_t calls[5]);
/* MPI_Finalize, before the engine lock is taken: every area is released. */
void fr_coll_finalize(void);

#endif
