/* direct.h - single-copy access to a node peer's window: the origin copies put data straight into
 * the target's window memory, and get data straight out of it, while the closing call runs.
 *
 * Two ways to reach a peer's window (found per peer at window creation, or, in windows that
 * attach on first use (tp_shm.c), when this process first needs the peer: its first copy, lock
 * word or epoch check on it; tried per operation in this order):
 *  - mapped: the part of the window that lies in one of the peer's segments, which this process
 *    maps (shm_map.h): all of it for MPI_Alloc_mem memory, the whole pages of an MPI_Win_create
 *    window in ordinary memory, adopted in place (node/shm_adopt.h); a copy is a memcpy, or a
 *    pack/unpack for derived datatypes;
 *  - cma: the rest (the end pages, the main stack, memory that cannot be adopted), through
 *    process_vm_writev/readv, where the target layout is contiguous (the origin side may be
 *    anything: it is packed first): a get at any size, since through the ring it would wait for
 *    the target (but see "Gets asked through the ring" below); a put, one system call, only
 *    above the eager limit.
 * An operation that neither reaches keeps the batch path (data inside the batch or a message).
 * A dynamic window has no memory at creation: only the peer's state page is mapped, and each
 * attached region that lies in one of its segments is mapped once learned and copied into like
 * a mapped window, while the region's slot in that page still shows its attach (the detach
 * empties it); other regions keep the batch path.
 * Accumulates are applied by the origin too, into mapped windows only, element by element
 * (fr_direct_acc_apply).
 *
 * When a copy may happen: the target must have opened its window to this origin's epoch, which
 * each member announces in a small page of shared per-window state that its node peers map:
 *  - fence: the number of the last fence it completed (an operation of the epoch before may
 *    still be landing while it waits in the fence, and a get must not overtake it), or its close
 *    of that fence when nothing can still be landing there (fence_settled in direct.c); only
 *    with the direct fence scheme, where the target leaves its closing fence after every
 *    origin's close (FENCE_DONE or a fence slot), which the origin makes after its copies
 *    (the reduce-scatter scheme counts only operations that travel, so its windows keep the
 *    batch path);
 *  - post/start/complete/wait: how many exposure epochs it has posted to each origin; the
 *    origin's k-th access epoch to it matches its k-th post (MPI matches them in order);
 *  - counter epochs (sync-ops requests, MPIX_Put_signal): always, the window being exposed to
 *    counter-synchronized access for its whole life (specification section 6);
 *  - lock epochs: once this origin holds the target's lock, taken in the target's shared lock
 *    word (shm_lock.h), or with MPI_MODE_NOCHECK.
 * A copied operation is complete at both ends when the copy returns. It is never sent and never
 * numbered (fr_peer.ops_sent): the packet that closes the epoch follows it in the same ring,
 * published with release order after the copy, so a target that has run that packet sees the
 * data, and its counts (which only concern operations that travel) need no change.
 *
 * Gets asked through the ring. A system call costs 2-4 us whatever it reads; a target inside
 * MPI answers a get through the ring in about a round trip of the cores (ANSWER packets,
 * am_send.c). So a small get (up to fr_transport.answer_max) that cross-memory attach would
 * read, in an epoch that its origin closes itself once the get is settled (a lock it holds in
 * the target's lock word, PSCW, the direct scheme's fence), is asked of the target through the
 * ring first, with an ask word in the target's state page (one per origin) that the target
 * must claim before it serves the get. If no answer has come after FLEXRMA_ASK_WAIT_US (8 us;
 * 0: no get is asked), the origin claims the word itself and reads the get by cross-memory
 * attach: a target that computes never holds it, and the one of the two claims that wins
 * decides who reads. Such a get is never numbered (fr_peer.ops_sent) nor counted by the
 * target, which skips it when taken back, in whatever epoch it finds it (never held: it reads
 * nothing); the epoch cannot end before it is answered or taken back (the unlock and the
 * flushes wait for it, fr_peer.pending; complete and fence store their close in the target's
 * state page only then, fr_batch_ask_settle; no closing packet rides behind it), so it always
 * reads the epoch's memory. After a take-back, gets to that target go by cross-memory attach
 * for 1 ms, twice as long after each further one in a row, up to 64 ms (a target that computes
 * for long), and no get is asked while the ring to the target is more than half full: a
 * taken-back get's packet stays there until the target polls.
 *
 * Callers hold the engine lock. */
#ifndef FR_DIRECT_H
#define FR_DIRECT_H

#include "counter_bump.h"
#include "win/win.h"

#include <sys/uio.h>

/* Collective over w->comm unless FLEXRMA_TRANSPORT=am, after the channel is set up: make this
 * member's state page, publish it with the description of its window memory, and map the
 * window memory and state of every node peer whose ring this process reaches (first-use
 * attachment, fr_chan_lazy: keep the description and map on first need). A peer that cannot be
 * reached directly is simply left on the batch path; only running out of memory fails. */
