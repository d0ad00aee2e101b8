// SPDX-License-Identifier: BSD-3-Clause
// Issue 24: workers append from chunks of open segments (lib/seg/seg_chunk.c):
// a run of bytes reserved with one compare-and-swap of write_off, several
// items' worth. The unused tail of a chunk goes back to its segment when
// the worker leaves the segment, before the segment is sealed, before the
// worker evicts and when it goes away (when its bytes are still the
// segment's last), and an abandoned append's bytes go back to the chunk;
// a tail that cannot go back (others reserved after it) holds a filler,
// which every walk of the segment steps over. Each test ends with the
// census (seg_test_check).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seg/seg.h"
#include "seg/seg_item.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

namespace {

class SegChunk : public seg_fixture::SegFixture {
protected:
	int set(struct engine_worker *wk, const std::string &k, const std::string &v,
		enum engine_store_mode mode = ENGINE_SET, int64_t exptime = 0)
	{
		return engine_store(wk, mode, k.data(), k.size(), v.data(), v.size(), 0, exptime,
				    0, nullptr);
	}
	bool hit(const std::string &k)
	{
		char buf[512];
		struct engine_item it = {};

		return engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf, sizeof(buf),
				  &it) == ENGINE_OK;
	}
	struct seg_test_place at(const std::string &k)
	{
		struct seg_test_place p = {};

		EXPECT_EQ(seg_test_locate(e, k.data(), k.size(), &p), 0) << k;
		return p;
	}
	std::string check()
	{
		struct seg_census c;
		char err[256] = "";

		return seg_test_check(e, &c, err, sizeof(err)) == 0 ? "" : err;
	}
	const std::string v = std::string(90, 'v');
};

// One worker alone: its chunk ends past its last item while the segment is
// open (the bytes reserved ahead), and the segment it fills is sealed where
// its last item ends, as if every item had been appended by itself.
TEST_F(SegChunk, SealingGivesTheTailBack)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	ASSERT_EQ(set(w, "k0", v), ENGINE_OK);
	struct seg_test_place first = at("k0");
	EXPECT_FALSE(first.sealed);
	EXPECT_GT(first.write_off, first.off + first.span); // a chunk, not one item

	uint32_t last_end = 0;
	for (int i = 1; i < 2000; i++) {
		const std::string k = "k" + std::to_string(i);

		ASSERT_EQ(set(w, k, v), ENGINE_OK);
		struct seg_test_place p = at(k);
		if (p.seg != first.seg)
			break;
		last_end = p.off + p.span;
	}
	first = at("k0");
	ASSERT_TRUE(first.sealed);
	EXPECT_EQ(first.write_off, last_end);
	EXPECT_LT(last_end, 64u << 10); // items of ~100 bytes leave a gap
	EXPECT_EQ(check(), "");
}

// A worker that goes away gives its tail back; one whose chunk others
// reserved after leaves a filler there, which the census walks over.
TEST_F(SegChunk, GoingAwayGivesTheTailBack)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	struct engine_worker *b = engine_worker_create(e), *c = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_NE(c, nullptr);
	// alone in the shared segment: a chunk ahead, given back on leaving
	ASSERT_EQ(set(c, "c", v), ENGINE_OK);
	struct seg_test_place pc = at("c");
	EXPECT_GT(pc.write_off, pc.off + pc.span);
	engine_worker_destroy(c);
	EXPECT_EQ(at("c").write_off, pc.off + pc.span);
	// Workers that meet another's bytes in the segment reserve each item
	// alone: no chunk of theirs can be left dead by another's seal.
	ASSERT_EQ(set(w, "a", v), ENGINE_OK);
	ASSERT_EQ(set(b, "b", v), ENGINE_OK);
	struct seg_test_place pa = at("a"), pb = at("b");
	ASSERT_EQ(pa.seg, pb.seg); // the shared open segment
	EXPECT_EQ(pa.off, pc.off + pc.span);
	EXPECT_EQ(pb.off, pa.off + pa.span);
	EXPECT_EQ(pb.write_off, pb.off + pb.span);
	engine_worker_destroy(b);
	EXPECT_TRUE(hit("a") && hit("b") && hit("c"));
	EXPECT_EQ(check(), "");
}

