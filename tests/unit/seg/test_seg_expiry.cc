// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/seg's expiry without evict_lock and the bugs issue 34
// found reading it: each forces its interleaving through the test hook of
// seg_test.h (a second worker acts in the middle of the first one's
// operation), then checks the result and the engine's invariants.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"

// calloc, failing on demand: the next call for `fail_calloc_n` elements of
// a pointer's size returns NULL (seg_create's table of workers). Every
// other call is glibc's. Not under a sanitizer, whose allocator owns
// calloc (memory from glibc's would then be freed into it).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SEG_TEST_CALLOC 0
#else
#define SEG_TEST_CALLOC 1
extern "C" void *__libc_calloc(size_t n, size_t size);
#endif
static thread_local size_t fail_calloc_n = 0;
#if SEG_TEST_CALLOC
extern "C" void *
calloc(size_t n, size_t size)
{
	if (fail_calloc_n != 0 && n == fail_calloc_n && size == sizeof(void *)) {
		fail_calloc_n = 0;
		return nullptr;
	}
	return __libc_calloc(n, size);
}
#endif

namespace {

class SegExpiry : public seg_fixture::SegFixture {
protected:
	void TearDown() override
	{
		seg_test_set_hook(nullptr, nullptr);
		SegFixture::TearDown();
	}
	int set(struct engine_worker *wk, const std::string &k, const std::string &v,
		int64_t exptime = 0)
	{
		return engine_store(wk, ENGINE_SET, k.data(), k.size(), v.data(), v.size(), 0,
				    exptime, 0, nullptr);
	}
	std::string check(struct seg_census *c = nullptr)
	{
		struct seg_census tmp;
		char err[256] = "";
		return seg_test_check(e, c ? c : &tmp, err, sizeof(err)) == 0 ? "" : err;
	}
};

// Runs fn at the first point `at` reached, never again.
struct OneShot {
	enum seg_test_point at;
	std::function<void()> fn;
	bool fired = false;

	static void call(enum seg_test_point at, void *arg)
	{
		auto *h = static_cast<OneShot *>(arg);
		if (h->fired || at != h->at)
			return;
		h->fired = true;
		h->fn();
	}
};

// A sharer whose clock lags two seconds seals a shared segment that another
// worker has just opened and not yet written (its item's expiry falls below
// the segment's exp_base): that empty sealed segment is the head of its TTL
// chain. Expiry stopped at a head with exp_max 0, so nothing behind it ever
// expired until eviction reached it (with no memory pressure, never).
TEST_F(SegExpiry, EmptySealedHeadDoesNotStopItsChainsExpiry)
{
	make(16u << 20);
	struct engine_worker *b = engine_worker_create(e);
	ASSERT_NE(b, nullptr);
	const int64_t ttl = 16; // the lowest TTL of bucket 2 (8 s wide)
	std::atomic<bool> go{false}, sealed{false};
	// b, on its own thread, sets while w holds its mark on the bucket's
	// new shared segment (SEG_TP_RESERVE_HELD): two seconds behind, its
	// item's expiry falls below that segment's window, and b seals it
	// empty (SEG_TP_SEALING); w then goes on, finds it sealed, and both
	// items end up behind it. (b may expire the empty segment at once,
	// once w has left it: that is the fix.)
	struct Scene {
		std::atomic<bool> *go, *sealed;
		seg_fixture::FakeClock *clock;
		std::thread::id w_thread;
		bool held = false, seal_seen = false;
	} sc{&go, &sealed, &clock, std::this_thread::get_id()};
	auto hook = [](enum seg_test_point at, void *arg) {
		auto *s = static_cast<Scene *>(arg);
		const bool on_w = std::this_thread::get_id() == s->w_thread;

		if (at == SEG_TP_RESERVE_HELD && on_w && !s->held) {
			s->held = true;
			*s->go = true;
			for (int i = 0; i < 20000 && !s->sealed->load(); i++)
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
		} else if (at == SEG_TP_SEALING && !on_w && !s->seal_seen) {
			s->seal_seen = true;
			s->clock->now += 2; // b's clock catches up
			*s->sealed = true;
		}
	};
	std::thread tb([&] {
		for (int i = 0; i < 20000 && !go.load(); i++)
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		clock.now -= 2;
		EXPECT_EQ(set(b, "b", "2", ttl), ENGINE_OK);
	});
	seg_test_set_hook(hook, &sc);
	ASSERT_EQ(set(w, "a", "1", ttl), ENGINE_OK);
	tb.join();
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_TRUE(sealed.load()) << "the scenario did not seal the shared segment";
	struct seg_census c = {};
	ASSERT_EQ(check(&c), "");
	EXPECT_EQ(stats().curr_items, 2u);

	clock.advance(ttl + 10);
	engine_expire(e);
	const struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, 0u) << "items behind an empty sealed head never expire";
	EXPECT_EQ(st.expired, 2u);
	ASSERT_EQ(check(&c), "");
	EXPECT_EQ(c.sealed, 0u);
	engine_worker_destroy(b);
}

