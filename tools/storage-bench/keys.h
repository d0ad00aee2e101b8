/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Keys and values of the workload. A key is the decimal form of an id in
 * 1..keys, either plain ("17") or zero-padded to a fixed width
 * ("0000000000000017"); ids are formatted on the fly (two digits per step)
 * rather than read from a table, so the generator adds no cache misses of
 * its own to the engine's.
 */
#ifndef SB_KEYS_H
#define SB_KEYS_H

#include <stdint.h>
#include <string.h>

#include "bench.h"
#include "rng.h"

#define SB_ID_DIGITS_MAX 20

/* Writes the key of id into buf (>= max(width, 20) bytes); width 0 = plain.
 * Returns the key length. */
static inline size_t
sb_key_format(uint64_t id, char *buf, unsigned width)
{
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[SB_ID_DIGITS_MAX];
	char *p = tmp + sizeof(tmp);
	size_t n;

	while (id >= 100) {
		unsigned d = (unsigned)(id % 100) * 2;

		id /= 100;
		*--p = pairs[d + 1];
		*--p = pairs[d];
	}
	if (id >= 10) {
		*--p = pairs[id * 2 + 1];
		*--p = pairs[id * 2];
	} else {
		*--p = (char)('0' + id);
	}
	n = (size_t)(tmp + sizeof(tmp) - p);
	if (width > n) {
		memset(buf, '0', width - n);
		memcpy(buf + width - n, p, n);
		return width;
	}
	memcpy(buf, p, n);
	return n;
}

/* Number of decimal digits of id. */
static inline unsigned
sb_id_digits(uint64_t id)
{
	unsigned n = 1;

	while (id >= 10) {
		id /= 10;
		n++;
	}
	return n;
}

static inline uint32_t
sb_value_size(const struct sb_options *o, uint64_t *rng)
{
	if (o->vmin == o->vmax)
		return o->vmin;
	return o->vmin + (uint32_t)rng_below32((uint32_t)rng_next(rng),
					       (uint64_t)o->vmax - o->vmin + 1);
}

/* The value bytes stored for id: a pattern that depends on the id, so a
 * read-back can tell one key's value from another's. */
static inline void
sb_value_fill(char *buf, uint32_t len, uint64_t id)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (char)('a' + (id + i) % 26);
}

#endif /* SB_KEYS_H */
