/* win_shared.h - where the parts of an MPI_Win_allocate_shared window's members lie in this
 * process (win_shared.c): for MPI_Win_shared_query, and for membership changes (ext/dynwin),
 * after which the members' parts may lie in several segments of the node.
 *
 * Each member's part lies in one segment (node/shm_seg.h), allocated by the process that made
 * it: the window's first member for the members that created the window together, the joiner
 * itself for a joiner. Every member maps every other member's segment, as long as the process
 * holding that segment still has it (it keeps it while its window lives). */
#ifndef FR_WIN_SHARED_H
#define FR_WIN_SHARED_H

#include "node/shm_seg.h"
#include "win/win.h"

/* Where a member's part lies: plain data, sent to the other members as bytes. */
typedef struct fr_shared_where {
    int64_t pid;     /* the process whose segment holds the part; 0: no segment (no memory) */
    int64_t offset;  /* of the part in the segment */
    fr_seg_ref seg;
} fr_shared_where;

typedef struct fr_shared fr_shared;

/* Where this process's part of w lies. */
void fr_shared_where_mine(const fr_win *w, fr_shared_where *out);
/* 1 if every process of comm is a node peer of this one (node/node_comm.h). Collective over
 * comm. */
int fr_shared_one_node(MPI_Comm comm);
/* The parts of the members all[0..n) (this process is all[me]) mapped here, into *out, without
 * changing w. Errors: FR_ERR_SHARED (a segment cannot be mapped: its process no longer holds
 * it), with nothing mapped. */
int fr_shared_map(const fr_win *w, const fr_shared_where *all, int n, int me, fr_shared **out);
/* Release what fr_shared_map made. */
void fr_shared_drop(fr_shared *s);
/* After w's member table was rebuilt for the members of s: s becomes w's, the mappings of the
 * former members are released, and node peers' parts are reached by direct copies. */
void fr_shared_adopt(fr_win *w, fr_shared *s);
/* At window free: release the mappings of other members' parts (not the window's own memory,
 * w->own_mem). */
void fr_shared_free(fr_win *w);

#endif
