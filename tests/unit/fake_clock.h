// SPDX-License-Identifier: BSD-3-Clause
// The clock the engine tests set by hand (engine_config's clock): expiry
// is tested by advancing it, not by sleeping, and every thread of a test
// reads the same "now". One copy for the engine, baseline, seg and cmd
// tests, which each had their own.
#ifndef SEGCACHED_FAKE_CLOCK_H
#define SEGCACHED_FAKE_CLOCK_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/engine.h"
#include "engine/engine_config.h"

constexpr int64_t kStart = 1700000000;

struct FakeClock {
	std::atomic<int64_t> now{kStart};
	static int64_t read(void *arg) { return static_cast<FakeClock *>(arg)->now.load(); }
	void advance(int64_t s) { now += s; }
};

// An engine of `memory` bytes with merge eviction, on `clock` (nullptr:
// the engine's own clock).
inline engine_config
test_config(size_t memory, FakeClock *clock)
{
	engine_config cfg;
	std::memset(&cfg, 0, sizeof(cfg));
	cfg.memory = memory;
	cfg.eviction = ENGINE_EVICT_MERGE;
	if (clock != nullptr) {
		cfg.clock = FakeClock::read;
		cfg.clock_arg = clock;
	}
	return cfg;
}

#endif
