// SPDX-License-Identifier: BSD-3-Clause
// Issue 37: items larger than a segment (lib/seg/seg_append.c) span
// several, so a small heap keeps small segments and still stores
// memcached's 1 MiB items. Every value is read back byte for byte; every
// test ends with seg_test_check(), which also proves that no continuation
// segment leaked or is named by two heads.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/engine_dump.h"
#include "engine/engine_stream.h"
#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

namespace {

using seg_fixture::SegFixture;

constexpr size_t kSeg = 64u << 10;

// A value whose every 8 bytes name its key and their place, so that a
// byte from another item, or from another place in this one, shows.
std::string pattern(const std::string &key, size_t len)
{
	std::string v(len, '\0');

	for (size_t i = 0; i < len; i++)
		v[i] = static_cast<char>((i % 8 == 0) ? key[(i / 8) % key.size()]
						      : 'a' + (i / 8 + key.size()) % 26);
	return v;
}

class SegLarge : public SegFixture {
protected:
	void SetUp() override { make(8u << 20, ENGINE_EVICT_MERGE, kSeg, 1u << 20); }

	int set(const std::string &k, const std::string &v, int64_t exptime = 0,
		enum engine_store_mode mode = ENGINE_SET, struct engine_worker *wk = nullptr)
	{
		return engine_store(wk ? wk : w, mode, k.data(), k.size(), v.data(), v.size(), 0,
				    exptime, 0, nullptr);
	}
	std::string get(const std::string &k, int64_t touch = ENGINE_NO_TOUCH,
			struct engine_worker *wk = nullptr)
	{
		struct engine_item it = {};
		std::string buf(2u << 20, '\0');
		int rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(), buf.size(),
				    &it);

		if (rc == ENGINE_MISS)
			return "<MISS>";
		EXPECT_EQ(rc, ENGINE_OK);
		buf.resize(it.vlen);
		return buf;
	}
	std::string check(struct seg_census *c = nullptr)
	{
		struct seg_census tmp;
		char err[256] = "";

		return seg_test_check(e, c ? c : &tmp, err, sizeof(err)) == 0 ? "" : err;
	}
	struct seg_census census()
	{
		struct seg_census c = {};

		EXPECT_EQ(check(&c), "");
		return c;
	}
};

TEST_F(SegLarge, OneMiBItemsSpanSegmentsAndReadBackWhole)
{
	const std::string v = pattern("big", 1048512); // what memcached stores at -m 16

	ASSERT_EQ(set("big", v), ENGINE_OK);
	EXPECT_EQ(get("big"), v);
	// its head and 15 continuations (1 MiB of 64 KiB segments)
	EXPECT_EQ(census().cont, 15u);
	EXPECT_EQ(stats().curr_items, 1u);
	// a value of exactly one segment's bytes beyond the head, and one
	// byte over: the seams
	for (size_t len : { kSeg - 20, kSeg + 1, 2 * kSeg, 3 * kSeg - 5 }) {
		const std::string k = "seam" + std::to_string(len);

		ASSERT_EQ(set(k, pattern(k, len)), ENGINE_OK) << len;
		EXPECT_EQ(get(k), pattern(k, len)) << len;
	}
	EXPECT_EQ(check(), "");
	// over the limit still refused
	EXPECT_EQ(set("huge", std::string((1u << 20) + 1, 'h')), ENGINE_TOO_LARGE);
}

