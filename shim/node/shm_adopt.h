/* shm_adopt.h - a window's ordinary memory, shared in place with its node peers.
 *
 * Most MPI_Win_create windows live in malloc'd, posix_memalign'ed, mmap'ed or static memory,
 * which node peers cannot map: they reached it only by a system call per operation
 * (cross-memory attach) or by messages the target had to serve. Adopting the window moves its
 * whole pages into a borrowed segment (shm_seg.h: the same addresses, the contents kept), which
 * peers map and copy into as they do MPI_Alloc_mem memory, without the target. The part pages
 * at the window's two ends stay where they are: other data shares them, which may be pinned
 * for I/O when they would move back at MPI_Win_free (docs/architecture.md); they keep the
 * slower paths. Pinned pages never move in (page_hold.h, fr_hold_take).
 *
 * Only memory whose every page is provably ordinary: private anonymous memory, readable and
 * writable (the heap, anonymous mmaps, .bss, thread stacks), with nothing special about it: not
 * the main stack (it grows down), not locked (mlock), no huge pages of hugetlbfs, no
 * userfaultfd, no MADV_DONTFORK or MADV_WIPEONFORK of the program's. Anything else keeps
 * today's paths. Windows over the same pages share one adoption (counted); a window that
 * overlaps an adopted range only in part is not adopted. The pages go back to private memory
 * when the last window over them is freed, so free(), munmap() and fork() behave as without
 * flexrma; fork() while the window lives too (shm_seg.h).
 *
 * Other threads may store into the pages meanwhile, and the kernel for their system calls:
 * each chunk is held while it moves (page_hold.h), and memory is adopted only where holding
 * is possible. Pinned pages must not move (their device or the kernel would go on writing the
 * old page): where the kernel cannot refuse them (before Linux 6.8) nothing is adopted, unless
 * FLEXRMA_ADOPT=2 accepts that risk. FLEXRMA_ADOPT=0 turns adoption off.
 *
 * Callers hold the engine lock. */
#ifndef FR_SHM_ADOPT_H
#define FR_SHM_ADOPT_H

#include "shm_seg.h"

#include <stddef.h>

typedef struct fr_adopted {
    char *at;        /* first byte of the pages moved; NULL: nothing adopted */
    size_t bytes;    /* a page multiple */
    fr_seg_ref ref;  /* the borrowed segment, offset of `at` in it */
} fr_adopted;

/* Adopt the whole pages of [base, base + size) if there is at least one and all of them are
 * ordinary memory as above; *out says what moved (out->at NULL: nothing, and nothing changed).
 * Never fails its caller: memory that cannot move simply stays. */
void fr_adopt(void *base, size_t size, fr_adopted *out);
/* The window that adopted *a is gone: when no other window shares the pages, give them back
 * (private memory again, contents kept; left alone if the program unmapped them meanwhile). */
void fr_adopt_release(fr_adopted *a);
/* Ranges adopted now (tests, statistics). */
size_t fr_adopt_count(void);
/* Would fr_adopt move ordinary memory in this process: FLEXRMA_ADOPT on, stores can be held
 * (page_hold.h), and pinned pages are refused (Linux 6.8) unless FLEXRMA_ADOPT=2? If not, *why
 * (when given) says why. */
int fr_adopt_enabled(const char **why);
/* NULL, or why this process could not adopt the pages of a window that asked for it (no way
 * to hold stores while they move, page_hold.h): for the statistics. */
const char *fr_adopt_unavailable(void);

#endif