// Expiry frees what is due with no evict_lock: a worker that needs a
// segment on a full heap whose items have all expired gets one from expiry,
// taking no evict_lock pass, and so does the control thread's sweep.
TEST_F(SegExpiry, ExpiryTakesNoEvictLock)
{
	// FIFO: no merge reserve, so the pool is every free segment
	make(8u << 20, ENGINE_EVICT_FIFO, 64u << 10);
	const std::string v(200, 'x');
	struct engine_stats st = {};
	int i = 0;

	// Fill the heap with short-lived items until the pool is empty.
	for (; i < 200000; i++) {
		ASSERT_EQ(set(w, "t" + std::to_string(i), v, 5), ENGINE_OK);
		st = stats();
		if (st.seg_free == 0)
			break;
	}
	ASSERT_EQ(st.seg_free, 0u);
	const uint64_t passes = st.counters[ENGINE_C_evict_passes];
	const uint64_t other_ns = st.evict_ns_other;

	clock.advance(10);
	// Every write from now needs segments; all of them come from expiry.
	for (int k = 0; k < 5000; k++)
		ASSERT_EQ(set(w, "n" + std::to_string(k), v), ENGINE_OK);
	st = stats();
	EXPECT_GT(st.expired, 0u);
	EXPECT_EQ(st.counters[ENGINE_C_evict_passes], passes) << "a worker took evict_lock";
	EXPECT_EQ(st.evictions, 0u) << "expired items go before live ones";
	engine_expire(e); // the sweep: the rest of what is due
	st = stats();
	EXPECT_EQ(st.evict_ns_other, other_ns) << "the sweep took evict_lock";
	EXPECT_EQ(st.curr_items, 5000u);
	ASSERT_EQ(check(), "");
}

// flush_all waits for the merge passes in flight. It used to let evicting
// writers start new passes while it waited (it releases evict_lock in its
// wait), so with two or more passes allowed at once the count in flight
// might never reach 0. Now no pass starts while a flush waits: a writer
// that needs a segment then waits for the flush.
//
// Three threads: A's merge pass parks at SEG_TP_PASS_COPYING; F flushes
// and waits for it (SEG_TP_QUIESCE_WAIT); then B needs a segment. Either B
// starts a pass (it parks at SEG_TP_PASS_COPYING: the bug) or it waits
// (SEG_TP_EVICT_WAIT). Each thread's role decides what the hook does.
enum class Role { None, A, B, F };
thread_local Role role = Role::None;

struct FlushScene {
	std::atomic<bool> a_parked{false}, release_a{false};
	std::atomic<bool> b_parked{false}, b_waits{false}, release_b{false};
	std::atomic<bool> f_waits{false};

