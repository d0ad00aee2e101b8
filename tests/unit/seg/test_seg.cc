// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of what is lib/seg's own (the Segcache engine): its item
// size limit, configuration and segment layout, the expiration sweep,
// eviction and merge, lock-free reads, memory accounting, and writers
// racing on the same keys from several threads. What both engines promise
// is in tests/unit/engine/test_engine_contract.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

namespace {

using seg_fixture::SegFixture;

class Seg : public SegFixture {
protected:
	void SetUp() override { make(); }

	int set(const std::string &k, const std::string &v, int64_t exptime = 0, uint32_t flags = 0,
		enum engine_store_mode mode = ENGINE_SET, uint64_t cas = 0,
		uint64_t *cas_out = nullptr)
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
		int rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(), buf.size(),
				    &it);

		if (rc == ENGINE_BUF_SMALL) {
			buf.resize(it.vlen);
			rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(),
					buf.size(), &it);
		}
		if (rc == ENGINE_MISS)
			return "<MISS>";
		EXPECT_EQ(rc, ENGINE_OK);
		if (out)
			*out = it;
		buf.resize(it.vlen);
		return buf;
	}
	uint64_t counter(enum engine_worker_counter c) { return stats().counters[c]; }
};

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
	// an item spans at most 64 segments (seg_append.c)
	cfg.segment_size = 1 << 12;
	cfg.item_max = (64 << 12) + 1;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("more than 64 segments"), std::string::npos) << err;
	cfg.item_max = 64 << 12;
	struct engine *e64 = seg_create(&cfg, err, sizeof(err));
	EXPECT_NE(e64, nullptr) << err;
	engine_destroy(e64);
	cfg.segment_size = 0;
	cfg.item_max = (4u << 20) + 1;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	cfg.item_max = 4u << 20; // -I 4m is the largest
	struct engine *e4 = seg_create(&cfg, err, sizeof(err));
	EXPECT_NE(e4, nullptr) << err;
	engine_destroy(e4);
	// A value that is no policy of the table is refused, not run as none.
	cfg.eviction = ENGINE_EVICT_COUNT;
	EXPECT_EQ(seg_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("eviction"), std::string::npos) << err;
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
	// Every key was written once, and nothing expired or was deleted: the
	// keys gone are exactly the evictions counted.
	EXPECT_EQ(static_cast<uint64_t>(n - hits), st.evictions);
	EXPECT_EQ(st.expired, 0u);
	EXPECT_EQ(get("key" + std::to_string(n - 1)), v + "key" + std::to_string(n - 1));
	// The heap stays bounded: live bytes within it, no write refused.
	EXPECT_LE(st.bytes, st.heap_bytes);
	EXPECT_EQ(st.counters[ENGINE_C_set_no_memory], 0u);
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

// A survivor's read count is halved rounded up (seg_merge_freq_after): a
// key read once is still "read" in its destination, above the unread ones,
// until a merge finds it unread. Halved down to 0, each key read once was
// at its next merge as evictable as one never read (issue 36).
TEST_F(Seg, AKeyReadOnceStaysReadThroughAMerge)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	const std::string v(100, 'v');
	struct engine_item it = {};
	struct seg_test_place p0 = {}, p = {};

	ASSERT_EQ(set("once", v), ENGINE_OK);
	EXPECT_EQ(get("once", &it), v); // its one read
	EXPECT_FALSE(it.fetched_before);
	ASSERT_EQ(seg_test_locate(e, "once", 4, &p0), 0);
	// unread keys until a merge has moved it (it is the only read item:
	// it survives every run it is in)
	for (int i = 0; i < 200000; i++) {
		ASSERT_EQ(set("cold" + std::to_string(i), v), ENGINE_OK);
		ASSERT_EQ(seg_test_locate(e, "once", 4, &p), 0) << i;
		if (p.seg != p0.seg || p.off != p0.off)
			break;
	}
	ASSERT_TRUE(p.seg != p0.seg || p.off != p0.off) << "never merged";
	EXPECT_EQ(get("once", &it), v);
	EXPECT_TRUE(it.fetched_before); // still read after the merge
}

