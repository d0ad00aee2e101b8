// SPDX-License-Identifier: BSD-3-Clause
// lib/mrc: the sampler (its rate, how it adapts, its memory bound), the
// hot keys, and a miniature cache against the real lib/seg engine on the
// same stream (FIFO: exactly equal at rate 1.0; merge: close).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "mrc/mrc_private.h"
#include "seg/seg.h"
}

namespace {

uint32_t fnv1a(const std::string &k)
{
	uint32_t h = 2166136261u;

	for (unsigned char ch : k)
		h = (h ^ ch) * 16777619u;
	return h;
}

struct engine_access access_of(const std::string &k, enum engine_access_op op, bool hit,
			       uint32_t size, int64_t now)
{
	struct engine_access a = {};

	a.key = k.data();
	a.klen = (uint32_t)k.size();
	a.sample_hash = engine_sample_hash(fnv1a(k));
	a.size = size;
	a.hit = hit;
	a.op = (uint8_t)op;
	a.now = now;
	return a;
}

// records_per_key: MRC_SIZES + 1 never sheds a key for records; 0 is
// the server's default.
struct mrc *make_mrc(uint32_t max_keys, uint32_t nseg = 64, uint32_t seg_size = 4096,
		     enum engine_eviction ev = ENGINE_EVICT_FIFO, double max_rate = 1.0,
		     uint32_t records_per_key = MRC_SIZES + 1)
{
	struct mrc_config cfg = {};
	char err[256] = "";

	cfg.memory = (size_t)nseg * seg_size;
	cfg.seg_size = seg_size;
	cfg.nseg = nseg;
	cfg.eviction = ev;
	cfg.budget = SIZE_MAX;
	cfg.max_keys = max_keys;
	cfg.max_rate = max_rate;
	cfg.records_per_key = records_per_key;
	struct mrc *m = mrc_create(&cfg, err, sizeof(err));
	EXPECT_NE(m, nullptr) << err;
	return m;
}

std::string key_of(unsigned i)
{
	char b[32];

	snprintf(b, sizeof(b), "key:%07u", i);
	return b;
}

} // namespace

// Below max_keys every key is sampled (rate 1.0); past it the sample
// stays full, holds exactly the stream's keys below the threshold, and
// the rate estimates the fraction of keys it holds.
TEST(MrcSampler, RateFollowsTheSample)
{
	const unsigned max = 512, n = 50000;
	struct mrc *m = make_mrc(max);
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;

	ASSERT_NE(m, nullptr);
	for (unsigned i = 0; i < max; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_SET, true, 100, 1000);
		mrc_access(m, &a);
	}
	mrc_curve(m, pts, &info);
	EXPECT_EQ(info.rate, 1.0);
	EXPECT_EQ(info.keys, max);
	for (unsigned i = max; i < n; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_SET, true, 100, 1000);
		mrc_access(m, &a);
	}
	mrc_curve(m, pts, &info);
	EXPECT_LE(info.keys, max);
	EXPECT_GE(info.keys, max - max / 64 - 1);
	EXPECT_LT(info.rate, 1.0);
	unsigned below = 0;
	for (unsigned i = 0; i < n; i++)
		below += engine_sample_hash(fnv1a(key_of(i))) < m->s.threshold;
	EXPECT_EQ(below, info.keys);
	// Spatial sampling: the rate estimates the fraction of keys held.
	EXPECT_NEAR(info.rate * n, (double)info.keys, 0.2 * info.keys);
	mrc_destroy(m);
}

