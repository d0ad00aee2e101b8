// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/seg, the Segcache engine: every operation and edge,
// expiry with a fake clock, eviction, the expiration sweep, and writers
// racing on the same keys from several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "seg/seg.h"

namespace {

struct FakeClock {
	std::atomic<int64_t> now{1700000000};
	static int64_t read(void *arg) { return static_cast<FakeClock *>(arg)->now.load(); }
	void advance(int64_t s) { now += s; }
};

class Seg : public ::testing::Test {
protected:
	FakeClock clock;
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;

	void make(size_t memory = 16u << 20, enum engine_eviction ev = ENGINE_EVICT_MERGE,
		  size_t seg_size = 0, size_t item_max = 0, unsigned hash_power = 0)
	{
		struct engine_config cfg = {};
		char err[256] = "";

		destroy();
		cfg.memory = memory;
		cfg.eviction = ev;
		cfg.segment_size = seg_size;
		cfg.item_max = item_max;
		cfg.hash_power = hash_power;
		cfg.max_workers = 8;
		cfg.clock = FakeClock::read;
		cfg.clock_arg = &clock;
		e = seg_create(&cfg, err, sizeof(err));
		ASSERT_NE(e, nullptr) << err;
		w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
	}
	void destroy()
	{
		engine_worker_destroy(w);
		engine_destroy(e);
		w = nullptr;
		e = nullptr;
	}
	void SetUp() override { make(); }
	void TearDown() override { destroy(); }

	int set(const std::string &k, const std::string &v, int64_t exptime = 0, uint32_t flags = 0,
		enum engine_store_mode mode = ENGINE_SET, uint64_t cas = 0, uint64_t *cas_out = nullptr)
	{
		return engine_store(w, mode, k.data(), k.size(), v.data(), v.size(), flags, exptime,
				    cas, cas_out);
	}
	// Returns the value, or "<MISS>".
	std::string get(const std::string &k, struct engine_item *out = nullptr,
			int64_t touch = ENGINE_NO_TOUCH, struct engine_worker *wk = nullptr)
	{
		struct engine_item it = {};
		std::string buf(64, '\0');
		int rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(), buf.size(), &it);

		if (rc == ENGINE_BUF_SMALL) {
			buf.resize(it.vlen);
			rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(), buf.size(),
					&it);
		}
		if (rc == ENGINE_MISS)
			return "<MISS>";
		EXPECT_EQ(rc, ENGINE_OK);
		if (out)
			*out = it;
		buf.resize(it.vlen);
		return buf;
	}
	struct engine_stats stats()
	{
		struct engine_stats st;
		engine_stats(e, &st);
		return st;
	}
	uint64_t counter(enum engine_worker_counter c) { return stats().counters[c]; }
};

TEST_F(Seg, SetGetFlagsAndCas)
{
	struct engine_item it;
	uint64_t cas1 = 0, cas2 = 0;

	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "hello", 0, 0, ENGINE_SET, 0, &cas1), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "hello");
	EXPECT_EQ(it.flags, 0u);
	EXPECT_EQ(it.cas, cas1);
	EXPECT_NE(cas1, 0u);
	EXPECT_EQ(set("k", "world!", 0, 0xdeadbeef, ENGINE_SET, 0, &cas2), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "world!");
	EXPECT_EQ(it.flags, 0xdeadbeefu);
	EXPECT_NE(cas2, cas1);
	EXPECT_EQ(it.cas, cas2);
	EXPECT_EQ(set("empty", ""), ENGINE_OK);
	EXPECT_EQ(get("empty"), "");
	EXPECT_EQ(stats().curr_items, 2u);
}

TEST_F(Seg, BinaryValuesAndValueLengthEncodings)
{
	for (size_t len : {0, 1, 127, 128, 16383, 16384, 100000}) {
		std::string v(len, '\0');
		for (size_t i = 0; i < len; i++)
			v[i] = static_cast<char>(i * 131 + len);
		std::string k = "bin" + std::to_string(len);
		ASSERT_EQ(set(k, v, 0, static_cast<uint32_t>(len)), ENGINE_OK);
		struct engine_item it;
		EXPECT_EQ(get(k, &it), v) << len;
		EXPECT_EQ(it.flags, len);
	}
}

