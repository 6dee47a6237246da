/* direct_common.h - windows for the tests of single-copy access between node peers
 * (t_direct.c, t_fence_settled.c, t_adopt.c), on top of common.h. Linked with the internal
 * library: it sets fr_opt. */
#ifndef FLEXRMA_TESTS_DIRECT_COMMON_H
#define FLEXRMA_TESTS_DIRECT_COMMON_H

#include "common.h"
#include "core/fr.h"
#include "win/win.h"

/* Gets read by the origin (a copy, fr_win_stats.direct) or, asked through the ring and not
 * taken back, answered by the target through it (transport/direct.h, "Gets asked through the
 * ring"): each get that needs no message of the MPI library, counted once. */
static inline uint64_t direct_gets_read(MPI_Win win)
{
    const fr_win_stats *st = &fr_win_lookup(win)->st;
    return st->direct + st->gets_asked - st->gets_taken_back;
}

/* A zeroed window of n ints (disp_unit sizeof(int)) in MPI_Alloc_mem memory, which node peers
 * map, or malloc'd and not adopted (FLEXRMA_ADOPT=0), so node peers reach it only by
 * cross-memory attach (t_adopt checks adopted windows). */
static inline int *direct_window(int alloc_mem, size_t n, MPI_Win *win)
{
    size_t bytes = n * sizeof(int);
    int *base;
    if (alloc_mem)
        MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &base);
    else
        base = xmalloc(bytes);
    memset(base, 0, bytes);
    int adopt = fr_opt.adopt;
    fr_opt.adopt = 0;
    MPI_Win_create(base, (MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, win);
    fr_opt.adopt = adopt;
    return base;
}

static inline void direct_window_free(int alloc_mem, MPI_Win *win, int *base)
{
    MPI_Win_free(win);
    if (alloc_mem)
        MPI_Free_mem(base);
    else
        free(base);
}

#endif