// The item records are one pool for the ten caches, 6 per sampled key by
// default: keys that every cache holds (a working set that fits in 1/4
// of -m) need up to 10, and the sample sheds keys, as when its key slots
// run out, rather than leave an item out of a cache.
TEST(MrcSampler, ShedsKeysWhenTheRecordsRunOut)
{
	const unsigned n = 512;
	struct mrc *m = make_mrc(n, 64, 4096, ENGINE_EVICT_FIFO, 1.0, 0);
	ASSERT_NE(m, nullptr);
	EXPECT_EQ(m->pool.n, n * MRC_RECORDS_PER_KEY);
	for (unsigned round = 0; round < 4; round++)
		for (unsigned i = 0; i < n; i++) {
			std::string k = key_of(i);
			struct engine_access a =
				access_of(k, round ? ENGINE_ACCESS_GET : ENGINE_ACCESS_SET, true, 100,
					  1000);
			mrc_access(m, &a);
		}
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;
	mrc_curve(m, pts, &info);
	EXPECT_LT(info.rate, 1.0);
	EXPECT_LT(info.keys, n);
	EXPECT_GT(info.keys, n / 2); // 6 of the 9 or 10 records a key needs
	unsigned below = 0, held = 0;
	for (unsigned i = 0; i < n; i++)
		below += engine_sample_hash(fnv1a(key_of(i))) < m->s.threshold;
	EXPECT_EQ(below, info.keys);
	for (uint32_t id = 0; id < m->s.max_keys; id++)
		held += m->s.keys[id].klen && m->s.keys[id].loc[MRC_SIZES - 1] != MRC_NONE;
	EXPECT_EQ(held, info.keys); // every key left is in the 4x cache
	EXPECT_LE(m->pool.nfree, m->pool.n);
	EXPECT_EQ(pts[MRC_SIZES - 1].misses, 0u); // and the 4x cache hit every get
	mrc_destroy(m);
}

// The threshold only goes down, and only once the sample is full; an
// attached engine's threshold follows it.
TEST(MrcSampler, AdaptsDownOnly)
{
	struct mrc *m = make_mrc(256);
	uint64_t last = MRC_HASH_SPACE;
	struct engine fake = {};

	ASSERT_NE(m, nullptr);
	mrc_attach(m, &fake);
	EXPECT_EQ(fake.sample_below, MRC_HASH_SPACE);
	for (unsigned i = 0; i < 20000; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_GET, false, 0, 1000);

		mrc_access(m, &a);
		EXPECT_LE(m->s.threshold, last);
		if (i < 256) {
			EXPECT_EQ(m->s.threshold, MRC_HASH_SPACE);
		}
		last = m->s.threshold;
		EXPECT_EQ(fake.sample_below, m->s.threshold);
		EXPECT_LE(m->s.nkeys, 256u);
	}
	EXPECT_LT(last, MRC_HASH_SPACE / 8);
	mrc_destroy(m);
}

