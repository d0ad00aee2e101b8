// SPDX-License-Identifier: BSD-3-Clause
// lib/mrc: the recent window beside the curve since start (two epochs of
// MRC_EPOCH_GETS sampled gets, ended where mrc_note_gets says the server's
// counts are), the floor's memory, touched only as the sample fills, and
// the points the curve names rough.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

extern "C" {
#include "mrc/mrc_private.h"
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
			       int64_t now)
{
	struct engine_access a = {};

	a.key = k.data();
	a.klen = (uint32_t)k.size();
	a.sample_hash = engine_sample_hash(fnv1a(k));
	a.size = 100;
	a.hit = hit;
	a.op = (uint8_t)op;
	a.now = now;
	return a;
}

std::string key_of(unsigned i)
{
	char b[32];

	snprintf(b, sizeof(b), "key:%07u", i);
	return b;
}

// Every key sampled (rate 1.0, a sample larger than the keys), so the
// server's counts are the sample's own.
struct mrc *make_full_mrc()
{
	struct mrc_config cfg = {};
	char err[256] = "";

	cfg.memory = 64 * 4096;
	cfg.seg_size = 4096;
	cfg.nseg = 64;
	cfg.eviction = ENGINE_EVICT_FIFO;
	cfg.budget = SIZE_MAX;
	cfg.max_keys = 1024;
	cfg.max_rate = 1.0;
	cfg.records_per_key = MRC_SIZES + 1;
	struct mrc *m = mrc_create(&cfg, err, sizeof(err));
	EXPECT_NE(m, nullptr) << err;
	return m;
}

// The server's side of the replay: its gets and misses, noted every
// `every` gets as its control thread does once a second.
struct server_counts {
	uint64_t gets = 0, misses = 0;
};

void get_all(struct mrc *m, server_counts &sc, unsigned keys, unsigned gets, bool hit)
{
	for (unsigned i = 0; i < gets; i++) {
		std::string k = key_of(i % keys);
		struct engine_access a = access_of(k, ENGINE_ACCESS_GET, hit, 1000);

		mrc_access(m, &a);
		sc.gets++;
		sc.misses += !hit;
		if (sc.gets % 1000 == 0)
			mrc_note_gets(m, sc.gets, sc.misses);
	}
}

} // namespace

// A phase of hits, then one of misses (the keys deleted, the server
// missing them too): once two epochs of the second have passed, the
// recent window is the second phase alone (every size misses every get,
// and the server's own count over the window agrees), while since start
// the curve still averages both. Before the first epoch ends, the window
// is since start.
TEST(MrcWindow, RecentForgetsTheFirstPhase)
{
	const unsigned keys = 100;
	struct mrc *m = make_full_mrc();
	struct mrc_point since[MRC_SIZES], recent[MRC_SIZES];
	struct mrc_info si, ri;
	server_counts sc;

	ASSERT_NE(m, nullptr);
	for (unsigned i = 0; i < keys; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_SET, true, 1000);
		mrc_access(m, &a);
	}
	get_all(m, sc, keys, MRC_EPOCH_GETS / 2, true);
	mrc_curve_corrected(m, sc.gets, sc.misses, since, &si);
	mrc_curve_recent(m, sc.gets, sc.misses, recent, &ri);
	EXPECT_EQ(ri.epochs, 0u);
	EXPECT_EQ(ri.recent_gets, sc.gets);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		EXPECT_EQ(recent[i].gets, since[i].gets) << i;
		EXPECT_DOUBLE_EQ(recent[i].miss_ratio, since[i].miss_ratio) << i;
		EXPECT_EQ(since[i].misses, 0u) << i;
	}

	get_all(m, sc, keys, 3 * MRC_EPOCH_GETS, true);
	for (unsigned i = 0; i < keys; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_DELETE, true, 1000);
		mrc_access(m, &a);
	}
	const uint64_t first_phase = sc.gets;
	get_all(m, sc, keys, 3 * MRC_EPOCH_GETS, false);

	mrc_curve_corrected(m, sc.gets, sc.misses, since, &si);
	mrc_curve_recent(m, sc.gets, sc.misses, recent, &ri);
	EXPECT_GE(ri.epochs, 5u);
	// The window: one completed epoch and the one under way, at least
	// MRC_EPOCH_GETS gets, all in the second phase.
	EXPECT_GE(ri.recent_gets, (uint64_t)MRC_EPOCH_GETS);
	EXPECT_LE(ri.recent_gets, sc.gets - first_phase);
	EXPECT_EQ(ri.recent_misses, ri.recent_gets);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		EXPECT_EQ(recent[i].gets, ri.recent_gets) << i;
		EXPECT_EQ(recent[i].misses, ri.recent_gets) << i;
		EXPECT_DOUBLE_EQ(recent[i].miss_ratio, 1.0) << i;
		EXPECT_EQ(since[i].gets, sc.gets) << i;
		EXPECT_NEAR(since[i].miss_ratio,
			    (double)(sc.gets - first_phase) / (double)sc.gets, 1e-9) << i;
	}
	mrc_destroy(m);
}

