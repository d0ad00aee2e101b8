// SPDX-License-Identifier: BSD-3-Clause
// Issue 24: per-worker batched live counts (lib/seg/seg_live.c). A worker
// holds its changes to segments' live counts back; every reader that
// depends on them must still get what it needs: stats and the dump count
// what workers hold, eviction walks a segment whose adds are still held
// (its items must leave the hash table with it), and a change held for a
// segment's ended life never reaches its next one. Each test ends with
// the census (seg_test_check: the counts equal the slots pointing into
// each segment, no slot points into a free one).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "seg/seg.h"
#include "engine/engine_dump.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

namespace {

class SegLive : public seg_fixture::SegFixture {
protected:
	int set(struct engine_worker *wk, const std::string &k, const std::string &v)
	{
		return engine_store(wk, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0, 0, 0,
				    nullptr);
	}
	bool hit(struct engine_worker *wk, const std::string &k, const std::string &v)
	{
		std::string buf(v.size() + 64, '\0');
		struct engine_item it = {};

		if (engine_get(wk, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(), buf.size(),
			       &it) != ENGINE_OK)
			return false;
		buf.resize(it.vlen);
		EXPECT_EQ(buf, v) << k;
		return true;
	}
	std::string check()
	{
		struct seg_census c;
		char err[256] = "";

		return seg_test_check(e, &c, err, sizeof(err)) == 0 ? "" : err;
	}
};

// A worker's adds, overwrites and deletes are all held (a few hundred
// changes, one segment): stats and the dump see them anyway.
TEST_F(SegLive, StatsAndDumpCountWhatAWorkerHolds)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	const std::string v(40, 'v');

	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set(w, "k" + std::to_string(i), v), ENGINE_OK);
	EXPECT_EQ(stats().curr_items, 100u);
	for (int i = 0; i < 50; i++) // b replaces half of them
		ASSERT_EQ(set(b, "k" + std::to_string(i), v + v), ENGINE_OK);
	for (int i = 90; i < 100; i++)
		ASSERT_EQ(engine_delete(w, ("k" + std::to_string(i)).data(),
					("k" + std::to_string(i)).size(), 0),
			  ENGINE_OK);
	struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, 90u);
	EXPECT_GT(st.bytes, 90u * v.size());

	std::set<std::string> keys;
	struct engine_dump_cursor cur = {};
	auto take = [](void *arg, const struct engine_dump_item *d) {
		static_cast<std::set<std::string> *>(arg)->emplace(
			static_cast<const char *>(d->key), d->klen);
		return true;
	};
	for (int rounds = 0; !cur.done && rounds < 1000; rounds++)
		engine_dump(e, &cur, take, &keys);
	EXPECT_EQ(keys.size(), 90u);
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
	EXPECT_EQ(stats().curr_items, 90u);
	EXPECT_EQ(check(), "");
}

// FIFO evicts a segment whose header counts zero items (b's adds and
// removals there cancel and were applied) while w still holds its adds of
// five items there: the eviction must walk it and take those five out of
// the hash table, or their slots would point into a freed, reused segment.
TEST_F(SegLive, EvictionWalksASegmentWhoseAddsAreHeld)
{
	make(8u << 20, ENGINE_EVICT_FIFO, 4096);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	const std::string v(100, 'v');

	for (int i = 0; i < 5; i++) // w: the first items of the first segment
		ASSERT_EQ(set(w, "w" + std::to_string(i), v), ENGINE_OK);
	// b fills that segment (it moves on to the next one, and applies its
	// adds there), then replaces what it wrote there.
	const int per_segment = 4096 / 64; // more than a segment holds
	for (int i = 0; i < per_segment; i++)
		ASSERT_EQ(set(b, "b" + std::to_string(i), v), ENGINE_OK);
	for (int i = 0; i < per_segment; i++)
		ASSERT_EQ(set(b, "b" + std::to_string(i), v), ENGINE_OK);
	// b writes on until the heap is full and FIFO has evicted the first
	// segments (b applies all it holds before each eviction).
	uint64_t evicted = 0;
	for (int i = 0; evicted == 0 && i < 1000000; i++) {
		ASSERT_EQ(set(b, "f" + std::to_string(i), v), ENGINE_OK);
		if (i % 1000 == 0)
			evicted = stats().seg_evicted;
	}
	ASSERT_GT(evicted, 0u);
	EXPECT_EQ(check(), "");
	for (int i = 0; i < 5; i++)
		EXPECT_FALSE(hit(w, "w" + std::to_string(i), v)) << "w" << i << " outlived its segment";
	EXPECT_GE(stats().evictions, 5u);
	engine_worker_destroy(b);
	EXPECT_EQ(check(), "");
}

// w holds a change for a segment's life that ends (flush_all frees it) and
// b's next item reopens the segment (the top of the free pool): when w
// applies what it holds (when it goes away), that change is dropped, not
// added to the new life's count.
TEST_F(SegLive, AChangeHeldForAnEndedLifeIsDropped)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);

	ASSERT_EQ(set(w, "x", "1"), ENGINE_OK); // w holds +1 for the segment
	engine_flush_all(e, 0);
	ASSERT_EQ(set(b, "y", "2"), ENGINE_OK);
	EXPECT_EQ(stats().curr_items, 1u);
	EXPECT_EQ(check(), "");
	engine_worker_destroy(w); // applies (or drops) what it holds
	w = nullptr;
	EXPECT_EQ(stats().curr_items, 1u);
	EXPECT_EQ(check(), "");
	EXPECT_TRUE(hit(b, "y", "2"));
	engine_worker_destroy(b);
	EXPECT_EQ(check(), "");
}

} // namespace
