// SPDX-License-Identifier: BSD-3-Clause
// Torture test for lib/seg's segment lifecycle: writers doing every kind
// of write on overlapping keys with TTLs from 1 s to never, readers that
// check every value they get against what could have been written,
// flush_all with and without delay and the expiration sweep in a loop, an
// engine clock that races ahead so expiry and merge happen all the time,
// and a heap small enough that eviction never stops. For every eviction
// policy. A watchdog turns a hang into a failure that says who hung.
//
// Environment (defaults bound the whole test to well under a minute):
//   SEG_TORTURE_SECONDS   seconds per eviction policy (default 3; a policy that
//                         evicts goes on until it has, at most 60 s more)
//   SEG_TORTURE_THREADS   writer threads (default 4); readers are half that
//   SEG_TORTURE_WATCHDOG  seconds without progress that count as a hang (30)
//   SEG_TORTURE_SLOW      pace of the flusher and of the engine clock, slowed by
//                         this factor (default 1) for builds that run the engine
//                         many times slower (ThreadSanitizer: CI uses 20), so
//                         that writers still fill the heap between flushes and
//                         before their items expire
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"
#include "../test_rand.h"

namespace {

unsigned env_unsigned(const char *name, unsigned dflt)
{
	const char *s = getenv(name);
	return s && *s ? static_cast<unsigned>(strtoul(s, nullptr, 10)) : dflt;
}

// The engine clock that the clock thread races ahead.
using RaceClock = seg_fixture::FakeClock;

constexpr unsigned kKeys = 600;           // overlapping key space, over 64 head buckets
constexpr int64_t kMaxTtl = 50000;        // longest relative TTL written
// An absolute exptime in 2038 (memcached's largest): lib/seg caps its
// life at ~97 days, in a segment whose expiry grid ends there.
constexpr int64_t kFarExptime = 2147483646;
constexpr size_t kBuf = 70u << 10;        // larger than any item (64 KiB segments)
const int64_t kTtls[] = {1, 2, 3, 7, 30, 200, 3000, kMaxTtl, kFarExptime, 0, 0, -1};

bool is_counter(unsigned key) { return key % 4 == 3; }
uint32_t flags_of(unsigned key) { return key * 2654435761u | 1; }
std::string key_name(unsigned key) { return "t" + std::to_string(key); }

// A blob value is a run of chunks "<key.nonce.len>payload"; the payload is
// derived from (key, nonce), so a reader can check that every byte it got
// was written for this key, in one piece.
void payload(unsigned key, uint64_t nonce, size_t len, char *out)
{
	uint64_t x = (nonce * 0x9e3779b97f4a7c15ull) ^ (key + 1ull) * 0xbf58476d1ce4e5b9ull;
	for (size_t i = 0; i < len; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = static_cast<char>('0' + (x >> 58));
	}
}

std::string chunk(unsigned key, uint64_t nonce, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "<%u.%" PRIu64 ".%zu>", key, nonce, len);
	std::string s(head, static_cast<size_t>(n));
	s.resize(n + len);
	payload(key, nonce, len, &s[n]);
	return s;
}

// Empty if v could have been written for key; otherwise what is wrong.
std::string check_value(unsigned key, const char *v, size_t len)
{
	if (is_counter(key)) {
		uint64_t n = 0;
		if (len == 0 || len > 20)
			return "counter of length " + std::to_string(len);
		for (size_t i = 0; i < len; i++) {
			if (v[i] < '0' || v[i] > '9')
				return "counter with a non-digit";
			uint64_t d = static_cast<uint64_t>(v[i] - '0');
			if (n > (UINT64_MAX - d) / 10)
				return "counter above 2^64";
			n = n * 10 + d;
		}
		return "";
	}
	std::string expect;
	for (size_t at = 0; at < len;) {
		unsigned k;
		uint64_t nonce;
		size_t clen;
		int used = 0;
		std::string head(v + at, std::min<size_t>(len - at, 64));
		if (sscanf(head.c_str(), "<%u.%" SCNu64 ".%zu>%n", &k, &nonce, &clen, &used) != 3 ||
		    used == 0)
			return "no chunk header at byte " + std::to_string(at);
		if (k != key)
			return "chunk of key " + std::to_string(k) + " at byte " +
			       std::to_string(at);
		if (at + used + clen > len)
			return "chunk runs past the value end at byte " + std::to_string(at);
		expect.resize(clen);
		payload(key, nonce, clen, expect.data());
		if (memcmp(v + at + used, expect.data(), clen) != 0)
			return "chunk payload differs at byte " + std::to_string(at);
		at += used + clen;
	}
	return "";
}