TEST_F(Seg, BufferTooSmallReportsLength)
{
	struct engine_item it = {};
	char small[4];

	ASSERT_EQ(set("k", "0123456789"), ENGINE_OK);
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, small, sizeof(small), &it), ENGINE_BUF_SMALL);
	EXPECT_EQ(it.vlen, 10u);
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, nullptr, 0, &it), ENGINE_BUF_SMALL);
}

TEST_F(Seg, KeyLengthLimits)
{
	std::string k250(250, 'k'), k251(251, 'k');
	EXPECT_EQ(set(k250, "v"), ENGINE_OK);
	EXPECT_EQ(get(k250), "v");
	EXPECT_EQ(set(k251, "v"), ENGINE_INVALID);
	EXPECT_EQ(set("", "v"), ENGINE_INVALID);
	EXPECT_EQ(engine_delete(w, "", 0, 0), ENGINE_INVALID);
}

TEST_F(Seg, AddReplace)
{
	EXPECT_EQ(set("k", "a", 0, 0, ENGINE_REPLACE), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "a", 0, 0, ENGINE_ADD), ENGINE_OK);
	EXPECT_EQ(set("k", "b", 0, 0, ENGINE_ADD), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "a");
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_REPLACE), ENGINE_OK);
	EXPECT_EQ(get("k"), "c");
	// add succeeds over an expired item
	EXPECT_EQ(set("t", "old", 5), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(set("t", "new", 0, 0, ENGINE_ADD), ENGINE_OK);
	EXPECT_EQ(get("t"), "new");
}

TEST_F(Seg, AppendPrepend)
{
	struct engine_item it;

	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_APPEND), ENGINE_NOT_STORED);
	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_PREPEND), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	ASSERT_EQ(set("k", "mid", 100, 42), ENGINE_OK);
	EXPECT_EQ(set("k", "_end", 0, 7, ENGINE_APPEND), ENGINE_OK);
	EXPECT_EQ(set("k", "start_", 0, 9, ENGINE_PREPEND), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "start_mid_end");
	EXPECT_EQ(it.flags, 42u); // flags and expiry stay those of the item
	clock.advance(100);
	EXPECT_EQ(get("k"), "<MISS>");
}

TEST_F(Seg, AppendWithCasComparesFirst)
{
	struct engine_item it;

	ASSERT_EQ(set("k", "a"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_APPEND, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(get("k"), "a");
	uint64_t cas = 0;
	EXPECT_EQ(set("k", "b", 0, 0, ENGINE_APPEND, it.cas, &cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "ab");
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_PREPEND, it.cas), ENGINE_EXISTS); // stale now
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_PREPEND, cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "cab");
}

