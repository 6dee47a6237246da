/* acc.h - accumulate: which reduction operations apply to which predefined types, and applying
 * one accumulate at the target.
 *
 * Atomicity is MPI's: per element (MPI-3.1 section 11.7.1: concurrent accumulates to one location
 * with the same predefined datatype act as if done in some serial order). Where nobody else
 * combines into the memory (the caller holds the engine lock and no node peer maps the window)
 * a whole accumulate is combined with MPI_Reduce_local in place. Where node peers may combine
 * into the same window at the same moment (fr_acc_share), elements are combined stripe by
 * stripe of the window: a few with hardware atomics, more under the stripe's lock
 * (acc_shared.c). */
#ifndef FR_ACC_H
#define FR_ACC_H

#include "dtype.h"

/* Ops travel by index, since handle values differ between processes. MPI_REPLACE and MPI_NO_OP
 * included.
 * Index of op, or -1 if op is not a predefined operation accumulate accepts. */
int fr_op_index(MPI_Op op);
MPI_Op fr_op_handle(int index); /* MPI_OP_NULL if out of range */
/* The indexes of the two operations MPI_Reduce_local does not know (the table's order, acc.c). */
enum { FR_OPI_REPLACE = 12, FR_OPI_NO_OP = 13 };
const char *fr_op_name(int index);

/* 1 if the MPI library's MPI_Reduce_local combines predefined datatype t with predefined
 * operation op (MPI_REPLACE and MPI_NO_OP it does not know); asked once per pair, the verdict
 * shared with accumulate's check. Engine lock held. */
int fr_op_reduces(MPI_Op op, MPI_Datatype t);

/* MPI_SUCCESS if op may combine elements of predefined type elem: a predefined operation the MPI
 * library's MPI_Reduce_local applies to elem, or MPI_REPLACE or MPI_NO_OP (every type); an
 * fr_errorf() code FR_ERR_OP otherwise, naming op and type. elem == MPI_DATATYPE_NULL (mixed
 * leaves) fails with FR_ERR_TYPE. The last pair accepted is remembered, and the test against it
 * inline: every accumulate asks, at the origin and where it is applied, mostly about the same
 * pair (callers hold the engine lock). */
typedef struct fr_op_pair {
    MPI_Op op;
    MPI_Datatype elem;
    int set;
} fr_op_pair;
extern fr_op_pair fr_op_accepted;
int fr_op_check_ask(MPI_Op op, MPI_Datatype elem); /* the check itself, remembering a pair */
static inline int fr_op_check(MPI_Op op, MPI_Datatype elem)
{
    if (fr_op_accepted.set && op == fr_op_accepted.op && elem == fr_op_accepted.elem)
        return MPI_SUCCESS;
    return fr_op_check_ask(op, elem);
}

/* Window memory that other processes may combine into at the same time: the owner's, mapped by
 * its node peers (direct.c). An element belongs to the stripe of the window its first byte lies
 * in (FR_ACC_STRIPE_BYTES each, counted from base), whose lock word is stripes[stripe mod
 * FR_ACC_STRIPES]: every process picks the same word for the same element, and accumulates to
 * other stripes go on. */
#define FR_ACC_STRIPES 64
#define FR_ACC_STRIPE_BYTES 16384
/* Up to this many elements in one stripe take hardware atomics (if their type allows), more
 * take the stripe exclusively and one vectorized reduction (acc_shared.c). */
#define FR_ACC_ATOMIC_MAX 8
typedef struct fr_acc_share {
    const char *base;        /* the window's first byte as mapped in this process */
    struct fr_lockword *stripes; /* FR_ACC_STRIPES lock words in the owner's state page */
    uint64_t atomic, locked; /* out, added to: elements combined with a hardware atomic, and
                                holding their stripe exclusively */
} fr_acc_share;

/* target[i] = packed[i] op target[i] for every element of target_count elements of layout tinfo
 * at target_addr. packed holds the origin's data as consecutive elements of tinfo->elem
 * (packed_len bytes; must equal fr_dtype_bytes(tinfo, target_count)). MPI_REPLACE stores,
 * MPI_NO_OP changes nothing (packed may then be NULL). share: NULL when only the caller combines
 * into this memory. fetched: NULL, or packed_len bytes that receive each element's value from
 * just before it was combined, packed as the origin's (MPI_Get_accumulate), taken atomically
 * with the update. */
int fr_acc_apply(fr_acc_share *share, void *target_addr, int target_count, const fr_dtype *tinfo,
                 const void *packed, size_t packed_len, MPI_Op op, void *fetched);
/* MPI_Compare_and_swap on one element of predefined type e at target: *result = old value; the
 * element becomes *origin if the old value equals *compare (bitwise), atomically with every
 * other accumulate (share as for fr_acc_apply). */
int fr_acc_cas(fr_acc_share *share, void *target, const fr_dtype *e, const void *origin,
               const void *compare, void *result);

#endif