struct Progress {
	std::atomic<uint64_t> ops{0};
	std::atomic<const char *> doing{"start"};
};

struct Totals {
	std::atomic<uint64_t> ops{0}, checked{0}, flushes{0}, sweeps{0};
};

class Torture : public ::testing::TestWithParam<enum engine_eviction> {
protected:
	RaceClock clock;
	struct engine *e = nullptr;
	std::atomic<bool> stop{false};
	Totals totals;
	unsigned slow = 1; // SEG_TORTURE_SLOW

	void TearDown() override { engine_destroy(e); }

	// Fails the test (with the key, the op and what was wrong) on a value
	// that cannot have been written, or an expiry already passed.
	void check_item(unsigned key, const char *op, int64_t now_before, const char *v,
			const struct engine_item &it)
	{
		std::string bad = check_value(key, v, it.vlen);
		ASSERT_EQ(bad, "") << op << " " << key_name(key) << ": " << std::string(v, it.vlen);
		ASSERT_EQ(it.flags, flags_of(key)) << op << " " << key_name(key);
		if (it.expires_at != 0) {
			ASSERT_GT(it.expires_at, now_before)
				<< op << " " << key_name(key) << " served after its expiry";
			ASSERT_TRUE(it.expires_at <= clock.now.load() + kMaxTtl ||
				    it.expires_at <= kFarExptime)
				<< op << " " << key_name(key)
				<< " expires later than any exptime written";
		}
		totals.checked++;
	}

