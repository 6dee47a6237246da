/* alloc_mem.h - memory flexrma hands out: the blocks of MPI_Alloc_mem (alloc_mem.c) and the
 * memory of windows made by MPI_Win_allocate (win_create.c). */
#ifndef FR_ALLOC_MEM_H
#define FR_ALLOC_MEM_H

#include "core/fr.h"

typedef enum { FR_BLOCK_NONE, FR_BLOCK_HEAP, FR_BLOCK_SEG } fr_block_kind;

/* A block of size bytes (a zero-byte request still gets a distinct one), at least cache-line
 * aligned. Unless FLEXRMA_TRANSPORT=am or !shareable, a segment node peers can map, so that
 * windows over it are reached by direct copies; where no segment can be had, "auto" quietly
 * uses ordinary memory and "shm" fails. */
int fr_block_alloc(MPI_Aint size, int shareable, void **p, fr_block_kind *kind);
int fr_block_free(void *p, fr_block_kind kind);

#endif