// An epoch ends only where the server's counts are noted: with no note,
// however many gets, the window stays since start.
TEST(MrcWindow, EpochsEndOnlyAtANote)
{
	struct mrc *m = make_full_mrc();
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;

	ASSERT_NE(m, nullptr);
	for (unsigned i = 0; i < 2 * MRC_EPOCH_GETS; i++) {
		std::string k = key_of(i % 50);
		struct engine_access a = access_of(k, ENGINE_ACCESS_GET, false, 1000);
		mrc_access(m, &a);
	}
	mrc_curve_recent(m, 2 * MRC_EPOCH_GETS, 2 * MRC_EPOCH_GETS, pts, &info);
	EXPECT_EQ(info.epochs, 0u);
	EXPECT_EQ(pts[0].gets, 2u * MRC_EPOCH_GETS);
	mrc_note_gets(m, 2 * MRC_EPOCH_GETS, 2 * MRC_EPOCH_GETS);
	mrc_curve_recent(m, 2 * MRC_EPOCH_GETS, 2 * MRC_EPOCH_GETS, pts, &info);
	EXPECT_EQ(info.epochs, 1u);
	// (the window: the epoch just ended, the new one empty)
	EXPECT_EQ(pts[0].gets, 2u * MRC_EPOCH_GETS);
	EXPECT_EQ(info.recent_gets, 2u * MRC_EPOCH_GETS);
	mrc_destroy(m);
}

// The floor at a small -m: the sample may hold MRC_FLOOR_KEYS keys, more
// than 1% of -m takes, but the key and item records are touched only as
// keys arrive, so what is in use (mrc_memory_used) grows with the sample
// and starts within 2% of -m (the caches' segments and chains).
TEST(MrcFloor, MemoryTouchedAsTheSampleFills)
{
	struct mrc_config cfg = {};
	char err[256] = "";

	cfg.memory = 8u << 20;
	cfg.seg_size = 1u << 20;
	cfg.nseg = 8;
	cfg.eviction = ENGINE_EVICT_MERGE;
	struct mrc *m = mrc_create(&cfg, err, sizeof(err));
	ASSERT_NE(m, nullptr) << err;
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info start, info;
	mrc_curve(m, pts, &start);
	// -m 8: a 16th of it holds fewer than MRC_FLOOR_MIN_KEYS
	EXPECT_EQ(start.max_keys, (uint32_t)MRC_FLOOR_MIN_KEYS);
	EXPECT_GT(start.memory, cfg.memory / 100);
	EXPECT_LE(start.memory_used, cfg.memory / 50);
	EXPECT_GE(start.memory - start.memory_used,
		  (size_t)MRC_FLOOR_MIN_KEYS * (sizeof(struct mrc_key) +
						MRC_RECORDS_PER_KEY * sizeof(struct mini_item)));
	unsigned i = 0;
	for (info = start; info.keys < 1000 && i < 100000; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_SET, true, 1000);
		mrc_access(m, &a);
		mrc_curve(m, pts, &info);
	}
	ASSERT_EQ(info.keys, 1000u);
	// About 1 key in 4 sampled: the floor's starting rate.
	EXPECT_NEAR((double)i * MRC_FLOOR_MAX_RATE, 1000.0, 200.0);
	EXPECT_GE(info.memory_used, start.memory_used + 1000 * sizeof(struct mrc_key));
	EXPECT_LE(info.memory_used, info.memory);
	mrc_destroy(m);
}

// Rough points: a cache of fewer than MRC_ROUGH_SEGMENTS segments (not the
// server's own size), and, while the sample holds fewer keys than its
// floor at the rate it started at, every size below -m. Once the sample
// has filled and its rate dropped, only the few-segment sizes stay rough.
TEST(MrcRough, FewSegmentsAndAShortSample)
{
	struct mrc_config cfg = {};
	char err[256] = "";

	cfg.memory = 64 * 4096;
	cfg.seg_size = 4096;
	cfg.nseg = 64; // 1/8x: 8 segments, 1/4x: 16
	cfg.eviction = ENGINE_EVICT_FIFO;
	cfg.budget = SIZE_MAX;
	cfg.max_keys = 256;
	cfg.floor_keys = 256;
	cfg.max_rate = 1.0;
	cfg.records_per_key = MRC_SIZES + 1;
	struct mrc *m = mrc_create(&cfg, err, sizeof(err));
	ASSERT_NE(m, nullptr) << err;
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;

	mrc_curve(m, pts, &info);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		EXPECT_EQ(pts[i].rough, mrc_size_eighths[i] < 8) << i;
		EXPECT_EQ(pts[i].segments, (64u * mrc_size_eighths[i] + 4) / 8) << i;
	}
	for (unsigned i = 0; i < 5000; i++) {
		std::string k = key_of(i);
		struct engine_access a = access_of(k, ENGINE_ACCESS_SET, true, 1000);
		mrc_access(m, &a);
	}
	mrc_curve(m, pts, &info);
	ASSERT_LT(info.rate, 1.0);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		EXPECT_EQ(pts[i].rough, pts[i].segments < MRC_ROUGH_SEGMENTS) << i;
	EXPECT_TRUE(pts[0].rough);
	EXPECT_FALSE(pts[1].rough); // 16 segments
	mrc_destroy(m);
}
