// SPDX-License-Identifier: BSD-3-Clause
// lib/seg's batched get under one exact interleaving: the item a batch is
// reading is flushed, or overwritten, and its segment reused by other
// objects after the engine found it and before it copied it. The sink's
// value_buf runs at that very moment (lock-free attempts hold no lock), so
// the test does the writes there, from a second worker on the same thread.
// The batch must notice (the segment's gen changed), read again and give
// the key's current state, never the bytes now at the old place.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "seg/seg.h"
#include "seg_fixture.h"

namespace {

struct Interfere {
	struct engine *e;
	struct engine_worker *w2;
	unsigned victim;          // the key index whose first read is disturbed
	bool overwrite;           // set the victim anew (else flush_all)
	unsigned calls[4] = {};   // value_buf calls per key
	std::vector<char> bufs[4];
	enum engine_status st[4] = {};
	std::string value[4];

	static void *value_buf(void *arg, unsigned i, const struct engine_item *it)
	{
		Interfere *f = static_cast<Interfere *>(arg);
		if (i == f->victim && f->calls[i]++ == 0)
			f->disturb();
		f->bufs[i].assign(it->vlen, '\0');
		return f->bufs[i].data();
	}
	static bool done(void *arg, unsigned i, enum engine_status st,
			 const struct engine_item *it)
	{
		Interfere *f = static_cast<Interfere *>(arg);
		f->st[i] = st;
		if (st == ENGINE_OK)
			f->value[i].assign(f->bufs[i].data(), it->vlen);
		return true;
	}
	// Frees the victim's segment (flush_all) or leaves its item dead
	// (overwrite), then writes the heap over twice with other objects,
	// so its old place holds other bytes.
	void disturb()
	{
		if (overwrite) {
			ASSERT_EQ(engine_store(w2, ENGINE_SET, "victim", 6, "new value", 9, 7, 0, 0,
					       nullptr),
				  ENGINE_OK);
		} else {
			engine_flush_all(e, 0);
		}
		std::string other(1000, 'X');
		for (unsigned i = 0; i < 2 * 4096; i++) {
			std::string k = "other" + std::to_string(i);
			ASSERT_EQ(engine_store(w2, ENGINE_SET, k.data(), k.size(), other.data(),
					       other.size(), 0, 0, 0, nullptr),
				  ENGINE_OK);
		}
	}
};

class SegBatch : public ::testing::TestWithParam<bool> {};

TEST_P(SegBatch, ValueReusedWhileReadIsReadAgain)
{
	seg_fixture::SegConfig c;
	char err[256] = "";
	c.memory = 4u << 20;
	c.segment_size = 64u << 10;
	c.max_workers = 4;
	struct engine_config cfg = seg_fixture::seg_test_config(c, nullptr);
	struct engine *e = seg_create(&cfg, err, sizeof(err));
	ASSERT_NE(e, nullptr) << err;
	struct engine_worker *w = engine_worker_create(e);
	struct engine_worker *w2 = engine_worker_create(e);
	ASSERT_NE(w, nullptr);
	ASSERT_NE(w2, nullptr);
	const bool overwrite = GetParam();
	std::string old(1000, 'o');
	ASSERT_EQ(engine_store(w, ENGINE_SET, "before", 6, "b", 1, 0, 0, 0, nullptr), ENGINE_OK);
	ASSERT_EQ(engine_store(w, ENGINE_SET, "victim", 6, old.data(), old.size(), 3, 0, 0,
			       nullptr),
		  ENGINE_OK);

	Interfere f;
	f.e = e;
	f.w2 = w2;
	f.victim = 1;
	f.overwrite = overwrite;
	struct engine_key keys[3] = {{"before", 6}, {"victim", 6}, {"victim", 6}};
	struct engine_get_sink sink = {Interfere::value_buf, Interfere::done, &f};
	uint64_t retries = w->counters[ENGINE_C_read_retries];
	engine_get_batch(w, keys, 3, &sink);

	EXPECT_EQ(f.st[0], ENGINE_OK);
	EXPECT_EQ(f.value[0], "b");
	// read, disturbed, read again
	EXPECT_EQ(f.calls[1], overwrite ? 2u : 1u);
	EXPECT_GT(w->counters[ENGINE_C_read_retries], retries);
	if (overwrite) {
		// the new value, unless the churn evicted it too
		for (unsigned i = 1; i < 3; i++) {
			ASSERT_TRUE(f.st[i] == ENGINE_OK || f.st[i] == ENGINE_MISS) << i;
			if (f.st[i] == ENGINE_OK) {
				EXPECT_EQ(f.value[i], "new value") << i;
			}
		}
	} else {
		EXPECT_EQ(f.st[1], ENGINE_MISS) << "got " << f.value[1].substr(0, 40);
		EXPECT_EQ(f.st[2], ENGINE_MISS);
	}
	engine_worker_destroy(w2);
	engine_worker_destroy(w);
	engine_destroy(e);
}

INSTANTIATE_TEST_SUITE_P(Disturbances, SegBatch, testing::Values(false, true),
			 [](const testing::TestParamInfo<bool> &info) {
				 return std::string(info.param ? "Overwrite" : "FlushAll");
			 });

} // namespace