// Sized from the budget (1% of -m by default): never over it where 1%
// holds the floor of MRC_FLOOR_KEYS; below, the floor, starting at the
// floor's higher rate (MRC_FLOOR_MAX_RATE). A budget given is kept; too small a one for a
// useful sample is an error, not a crash.
TEST(MrcSampler, MemoryWithinBudget)
{
	for (size_t mib : { 8, 16, 64, 1024 }) {
		struct mrc_config cfg = {};
		char err[256] = "";

		cfg.memory = mib << 20;
		cfg.seg_size = 1u << 20;
		cfg.nseg = (uint32_t)mib;
		cfg.eviction = ENGINE_EVICT_MERGE;
		struct mrc *m = mrc_create(&cfg, err, sizeof(err));
		ASSERT_NE(m, nullptr) << err;
		struct mrc_point pts[MRC_SIZES];
		struct mrc_info info;
		mrc_curve(m, pts, &info);
		// The floor: MRC_FLOOR_KEYS within a 16th of -m, at least
		// MRC_FLOOR_MIN_KEYS (-m 8: 2,048; -m 16: what 1 MiB holds).
		EXPECT_GE(info.max_keys, (uint32_t)MRC_FLOOR_MIN_KEYS) << mib;
		if (info.max_keys > MRC_FLOOR_MIN_KEYS && info.max_keys <= MRC_FLOOR_KEYS) {
			EXPECT_LE(info.memory, cfg.memory / 16) << mib;
		}
		if (mib <= 8) {
			EXPECT_EQ(info.max_keys, (uint32_t)MRC_FLOOR_MIN_KEYS) << mib;
		}
		if (info.max_keys > MRC_FLOOR_KEYS) {
			EXPECT_LE(info.memory, cfg.memory / 100) << mib;
			// It starts at the highest rate, 1/128 by default.
			EXPECT_DOUBLE_EQ(info.rate, (double)((uint64_t)(4294967296.0 / 128) + 1) /
							    4294967296.0);
		} else {
			EXPECT_GT(info.memory, cfg.memory / 100) << mib;
			EXPECT_DOUBLE_EQ(info.rate,
					 (double)((uint64_t)(4294967296.0 * MRC_FLOOR_MAX_RATE) + 1) /
						 4294967296.0);
		}
		// Nothing sampled yet: the key and item records are untouched,
		// out of the RSS; what is counted is the caches' segments and the
		// index (touched as keys arrive), for the floor an eighth of it.
		EXPECT_LT(info.memory_used, info.memory / 2) << mib;
		if (info.max_keys <= MRC_FLOOR_KEYS) {
			EXPECT_LE(info.memory_used, info.memory / 8) << mib;
		}
		// The sizes: 1/8x to 4x, the server's own among them.
		EXPECT_EQ(pts[0].bytes, cfg.memory / 8);
		EXPECT_EQ(pts[MRC_SIZES - 1].bytes, cfg.memory * 4);
		unsigned current = 0;
		for (auto &p : pts)
			current += p.current && p.bytes == cfg.memory;
		EXPECT_EQ(current, 1u);
		mrc_destroy(m);
	}
	// 1% of -m 1024 holds more than the floor: the floor changes nothing.
	{
		struct mrc_config cfg = {};
		char err[256] = "";
		cfg.memory = (size_t)1024 << 20;
		cfg.seg_size = 1u << 20;
		cfg.nseg = 1024;
		cfg.eviction = ENGINE_EVICT_MERGE;
		cfg.floor_keys = 64;
		struct mrc *a = mrc_create(&cfg, err, sizeof(err));
		cfg.floor_keys = 0;
		struct mrc *b = mrc_create(&cfg, err, sizeof(err));
		ASSERT_NE(a, nullptr);
		ASSERT_NE(b, nullptr);
		struct mrc_point pts[MRC_SIZES];
		struct mrc_info ia, ib;
		mrc_curve(a, pts, &ia);
		mrc_curve(b, pts, &ib);
		EXPECT_EQ(ia.max_keys, ib.max_keys);
		EXPECT_EQ(ia.memory, ib.memory);
		mrc_destroy(a);
		mrc_destroy(b);
	}
	struct mrc_config cfg = {};
	char err[256] = "";
	cfg.memory = 1u << 20;
	cfg.seg_size = 1u << 20;
	cfg.nseg = 1;
	cfg.eviction = ENGINE_EVICT_MERGE;
	cfg.budget = cfg.memory / 100;
	EXPECT_EQ(mrc_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("too few"), std::string::npos) << err;
}

// The hot keys come out by request rate, with their sizes.
TEST(MrcHotkeys, TopByRate)
{
	struct mrc *m = make_mrc(4096);
	struct mrc_hotkey hot[MRC_HOTKEYS];

	ASSERT_NE(m, nullptr);
	for (unsigned round = 0; round < 100; round++)
		for (unsigned i = 0; i < 50; i++) {
			std::string k = key_of(i);
			// key i is requested 50 - i times a round
			for (unsigned r = 0; r < 50 - i; r++) {
				struct engine_access a =
					access_of(k, ENGINE_ACCESS_GET, true, 100 + i, 1000 + round);
				mrc_access(m, &a);
			}
		}
	unsigned n = mrc_hotkeys(m, hot, MRC_HOTKEYS, 1100);
	ASSERT_EQ(n, (unsigned)MRC_HOTKEYS);
	for (unsigned i = 0; i < n; i++) {
		EXPECT_EQ(std::string(hot[i].key), key_of(i));
		EXPECT_EQ(hot[i].size, 100 + i);
		EXPECT_EQ(hot[i].requests, 100u * (50 - i));
		EXPECT_DOUBLE_EQ(hot[i].rate, (50.0 - i) * 100 / 100);
	}
	mrc_destroy(m);
}

