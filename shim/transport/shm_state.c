/* shm_state.c - the per-window shared state block (see shm_state.h): made, published, mapped. */
#include "shm_state.h"
#include "transport.h"
#include "node/shm_seg.h"

_Static_assert(sizeof(fr_shm_state) == 64, "the header is one cache line");
_Static_assert(sizeof(AO_t) == 8, "a counter word holds a 32-bit generation and 32-bit count");
_Static_assert(FR_SHM_LANES <= 64, "one bit of the lane mask per lane");

static size_t counters_end(void)
{
    return sizeof(fr_shm_state) + (size_t)FR_SHM_COUNTERS * sizeof(AO_t);
}

static size_t block_bytes(void)
{
    return counters_end() + fr_shm_state_lane_bytes(FR_SHM_LANE_SLOTS, FR_SHM_LANES);
}

int fr_shm_state_create(fr_win *w)
{
    if (w->state)
        return MPI_SUCCESS; /* a re-created channel publishes the same block */
    void *mem;
    int rc = fr_seg_alloc(block_bytes(), &mem);
    if (rc != MPI_SUCCESS)
        return rc;
    fr_shm_state *s = mem; /* zero-filled: every counter word reads "slot free" */
    s->magic = FR_SHM_STATE_MAGIC;
    s->version = FR_SHM_STATE_VERSION;
    s->header_bytes = sizeof *s;
    s->ncounters = FR_SHM_COUNTERS;
    s->counters_off = sizeof *s;
    s->lanes_off = (uint32_t)counters_end();
    s->lane_slots = FR_SHM_LANE_SLOTS;
    s->nlanes = FR_SHM_LANES;
    /* The header reaches peers through the allgather that publishes the segment (a collective
     * orders it), so no barrier is needed here. */
    w->state = s;
    fr_proto.state_made(w); /* counters made before the block (the window grew) get words */
    return MPI_SUCCESS;
}

void fr_shm_state_free(fr_win *w)
{
    if (!w->state)
        return;
    fr_seg_free(w->state);
    w->state = NULL;
}

void fr_shm_state_ref(const fr_win *w, fr_seg_ref *ref)
{
    if (!w->state || !fr_seg_lookup(w->state, 0, ref))
        *ref = (fr_seg_ref){0};
}

int fr_shm_state_map(fr_peer_proc *pp, const fr_seg_ref *ref, fr_shm_state **out)
{
    *out = NULL;
    if (ref->serial == 0)
        return MPI_SUCCESS;
    if (ref->offset > ref->size || ref->size - ref->offset < sizeof(fr_shm_state))
        return fr_errorf(FR_ERR_SHM, "its shared state segment is too small");
    void *base;
    int rc = fr_seg_map_remote(pp, ref, &base);
    if (rc != MPI_SUCCESS)
        return rc;
    fr_shm_state *s = (fr_shm_state *)((unsigned char *)base + ref->offset);
    uint64_t end = (uint64_t)s->counters_off + (uint64_t)s->ncounters * sizeof(AO_t);
    uint64_t lanes_end = (uint64_t)s->lanes_off + fr_shm_state_lane_bytes(s->lane_slots, s->nlanes);
    if (s->magic != FR_SHM_STATE_MAGIC || s->version != FR_SHM_STATE_VERSION ||
        s->counters_off < sizeof *s || s->counters_off % 64 || ref->offset + end > ref->size ||
        s->lanes_off < end || s->lanes_off % 64 || ref->offset + lanes_end > ref->size) {
        fr_seg_unmap_remote(pp, ref->serial);
        return fr_errorf(FR_ERR_SHM, "its shared state block has another layout (version %u)",
                         s->version);
    }
    *out = s;
    return MPI_SUCCESS;
}

void fr_shm_state_unmap(fr_peer_proc *pp, uint64_t serial) { fr_seg_unmap_remote(pp, serial); }