TEST_F(Seg, CasSemantics)
{
	struct engine_item it;
	uint64_t cas = 0;

	EXPECT_EQ(set("k", "v", 0, 0, ENGINE_CAS, 12345), ENGINE_MISS);
	ASSERT_EQ(set("k", "v1"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(set("k", "v2", 0, 0, ENGINE_CAS, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(set("k", "v2", 0, 0, ENGINE_CAS, it.cas, &cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "v2");
	// The old cas is stale now, and stays stale forever.
	EXPECT_EQ(set("k", "v3", 0, 0, ENGINE_CAS, it.cas), ENGINE_EXISTS);
	EXPECT_EQ(set("k", "v3", 0, 0, ENGINE_CAS, cas), ENGINE_OK);
	EXPECT_EQ(counter(ENGINE_C_cas_hits), 2u);
	EXPECT_EQ(counter(ENGINE_C_cas_badval), 2u);
	EXPECT_EQ(counter(ENGINE_C_cas_misses), 1u);
	// A write to another key never invalidates this key's cas.
	get("k", &it);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set("other" + std::to_string(i), "x"), ENGINE_OK);
	EXPECT_EQ(set("k", "v4", 0, 0, ENGINE_CAS, it.cas), ENGINE_OK);
}

TEST_F(Seg, CasDisabled)
{
	struct engine_config cfg = {};
	char err[256];
	struct engine_item it;

	cfg.memory = 8u << 20;
	cfg.cas_disabled = true;
	struct engine *e2 = seg_create(&cfg, err, sizeof(err));
	ASSERT_NE(e2, nullptr) << err;
	struct engine_worker *w2 = engine_worker_create(e2);
	ASSERT_EQ(engine_store(w2, ENGINE_SET, "k", 1, "v", 1, 0, 0, 0, nullptr), ENGINE_OK);
	ASSERT_EQ(engine_get(w2, "k", 1, ENGINE_NO_TOUCH, nullptr, 0, &it), ENGINE_BUF_SMALL);
	EXPECT_EQ(it.cas, 0u);
	engine_worker_destroy(w2);
	engine_destroy(e2);
}

TEST_F(Seg, IncrDecr)
{
	uint64_t v = 0;

	EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_MISS);
	ASSERT_EQ(set("n", "99", 0, 5), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 100u);
	struct engine_item it;
	EXPECT_EQ(get("n", &it), "100");
	EXPECT_EQ(it.flags, 5u);
	EXPECT_EQ(engine_arith(w, "n", 1, false, 1000, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 0u); // decr stops at 0
	EXPECT_EQ(get("n"), "0");
	ASSERT_EQ(set("n", "18446744073709551615"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 2, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 1u); // incr wraps at 2^64
	ASSERT_EQ(set("s", "abc"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", "18446744073709551616"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", ""), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", std::string(300, '1')), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	EXPECT_EQ(get("s"), std::string(300, '1'));
	// incr keeps the expiry
	ASSERT_EQ(set("t", "1", 10), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "t", 1, true, 1, &v, nullptr), ENGINE_OK);
	clock.advance(10);
	EXPECT_EQ(get("t"), "<MISS>");
}

TEST_F(Seg, Delete)
{
	struct engine_item it;

	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(engine_delete(w, "k", 1, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(engine_delete(w, "k", 1, it.cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	EXPECT_EQ(stats().curr_items, 0u);
	EXPECT_EQ(stats().bytes, 0u);
}

TEST_F(Seg, ExptimeForms)
{
	const int64_t t0 = clock.now;

	ASSERT_EQ(set("never", "v", 0), ENGINE_OK);
	ASSERT_EQ(set("rel", "v", 100), ENGINE_OK);
	ASSERT_EQ(set("abs", "v", t0 + 200), ENGINE_OK);
	ASSERT_EQ(set("neg", "v", -1), ENGINE_OK); // stored, expired at once
	ASSERT_EQ(set("past", "v", t0 - 5), ENGINE_OK);
	EXPECT_EQ(get("neg"), "<MISS>");
	EXPECT_EQ(get("past"), "<MISS>");
	EXPECT_EQ(get("rel"), "v");
	EXPECT_EQ(get("abs"), "v");
	clock.advance(99);
	EXPECT_EQ(get("rel"), "v");
	clock.advance(1);
	EXPECT_EQ(get("rel"), "<MISS>");
	EXPECT_EQ(get("abs"), "v");
	clock.advance(100);
	EXPECT_EQ(get("abs"), "<MISS>");
	EXPECT_EQ(get("never"), "v");
	clock.advance(3600L * 24 * 365 * 10);
	EXPECT_EQ(get("never"), "v");
}

TEST_F(Seg, NegativeExptimeRemovesExistingItem)
{
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	EXPECT_EQ(set("k", "w", -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "w", -1, 0, ENGINE_REPLACE), ENGINE_NOT_STORED);
}

// Short TTLs are exact to the second; longer ones are never late.
TEST_F(Seg, ExpiryPrecision)
{
	const std::vector<int64_t> exact = {1, 2, 7, 8, 9, 100, 1000, 2047};
	const std::vector<int64_t> coarse = {2048, 5000, 40000, 600000, 2592000};

	for (int64_t ttl : exact) {
		make();
		// Written at several points of a segment's life, not just at open.
		for (int spread = 0; spread < 3; spread++) {
			std::string k = "k" + std::to_string(ttl) + "_" + std::to_string(spread);
			ASSERT_EQ(set(k, "v", ttl), ENGINE_OK);
			clock.advance(ttl - 1);
			EXPECT_EQ(get(k), "v") << "ttl " << ttl << " died early";
			clock.advance(1);
			EXPECT_EQ(get(k), "<MISS>") << "ttl " << ttl << " served late";
			clock.advance(3);
		}
	}
	for (int64_t ttl : coarse) {
		make();
		ASSERT_EQ(set("k", "v", ttl), ENGINE_OK);
		// early by less than the delta unit (16 s .. 4096 s, < 1%)
		clock.advance(ttl - ttl / 100 - 1);
		EXPECT_EQ(get("k"), "v") << "ttl " << ttl;
		clock.advance(ttl / 100 + 1);
		EXPECT_EQ(get("k"), "<MISS>") << "ttl " << ttl << " served late";
	}
}

TEST_F(Seg, TouchAndGat)
{
	struct engine_item it;

	EXPECT_EQ(engine_touch(w, "k", 1, 10), ENGINE_MISS);
	ASSERT_EQ(set("k", "value", 10, 3), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(engine_touch(w, "k", 1, 100), ENGINE_OK);
	clock.advance(50);
	EXPECT_EQ(get("k", &it), "value");
	EXPECT_EQ(it.flags, 3u);
	EXPECT_EQ(it.expires_at, clock.now - 50 + 100);
	// gat: returns the value and sets a new expiry (0 = never)
	EXPECT_EQ(get("k", &it, 0), "value");
	EXPECT_EQ(it.expires_at, 0);
	clock.advance(1000);
	EXPECT_EQ(get("k"), "value");
	EXPECT_EQ(get("nokey", nullptr, 10), "<MISS>");
	// touch into the past removes it
	EXPECT_EQ(engine_touch(w, "k", 1, -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_GE(counter(ENGINE_C_touch_hits), 2u);
	EXPECT_GE(counter(ENGINE_C_touch_misses), 1u);
}

TEST_F(Seg, ItemTooLarge)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 0, 1024);
	ASSERT_EQ(set("k", "small"), ENGINE_OK);
	EXPECT_EQ(set("k", std::string(2000, 'x')), ENGINE_TOO_LARGE);
	// like memcached, a failed set does not leave the old value behind
	EXPECT_EQ(get("k"), "<MISS>");
	ASSERT_EQ(set("a", std::string(1000, 'x')), ENGINE_OK);
	EXPECT_EQ(set("a", std::string(100, 'y'), 0, 0, ENGINE_APPEND), ENGINE_TOO_LARGE);
	EXPECT_EQ(get("a"), std::string(1000, 'x'));
	EXPECT_EQ(counter(ENGINE_C_set_too_large), 1u);
}

TEST_F(Seg, BadConfigIsRefused)
{
	struct engine_config cfg = {};
	char err[256] = "";

	cfg.memory = 1024;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("too small"), std::string::npos) << err;
	cfg.memory = 64u << 20;
	cfg.segment_size = 3000;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("power of two"), std::string::npos) << err;
	cfg.segment_size = 1 << 16;
	cfg.item_max = 1 << 17;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	cfg.segment_size = 0;
	cfg.item_max = (4u << 20) + 1;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	cfg.item_max = 4u << 20; // -I 4m is the largest
	struct engine *e4 = seg_create(&cfg, err, sizeof(err));
	EXPECT_NE(e4, nullptr) << err;
	engine_destroy(e4);
}

TEST_F(Seg, LargeSegmentsAlignItems)
{
	make(64u << 20, ENGINE_EVICT_MERGE, 0, 3u << 20); // 4 MiB segments, 4-byte units
	std::string big((3u << 20) - 100, 'b');
	big[12345] = 'x';
	ASSERT_EQ(set("big", big), ENGINE_OK);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(set("s" + std::to_string(i), std::string(i % 13, 'v')), ENGINE_OK);
	EXPECT_EQ(get("big"), big);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(get("s" + std::to_string(i)), std::string(i % 13, 'v'));
}

TEST_F(Seg, FlushAll)
{
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(set("k" + std::to_string(i), "v", i % 2 ? 100 : 0), ENGINE_OK);
	engine_flush_all(e, 0);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), "<MISS>");
	EXPECT_EQ(stats().curr_items, 0u);
	ASSERT_EQ(set("after", "v"), ENGINE_OK);
	EXPECT_EQ(get("after"), "v");
	EXPECT_EQ(stats().flushes, 1u);
}

TEST_F(Seg, FlushAllDelayed)
{
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	engine_flush_all(e, 10);
	clock.advance(9);
	EXPECT_EQ(get("a"), "1");
	ASSERT_EQ(set("b", "2"), ENGINE_OK);
	clock.advance(1);
	EXPECT_EQ(get("a"), "<MISS>");
	EXPECT_EQ(get("b"), "<MISS>"); // existed when the delay ran out
	ASSERT_EQ(set("c", "3"), ENGINE_OK);
	clock.advance(100);
	EXPECT_EQ(get("c"), "3");
	// The sweep also runs a due flush.
	engine_flush_all(e, 5);
	clock.advance(5);
	engine_expire(e);
	EXPECT_EQ(stats().curr_items, 0u);
}

TEST_F(Seg, ExpirationSweepFreesWholeSegments)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	std::string v(200, 'v');
	for (int i = 0; i < 5000; i++)
		ASSERT_EQ(set("t" + std::to_string(i), v, 10), ENGINE_OK);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set("n" + std::to_string(i), v, 0), ENGINE_OK);
	const uint64_t free_before = stats().seg_free;
	EXPECT_EQ(engine_expire(e), 0u); // nothing due yet
	clock.advance(9);
	EXPECT_EQ(engine_expire(e), 0u);
	clock.advance(1);
	// A worker seals its open segment only when it writes again; the sweep
	// closes idle ones itself.
	EXPECT_EQ(engine_expire(e), 5000u);
	struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, 100u);
	EXPECT_EQ(st.expired, 5000u);
	EXPECT_GE(st.seg_expired, 5000u * 200 / (64u << 10));
	EXPECT_GT(st.seg_free, free_before);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(get("n" + std::to_string(i)), v);
	// and writing goes on after the sweep closed the open segment
	ASSERT_EQ(set("t0", "again", 10), ENGINE_OK);
	EXPECT_EQ(get("t0"), "again");
}

class SegEviction : public Seg, public ::testing::WithParamInterface<enum engine_eviction> {};

TEST_P(SegEviction, SetsKeepSucceedingUnderPressure)
{
	make(4u << 20, GetParam(), 64u << 10);
	std::string v(100, 'v');
	const int n = 200000; // ~25 MB of writes into a 4 MB cache
	for (int i = 0; i < n; i++) {
		std::string k = "key" + std::to_string(i);
		ASSERT_EQ(set(k, v + k), ENGINE_OK) << i;
		if (i % 7 == 0) // make some keys hot so merge has something to keep
			get("key" + std::to_string(i / 2));
	}
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_GT(st.curr_items, 10000u);
	// Every resident item is intact; the newest ones are resident.
	int hits = 0;
	for (int i = 0; i < n; i++) {
		std::string k = "key" + std::to_string(i);
		std::string got = get(k);
		if (got != "<MISS>") {
			ASSERT_EQ(got, v + k);
			hits++;
		}
	}
	EXPECT_EQ(static_cast<uint64_t>(hits), stats().curr_items);
	EXPECT_EQ(get("key" + std::to_string(n - 1)), v + "key" + std::to_string(n - 1));
	EXPECT_LE(st.bytes, st.heap_bytes);
}

INSTANTIATE_TEST_SUITE_P(Policies, SegEviction,
			 ::testing::Values(ENGINE_EVICT_MERGE, ENGINE_EVICT_FIFO,
					   ENGINE_EVICT_RANDOM));

TEST_F(Seg, MergeKeepsFrequentlyReadItems)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	std::string v(100, 'v');
	// A small hot set read often, and a stream of cold keys.
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set("hot" + std::to_string(i), v), ENGINE_OK);
	for (int i = 0; i < 100000; i++) {
		ASSERT_EQ(set("cold" + std::to_string(i), v), ENGINE_OK);
		if (i % 10 == 0)
			get("hot" + std::to_string((i / 10) % 100));
	}
	EXPECT_GT(stats().seg_merged, 0u);
	int hot_hits = 0;
	for (int i = 0; i < 100; i++)
		hot_hits += get("hot" + std::to_string(i)) == v;
	EXPECT_GE(hot_hits, 90);
}

TEST_F(Seg, NoEvictionRefusesWhenFull)
{
	make(2u << 20, ENGINE_EVICT_NONE, 64u << 10);
	std::string v(1000, 'v');
	int rc = ENGINE_OK, i = 0;
	for (; i < 100000 && rc == ENGINE_OK; i++)
		rc = set("k" + std::to_string(i), v);
	EXPECT_EQ(rc, ENGINE_NO_MEMORY);
	EXPECT_EQ(stats().evictions, 0u);
	EXPECT_EQ(get("k0"), v); // nothing was evicted
	EXPECT_GT(counter(ENGINE_C_set_no_memory), 0u);
}

TEST_F(Seg, OverflowChainsHoldEveryKey)
{
	make(32u << 20, ENGINE_EVICT_MERGE, 0, 0, 6); // 64 head buckets
	for (int i = 0; i < 20000; i++)
		ASSERT_EQ(set("k" + std::to_string(i), std::to_string(i)), ENGINE_OK);
	for (int i = 0; i < 20000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), std::to_string(i));
	for (int i = 0; i < 20000; i += 2)
		ASSERT_EQ(engine_delete(w, ("k" + std::to_string(i)).data(),
					("k" + std::to_string(i)).size(), 0), ENGINE_OK);
	for (int i = 0; i < 20000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), i % 2 ? std::to_string(i) : "<MISS>");
	EXPECT_GT(stats().hash_overflow, 20000u / 8);
	EXPECT_EQ(stats().curr_items, 10000u);
}

