// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/seg's segment lifecycle (issue 9): one test per bug,
// each forcing its interleaving deterministically through the test hook
// of seg_test.h (a second worker acts in the middle of the first one's
// operation, on the same thread), then checking the result and the
// engine's invariants.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

namespace {

// Runs `fn` the first time the engine reaches point `at`, and never again
// (nor from inside fn itself).
struct OneShotHook {
	enum seg_test_point at;
	std::function<void()> fn;
	bool fired = false;

	static void call(enum seg_test_point at, void *arg)
	{
		auto *h = static_cast<OneShotHook *>(arg);
		if (h->fired || at != h->at)
			return;
		h->fired = true;
		h->fn();
	}
};

class SegLifecycle : public seg_fixture::SegFixture {
protected:
	void TearDown() override
	{
		seg_test_set_hook(nullptr, nullptr);
		SegFixture::TearDown();
	}
	void hook(OneShotHook *h) { seg_test_set_hook(OneShotHook::call, h); }

	int set(struct engine_worker *wk, const std::string &k, const std::string &v,
		int64_t exptime = 0, enum engine_store_mode mode = ENGINE_SET)
	{
		return engine_store(wk, mode, k.data(), k.size(), v.data(), v.size(), 0, exptime, 0,
				    nullptr);
	}
	// The value, or "<MISS>".
	std::string get(struct engine_worker *wk, const std::string &k,
			struct engine_item *out = nullptr)
	{
		struct engine_item it = {};
		std::string buf(8192, '\0');
		int rc = engine_get(wk, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
				    buf.size(), &it);
		if (rc == ENGINE_MISS)
			return "<MISS>";
		EXPECT_EQ(rc, ENGINE_OK);
		if (out)
			*out = it;
		buf.resize(it.vlen);
		return buf;
	}
	// Writes filler (no TTL: another chain than the tests' own) until the
	// first merge pass; returns the stats then.
	struct engine_stats fill_until_merge(const std::string &v)
	{
		struct engine_stats st = {};

		for (int i = 0; i < 1000000; i++) {
			EXPECT_EQ(set(w, "f" + std::to_string(i), v), ENGINE_OK);
			engine_stats(e, &st);
			if (st.seg_merged > 0)
				break;
		}
		return st;
	}
	// Empty when the engine's invariants hold at rest.
	std::string check(struct seg_census *c = nullptr)
	{
		struct seg_census tmp;
		char err[256] = "";
		return seg_test_check(e, c ? c : &tmp, err, sizeof(err)) == 0 ? "" : err;
	}
};

// Bug 1: a worker whose open segment was freed (flush_all) still counts
// itself in that segment's `writers` before it notices; if another worker
// reopens the segment in that window, opening must not reset the count
// (the stale worker's decrement then underflows it, and the next drain of
// that segment spins forever, holding evict_lock).
TEST_F(SegLifecycle, Bug1_StaleWriterAndReopenKeepWritersBalanced)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "x", "1"), ENGINE_OK); // w opens a segment
	engine_flush_all(e, 0);                  // ... which is freed; w still refers to it
	OneShotHook h{SEG_TP_RESERVE_HELD, [&] {
		// b takes the segment w is looking at (the top of the pool)
		EXPECT_EQ(set(b, "z", "2"), ENGINE_OK);
	}};
	hook(&h);
	ASSERT_EQ(set(w, "y", "3"), ENGINE_OK);
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(h.fired);
	ASSERT_EQ(check(), "");
	EXPECT_EQ(get(w, "y"), "3");
	EXPECT_EQ(get(w, "z"), "2");
	engine_flush_all(e, 0); // drains every segment: hangs on an underflowed count
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
}

