/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The log-linear latency histogram (lg_hist.h): bucket of a value, merge,
 * quantiles.
 */
#include "lg_hist.h"

#include <math.h>
#include <string.h>

void
lg_hist_init(struct lg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned
lg_hist_index(uint64_t v)
{
	unsigned msb, shift;
	unsigned idx;

	if (v < LG_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb >= LG_HIST_MAX_BITS)
		return LG_HIST_BUCKETS - 1;
	/* Power-of-two group msb keeps its top SUB_BITS+1 bits; the leading
	 * 1 is implied, the next SUB_BITS pick the bucket in the group. */
	shift = msb - LG_HIST_SUB_BITS;
	idx = (msb - LG_HIST_SUB_BITS + 1) * LG_HIST_SUB +
	      (unsigned)((v >> shift) - LG_HIST_SUB);
	return idx;
}

uint64_t
lg_hist_bucket_high(unsigned i)
{
	unsigned group, sub, shift;

	if (i < LG_HIST_SUB)
		return i;
	group = i / LG_HIST_SUB; /* 1.. */
	sub = i % LG_HIST_SUB;
	shift = group - 1;
	return (((uint64_t)(LG_HIST_SUB + sub) + 1) << shift) - 1;
}

void
lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src)
{
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	if (src->min < dst->min)
		dst->min = src->min;
}

uint64_t
lg_hist_quantile(const struct lg_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (q <= 0)
		return h->min;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t hi = lg_hist_bucket_high(i);

			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}
