/* flexrma.h - public interface of flexrma, a PMPI shim that implements MPI one-sided
 * communication (and proposed MPI-3 synchronization extensions) over an existing MPI.
 *
 * Programs written against plain MPI-2 need nothing from this header: preload libflexrma.so or
 * link it before libmpi. Include it to check the version or to use flexrma's extensions. */
#ifndef FLEXRMA_H
#define FLEXRMA_H

#include <mpi.h>

#define FLEXRMA_VERSION_MAJOR 0
#define FLEXRMA_VERSION_MINOR 1
#define FLEXRMA_VERSION_PATCH 0

#endif