TEST_F(Seg, ReadsTakeNoLocks)
{
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(set("k" + std::to_string(i), "v"), ENGINE_OK);
	struct engine_stats before = stats();
	for (int i = 0; i < 10000; i++)
		get("k" + std::to_string(i % 1000));
	struct engine_stats after = stats();
	EXPECT_EQ(after.counters[ENGINE_C_lock_bucket], before.counters[ENGINE_C_lock_bucket]);
	EXPECT_EQ(after.counters[ENGINE_C_lock_segment], before.counters[ENGINE_C_lock_segment]);
	// Writes: one bucket lock each, segment locks once per segment.
	for (int i = 0; i < 10000; i++)
		ASSERT_EQ(set("w" + std::to_string(i), "v"), ENGINE_OK);
	struct engine_stats w2 = stats();
	EXPECT_EQ(w2.counters[ENGINE_C_lock_bucket] - after.counters[ENGINE_C_lock_bucket], 10000u);
	EXPECT_LT(w2.counters[ENGINE_C_lock_segment] - after.counters[ENGINE_C_lock_segment], 100u);
}

TEST_F(Seg, WorkerCountersSurviveWorkerDestroy)
{
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	get("k");
	engine_worker_destroy(w);
	w = engine_worker_create(e);
	ASSERT_NE(w, nullptr);
	EXPECT_EQ(counter(ENGINE_C_get_hits), 1u);
	EXPECT_EQ(counter(ENGINE_C_set_stored), 1u);
	EXPECT_EQ(get("k"), "v");
}