namespace {

int64_t fixed_clock(void *arg) { return *static_cast<int64_t *>(arg); }

// Replays a look-aside stream (get; set on a miss) against lib/seg with
// an attached mrc whose sample holds every key (rate 1.0), and returns
// the server's and the 1x miniature cache's (gets, misses).
struct Outcome {
	uint64_t server_gets, server_misses, mini_gets, mini_misses;
	double rate;
};

// ttls: key i is written with TTL ttls[i % ttls.size()] (the look-aside
// client's TTL for it); none: every item lives forever.
Outcome replay(enum engine_eviction ev, unsigned keys, unsigned requests, int64_t *now,
	       bool advance, bool note_writes = false, const std::vector<uint32_t> &ttls = {})
{
	struct engine_config cfg = {};
	char err[256] = "";
	Outcome o = {};

	cfg.memory = 640u << 10;
	cfg.segment_size = 4096;
	cfg.eviction = ev;
	cfg.max_workers = 1;
	cfg.hash_power = 12;
	cfg.clock = fixed_clock;
	cfg.clock_arg = now;
	struct engine *e = seg_create(&cfg, err, sizeof(err));
	EXPECT_NE(e, nullptr) << err;
	if (!e)
		return o;
	struct engine_stats st = {};
	engine_stats(e, &st);
	struct mrc_config mc = {};
	mc.memory = cfg.memory;
	mc.seg_size = (uint32_t)st.seg_size;
	mc.nseg = (uint32_t)st.seg_total;
	mc.eviction = ev;
	mc.budget = SIZE_MAX;
	mc.max_keys = keys + 1;
	mc.max_rate = 1.0;
	mc.records_per_key = MRC_SIZES + 1; // rate 1.0 throughout
	struct mrc *m = mrc_create(&mc, err, sizeof(err));
	EXPECT_NE(m, nullptr) << err;
	mrc_attach(m, e);
	struct engine_worker *w = engine_worker_create(e);
	// Items of 128 bytes (2 + 2 + 11 + 113): 32 to a 4 KiB segment, so
	// that no segment ends in a gap the miniature cache would fill.
	std::string val(113, 'v');
	std::mt19937_64 rng(42);
	std::vector<double> cdf(keys);
	double sum = 0;
	for (unsigned i = 0; i < keys; i++)
		cdf[i] = sum += 1.0 / (1.0 + i * 0.05);
	for (unsigned r = 0; r < requests; r++) {
		double x = std::uniform_real_distribution<double>(0, sum)(rng);
		unsigned i = (unsigned)(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
		std::string k = key_of(i);
		struct engine_item it;
		char buf[256];

		if (advance && r % 500 == 0) {
			++*now;
			engine_expire(e); // the server's control thread, once a second
		}
		if (engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf, sizeof(buf), &it) ==
		    ENGINE_MISS) {
			const uint32_t ttl = ttls.empty() ? 0 : ttls[i % ttls.size()];

			EXPECT_EQ(engine_store(w, ENGINE_SET, k.data(), k.size(), val.data(),
					       val.size(), 0, ttl, 0, nullptr),
				  ENGINE_OK);
			if (note_writes) {
				// (as the server's control thread, but at every set)
				engine_stats(e, &st);
				mrc_note_set_bytes(m, st.counters[ENGINE_C_set_bytes]);
			}
		}
	}
	engine_stats(e, &st);
	o.server_gets = st.counters[ENGINE_C_cmd_get];
	o.server_misses = st.counters[ENGINE_C_get_misses];
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;
	mrc_curve(m, pts, &info);
	for (auto &p : pts)
		if (p.current) {
			o.mini_gets = p.gets;
			o.mini_misses = p.misses;
		}
	o.rate = info.rate;
	engine_worker_destroy(w);
	engine_attach_sampler(e, nullptr, nullptr, 0);
	engine_destroy(e);
	mrc_destroy(m);
	return o;
}

} // namespace

// At rate 1.0 the miniature cache at the server's size is the server:
// FIFO over the same segments gives the very same misses.
TEST(MrcMini, EqualsSegAtRateOneFifo)
{
	int64_t now = 1700000000;
	Outcome o = replay(ENGINE_EVICT_FIFO, 4000, 60000, &now, false);

	EXPECT_EQ(o.rate, 1.0);
	EXPECT_EQ(o.mini_gets, o.server_gets);
	EXPECT_GT(o.server_misses, o.server_gets / 10); // the cache is too small: evictions
	EXPECT_EQ(o.mini_misses, o.server_misses);
}

// The same with the server's bytes written given to the curve: with
// every key sampled the sample wrote all of them, so FIFO's segments
// scale by exactly 1 (the engine's set_bytes counts the bytes the
// sampler sees) and the misses are still the server's.
TEST(MrcMini, EqualsSegAtRateOneFifoWithWriteShare)
{
	int64_t now = 1700000000;
	Outcome o = replay(ENGINE_EVICT_FIFO, 4000, 60000, &now, false, true);

	EXPECT_EQ(o.rate, 1.0);
	EXPECT_EQ(o.mini_gets, o.server_gets);
	EXPECT_GT(o.server_misses, o.server_gets / 10);
	EXPECT_EQ(o.mini_misses, o.server_misses);
}