	void writer(unsigned id, Progress *p)
	{
		struct engine_worker *w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		// Odd writers append to open segments of their own, even ones
		// share theirs (the small heap's default): both at once.
		if (id % 2)
			seg_test_own_open(w);
		const bool may_fail = GetParam() == ENGINE_EVICT_NONE;
		std::vector<char> buf(kBuf);
		uint64_t rng = 0x1234567ull * (id + 1), seq = 0;

		while (!stop.load(std::memory_order_relaxed)) {
			const unsigned key = static_cast<unsigned>(next_rand(&rng) % kKeys);
			const std::string k = key_name(key);
			const int64_t ttl =
				kTtls[next_rand(&rng) % (sizeof(kTtls) / sizeof(kTtls[0]))];
			const uint64_t nonce = (uint64_t)id << 40 | ++seq;
			const unsigned what = static_cast<unsigned>(next_rand(&rng) % 100);
			// mostly small values, some up to 5 KB
			const size_t len = next_rand(&rng) % 8 == 0 ? next_rand(&rng) % 5000
								     : next_rand(&rng) % 40;
			std::string v = is_counter(key) ? std::to_string(next_rand(&rng) % 1000000)
							: chunk(key, nonce, len);
			struct engine_item it = {};
			int64_t now = clock.now.load();
			enum engine_status rc;

			p->ops++;
			if (what < 25) {
				p->doing = "set";
				rc = engine_store(w, ENGINE_SET, k.data(), k.size(), v.data(),
						  v.size(), flags_of(key), ttl, 0, nullptr);
				ASSERT_TRUE(rc == ENGINE_OK || (may_fail && rc == ENGINE_NO_MEMORY))
					<< "set " << engine_status_name(rc);
			} else if (what < 32) {
				p->doing = "add";
				rc = engine_store(w, ENGINE_ADD, k.data(), k.size(), v.data(),
						  v.size(), flags_of(key), ttl, 0, nullptr);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_NOT_STORED ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "add " << engine_status_name(rc);
			} else if (what < 36) {
				p->doing = "replace";
				rc = engine_store(w, ENGINE_REPLACE, k.data(), k.size(), v.data(),
						  v.size(), flags_of(key), ttl, 0, nullptr);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_NOT_STORED ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "replace " << engine_status_name(rc);
			} else if (what < 44) {
				p->doing = "gets+cas";
				rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
						buf.size(), &it);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS)
					<< engine_status_name(rc);
				if (rc == ENGINE_OK) {
					check_item(key, "gets", now, buf.data(), it);
					rc = engine_store(w, ENGINE_CAS, k.data(), k.size(),
							  v.data(), v.size(), flags_of(key), ttl,
							  it.cas, nullptr);
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_EXISTS ||
						    rc == ENGINE_MISS ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< "cas " << engine_status_name(rc);
				}
			} else if (what < 58) {
				if (is_counter(key)) {
					p->doing = "incr/decr";
					uint64_t n;
					rc = engine_arith(w, k.data(), k.size(), what % 2, 1 + what,
							  &n, nullptr);
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< "incr on a counter: " << engine_status_name(rc);
				} else {
					p->doing = what % 2 ? "append" : "prepend";
					v = chunk(key, nonce, len % 64);
					rc = engine_store(w,
							  what % 2 ? ENGINE_APPEND : ENGINE_PREPEND,
							  k.data(), k.size(), v.data(), v.size(),
							  0, 0, 0, nullptr);
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_NOT_STORED ||
						    rc == ENGINE_TOO_LARGE ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< p->doing.load() << " " << engine_status_name(rc);
				}
			} else if (what < 64) {
				p->doing = "delete";
				rc = engine_delete(w, k.data(), k.size(), 0);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS)
					<< "delete " << engine_status_name(rc);
			} else if (what < 70) {
				p->doing = "touch";
				rc = engine_touch(w, k.data(), k.size(), ttl);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "touch " << engine_status_name(rc);
			} else if (what < 75) {
				p->doing = "gat";
				rc = engine_get(w, k.data(), k.size(), ttl, buf.data(),
						buf.size(), &it);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "gat " << engine_status_name(rc);
				if (rc == ENGINE_OK && ttl >= 0)
					check_item(key, "gat", now, buf.data(), it);
			} else {
				p->doing = "get";
				rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
						buf.size(), &it);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS)
					<< engine_status_name(rc);
				if (rc == ENGINE_OK)
					check_item(key, "get", now, buf.data(), it);
			}
		}
		engine_worker_destroy(w);
	}

	void reader(unsigned id, Progress *p)
	{
		struct engine_worker *w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		std::vector<char> buf(kBuf);
		uint64_t rng = 0xabcdefull * (id + 7);

		p->doing = "get";
		while (!stop.load(std::memory_order_relaxed)) {
			const unsigned key = static_cast<unsigned>(next_rand(&rng) % kKeys);
			const std::string k = key_name(key);
			struct engine_item it = {};
			int64_t now = clock.now.load();
			enum engine_status rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH,
							   buf.data(), buf.size(), &it);

			p->ops++;
			ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS) << engine_status_name(rc);
			if (rc == ENGINE_OK)
				check_item(key, "get", now, buf.data(), it);
		}
		engine_worker_destroy(w);
	}

	// flush_all now and later, the expiration sweep and stats, in a loop.
	void flusher(Progress *p)
	{
		uint64_t rng = 42;

		while (!stop.load(std::memory_order_relaxed)) {
			struct engine_stats st;
			unsigned r = static_cast<unsigned>(next_rand(&rng) % 10);

			p->ops++;
			p->doing = "expire";
			engine_expire(e);
			totals.sweeps++;
			if (r < 2) {
				p->doing = "flush_all";
				engine_flush_all(e, 0);
				totals.flushes++;
			} else if (r < 4) {
				p->doing = "flush_all delayed";
				engine_flush_all(e, 1 + r);
			}
			p->doing = "stats";
			engine_stats(e, &st);
			p->doing = "sleep";
			std::this_thread::sleep_for(std::chrono::milliseconds(3 * slow));
		}
	}

	// The engine clock runs about a thousand times faster than real time.
	void ticker(Progress *p)
	{
		p->doing = "tick";
		while (!stop.load(std::memory_order_relaxed)) {
			clock.now++;
			p->ops++;
			std::this_thread::sleep_for(std::chrono::milliseconds(slow));
		}
	}

	// Runs a thread's body; a failed ASSERT returns early, and the thread
	// still counts as done for the watchdog.
	template <typename F> void run(Progress *p, F body)
	{
		body();
		totals.ops += p->ops;
		p->doing = "done";
	}
};

