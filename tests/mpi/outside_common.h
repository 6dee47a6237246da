/* outside_common.h - a member that stays out of MPI while the others work on its window
 * (t_empty_members.c, t_asked_gets.c), on top of common.h: it watches a word of an
 * MPI_Win_allocate_shared window with plain loads, sleeping between looks, until the others
 * store what it waits for. Had their work needed its progress, the word never comes, and the
 * watcher reports it after a time limit. Linked with the internal library for fr_opt. */
#ifndef FLEXRMA_TESTS_OUTSIDE_COMMON_H
#define FLEXRMA_TESTS_OUTSIDE_COMMON_H

#include "common.h"
#include "core/fr.h"
#include "node/node_comm.h"

#include <time.h>

/* The node's communicator, and this process's rank and the size there. */
static inline MPI_Comm outside_node(int *nrank, int *nsize)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, nrank);
    MPI_Comm_size(node, nsize);
    return node;
}

/* Do node peers reach each other's state pages here (not FLEXRMA_TRANSPORT=am or
 * FLEXRMA_DIRECT=0, not across simulated nodes)? Elsewhere requests travel as messages, and
 * their targets must serve them, as MPI allows. */
static inline int outside_direct(MPI_Comm node, int nsize)
{
    return fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct && nsize > 1 &&
           fr_node_all_peers(node);
}

/* Collective over node: the int that node rank 0 exposes in *wordwin, 0 at first. */
static inline int *outside_word(MPI_Comm node, int nrank, MPI_Win *wordwin)
{
    int *word;
    MPI_Win_allocate_shared(nrank == 0 ? (MPI_Aint)sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                            node, &word, wordwin);
    if (nrank != 0) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(*wordwin, 0, &sz, &du, &word);
    } else {
        *word = 0;
    }
    MPI_Barrier(node);
    return word;
}

static inline void outside_nap(void)
{
    struct timespec ts = {0, 200000}; /* 0.2 ms: the watcher leaves the core to the others */
    nanosleep(&ts, NULL);
}

/* Watch *word with plain loads until it holds want (at_least: want or more), at most limit_s
 * seconds; 1 if it did. */
static inline int outside_watch_until(volatile int *word, int want, int at_least, int limit_s)
{
    time_t until = time(NULL) + limit_s;
    for (;;) {
        int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (v == want || (at_least && v > want))
            return 1;
        if (time(NULL) > until)
            return 0;
        outside_nap();
    }
}

static inline int outside_watch(volatile int *word, int want, int limit_s)
{
    return outside_watch_until(word, want, 0, limit_s);
}

static inline int outside_watch_at_least(volatile int *word, int want, int limit_s)
{
    return outside_watch_until(word, want, 1, limit_s);
}

#endif
