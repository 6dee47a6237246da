/* mpi_compat.h - where the MPI libraries flexrma runs over differ, said once.
 *
 * Handles. Open MPI's MPI_Win, MPI_Comm, MPI_Datatype ... are pointers to its objects; MPICH's
 * (and its derivatives') are 32-bit integers that encode kind and index. flexrma keys its maps
 * by handle (the window registry), so it reads a handle's bytes as a number, whatever its type:
 * a pointer's address, or an integer's value. Neither library hands out a handle of all-zero
 * bytes for a live object, which fr_u64map needs of its keys.
 *
 * Reductions. flexrma asks the library's own MPI_Reduce_local which (op, type) pairs it reduces
 * (dtype/acc.c), under MPI_ERRORS_RETURN. MPICH 4.0 answers some pairs by aborting the process
 * instead: its check admits MPI_LAND and MPI_LOR on C floating types, then its implementation
 * of them asserts (src/mpi/coll/op/opland.c, oplor.c). Those pairs are not asked; they are
 * refused, as MPI (logical operations: C integer and logical types only) refuses them. */
#ifndef FR_MPI_COMPAT_H
#define FR_MPI_COMPAT_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(MPI_Win) <= sizeof(uint64_t), "an MPI handle fits in a 64-bit key");

/* The 64-bit key of the handle `h` (an lvalue of any MPI handle type). */
#define fr_handle_key(h) fr_handle_bytes_key(&(h), sizeof(h))

static inline uint64_t fr_handle_bytes_key(const void *handle, size_t n)
{
    uint64_t key = 0;
    memcpy(&key, handle, n);
    return key;
}

/* Whether asking the library's MPI_Reduce_local to reduce one element of `type` with `op`
 * would abort the process rather than answer. */
int fr_mpi_reduce_aborts(MPI_Op op, MPI_Datatype type);

#endif