// A TTL that few keys have keeps their share of the memory. Merge used
// to give every TTL chain with a run the same number of passes, so a
// chain with few of the writes shrank (on Twitter-shaped B, to the two
// segments a run needs) and its keys were merged away young; now the
// oldest of equally dense runs goes first, and a chain gets passes as it
// gets writes.
// Look-aside traffic, every key equally popular: six TTLs of 16,000 keys
// and one of 8,000, in 128 segments that hold about 60% of them.
TEST_F(Seg, MergeKeepsTheShareOfATtlFewKeysHave)
{
	make(8u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	const std::string v(100, 'v');
	const int64_t busy_ttl[6] = { 3600, 7200, 14400, 28800, 86400, 172800 };
	const unsigned busy = 6 * 16000, quiet = 8000;
	uint64_t x = 88172645463325252ull;
	unsigned gets[2] = { 0, 0 }, hits[2] = { 0, 0 };

	for (unsigned step = 0; step < 1200000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		const unsigned k = (unsigned)(x % (busy + quiet));
		const bool is_quiet = k >= busy;
		const std::string key = (is_quiet ? "q" : "b") + std::to_string(k);
		const bool hit = get(key) != "<MISS>";

		if (!hit) {
			ASSERT_EQ(set(key, v, is_quiet ? 604800 : busy_ttl[k % 6]), ENGINE_OK);
		}
		if (step >= 600000) {
			gets[is_quiet]++;
			hits[is_quiet] += hit;
		}
	}
	const double busy_hr = (double)hits[0] / gets[0], quiet_hr = (double)hits[1] / gets[1];

	EXPECT_GT(stats().seg_merged, 0u);
	EXPECT_GT(busy_hr, 0.2);
	// (0.54 against 0.65; taking turns, 0.33 against 0.67)
	EXPECT_GT(quiet_hr, busy_hr * 0.7) << "busy " << busy_hr << ", quiet " << quiet_hr;
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
	// 20000 items need 20000 / 7 buckets: the table grew from 64 head
	// buckets (to at most 1024), overflow buckets hold the rest.
	EXPECT_GT(stats().hash_overflow, 20000u / 7 - stats().hash_buckets);
	for (int i = 0; i < 20000; i += 2)
		ASSERT_EQ(engine_delete(w, ("k" + std::to_string(i)).data(),
					("k" + std::to_string(i)).size(), 0), ENGINE_OK);
	for (int i = 0; i < 20000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), i % 2 ? std::to_string(i) : "<MISS>");
	// Chains stay packed and give emptied buckets back: what is left
	// needs about 10000 / 7 overflow buckets (plus under one per chain).
	EXPECT_LT(stats().hash_overflow, 10000u / 7 + stats().hash_buckets);
	EXPECT_EQ(stats().curr_items, 10000u);
	// The freed buckets are used again before new ones are carved.
	for (int i = 0; i < 20000; i += 2)
		ASSERT_EQ(set("k" + std::to_string(i), std::to_string(i)), ENGINE_OK);
	for (int i = 0; i < 20000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), std::to_string(i));
	EXPECT_EQ(stats().curr_items, 20000u);
}

/* lib/seg/seg_table.h (C only): the table hash of a key; keys with the
 * same hash share their chain and their tag. */
extern "C" uint32_t seg_hash_of(const void *key, size_t klen);

/* A key is compared whole whatever its length (seg_read.c compares 8 to
 * 32 bytes by overlapping words): for keys of several lengths, two keys
 * that differ only in the 8 bytes at one place (the first word, the last,
 * a middle one) and share their hash, so their chain and tag: the one
 * never stored misses, and each stored one reads back as its own. */
TEST_F(Seg, KeysSharingChainAndTagAreComparedWhole)
{
	const size_t lens[] = { 5, 8, 12, 17, 24, 33 };
	unsigned pairs = 0, searches = 0;

	make(32u << 20, ENGINE_EVICT_MERGE);
	for (size_t len : lens) {
		/* the places: the whole key when it is shorter than a word, else
		 * the first word, a middle one and the last, each once */
		std::vector<size_t> ats = { 0 };

		for (size_t x : { len < 8 ? 0 : (len - 8) / 2, len < 8 ? 0 : len - 8 })
			if (std::find(ats.begin(), ats.end(), x) == ats.end())
				ats.push_back(x);
		for (size_t at : ats) {
			auto key = [&](uint64_t i) {
				std::string k(len, 'x');
				/* splitmix64: 64 bits that vary (CRC is linear: keys
				 * differing in 32 bits or fewer never collide) */
				uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;

				z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
				z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
				z ^= z >> 31;
				for (size_t j = 0; j < 8 && at + j < len; j++)
					k[at + j] = (char)(z >> (8 * j));
				return k;
			};
			std::vector<std::pair<uint32_t, uint64_t>> h;
			std::string a, b;

			searches++;
			/* a birthday search over 2^32 hashes: ~4.6 pairs expected */
			for (uint64_t i = 0; i < 200000; i++) {
				std::string k = key(i);

				h.emplace_back(seg_hash_of(k.data(), k.size()), i);
			}
			std::sort(h.begin(), h.end());
			for (size_t i = 1; i < h.size() && a.empty(); i++)
				if (h[i].first == h[i - 1].first && key(h[i].second) != key(h[i - 1].second)) {
					a = key(h[i - 1].second);
					b = key(h[i].second);
				}
			if (a.empty())
				continue;
			pairs++;
			ASSERT_EQ(set(a, "a" + std::to_string(len)), ENGINE_OK);
			ASSERT_EQ(get(b), "<MISS>") << len << " " << at;
			ASSERT_EQ(set(b, "b" + std::to_string(len)), ENGINE_OK);
			ASSERT_EQ(get(a), "a" + std::to_string(len)) << len << " " << at;
			ASSERT_EQ(get(b), "b" + std::to_string(len)) << len << " " << at;
		}
	}
	/* each search finds a pair with probability ~0.99 */
	EXPECT_GE(pairs, searches - 2);
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
		ASSERT_EQ(engine_store(w, ENGINE_SET, key, len, "x", 1, 0, 0, 0, nullptr),
			  ENGINE_OK);
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
				ASSERT_EQ(engine_arith(tw, "ctr", 3, true, 1, &v, nullptr),
					  ENGINE_OK);
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
					ASSERT_EQ(engine_get(tw, "c", 1, ENGINE_NO_TOUCH, buf,
							     sizeof(buf), &it),
						  ENGINE_OK);
					std::string next = std::to_string(
						std::stoull(std::string(buf, it.vlen)) + 1);
					int rc = engine_store(tw, ENGINE_CAS, "c", 1, next.data(),
							      next.size(), 0, 0, it.cas, nullptr);
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
				ASSERT_EQ(engine_store(tw, ENGINE_APPEND, "log", 3, &c, 1, 0, 0, 0,
						       nullptr),
					  ENGINE_OK);
				std::string k = "add" + std::to_string(i);
				if (engine_store(tw, ENGINE_ADD, k.data(), k.size(), &c, 1, 0, 0, 0,
						 nullptr) == ENGINE_OK)
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
		if (a == std::string::npos || b == std::string::npos ||
		    v.substr(0, a) != "k" + std::to_string(key))
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
				ASSERT_EQ(engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(),
						       v.size(), 0, 0, 0, nullptr),
					  ENGINE_OK);
				// a stream of filler keeps eviction busy
				std::string f =
					"fill" + std::to_string(t) + "_" + std::to_string(i);
				ASSERT_EQ(engine_store(tw, ENGINE_SET, f.data(), f.size(), v.data(),
						       v.size(), 0, 0, 0, nullptr),
					  ENGINE_OK);
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
					int rc = engine_get(tw, k.data(), k.size(), ENGINE_NO_TOUCH,
							    buf.data(), buf.size(), &it);
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
				int rc = engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(),
						      v.size(), 0, i % 3, 0, nullptr);
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

