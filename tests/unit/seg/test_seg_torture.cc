// SPDX-License-Identifier: BSD-3-Clause
// Torture test for lib/seg's segment lifecycle: writers doing every kind
// of write on overlapping keys with TTLs from 1 s to never, readers (single
// and batched gets) that check every value they get against a model of
// what each key may hold at that moment (torture_model.h: per key, the
// versions acknowledged and those in flight, so a stale read, a lost
// update, a lost or misplaced append, a lost incr or an expiry later than
// written fails), flush_all with and without delay and the expiration
// sweep in a loop, an engine clock that races ahead so expiry and merge
// happen all the time, and a heap small enough that eviction never stops.
// A quarter of the stores stream their value in pieces
// (engine_store_begin/write/finish, lib/seg's seg_stream.c), some pausing
// between pieces so that an eviction or a flush takes the reserved item
// back mid-value (counted, and required where the heap evicts): the
// lost store must complete as one evicted at once, never writing into a
// segment's next life.
// For every eviction policy; under merge, runs whose kept items need more
// than one destination, so that emptied run members are reopened as
// destinations (counted, and required). A watchdog turns a hang into a
// failure that says who hung.
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
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_stream.h"
#include "seg/seg.h"
#include "seg/seg_test.h"
#include "seg_fixture.h"
#include "torture_model.h"
#include "../test_rand.h"

namespace {

using torture::Kind;
using torture::ReadSnap;

unsigned env_unsigned(const char *name, unsigned dflt)
{
	const char *s = getenv(name);
	return s && *s ? static_cast<unsigned>(strtoul(s, nullptr, 10)) : dflt;
}

// The engine clock that the clock thread races ahead.
using RaceClock = seg_fixture::FakeClock;

constexpr unsigned kKeys = 600;           // overlapping key space, over 64 head buckets
// An absolute exptime in 2038 (memcached's largest): lib/seg caps its
// life at ~97 days, in a segment whose expiry grid ends there.
constexpr int64_t kFarExptime = 2147483646;
constexpr size_t kBuf = 256u << 10;       // larger than any item (-I below: large ones too)
constexpr size_t kItemMax = 224u << 10;  // -I: items of up to 4 of the 64 KiB segments
constexpr unsigned kBatchMax = 16;        // keys in a reader's batched get
// 200 s and 1352 s: two TTL buckets (25, 169) whose refs share a slot of a
// worker's table (seg_chunk.h), so writers take it over from each other.
const int64_t kTtls[] = {0, 50000, 0, 3000, -1, 200, kFarExptime, 1352, 30, 7, 1, 2, 3};
constexpr unsigned kShortTtls = 3;        // the last ones of kTtls: 1, 2 and 3 s
constexpr unsigned kMergeKeys = 4000;     // the key space under merge (see the test)
constexpr size_t kPrefillValue = 500;     // bytes of payload per key in prefill()

// Keys 3 mod 4 are counters (incr/decr); of those, 3 mod 8 only ever go up.
bool is_counter(unsigned key) { return key % 4 == 3; }
bool incr_only(unsigned key) { return key % 8 == 3; }
uint32_t flags_of(unsigned key) { return key * 2654435761u | 1; }
std::string key_name(unsigned key) { return "t" + std::to_string(key); }

struct Progress {
	std::atomic<uint64_t> ops{0};
	std::atomic<const char *> doing{"start"};
};

struct Totals {
	std::atomic<uint64_t> ops{0}, checked{0}, batched{0}, flushes{0}, sweeps{0};
	std::atomic<uint64_t> incr_checked{0}, cas_checked{0}, streamed{0};
	std::atomic<uint64_t> large_stored{0}; // items larger than a segment (seg_append.c)
};

// engine_get_batch's sink: each key's value goes to the buffer value_buf
// gave last (a key read again gets the other of its two buffers, so a
// result taken from the wrong one shows).
struct BatchSink {
	std::vector<char> bufs[2];
	unsigned last[kBatchMax];
	enum engine_status st[kBatchMax];
	struct engine_item it[kBatchMax];

