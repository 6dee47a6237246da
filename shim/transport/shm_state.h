/* shm_state.h - the per-window shared state block of a member: what its node peers may read and
 * change in its place without sending it anything (issue 3, item 3).
 *
 * Each member of a window with node peers owns one block, in a segment of its own (shm_seg.h),
 * published with its packet-ring segment at channel creation (tp_shm.c, chan_info) and mapped
 * by every node peer that reaches it through a ring (fr_peer.state), when it attaches to that
 * ring (at creation, or on first use: fr_chan_attach). A segment of its own rather
 * than a region of the ring segment, because the two live differently: the rings belong to the
 * channel, which ext/dynwin re-creates when membership changes, while the counters in the block
 * must keep their values for the window's whole life. The block is made once (the first
 * fr_chan_create of the window) and freed with the window; a re-created channel publishes the
 * same block again.
 *
 * Layout (version 2), all offsets from the start of the block:
 *   fr_shm_state  the header below, one cache line, written before publication, read-only after
 *   counters      ncounters words (AO_t) at counters_off, indexed by counter slot (shm_counter.h)
 *   lanes         at lanes_off, in a cache line of its own, lane_mask: bit m set once the member
 *                 whose member_id is m wrote a lane of this block (origins set their bit,
 *                 atomically, before their first lane bump); then, from the next cache line, the
 *                 lanes: lane_slots rows of nlanes words, row = counter slot, column = the
 *                 bumper's member_id (shm_counter.h, "lanes"). A row's lanes share lines, so the
 *                 owner reads a counter's few lanes in one or two line transfers.
 * Extending: new fields go in cache lines of their own (the lanes went after the counters),
 * with their offsets in new header fields (taken from `reserved`); header_bytes, counters_off
 * and lanes_off tell a mapper where things are, and a mapper refuses a block whose magic or
 * version it does not know (its owner is then reached by packets, as a peer on another node
 * would be). Only the owner formats; peers only write the words their fields' comments allow
 * (atomics on counter words and the lane mask, plain stores into their own lanes).
 *
 * Callers hold the engine lock (FR_ENTER); nothing here locks. */
#ifndef FR_SHM_STATE_H
#define FR_SHM_STATE_H

#include "node/shm_map.h"
#include "win/win.h"

#include <atomic_ops.h>

#define FR_SHM_STATE_MAGIC 0x6574617453616d72ull /* "rmaState" */
#define FR_SHM_STATE_VERSION 2u
/* Counters of one owner that live in shared memory; slots beyond keep the packet path. Dense
 * words (8 bytes each: 32 KiB): distinct counters of one owner may share a cache line, which
 * only costs when several of them are bumped at once; a line per counter would cost 256 KiB. */
#define FR_SHM_COUNTERS 4096u
/* Lanes: counters in slots below FR_SHM_LANE_SLOTS, bumped by members whose member_id is below
 * FR_SHM_LANES (one bit of lane_mask each); other bumps take the counter's word. 32 KiB. */
#define FR_SHM_LANE_SLOTS 64u
#define FR_SHM_LANES 64u

typedef struct fr_shm_state {
    uint64_t magic;        /* FR_SHM_STATE_MAGIC */
    uint32_t version;      /* FR_SHM_STATE_VERSION */
    uint32_t header_bytes; /* sizeof(fr_shm_state) of the owner */
    uint32_t ncounters;    /* words in the counter table */
    uint32_t counters_off; /* byte offset of the table, a multiple of 64 */
    uint32_t lanes_off;    /* byte offset of lane_mask, a multiple of 64 */
    uint32_t lane_slots;   /* rows: counter slots 0..lane_slots-1 may have lanes */
    uint32_t nlanes;       /* columns: member ids 0..nlanes-1 may own a lane */
    uint32_t reserved[7];  /* for the offsets of later fields; 0 */
} fr_shm_state;

/* My block for w (w->state), made once; FR_ERR_SHM/FR_ERR_NO_MEM with nothing made (the window
 * then works without it: every bump to me travels as a packet). */
int fr_shm_state_create(fr_win *w);
/* Free my block (MPI_Win_free). Peers' mappings keep their pages until they unmap. */
void fr_shm_state_free(fr_win *w);
/* Describe my block for publication (ref->serial 0: none). */
void fr_shm_state_ref(const fr_win *w, fr_seg_ref *ref);
/* Map the block `ref` of process pp and check its header; *out is NULL (and the result
 * MPI_SUCCESS) when ref names none, FR_ERR_SHM when it cannot be mapped or is not a block. */
int fr_shm_state_map(fr_peer_proc *pp, const fr_seg_ref *ref, fr_shm_state **out);
/* Release a mapping made by fr_shm_state_map. */
void fr_shm_state_unmap(fr_peer_proc *pp, uint64_t serial);

/* The counter word of slot in block s, or NULL when s is NULL or the slot is beyond its table. */
static inline volatile AO_t *fr_shm_state_counter(fr_shm_state *s, uint32_t slot)
{
    if (!s || slot >= s->ncounters)
        return NULL;
    return (volatile AO_t *)((unsigned char *)s + s->counters_off) + slot;
}

/* The lane area's two parts in block s: the mask, then the rows. */
static inline volatile AO_t *fr_shm_state_lane_mask(fr_shm_state *s)
{
    return (volatile AO_t *)((unsigned char *)s + s->lanes_off);
}
static inline volatile AO_t *fr_shm_state_lane_row(fr_shm_state *s, uint32_t slot)
{
    return fr_shm_state_lane_mask(s) + 8 + (size_t)slot * s->nlanes;
}
/* Bytes of the lane area of a block with these dimensions. */
static inline size_t fr_shm_state_lane_bytes(uint32_t lane_slots, uint32_t nlanes)
{
    return 64 + (size_t)lane_slots * nlanes * sizeof(AO_t);
}

/* The lane of member `member` for counter slot `slot` in block s, or NULL when there is none
 * (no block, or a slot or member id beyond the lanes). */
static inline volatile AO_t *fr_shm_state_lane(fr_shm_state *s, uint32_t slot, uint32_t member)
{
    if (!s || slot >= s->lane_slots || member >= s->nlanes)
        return NULL;
    return fr_shm_state_lane_row(s, slot) + member;
}

#endif
