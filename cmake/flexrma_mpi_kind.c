/* flexrma_mpi_kind.c - tells which MPI library an mpi.h belongs to (cmake/flexrmaMpi.cmake).
 * Compiled with -DFLEXRMA_PROBE_OPENMPI or -DFLEXRMA_PROBE_MPICH, it builds only when mpi.h is
 * that library's: told by the macros each library's own mpi.h defines, not by file names.
 * MPICH's derivatives (Intel MPI, MVAPICH) define MPICH_VERSION too and count as MPICH. */
#include <mpi.h>

#if defined(FLEXRMA_PROBE_OPENMPI) && !defined(OMPI_MAJOR_VERSION)
#error "not Open MPI"
#endif
#if defined(FLEXRMA_PROBE_MPICH) && (!defined(MPICH_VERSION) || defined(OMPI_MAJOR_VERSION))
#error "not MPICH"
#endif

int flexrma_mpi_kind_probe(void);
int flexrma_mpi_kind_probe(void) { return MPI_VERSION; }
