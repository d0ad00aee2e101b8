// SPDX-License-Identifier: BSD-3-Clause
// Concurrency tests of the baseline engine: several std::threads (non-EAL
// threads, each with its own worker) on the same keys. Read-modify-writes
// must be atomic, so the final counts are exact; lock-free readers must
// never see a torn or recycled value, even while memory is being evicted
// and reclaimed. Every loop is bounded by a count.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "bl_test.h"

namespace {

constexpr int kThreads = 4;

// Runs fn(worker, thread index) on kThreads threads, each with its own
// worker, created and destroyed on that thread.
template <typename Fn>
void run_threads(engine *e, Fn fn)
{
	std::vector<std::thread> threads;
	std::atomic<int> failures{0};
	for (int t = 0; t < kThreads; t++) {
		threads.emplace_back([&, t] {
			engine_worker *w = engine_worker_create(e);
			if (w == nullptr) {
				failures++;
				return;
			}
			fn(w, t);
			engine_worker_destroy(w);
		});
	}
	for (auto &th : threads)
		th.join();
	ASSERT_EQ(failures.load(), 0) << "worker_create failed in a thread";
}

std::string read_value(engine_worker *w, const std::string &k, engine_item *it, int *rc)
{
	std::string buf(8192, '\0');
	*rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, &buf[0], buf.size(), it);
	if (*rc != ENGINE_OK)
		return std::string();
	buf.resize(it->vlen);
	return buf;
}

} // namespace

class BaselineConcurrency : public BaselineTest {};

TEST_F(BaselineConcurrency, IncrIsExact)
{
	const int per_thread = 3000;
	ASSERT_EQ(set("counter", "0"), ENGINE_OK);
	std::atomic<int> errors{0};
	run_threads(e, [&](engine_worker *tw, int) {
		for (int i = 0; i < per_thread; i++) {
			uint64_t v;
			if (engine_arith(tw, "counter", 7, true, 1, &v, nullptr) != ENGINE_OK)
				errors++;
		}
	});
	EXPECT_EQ(errors.load(), 0);
	EXPECT_EQ(get("counter"), std::to_string(kThreads * per_thread));
}

TEST_F(BaselineConcurrency, IncrAndDecrCancel)
{
	ASSERT_EQ(set("n", "1000000"), ENGINE_OK);
	run_threads(e, [&](engine_worker *tw, int t) {
		for (int i = 0; i < 2000; i++)
			engine_arith(tw, "n", 1, t % 2 == 0, 3, nullptr, nullptr);
	});
	EXPECT_EQ(get("n"), "1000000");
}

TEST_F(BaselineConcurrency, CasLoopIsExact)
{
	const int per_thread = 1000;
	ASSERT_EQ(set("c", "0"), ENGINE_OK);
	std::atomic<long> retries{0};
	std::atomic<int> errors{0};
	run_threads(e, [&](engine_worker *tw, int) {
		for (int done = 0; done < per_thread;) {
			engine_item it;
			int rc;
			std::string v = read_value(tw, "c", &it, &rc);
			if (rc != ENGINE_OK) {
				errors++;
				return;
			}
			std::string next = std::to_string(std::stoll(v) + 1);
			rc = engine_store(tw, ENGINE_CAS, "c", 1, next.data(), next.size(), 0, 0,
					  it.cas, nullptr);
			if (rc == ENGINE_OK)
				done++;
			else if (rc == ENGINE_EXISTS)
				retries++;
			else {
				errors++;
				return;
			}
		}
	});
	EXPECT_EQ(errors.load(), 0);
	EXPECT_EQ(get("c"), std::to_string(kThreads * per_thread));
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_cas_hits], static_cast<uint64_t>(kThreads * per_thread));
	EXPECT_EQ(st.counters[ENGINE_C_cas_badval], static_cast<uint64_t>(retries.load()));
}

TEST_F(BaselineConcurrency, AppendLosesNothing)
{
	const int per_thread = 400;
	ASSERT_EQ(set("log", ""), ENGINE_OK);
	run_threads(e, [&](engine_worker *tw, int t) {
		char c = static_cast<char>('a' + t);
		for (int i = 0; i < per_thread; i++)
			engine_store(tw, i % 2 ? ENGINE_APPEND : ENGINE_PREPEND, "log", 3, &c, 1,
				     0, 0, 0, nullptr);
	});
	std::string v = get("log");
	ASSERT_EQ(v.size(), static_cast<size_t>(kThreads * per_thread));
	for (int t = 0; t < kThreads; t++)
		EXPECT_EQ(std::count(v.begin(), v.end(), static_cast<char>('a' + t)), per_thread);
}

