/* acc.h - accumulate: which reduction operations apply to which predefined types, and applying
 * one accumulate at the target.
 *
 * Atomicity: fr_acc_apply() runs with the engine lock held, and, for windows whose node peers
 * apply accumulates themselves, holding the window's accumulate word (fr_direct_acc_apply,
 * direct.h), so a whole accumulate is applied without interleaving with any other accumulate to
 * this window (request-level atomicity, as seed 000 section 3 does; MPI asks only for
 * element-level atomicity). */
#ifndef FR_ACC_H
#define FR_ACC_H

#include "dtype.h"

/* Ops travel by index, since handle values differ between processes. MPI_REPLACE included.
 * Index of op, or -1 if op is not a predefined operation accumulate accepts. */
int fr_op_index(MPI_Op op);
MPI_Op fr_op_handle(int index); /* MPI_OP_NULL if out of range */
const char *fr_op_name(int index);

/* MPI_SUCCESS if op (predefined, or MPI_REPLACE) may combine elements of predefined type elem
 * (MPI-2.2 section 5.9.2 op/type table; MAXLOC/MINLOC on the pair types); an fr_errorf() code
 * FR_ERR_OP otherwise, naming op and type. elem == MPI_DATATYPE_NULL (mixed leaves) fails with
 * FR_ERR_TYPE. */
int fr_op_check(MPI_Op op, MPI_Datatype elem);

/* target[i] = packed[i] op target[i] for every element of target_count elements of layout tinfo
 * at target_addr. packed holds the origin's data as consecutive elements of tinfo->elem
 * (packed_len bytes; must equal fr_dtype_bytes(tinfo, target_count)). MPI_REPLACE stores. */
int fr_acc_apply(void *target_addr, int target_count, const fr_dtype *tinfo,
                 const void *packed, size_t packed_len, MPI_Op op);

#endif