TEST_F(Seg, MemoryBudgetCoversEverything)
{
	make(64u << 20);
	struct engine_stats st = stats();
	EXPECT_LE(st.heap_bytes + st.table_bytes + st.meta_bytes, 64u << 20);
	EXPECT_GT(st.heap_bytes, 56u << 20);
}

// The seed experiment: integer keys 1..N as decimal strings with 1-byte
// values, inserted into 64 MB until the first eviction.
TEST_F(Seg, FillsThreeMillionTinyObjectsIn64MB)
{
	make(64u << 20);
	uint64_t resident = 0;
	char key[24];
	for (uint64_t n = 1; n < 5000000; n++) {
		int len = snprintf(key, sizeof(key), "%llu", static_cast<unsigned long long>(n));
		ASSERT_EQ(engine_store(w, ENGINE_SET, key, len, "x", 1, 0, 0, 0, nullptr), ENGINE_OK);
		struct engine_stats st = stats();
		if (st.evictions > 0)
			break;
		resident = st.curr_items;
		ASSERT_EQ(resident, n); // nothing lost before the first eviction
	}
	EXPECT_GE(resident, 3000000u);
	printf("resident at first eviction: %llu objects (%.1f bytes each)\n",
	       static_cast<unsigned long long>(resident), (64.0 * 1048576) / resident);
}