// Items of a quarter chunk or more get their bytes alone: two workers
// taking turns in the shared segment with 900-byte values leave no chunk
// tail dead between them (a chunk of 2 KiB held two such items and the
// rest, half an item, was lost each time the other had reserved after it).
TEST_F(SegChunk, LargeItemsAreReservedExactly)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 256u << 10);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	const std::string big(900, 'b');
	struct seg_test_place prev = {};

	for (int i = 0; i < 40; i++) {
		const std::string k = "big" + std::to_string(i);

		ASSERT_EQ(set(i % 2 ? b : w, k, big), ENGINE_OK) << i;
		struct seg_test_place p = at(k);

		if (i > 0) {
			ASSERT_EQ(p.seg, prev.seg) << i; // one shared segment
			EXPECT_EQ(p.off, prev.off + prev.span) << i; // nothing between
		}
		prev = p;
	}
	EXPECT_EQ(prev.write_off, prev.off + prev.span); // nothing reserved ahead
	for (int i = 0; i < 40; i++) {
		const std::string k = "big" + std::to_string(i);
		char buf[1024];
		struct engine_item it = {};

		ASSERT_EQ(engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf, sizeof(buf), &it),
			  ENGINE_OK) << i;
		EXPECT_EQ(std::string(buf, it.vlen), big) << i;
	}
	engine_worker_destroy(b);
	EXPECT_EQ(check(), "");
}

// A worker that moves its appends to a segment of its own gives the tail
// of its chunk in the shared one back.
TEST_F(SegChunk, LeavingTheSegmentGivesTheTailBack)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	ASSERT_EQ(set(w, "a", v), ENGINE_OK);
	struct seg_test_place pa = at("a");
	EXPECT_GT(pa.write_off, pa.off + pa.span);
	seg_test_own_open(w);
	ASSERT_EQ(set(w, "b", v), ENGINE_OK);
	EXPECT_NE(at("b").seg, pa.seg);
	pa = at("a");
	EXPECT_FALSE(pa.sealed);
	EXPECT_EQ(pa.write_off, pa.off + pa.span);
	EXPECT_EQ(check(), "");
}

// A worker about to evict gives back its chunks first, here one in the
// open segment of items that never expire while it writes another TTL's.
TEST_F(SegChunk, EvictingGivesTheTailBack)
{
	make(1u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	ASSERT_EQ(set(w, "a", v), ENGINE_OK);
	struct seg_test_place pa = at("a");
	EXPECT_GT(pa.write_off, pa.off + pa.span);
	uint64_t evicted = 0;
	for (int i = 0; i < 100000 && evicted == 0; i++) {
		ASSERT_EQ(set(w, "t" + std::to_string(i), v, ENGINE_SET, 3600), ENGINE_OK);
		if (i % 100 == 0)
			evicted = stats().evictions + stats().seg_evicted;
	}
	ASSERT_GT(evicted, 0u);
	ASSERT_TRUE(hit("a"));
	pa = at("a");
	EXPECT_FALSE(pa.sealed);
	EXPECT_EQ(pa.write_off, pa.off + pa.span);
	EXPECT_EQ(check(), "");
}

// An append that is not linked gives its bytes back to the chunk: the next
// item takes its place. Here w's incr loses its race with b's (forced at
// the point where it has read the old value) and is written again.
TEST_F(SegChunk, AnAbandonedAppendGoesBackToTheChunk)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "ctr", "0"), ENGINE_OK);
	const struct seg_test_place p0 = at("ctr");
	struct Race {
		struct engine_worker *b;
		bool done = false;
		static void call(enum seg_test_point where, void *arg)
		{
			auto *r = static_cast<Race *>(arg);
			uint64_t n;

			if (where != SEG_TP_RMW_READ || r->done)
				return;
			r->done = true;
			EXPECT_EQ(engine_arith(r->b, "ctr", 3, true, 1, &n, nullptr), ENGINE_OK);
		}
	} race{b};
	seg_test_set_hook(Race::call, &race);
	uint64_t n = 0;
	ASSERT_EQ(engine_arith(w, "ctr", 3, true, 1, &n, nullptr), ENGINE_OK);
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(race.done);
	EXPECT_EQ(n, 2u);
	// w's second copy where its first (abandoned) one was
	EXPECT_EQ(at("ctr").off, p0.off + p0.span);
	struct seg_census c;
	char err[256] = "";
	ASSERT_EQ(seg_test_check(e, &c, err, sizeof(err)), 0) << err;
	EXPECT_EQ(c.items_written, 3u); // the set, b's incr, w's: no dead copy
	engine_worker_destroy(b);
}

