// SPDX-License-Identifier: BSD-3-Clause
// Issue 21, "a hash table that keeps up with the objects": the table grows
// online (linear hashing, lib/seg/seg_hash_grow.c) while lock-free readers
// and locking writers run, and no reader ever misses or misreads a key
// that is in the table. Growth across a restart is in test_seg_restart.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

using seg_fixture::SegConfig;
using seg_fixture::SegFixture;

namespace {

class SegHashGrow : public SegFixture {};

std::string key_of(int t, int i) { return "t" + std::to_string(t) + ":" + std::to_string(i); }
// The value says which key and which version wrote it.
std::string value_of(const std::string &k, int version)
{
	return k + "=v" + std::to_string(version) + std::string(version % 13, '.');
}

std::string get_one(struct engine_worker *w, const std::string &k, int *rc)
{
	char buf[256];
	struct engine_item it = {};

	*rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf, sizeof(buf), &it);
	return *rc == ENGINE_OK ? std::string(buf, it.vlen) : std::string();
}

} // namespace

// Writers insert, overwrite and delete while the table grows from 256
// head buckets towards 4096; readers read back keys the writers finished
// (each must be there, with one of its own key's values) the whole time.
TEST_F(SegHashGrow, ReadersNeverMissAKeyWhileTheTableGrows)
{
	SegConfig c;

	c.memory = 64u << 20; // no eviction: every key written stays
	c.hash_power = 8;
	c.max_workers = 16;
	make(c);
	const int writers = 4, readers = 3, per = 30000;
	std::atomic<int> published[writers];
	std::atomic<int> writers_left{ writers };
	std::atomic<uint64_t> reads{ 0 }, bad{ 0 };
	std::vector<std::thread> ts;

	for (auto &p : published)
		p.store(0);
	for (int t = 0; t < writers; t++)
		ts.emplace_back([&, t] {
			struct engine_worker *tw = engine_worker_create(e);

			for (int i = 0; i < per; i++) {
				std::string k = key_of(t, i), v = value_of(k, 0);
				std::string d = "d" + k;

				ASSERT_EQ(engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(),
						       v.size(), 0, 0, 0, nullptr),
					  ENGINE_OK);
				// A key that comes and goes: chains repack under splits.
				ASSERT_EQ(engine_store(tw, ENGINE_SET, d.data(), d.size(), "x", 1, 0,
						       0, 0, nullptr),
					  ENGINE_OK);
				if (i % 3 == 0) {
					std::string o = key_of(t, i / 2), ov = value_of(o, i % 7 + 1);

					ASSERT_EQ(engine_store(tw, ENGINE_SET, o.data(), o.size(),
							       ov.data(), ov.size(), 0, 0, 0, nullptr),
						  ENGINE_OK);
				}
				ASSERT_EQ(engine_delete(tw, d.data(), d.size(), 0), ENGINE_OK);
				published[t].store(i + 1, std::memory_order_release);
			}
			engine_worker_destroy(tw);
			writers_left--;
		});
	for (int r = 0; r < readers; r++)
		ts.emplace_back([&, r] {
			struct engine_worker *rw = engine_worker_create(e);
			std::mt19937 rng(r);

			while (writers_left.load() > 0) {
				int t = (int)(rng() % writers);
				int p = published[t].load(std::memory_order_acquire);

				if (p == 0)
					continue;
				std::string k = key_of(t, (int)(rng() % p));
				int rc;
				std::string v = get_one(rw, k, &rc);

				reads++;
				if (rc != ENGINE_OK || v.compare(0, k.size() + 2, k + "=v") != 0)
					bad++;
			}
			engine_worker_destroy(rw);
		});
	for (auto &t : ts)
		t.join();
	EXPECT_EQ(bad.load(), 0u) << "of " << reads.load() << " reads";
	EXPECT_GT(reads.load(), 0u);

	struct engine_stats st = stats();

	EXPECT_GT(st.hash_buckets, 256u * 4) << "the table did not grow";
	EXPECT_LE(st.hash_buckets, 4096u);
	EXPECT_EQ(st.curr_items, (uint64_t)writers * per);
	// Every value read back: the last version each key was given.
	for (int t = 0; t < writers; t++)
		for (int i = 0; i < per; i++) {
			std::string k = key_of(t, i);
			int version = 0, rc;

			for (int j = 2 * i; j <= 2 * i + 1; j++)
				if (j < per && j % 3 == 0)
					version = j % 7 + 1;
			ASSERT_EQ(get_one(w, k, &rc), value_of(k, version)) << k;
		}
	struct seg_census census;
	char err[256] = "";

	ASSERT_EQ(seg_test_check(e, &census, err, sizeof(err)), 0) << err;
	EXPECT_EQ(census.live_items, (uint64_t)writers * per);
}