// Bug 2: merging segments of one chain whose exp_base are not in order
// (two workers' clocks straddling a second) must not serve an item after
// its expiry.
TEST_F(SegLifecycle, Bug2_MergeNeverMakesAnItemLate)
{
	make(1u << 20, ENGINE_EVICT_MERGE, 4096);
	const int64_t t0 = clock.now;
	const std::string v(100, 'v');
	struct engine_worker *a = engine_worker_create(e), *b = engine_worker_create(e);
	ASSERT_TRUE(a && b);
	seg_test_own_open(a); // each its own segment, as busy workers on a big heap
	seg_test_own_open(b);
	// a's segment of TTL bucket [8, 16) opens at t0: exp_base t0 + 8
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(set(a, "a" + std::to_string(i), v, 10), ENGINE_OK);
	// b's clock reads a second earlier: its segment, later in the same
	// chain, has exp_base t0 + 7; its items expire at t0 + 7
	clock.now = t0 - 1;
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(set(b, "b" + std::to_string(i), v, 8), ENGINE_OK);
	engine_worker_destroy(a); // seals their open segments
	engine_worker_destroy(b);
	clock.now = t0;
	for (int i = 0; i < 30; i++) // read once: merge keeps them
		ASSERT_EQ(get(w, "b" + std::to_string(i)), v);
	struct engine_stats st;
	for (int i = 0; i < 100000; i++) {
		ASSERT_EQ(set(w, "f" + std::to_string(i), v + v), ENGINE_OK);
		engine_stats(e, &st);
		if (st.seg_merged > 0)
			break;
	}
	ASSERT_GT(st.seg_merged, 0u);
	for (int i = 0; i < 30; i++) {
		struct engine_item it = {};
		if (get(w, "b" + std::to_string(i), &it) != "<MISS>") {
			EXPECT_NE(it.expires_at, 0);
			EXPECT_LE(it.expires_at, t0 + 7) << "b" << i << " would be served late";
		}
	}
	clock.now = t0 + 7;
	for (int i = 0; i < 30; i++)
		EXPECT_EQ(get(w, "b" + std::to_string(i)), "<MISS>") << "b" << i << " served late";
	EXPECT_EQ(check(), "");
}

// Bug 3: read-modify-writes keep an item's expiry; they must not round it
// down again on every rewrite (docs: early by less than 16 s below 32768 s).
TEST_F(SegLifecycle, Bug3_ReadModifyWritesDoNotDriftTheExpiry)
{
	make(16u << 20);
	const int64_t t0 = clock.now;
	struct engine_item it = {};
	ASSERT_EQ(set(w, "n", "0", 20000), ENGINE_OK);
	ASSERT_EQ(get(w, "n", &it), "0");
	const int64_t first = it.expires_at;
	EXPECT_LE(first, t0 + 20000);
	EXPECT_GT(first, t0 + 20000 - 16);
	for (int i = 1; i <= 300; i++) { // 3 hours, one incr every 36 s
		clock.now += 36;
		uint64_t n = 0;
		ASSERT_EQ(engine_arith(w, "n", 1, true, 1, &n, nullptr), ENGINE_OK);
		ASSERT_EQ(set(w, "n", "x", 0, ENGINE_APPEND), ENGINE_OK);
		ASSERT_EQ(set(w, "n", "", 0, ENGINE_PREPEND), ENGINE_OK);
		ASSERT_EQ(get(w, "n", &it), std::to_string(i) + "x");
		ASSERT_EQ(set(w, "n", std::to_string(i)), ENGINE_OK); // (back to a number, no TTL)
		ASSERT_EQ(engine_touch(w, "n", 1, first - clock.now), ENGINE_OK);
		ASSERT_EQ(get(w, "n", &it), std::to_string(i));
		ASSERT_EQ(it.expires_at, first) << "after " << i << " rewrites";
	}
}

