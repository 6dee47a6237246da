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
 * refused, as MPI (logical operations: C integer and logical types only) refuses them.
 *
 * MPI_MIN and MPI_MAX on unsigned integers. MPICH 4.0.2 (Debian 12's) compares every unsigned
 * integer type as the signed type of its size (its yaksa reduction; pmodels/mpich#6083, fixed
 * in 4.1), and Open MPI 4.1.2 did the same for MPI_UNSIGNED_LONG (open-mpi/ompi#10525). flexrma
 * compares them itself, on every library: a plain loop, as fast as the library's.
 *
 * Packing from MPI_BOTTOM. MPI lets MPI_Pack and MPI_Unpack take MPI_BOTTOM with a datatype of
 * absolute addresses (MPI_Get_address displacements), and programs put and get from there.
 * MPICH 4.0 refuses a NULL buffer ("Null pointer in parameter inbuf") whatever the type; there
 * flexrma packs from the type's first byte with a datatype shifted to start there.
 *
 * A window of a non-zero size at a NULL base. MPICH 4.0 refuses MPI_Win_create(NULL, n > 0)
 * with MPI_ERR_ARG; Open MPI 4.1 creates the window (only an access then fails). flexrma does
 * what the library under it does, so a program that runs on it alone runs the same with
 * flexrma (FR_MPI_NULL_BASE_REFUSED). */
#ifndef FR_MPI_COMPAT_H
#define FR_MPI_COMPAT_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(MPI_Win) <= sizeof(uint64_t), "an MPI handle fits in a 64-bit key");

/* Whether the library refuses MPI_Win_create at a NULL base with a non-zero size (above). */
#ifdef OPEN_MPI
#define FR_MPI_NULL_BASE_REFUSED 0
#else
#define FR_MPI_NULL_BASE_REFUSED 1
#endif

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

/* MPI_Reduce_local(in, inout, n, type, op) for a predefined `type`, right also where the
 * library is wrong (MPI_MIN and MPI_MAX on unsigned integers, above). */
int fr_mpi_reduce_local(const void *in, void *inout, int n, MPI_Datatype type, MPI_Op op);

/* The buffer and datatype to hand MPI_Pack/MPI_Unpack for the data `buf` and `type` describe:
 * `buf` and `type` themselves, except for MPI_BOTTOM where the library refuses it; then a
 * non-NULL *base and a new datatype *view describing the same bytes from it, which
 * fr_mpi_pack_view_free releases. */
int fr_mpi_pack_view(const void *buf, MPI_Datatype type, const void **base, MPI_Datatype *view);
void fr_mpi_pack_view_free(MPI_Datatype type, MPI_Datatype *view);

#endif
