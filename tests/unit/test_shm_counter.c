/* test_shm_counter.c - one synchronization counter word (shm_counter.h) in one process: a bump
 * checks the generation, a free slot and a reused slot refuse a stale generation, a full word
 * refuses (the bumper then sends a packet), also when the bumper's guess is at the limit, a
 * wrong guess still adds exactly one, the owner's take never borrows from the generation,
 * and bumper threads racing with an owner that consumes in rounds and frees and reallocates the
 * slot: every bump of the live generation is counted exactly once, none of a stale one. Run
 * with mpirun -np 1. */
#include "node/shm_counter.h"
#include "tap.h"

#include <mpi.h>

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

static uint32_t bumps_of(const volatile AO_t *w) { return fr_shm_counter_load(w); }
static uint32_t gen_of(const volatile AO_t *w) { return (uint32_t)(AO_load(w) >> 32); }

#define BASIC_CHECKS 17
static void test_basic(void)
{
    volatile AO_t word = 0; /* a free slot: a zero-filled block */
    uint32_t g = 0;         /* the bumper's guess */
    is_int(fr_shm_counter_bump(&word, 1, &g), FR_SHM_GONE, "free slot: a bump of generation 1 fails");
    is_int((long long)AO_load(&word), 0, "... and changes nothing");

    fr_shm_counter_set(&word, 7);
    is_int(fr_shm_counter_bump(&word, 7, &g), FR_SHM_BUMPED, "generation 7: bumped");
    is_int(fr_shm_counter_bump(&word, 7, &g), FR_SHM_BUMPED, "generation 7: bumped again");
    is_int(g, 2, "the guess follows the bumps");
    is_int(fr_shm_counter_bump(&word, 6, &g), FR_SHM_GONE, "generation 6 (stale) refused");
    is_int(bumps_of(&word), 2, "two bumps counted");
    uint32_t wrong = 40;
    is_int(fr_shm_counter_bump(&word, 7, &wrong), FR_SHM_BUMPED, "a wrong guess: still bumped");
    is_int(bumps_of(&word), 3, "... by exactly one");
    is_int(wrong, 3, "... and the guess corrected");
    fr_shm_counter_take(&word, 1);
    fr_shm_counter_take(&word, 2);
    is_int(bumps_of(&word), 0, "taken: none left");
    is_int(gen_of(&word), 7, "... and the generation is intact");

    fr_shm_counter_set(&word, 0); /* freed */
    fr_shm_counter_set(&word, 8); /* reallocated */
    is_int(fr_shm_counter_bump(&word, 7, &g), FR_SHM_GONE,
           "freed and reallocated: the old generation's bump refused");
    is_int(bumps_of(&word), 0, "... the new counter holds nothing");

    word = fr_shm_word(9, FR_SHM_BUMPS_MAX);
    is_int(fr_shm_counter_bump(&word, 9, &g), FR_SHM_FULL, "a full word refuses the bump");
    g = FR_SHM_BUMPS_MAX;
    is_int(fr_shm_counter_bump(&word, 9, &g), FR_SHM_FULL, "... also to a guess at the limit");
    is_int((long long)gen_of(&word), 9, "... and cannot carry into the generation");
}

/* The race: BUMPERS threads make PER successful bumps each, as fast as they can, starting on
 * generation 1, while the main thread, the owner, consumes in rounds of ROUND. Once it consumed
 * a quarter of them, the owner frees the slot and reallocates it (generation 2), with bumpers
 * still bumping generation 1: they get FR_SHM_GONE and switch to generation 2 once the owner
 * publishes it. Each bumper counts what it added per generation. Every bump of generation 2 must
 * be consumed exactly once; of generation 1, the owner consumed at most what was added (bumps
 * that landed after its last round are discarded with the freed counter). Bumpers wait while
 * AHEAD bumps are unconsumed, so that both generations see bumping and consuming at once. */
#define BUMPERS 3
#define PER 200000
#define ROUND 7
#define AHEAD 64 /* unconsumed bumps at which bumpers wait for the owner */

typedef struct race {
    volatile AO_t word;
    AO_t gen;      /* the generation to use after a refusal (published by the owner) */
    AO_t finished; /* bumpers done */
    long long added[BUMPERS][2];
} race;

typedef struct bumper {
    race *r;
    int id;
} bumper;

static void *bump_loop(void *arg)
{
    bumper *b = arg;
    race *r = b->r;
    uint32_t gen = 1, guess = 0;
    for (int i = 0; i < PER;) {
        while (bumps_of(&r->word) >= AHEAD)
            sched_yield(); /* the owner's turn: keeps both generations busy */
        switch (fr_shm_counter_bump(&r->word, gen, &guess)) {
        case FR_SHM_BUMPED:
            r->added[b->id][gen - 1]++;
            i++;
            break;
        case FR_SHM_GONE:
            gen = (uint32_t)AO_load_acquire(&r->gen); /* still 1 until the owner reallocated */
            break;
        case FR_SHM_FULL:
            break;
        }
    }
    AO_fetch_and_add1_release(&r->finished);
    return NULL;
}

#define RACE_CHECKS 5
static void test_race(void)
{
    static race r;
    const long long total = (long long)BUMPERS * PER;
    fr_shm_counter_set(&r.word, 1);
    AO_store_release(&r.gen, 1);
    pthread_t t[BUMPERS];
    bumper b[BUMPERS];
    for (int i = 0; i < BUMPERS; i++) {
        b[i] = (bumper){&r, i};
        pthread_create(&t[i], NULL, bump_loop, &b[i]);
    }
    long long consumed[2] = {0, 0};
    while (consumed[0] < total / 4) {
        if (bumps_of(&r.word) >= ROUND) {
            fr_shm_counter_take(&r.word, ROUND);
            consumed[0] += ROUND;
        }
    }
    fr_shm_counter_set(&r.word, 0); /* freed: what is in the word is discarded */
    fr_shm_counter_set(&r.word, 2); /* the slot reused by a new counter */
    AO_store_release(&r.gen, 2);
    int stale_seen = gen_of(&r.word) == 2;
    for (;;) {
        int done = AO_load_acquire(&r.finished) == BUMPERS; /* before the load below */
        uint32_t have = bumps_of(&r.word);
        if (have >= ROUND) {
            fr_shm_counter_take(&r.word, ROUND);
            consumed[1] += ROUND;
        } else if (done) {
            fr_shm_counter_take(&r.word, have); /* the last, short round */
            consumed[1] += have;
            break;
        }
    }
    for (int i = 0; i < BUMPERS; i++)
        pthread_join(t[i], NULL);
    long long added[2] = {0, 0};
    for (int i = 0; i < BUMPERS; i++) {
        added[0] += r.added[i][0];
        added[1] += r.added[i][1];
    }
    is_int(added[0] + added[1], total, "the bumpers made every bump");
    ok(consumed[0] <= added[0], "generation 1: consumed %lld of the %lld added (the rest was "
                                "discarded with the counter)", consumed[0], added[0]);
    is_int(consumed[1], added[1], "generation 2: every bump consumed exactly once");
    ok(stale_seen && gen_of(&r.word) == 2 && added[1] > 0,
       "the reused slot keeps generation 2, and was bumped (%lld)", added[1]);
    is_int(bumps_of(&r.word), 0, "nothing left over");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tap_plan(BASIC_CHECKS + RACE_CHECKS);
    test_basic();
    test_race();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