// Bug 3 without touch in the loop: incr, append and prepend only.
TEST_F(SegLifecycle, Bug3_IncrKeepsTheExpiryExactly)
{
	make(16u << 20);
	struct engine_item it = {};
	ASSERT_EQ(set(w, "n", "0", 20000), ENGINE_OK);
	ASSERT_EQ(get(w, "n", &it), "0");
	const int64_t first = it.expires_at;
	for (int i = 1; i <= 300; i++) {
		clock.now += 36;
		uint64_t n = 0;
		ASSERT_EQ(engine_arith(w, "n", 1, true, 1, &n, nullptr), ENGINE_OK);
	}
	ASSERT_EQ(get(w, "n", &it), "300");
	EXPECT_EQ(it.expires_at, first) << "early by " << first - it.expires_at << " s";
}

// Bug 4: a merge pass that keeps nothing must free all its segments rather
// than link an empty one into the chain.
TEST_F(SegLifecycle, Bug4_MergeThatKeepsNothingLeavesNoEmptySegment)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	const std::string v(100, 'v');
	struct engine_stats st;
	for (int i = 0; i < 200000; i++) { // write only: nothing is ever read
		ASSERT_EQ(set(w, "k" + std::to_string(i), v), ENGINE_OK);
		if (i % 1000 == 0) {
			engine_stats(e, &st);
			if (st.seg_evicted > 3 * st.seg_total)
				break;
		}
	}
	struct seg_census c;
	ASSERT_EQ(check(&c), "");
	EXPECT_EQ(c.sealed_empty, 0u) << "of " << c.sealed << " sealed segments";
	engine_stats(e, &st);
	EXPECT_GT(st.seg_evicted, 3 * st.seg_total);
}

// Bug 5: a reader that found an expired item unlinks it only if the slot
// still points at that very item (same segment life), and accounts for it
// under the bucket lock; here the segment was freed and reused meanwhile,
// and a new item of the same key sits at the same place.
TEST_F(SegLifecycle, Bug5_ExpiredUnlinkSparesANewItemAtTheSamePlace)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "k", "old", 2), ENGINE_OK); // first item of w's segment
	clock.now += 2;
	OneShotHook h{SEG_TP_UNLINK_EXPIRED, [&] {
		// the sweep frees the segment; b reuses it, writing "k" at offset 0
		engine_expire(e);
		EXPECT_EQ(set(b, "k", "new"), ENGINE_OK);
	}};
	hook(&h);
	EXPECT_EQ(get(w, "k"), "<MISS>"); // the expired item
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(h.fired);
	EXPECT_EQ(get(w, "k"), "new");
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
}

// Bug 6: append over an item it read while that item's segment was being
// reused: the read is invalid, so it retries rather than answering from
// it (here: "too large" became NOT_STORED although the key never went
// missing).
TEST_F(SegLifecycle, Bug6_AppendRetriesAfterAnInvalidRead)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 0, 1024);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "k", std::string(1000, 'a'), 5), ENGINE_OK);
	OneShotHook h{SEG_TP_RMW_READ, [&] {
		// k gets a small value (it never goes missing), and the segment
		// of the big value the append just read expires and is freed
		EXPECT_EQ(set(b, "k", "s"), ENGINE_OK);
		clock.now += 5;
		engine_expire(e);
	}};
	hook(&h);
	EXPECT_EQ(set(w, "k", std::string(30, 'x'), 0, ENGINE_APPEND), ENGINE_OK);
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(h.fired);
	EXPECT_EQ(get(w, "k"), "s" + std::string(30, 'x'));
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
}

