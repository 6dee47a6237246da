/* coll_shm.c - barriers, broadcasts and reductions of node peers in shared memory (coll_shm.h).
 *
 * The area. A communicator of at most FR_COLL_MEMBERS processes, all node peers of each other,
 * gets one segment, made by its rank 0 after FLEXRMA_COLL_SHM hooked collectives on it (so
 * that a communicator used for a few collectives never pays for one) and mapped by the
 * others. Each member owns a line with its arrival and done words and FR_COLL_BUFFERS buffers
 * for small data, and FR_COLL_BUFFERS buffers of FR_COLL_BYTES. The making is collective and
 * polled like any hooked wait: rank 0 broadcasts where the segment is, every member maps it, and
 * an allreduce of "mapped" decides for all; a member that cannot map it (descriptors, another
 * pid namespace) keeps everyone on the nonblocking way.
 *
 * A call. Every call through the area has the next sequence number k, the same on every member
 * (the choice is the same everywhere, coll_shm.h). A member that brings data writes it into its
 * buffer k % FR_COLL_BUFFERS, then stores k into its arrival word (release); a member waits for
 * the arrival words it needs (acquire): all of them in a barrier, an allreduce and at a
 * reduction's root, the root's in a broadcast. Having read what it needed, it stores k into its
 * done word. An allreduce and a reduction reduce the members' buffers in rank order, the same
 * order on every member, so that all get the same bits (MPI-3.1 5.9.1 asks for it).
 * A buffer is written again FR_COLL_BUFFERS calls later, once every done word holds the call
 * that last used it: a broadcast's root and a reduction's other members do not wait for anyone,
 * so they may run that many calls ahead of the slowest member, no more (a correct program never
 * depends on a collective not synchronizing: MPI-3.1 5.14). Mostly nothing waits there: seeing
 * everyone arrive at call k proves everyone done with call k - 1.
 *
 * Data goes in as MPI_Pack lays it out (the type signature's order), so that members whose
 * datatypes differ but have one signature agree; a predefined type without holes is that
 * already and is copied, and reduced in place.
 *
 * A call the area does not carry (data over FR_COLL_BYTES, MPI_Gather, MPI_Allgather,
 * MPI_Alltoall, arguments for the library to judge) is a barrier here first: once every member
 * has entered it, the library's blocking form waits for no process that needs this one.
 *
 * While it waits, a member serves RMA as every hooked wait does (fr_hook_turn) and, every few
 * polls, has the MPI library progress (MPI_Iprobe), as its own blocking collectives would: a
 * large send of a peer that must be received before that peer reaches the barrier still goes.
 */
#define _GNU_SOURCE /* getpid */
#include "coll_shm.h"
#include "progress.h"
#include "core/idle.h"
#include "core/next.h"
#include "dtype/acc.h"
#include "node/node_comm.h"
#include "node/shm_map.h"
#include "node/shm_seg.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FR_COLL_MEMBERS 16   /* members read every arrival word: flat, for small nodes */
/* A call's data at most this (count * type size): an allreduce of 8 KiB was faster in MPICH 4.0
 * (2.4 us against 3.2 at 2 ranks), of 4 KiB as fast; in Open MPI 4.1 twice as slow at both. */
#define FR_COLL_BYTES 4096
#define FR_COLL_BUFFERS 2
#define FR_COLL_LINE 128     /* an arrival word's own lines: no neighbour's store evicts it */
#define FR_COLL_PROBE_EVERY 8 /* polls of the words between two turns of a wait */

#define FR_COLL_INLINE 48    /* data up to this travels in the arrival word's line */

/* What went through an area: four collectives, and calls that only entered there (ENTERED). */
enum coll_kind { BARRIER, ALLREDUCE, BCAST, REDUCE, ENTERED, FR_COLL_KINDS };

/* A member's line: its words, and its buffers for small data, which a reader then gets with
 * the arrival word (one line's transfer, not two). 16-byte aligned, as the widest predefined type
 * may want. */