// Merge eviction: the model follows seg_merge.c's choices but not its
// every cursor, so it is close rather than equal.
TEST(MrcMini, CloseToSegAtRateOneMerge)
{
	int64_t now = 1700000000;
	Outcome o = replay(ENGINE_EVICT_MERGE, 4000, 60000, &now, true);

	EXPECT_EQ(o.mini_gets, o.server_gets);
	printf("merge at rate 1.0: server miss ratio %.4f, miniature %.4f\n",
	       (double)o.server_misses / o.server_gets, (double)o.mini_misses / o.mini_gets);
	EXPECT_NEAR((double)o.mini_misses / o.mini_gets, (double)o.server_misses / o.server_gets,
		    0.02);
}

// With TTLs: a miniature cache refills a key it lost as the client does,
// with the TTL the key was set with. It refilled with what was left of
// the server's copy's TTL, which put refills of one TTL into the shorter
// TTL buckets below it, a chain per second of age: chains of nearly empty
// segments that the server does not have (0.16 against the server's 0.12
// at -m on the Twitter-shaped B trace at rate 1.0; docs/bench/journal/mrc-accuracy.md).
TEST(MrcMini, RefillsWithTheKeysTtl)
{
	int64_t now = 1700000000;
	Outcome o = replay(ENGINE_EVICT_MERGE, 4000, 60000, &now, true, false,
			   { 0, 20, 45, 90, 200, 400, 900, 1800 });

	EXPECT_EQ(o.mini_gets, o.server_gets);
	printf("merge with TTLs at rate 1.0: server miss ratio %.4f, miniature %.4f\n",
	       (double)o.server_misses / o.server_gets, (double)o.mini_misses / o.mini_gets);
	EXPECT_GT(o.server_misses, o.server_gets / 20);
	EXPECT_NEAR((double)o.mini_misses / o.mini_gets, (double)o.server_misses / o.server_gets,
		    0.02);
}

// The first n keys (key_of) that m samples.
std::vector<std::string> sampled_keys(const struct mrc *m, size_t n)
{
	std::vector<std::string> keys;

	for (unsigned i = 0; keys.size() < n; i++) {
		std::string k = key_of(i);
		if (access_of(k, ENGINE_ACCESS_GET, true, 0, 0).sample_hash < m->s.threshold)
			keys.push_back(k);
	}
	return keys;
}

// At a small rate a miniature segment holds a few sampled items or less
// than one. Merge keeps the most read item whatever its size: the
// server's rule, that an item must end within the destinations' bytes,
// kept no item larger than a scaled segment, however often it was read.
TEST(MrcMini, MergeKeepsAReadItemLargerThanItsScaledSegment)
{
	const int64_t now = 1000;
	// segments of 512 sampled bytes
	struct mrc *m = make_mrc(4096, 64, 4096, ENGINE_EVICT_MERGE, 1.0 / 8);
	ASSERT_NE(m, nullptr);
	const std::vector<std::string> keys = sampled_keys(m, 401);
	// a hot key of 1,700 bytes (more than the destinations of a run of
	// four, 3 x 512) read after every set of a cold one, which is never
	// read: merges keep the hot one and drop the cold ones
	struct engine_access a = access_of(keys[0], ENGINE_ACCESS_SET, true, 1700, now);
	mrc_access(m, &a);
	for (unsigned i = 1; i < keys.size(); i++) {
		a = access_of(keys[i], ENGINE_ACCESS_SET, true, 1000, now);
		mrc_access(m, &a);
		a = access_of(keys[0], ENGINE_ACCESS_GET, true, 1700, now);
		mrc_access(m, &a);
	}
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;
	mrc_curve(m, pts, &info);
	EXPECT_DOUBLE_EQ(info.rate, (double)m->s.threshold / MRC_HASH_SPACE);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		EXPECT_EQ(pts[i].gets, 400u) << i;
		EXPECT_EQ(pts[i].misses, 0u) << i; // every one a hit
	}
	EXPECT_GT(m->mini[0].seq, 64u); // the 1/8x cache had to evict
	mrc_destroy(m);
}