// Issue 21, bug 1: two appends to one shared segment raise its exp_max.
// The one with the earlier expiry has compared (its expiry is above
// exp_max) when the other raises exp_max further; a plain store then
// lowers exp_max again, so the sweep takes the segment for expired while
// the later item still lives, and loses it. Raising is an atomic max.
TEST_F(SegLifecycle, Bug21_ConcurrentRaisesNeverLowerExpMax)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	const int64_t t0 = clock.now;
	// TTLs 17 and 23 share a TTL bucket (16..23 s), so both workers
	// append to the bucket's one shared open segment.
	OneShotHook h{SEG_TP_EXP_MAX_RAISE, [&] {
		EXPECT_EQ(set(b, "late", "L", 23), ENGINE_OK);
	}};
	hook(&h);
	ASSERT_EQ(set(w, "early", "E", 17), ENGINE_OK);
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(h.fired);
	struct engine_item it = {};
	ASSERT_EQ(get(w, "late", &it), "L");
	ASSERT_EQ(it.expires_at, t0 + 23);
	// Past the early item, before the late one: the sweep may take only
	// the early one.
	clock.now = t0 + 20;
	engine_expire(e);
	EXPECT_EQ(get(w, "early"), "<MISS>");
	EXPECT_EQ(get(w, "late"), "L") << "the segment expired with its exp_max lowered";
	clock.now = t0 + 23;
	engine_expire(e);
	EXPECT_EQ(get(w, "late"), "<MISS>");
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
}

} // namespace

namespace {

// Merge keeps the most read items of its run (about one segment of them),
// wherever they sit in their segments; not the first read items in offset
// order.
TEST_F(SegLifecycle, MergeKeepsTheMostReadItemsOfTheRun)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	const std::string v(96, 'v');
	struct engine_worker *a = engine_worker_create(e);
	ASSERT_NE(a, nullptr);
	const int n = 2400, hot_every = 5; // ~4 segments; a fifth of the bytes hot
	for (int i = 0; i < n; i++)
		ASSERT_EQ(set(a, (i % hot_every ? "c" : "h") + std::to_string(i), v, 100000),
			  ENGINE_OK);
	engine_worker_destroy(a); // seals its segment
	for (int i = 0; i < n; i++) {
		const std::string k = (i % hot_every ? "c" : "h") + std::to_string(i);
		for (int r = 0; r < (i % hot_every ? 1 : 4); r++)
			ASSERT_EQ(get(w, k), v);
	}
	struct engine_stats st = fill_until_merge(v);
	ASSERT_GT(st.seg_merged, 0u);
	int hot = 0, warm = 0;
	for (int i = 0; i < n; i++) {
		const bool is_hot = i % hot_every == 0;
		if (get(w, (is_hot ? "h" : "c") + std::to_string(i)) != "<MISS>")
			(is_hot ? hot : warm)++;
	}
	EXPECT_EQ(hot, n / hot_every) << warm << " items read once survived";
	EXPECT_GT(warm, 0); // the rest of the destination holds items read once
	EXPECT_EQ(check(), "");
}

// A run of dense segments (two sevenths of every one dead) is merged into
// one segment fewer: four of them into three, and the pass frees a
// segment without evicting any of the run's live items, where a pass
// into one destination evicted all that did not fit in it (three sevenths
// of a segment from two such segments; nearly two from the paper's four).
TEST_F(SegLifecycle, DenseRunMergesIntoOneSegmentFewer)
{
	make(4u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	const std::string v(96, 'v');
	struct engine_worker *a = engine_worker_create(e);
	ASSERT_NE(a, nullptr);
	const int n = 4800; // ~8 segments of one chain
	for (int i = 0; i < n; i++)
		ASSERT_EQ(set(a, "d" + std::to_string(i), v, 100000), ENGINE_OK);
	engine_worker_destroy(a); // seals its segment
	for (int i = 0; i < n; i++) {
		const std::string k = "d" + std::to_string(i);
		if (i % 7 == 2 || i % 7 == 5)
			ASSERT_EQ(engine_delete(w, k.data(), k.size(), 0), ENGINE_OK);
		else
			ASSERT_EQ(get(w, k), v);
	}
	struct engine_stats st = fill_until_merge(v);
	ASSERT_EQ(st.seg_merged, 1u);
	int lost = 0;
	for (int i = 0; i < n; i++)
		if (i % 7 != 2 && i % 7 != 5 && get(w, "d" + std::to_string(i)) == "<MISS>")
			lost++;
	EXPECT_EQ(lost, 0) << "of " << n - 2 * n / 7 << " live items";
	EXPECT_EQ(check(), "");
}

} // namespace

