/* alloc_mem.c - MPI_Alloc_mem and MPI_Free_mem, and the blocks they share with MPI_Win_allocate.
 *
 * flexrma hands out the memory itself and remembers every block, so MPI_Free_mem of memory that
 * did not come from MPI_Alloc_mem is reported (MPI_ERR_BASE) instead of corrupting the heap.
 * Unless FLEXRMA_TRANSPORT=am, each block is a segment its node peers can map (shm_seg.h), so
 * windows over it can later be reached by direct copies; where no segment can be had, "auto"
 * quietly uses ordinary memory (peers then reach it by cross-memory attach or messages) and
 * "shm" reports the failure. Blocks are at least cache-line aligned (segments: page aligned). */
#include "alloc_mem.h"
#include "core/next.h"
#include "node/shm_map.h"
#include "core/u64map.h"

#include <stdlib.h>

static fr_u64map blocks; /* address -> fr_block_kind, of MPI_Alloc_mem's blocks */

int fr_block_alloc(MPI_Aint size, int shareable, void **p, fr_block_kind *kind)
{
    *kind = FR_BLOCK_HEAP;
    int rc = MPI_SUCCESS;
    if (shareable && fr_opt.transport != FR_TRANSPORT_AM) {
        rc = fr_seg_alloc((size_t)size, p); /* a zero-byte request gets a page of its own */
        if (rc == MPI_SUCCESS)
            *kind = FR_BLOCK_SEG;
        else if (fr_opt.transport == FR_TRANSPORT_AUTO)
            rc = MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS && *kind == FR_BLOCK_HEAP &&
        posix_memalign(p, 64, size ? (size_t)size : 1))
        rc = fr_errorf(FR_ERR_NO_MEM, "cannot allocate %ld bytes", (long)size);
    return rc;
}

int fr_block_free(void *p, fr_block_kind kind)
{
    if (kind == FR_BLOCK_SEG)
        return fr_seg_free(p);
    free(p);
    return MPI_SUCCESS;
}

int fr_win_mem_free(fr_win_mem *m)
{
    int rc = MPI_SUCCESS;
    if (m->kind == FR_BLOCK_MAPPED) {
        fr_seg_unmap_remote(m->owner, m->serial);
        fr_peer_proc_release(m->owner);
    } else if (m->addr) {
        rc = fr_block_free(m->addr, (fr_block_kind)m->kind);
    }
    *m = (fr_win_mem){NULL, FR_BLOCK_NONE, NULL, 0};
    return rc;
}

FR_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    if (!fr_active)
        return FR_NEXT(Alloc_mem)(size, info, baseptr);
    if (size < 0)
        return fr_comm_raise(MPI_COMM_WORLD, "MPI_Alloc_mem",
                             fr_errorf(FR_ERR_SIZE, "MPI_Alloc_mem of %ld bytes", (long)size));
    void *p = NULL;
    fr_block_kind kind;
    FR_ENTER();
    int rc = fr_block_alloc(size, 1, &p, &kind);
    if (rc == MPI_SUCCESS)
        fr_u64map_put(&blocks, fr_key_ptr(p), (void *)(uintptr_t)kind);
    FR_LEAVE();
    if (rc != MPI_SUCCESS)
        return fr_comm_raise(MPI_COMM_WORLD, "MPI_Alloc_mem", rc);
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
    fr_block_kind kind = (fr_block_kind)(uintptr_t)fr_u64map_del(&blocks, fr_key_ptr(base));
    int rc = kind != FR_BLOCK_NONE
                 ? fr_block_free(base, kind)
                 : fr_errorf(FR_ERR_BASE, "MPI_Free_mem(%p): this address was not returned by "
                                          "MPI_Alloc_mem", base);
    FR_LEAVE();
    return fr_comm_raise(MPI_COMM_WORLD, "MPI_Free_mem", rc);
}
FR_PMPI(Free_mem);