int fr_direct_setup(fr_win *w);
void fr_direct_destroy(fr_win *w);
/* After fr_direct_setup, for memory every member already maps (MPI_Win_allocate_shared): member
 * r's window is at addr[r] here (NULL: unknown). Every node peer whose state page is mapped is
 * then reached by plain copies there, whatever fr_direct_setup found. */
void fr_direct_adopt_mapped(fr_win *w, char *const *addr);

/* Dynamic windows (MPI_Win_attach): if r lies in one of this process's shared segments and a
 * slot of its state page is free, describe the segment in r and publish r's attach number
 * (r->gen, never reused) in that slot, where node peers check it before each direct copy;
 * otherwise r->gen = 0 (node peers' operations on r travel). */
void fr_direct_region_attached(fr_win *w, fr_region *r);
/* MPI_Win_detach of r (or an attach that failed): empty its slot, so that a node peer that
 * learned r sends its later operations on r to this process, which refuses them. */
void fr_direct_region_detached(fr_win *w, const fr_region *r);
/* Is what this origin knows of the target's regions that hold [lo, hi) still true? 0 only when
 * one of them lies in the target's segment and its slot shows that attach is gone (detached,
 * perhaps attached again): the origin learns the target's regions again before judging. */
int fr_direct_region_current(fr_win *w, int target, uint64_t lo, uint64_t hi);
/* The origin has just learned target's regions (fr_peer.known): map those that lie in the
 * target's segments, and drop the mappings of regions no longer there. */
void fr_direct_regions_learned(fr_win *w, int target);

/* Announce to node peers: this process has completed fence number w->fence_count (everything
 * issued before it is in its window; it is now in the epoch that fence opened), which closed an
 * epoch unless it had MPI_MODE_NOPRECEDE (`closed`). */
void fr_direct_fence_passed(fr_win *w, int closed);
/* Announce to node peers: this process posted an exposure epoch to the n ranks. */
void fr_direct_posted(fr_win *w, const int *ranks, int n);
/* MPI_Win_start: my next access epoch includes target. */
void fr_direct_started(fr_win *w, int target);
/* Is target's window reached directly (mapped or by cross-memory attach)? */
int fr_direct_reached(fr_win *w, int target);
/* MPI_Win_complete, after target's operations were issued: close my access epoch to target in
 * its state page instead of a COMPLETE packet. Only to a peer reached directly and settled
 * (fr_peer_settled: nothing of mine to it in flight or unacknowledged, so every operation of
 * the epoch was copied and nothing of it can arrive later), and that has acknowledged my last
 * COMPLETE packet (fr_peer.close_ack): an unread one would close a later exposure epoch there.
 * Returns 1 if done. */
int fr_direct_complete(fr_win *w, int target);
/* Where node peer target's whole window lies here, for the program's loads and stores
 * (MPI_Win_shared_query): all of it mapped (MPI_Alloc_mem or MPI_Win_allocate memory, or an
 * adopted MPI_Win_create window of whole pages), until the window is freed or its members
 * change; NULL if any of it is not (another node, cross-memory attach only, the end pages of an
 * adopted window, FLEXRMA_DIRECT=0). Maps a peer attached on first use. */
char *fr_direct_window_at(fr_win *w, int target);
/* Is target's window reached directly and mapped already (fr_direct_reached, without mapping
 * a peer not used so far)? */
int fr_direct_mapped(const fr_win *w, int target);
/* A closing fence of the direct scheme, after target's operations were issued, target mapped:
 * close my fence epoch to target in its state page instead of a FENCE_DONE packet, upto being
 * what the packet would carry (the operations I sent it, which it waits to complete). */
void fr_direct_fence_close(fr_win *w, int target, uint64_t upto);
/* Target, in closing fence w->fence_closes: has origin closed it that way? Then *upto is what
 * its FENCE_DONE would have said. */
int fr_direct_fence_closed(const fr_win *w, int origin, uint64_t *upto);
/* Target: has origin closed my current exposure epoch to it that way (its count of closed
 * access epochs has reached my count of posts to it)? Then every operation of that epoch is
 * in my window, and any PSCW packet of it arriving now belongs to my next exposure epoch. */
int fr_direct_completed(const fr_win *w, int origin);

/* Accumulates of one origin to the same elements apply in program order (MPI-3.1 11.7.2): one
 * applied straight into target's window may not overtake an earlier one of mine that travels,
 * so it may go now only while everything I sent the target is known complete there
 * (fr_peer_settled). The window's accumulate_ordering=none hint waives that. */
static inline int fr_direct_acc_in_order(const fr_win *w, int target)
{
    return !w->hints.ordering || fr_peer_settled(&w->peers[target]);
}

/* The lock word of rank's window (shm_lock.h) if this process uses it: its own when it has a
 * shared state page, a node peer's when mapped (then every lock request of this process on it
 * takes a ticket there itself). NULL: the lock travels in LOCK/UNLOCK packets. */
