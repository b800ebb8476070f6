/* rng.h - a small deterministic generator for the unit tests' random
 * worlds (splitmix64): the same seed gives the same world everywhere. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_TESTS_RNG_H
#define LOOM_TESTS_RNG_H

#include <stdint.h>

static uint64_t rng_state; /* the seed: set it before a world */

static inline uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline int pick(int lo, int hi) /* uniform in [lo, hi] */
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

#endif