// ---- concurrency -----------------------------------------------------------

TEST_F(Seg, ConcurrentIncrementsAreExact)
{
	const int threads = 4, per = 5000;
	ASSERT_EQ(set("ctr", "0"), ENGINE_OK);
	std::vector<std::thread> ts;
	for (int t = 0; t < threads; t++)
		ts.emplace_back([&] {
			struct engine_worker *tw = engine_worker_create(e);
			for (int i = 0; i < per; i++) {
				uint64_t v;
				ASSERT_EQ(engine_arith(tw, "ctr", 3, true, 1, &v, nullptr), ENGINE_OK);
			}
			engine_worker_destroy(tw);
		});
	for (auto &t : ts)
		t.join();
	EXPECT_EQ(get("ctr"), std::to_string(threads * per));
}

TEST_F(Seg, ConcurrentCasLoopsLoseNoUpdate)
{
	const int threads = 4, per = 2000;
	ASSERT_EQ(set("c", "0"), ENGINE_OK);
	std::vector<std::thread> ts;
	for (int t = 0; t < threads; t++)
		ts.emplace_back([&] {
			struct engine_worker *tw = engine_worker_create(e);
			char buf[32];
			for (int i = 0; i < per; i++) {
				for (;;) {
					struct engine_item it;
					ASSERT_EQ(engine_get(tw, "c", 1, ENGINE_NO_TOUCH, buf, sizeof(buf), &it),
						  ENGINE_OK);
					std::string next = std::to_string(std::stoull(std::string(buf, it.vlen)) + 1);
					int rc = engine_store(tw, ENGINE_CAS, "c", 1, next.data(), next.size(), 0, 0,
							      it.cas, nullptr);
					if (rc == ENGINE_OK)
						break;
					ASSERT_EQ(rc, ENGINE_EXISTS);
				}
			}
			engine_worker_destroy(tw);
		});
	for (auto &t : ts)
		t.join();
	EXPECT_EQ(get("c"), std::to_string(threads * per));
}