TEST_F(BaselineConcurrency, AddHasOneWinner)
{
	const int rounds = 300;
	std::vector<std::atomic<int>> wins(rounds);
	run_threads(e, [&](engine_worker *tw, int t) {
		for (int r = 0; r < rounds; r++) {
			std::string k = "add:" + std::to_string(r);
			std::string v = std::to_string(t);
			if (engine_store(tw, ENGINE_ADD, k.data(), k.size(), v.data(), v.size(),
					 0, 0, 0, nullptr) == ENGINE_OK)
				wins[r]++;
		}
	});
	for (int r = 0; r < rounds; r++)
		EXPECT_EQ(wins[r].load(), 1) << "round " << r;
}

// Writers keep replacing values (of changing lengths) on a small key set in
// a cache far smaller than what they write, so items are evicted and their
// memory recycled all the time; readers check every value they get is
// whole. A value is its length digit-tagged: "<len>:" then bytes that all
// equal the key's last digit, so a torn, mixed or recycled read shows.
TEST_F(BaselineConcurrency, ReadersSeeWholeValuesUnderEviction)
{
	start(test_config(6u << 20, &clock));
	std::atomic<long> bad{0}, hits{0}, sets_failed{0};
	const int keys = 5000, ops = 30000;
	run_threads(e, [&](engine_worker *tw, int t) {
		uint64_t x = 0x9E3779B97F4A7C15ULL * (t + 1);
		for (int i = 0; i < ops; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			int key = static_cast<int>(x % keys);
			std::string k = "rw:" + std::to_string(key);
			char fillc = static_cast<char>('0' + key % 10);
			if (t == 0 || i % 4 == 0) {
				size_t len = 16 + (x >> 32) % 1500;
				std::string v = std::to_string(len) + ":";
				v += std::string(len, fillc);
				if (engine_store(tw, ENGINE_SET, k.data(), k.size(), v.data(),
						 v.size(), 0, 0, 0, nullptr) != ENGINE_OK)
					sets_failed++;
			} else {
				engine_item it;
				int rc;
				std::string v = read_value(tw, k, &it, &rc);
				if (rc != ENGINE_OK)
					continue;
				hits++;
				size_t colon = v.find(':');
				if (colon == std::string::npos ||
				    std::stoul(v.substr(0, colon)) != v.size() - colon - 1 ||
				    v.find_first_not_of(fillc, colon + 1) != std::string::npos)
					bad++;
			}
		}
	});
	EXPECT_EQ(bad.load(), 0);
	EXPECT_EQ(sets_failed.load(), 0);
	EXPECT_GT(hits.load(), 0);
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_LE(st.heap_bytes + st.table_bytes + st.meta_bytes, st.limit_maxbytes);
}

// Deletes, sets, incrs and expirations race with a thread running the
// expiration sweep; the stats stay consistent with what is readable.
TEST_F(BaselineConcurrency, SweepRacesWithWriters)
{
	std::atomic<bool> stop{false};
	std::thread sweeper([&] {
		for (int i = 0; i < 100000 && !stop.load(); i++)
			engine_expire(e);
	});
	run_threads(e, [&](engine_worker *tw, int t) {
		for (int i = 0; i < 20000; i++) {
			std::string k = "s:" + std::to_string((i * 7 + t) % 500);
			switch (i % 4) {
			case 0:
				engine_store(tw, ENGINE_SET, k.data(), k.size(), "1", 1, 0,
					     i % 3 ? -1 : 0, 0, nullptr);
				break;
			case 1:
				engine_arith(tw, k.data(), k.size(), true, 1, nullptr, nullptr);
				break;
			case 2:
				engine_delete(tw, k.data(), k.size(), 0);
				break;
			default: {
				engine_item it;
				char buf[32];
				engine_get(tw, k.data(), k.size(), ENGINE_NO_TOUCH, buf,
					   sizeof(buf), &it);
			}
			}
		}
	});
	stop = true;
	sweeper.join();
	// Sweep a few times (a call may start mid-table), then count what is
	// live; reading an expired item also removes it.
	for (int i = 0; i < 3; i++)
		engine_expire(e);
	uint64_t live = 0;
	for (int k = 0; k < 500; k++) {
		std::string v = get("s:" + std::to_string(k));
		if (v == "<MISS>")
			continue;
		live++;
		// Sets write "1" and incrs add 1: a live value is a whole number.
		ASSERT_FALSE(v.empty()) << k;
		EXPECT_EQ(v.find_first_not_of("0123456789"), std::string::npos) << k << ": " << v;
		EXPECT_NE(v[0], '0') << k << ": " << v;
	}
	EXPECT_EQ(stats().curr_items, live);
}