// A segment sealed by one worker while another holds a chunk in it: the
// chunk's unused bytes lie between items, under a filler. Every walk of the
// segment (flush_all here, which unlinks what it walks) must step over them
// to the items after: a walk that stopped there would leave their slots
// pointing into a free segment.
TEST_F(SegChunk, AWalkStepsOverAChunkSealedUnderItsWorker)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "a", v), ENGINE_OK);
	const struct seg_test_place pa = at("a");
	std::vector<std::string> after;
	for (int i = 0; i < 2000; i++) {
		const std::string k = "b" + std::to_string(i);

		ASSERT_EQ(set(b, k, v), ENGINE_OK);
		if (at(k).seg != pa.seg)
			break;
		after.push_back(k);
	}
	ASSERT_FALSE(after.empty());
	ASSERT_TRUE(at("a").sealed);
	EXPECT_GT(at(after[0]).off, pa.off + pa.span + 8); // a's tail lies between
	{
		struct seg_census c;
		char err[256] = "";
		ASSERT_EQ(seg_test_check(e, &c, err, sizeof(err)), 0) << err;
		EXPECT_EQ(c.live_items, c.items_written); // fillers are not items
	}
	engine_flush_all(e, 0);
	EXPECT_FALSE(hit("a"));
	for (const auto &k : after)
		EXPECT_FALSE(hit(k)) << k;
	EXPECT_EQ(check(), "");
	// and after the segments are reused, the same
	for (int i = 0; i < 3000; i++)
		ASSERT_EQ(set(i % 2 ? w : b, "c" + std::to_string(i), v), ENGINE_OK);
	EXPECT_EQ(check(), "");
	engine_worker_destroy(b);
}

// Between any two appends, every byte of an open segment up to write_off is
// an item or a filler, also inside a chunk a worker is still appending to
// while another worker's chunk lies after it: the filler moves past each
// item (seg_chunk.h). The census walks every open and sealed segment and
// fails where the walk meets bytes nothing covers. Items of every size up
// to 150 bytes leave every tail length a chunk can have, 8 and 9 among
// them (one and two value-length bytes); then b seals the segment under
// w's chunk, and the walk still reaches the end.
TEST_F(SegChunk, EveryAppendLeavesTheSegmentWalkable)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	ASSERT_EQ(set(w, "first", v), ENGINE_OK);
	const uint32_t seg = at("first").seg;
	int in_seg = 0;
	for (int i = 0; i < 400; i++) {
		const std::string k = "w" + std::to_string(i);

		ASSERT_EQ(set(w, k, std::string(1 + (i * 37) % 150, 'x')), ENGINE_OK);
		in_seg += at(k).seg == seg;
		if (i % 9 == 0) {
			ASSERT_EQ(set(b, "b" + std::to_string(i), std::string(1 + i % 40, 'y')),
				  ENGINE_OK);
		}
		ASSERT_EQ(check(), "") << "after " << k;
	}
	ASSERT_GT(in_seg, 200); // most of them in the shared segment, between b's
	for (int i = 0; i < 2000 && !at("first").sealed; i++)
		ASSERT_EQ(set(b, "s" + std::to_string(i), v), ENGINE_OK);
	ASSERT_TRUE(at("first").sealed);
	EXPECT_EQ(check(), "");
	ASSERT_EQ(set(w, "next", v), ENGINE_OK); // w leaves its chunk there
	EXPECT_EQ(check(), "");
	for (int i = 0; i < 400; i++)
		EXPECT_TRUE(hit("w" + std::to_string(i))) << i;
	engine_worker_destroy(b);
}

// Two TTL buckets (of 8 s TTL steps) whose refs take the same slot of the
// worker's table (seg_chunk.h), TTLs with their bucket's lowest value.
static void same_slot_ttls(int64_t *a, int64_t *b)
{
	for (unsigned i = 1; i < 256; i++)
		for (unsigned j = i + 1; j < 256; j++)
			if (seg_test_ref_slot(i) == seg_test_ref_slot(j)) {
				*a = 8 * (int64_t)i;
				*b = 8 * (int64_t)j;
				return;
			}
	FAIL() << "no two buckets below 256 share a slot";
}