// Chains stay short as objects pile up: the fill that made chains of ~200
// items in a table sized for large objects keeps its chains to a few
// buckets, and the stats say so (sampled mean and max).
TEST_F(SegHashGrow, ChainsStayShortAsTinyObjectsPileUp)
{
	make(64u << 20);
	struct engine_stats st0 = stats();
	char key[24];

	for (int n = 1; n <= 2000000; n++) {
		int len = snprintf(key, sizeof(key), "%d", n);

		ASSERT_EQ(engine_store(w, ENGINE_SET, key, len, "x", 1, 0, 0, 0, nullptr),
			  ENGINE_OK);
	}
	struct engine_stats st = stats();
	uint64_t mean = 0, max = 0;

	ASSERT_EQ(seg_test_chain_stats(e, &mean, &max), 0);
	printf("2,000,000 items: %llu head buckets (from %llu), %llu overflow, chain mean "
	       "%.2f max %llu items\n",
	       (unsigned long long)st.hash_buckets, (unsigned long long)st0.hash_buckets,
	       (unsigned long long)st.hash_overflow, mean / 100.0, (unsigned long long)max);
	EXPECT_GT(st.hash_buckets, st0.hash_buckets * 8);
	EXPECT_EQ(st.hash_power_init, st0.hash_power);
	// Without growth: 2,000,000 items in 65,536 chains, a mean of 30.
	EXPECT_LT(mean, 800u) << "hundredths of an item per chain";
	EXPECT_LE(max, 28u) << "items in the longest chain (4 buckets)";
	// Overflow buckets taken from the heap shrink with the chains.
	EXPECT_LT(st.hash_overflow, st.hash_buckets / 8);
}

// engine_config.hash_grow caps the growth (a --heap-file reserves room for
// the largest table): at 1 the table never grows, at 2 it stops at twice
// its starting buckets and chains just get longer; every value reads back.
TEST_F(SegHashGrow, GrowthStopsAtTheConfiguredCap)
{
	const int items = 60000; // ~230 per starting chain: far over the load
	for (unsigned grow : { 1u, 2u }) {
		SegConfig c;

		c.memory = 64u << 20;
		c.hash_power = 8;
		c.hash_grow = grow;
		make(c);
		char key[24], val[24];

		for (int n = 0; n < items; n++) {
			int kl = snprintf(key, sizeof(key), "k%d", n);
			int vl = snprintf(val, sizeof(val), "v%d.%u", n, grow);

			ASSERT_EQ(engine_store(w, ENGINE_SET, key, kl, val, vl, 0, 0, 0, nullptr),
				  ENGINE_OK);
		}
		struct engine_stats st = stats();

		EXPECT_EQ(st.hash_power_init, 8u);
		EXPECT_EQ(st.hash_grow_max, grow);
		EXPECT_EQ(st.hash_buckets, 256u * grow) << "cap " << grow;
		EXPECT_EQ(st.curr_items, (uint64_t)items);
		for (int n = 0; n < items; n++) {
			int rc;
			std::string k = "k" + std::to_string(n);

			snprintf(val, sizeof(val), "v%d.%u", n, grow);
			ASSERT_EQ(get_one(w, k, &rc), std::string(val)) << k << " cap " << grow;
		}
		struct seg_census census;
		char err[256] = "";

		ASSERT_EQ(seg_test_check(e, &census, err, sizeof(err)), 0) << err;
		EXPECT_EQ(census.live_items, (uint64_t)items);
	}
}

// A growth that is not a power of two up to 16 is refused with a reason.
TEST_F(SegHashGrow, BadCapIsRefused)
{
	for (unsigned grow : { 3u, 32u }) {
		SegConfig c;
		c.hash_grow = grow;
		struct engine_config cfg = seg_fixture::seg_test_config(c, &clock);
		char err[256] = "";

		EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr) << grow;
		EXPECT_NE(std::string(err).find("growth"), std::string::npos) << err;
		EXPECT_EQ(seg_heap_bytes(&cfg), 0u);
		EXPECT_EQ(seg_restart_area_bytes(&cfg), 0u);
	}
}
