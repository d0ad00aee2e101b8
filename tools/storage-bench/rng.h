/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Per-thread pseudo random numbers for the workload generator: wyrand (one
 * add and one 64x64->128 multiply per draw), so the generator costs little
 * next to the engine call it feeds and needs no shared state or locks.
 */
#ifndef SB_RNG_H
#define SB_RNG_H

#include <stdint.h>

static inline uint64_t
rng_next(uint64_t *state)
{
	*state += 0xa0761d6478bd642fULL;
	__uint128_t t = (__uint128_t)*state * (*state ^ 0xe7037ed1a0b428dbULL);
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* Uniform in [0, n) from 32 random bits, n <= 2^32 (Lemire's multiply-shift:
 * no division). */
static inline uint64_t
rng_below32(uint32_t bits, uint64_t n)
{
	return ((uint64_t)bits * n) >> 32;
}

/* Uniform double in [0, 1). */
static inline double
rng_unit(uint64_t r)
{
	return (double)(r >> 11) * 0x1p-53;
}

/* A distinct, well-mixed seed per thread from one user seed. */
static inline uint64_t
rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t z = seed + (stream + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* SB_RNG_H */
