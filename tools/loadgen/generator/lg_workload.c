/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the generator asks for (lg_workload.h): keys, Poisson gaps and
 * the self-checking value bytes.
 */
#include "lg_workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lg_trace.h"

int
lg_workload_init(struct lg_workload *w, char *err, size_t errlen)
{
	unsigned digits = 1;

	if (w->trace)
		return 0;
	if (w->keys == 0) {
		snprintf(err, errlen, "--keys must be at least 1");
		return -1;
	}
	for (uint64_t k = w->keys - 1; k >= 10; k /= 10)
		digits++;
	if (w->key_size < digits + 1 || w->key_size > LG_KEY_MAX) {
		snprintf(err, errlen, "--key-size %u: %llu keys need %u..%u bytes",
			 w->key_size, (unsigned long long)w->keys, digits + 1,
			 LG_KEY_MAX);
		return -1;
	}
	if (w->vmin > w->vmax || w->vmax == 0) {
		snprintf(err, errlen, "--value-size: bad range %u-%u", w->vmin, w->vmax);
		return -1;
	}
	if (w->multiget < 1 || w->multiget > LG_MGET_MAX) {
		snprintf(err, errlen, "--multiget must be 1..%d", LG_MGET_MAX);
		return -1;
	}
	if (w->get_ratio < 0 || w->get_ratio > 1) {
		snprintf(err, errlen, "--get-ratio must be in [0, 1]");
		return -1;
	}
	if (w->zipf && zipf_init(&w->zipf_state, w->keys, w->theta) < 0) {
		snprintf(err, errlen, "--zipf %g: theta must be > 0", w->theta);
		return -1;
	}
	return 0;
}

size_t
lg_key_format(const struct lg_workload *w, uint64_t id, char *buf)
{
	size_t n;
	char *p;

	if (w->trace) {
		const struct lg_trace_key *k = lg_trace_key(w->trace, id);

		memcpy(buf, k->name, k->len);
		return k->len;
	}
	/* "k" then the id zero-padded to key_size - 1 digits. */
	n = w->key_size;
	buf[0] = 'k';
	p = buf + n;
	while (p > buf + 1) {
		*--p = (char)('0' + id % 10);
		id /= 10;
	}
	return n;
}

uint64_t
lg_poisson_gap_ns(double rate_per_s, uint64_t *rng)
{
	double u = rng_unit(rng_next(rng));

	/* 1 - u is in (0, 1]: log never sees 0. */
	return (uint64_t)(-log(1.0 - u) * 1e9 / rate_per_s);
}

uint64_t
lg_value_seed(const char *key, size_t klen, uint32_t version,
	      uint32_t len)
{
	/* FNV-1a over the key, then a splitmix finaliser with version and
	 * length mixed in. */
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < klen; i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ULL;
	}
	h ^= ((uint64_t)version << 32) | len;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

void
lg_value_fill(char *dst, uint64_t seed, uint32_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		dst[i] = lg_value_byte(seed, off + i);
}

bool
lg_value_check(const char *data, uint64_t seed, uint32_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (data[i] != lg_value_byte(seed, off + i))
			return false;
	return true;
}
