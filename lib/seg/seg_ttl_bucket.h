/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Segcache's TTL buckets, in one place for the two that apply them:
 * lib/seg (seg_append.c's seg_ttl_place: which chain of segments an item
 * is appended to) and lib/mrc's miniature caches, which must place items
 * as the server does. Four ranges of 256 buckets, each range's buckets 16
 * times wider than the last's: 8 s wide below 2048 s, 128 s below 32768 s,
 * 2048 s below 524288 s, 32768 s beyond (the last bucket takes the rest).
 */
#ifndef SEGCACHED_SEG_TTL_BUCKET_H
#define SEGCACHED_SEG_TTL_BUCKET_H

#include <stdint.h>

#define SEG_TTL_BUCKETS 1024u

struct seg_ttl_bucket {
	unsigned tb;   /* 0 .. SEG_TTL_BUCKETS - 1 */
	uint8_t unit;  /* log2 of the expiry grid of its segments, seconds */
	int64_t lo;    /* the bucket's shortest TTL */
};

/* The bucket of a TTL of ttl seconds (ttl >= 0). */
static inline struct seg_ttl_bucket
seg_ttl_bucket(int64_t ttl)
{
	const unsigned range = ttl < 2048 ? 0 : ttl < 32768 ? 1 : ttl < 524288 ? 2 : 3;
	const unsigned width_shift = 3 + 4 * range;
	int64_t idx = ttl >> width_shift;

	if (idx > 255)
		idx = 255;
	return (struct seg_ttl_bucket){ .tb = range * 256 + (unsigned)idx,
					.unit = (uint8_t)(4 * range),
					.lo = idx << width_shift };
}

#endif /* SEGCACHED_SEG_TTL_BUCKET_H */
