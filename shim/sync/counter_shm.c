/* counter_shm.c - the owner's view of a counter whose bumps arrive in three places: node peers
 * store theirs in lanes of their own (counters in low slots) or add them to the counter's word,
 * both in this process's shared state block (shm_counter.h); everyone else (and a full word)
 * sends BUMP packets, counted in fr_counter.value. A sync-object request completes on their sum.
 *
 * Nobody tells the owner about a bump in the word or a lane, so a counter with armed requests is
 * on the window's watch list, and every progress pass (fr_counters_poll) reads them with acquire
 * and serves it: the waits that run progress (fr_wait_until, the request hooks) spin on that
 * read briefly, then yield the core. A counter without armed requests is not polled: its bumps
 * simply wait in the word for the next MPI_Start or MPIX_Win_sync_read. */
#include "counters.h"
#include "node/shm_counter.h"
#include "transport/shm_state.h"

int fr_counter_slot_shared(size_t slot) { return slot < FR_SHM_COUNTERS; }

/* The bumps of c's generation in its lanes: only those of members that set their bit (acquire: a
 * lane is read after the bit that announced it; a member writes no lane before its bit). */
static uint64_t lanes_sum(const fr_counter *c)
{
    uint64_t sum = 0;
    for (AO_t mask = AO_load_acquire(c->lane_mask); mask; mask &= mask - 1)
        sum += fr_shm_lane_count(&c->lanes[__builtin_ctzll(mask)], c->gen);
    return sum;
}

void fr_counter_open(fr_win *w, fr_counter *c, uint32_t slot)
{
    fr_shm_state *s = w->state;
    c->word = fr_shm_state_counter(s, slot);
    c->taken = 0;
    c->lanes = NULL;
    if (!c->word)
        return;
    if (slot < s->lane_slots) {
        c->lanes = fr_shm_state_lane_row(s, slot);
        c->lane_mask = fr_shm_state_lane_mask(s);
        /* Nobody bumps the counter before this: what lanes hold for its generation already was
         * left by an earlier counter of the slot (shm_counter.h, "lanes"). */
        c->lane_base = lanes_sum(c);
    }
    fr_shm_counter_set(c->word, c->gen);
}

void fr_counters_state_made(fr_win *w)
{
    struct fr_counters *t = w->counters;
    for (size_t s = 0; t && s < t->n; s++) {
        fr_counter *c = &t->c[s];
        if (c->live && !c->word) {
            fr_counter_open(w, c, (uint32_t)s);
            fr_counter_watch(w, c); /* armed requests now wait on the word too */
        }
    }
}

void fr_counter_close(fr_win *w, fr_counter *c)
{
    if (c->word) /* generation 0: bumps to it are refused, in the word and in lanes */
        fr_shm_counter_set(c->word, 0);
    c->word = NULL;
    c->lanes = NULL;
}

uint64_t fr_counter_value(const fr_counter *c)
{
    uint64_t v = c->value + (c->word ? fr_shm_counter_load(c->word) - c->taken : 0);
    return c->lanes ? v + lanes_sum(c) - c->lane_base : v;
}

void fr_counter_take(fr_counter *c, uint64_t n)
{
    /* The private part first: it costs no atomic. */
    uint64_t own = n < c->value ? n : c->value;
    c->value -= own;
    n -= own;
    if (n == 0)
        return;
    /* Then the word's, which must be given back there in the end; the rest is the lanes'. */
    uint64_t in_word = c->word ? fr_shm_counter_load(c->word) - c->taken : 0;
    uint64_t from_word = n < in_word ? n : in_word;
    c->lane_base += n - from_word;
    /* Remembered, not written: the bumpers keep the word's line to themselves. */
    c->taken += (uint32_t)from_word;
    if (c->taken >= FR_SHM_TAKE_BATCH) {
        fr_shm_counter_take(c->word, c->taken);
        c->taken = 0;
    }
}

void fr_counter_watch(fr_win *w, fr_counter *c)
{
    struct fr_counters *t = w->counters;
    int want = c->word && c->head;
    if (want && !c->watch_at) {
        fr_grow(&t->watch, &t->cap_watch, t->nwatch + 1, sizeof *t->watch);
        t->watch[t->nwatch++] = (uint32_t)(c - t->c);
        c->watch_at = t->nwatch;
    } else if (!want && c->watch_at) {
        size_t at = c->watch_at - 1;
        uint32_t last = t->watch[--t->nwatch];
        t->watch[at] = last; /* the last entry takes its place */
        t->c[last].watch_at = at + 1;
        c->watch_at = 0;
    }
}

int fr_counters_poll(fr_win *w)
{
    struct fr_counters *t = w->counters;
    if (!t || t->nwatch == 0)
        return 0;
    int events = 0;
    /* Backwards: serving may take the current entry off (the last one moves into its place). */
    for (size_t i = t->nwatch; i-- > 0;) {
        if (i >= t->nwatch)
            continue;
        fr_counter *c = &t->c[t->watch[i]];
        if (c->head && fr_counter_value(c) >= (uint64_t)c->head->count) {
            fr_counter_serve(w, c);
            events++;
        }
    }
    return events;
}