namespace {

// Read-modify-writes racing on one key: a lost race gives its copy's bytes
// back, so a segment holds one item per successful incr, not one per
// attempt. The race is forced: every other time w has read the counter,
// b increments it, so w's first attempt fails and its second succeeds.
TEST_F(SegLifecycle, LostReadModifyWriteRacesWasteNoSpace)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "ctr", "0"), ENGINE_OK);
	struct Race {
		struct engine_worker *b;
		bool inside = false, odd = false;
		static void call(enum seg_test_point at, void *arg)
		{
			auto *r = static_cast<Race *>(arg);
			uint64_t v;
			if (at != SEG_TP_RMW_READ || r->inside || !(r->odd = !r->odd))
				return;
			r->inside = true;
			EXPECT_EQ(engine_arith(r->b, "ctr", 3, true, 1, &v, nullptr), ENGINE_OK);
			r->inside = false;
		}
	} race{b};
	const int rounds = 1000;
	seg_test_set_hook(Race::call, &race);
	for (int i = 0; i < rounds; i++) {
		uint64_t v = 0;
		ASSERT_EQ(engine_arith(w, "ctr", 3, true, 1, &v, nullptr), ENGINE_OK);
		ASSERT_EQ(v, 2u * (i + 1));
	}
	seg_test_set_hook(nullptr, nullptr);
	struct seg_census c;
	ASSERT_EQ(check(&c), "");
	// the first set, then per round b's incr and w's one successful one
	EXPECT_EQ(c.items_written, 1u + 2 * rounds);
	engine_worker_destroy(b);
}

} // namespace

namespace {

// FIFO with more segments than TTL chains finds the oldest sealed segment
// from the chains: across two chains written in turns, what stays is the
// newest part of what was written.
TEST_F(SegLifecycle, FifoAcrossChainsEvictsTheOldest)
{
	make(8u << 20, ENGINE_EVICT_FIFO, 4096);
	const std::string v(100, 'v');
	struct engine_stats st;
	engine_stats(e, &st);
	ASSERT_GT(st.seg_total, 1100u); // more segments than chains
	const int n = 100000;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(set(w, "k" + std::to_string(i), v, i % 2 ? 0 : 100000), ENGINE_OK);
	engine_stats(e, &st);
	ASSERT_GT(st.seg_evicted, 0u);
	const int resident = static_cast<int>(st.curr_items);
	int missing = 0;
	for (int i = n - resident * 9 / 10; i < n; i++)
		missing += get(w, "k" + std::to_string(i)) == "<MISS>";
	EXPECT_EQ(missing, 0) << "of the newest " << resident * 9 / 10 << " keys";
	EXPECT_EQ(check(), "");
}

} // namespace

namespace {

// Background reclamation (engine_expire, seg_reclaim) refills the free pool
// to its low watermark (1/64 of the segments), by the configured policy.
TEST_F(SegLifecycle, ReclaimAheadRefillsTheFreePool)
{
	for (enum engine_eviction ev : {ENGINE_EVICT_MERGE, ENGINE_EVICT_FIFO, ENGINE_EVICT_RANDOM,
					ENGINE_EVICT_NONE}) {
		TearDown();
		make(16u << 20, ev, 64u << 10);
		const std::string v(100, 'v');
		struct engine_stats st;
		engine_stats(e, &st);
		const uint64_t low = st.seg_total / 64;
		int i = 0;
		for (; i < 1000000; i++) {
			std::string k = "k" + std::to_string(i);
			if (i % 3 == 0)
				get(w, "k" + std::to_string(i / 2));
			if (set(w, k, v) != ENGINE_OK)
				break;
			engine_stats(e, &st);
			if (st.seg_free <= 1 && i % 100 == 0)
				break;
		}
		engine_stats(e, &st);
		ASSERT_LE(st.seg_free, 1u + (ev == ENGINE_EVICT_MERGE));
		const uint64_t evicted = st.evictions;
		const unsigned steps = seg_reclaim(e);
		engine_stats(e, &st);
		if (ev == ENGINE_EVICT_NONE) {
			EXPECT_EQ(steps, 0u);
			EXPECT_EQ(st.evictions, evicted);
		} else {
			EXPECT_GT(steps, 0u);
			EXPECT_GE(st.seg_free, low) << "policy " << ev;
			EXPECT_EQ(seg_reclaim(e), 0u); // nothing more to do
		}
		EXPECT_EQ(check(), "");
		if (ev != ENGINE_EVICT_NONE) {
			ASSERT_EQ(set(w, "after", v), ENGINE_OK);
		}
	}
}

} // namespace