TEST_F(Seg, ConcurrentAppendsAndAddsAreAtomic)
{
	const int threads = 4, per = 500;
	ASSERT_EQ(set("log", ""), ENGINE_OK);
	std::atomic<int> add_wins{0};
	std::vector<std::thread> ts;
	for (int t = 0; t < threads; t++)
		ts.emplace_back([&, t] {
			struct engine_worker *tw = engine_worker_create(e);
			char c = static_cast<char>('a' + t);
			for (int i = 0; i < per; i++) {
				ASSERT_EQ(engine_store(tw, ENGINE_APPEND, "log", 3, &c, 1, 0, 0, 0, nullptr),
					  ENGINE_OK);
				std::string k = "add" + std::to_string(i);
				if (engine_store(tw, ENGINE_ADD, k.data(), k.size(), &c, 1, 0, 0, 0, nullptr) ==
				    ENGINE_OK)
					add_wins++;
			}
			engine_worker_destroy(tw);
		});
	for (auto &t : ts)
		t.join();
	std::string log = get("log");
	EXPECT_EQ(log.size(), static_cast<size_t>(threads * per));
	for (int t = 0; t < threads; t++)
		EXPECT_EQ(std::count(log.begin(), log.end(), 'a' + t), per);
	EXPECT_EQ(add_wins.load(), per); // exactly one add per key wins
}