const char *policy_name(enum engine_eviction ev)
{
	switch (ev) {
	case ENGINE_EVICT_MERGE: return "merge";
	case ENGINE_EVICT_FIFO: return "fifo";
	case ENGINE_EVICT_RANDOM: return "random";
	default: return "none";
	}
}

TEST_P(Torture, EveryValueReadCouldHaveBeenWritten)
{
	const unsigned seconds = env_unsigned("SEG_TORTURE_SECONDS", 3);
	const unsigned writers = std::max(1u, env_unsigned("SEG_TORTURE_THREADS", 4));
	const unsigned readers = std::max(1u, writers / 2);
	const unsigned watchdog_s = std::max(1u, env_unsigned("SEG_TORTURE_WATCHDOG", 30));
	seg_fixture::SegConfig c;

	slow = std::max(1u, env_unsigned("SEG_TORTURE_SLOW", 1));
	char err[256] = "";

	// 2.5 MiB in 64 KiB segments (about 30) and 64 head buckets: every
	// writer keeps several TTL buckets open, eviction runs all the time,
	// and hash chains overflow into buckets carved from the heap.
	c.memory = 5u << 19;
	c.segment_size = 64u << 10;
	c.hash_power = 6;
	c.eviction = GetParam();
	c.max_workers = writers + readers + 1;
	struct engine_config cfg = seg_fixture::seg_test_config(c, &clock);
	e = seg_create(&cfg, err, sizeof(err));
	ASSERT_NE(e, nullptr) << err;

	std::vector<Progress> progress(writers + readers + 2);
	std::vector<const char *> role(progress.size());
	std::vector<std::thread> ts;
	for (unsigned i = 0; i < writers; i++) {
		role[i] = "writer";
		ts.emplace_back([this, i, &progress] {
			run(&progress[i], [&] { writer(i, &progress[i]); });
		});
	}
	for (unsigned i = 0; i < readers; i++) {
		role[writers + i] = "reader";
		Progress *p = &progress[writers + i];
		ts.emplace_back([this, i, p] { run(p, [&] { reader(i, p); }); });
	}
	role[writers + readers] = "flusher";
	ts.emplace_back([this, p = &progress[writers + readers]] { run(p, [&] { flusher(p); }); });
	role[writers + readers + 1] = "clock";
	ts.emplace_back([this, p = &progress[writers + readers + 1]] {
		run(p, [&] { ticker(p); });
	});

	// Watchdog: every thread must make progress. A thread that makes none
	// for watchdog_s seconds is hung; the process cannot be rescued then,
	// so say who hung and doing what, and abort.
	const auto start = std::chrono::steady_clock::now();
	std::vector<uint64_t> last(progress.size(), 0);
	std::vector<std::chrono::steady_clock::time_point> moved(progress.size(), start);
	for (;;) {
		const auto now = std::chrono::steady_clock::now();
		// The run is meant to evict: on a slow build (ASan on a loaded
		// host, flushes emptying the heap) that can take longer than
		// `seconds`, so go on until it has, within a bound.
		bool evicting = GetParam() == ENGINE_EVICT_NONE;
		if (!evicting) {
			struct engine_stats es;

			engine_stats(e, &es);
			evicting = es.seg_evicted > 0;
		}
		bool done = (now - start >= std::chrono::seconds(seconds) && evicting) ||
			    now - start >= std::chrono::seconds(seconds + 60) ||
			    ::testing::Test::HasFailure();
		if (done && !stop.exchange(true))
			moved.assign(progress.size(), now); // give everyone time to stop
		bool all_done = stop;
		for (size_t i = 0; i < progress.size(); i++) {
			uint64_t ops = progress[i].ops.load();
			const char *doing = progress[i].doing.load();
			if (strcmp(doing, "done") != 0)
				all_done = false;
			if (ops != last[i] || strcmp(doing, "done") == 0) {
				last[i] = ops;
				moved[i] = now;
			} else if (now - moved[i] > std::chrono::seconds(watchdog_s)) {
				struct engine_stats st;
				engine_stats(e, &st);
				fprintf(stderr,
					"\nseg torture HANG (eviction %s): %s thread %zu "
					"made no progress for %u s, stuck in \"%s\" after %" PRIu64
					" ops; seg free %" PRIu64 " open %" PRIu64
					" sealed %" PRIu64 " of %" PRIu64 "\n",
					policy_name(GetParam()), role[i], i, watchdog_s, doing, ops,
					st.seg_free, st.seg_open, st.seg_sealed, st.seg_total);
				for (size_t j = 0; j < progress.size(); j++)
					fprintf(stderr,
						"  %s thread %zu: \"%s\", %" PRIu64 " ops\n",
						role[j], j, progress[j].doing.load(),
						progress[j].ops.load());
				fflush(stderr);
				std::abort();
			}
		}
		if (all_done)
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	for (auto &t : ts)
		t.join();
	if (HasFailure())
		return;

	// At rest: every value still there is whole, and the accounting adds
	// up: after a flush nothing is live and no segment is lost.
	struct engine_worker *w = engine_worker_create(e);
	ASSERT_NE(w, nullptr);
	std::vector<char> buf(kBuf);
	uint64_t visible = 0;
	for (unsigned key = 0; key < kKeys; key++) {
		const std::string k = key_name(key);
		struct engine_item it = {};
		int64_t now = clock.now.load();
		enum engine_status rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH,
						   buf.data(), buf.size(), &it);
		ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS) << engine_status_name(rc);
		if (rc == ENGINE_OK) {
			check_item(key, "final get", now, buf.data(), it);
			visible++;
		}
	}
	struct seg_census census;
	char why[256] = "";
	EXPECT_EQ(seg_test_check(e, &census, why, sizeof(why)), 0) << why;
	struct engine_stats st;
	engine_stats(e, &st);
	EXPECT_GE(st.curr_items, visible);
	EXPECT_LE(st.curr_items, kKeys);
	const uint64_t evictions = st.evictions, seg_evicted = st.seg_evicted,
		       merged = st.seg_merged, seg_expired = st.seg_expired;
	engine_flush_all(e, 0);
	engine_stats(e, &st);
	EXPECT_EQ(st.curr_items, 0u);
	EXPECT_EQ(st.bytes, 0u);
	EXPECT_EQ(st.seg_open + st.seg_sealed, 0u);
	EXPECT_EQ(st.seg_free + st.seg_hash, st.seg_total);
	EXPECT_EQ(seg_test_check(e, &census, why, sizeof(why)), 0) << why;
	for (unsigned key = 0; key < kKeys; key += 7) {
		const std::string k = key_name(key), v = is_counter(key) ? "7" : chunk(key, 1, key);
		ASSERT_EQ(engine_store(w, ENGINE_SET, k.data(), k.size(), v.data(), v.size(),
				       flags_of(key), 0, 0, nullptr), ENGINE_OK);
		struct engine_item it = {};
		ASSERT_EQ(engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(), buf.size(),
				     &it), ENGINE_OK);
		ASSERT_EQ(std::string(buf.data(), it.vlen), v);
	}
	engine_worker_destroy(w);
	if (GetParam() != ENGINE_EVICT_NONE) {
		EXPECT_GT(seg_evicted, 0u) << "the heap was meant to be too small";
	}
	printf("seg torture %s: %u writers %u readers %u s: %" PRIu64 " ops, %" PRIu64
	       " values checked, %" PRIu64 " items evicted (%" PRIu64 " segments, %" PRIu64
	       " merges), %" PRIu64 " segments expired, %" PRIu64 " flushes, %" PRIu64 " sweeps\n",
	       policy_name(GetParam()), writers, readers, seconds, totals.ops.load(),
	       totals.checked.load(), evictions, seg_evicted, merged, seg_expired,
	       totals.flushes.load(), totals.sweeps.load());
}

INSTANTIATE_TEST_SUITE_P(Policies, Torture,
			 ::testing::Values(ENGINE_EVICT_MERGE, ENGINE_EVICT_FIFO,
					   ENGINE_EVICT_RANDOM, ENGINE_EVICT_NONE),
			 [](const ::testing::TestParamInfo<enum engine_eviction> &i) {
				 return std::string(policy_name(i.param));
			 });

} // namespace