struct fr_lockword *fr_direct_lockword(fr_win *w, int rank);

/* Apply an accumulate to the window of member `owner` (this process or a mapped node peer) at
 * addr, as fr_acc_apply does. When owner has a state page, node peers may combine into its
 * window at the same moment (their direct accumulates, the owner's from packets and its own):
 * then every element is combined on its own, with a hardware atomic or under one of the
 * accumulate stripes in that page (acc_shared.c), atomic per element as MPI asks. fetched: NULL,
 * or where the values before go (MPI_Get_accumulate, MPI_Fetch_and_op). */
int fr_direct_acc_apply(fr_win *w, int owner, void *addr, int count, const fr_dtype *t,
                        const void *packed, size_t len, MPI_Op op, void *fetched);
/* An accumulate of any kind (MPI_Accumulate, MPI_Get_accumulate, MPI_Compare_and_swap) into
 * owner's window at `at`, from op's origin buffer, its result (if any) into op's result buffer:
 * by the target itself (local.c), or by an origin that maps the window. */
int fr_direct_acc_op(fr_win *w, int owner, char *at, const fr_op *op);
/* MPI_Compare_and_swap on one element of e at addr in owner's window, the same way. */
int fr_direct_cas(fr_win *w, int owner, void *addr, const fr_dtype *e, const void *origin,
                  const void *compare, void *result);

/* Origin, for get op about to travel to target: if it is to be asked (op would otherwise be read
 * by cross-memory attach), open ask *ask in the target's state page and return 1, *remote being
 * where cross-memory attach would read it; else 0, *ask untouched (op travels as any get). */
int fr_direct_ask_open(fr_win *w, int target, const fr_op *op, uint64_t *ask, uint64_t *remote);
/* Origin: take ask back if the target has not claimed it yet; then read it by cross-memory
 * attach from remote into count elements of dt at addr (bytes in all, *rc the result), ask the
 * target nothing for a while, and return 1. 0: the target serves it, its answer is on its way. */
int fr_direct_ask_take_back(fr_win *w, int target, uint64_t ask, uint64_t remote, void *addr,
                            int count, const fr_dtype *dt, size_t bytes, int *rc);
/* Target, about to serve origin's get asked as ask: claim it; 0 if the origin took it back
 * (then the get is skipped: neither answered nor counted). */
int fr_direct_ask_serve(fr_win *w, int origin, uint64_t ask);
/* Target: has origin taken back its get asked as ask (its packet then touches nothing, and
 * is never held for an epoch: one that waited for my next post would hold the origin's later
 * packets with it)? */
int fr_direct_ask_taken(const fr_win *w, int origin, uint64_t ask);

/* Copy op to target now if the target's window can be reached and its epoch allows it.
 * Returns 1 if done (*rc: the copy's result; op's request, if any, is told that the operation
 * is complete at both ends), 0 if the op must travel in a batch (a get to be asked through the
 * ring too, fr_direct_ask_open). may_ask: 0 when no get may be asked in the batch op goes in
 * (a closing packet follows it), so that a get is read by cross-memory attach instead. */
int fr_direct_try(fr_win *w, int target, const fr_op *op, int may_ask, int *rc);

/* Gets by cross-memory attach, gathered over one flush of a target's queue so that one system
 * call reads them all: a process_vm_readv costs 2-4 us here whatever it moves, so 64 gets of 8
 * bytes took 64 calls. Filled by fr_direct_gather, read by fr_direct_gets_run. */
#define FR_CMA_GETS_MAX 64
typedef struct fr_cma_gets {
    size_t n;
    struct iovec local[FR_CMA_GETS_MAX], remote[FR_CMA_GETS_MAX];
} fr_cma_gets;

/* Is op a get that waits in the queue for its epoch's flush rather than being copied at the
 * call (fr_direct_try)? One that reaches the target by cross-memory attach into a contiguous
 * origin buffer, without a request (a request completes at the call), in an epoch that has a
 * flushing call. Completing it later is what MPI allows of every operation of an epoch. */
int fr_direct_defers(fr_win *w, int target, const fr_op *op);
/* Add get op to g if it may be read by cross-memory attach now and is not to be asked (may_ask
 * as for fr_direct_try) (then 1; the caller runs g before its flush returns), else 0. g
 * belongs to one target. */
int fr_direct_gather(fr_win *w, int target, const fr_op *op, int may_ask, fr_cma_gets *g);
/* Read every get of g in one system call (more when the kernel stops short) and empty it. */
int fr_direct_gets_run(fr_win *w, int target, fr_cma_gets *g);
/* Before a closing call issues q to target: if only the target's permission keeps an operation
 * of q from being copied, wait for it: complete for the matching post (for any time when an
 * operation is large enough that a copy beats the message path by far, at most a few round
 * trips when all are small); a closing fence (direct scheme) always, for the target to pass the
 * fence that opened the epoch. */
void fr_direct_await(fr_win *w, int target, const fr_opq *q);

#endif