	BatchSink()
	{
		bufs[0].resize(kBuf * kBatchMax);
		bufs[1].resize(kBuf * kBatchMax);
	}
	char *value(unsigned i) { return bufs[last[i]].data() + (size_t)i * kBuf; }
	static void *value_buf(void *arg, unsigned i, const struct engine_item *it)
	{
		BatchSink *b = static_cast<BatchSink *>(arg);
		if (it->vlen > kBuf)
			return nullptr;
		b->last[i] ^= 1;
		return b->value(i);
	}
	static bool done(void *arg, unsigned i, enum engine_status st,
			 const struct engine_item *it)
	{
		BatchSink *b = static_cast<BatchSink *>(arg);
		b->st[i] = st;
		if (st == ENGINE_OK || st == ENGINE_BUF_SMALL)
			b->it[i] = *it;
		return true;
	}
};

class Torture : public ::testing::TestWithParam<enum engine_eviction> {
protected:
	RaceClock clock;
	struct engine *e = nullptr;
	std::atomic<bool> stop{false};
	Totals totals;
	unsigned slow = 1; // SEG_TORTURE_SLOW
	unsigned keys = kKeys;
	unsigned ttl_skip = 0; // the last entries of kTtls left out
	std::unique_ptr<torture::Model> model;

	void TearDown() override { engine_destroy(e); }

	// Fails the test (with the key, the op and what was wrong) on a value
	// that the model says the key cannot hold now (see torture_model.h),
	// other flags, or an expiry already passed. self_w: the incr whose
	// reply this is; check_expiry false where the item's expiry is not
	// known (an incr's reply).
	void check_item(unsigned key, const char *op, int64_t now_before, const char *v,
			const struct engine_item &it, const ReadSnap &snap, uint64_t self_w = 0,
			bool check_expiry = true)
	{
		ASSERT_EQ(it.flags, flags_of(key)) << op << " " << key_name(key);
		if (it.expires_at != 0) {
			ASSERT_GT(it.expires_at, now_before)
				<< op << " " << key_name(key) << " served after its expiry";
		}
		std::string bad = model->check(key, is_counter(key), v, it.vlen,
					       check_expiry ? it.expires_at : INT64_MIN,
					       clock.now.load(), snap, self_w);
		ASSERT_EQ(bad, "") << op << " " << key_name(key) << " (expires_at "
				   << it.expires_at << "): "
				   << std::string(v, std::min<size_t>(it.vlen, 300));
		totals.checked++;
	}