typedef struct arrival {
    uint64_t seq;  /* the last call this member entered, its data written */
    uint64_t done; /* the last call whose data it has finished reading */
    _Alignas(16) unsigned char small[FR_COLL_BUFFERS][FR_COLL_INLINE];
    char pad[FR_COLL_LINE - 16 - FR_COLL_BUFFERS * FR_COLL_INLINE];
} arrival;
_Static_assert(sizeof(arrival) == FR_COLL_LINE, "an arrival line is FR_COLL_LINE bytes");

enum area_state { COUNTING, READY, OFF };

typedef struct coll_area {
    enum area_state state;
    unsigned calls;      /* COUNTING: hooked collectives seen */
    int size, rank;
    uint64_t seq;        /* the last call through the area */
    uint64_t all_done;   /* every member's done word holds at least this */
    unsigned turn_every; /* polls of the words between two turns of a wait */
    uint64_t calls_of[FR_COLL_KINDS]; /* calls through the area, by kind */
    MPI_Op taken_op;     /* the last operation and datatype taken through the area */
    MPI_Datatype taken_type;
    unsigned char *base; /* the segment here */
    int made;            /* 1: this process made it (rank 0), 0: mapped from rank 0 */
    fr_peer_proc *owner; /* rank 0's process, when mapped */
    uint64_t serial;     /* of the mapped segment */
    MPI_Comm comm;
    struct coll_area *prev, *next; /* every area with an attribute: released at MPI_Finalize */
} coll_area;

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static coll_area *areas; /* under the engine lock */
/* FLEXRMA_STATS, under the engine lock: areas made, and the calls of those already deleted. */
static uint64_t areas_made, gone_calls[FR_COLL_KINDS];

static size_t area_bytes(int size)
{
    return (size_t)size * (sizeof(arrival) + FR_COLL_BUFFERS * (size_t)FR_COLL_BYTES);
}

static arrival *arrival_of(const coll_area *a, int member)
{
    return (arrival *)a->base + member;
}

static unsigned char *buffer_of(const coll_area *a, int member, uint64_t seq, size_t bytes)
{
    if (bytes <= FR_COLL_INLINE)
        return arrival_of(a, member)->small[seq % FR_COLL_BUFFERS];
    unsigned char *buffers = a->base + (size_t)a->size * sizeof(arrival);
    return buffers + ((size_t)member * FR_COLL_BUFFERS + seq % FR_COLL_BUFFERS) * FR_COLL_BYTES;
}

/* Unmap or free the segment; the area goes on as OFF. Engine lock held. */
static void release(coll_area *a)
{
    if (a->base && a->made) {
        fr_seg_free(a->base);
    } else if (a->base) {
        fr_seg_unmap_remote(a->owner, a->serial);
    }
    if (a->owner)
        fr_peer_proc_release(a->owner);
    a->base = NULL;
    a->owner = NULL;
    a->state = OFF;
}

/* The communicator is freed (or MPI_Finalize deletes the attribute). */
static int area_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    coll_area *a = value;
    FR_ENTER();
    release(a);
    for (int k = 0; k < FR_COLL_KINDS; k++)
        gone_calls[k] += a->calls_of[k];
    if (a->prev)
        a->prev->next = a->next;
    else
        areas = a->next;
    if (a->next)
        a->next->prev = a->prev;
    FR_LEAVE();
    free(a);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    /* MPI_COMM_NULL_COPY_FN: a duplicate counts and makes its own area. */
    FR_CHECK_MPI(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, area_delete, &keyval, NULL));
}

/* Where rank 0's segment is. Plain bytes, broadcast. */
typedef struct offer {
    int32_t ok;
    int32_t pid;
    fr_seg_ref ref;
} offer;

