/* shm_counter.h - one synchronization counter in its owner's shared state block (shm_state.h):
 * bumped by node peers with an atomic, observed and consumed by the owner.
 *
 * The word (64 bits): generation in the upper 32, unconsumed bumps in the lower 32.
 *   generation  the counter's generation (fr_sync_wire.gen, never 0) while it is allocated, 0
 *               while the slot is free. Only the owner changes it (allocation, free).
 *   bumps       added by bumpers (+1 each). The owner counts what it consumed privately and
 *               subtracts that from the word only now and then (FR_SHM_TAKE_BATCH): each write
 *               of the owner's would pull the line away from the bumpers, one more cache-line
 *               transfer per round of a producer/consumer pair.
 * Generation and bumps share one word so that a bumper checks the generation and adds in a
 * single compare-and-swap: a bump to a freed counter can never land in a reused slot (the
 * generation differs), and the bumper learns at once that its counter is gone. A separate
 * generation word could change between the check and the add.
 *
 * Bumps above FR_SHM_BUMPS_MAX are refused (the bumper sends a packet instead, which the owner
 * counts in its private 64-bit part): the lower half can never carry into the generation.
 *
 * Memory ordering: a bump is a release (the covered data, written before, is visible to whoever
 * sees the bump); the owner reads with acquire (it sees the data of every bump it counts). */
#ifndef FR_SHM_COUNTER_H
#define FR_SHM_COUNTER_H

#include <atomic_ops.h>
#include <stdint.h>

#define FR_SHM_BUMPS_MAX 0x7fffffffu
/* The owner gives back what it consumed once this much has gathered: far below FR_SHM_BUMPS_MAX,
 * so consumed bumps alone never make the word full. */
#define FR_SHM_TAKE_BATCH 0x10000000u

typedef enum fr_shm_bump {
    FR_SHM_BUMPED, /* added */
    FR_SHM_GONE,   /* the counter of that generation is not allocated: nothing added */
    FR_SHM_FULL    /* FR_SHM_BUMPS_MAX unconsumed: nothing added, use a packet */
} fr_shm_bump;

static inline AO_t fr_shm_word(uint32_t gen, uint32_t bumps)
{
    return (AO_t)gen << 32 | bumps;
}

/* Add one bump to the counter of generation gen. *guess is the bumps the caller expects to find
 * (what its last bump left, kept by the caller; any value is correct): a compare-and-swap that
 * starts from it takes the line exclusive in one transfer, where loading first would fetch it
 * shared and then need a second transfer to own it. On success *guess is what this bump left. */
static inline fr_shm_bump fr_shm_counter_bump(volatile AO_t *word, uint32_t gen, uint32_t *guess)
{
    /* A guess at the limit could succeed past it: start from 0 there instead. */
    AO_t old = fr_shm_word(gen, *guess < FR_SHM_BUMPS_MAX ? *guess : 0);
    for (;;) {
        /* release: the covered operations' data (stored before) is visible before the bump. */
        AO_t seen = AO_fetch_compare_and_swap_release(word, old, old + 1);
        if (seen == old) {
            *guess = (uint32_t)old + 1;
            return FR_SHM_BUMPED;
        }
        old = seen; /* a wrong guess, another bump or the owner: check the real value */
        if ((uint32_t)(old >> 32) != gen)
            return FR_SHM_GONE;
        if ((uint32_t)old >= FR_SHM_BUMPS_MAX)
            return FR_SHM_FULL;
    }
}

/* The owner: bumps in the word, consumed or not (the owner subtracts what it consumed). */
static inline uint32_t fr_shm_counter_load(const volatile AO_t *word)
{
    /* acquire: the data of every counted bump is visible after this load (pairs with the
     * bumpers' release). */
    return (uint32_t)AO_load_acquire(word);
}

/* The owner gives back n consumed bumps (n <= what fr_shm_counter_load returned): only bumpers
 * change the word meanwhile, and they only add, so the subtraction never borrows from the
 * generation. */
static inline void fr_shm_counter_take(volatile AO_t *word, uint32_t n)
{
    /* no barrier: the acquire load that counted these bumps already ordered their data. */
    AO_fetch_and_add(word, (AO_t)0 - n);
}

/* The owner: (re)start the slot as a counter of generation gen, or free it (gen 0). Bumps that
 * were in the word are discarded with the counter. */
static inline void fr_shm_counter_set(volatile AO_t *word, uint32_t gen)
{
    /* release: a bumper that sees the new generation sees the slot ready (nothing else to
     * order; kept for symmetry with the owner's earlier plain accesses to the counter). */
    AO_store_release(word, fr_shm_word(gen, 0));
}

/* ---- lanes: one writer per word, no atomic ----
 * A lane word holds the bumps of one origin into one counter slot: the generation of the counter
 * they were for in the upper 32 bits, their number in the lower 32, laid out as the counter word.
 * Its only writer is that origin, which keeps the word it last stored, so a bump is one plain
 * store, not a compare-and-swap: the locked instruction waits until it owns the line the owner
 * keeps polling (and, being a full barrier, until the data stored before it has left too), where
 * a store leaves at once through the store buffer. Loading the lane first would not do either:
 * the load fetches the line shared, the store then needs a second transfer to own it. In a
 * notified halo exchange the compare-and-swap was a third of a step (issue 34).
 *
 * The generation takes the place of the compare-and-swap's check: the bumper first reads the
 * counter word (whose line only the owner writes once bumps go to lanes, so the load hits) and
 * refuses a bump to a freed counter as before. Should the owner free the counter between that
 * load and the store, the bump lands with the old generation, which the slot's next counter does
 * not count: dropped, as the compare-and-swap would have dropped it, only unreported. The owner
 * adds the lanes of its generation to the word. Lanes are never reset; a counter whose
 * generation a lane already carries (a counter table dropped whole restarts at generation 1)
 * starts from what it holds. */

/* A lane's bumps stop at this count (the lower half must not carry): then the word is bumped. */
#define FR_SHM_LANE_MAX 0xffffffffu

/* The origin bumps the counter of generation gen, whose word is `word`, in its lane. *last is
 * what it last stored there (or what the lane held when it first looked); updated. The caller
 * holds the engine lock, so no thread of this process writes the lane at the same time. */
static inline fr_shm_bump fr_shm_lane_bump(volatile AO_t *lane, const volatile AO_t *word,
                                           uint32_t gen, uint64_t *last)
{
    if ((uint32_t)(AO_load(word) >> 32) != gen)
        return FR_SHM_GONE;
    if ((uint32_t)(*last >> 32) != gen) /* my first bump of this counter: its count starts */
        *last = fr_shm_word(gen, 0);
    if ((uint32_t)*last == FR_SHM_LANE_MAX)
        return FR_SHM_FULL;
    /* release: the covered operations' data is visible before the bump (pairs with the owner's
     * acquire in fr_shm_lane_count). */
    AO_store_release(lane, (AO_t)++*last);
    return FR_SHM_BUMPED;
}

/* The owner: the bumps a lane holds for the counter of generation gen. */
static inline uint32_t fr_shm_lane_count(const volatile AO_t *lane, uint32_t gen)
{
    AO_t v = AO_load_acquire(lane);
    return (uint32_t)(v >> 32) == gen ? (uint32_t)v : 0;
}

#endif