// Writers overwrite a small key set while the cache evicts constantly;
// readers check every value they get is one that was written, whole.
TEST_F(Seg, ReadersNeverSeeTornValuesUnderEviction)
{
	make(2u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> reads{0}, bad{0};
	auto value_of = [](int key, uint64_t version) {
		std::string v = "k" + std::to_string(key) + ":" + std::to_string(version) + ":";
		v.resize(64 + (version % 200), static_cast<char>('a' + version % 26));
		return v;
	};
	auto valid = [&](int key, const std::string &v) {
		size_t a = v.find(':'), b = v.find(':', a + 1);
		if (a == std::string::npos || b == std::string::npos || v.substr(0, a) != "k" + std::to_string(key))
			return false;
		return v == value_of(key, std::stoull(v.substr(a + 1, b - a - 1)));
	};
	std::vector<std::thread> ts;
	for (int t = 0; t < 2; t++)
		ts.emplace_back([&, t] {
			struct engine_worker *tw = engine_worker_create(e);
			for (uint64_t i = 0; i < 60000; i++) {
				int key = static_cast<int>((i * 7 + t) % 300);
				std::string k = "key" + std::to_string(key), v = value_of(key, i);
				ASSERT_EQ(engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
						       0, 0, nullptr), ENGINE_OK);
				// a stream of filler keeps eviction busy
				std::string f = "fill" + std::to_string(t) + "_" + std::to_string(i);
				ASSERT_EQ(engine_store(tw, ENGINE_SET, f.data(), f.size(), v.data(), v.size(), 0,
						       0, 0, nullptr), ENGINE_OK);
			}
			engine_worker_destroy(tw);
		});
	for (int t = 0; t < 2; t++)
		ts.emplace_back([&] {
			struct engine_worker *tw = engine_worker_create(e);
			std::string buf(512, '\0');
			while (!stop) {
				for (int key = 0; key < 300; key++) {
					std::string k = "key" + std::to_string(key);
					struct engine_item it;
					int rc = engine_get(tw, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
							    buf.size(), &it);
					if (rc == ENGINE_OK) {
						reads++;
						if (!valid(key, buf.substr(0, it.vlen)))
							bad++;
					}
				}
			}
			engine_worker_destroy(tw);
		});
	ts[0].join();
	ts[1].join();
	stop = true;
	ts[2].join();
	ts[3].join();
	EXPECT_EQ(bad.load(), 0u);
	EXPECT_GT(reads.load(), 0u);
	EXPECT_GT(stats().evictions, 0u);
}

TEST_F(Seg, ConcurrentWritersOnSameKeysWithSweepAndFlush)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	std::atomic<bool> stop{false};
	std::vector<std::thread> ts;
	for (int t = 0; t < 3; t++)
		ts.emplace_back([&, t] {
			struct engine_worker *tw = engine_worker_create(e);
			for (int i = 0; i < 30000; i++) {
				std::string k = "k" + std::to_string(i % 500);
				std::string v(50 + i % 100, static_cast<char>('a' + t));
				int rc = engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
						      i % 3, 0, nullptr);
				ASSERT_EQ(rc, ENGINE_OK);
				uint64_t n;
				engine_arith(tw, "n", 1, true, 1, &n, nullptr);
			}
			engine_worker_destroy(tw);
		});
	ts.emplace_back([&] {
		while (!stop) {
			clock.advance(1);
			engine_expire(e);
			if (clock.now % 7 == 0)
				engine_flush_all(e, 0);
			std::this_thread::yield();
		}
	});
	for (int t = 0; t < 3; t++)
		ts[t].join();
	stop = true;
	ts[3].join();
	// Still consistent: every resident key reads back whole.
	int hits = 0;
	for (int i = 0; i < 500; i++) {
		std::string v = get("k" + std::to_string(i));
		if (v == "<MISS>")
			continue;
		hits++;
		ASSERT_GE(v.size(), 50u);
		ASSERT_EQ(v.find_first_not_of(v[0]), std::string::npos);
	}
	EXPECT_LE(static_cast<uint64_t>(hits), stats().curr_items);
}

} // namespace