// Issue 9, small heaps and many TTLs: open segments are shared between
// workers per TTL bucket and capped at a quarter of the heap, so what they
// hold does not grow with the worker count or the number of TTLs written;
// an item that goes into another bucket's open segment is never late.
TEST_F(Seg, OpenSegmentsStayBoundedWithManyWorkersAndTtls)
{
	const int64_t ttls[] = { 10, 30, 60, 300, 900, 1800, 3600, 14400, 86400, 259200, 604800 };
	const int64_t t0 = clock.now;
	make(16u << 20, ENGINE_EVICT_MERGE, 1u << 20); // 14 segments of 1 MiB
	const uint64_t nseg = stats().seg_total;
	std::vector<struct engine_worker *> ws{ w };
	for (int i = 0; i < 7; i++) {
		ws.push_back(engine_worker_create(e));
		ASSERT_NE(ws.back(), nullptr);
	}
	const std::string v(300, 'v');
	uint64_t most_open = 0;
	for (int i = 0; i < 60000; i++) {
		const std::string k = "k" + std::to_string(i);
		struct engine_worker *wk = ws[i % ws.size()];
		ASSERT_EQ(engine_store(wk, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
				       ttls[i % 11], 0, nullptr),
			  ENGINE_OK);
		if (i % 1000 == 999)
			most_open = std::max(most_open, stats().seg_open);
	}
	struct engine_stats st = stats();
	EXPECT_LE(most_open, std::max<uint64_t>(2, nseg / 4));
	EXPECT_EQ(st.seg_open, st.seg_open_shared);
	EXPECT_LE(st.seg_open_bytes, st.seg_open * st.seg_size);
	// The heap is mostly live items, not open or dead space.
	EXPECT_GT(st.bytes, (nseg - 4) * st.seg_size / 2);
	// No item outlives its TTL (some of those in another bucket's segment
	// die early).
	for (int i = 0; i < 60000; i += 7) {
		struct engine_item it = {};
		if (get("k" + std::to_string(i), &it) != "<MISS>") {
			EXPECT_GT(it.expires_at, 0);
			EXPECT_LE(it.expires_at, t0 + ttls[i % 11]) << "k" << i;
		}
	}
	for (size_t i = 1; i < ws.size(); i++)
		engine_worker_destroy(ws[i]);
}

TEST(SegLayout, SmallHeapsGetSmallerSegments)
{
	// 256 segments at least, 1 MiB at most, 64 KiB at least
	EXPECT_EQ(seg_segment_size_for(1ull << 30), 1u << 20);
	EXPECT_EQ(seg_segment_size_for(256u << 20), 1u << 20);
	EXPECT_EQ(seg_segment_size_for(255u << 20), 512u << 10);
	EXPECT_EQ(seg_segment_size_for(64u << 20), 256u << 10);
	EXPECT_EQ(seg_segment_size_for(32u << 20), 128u << 10);
	EXPECT_EQ(seg_segment_size_for(16u << 20), 64u << 10);
	EXPECT_EQ(seg_segment_size_for(4u << 20), SEG_SMALL_HEAP_MIN_SIZE);
	// Never below the smallest, however small the heap.
	EXPECT_EQ(seg_segment_size_for(1u << 20), SEG_SMALL_HEAP_MIN_SIZE);
}
