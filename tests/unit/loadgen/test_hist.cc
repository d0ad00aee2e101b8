// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// The log-linear histogram: bucket edges, quantiles within its precision,
// merging across lcores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

extern "C" {
#include "lg_hist.h"
}

namespace {

TEST(LoadgenHist, SmallValuesAreExact)
{
	for (uint64_t v = 0; v < LG_HIST_SUB; v++) {
		EXPECT_EQ(lg_hist_index(v), v);
		EXPECT_EQ(lg_hist_bucket_high(lg_hist_index(v)), v);
	}
}

TEST(LoadgenHist, EveryValueLiesInItsBucketWithinPrecision)
{
	uint64_t rng = 12345;

	for (int i = 0; i < 200000; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t v = rng >> (rng % 40 + 24); // spread over many magnitudes
		unsigned idx = lg_hist_index(v);
		uint64_t hi = lg_hist_bucket_high(idx);

		ASSERT_LT(idx, (unsigned)LG_HIST_BUCKETS);
		ASSERT_GE(hi, v) << v;
		// The bucket below ends below v: v is in bucket idx.
		if (idx > 0) {
			ASSERT_LT(lg_hist_bucket_high(idx - 1), v) << v;
		}
		// Relative width: at most 1/SUB of the value.
		ASSERT_LE((double)(hi - v), (double)v / LG_HIST_SUB + 1) << v;
	}
}

TEST(LoadgenHist, BucketsAreMonotonic)
{
	for (unsigned i = 1; i < LG_HIST_BUCKETS; i++)
		ASSERT_GT(lg_hist_bucket_high(i), lg_hist_bucket_high(i - 1)) << i;
}

TEST(LoadgenHist, HugeValuesLandInTheLastBucket)
{
	EXPECT_EQ(lg_hist_index(UINT64_MAX), (unsigned)LG_HIST_BUCKETS - 1);
	EXPECT_EQ(lg_hist_index(1ULL << 45), (unsigned)LG_HIST_BUCKETS - 1);
}

TEST(LoadgenHist, QuantilesMatchSortedSamples)
{
	static struct lg_hist h;
	std::vector<uint64_t> v;
	uint64_t rng = 99;

	lg_hist_init(&h);
	for (int i = 0; i < 100000; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t x = 1000 + (rng >> 33) % 5000000; // 1 us .. 5 ms
		v.push_back(x);
		lg_hist_record(&h, x);
	}
	std::sort(v.begin(), v.end());
	for (double q : { 0.5, 0.9, 0.99, 0.999 }) {
		uint64_t exact = v[(size_t)(q * v.size()) - 1];
		uint64_t got = lg_hist_quantile(&h, q);

		EXPECT_GE(got, exact) << q;
		EXPECT_LE((double)got, (double)exact * (1.0 + 1.0 / LG_HIST_SUB) + 1) << q;
	}
	EXPECT_EQ(lg_hist_quantile(&h, 1.0), v.back());
	EXPECT_EQ(h.max, v.back());
	EXPECT_EQ(h.min, v.front());
	EXPECT_EQ(h.count, v.size());
}

TEST(LoadgenHist, MergeEqualsRecordingEverythingInOne)
{
	static struct lg_hist a, b, all;

	lg_hist_init(&a);
	lg_hist_init(&b);
	lg_hist_init(&all);
	for (uint64_t i = 1; i <= 5000; i++) {
		lg_hist_record(i % 3 ? &a : &b, i * 37);
		lg_hist_record(&all, i * 37);
	}
	lg_hist_merge(&a, &b);
	EXPECT_EQ(a.count, all.count);
	EXPECT_EQ(a.max, all.max);
	EXPECT_EQ(a.min, all.min);
	EXPECT_DOUBLE_EQ(a.sum, all.sum);
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++)
		ASSERT_EQ(a.buckets[i], all.buckets[i]) << i;
	for (double q : { 0.5, 0.99, 0.999 })
		EXPECT_EQ(lg_hist_quantile(&a, q), lg_hist_quantile(&all, q));
}

TEST(LoadgenHist, EmptyHistogramReportsZero)
{
	static struct lg_hist h;

	lg_hist_init(&h);
	EXPECT_EQ(lg_hist_quantile(&h, 0.5), 0u);
	EXPECT_EQ(lg_hist_quantile(&h, 0.999), 0u);
}

} // namespace