/* Make the area, collectively (every member counted the same calls): READY, or OFF for all. */
static void make(coll_area *a, MPI_Comm comm)
{
    a->state = OFF;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &a->size);
    PMPI_Comm_rank(comm, &a->rank);
    if (inter || a->size > FR_COLL_MEMBERS || !fr_node_all_peers(comm))
        return; /* the same answer on every member: no agreement needed */
    offer o = {0};
    if (a->rank == 0) {
        void *base = NULL;
        FR_ENTER();
        if (fr_seg_alloc(area_bytes(a->size), &base) == MPI_SUCCESS) {
            /* Never a spare: a member may still read the last call's buffers after this
             * process freed the communicator, and a spare comes back as other memory. */
            fr_seg_no_spare(base);
            o.ok = fr_seg_lookup(base, 0, &o.ref);
            a->base = base;
            a->made = 1;
        }
        FR_LEAVE();
        o.pid = (int32_t)getpid();
    }
    MPI_Request req;
    FR_CHECK_MPI(PMPI_Ibcast(&o, (int)sizeof o, MPI_BYTE, 0, comm, &req));
    FR_CHECK_MPI(fr_hook_wait(&req, MPI_STATUS_IGNORE));
    int mapped = o.ok;
    if (o.ok && a->rank != 0) {
        void *base = NULL;
        FR_ENTER();
        mapped = fr_peer_proc_open(o.pid, &a->owner) == MPI_SUCCESS &&
                 fr_seg_map_remote(a->owner, &o.ref, &base) == MPI_SUCCESS;
        if (mapped) {
            a->base = base;
            a->serial = o.ref.serial;
        }
        FR_LEAVE();
    }
    int all = 0;
    FR_CHECK_MPI(PMPI_Iallreduce(&mapped, &all, 1, MPI_INT, MPI_MIN, comm, &req));
    FR_CHECK_MPI(fr_hook_wait(&req, MPI_STATUS_IGNORE));
    FR_ENTER();
    if (a->made)
        fr_seg_unlink_name(a->base); /* named backend: everyone has opened it */
    if (all) {
        a->state = READY;
        /* With more ranks than cores, the member waited for may need this core: every poll is
         * a turn, so the wait gives it away after the idle rule's polls, not 8 times later. */
        a->turn_every = fr_node_oversubscribed() ? 1 : FR_COLL_PROBE_EVERY;
        areas_made++;
    } else
        release(a);
    FR_LEAVE();
}

/* comm's area when this call goes through it, else NULL. Counts the calls before the area. */
static coll_area *area_for_call(MPI_Comm comm)
{
    if (fr_opt.coll_shm == 0 || comm == MPI_COMM_NULL)
        return NULL;
    pthread_once(&keyval_once, keyval_create);
    coll_area *a = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &a, &flag) != MPI_SUCCESS)
        return NULL; /* not a communicator: the library says so */
    if (!flag) {
        a = fr_xcalloc(1, sizeof *a);
        a->comm = comm;
        a->taken_op = MPI_OP_NULL;
        a->taken_type = MPI_DATATYPE_NULL;
        FR_CHECK_MPI(PMPI_Comm_set_attr(comm, keyval, a));
        FR_ENTER();
        a->next = areas;
        if (areas)
            areas->prev = a;
        areas = a;
        FR_LEAVE();
    }
    if (a->state == READY)
        return a;
    if (a->state == COUNTING && ++a->calls >= fr_opt.coll_shm)
        make(a, comm); /* this call still takes the nonblocking way */
    return NULL;
}

enum word { ARRIVED, DONE };

/* Have members [*from, to) all stored seq or more into their word? *from moves past those that
 * have, so a wait reads each member's word until it has seen it there. */
static int reached(const coll_area *a, enum word word, uint64_t seq, int *from, int to)
{
    for (; *from < to; ++*from) {
        const arrival *m = arrival_of(a, *from);
        if (__atomic_load_n(word == ARRIVED ? &m->seq : &m->done, __ATOMIC_ACQUIRE) < seq)
            return 0;
    }
    return 1;
}

