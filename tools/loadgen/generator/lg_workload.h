/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the generator asks for: keys (an id in 0..keys-1 formatted to a
 * fixed width, or a key read from a trace), value sizes, the get/set mix,
 * the key popularity (uniform or zipf), Poisson inter-arrival times, and
 * the value bytes themselves.
 *
 * Values are self-checking: a set stores flags = version and value bytes
 * derived from (key, version, length), so any value that comes back can be
 * verified from the VALUE line alone, whichever connection or lcore set it.
 */
#ifndef LG_WORKLOAD_H
#define LG_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../storage-bench/rng.h"
#include "../../storage-bench/zipf.h"

#define LG_KEY_MAX 250
#define LG_MGET_MAX 32

enum lg_op { LG_OP_GET = 0, LG_OP_SET = 1 };

struct lg_trace; /* lg_trace.h */
struct lg_verify; /* lg_verify.h */

struct lg_workload {
	uint64_t keys;          /* key ids 0..keys-1 */
	unsigned key_size;      /* bytes of every synthetic key */
	uint32_t vmin, vmax;    /* value size, uniform in [vmin, vmax] */
	double get_ratio;       /* share of requests that are gets */
	unsigned multiget;      /* keys per get (1 = plain get) */
	bool zipf;              /* key popularity; false = uniform */
	double theta;
	struct zipf zipf_state;
	uint32_t ttl;           /* exptime of sets */
	const struct lg_trace *trace; /* replay: keys are trace key indices */
	struct lg_verify *verify; /* --verify all: versions per key; NULL = sampled */
};

/* Returns 0, or -1 with a message in err (bad sizes, bad theta). */
int lg_workload_init(struct lg_workload *w, char *err, size_t errlen);

/* One draw of a key id. */
static inline uint64_t
lg_key_id(const struct lg_workload *w, uint64_t *rng)
{
	if (w->zipf)
		return zipf_sample(&w->zipf_state, rng) - 1;
	return (uint64_t)(rng_unit(rng_next(rng)) * (double)w->keys);
}

static inline uint32_t
lg_value_size(const struct lg_workload *w, uint64_t *rng)
{
	if (w->vmin == w->vmax)
		return w->vmin;
	return w->vmin + (uint32_t)rng_below32((uint32_t)rng_next(rng),
					       (uint64_t)w->vmax - w->vmin + 1);
}

static inline enum lg_op
lg_pick_op(const struct lg_workload *w, uint64_t *rng)
{
	return rng_unit(rng_next(rng)) < w->get_ratio ? LG_OP_GET : LG_OP_SET;
}

/* Writes the key of id into buf (LG_KEY_MAX bytes); returns its length. */
size_t lg_key_format(const struct lg_workload *w, uint64_t id, char *buf);

/* Exponential gap (ns) with mean 1e9 / rate_per_s: Poisson arrivals. */
uint64_t lg_poisson_gap_ns(double rate_per_s, uint64_t *rng);

/* Seed of a value's bytes, from its key, flags (version) and length. */
uint64_t lg_value_seed(const char *key, size_t klen, uint32_t version,
		       uint32_t len);
/* Byte i of the value whose seed is seed: printable, cheap, positional (a
 * value can be produced or checked in pieces). */
static inline char
lg_value_byte(uint64_t seed, uint32_t i)
{
	uint64_t x = seed + (uint64_t)(i >> 3) * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	return (char)(33 + ((x >> ((i & 7) * 8)) & 0xff) % 94);
}
void lg_value_fill(char *dst, uint64_t seed, uint32_t off, uint32_t len);
/* Compare data[0..len) with bytes off.. of the value; true when equal. */
bool lg_value_check(const char *data, uint64_t seed, uint32_t off, uint32_t len);

#endif /* LG_WORKLOAD_H */
