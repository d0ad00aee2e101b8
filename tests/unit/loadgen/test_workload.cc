// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// The workload's distributions: uniform and zipf key ids, value sizes, the
// get/set mix, Poisson gaps; and the key and value formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "lg_workload.h"
}

namespace {

struct lg_workload make(uint64_t keys, bool zipf = false, double theta = 0)
{
	struct lg_workload w;
	char err[128];

	memset(&w, 0, sizeof(w));
	w.keys = keys;
	w.key_size = 16;
	w.vmin = w.vmax = 64;
	w.get_ratio = 0.9;
	w.multiget = 1;
	w.zipf = zipf;
	w.theta = theta;
	EXPECT_EQ(lg_workload_init(&w, err, sizeof(err)), 0) << err;
	return w;
}

TEST(LoadgenWorkload, UniformKeysCoverTheRangeEvenly)
{
	struct lg_workload w = make(100);
	std::vector<int> count(100);
	uint64_t rng = 1;
	const int n = 200000;

	for (int i = 0; i < n; i++) {
		uint64_t id = lg_key_id(&w, &rng);

		ASSERT_LT(id, 100u);
		count[id]++;
	}
	// Chi-square with 99 degrees of freedom: 99.9th percentile ~ 149.
	double chi = 0, e = n / 100.0;
	for (int c : count)
		chi += (c - e) * (c - e) / e;
	EXPECT_LT(chi, 149.0);
}

TEST(LoadgenWorkload, ZipfFollowsItsPmf)
{
	const uint64_t keys = 1000;
	const double theta = 0.99;
	struct lg_workload w = make(keys, true, theta);
	std::vector<int> count(keys);
	uint64_t rng = 7;
	const int n = 500000;

	for (int i = 0; i < n; i++) {
		uint64_t id = lg_key_id(&w, &rng);

		ASSERT_LT(id, keys);
		count[id]++;
	}
	// The most popular ids (0 = rank 1) get their share within 3 sigma.
	for (uint64_t k = 0; k < 20; k++) {
		double p = zipf_pmf(keys, theta, k + 1);
		double sigma = std::sqrt(n * p * (1 - p));

		EXPECT_NEAR(count[k], n * p, 3 * sigma + 1) << "rank " << k + 1;
	}
	EXPECT_GT(count[0], count[10]);
	EXPECT_GT(count[10], count[500]);
}

TEST(LoadgenWorkload, ValueSizesStayInTheirRange)
{
	struct lg_workload w = make(10);
	uint64_t rng = 3;
	uint32_t lo = UINT32_MAX, hi = 0;

	EXPECT_EQ(lg_value_size(&w, &rng), 64u);
	w.vmin = 10;
	w.vmax = 20;
	for (int i = 0; i < 10000; i++) {
		uint32_t s = lg_value_size(&w, &rng);

		lo = std::min(lo, s);
		hi = std::max(hi, s);
	}
	EXPECT_EQ(lo, 10u);
	EXPECT_EQ(hi, 20u);
}

TEST(LoadgenWorkload, GetRatioIsRespected)
{
	struct lg_workload w = make(10);
	uint64_t rng = 5;
	int gets = 0;
	const int n = 100000;

	for (int i = 0; i < n; i++)
		gets += lg_pick_op(&w, &rng) == LG_OP_GET;
	EXPECT_NEAR(gets, 0.9 * n, 4 * std::sqrt(n * 0.9 * 0.1));
	w.get_ratio = 0;
	EXPECT_EQ(lg_pick_op(&w, &rng), LG_OP_SET);
	w.get_ratio = 1;
	EXPECT_EQ(lg_pick_op(&w, &rng), LG_OP_GET);
}

TEST(LoadgenWorkload, PoissonGapsHaveTheRightMeanAndSpread)
{
	uint64_t rng = 11;
	const int n = 200000;
	double sum = 0, sum2 = 0;

	for (int i = 0; i < n; i++) {
		double g = (double)lg_poisson_gap_ns(100000.0, &rng); // mean 10 us

		sum += g;
		sum2 += g * g;
	}
	double mean = sum / n, var = sum2 / n - mean * mean;
	// Exponential: standard deviation equals the mean.
	EXPECT_NEAR(mean, 10000.0, 150.0);
	EXPECT_NEAR(std::sqrt(var), 10000.0, 300.0);
}

TEST(LoadgenWorkload, KeysAreFixedWidthAndDistinct)
{
	struct lg_workload w = make(100000);
	char a[LG_KEY_MAX], b[LG_KEY_MAX];

	ASSERT_EQ(lg_key_format(&w, 0, a), 16u);
	EXPECT_EQ(std::string(a, 16), "k000000000000000");
	ASSERT_EQ(lg_key_format(&w, 99999, b), 16u);
	EXPECT_EQ(std::string(b, 16), "k000000000099999");
}

TEST(LoadgenWorkload, BadParametersAreRefused)
{
	struct lg_workload w;
	char err[128];

	memset(&w, 0, sizeof(w));
	w.keys = 1000000;
	w.key_size = 4; // 7 digits + prefix do not fit
	w.vmin = w.vmax = 64;
	w.multiget = 1;
	EXPECT_EQ(lg_workload_init(&w, err, sizeof(err)), -1);
	w.key_size = 16;
	w.multiget = LG_MGET_MAX + 1;
	EXPECT_EQ(lg_workload_init(&w, err, sizeof(err)), -1);
	w.multiget = 1;
	w.zipf = true;
	w.theta = 0;
	EXPECT_EQ(lg_workload_init(&w, err, sizeof(err)), -1);
}

TEST(LoadgenWorkload, ValuesDependOnKeyVersionAndLength)
{
	char v1[64], v2[64], v3[64];
	uint64_t s1 = lg_value_seed("k1", 2, 1, 64);

	lg_value_fill(v1, s1, 0, 64);
	lg_value_fill(v2, lg_value_seed("k2", 2, 1, 64), 0, 64);
	lg_value_fill(v3, lg_value_seed("k1", 2, 2, 64), 0, 64);
	EXPECT_NE(memcmp(v1, v2, 64), 0);
	EXPECT_NE(memcmp(v1, v3, 64), 0);
	EXPECT_TRUE(lg_value_check(v1, s1, 0, 64));
	// In pieces, as TCP may deliver it.
	EXPECT_TRUE(lg_value_check(v1 + 10, s1, 10, 54));
	for (int i = 0; i < 64; i++) {
		EXPECT_GE(v1[i], 33);
		EXPECT_LE(v1[i], 126);
	}
	v1[33] ^= 1;
	EXPECT_FALSE(lg_value_check(v1, s1, 0, 64));
}

} // namespace