namespace {

// Found by the torture test: a segment a worker has just opened must not
// be claimable (flush_all, the sweep, eviction) before it is linked into
// its TTL chain; the claimer's unlink would cut the chain, and the worker
// would then link a freed segment (a chain cycle later: eviction spun
// forever in claim_run holding evict_lock).
TEST_F(SegLifecycle, OpeningSegmentIsNotReclaimedBeforeItIsLinked)
{
	make(16u << 20);
	ASSERT_EQ(set(w, "a", "1", 100), ENGINE_OK); // a chain with a segment
	OneShotHook h{SEG_TP_OPENING, [&] { engine_flush_all(e, 0); }};
	hook(&h);
	ASSERT_EQ(set(w, "b", "2"), ENGINE_OK); // opens a segment: the flush runs then
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(h.fired);
	EXPECT_EQ(check(), "");
	EXPECT_EQ(get(w, "b"), "2");
	ASSERT_EQ(set(w, "c", "3", 100), ENGINE_OK);
	engine_flush_all(e, 0);
	EXPECT_EQ(check(), "");
}

// Merge passes copy without evict_lock, so two can run at once (on
// disjoint runs, each with its own reserve). Writers on a heap with room
// for a spare reserve evict until passes have overlapped, in rounds of a
// bounded number of writes: after every round the engine's invariants
// hold (seg_test_check) and every key read holds a value written for it.
TEST_F(SegLifecycle, MergePassesRunAtOnce)
{
	make(8u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	struct seg_census c = {};
	char err[256] = "";
	std::atomic<uint64_t> bad{0};

	int round = 0;

	for (; round < 40 && c.merges_at_once == 0; round++) {
		std::vector<std::thread> ts;

		for (int t = 0; t < 4; t++)
			ts.emplace_back([&, t, round] {
				struct engine_worker *tw = engine_worker_create(e);
				const std::string v(200, static_cast<char>('a' + t));

				for (int i = 0; i < 20000; i++) {
					// Read keys often (warm chains merge), two TTLs
					// (two chains), and fill.
					const int key = (i * 31 + t * 7 + round) % 40000;
					const std::string k = "k" + std::to_string(key);
					const std::string got = get(tw, k);

					if (got != "<MISS>" && (got.size() != 200 || got[0] < 'a' ||
								got[0] > 'd' ||
								got != std::string(200, got[0])))
						bad++;
					EXPECT_EQ(set(tw, k, v, key % 2 ? 0 : 3600), ENGINE_OK);
				}
				engine_worker_destroy(tw);
			});
		for (auto &th : ts)
			th.join();
		ASSERT_EQ(seg_test_check(e, &c, err, sizeof(err)), 0) << err;
	}
	struct engine_stats st = {};

	engine_stats(e, &st);
	printf("merge passes at once: %llu in %d round(s), %llu merges, %llu evictions\n",
	       static_cast<unsigned long long>(c.merges_at_once), round,
	       static_cast<unsigned long long>(st.seg_merged),
	       static_cast<unsigned long long>(st.evictions));
	EXPECT_EQ(bad.load(), 0u);
	EXPECT_GT(c.merges_at_once, 0u);
}

} // namespace