	// One get, bracketed by the model and checked; true when it hit.
	bool checked_get(struct engine_worker *w, unsigned key, const char *op,
			 std::vector<char> &buf)
	{
		const std::string k = key_name(key);
		struct engine_item it = {};
		int64_t now = clock.now.load();
		ReadSnap snap = model->begin_read(key);
		enum engine_status rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH,
						   buf.data(), buf.size(), &it);
		model->end_read(&snap);
		EXPECT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS) << engine_status_name(rc);
		if (rc == ENGINE_OK)
			check_item(key, op, now, buf.data(), it, snap);
		return rc == ENGINE_OK;
	}

	std::string value_for(unsigned key, uint64_t w, size_t len, char kind)
	{
		if (is_counter(key) && w >= torture::kMaxCounterVersion)
			ADD_FAILURE() << "counter " << key_name(key) << ": version " << w
				      << " does not fit its value";
		return is_counter(key) ? torture::counter_value(key, w)
				       : torture::chunk(key, w, len, kind);
	}

	// A store whose value goes to the engine in pieces of any size
	// (what lib/cmd does with a large value arriving over a socket);
	// one stream in four pauses between pieces, so that evictions and
	// flushes take items back mid-value.
	enum engine_status streamed_store(struct engine_worker *w, enum engine_store_mode mode,
					  const std::string &k, const std::string &v,
					  uint32_t flags, int64_t ttl, uint64_t cas_in,
					  uint64_t *rng)
	{
		struct engine_stream st;
		enum engine_status rc = engine_store_begin(w, mode, k.data(), k.size(), v.size(),
							   flags, ttl, &st);
		if (rc != ENGINE_OK)
			return rc;
		const bool pauses = next_rand(rng) % 4 == 0;
		for (size_t at = 0; at < v.size();) {
			const size_t len = std::min<size_t>(v.size() - at, 1 + next_rand(rng) % 1500);
			engine_store_write(w, &st, v.data() + at, len);
			at += len;
			if (pauses)
				std::this_thread::sleep_for(std::chrono::microseconds(
					next_rand(rng) % (200 * slow)));
		}
		totals.streamed++;
		return engine_store_finish(w, &st, mode, k.data(), k.size(), cas_in, nullptr);
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
		uint64_t rng = 0x1234567ull * (id + 1);
		torture::Model &m = *model;

		while (!stop.load(std::memory_order_relaxed)) {
			const unsigned key = static_cast<unsigned>(next_rand(&rng) % keys);
			const std::string k = key_name(key);
			const int64_t ttl =
				kTtls[next_rand(&rng) % (sizeof(kTtls) / sizeof(kTtls[0]) - ttl_skip)];
			const unsigned what = static_cast<unsigned>(next_rand(&rng) % 100);
			// mostly small values, some up to 5 KB, a few larger than a
			// segment (seg_append.c: 64 KiB to 200 KiB, 2 to 4 segments)
			const unsigned size_die = static_cast<unsigned>(next_rand(&rng) % 256);
			const size_t len = size_die == 0  ? (64u << 10) + next_rand(&rng) % 140000
					   : size_die < 32 ? next_rand(&rng) % 5000
							   : next_rand(&rng) % 40;
			struct engine_item it = {};
			int64_t now = clock.now.load();
			enum engine_status rc;
			uint64_t ver;
			std::string v;

			p->ops++;
			if (what < 36) {
				const enum engine_store_mode mode = what < 25 ? ENGINE_SET
								    : what < 32 ? ENGINE_ADD
										: ENGINE_REPLACE;
				p->doing = mode == ENGINE_SET ? "set" : mode == ENGINE_ADD ? "add"
											  : "replace";
				ver = m.announce(key, Kind::Set, ttl, 0, nullptr);
				v = value_for(key, ver, len, 'S');
				if (next_rand(&rng) % 4 == 0) {
					p->doing = "streamed store";
					rc = streamed_store(w, mode, k, v, flags_of(key), ttl, 0,
							    &rng);
				} else {
					rc = engine_store(w, mode, k.data(), k.size(), v.data(),
							  v.size(), flags_of(key), ttl, 0, nullptr);
				}
				m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
				totals.large_stored += rc == ENGINE_OK && v.size() > (64u << 10);
				ASSERT_TRUE(rc == ENGINE_OK ||
					    (mode != ENGINE_SET && rc == ENGINE_NOT_STORED) ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< p->doing.load() << " " << engine_status_name(rc);
			} else if (what < 44) {
				p->doing = "gets+cas";
				ReadSnap snap = m.begin_read(key);
				rc = engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(),
						buf.size(), &it);
				m.end_read(&snap);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS)
					<< engine_status_name(rc);
				if (rc == ENGINE_OK) {
					check_item(key, "gets", now, buf.data(), it, snap);
					const uint64_t gets_next = m.next_version(key);
					ver = m.announce(key, Kind::Set, ttl, 0, nullptr);
					v = value_for(key, ver, len, 'S');
					rc = next_rand(&rng) % 4 == 0
						     ? streamed_store(w, ENGINE_CAS, k, v,
								      flags_of(key), ttl, it.cas,
								      &rng)
						     : engine_store(w, ENGINE_CAS, k.data(),
								    k.size(), v.data(), v.size(),
								    flags_of(key), ttl, it.cas,
								    nullptr);
					std::string bad = rc == ENGINE_OK
								  ? m.check_cas(key, gets_next, ver)
								  : "";
					m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
					ASSERT_EQ(bad, "") << k;
					totals.cas_checked += rc == ENGINE_OK;
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_EXISTS ||
						    rc == ENGINE_MISS ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< "cas " << engine_status_name(rc);
				}
			} else if (what < 58) {
				if (is_counter(key)) {
					p->doing = "incr/decr";
					const bool incr = incr_only(key) || what % 2;
					const int32_t d = static_cast<int32_t>(1 + what);
					uint64_t n = 0;
					ver = m.announce(key, Kind::Arith, 0, incr ? d : -d, nullptr);
					ReadSnap snap = m.begin_read(key);
					rc = engine_arith(w, k.data(), k.size(), incr,
							  static_cast<uint64_t>(d), &n, nullptr);
					m.end_read(&snap);
					if (rc == ENGINE_OK) {
						// The reply is the value just after this incr.
						const std::string s = std::to_string(n);
						struct engine_item ri = {};
						ri.flags = flags_of(key);
						ri.vlen = static_cast<uint32_t>(s.size());
						check_item(key, incr ? "incr reply" : "decr reply",
							   now, s.data(), ri, snap, ver, false);
						if (incr_only(key)) {
							std::string bad = m.check_incr_grows(key, ver, n);
							ASSERT_EQ(bad, "") << k;
						}
						totals.incr_checked++;
					}
					m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< "incr on a counter: " << engine_status_name(rc);
				} else {
					const bool append = what % 2;
					p->doing = append ? "append" : "prepend";
					ver = m.announce(key, append ? Kind::Append : Kind::Prepend, 0,
							 0, nullptr);
					v = torture::chunk(key, ver, len % 64, append ? 'A' : 'P');
					rc = engine_store(w,
							  append ? ENGINE_APPEND : ENGINE_PREPEND,
							  k.data(), k.size(), v.data(), v.size(),
							  0, 0, 0, nullptr);
					m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
					ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_NOT_STORED ||
						    rc == ENGINE_TOO_LARGE ||
						    (may_fail && rc == ENGINE_NO_MEMORY))
						<< p->doing.load() << " " << engine_status_name(rc);
				}
			} else if (what < 64) {
				p->doing = "delete";
				ver = m.announce(key, Kind::Delete, 0, 0, nullptr);
				rc = engine_delete(w, k.data(), k.size(), 0);
				m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS)
					<< "delete " << engine_status_name(rc);
			} else if (what < 70) {
				p->doing = "touch";
				ver = m.announce(key, Kind::Touch, ttl, 0, nullptr);
				rc = engine_touch(w, k.data(), k.size(), ttl);
				m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "touch " << engine_status_name(rc);
			} else if (what < 75) {
				p->doing = "gat";
				ver = m.announce(key, Kind::Touch, ttl, 0, nullptr);
				ReadSnap snap = m.begin_read(key);
				rc = engine_get(w, k.data(), k.size(), ttl, buf.data(),
						buf.size(), &it);
				m.end_read(&snap);
				// (A gat with a past exptime returns the value it expires.)
				if (rc == ENGINE_OK && ttl >= 0)
					check_item(key, "gat", now, buf.data(), it, snap);
				m.ack(key, ver, rc == ENGINE_OK, clock.now.load());
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_MISS ||
					    (may_fail && rc == ENGINE_NO_MEMORY))
					<< "gat " << engine_status_name(rc);
			} else {
				p->doing = "get";
				checked_get(w, key, "get", buf);
			}
		}
		engine_worker_destroy(w);
	}

	// Single gets and batched gets (engine_get_batch) in turn, each
	// result checked like a single get's.
	void reader(unsigned id, Progress *p)
	{
		struct engine_worker *w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		std::vector<char> buf(kBuf);
		auto sink_mem = std::make_unique<BatchSink>();
		BatchSink &bs = *sink_mem;
		uint64_t rng = 0xabcdefull * (id + 7);
		torture::Model &m = *model;

		while (!stop.load(std::memory_order_relaxed)) {
			int64_t now = clock.now.load();

			p->ops++;
			if (next_rand(&rng) % 2) {
				const unsigned key = static_cast<unsigned>(next_rand(&rng) % keys);
				p->doing = "get";
				checked_get(w, key, "get", buf);
				continue;
			}
			// A batch of up to kBatchMax keys, repeats allowed.
			const unsigned n = 1 + static_cast<unsigned>(next_rand(&rng) % kBatchMax);
			unsigned bkeys[kBatchMax];
			std::string names[kBatchMax];
			struct engine_key ek[kBatchMax];
			ReadSnap snaps[kBatchMax];
			p->doing = "get_batch";
			for (unsigned i = 0; i < n; i++) {
				bkeys[i] = static_cast<unsigned>(next_rand(&rng) % keys);
				names[i] = key_name(bkeys[i]);
				ek[i] = {names[i].data(), names[i].size()};
				snaps[i] = m.begin_read(bkeys[i]);
				bs.last[i] = 0;
				bs.st[i] = ENGINE_INVALID;
			}
			const struct engine_get_sink sink = {BatchSink::value_buf, BatchSink::done,
							     &bs};
			engine_get_batch(w, ek, n, &sink);
			for (unsigned i = 0; i < n; i++)
				m.end_read(&snaps[i]);
			for (unsigned i = 0; i < n; i++) {
				ASSERT_TRUE(bs.st[i] == ENGINE_OK || bs.st[i] == ENGINE_MISS)
					<< "batched get " << names[i] << ": "
					<< engine_status_name(bs.st[i]);
				if (bs.st[i] == ENGINE_OK)
					check_item(bkeys[i], "batched get", now, bs.value(i), bs.it[i],
						   snaps[i]);
			}
			totals.batched += n;
		}
		engine_worker_destroy(w);
	}

	// flush_all now and later, the expiration sweep and stats, in a loop.
	// An immediate flush_all counts, for the model, as a write to every
	// key: a read begun after it returned sees nothing written before it
	// began. flush_pct: in how many loops of 100 a flush_all now, and as
	// many a delayed one.
	unsigned flush_pct = 20;
	void flusher(Progress *p)
	{
		uint64_t rng = 42;

		while (!stop.load(std::memory_order_relaxed)) {
			struct engine_stats st;
			unsigned r = static_cast<unsigned>(next_rand(&rng) % 100);

			p->ops++;
			p->doing = "expire";
			engine_expire(e);
			totals.sweeps++;
			if (r < flush_pct) {
				p->doing = "flush_all";
				const uint64_t ann = model->tick.fetch_add(1);
				engine_flush_all(e, 0);
				model->flush_done(ann);
				totals.flushes++;
			} else if (r < 2 * flush_pct) {
				p->doing = "flush_all delayed";
				engine_flush_all(e, 3 + r % 2);
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

	// Under merge, before the threads start: every key written once,
	// never to expire, with values large enough that the heap is nearly
	// full of them, and read once, so the first merge passes of the run
	// meet dense runs of read items and keep more than a segment of
	// them (a slow build, ThreadSanitizer, would take minutes of writes
	// to get there).
	void prefill()
	{
		struct engine_worker *w = engine_worker_create(e);
		ASSERT_NE(w, nullptr);
		std::vector<char> buf(kBuf);
		for (unsigned key = 0; key < keys; key++) {
			const std::string k = key_name(key);
			const uint64_t ver = model->announce(key, Kind::Set, 0, 0, nullptr);
			const std::string v = value_for(key, ver, kPrefillValue, 'S');
			enum engine_status rc = engine_store(w, ENGINE_SET, k.data(), k.size(),
							     v.data(), v.size(), flags_of(key), 0,
							     0, nullptr);
			model->ack(key, ver, rc == ENGINE_OK, clock.now.load());
			ASSERT_EQ(rc, ENGINE_OK) << k;
		}
		for (unsigned key = 0; key < keys; key++)
			checked_get(w, key, "prefill get", buf);
		engine_worker_destroy(w);
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
	// TTLs of 8 s steps below 2048 s are buckets ttl / 8 (seg_ttl_bucket)
	ASSERT_EQ(seg_test_ref_slot(200 / 8), seg_test_ref_slot(1352 / 8));

	// 2.5 MiB in 64 KiB segments (about 30) and 64 head buckets: every
	// writer keeps several TTL buckets open, eviction runs all the time,
	// and hash chains overflow into buckets carved from the heap.
	c.memory = 5u << 19;
	c.segment_size = 64u << 10;
	c.item_max = kItemMax;
	c.hash_power = 6;
	c.eviction = GetParam();
	c.max_workers = writers + readers + 1;
	struct engine_config cfg = seg_fixture::seg_test_config(c, &clock);
	e = seg_create(&cfg, err, sizeof(err));
	ASSERT_NE(e, nullptr) << err;
	// Under merge, a key space larger than the heap holds, flushed
	// seldom, without the TTLs of a few seconds: the heap fills with
	// dense segments of items the readers read, and a merge pass keeps
	// more than one segment of them, so it reopens emptied members of
	// its run as destinations (seg_merge_reused), the reuse whose
	// ordering seg_retire's fence provides. The other policies keep the
	// small key space, where every key sees many writers at once.
	// A slow build (the model's bookkeeping makes every op slower still
	// under ThreadSanitizer) flushes a quarter as often, so that writers
	// fill the heap between flushes and eviction happens.
	if (slow > 1)
		flush_pct = 5;
	if (GetParam() == ENGINE_EVICT_MERGE) {
		keys = kMergeKeys;
		flush_pct = 2;
		ttl_skip = kShortTtls;
	}
	ASSERT_LE(keys, torture::kMaxKeys);
	model = std::make_unique<torture::Model>(keys);
	uint64_t reused_before = 0;
	if (GetParam() == ENGINE_EVICT_MERGE) {
		prefill();
		if (HasFailure())
			return;
		struct engine_stats st;
		engine_stats(e, &st);
		reused_before = st.seg_merge_reused;
	}

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
		// The run is meant to evict (and, under merge, to reuse run
		// members as destinations): on a slow build (ASan on a loaded
		// host, flushes emptying the heap) that can take longer than
		// `seconds`, so go on until it has, within a bound.
		bool evicting = GetParam() == ENGINE_EVICT_NONE;
		if (!evicting) {
			struct engine_stats es;

			engine_stats(e, &es);
			evicting = es.seg_evicted > 0 &&
				   es.counters[ENGINE_C_set_stream_lost] > 0 &&
				   (GetParam() != ENGINE_EVICT_MERGE ||
				    es.seg_merge_reused > reused_before);
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
	for (unsigned key = 0; key < keys; key++)
		visible += checked_get(w, key, "final get", buf);
	struct seg_census census;
	char why[256] = "";
	EXPECT_EQ(seg_test_check(e, &census, why, sizeof(why)), 0) << why;
	struct engine_stats st;
	engine_stats(e, &st);
	EXPECT_GE(st.curr_items, visible);
	EXPECT_LE(st.curr_items, keys);
	const uint64_t evictions = st.evictions, seg_evicted = st.seg_evicted,
		       merged = st.seg_merged, seg_expired = st.seg_expired,
		       reused = st.seg_merge_reused - reused_before,
		       stream_lost = st.counters[ENGINE_C_set_stream_lost];
	engine_flush_all(e, 0);
	engine_stats(e, &st);
	EXPECT_EQ(st.curr_items, 0u);
	EXPECT_EQ(st.bytes, 0u);
	EXPECT_EQ(st.seg_open + st.seg_sealed, 0u);
	EXPECT_EQ(st.seg_free + st.seg_hash, st.seg_total);
	EXPECT_EQ(seg_test_check(e, &census, why, sizeof(why)), 0) << why;
	for (unsigned key = 0; key < keys; key += 7) {
		const std::string k = key_name(key),
				  v = value_for(key, model->next_version(key), key, 'S');
		ASSERT_EQ(engine_store(w, ENGINE_SET, k.data(), k.size(), v.data(), v.size(),
				       flags_of(key), 0, 0, nullptr), ENGINE_OK);
		struct engine_item it = {};
		ASSERT_EQ(engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf.data(), buf.size(),
				     &it), ENGINE_OK);
		ASSERT_EQ(std::string(buf.data(), it.vlen), v);
	}
	engine_worker_destroy(w);
	EXPECT_GT(totals.streamed.load(), 0u);
	if (GetParam() != ENGINE_EVICT_NONE) {
		EXPECT_GT(seg_evicted, 0u) << "the heap was meant to be too small";
		EXPECT_GT(stream_lost, 0u) << "no eviction or flush took a streamed item back "
					      "mid-value: the pauses were meant to make some";
	}
	EXPECT_GT(totals.large_stored.load(), 0u) << "no item larger than a segment was stored";
	if (GetParam() == ENGINE_EVICT_MERGE) {
		EXPECT_GT(reused, 0u) << "no merge pass reopened a member of its run as a "
					 "destination: the key space and heap were meant to make some";
	}
	printf("seg torture %s: %u writers %u readers %u s: %" PRIu64 " ops, %" PRIu64
	       " values checked (%" PRIu64 " keys read in batches, %" PRIu64 " incr replies, %" PRIu64
	       " cas checked, %" PRIu64 " model checks skipped), %" PRIu64
	       " streamed stores (%" PRIu64 " taken back mid-value), %" PRIu64
	       " items evicted (%" PRIu64 " segments, %" PRIu64 " merges, %" PRIu64
	       " run members reused as destinations), %" PRIu64 " segments expired, %" PRIu64
	       " flushes, %" PRIu64 " sweeps, %" PRIu64 " large items stored\n",
	       policy_name(GetParam()), writers, readers, seconds, totals.ops.load(),
	       totals.checked.load(), totals.batched.load(), totals.incr_checked.load(),
	       totals.cas_checked.load(), model->skipped.load(), totals.streamed.load(),
	       stream_lost, evictions, seg_evicted, merged,
	       reused, seg_expired, totals.flushes.load(), totals.sweeps.load(),
	       totals.large_stored.load());
}

INSTANTIATE_TEST_SUITE_P(Policies, Torture,
			 ::testing::Values(ENGINE_EVICT_MERGE, ENGINE_EVICT_FIFO,
					   ENGINE_EVICT_RANDOM, ENGINE_EVICT_NONE),
			 [](const ::testing::TestParamInfo<enum engine_eviction> &i) {
				 return std::string(policy_name(i.param));
			 });

} // namespace
