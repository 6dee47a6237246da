/* alloc_mem.h - memory flexrma hands out: the blocks of MPI_Alloc_mem (alloc_mem.c) and the
 * memory of windows made by MPI_Win_allocate and MPI_Win_allocate_shared (fr_win_mem, win.h). */
#ifndef FR_ALLOC_MEM_H
#define FR_ALLOC_MEM_H

#include "win/win.h"

typedef enum {
    FR_BLOCK_NONE,
    FR_BLOCK_HEAP,  /* posix_memalign */
    FR_BLOCK_SEG,   /* a segment of this process (node/shm_seg.h) */
    FR_BLOCK_MAPPED /* a node peer's segment mapped here (windows only: fr_win_mem.owner) */
} fr_block_kind;

/* A block of size bytes (a zero-byte request still gets a distinct one), at least cache-line
 * aligned. Unless FLEXRMA_TRANSPORT=am or !shareable, a segment node peers can map, so that
 * windows over it are reached by direct copies; where no segment can be had, "auto" quietly
 * uses ordinary memory and "shm" fails. */
int fr_block_alloc(MPI_Aint size, int shareable, void **p, fr_block_kind *kind);
int fr_block_free(void *p, fr_block_kind kind);
/* Release what a window owns, whatever its kind; then m owns nothing. */
int fr_win_mem_free(fr_win_mem *m);

#endif