/* Wait until members [from, to) have stored seq or more into their word, serving RMA and the
 * MPI library's progress. */
static void wait_for(coll_area *a, MPI_Comm comm, enum word word, uint64_t seq, int from, int to)
{
    if (reached(a, word, seq, &from, to))
        return;
    /* What it waits for is other processes of the node, which with more ranks than cores may need
     * this very core: it gives the core away as flexrma's own waits do (idle.h), not with the
     * floor kept for a wait on the application's messages. */
    fr_idle idle = fr_hook_start(0);
    idle.app = 0;
    for (unsigned polls = 1;; polls++) {
        if (reached(a, word, seq, &from, to))
            return;
        if (polls % a->turn_every == 0) {
            int flag = 0;
            FR_CHECK_MPI(
                FR_NEXT(Iprobe)(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
            fr_hook_turn(&idle);
        }
    }
}

/* My buffers of call seq may be written: everyone is done with call seq - FR_COLL_BUFFERS, the
 * last that used them. */
static void writable(coll_area *a, MPI_Comm comm, uint64_t seq)
{
    if (seq <= FR_COLL_BUFFERS || a->all_done >= seq - FR_COLL_BUFFERS)
        return;
    wait_for(a, comm, DONE, seq - FR_COLL_BUFFERS, 0, a->size);
    a->all_done = seq - FR_COLL_BUFFERS;
}

static void arrive(coll_area *a, uint64_t seq)
{
    __atomic_store_n(&arrival_of(a, a->rank)->seq, seq, __ATOMIC_RELEASE);
}

/* Wait for members [from, to) to arrive at call seq. Then, if this process still has messages of
 * its own in flight, one more pass: a get's data that a peer has received, which is why it could
 * arrive, was sent by this process, and only a pass that sees the send complete counts its
 * notification (MPI_Get_notify); a peer that completed its notified get before the collective
 * then finds it counted after, as it did when the library's nonblocking collective, polled with
 * passes, took longer than this (t_random caught it). */
static void wait_arrivals(coll_area *a, MPI_Comm comm, uint64_t seq, int from, int to)
{
    wait_for(a, comm, ARRIVED, seq, from, to);
    if (from == 0 && to == a->size && a->all_done < seq - 1)
        a->all_done = seq - 1; /* one arrives at call seq after being done with seq - 1 */
    if (fr_pending_count() > 0)
        fr_hook_poll();
}

/* This member has read what it needed of call seq (release: those loads come before). */
static void done(coll_area *a, uint64_t seq)
{
    __atomic_store_n(&arrival_of(a, a->rank)->done, seq, __ATOMIC_RELEASE);
}

/* A barrier through the area, counted as `kind`. */
static void meet(coll_area *a, MPI_Comm comm, enum coll_kind kind)
{
    a->calls_of[kind]++;
    uint64_t seq = ++a->seq;
    arrive(a, seq);
    wait_arrivals(a, comm, seq, 0, a->size);
    done(a, seq);
}

/* Every member has entered the call, which goes to the library. */
static fr_coll_way entered(coll_area *a, MPI_Comm comm)
{
    meet(a, comm, ENTERED);
    return FR_COLL_ENTERED;
}

fr_coll_way fr_coll_barrier(MPI_Comm comm)
{
    coll_area *a = area_for_call(comm);
    if (!a)
        return FR_COLL_NONE;
    meet(a, comm, BARRIER);
    return FR_COLL_DONE;
}

fr_coll_way fr_coll_enter(MPI_Comm comm)
{
    coll_area *a = area_for_call(comm);
    return a ? entered(a, comm) : FR_COLL_NONE;
}

/* A call's data as this member passes it: count elements of type, `bytes` in all, packed as
 * plain memory when the type is a predefined one without holes. */
typedef struct call_data {
    int count;
    MPI_Datatype type;
    size_t bytes;
    int plain;
} call_data;

/* May the call's data go through the area (at most FR_COLL_BYTES, as every member finds: one
 * type signature)? Arguments the library would refuse go to it, which raises the error. */
static int call_data_of(int count, MPI_Datatype type, call_data *d)
{
    int size = 0, ni, na, nd, combiner;
    MPI_Aint lb, extent;
    if (count < 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        (size_t)count * (size_t)size > FR_COLL_BYTES)
        return 0;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    PMPI_Type_get_extent(type, &lb, &extent);
    *d = (call_data){count, type, (size_t)count * (size_t)size,
                     combiner == MPI_COMBINER_NAMED && lb == 0 && extent == size};
    return 1;
}

/* Write the data at buf into my buffer of call seq. */
static void put_mine(coll_area *a, uint64_t seq, const void *buf, const call_data *d)
{
    unsigned char *slot = buffer_of(a, a->rank, seq, d->bytes);
    if (d->plain) {
        memcpy(slot, buf, d->bytes);
        return;
    }
    int pos = 0, room = d->bytes <= FR_COLL_INLINE ? FR_COLL_INLINE : FR_COLL_BYTES;
    FR_CHECK_MPI(PMPI_Pack(buf, d->count, d->type, slot, room, &pos, MPI_COMM_SELF));
    if ((size_t)pos != d->bytes) /* both libraries pack a signature into its size, no more */
        fr_fatal("MPI_Pack of %d elements of a %zu-byte signature gave %d bytes", d->count,
                 d->bytes, pos);
}

/* Copy member m's data of call seq to buf, in this member's datatype. */
static void get_theirs(const coll_area *a, int m, uint64_t seq, void *buf, const call_data *d)
{
    const unsigned char *slot = buffer_of(a, m, seq, d->bytes);
    if (d->plain) {
        memcpy(buf, slot, d->bytes);
        return;
    }
    int pos = 0;
    FR_CHECK_MPI(PMPI_Unpack(slot, (int)d->bytes, &pos, buf, d->count, d->type, MPI_COMM_SELF));
}

/* Reduce the members' data of call seq into recvbuf, the last member's first, then each one
 * before it on the left (MPI_Reduce_local: inout = in op inout), so x0 op (x1 op (... op
 * x_last)). Plain data is reduced where it lies, other data unpacked into this process's layout
 * of the datatype first. */
static int reduce_all(const coll_area *a, uint64_t seq, void *recvbuf, MPI_Op op,
                      const call_data *d)
{
    get_theirs(a, a->size - 1, seq, recvbuf, d);
    unsigned char *tmp = NULL;
    void *typed = NULL;
    if (!d->plain && a->size > 1) {
        MPI_Aint lb, extent, true_lb, true_extent;
        PMPI_Type_get_extent(d->type, &lb, &extent);
        PMPI_Type_get_true_extent(d->type, &true_lb, &true_extent);
        tmp = fr_xmalloc(d->count > 0 ? (size_t)(d->count - 1) * (size_t)extent +
                                            (size_t)true_extent
                                      : 1);
        typed = tmp - true_lb;
    }
    int rc = MPI_SUCCESS;
    for (int m = a->size - 2; m >= 0 && rc == MPI_SUCCESS; m--) {
        const void *in = buffer_of(a, m, seq, d->bytes);
        if (!d->plain) {
            get_theirs(a, m, seq, typed, d);
            in = typed;
        }
        rc = PMPI_Reduce_local(in, recvbuf, d->count, d->type, op);
    }
    free(tmp);
    return rc;
}

/* Would the library refuse this reduction? Then it goes there, to raise the error on comm: both
 * libraries take a predefined operation only on a predefined datatype it is defined for, an
 * operation of the program's own on any datatype. The last pair taken is remembered. */
static int refused(coll_area *a, MPI_Op op, MPI_Datatype type)
{
    if (op == MPI_OP_NULL)
        return 1;
    if (op == a->taken_op && type == a->taken_type)
        return 0;
    FR_ENTER();
    int taken = fr_op_index(op) < 0 || fr_op_reduces(op, type);
    FR_LEAVE();
    if (taken) {
        a->taken_op = op;
        a->taken_type = type;
    }
    return !taken;
}

fr_coll_way fr_coll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, int *rc)
{
    coll_area *a = area_for_call(comm);
    call_data d;
    if (!a)
        return FR_COLL_NONE;
    if (!call_data_of(count, type, &d) || refused(a, op, type))
        return entered(a, comm);
    a->calls_of[ALLREDUCE]++;
    uint64_t seq = ++a->seq;
    writable(a, comm, seq);
    put_mine(a, seq, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, &d);
    arrive(a, seq);
    wait_arrivals(a, comm, seq, 0, a->size);
    *rc = reduce_all(a, seq, recvbuf, op, &d);
    done(a, seq);
    return FR_COLL_DONE;
}

fr_coll_way fr_coll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Comm comm, int *rc)
{
    coll_area *a = area_for_call(comm);
    call_data d;
    if (!a)
        return FR_COLL_NONE;
    /* MPI_IN_PLACE at another rank than the root is erroneous (MPI-3.1 5.9.1): this rank's call
     * goes to the library to be judged, as it would natively. */
    if (root < 0 || root >= a->size || (sendbuf == MPI_IN_PLACE && a->rank != root) ||
        !call_data_of(count, type, &d) || refused(a, op, type))
        return entered(a, comm);
    a->calls_of[REDUCE]++;
    uint64_t seq = ++a->seq;
    int at_root = a->rank == root;
    writable(a, comm, seq);
    put_mine(a, seq, sendbuf == MPI_IN_PLACE && at_root ? recvbuf : sendbuf, &d);
    arrive(a, seq);
    *rc = MPI_SUCCESS;
    if (at_root) {
        wait_arrivals(a, comm, seq, 0, a->size);
        *rc = reduce_all(a, seq, recvbuf, op, &d);
    }
    done(a, seq);
    return FR_COLL_DONE;
}