// Buckets written in turn that share a ref slot take it over from each
// other: the chunk's tail goes back to its segment each time, so one worker
// alone still places its items back to back (no dead tail between them).
TEST_F(SegChunk, ATakenOverRefGivesItsTailBack)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	int64_t ta = 0, tb = 0;
	same_slot_ttls(&ta, &tb);
	ASSERT_GT(tb, ta);
	struct seg_test_place prev = {};
	for (int i = 0; i < 100; i++) {
		const std::string ka = "a" + std::to_string(i), kb = "b" + std::to_string(i);

		ASSERT_EQ(set(w, ka, v, ENGINE_SET, ta), ENGINE_OK);
		ASSERT_EQ(set(w, kb, v, ENGINE_SET, tb), ENGINE_OK);
		const struct seg_test_place pa = at(ka), pb = at(kb);
		ASSERT_NE(pa.seg, pb.seg);
		if (i > 0 && pa.seg == prev.seg) {
			EXPECT_EQ(pa.off, prev.off + prev.span) << i;
		}
		EXPECT_EQ(pa.write_off, pa.off + pa.span) << i; // given back when b took it
		prev = pa;
	}
	for (int i = 0; i < 100; i++)
		EXPECT_TRUE(hit("a" + std::to_string(i)) && hit("b" + std::to_string(i))) << i;
	EXPECT_EQ(check(), "");
}

// A worker's own open segment for a bucket whose slot another bucket takes
// over is sealed where its last item ends (it would stay open with no
// writer otherwise); the bucket's next item opens another.
TEST_F(SegChunk, ATakenOverRefSealsItsOwnSegment)
{
	make(16u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	int64_t ta = 0, tb = 0;
	same_slot_ttls(&ta, &tb);
	seg_test_own_open(w);
	ASSERT_EQ(set(w, "a0", v, ENGINE_SET, ta), ENGINE_OK);
	struct seg_test_place pa = at("a0");
	EXPECT_FALSE(pa.sealed);
	ASSERT_EQ(set(w, "b0", v, ENGINE_SET, tb), ENGINE_OK);
	pa = at("a0");
	EXPECT_TRUE(pa.sealed);
	EXPECT_EQ(pa.write_off, pa.off + pa.span);
	ASSERT_EQ(set(w, "a1", v, ENGINE_SET, ta), ENGINE_OK);
	EXPECT_NE(at("a1").seg, pa.seg);
	EXPECT_TRUE(at("b0").sealed); // and b's in turn
	EXPECT_TRUE(hit("a0") && hit("a1") && hit("b0"));
	EXPECT_EQ(check(), "");
}

// A filler parses as one item exactly as long as the bytes it covers, at
// every size where its value length takes another byte, and no stored item
// (with client flags or without) reads as a filler.
TEST(SegFiller, ParsesAsTheBytesItCovers)
{
	std::vector<uint8_t> buf(SEG_FILLER_MAX + 16, 0xa5);
	std::vector<uint32_t> sizes;
	for (uint32_t n = SEG_FILLER_MIN; n < 200; n++)
		sizes.push_back(n);
	for (uint32_t edge : { 1u << 13, 1u << 20, SEG_FILLER_MAX - 8 })
		for (uint32_t n = edge - 4; n < edge + 12; n++)
			sizes.push_back(n);
	sizes.push_back(SEG_FILLER_MAX);
	for (uint32_t n : sizes) {
		struct item_view iv = {};

		item_write_filler(buf.data(), n);
		ASSERT_EQ(item_parse(buf.data(), n, &iv), 1) << n;
		EXPECT_EQ(iv.total, n);
		EXPECT_TRUE(item_is_filler(buf.data(), &iv)) << n;
	}
	// the head a chunk's filler moves by, over bytes of an item before
	for (uint32_t n = SEG_FILLER_MIN; n <= SEG_FILLER_HEAD_MAX; n++) {
		struct item_view iv = {};

		std::fill(buf.begin(), buf.begin() + 16, 0xa5); // over the last head
		item_write_filler_head(buf.data(), n);
		ASSERT_EQ(item_parse(buf.data(), n, &iv), 1) << n;
		EXPECT_EQ(iv.total, n);
		EXPECT_TRUE(item_is_filler(buf.data(), &iv)) << n;
		EXPECT_EQ(item_parse(buf.data(), n - 1, &iv), 0) << n; // not shorter
	}
	for (uint32_t klen : { 1u, 16u, 250u })
		for (uint32_t vlen : { 0u, 15u, 63u, 64u, 9000u })
			for (uint32_t flags : { 0u, 1u, 0x10000u }) {
				struct item_view iv = {};
				const uint32_t size = item_size(klen, vlen, flags);

				item_write_hdr(buf.data(), klen, vlen, flags, 3);
				ASSERT_EQ(item_parse(buf.data(), size, &iv), 1);
				EXPECT_FALSE(item_is_filler(buf.data(), &iv))
					<< klen << " " << vlen << " " << flags;
			}
}

} // namespace
