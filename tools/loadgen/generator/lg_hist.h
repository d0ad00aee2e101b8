/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Log-linear latency histogram (the HdrHistogram layout): values below
 * 2^LG_HIST_SUB_BITS nanoseconds have a bucket each; above, every power of
 * two is split into 2^LG_HIST_SUB_BITS equal buckets, so any recorded value
 * is reported within 1/2^LG_HIST_SUB_BITS (0.8%) of itself. Fixed size, no
 * allocation, one per lcore; merged by adding counts.
 */
#ifndef LG_HIST_H
#define LG_HIST_H

#include <stdint.h>

#define LG_HIST_SUB_BITS 7
#define LG_HIST_SUB (1u << LG_HIST_SUB_BITS)
/* Values up to 2^40 ns (18 minutes); larger ones land in the last bucket. */
#define LG_HIST_MAX_BITS 40
#define LG_HIST_BUCKETS ((LG_HIST_MAX_BITS - LG_HIST_SUB_BITS + 1) * LG_HIST_SUB)

struct lg_hist {
	uint64_t count;
	uint64_t max;
	uint64_t min;
	double sum;
	uint64_t buckets[LG_HIST_BUCKETS];
};

void lg_hist_init(struct lg_hist *h);
/* Bucket index of a value (exposed for tests). */
unsigned lg_hist_index(uint64_t v);
/* Highest value that falls in bucket i. */
uint64_t lg_hist_bucket_high(unsigned i);

static inline void
lg_hist_record(struct lg_hist *h, uint64_t v)
{
	h->buckets[lg_hist_index(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v > h->max)
		h->max = v;
	if (v < h->min)
		h->min = v;
}

/* dst += src. */
void lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src);
/* The value at quantile q in [0, 1]: the upper edge of the bucket holding
 * the ceil(q * count)-th smallest value, capped at max; 0 when empty. */
uint64_t lg_hist_quantile(const struct lg_hist *h, double q);

#endif /* LG_HIST_H */