// Items larger than a miniature segment (at a small rate a segment holds
// seg_size x rate bytes; items keep their size) take the memory they
// fill: no cache holds more live bytes than its size, give or take one
// segment. When such an item's bytes carried over into segments of
// their own, those held no live item and merge freed them for nothing:
// the small caches held several times their size.
TEST(MrcMini, LargeItemsTakeTheMemoryTheyFill)
{
	const int64_t now = 1000;
	// segments of 512 sampled bytes, items of 3,000 (six segments' worth)
	struct mrc *m = make_mrc(4096, 64, 4096, ENGINE_EVICT_MERGE, 1.0 / 8);
	ASSERT_NE(m, nullptr);
	const std::vector<std::string> keys = sampled_keys(m, 400);
	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 0; i < keys.size(); i++) {
			struct engine_access a =
				access_of(keys[i], ENGINE_ACCESS_SET, true, 3000, now + round);
			mrc_access(m, &a);
			if (i % 3 == 0) { // some of them read, so that merge keeps them
				a = access_of(keys[i], ENGINE_ACCESS_GET, true, 3000, now + round);
				mrc_access(m, &a);
			}
		}
	for (unsigned c = 0; c < MRC_SIZES; c++) {
		const struct mini *mc = &m->mini[c];
		const uint64_t unit = 4096 / 8, size = (uint64_t)mc->usable * unit;
		uint64_t live = 0;

		for (const std::string &k : keys) {
			struct engine_access a = access_of(k, ENGINE_ACCESS_GET, true, 0, now);
			const uint32_t id = mrc_sampler_find(&m->s, &a);

			if (id != MRC_NONE && m->s.keys[id].loc[c] != MRC_NONE)
				live += 3000;
		}
		// (a merge's last destination may hold under a segment more,
		// as an item straddling a segment's end does)
		EXPECT_LE(live, size + size / 10 + 3000) << "cache " << c << " of " << size;
		if (size >= 4 * 3000) {
			EXPECT_GE(live, size / 2) << "cache " << c << " of " << size;
		}
	}
	mrc_destroy(m);
}

// The live bytes of a cache's chain for TTL bucket tb.
uint64_t chain_live(const struct mini *c, unsigned tb)
{
	uint64_t live = 0;

	if (c->chain_of[tb] == MINI_NO_CHAIN)
		return 0;
	for (uint32_t s = c->chains[c->chain_of[tb]].head; s != MRC_NONE; s = c->seg[s].next)
		live += c->seg[s].live;
	return live;
}

// Two TTL buckets with the same traffic keep about the same memory, as
// lib/seg's chains do. A merged destination holds its run's straddling
// items whole, past its units; measured against its units alone it
// looked denser than full, merge left such chains alone and drained the
// others, and the chains' memory swung from one to the other.
TEST(MrcMini, MergeKeepsTheChainsShares)
{
	const unsigned ttl[2] = { 3600, 86400 };
	unsigned tb[2];
	// segments of 512 sampled bytes, items of 100 to 400
	struct mrc *m = make_mrc(4096, 64, 4096, ENGINE_EVICT_MERGE, 1.0 / 8);
	ASSERT_NE(m, nullptr);
	const std::vector<std::string> keys = sampled_keys(m, 1500);
	std::mt19937 rng(7);
	double worst[MRC_SIZES];

	for (unsigned t = 0; t < 2; t++)
		tb[t] = mini_ttl_bucket(1000 + ttl[t], 1000);
	for (unsigned c = 0; c < MRC_SIZES; c++)
		worst[c] = 1.0;
	for (unsigned round = 0; round < 60; round++) {
		const int64_t now = 1000 + round;

		for (unsigned i = 0; i < keys.size(); i++) {
			const uint32_t size = 100 + (i * 37) % 300;
			const bool set = round == 0 || rng() % 8 == 0;
			struct engine_access a = access_of(
				keys[i], set ? ENGINE_ACCESS_SET : ENGINE_ACCESS_GET, true, size, now);

			a.expires_at = now + ttl[i % 2];
			// (the lower keys read more often, in both buckets alike)
			if (a.op == ENGINE_ACCESS_SET || rng() % keys.size() >= i / 2)
				mrc_access(m, &a);
		}
		if (round < 10)
			continue;
		for (unsigned c = 0; c < MRC_SIZES; c++) {
			const double l0 = (double)chain_live(&m->mini[c], tb[0]),
				     l1 = (double)chain_live(&m->mini[c], tb[1]);
			const double r = l0 < l1 ? l0 / l1 : l1 / l0;

			if (r < worst[c])
				worst[c] = r;
		}
	}
	// The caches of 128 segments and more (2x to 4x: still evicting)
	// never let one chain fall below a tenth of the other (0.19 to 0.45
	// of it at worst); before, all of them did, to under 1%. (The smaller
	// ones hold a few segments a chain, where one segment more or less is
	// that much already.)
	for (unsigned c = 0; c < MRC_SIZES; c++)
		if (m->mini[c].nseg >= 128) {
			EXPECT_GE(worst[c], 0.1) << "cache " << c;
		}
	mrc_destroy(m);
}

