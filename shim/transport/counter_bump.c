/* counter_bump.c - where a counter bump goes: straight into the owner's shared state block (a
 * store into my lane there, or an atomic on the counter's word), or as a BUMP packet behind the
 * operations it follows (sync_counter.c). "Atomic bump" below means either shared way.
 *
 * The rule: no process may observe a bump before the data of the operations it covers. A BUMP
 * packet keeps that by itself (the owner applies it once its prefix of my operations is
 * complete). An atomic bump is applied the moment it is made, so it is allowed only when every
 * operation I issued to the owner is already known complete there (fr_peer_settled):
 *
 *     p->pending == 0               nothing of mine to it is in flight (data messages, batches
 *                                   waiting for ring space), and
 *     p->remote_upto >= p->ops_sent my operations 1..ops_sent to it are complete in its window
 *                                   (learned from an UNLOCK_ACK or BUMP_ACK)
 *
 * and its state block is mapped here, with a word for the counter's slot. Operations that travel
 * through the ring are not complete at the target before it ran them, so today a bump right
 * after eager puts still goes as a packet, in order; an operation the data path completes at
 * issue (a direct copy into mapped window memory) must simply not count in ops_sent beyond
 * remote_upto, and bumps after it take the atomic path without any change here.
 *
 * Issuing operations never settles a peer that is not settled: it can only add numbered
 * operations or pending sends. So a caller with operations to issue first asks
 * fr_bump_may_go_direct: when no, the bump travels in the operations' batch (one message, as
 * before the shared state block existed); when yes, it issues them alone and then tries
 * fr_bump_direct, which checks again (a numbered operation falls back to a packet).
 *
 * Ordering of the atomic path: the covered data is in the owner's memory before the bump, either
 * written by the owner itself before its acknowledgement reached me (ring or message: acquire on
 * my side), or copied by me; the bump is a release (shm_counter.h), and the owner reads the
 * counter with acquire. Bumps of one origin may therefore be observed out of the order they were
 * made (an atomic one before an earlier packet still in the ring): harmless, since the data of
 * both is complete by then and a counter only counts. */
#include "counter_bump.h"
#include "node/shm_counter.h"
#include "shm_state.h"
#include "transport.h"

#include <stdio.h>

int fr_peer_settled(const fr_peer *p) { return p->pending == 0 && p->remote_upto >= p->ops_sent; }

/* A first bump attaches to a node peer's ring and state block (tp_shm.c); if that fails, the bump
 * goes as a packet, whose flush reports the error. */
static volatile AO_t *word_of(fr_win *w, int target, uint64_t key)
{
    if (fr_chan_attach(w, target) != MPI_SUCCESS)
        return NULL;
    return fr_shm_state_counter(w->peers[target].state, fr_counter_key_slot(key));
}

int fr_bump_may_go_direct(fr_win *w, int target, uint64_t key)
{
    return word_of(w, target, key) && fr_peer_settled(&w->peers[target]);
}

/* My lane for the counter slot of `key` at target, if my member id and the slot have one; before
 * my first lane bump there, my bit in its lane mask, so that the owner reads my lanes (the atomic
 * OR is a full barrier: the bit is visible before any lane store of mine). The mask is read, not
 * remembered: its line changes only when a member joins, so the load hits, and nothing here can
 * go stale when the window's membership changes. */
static volatile AO_t *my_lane(fr_win *w, int target, uint64_t key)
{
    fr_shm_state *s = w->peers[target].state;
    uint32_t me = w->peers[w->rank].member_id;
    volatile AO_t *lane = fr_shm_state_lane(s, fr_counter_key_slot(key), me);
    AO_t bit = (AO_t)1 << (me % 64);
    if (lane && !(AO_load(fr_shm_state_lane_mask(s)) & bit))
        AO_or_full(fr_shm_state_lane_mask(s), bit);
    return lane;
}

/* What I last stored in my lane for that slot. Kept here, as the lane's only writer knows it, so
 * that a bump only stores; read from the lane once (a window's first bump there, or after its
 * membership changed: the table follows the target's member id, never its rank). */
static uint64_t *lane_last(fr_peer *p, uint32_t slot, const volatile AO_t *lane)
{
    if (!p->lane_last)
        p->lane_last = fr_xmalloc(FR_SHM_LANE_SLOTS * sizeof *p->lane_last);
    if (p->lane_last_of != p->member_id + 1) {
        for (uint32_t i = 0; i < FR_SHM_LANE_SLOTS; i++)
            p->lane_last[i] = UINT64_MAX;
        p->lane_last_of = p->member_id + 1;
    }
    if (p->lane_last[slot] == UINT64_MAX)
        p->lane_last[slot] = AO_load(lane);
    return &p->lane_last[slot];
}

/* In my lane if I have one there, else with the compare-and-swap on the word (also when my lane
 * is full). */
static fr_shm_bump bump_shared(fr_win *w, int target, uint64_t key, volatile AO_t *word)
{
    fr_peer *p = &w->peers[target];
    uint32_t gen = fr_counter_key_gen(key);
    volatile AO_t *lane = my_lane(w, target, key);
    if (lane) {
        fr_shm_bump b = fr_shm_lane_bump(lane, word, gen,
                                         lane_last(p, fr_counter_key_slot(key), lane));
        if (b != FR_SHM_FULL) {
            w->st.bumps_lane += b == FR_SHM_BUMPED;
            return b;
        }
    }
    return fr_shm_counter_bump(word, gen, &p->bump_guess);
}

fr_bump_way fr_bump_direct(fr_win *w, int target, uint64_t key)
{
    volatile AO_t *word = word_of(w, target, key);
    if (!word || !fr_peer_settled(&w->peers[target]))
        return FR_BUMP_PACKET;
    switch (bump_shared(w, target, key, word)) {
    case FR_SHM_BUMPED:
        w->st.bumps_shm++;
        return FR_BUMP_APPLIED;
    case FR_SHM_GONE:
        /* What the owner reports for a BUMP packet to a freed counter; here I am the one who
         * knows. */
        w->st.bumps_gone++;
        fprintf(stderr, "flexrma: rank %d: dropped a counter bump to rank %d: the counter was "
                        "freed by its owner\n", w->rank, target);
        return FR_BUMP_GONE;
    case FR_SHM_FULL:
        break;
    }
    return FR_BUMP_PACKET; /* the owner counts it in its private 64-bit part */
}

int fr_bump_gone_error(int target)
{
    return fr_errorf(FR_ERR_COUNTER, "the counter of rank %d was freed: the bump was dropped",
                     target);
}