TEST_F(SegLarge, OverwriteDeleteFlushAndExpiryGiveEverySegmentBack)
{
	const uint32_t free0 = census().free;

	ASSERT_EQ(set("a", pattern("a", 500000)), ENGINE_OK);
	ASSERT_EQ(set("a", pattern("a2", 300000)), ENGINE_OK); // the old one is dead
	EXPECT_EQ(get("a"), pattern("a2", 300000));
	ASSERT_EQ(engine_delete(w, "a", 1, 0), ENGINE_OK);
	EXPECT_EQ(get("a"), "<MISS>");
	// expiry: a large item with a TTL goes with its chain's head
	ASSERT_EQ(set("t", pattern("t", 400000), 5), ENGINE_OK);
	EXPECT_EQ(get("t"), pattern("t", 400000));
	clock.advance(10);
	EXPECT_EQ(get("t"), "<MISS>");
	engine_expire(e);
	// flush_all takes the dead heads and whatever else
	ASSERT_EQ(set("b", pattern("b", 200000)), ENGINE_OK);
	engine_flush_all(e, 0);
	EXPECT_EQ(get("b"), "<MISS>");
	struct seg_census c = census();
	EXPECT_EQ(c.cont, 0u);
	EXPECT_EQ(c.free, free0);
}

TEST_F(SegLarge, AFailedConditionGivesTheSegmentsBackAtOnce)
{
	ASSERT_EQ(set("k", pattern("k", 600000)), ENGINE_OK);
	const struct seg_census before = census();

	EXPECT_EQ(set("k", pattern("k2", 600000), 0, ENGINE_ADD), ENGINE_NOT_STORED);
	EXPECT_EQ(set("nope", pattern("n", 600000), 0, ENGINE_REPLACE), ENGINE_NOT_STORED);
	const struct seg_census after = census();
	EXPECT_EQ(after.free, before.free);
	EXPECT_EQ(after.cont, before.cont);
	EXPECT_EQ(get("k"), pattern("k", 600000));
}

TEST_F(SegLarge, AppendPrependAndTouchCrossTheSeams)
{
	std::string v = pattern("x", kSeg - 100); // one segment, almost full

	ASSERT_EQ(set("x", v), ENGINE_OK);
	// append makes it large; prepend moves every byte
	const std::string tail = pattern("tail", 5000), head = pattern("head", 70000);
	ASSERT_EQ(set("x", tail, 0, ENGINE_APPEND), ENGINE_OK);
	v += tail;
	EXPECT_EQ(get("x"), v);
	ASSERT_EQ(set("x", head, 0, ENGINE_PREPEND), ENGINE_OK);
	v = head + v;
	EXPECT_EQ(get("x"), v);
	// touch (gat) copies the large item into its new TTL's chain
	EXPECT_EQ(get("x", 100), v);
	EXPECT_EQ(engine_touch(w, "x", 1, 200), ENGINE_OK);
	EXPECT_EQ(get("x"), v);
	// incr on a large value is a non-numeric one
	uint64_t n = 0, cas = 0;
	EXPECT_EQ(engine_arith(w, "x", 1, true, 1, &n, &cas), ENGINE_NON_NUMERIC);
	EXPECT_EQ(check(), "");
}

TEST_F(SegLarge, AStreamedLargeValueIsWrittenAsItArrives)
{
	const std::string v = pattern("s", 900000);
	struct engine_stream st;

	ASSERT_EQ(engine_store_begin(w, ENGINE_SET, "s", 1, v.size(), 0, 0, &st), ENGINE_OK);
	for (size_t at = 0; at < v.size();) {
		const size_t n = std::min<size_t>(v.size() - at, 1 + (at * 7919) % 70000);

		engine_store_write(w, &st, v.data() + at, n);
		at += n;
	}
	ASSERT_EQ(engine_store_finish(w, &st, ENGINE_SET, "s", 1, 0, nullptr), ENGINE_OK);
	EXPECT_EQ(get("s"), v);
	// an add that fails gives its segments back at the finish
	const uint32_t free_before = census().free;
	ASSERT_EQ(engine_store_begin(w, ENGINE_ADD, "s", 1, v.size(), 0, 0, &st), ENGINE_OK);
	engine_store_write(w, &st, v.data(), v.size());
	EXPECT_EQ(engine_store_finish(w, &st, ENGINE_ADD, "s", 1, 0, nullptr), ENGINE_NOT_STORED);
	EXPECT_EQ(census().free, free_before);
	// flushed while in flight: the store completes as one evicted at once
	ASSERT_EQ(engine_store_begin(w, ENGINE_SET, "f", 1, v.size(), 0, 0, &st), ENGINE_OK);
	engine_store_write(w, &st, v.data(), 300000);
	engine_flush_all(e, 0);
	engine_store_write(w, &st, v.data() + 300000, v.size() - 300000);
	EXPECT_EQ(engine_store_finish(w, &st, ENGINE_SET, "f", 1, 0, nullptr), ENGINE_OK);
	EXPECT_EQ(get("f"), "<MISS>");
	EXPECT_EQ(census().cont, 0u);
}