// SHARDS-adj: a sample that saw half the gets its rate promises counts
// the other half as hits, at every size.
TEST(MrcCurve, AdjustedForTheSampleShare)
{
	struct mrc *m = make_mrc(64);
	struct mrc_point raw[MRC_SIZES], adj[MRC_SIZES];
	struct mrc_info info;

	ASSERT_NE(m, nullptr);
	for (unsigned i = 0; i < 40; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_GET, false, 0, 1000);
		mrc_access(m, &a);
	}
	mrc_curve(m, raw, &info);
	ASSERT_EQ(info.rate, 1.0);
	EXPECT_DOUBLE_EQ(raw[0].miss_ratio, 1.0);
	mrc_curve_adjusted(m, 80, adj, &info);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		EXPECT_DOUBLE_EQ(adj[i].miss_ratio, 0.5);
	// fewer gets than the sample saw cannot make misses exceed gets
	mrc_curve_adjusted(m, 10, adj, &info);
	EXPECT_DOUBLE_EQ(adj[0].miss_ratio, 1.0);
	mrc_destroy(m);
}

// The correction with the server's misses: the gets outside the sample
// miss as the server measured them, not all hit. A hot key outside the
// sample that the server misses on every get (deleted, expired, never
// stored) made SHARDS-adj count its gets as hits at every size and put
// the curve at half the server's miss ratio (docs/bench/journal/mrc-accuracy.md).
TEST(MrcCurve, CorrectedWithTheServersMisses)
{
	struct mrc *m = make_mrc(64);
	struct mrc_point adj[MRC_SIZES], cor[MRC_SIZES];
	struct mrc_info info;

	ASSERT_NE(m, nullptr);
	// 40 sampled keys, stored and then read: the server hits, and so
	// does every miniature cache
	for (unsigned i = 0; i < 40; i++) {
		std::string k = key_of(i);
		struct engine_access set = access_of(k, ENGINE_ACCESS_SET, true, 100, 1000);
		struct engine_access get = access_of(k, ENGINE_ACCESS_GET, true, 100, 1000);
		mrc_access(m, &set);
		mrc_access(m, &get);
	}
	// the server saw 40 more gets, all misses, of keys outside the sample
	mrc_curve_adjusted(m, 80, adj, &info);
	mrc_curve_corrected(m, 80, 40, cor, &info);
	ASSERT_EQ(info.rate, 1.0);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		EXPECT_DOUBLE_EQ(adj[i].miss_ratio, 0.0) << i; // SHARDS-adj: all hits
		EXPECT_DOUBLE_EQ(cor[i].miss_ratio, 0.5) << i;
		EXPECT_EQ(cor[i].gets, 40u) << i; // the gets the sample saw
	}
	// 20 sampled gets that the server missed (no fill follows): they are
	// the server's own misses in the sample, not outside it
	for (unsigned i = 40; i < 60; i++) {
		std::string k = key_of(i);
		struct engine_access get = access_of(k, ENGINE_ACCESS_GET, false, 0, 1000);
		mrc_access(m, &get);
	}
	mrc_curve_corrected(m, 100, 40, cor, &info);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		EXPECT_DOUBLE_EQ(cor[i].miss_ratio, 0.4) << i; // 20 in it, 20 outside
	// a sample with more than its share of the server's misses: the
	// surplus comes off, never below no misses
	mrc_curve_corrected(m, 100, 10, cor, &info);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		EXPECT_DOUBLE_EQ(cor[i].miss_ratio, 0.1) << i;
	mrc_curve_corrected(m, 100, 0, cor, &info);
	EXPECT_DOUBLE_EQ(cor[0].miss_ratio, 0.0);
	mrc_destroy(m);
}
