/* splitmix.h - the random numbers of the randomized tests (random/, fuzz/): splitmix64
 * (Steele, Lea, Flood), small, fast and good enough, and the same sequence on every rank and
 * machine for a seed, which is what makes a failing seed reproducible. */
#ifndef FLEXRMA_TESTS_SPLITMIX_H
#define FLEXRMA_TESTS_SPLITMIX_H

#include <stdint.h>

/* The next number of the stream whose state is *s. */
static inline uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