fr_coll_way fr_coll_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                          int *rc)
{
    coll_area *a = area_for_call(comm);
    call_data d;
    if (!a)
        return FR_COLL_NONE;
    if (root < 0 || root >= a->size || !call_data_of(count, type, &d))
        return entered(a, comm);
    a->calls_of[BCAST]++;
    uint64_t seq = ++a->seq;
    if (a->rank == root) {
        writable(a, comm, seq);
        put_mine(a, seq, buf, &d);
        arrive(a, seq);
    } else {
        arrive(a, seq);
        wait_arrivals(a, comm, seq, root, root + 1);
        get_theirs(a, root, seq, buf, &d);
    }
    done(a, seq);
    *rc = MPI_SUCCESS;
    return FR_COLL_DONE;
}

uint64_t fr_coll_shm_calls(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return 0;
    coll_area *a = NULL;
    int flag = 0;
    PMPI_Comm_get_attr(comm, keyval, &a, &flag);
    uint64_t n = 0;
    for (int k = 0; flag && k < FR_COLL_KINDS; k++)
        n += a->calls_of[k];
    return n;
}

_Static_assert(FR_COLL_KINDS == 5, "fr_coll_stats gives 5 counts (coll_shm.h)");

void fr_coll_stats(uint64_t *made, uint64_t calls[5])
{
    *made = areas_made;
    for (int k = 0; k < FR_COLL_KINDS; k++) {
        calls[k] = gone_calls[k];
        for (const coll_area *a = areas; a; a = a->next)
            calls[k] += a->calls_of[k];
    }
}

void fr_coll_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return;
    /* Deleting the attribute runs area_delete, which unlinks the area. */
    while (areas)
        FR_CHECK_MPI(PMPI_Comm_delete_attr(areas->comm, keyval));
    PMPI_Comm_free_keyval(&keyval);
}
