// SPDX-License-Identifier: BSD-3-Clause
// A small fast PRNG (xorshift64) for the unit tests' workloads: each thread
// of a torture test steps its own state, so a run is repeatable from its
// seeds and no thread waits on a shared generator.
#ifndef SEGCACHED_TEST_RAND_H
#define SEGCACHED_TEST_RAND_H

#include <cstdint>

inline uint64_t
next_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif
