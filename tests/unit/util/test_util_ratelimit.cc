// SPDX-License-Identifier: BSD-3-Clause
// lib/util/util_ratelimit: the first event is logged, then at most one per
// interval, each logged one carrying the count of those not logged; many
// threads hitting one limiter lose no event from the counts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "util/util_ratelimit.h"

namespace {

const uint64_t kSec = 1000000000u;

TEST(UtilRatelimit, FirstEventIsLoggedWithNothingSuppressed)
{
	struct util_ratelimit rl = UTIL_RATELIMIT_INIT(10);
	uint64_t suppressed = 99;

	EXPECT_TRUE(util_ratelimit_at(&rl, 5 * kSec, &suppressed));
	EXPECT_EQ(suppressed, 0u);
}

TEST(UtilRatelimit, OneLinePerIntervalWithTheCountOfTheRest)
{
	struct util_ratelimit rl = UTIL_RATELIMIT_INIT(10);
	uint64_t suppressed = 0;

	ASSERT_TRUE(util_ratelimit_at(&rl, 100 * kSec, &suppressed));
	// 7 more within the 10 s: none logged
	for (int i = 0; i < 7; i++)
		EXPECT_FALSE(util_ratelimit_at(&rl, 100 * kSec + (uint64_t)i * kSec, &suppressed));
	EXPECT_FALSE(util_ratelimit_at(&rl, 110 * kSec - 1, &suppressed));
	// the interval is over: logged, saying 8 were not
	ASSERT_TRUE(util_ratelimit_at(&rl, 110 * kSec, &suppressed));
	EXPECT_EQ(suppressed, 8u);
	// the count starts again from 0
	EXPECT_FALSE(util_ratelimit_at(&rl, 111 * kSec, &suppressed));
	ASSERT_TRUE(util_ratelimit_at(&rl, 500 * kSec, &suppressed));
	EXPECT_EQ(suppressed, 1u);
}

TEST(UtilRatelimit, LimitersOfDifferentKindsAreIndependent)
{
	struct util_ratelimit a = UTIL_RATELIMIT_INIT(60);
	struct util_ratelimit b = UTIL_RATELIMIT_INIT(60);
	uint64_t suppressed = 0;

	EXPECT_TRUE(util_ratelimit_at(&a, kSec, &suppressed));
	EXPECT_FALSE(util_ratelimit_at(&a, 2 * kSec, &suppressed));
	EXPECT_TRUE(util_ratelimit_at(&b, 2 * kSec, &suppressed));
	EXPECT_EQ(suppressed, 0u);
}

TEST(UtilRatelimit, TheMonotonicClockFormLogsTheFirstAndHoldsTheNext)
{
	struct util_ratelimit rl = UTIL_RATELIMIT_INIT(3600);
	uint64_t suppressed = 99;

	EXPECT_TRUE(util_ratelimit(&rl, &suppressed));
	EXPECT_EQ(suppressed, 0u);
	EXPECT_FALSE(util_ratelimit(&rl, &suppressed));
}

// Every event is either logged or counted in the next logged line: with
// threads racing at the same instants, logged + suppressed counts add up
// to the events, and exactly one line is logged per distinct interval.
TEST(UtilRatelimit, ThreadsLoseNoEvent)
{
	struct util_ratelimit rl = UTIL_RATELIMIT_INIT(1);
	const int threads = 4, per_thread = 20000, intervals = 50;
	std::atomic<uint64_t> logged{0}, counted{0};
	std::vector<std::thread> ts;

	for (int t = 0; t < threads; t++)
		ts.emplace_back([&] {
			for (int i = 0; i < per_thread; i++) {
				// time steps through `intervals` whole seconds
				uint64_t now = (1 + (uint64_t)i * intervals / per_thread) * kSec;
				uint64_t s = 0;

				if (util_ratelimit_at(&rl, now, &s)) {
					logged++;
					counted += s;
				}
			}
		});
	for (auto &t : ts)
		t.join();
	// the ones after the last logged line are still held
	EXPECT_EQ(logged + counted + __atomic_load_n(&rl.suppressed, __ATOMIC_RELAXED),
		  (uint64_t)threads * per_thread);
	EXPECT_GE(logged.load(), 1u);
	EXPECT_LE(logged.load(), (uint64_t)intervals);
}

} // namespace