	static void wait_for(const std::atomic<bool> &flag)
	{
		// a bound against a hang, not a timing: the events are certain
		for (int i = 0; i < 20000 && !flag.load(); i++)
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	static void hook(enum seg_test_point at, void *arg)
	{
		auto *s = static_cast<FlushScene *>(arg);

		if (at == SEG_TP_PASS_COPYING && role == Role::A && !s->a_parked.load()) {
			s->a_parked = true;
			wait_for(s->release_a);
		} else if (at == SEG_TP_PASS_COPYING && role == Role::B && !s->b_parked.load()) {
			s->b_parked = true;
			wait_for(s->release_b);
		} else if (at == SEG_TP_QUIESCE_WAIT && role == Role::F) {
			s->f_waits = true;
		} else if (at == SEG_TP_EVICT_WAIT && role == Role::B) {
			s->b_waits = true;
		}
	}
};

TEST_F(SegExpiry, FlushIsNotStarvedByPassesThatKeepStarting)
{
	// 128 segments of 64 KiB; two spare reserves, so that two passes may
	// run at once (a heap makes its own spares only under contention).
	make(8u << 20, ENGINE_EVICT_MERGE, 64u << 10);
	ASSERT_EQ(seg_test_merge_spares(e, 2), 2u);
	const std::string v(300, 'v');
	int i = 0;

	// A full heap: from now every segment taken is an eviction.
	for (; i < 400000 && stats().counters[ENGINE_C_evict_passes] == 0; i++)
		ASSERT_EQ(set(w, "k" + std::to_string(i), v), ENGINE_OK);
	ASSERT_GT(stats().counters[ENGINE_C_evict_passes], 0u);

	FlushScene s;
	seg_test_set_hook(FlushScene::hook, &s);
	std::thread ta([&] {
		role = Role::A;
		struct engine_worker *wa = engine_worker_create(e);
		for (int k = 0; k < 400000 && !s.release_a.load(); k++)
			EXPECT_EQ(set(wa, "a" + std::to_string(k), v), ENGINE_OK);
		engine_worker_destroy(wa);
	});
	FlushScene::wait_for(s.a_parked);
	ASSERT_TRUE(s.a_parked.load());
	std::thread tf([&] {
		role = Role::F;
		engine_flush_all(e, 0);
	});
	FlushScene::wait_for(s.f_waits);
	ASSERT_TRUE(s.f_waits.load());
	std::thread tb([&] {
		role = Role::B;
		struct engine_worker *wb = engine_worker_create(e);
		// enough writes to need a segment, in a chain of their own (a
		// TTL): in A's, B would wait for A's new shared segment instead
		// (one opener per shared segment), never asking for one
		for (int k = 0; k < 2000 && !s.b_parked.load(); k++)
			EXPECT_EQ(set(wb, "b" + std::to_string(k), v, 3600), ENGINE_OK);
		engine_worker_destroy(wb);
	});
	for (int k = 0; k < 20000 && !s.b_parked.load() && !s.b_waits.load(); k++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	EXPECT_FALSE(s.b_parked.load()) << "a merge pass started while flush_all waited";
	EXPECT_TRUE(s.b_waits.load()) << "the writer neither waited nor started a pass";
	s.release_b = true;
	s.release_a = true;
	tf.join();
	ta.join();
	tb.join();
	seg_test_set_hook(nullptr, nullptr);
	ASSERT_EQ(check(), "");
}

// seg_create cleans up after a failed allocation through seg_destroy,
// which freed every worker through e->workers, NULL when that table was
// the allocation that failed.
TEST(SegCreate, SurvivesAFailedWorkersTable)
{
	if (!SEG_TEST_CALLOC)
		GTEST_SKIP() << "a sanitizer's allocator owns calloc here";
	seg_fixture::FakeClock clock;
	seg_fixture::SegConfig c;
	c.max_workers = 7; // a count no other calloc of seg_create asks for
	struct engine_config cfg = seg_fixture::seg_test_config(c, &clock);
	char err[256] = "";

	fail_calloc_n = 7;
	struct engine *e = seg_create(&cfg, err, sizeof(err));
	const bool failed_here = fail_calloc_n == 0;
	fail_calloc_n = 0;
	ASSERT_TRUE(failed_here) << "seg_create asked for no table of 7 pointers";
	EXPECT_EQ(e, nullptr);
	EXPECT_NE(std::string(err).find("cannot allocate"), std::string::npos) << err;
}

} // namespace
