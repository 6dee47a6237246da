/* alloc_mem.c - MPI_Alloc_mem and MPI_Free_mem.
 *
 * flexrma hands out the memory itself and remembers every block, so MPI_Free_mem of memory that
 * did not come from MPI_Alloc_mem is reported (MPI_ERR_BASE) instead of corrupting the heap.
 * Blocks are cache-line aligned; the same-node transport later places them in segments its
 * peers can map. */
#include "fr.h"
#include "next.h"
#include "u64map.h"

#include <stdlib.h>

static fr_u64map blocks; /* address -> (void *)size+1 */

FR_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    if (!fr_active)
        return FR_NEXT(Alloc_mem)(size, info, baseptr);
    if (size < 0)
        return fr_comm_raise(MPI_COMM_WORLD, "MPI_Alloc_mem",
                             fr_errorf(FR_ERR_SIZE, "MPI_Alloc_mem of %ld bytes", (long)size));
    void *p = NULL;
    /* A zero-byte request still gets a distinct block, so MPI_Free_mem can recognise it. */
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return fr_comm_raise(MPI_COMM_WORLD, "MPI_Alloc_mem",
                             fr_errorf(FR_ERR_NO_MEM, "cannot allocate %ld bytes", (long)size));
    FR_ENTER();
    fr_u64map_put(&blocks, fr_key_ptr(p), (void *)(uintptr_t)((size_t)size + 1));
    FR_LEAVE();
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
FR_PMPI(Alloc_mem);

FR_API int MPI_Free_mem(void *base)
{
    if (!fr_active)
        return FR_NEXT(Free_mem)(base);
    if (base == NULL) /* like free(NULL) */
        return MPI_SUCCESS;
    FR_ENTER();
    void *known = fr_u64map_del(&blocks, fr_key_ptr(base));
    FR_LEAVE();
    if (!known)
        return fr_comm_raise(MPI_COMM_WORLD, "MPI_Free_mem",
                             fr_errorf(FR_ERR_BASE, "MPI_Free_mem(%p): this address was not "
                                                    "returned by MPI_Alloc_mem", base));
    free(base);
    return MPI_SUCCESS;
}
FR_PMPI(Free_mem);