// Eviction under every policy on a heap that large items fill many times
// over, small items between them: every read is a miss or the right value.
class SegLargeEviction : public SegLarge,
			 public ::testing::WithParamInterface<enum engine_eviction> {
protected:
	void SetUp() override { make(4u << 20, GetParam(), kSeg, 1u << 20); }
};

TEST_P(SegLargeEviction, EveryReadIsAMissOrTheValue)
{
	unsigned hits = 0;

	for (unsigned i = 0; i < 400; i++) {
		const std::string k = "k" + std::to_string(i % 60);
		const size_t len = i % 3 == 0 ? 100 + i : 70000 + (i * 7777) % 900000;

		ASSERT_EQ(set(k, pattern(k + std::to_string(len), len)), ENGINE_OK) << i;
		for (unsigned j = 0; j < 60; j += 7) {
			const std::string kj = "k" + std::to_string(j);
			const std::string got = get(kj);

			if (got == "<MISS>")
				continue;
			hits++;
			ASSERT_EQ(got, pattern(kj + std::to_string(got.size()), got.size())) << kj;
		}
		if (i % 50 == 0) {
			ASSERT_EQ(check(), "") << i;
		}
	}
	EXPECT_GT(hits, 0u);
	EXPECT_GT(stats().evictions, 0u);
	EXPECT_EQ(check(), "");
}

INSTANTIATE_TEST_SUITE_P(Policies, SegLargeEviction,
			 ::testing::Values(ENGINE_EVICT_MERGE, ENGINE_EVICT_FIFO,
					   ENGINE_EVICT_RANDOM));

// Four threads set, read, append and delete large and small values of
// overlapping keys while the heap evicts and a flush comes now and then:
// a value read is always one some thread wrote whole.
TEST_F(SegLarge, ThreadsOnOverlappingLargeKeys)
{
	make(6u << 20, ENGINE_EVICT_MERGE, kSeg, 1u << 20);
	std::vector<std::thread> th;
	std::atomic<bool> bad{false};

	for (unsigned t = 0; t < 4; t++) {
		th.emplace_back([&, t] {
			struct engine_worker *wk = engine_worker_create(e);
			std::string buf(2u << 20, '\0');

			for (unsigned i = 0; i < 600 && !bad; i++) {
				const std::string k = "k" + std::to_string((i * 7 + t) % 12);
				const size_t len = (i + t) % 4 == 0 ? 50 : 60000 + ((i + t) * 48271) % 400000;
				const std::string v = pattern(k + std::to_string(len), len);
				struct engine_item it = {};

				engine_store(wk, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
					     (i % 5) ? 0 : 1, 0, nullptr);
				int rc = engine_get(wk, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
						    buf.size(), &it);
				if (rc == ENGINE_OK &&
				    std::string(buf.data(), it.vlen) !=
					    pattern(k + std::to_string(it.vlen), it.vlen))
					bad = true;
				if (i % 97 == t)
					engine_flush_all(e, 0);
				if (i % 13 == 0)
					engine_delete(wk, k.data(), k.size(), 0);
			}
			engine_worker_destroy(wk);
		});
	}
	for (unsigned i = 0; i < 30; i++) {
		clock.advance(1);
		engine_expire(e);
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	for (auto &x : th)
		x.join();
	EXPECT_FALSE(bad);
	EXPECT_EQ(check(), "");
}

} // namespace
