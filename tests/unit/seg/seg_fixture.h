// SPDX-License-Identifier: BSD-3-Clause
// The set-up the lib/seg unit tests share: a fake engine clock, the
// engine_config they build (seg_test_config) and a fixture that creates
// the engine and one worker (SegFixture). test_seg_restart.cc maps its
// own heap file and builds its config itself.
#ifndef SEGCACHED_TEST_SEG_FIXTURE_H
#define SEGCACHED_TEST_SEG_FIXTURE_H

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "seg/seg.h"
#include "../fake_clock.h"

namespace seg_fixture {

// The engine clock, moved by the test (atomic: the torture test's threads
// move it while the engine reads it).
using ::FakeClock;

// What the tests vary; the rest of engine_config is 0 (engine defaults).
struct SegConfig {
	size_t memory = 16u << 20;
	enum engine_eviction eviction = ENGINE_EVICT_MERGE;
	size_t segment_size = 0;
	size_t item_max = 0;
	unsigned hash_power = 0;
	unsigned max_workers = 8;
	unsigned hash_grow = 0; // 0: the engine's default (16 times)
};

inline struct engine_config seg_test_config(const SegConfig &c, FakeClock *clock)
{
	struct engine_config cfg = {};

	cfg.memory = c.memory;
	cfg.eviction = c.eviction;
	cfg.segment_size = c.segment_size;
	cfg.item_max = c.item_max;
	cfg.hash_power = c.hash_power;
	cfg.max_workers = c.max_workers;
	cfg.hash_grow = c.hash_grow;
	if (clock != nullptr) {
		cfg.clock = FakeClock::read;
		cfg.clock_arg = clock;
	}
	return cfg;
}

// An engine (e) and one worker (w) on the fake clock. make() replaces
// them; TearDown destroys them.
class SegFixture : public ::testing::Test {
protected:
	FakeClock clock;
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;

	void make(size_t memory = 16u << 20, enum engine_eviction ev = ENGINE_EVICT_MERGE,
		  size_t seg_size = 0, size_t item_max = 0, unsigned hash_power = 0)
	{
		SegConfig c;

		c.memory = memory;
		c.eviction = ev;
		c.segment_size = seg_size;
		c.item_max = item_max;
		c.hash_power = hash_power;
		make(c);
	}
	void make(const SegConfig &c)
	{
		struct engine_config cfg = seg_test_config(c, &clock);
		char err[256] = "";

		destroy();
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
	void TearDown() override { destroy(); }

	struct engine_stats stats()
	{
		struct engine_stats st;
		engine_stats(e, &st);
		return st;
	}
};

} // namespace seg_fixture

#endif // SEGCACHED_TEST_SEG_FIXTURE_H
