// SPDX-License-Identifier: BSD-3-Clause
// engine_get_batch(), against lib/seg and lib/baseline alike: a batch
// answers exactly as the same gets one after another would (hits, misses,
// expired and flushed keys, repeats, invalid keys, buffers too small,
// batch sizes 1..64, counters), delivers in order through its sink, and
// under writers that overwrite and evict the keys it reads (a small heap)
// never hands out another object's bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "baseline/baseline.h"
#include "seg/seg.h"
#include "../test_rand.h"
#include "../fake_clock.h"

namespace {

typedef struct engine *(*engine_create_fn)(const struct engine_config *cfg, char *err,
					    size_t errlen);

struct EngineKind {
	const char *name;
	engine_create_fn create;
};

struct Engine {
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;

	Engine(engine_create_fn create, size_t memory, FakeClock *clock)
	{
		engine_config cfg;
		char err[256] = "";

		std::memset(&cfg, 0, sizeof(cfg));
		cfg.memory = memory;
		cfg.eviction = ENGINE_EVICT_MERGE;
		cfg.max_workers = 8;
		if (clock != nullptr) {
			cfg.clock = FakeClock::read;
			cfg.clock_arg = clock;
		}
		e = create(&cfg, err, sizeof(err));
		EXPECT_NE(e, nullptr) << err;
		if (e != nullptr)
			w = engine_worker_create(e);
		EXPECT_NE(w, nullptr);
	}
	~Engine()
	{
		engine_worker_destroy(w);
		engine_destroy(e);
	}
	uint64_t counter(enum engine_worker_counter c)
	{
		struct engine_stats st;
		engine_stats(e, &st);
		return st.counters[c];
	}
};

// What one key's get gave: status, item meta data, value.
struct Result {
	enum engine_status st = ENGINE_MISS;
	struct engine_item it = {};
	std::string value;
};

// Checks the sink's promises while it collects: value_buf only for the
// key being read, done once per key and in order.
struct Sink {
	const std::vector<size_t> *caps;
	std::vector<std::vector<char>> bufs;
	std::vector<Result> res;
	unsigned next = 0;         // the key done() is due for
	unsigned value_calls = 0;
	unsigned stop_after = UINT32_MAX; // done() ends the batch after this key
	std::string order_error;

	static void *value_buf(void *arg, unsigned i, const struct engine_item *it)
	{
		Sink *s = static_cast<Sink *>(arg);
		s->value_calls++;
		if (i != s->next && s->order_error.empty())
			s->order_error = "value_buf for key " + std::to_string(i) + " while key " +
					 std::to_string(s->next) + " is due";
		size_t cap = (*s->caps)[i];
		if (cap == SIZE_MAX || it->vlen > cap)
			return nullptr;
		s->bufs[i].assign(it->vlen + 1, '\xee');
		return s->bufs[i].data();
	}
	static bool done(void *arg, unsigned i, enum engine_status st,
			 const struct engine_item *it)
	{
		Sink *s = static_cast<Sink *>(arg);
		if (i != s->next && s->order_error.empty())
			s->order_error = "done for key " + std::to_string(i) + " while key " +
					 std::to_string(s->next) + " is due";
		s->next = i + 1;
		Result &r = s->res[i];
		r.st = st;
		if (st == ENGINE_OK || st == ENGINE_BUF_SMALL)
			r.it = *it;
		if (st == ENGINE_OK)
			r.value.assign(s->bufs[i].data(), it->vlen);
		return i != s->stop_after;
	}
};

// Single gets, one after another; cap SIZE_MAX means no buffer at all.
std::vector<Result> get_each(struct engine_worker *w, const std::vector<std::string> &keys,
			     const std::vector<size_t> &caps)
{
	std::vector<Result> out(keys.size());
	for (size_t i = 0; i < keys.size(); i++) {
		std::vector<char> buf(caps[i] == SIZE_MAX ? 0 : caps[i] + 1);
		Result &r = out[i];
		r.st = engine_get(w, keys[i].data(), keys[i].size(), ENGINE_NO_TOUCH,
				  caps[i] == SIZE_MAX ? nullptr : buf.data(),
				  caps[i] == SIZE_MAX ? 0 : caps[i], &r.it);
		if (r.st == ENGINE_OK)
			r.value.assign(buf.data(), r.it.vlen);
	}
	return out;
}

std::vector<Result> get_batch(struct engine_worker *w, const std::vector<std::string> &keys,
			      const std::vector<size_t> &caps, std::string *order_error,
			      unsigned stop_after = UINT32_MAX)
{
	std::vector<struct engine_key> ks(keys.size());
	Sink s;
	s.stop_after = stop_after;
	for (size_t i = 0; i < keys.size(); i++)
		ks[i] = {keys[i].data(), keys[i].size()};
	s.caps = &caps;
	s.bufs.resize(keys.size());
	s.res.resize(keys.size());
	struct engine_get_sink sink = {Sink::value_buf, Sink::done, &s};
	engine_get_batch(w, ks.data(), static_cast<unsigned>(ks.size()), &sink);
	size_t want_done = stop_after < keys.size() ? stop_after + 1 : keys.size();
	if (s.next != want_done && s.order_error.empty())
		s.order_error = "done for " + std::to_string(s.next) + " of " +
				std::to_string(keys.size()) + " keys";
	*order_error = s.order_error;
	return s.res;
}

class EngineBatch : public testing::TestWithParam<EngineKind> {};

// The same key space in two engines with the same clock, one read by
// single gets and one by batches: every batch must give what the single
// gets gave, key by key, and the counters must move alike. The cas of a
// key is each engine's own, so it is compared with what that engine's
// store returned.
TEST_P(EngineBatch, SameResultsAsSingleGets)
{
	FakeClock clock;
	Engine a(GetParam().create, 32u << 20, &clock), b(GetParam().create, 32u << 20, &clock);
	ASSERT_NE(a.w, nullptr);
	ASSERT_NE(b.w, nullptr);
	const unsigned nkeys = 300;
	std::vector<std::string> names;
	std::vector<uint64_t> cas_a(nkeys), cas_b(nkeys);
	uint64_t rng = 0x5eed;

	auto store_all = [&](unsigned from, unsigned to, int64_t ttl) {
		for (unsigned k = from; k < to; k++) {
			// values of 0 bytes to 9000, a few over the 64-byte buffers
			size_t len = k % 7 == 0 ? 3000 + k * 20 : k % 5;
			std::string v(len, static_cast<char>('a' + k % 26));
			if (!v.empty())
				v[0] = static_cast<char>(k);
			uint32_t flags = k % 3 ? 0 : k * 2654435761u;
			ASSERT_EQ(engine_store(a.w, ENGINE_SET, names[k].data(), names[k].size(),
					       v.data(), v.size(), flags, ttl, 0, &cas_a[k]),
				  ENGINE_OK);
			ASSERT_EQ(engine_store(b.w, ENGINE_SET, names[k].data(), names[k].size(),
					       v.data(), v.size(), flags, ttl, 0, &cas_b[k]),
				  ENGINE_OK);
		}
	};
	for (unsigned k = 0; k < nkeys; k++)
		names.push_back("key:" + std::to_string(k));
	// keys 0..199 live, 200..249 with a 10 s TTL (they expire below),
	// 250..299 never stored
	store_all(0, 200, 0);
	store_all(200, 250, 10);
	clock.now += 11;

	for (unsigned n = 1; n <= 64; n++) {
		std::vector<std::string> keys;
		std::vector<size_t> caps;
		std::vector<unsigned> ids;
		for (unsigned i = 0; i < n; i++) {
			unsigned r = static_cast<unsigned>(next_rand(&rng) % 100);
			unsigned k = static_cast<unsigned>(next_rand(&rng) % nkeys);
			if (r < 10 && i > 0) {
				// a repeat of a key earlier in the batch
				k = ids[next_rand(&rng) % i];
			}
			ids.push_back(k);
			if (r >= 97)
				keys.push_back(r == 99 ? std::string() : std::string(251, 'x'));
			else
				keys.push_back(names[k]);
			// mostly room, some too small, some meta data only
			size_t cap = r % 11 == 1 ? 64 : r % 13 == 2 ? SIZE_MAX : 16384;
			caps.push_back(cap);
		}
		std::vector<Result> want = get_each(a.w, keys, caps);
		std::string order_error;
		std::vector<Result> got = get_batch(b.w, keys, caps, &order_error);
		ASSERT_EQ(order_error, "") << "batch of " << n;
		for (unsigned i = 0; i < n; i++) {
			std::string at = "batch of " + std::to_string(n) + ", key " +
					 std::to_string(i) + " (" + keys[i].substr(0, 12) + ")";
			ASSERT_EQ(engine_status_name(got[i].st), engine_status_name(want[i].st))
				<< at;
			if (want[i].st != ENGINE_OK && want[i].st != ENGINE_BUF_SMALL)
				continue;
			EXPECT_EQ(got[i].it.vlen, want[i].it.vlen) << at;
			EXPECT_EQ(got[i].it.flags, want[i].it.flags) << at;
			EXPECT_EQ(got[i].it.expires_at, want[i].it.expires_at) << at;
			EXPECT_EQ(got[i].it.fetched_before, want[i].it.fetched_before) << at;
			EXPECT_EQ(got[i].value, want[i].value) << at;
			unsigned k = ids[i];
			EXPECT_EQ(want[i].it.cas, cas_a[k]) << at;
			EXPECT_EQ(got[i].it.cas, cas_b[k]) << at;
		}
		for (auto c : {ENGINE_C_cmd_get, ENGINE_C_get_hits, ENGINE_C_get_misses,
			       ENGINE_C_get_expired, ENGINE_C_get_flushed})
			ASSERT_EQ(b.counter(c), a.counter(c))
				<< "counter " << c << " after the batch of " << n;
		// rewrite some keys between batches: new cas, new values
		if (n % 8 == 0)
			store_all(n, n + 20, 0);
	}
	// flush_all: every key misses as flushed, in both
	engine_flush_all(a.e, 0);
	engine_flush_all(b.e, 0);
	std::vector<std::string> keys(names.begin(), names.begin() + 40);
	std::vector<size_t> caps(keys.size(), 16384);
	std::string order_error;
	std::vector<Result> want = get_each(a.w, keys, caps);
	std::vector<Result> got = get_batch(b.w, keys, caps, &order_error);
	ASSERT_EQ(order_error, "");
	for (size_t i = 0; i < keys.size(); i++)
		EXPECT_EQ(engine_status_name(got[i].st), engine_status_name(want[i].st)) << i;
	for (auto c : {ENGINE_C_cmd_get, ENGINE_C_get_hits, ENGINE_C_get_misses,
		       ENGINE_C_get_expired, ENGINE_C_get_flushed})
		EXPECT_EQ(b.counter(c), a.counter(c)) << "counter " << c << " after flush_all";
}

// done() returning false ends the batch there: the keys after it are
// neither delivered nor counted, in the first group or a later one.
TEST_P(EngineBatch, DoneFalseEndsTheBatch)
{
	FakeClock clock;
	Engine x(GetParam().create, 16u << 20, &clock);
	ASSERT_NE(x.w, nullptr);
	std::vector<std::string> keys;
	for (unsigned i = 0; i < 2 * ENGINE_BATCH_GROUP; i++) {
		keys.push_back("stop" + std::to_string(i));
		if (i % 2 != 0)
			continue;
		ASSERT_EQ(engine_store(x.w, ENGINE_SET, keys[i].data(), keys[i].size(), "v", 1, 0,
				       0, 0, nullptr),
			  ENGINE_OK);
	}
	std::vector<size_t> caps(keys.size(), 64);
	uint64_t gets = 0;
	for (unsigned stop : {0u, 1u, ENGINE_BATCH_GROUP - 1u, ENGINE_BATCH_GROUP + 3u}) {
		std::string order_error;
		std::vector<Result> got = get_batch(x.w, keys, caps, &order_error, stop);
		ASSERT_EQ(order_error, "") << "stop after " << stop;
		gets += stop + 1;
		EXPECT_EQ(x.counter(ENGINE_C_cmd_get), gets) << "stop after " << stop;
		EXPECT_EQ(got[stop].st, stop % 2 == 0 ? ENGINE_OK : ENGINE_MISS);
	}
}

// engine_prefetch() is only a hint: any keys (live, missing, expired,
// invalid, more than a group) change no counter, no expiry and no value.
TEST_P(EngineBatch, PrefetchChangesNothing)
{
	FakeClock clock;
	Engine x(GetParam().create, 16u << 20, &clock);
	ASSERT_NE(x.w, nullptr);
	std::vector<std::string> keys;
	for (unsigned i = 0; i < 2 * ENGINE_BATCH_GROUP; i++) {
		keys.push_back("pf" + std::to_string(i));
		if (i % 3 == 2)
			continue; // missing
		ASSERT_EQ(engine_store(x.w, ENGINE_SET, keys[i].data(), keys[i].size(),
				       keys[i].data(), keys[i].size(), 0, i % 3 == 1 ? kStart + 5 : 0,
				       0, nullptr),
			  ENGINE_OK);
	}
	clock.now += 10; // the keys stored with a TTL have expired
	keys.push_back("");
	keys.push_back(std::string(ENGINE_KEY_MAX + 1, 'k'));
	struct engine_stats before, after;
	engine_stats(x.e, &before);
	std::vector<struct engine_key> ks;
	for (auto &k : keys)
		ks.push_back({k.data(), k.size()});
	for (size_t at = 0; at < ks.size(); at += 7)
		engine_prefetch(x.w, ks.data() + at, unsigned(ks.size() - at));
	engine_stats(x.e, &after);
	for (unsigned c = 0; c < ENGINE_C_MAX; c++)
		EXPECT_EQ(after.counters[c], before.counters[c]) << "counter " << c;
	EXPECT_EQ(after.curr_items, before.curr_items);
	std::vector<size_t> caps(keys.size(), 300);
	std::vector<Result> got = get_each(x.w, keys, caps);
	for (unsigned i = 0; i < 2 * ENGINE_BATCH_GROUP; i++) {
		EXPECT_EQ(got[i].st, i % 3 == 0 ? ENGINE_OK : ENGINE_MISS) << keys[i];
		if (i % 3 == 0) {
			EXPECT_EQ(got[i].value, keys[i]);
		}
	}
	EXPECT_EQ(x.counter(ENGINE_C_cmd_get), before.counters[ENGINE_C_cmd_get] + keys.size() - 2);
}

// A batch over the group size is taken in groups, in order: three whole
// groups and part of a fourth, each key with a buffer of its own.
TEST_P(EngineBatch, SeveralGroupsInOrder)
{
	FakeClock clock;
	Engine x(GetParam().create, 16u << 20, &clock);
	ASSERT_NE(x.w, nullptr);
	const unsigned n = 3 * ENGINE_BATCH_GROUP + 5;
	std::vector<std::string> keys, vals;
	for (unsigned i = 0; i < n; i++) {
		keys.push_back("into" + std::to_string(i));
		vals.push_back(std::string(i % 90, static_cast<char>('A' + i % 50)));
		if (i % 4 == 3)
			continue;
		ASSERT_EQ(engine_store(x.w, ENGINE_SET, keys[i].data(), keys[i].size(),
				       vals[i].data(), vals[i].size(), i, 0, 0, nullptr),
			  ENGINE_OK);
	}
	std::vector<size_t> caps(n, 64);
	std::string order_error;
	std::vector<Result> got = get_batch(x.w, keys, caps, &order_error);
	ASSERT_EQ(order_error, "");
	for (unsigned i = 0; i < n; i++) {
		if (i % 4 == 3) {
			EXPECT_EQ(got[i].st, ENGINE_MISS) << i;
		} else if (vals[i].size() > 64) {
			EXPECT_EQ(got[i].st, ENGINE_BUF_SMALL) << i;
			EXPECT_EQ(got[i].it.vlen, vals[i].size()) << i;
		} else {
			ASSERT_EQ(got[i].st, ENGINE_OK) << i;
			EXPECT_EQ(got[i].it.flags, i);
			EXPECT_EQ(got[i].value, vals[i]) << i;
		}
	}
}

// Values carry their key, a sequence number and a checksum of the rest;
// flags carry the checksum too. A reader that got bytes of any other
// object (or of two writes mixed) fails the check.
std::string make_value(const std::string &key, uint64_t seq, size_t len)
{
	char head[96];
	int n = snprintf(head, sizeof(head), "%s|%" PRIu64 "|", key.c_str(), seq);
	std::string v(head, static_cast<size_t>(n));
	uint64_t x = seq * 0x9e3779b97f4a7c15ull + key.size();
	while (v.size() < len + static_cast<size_t>(n)) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v.push_back(static_cast<char>('a' + (x >> 59)));
	}
	uint32_t sum = 0;
	for (unsigned char c : v)
		sum = sum * 31 + c;
	char tail[16];
	snprintf(tail, sizeof(tail), "|%08x", sum);
	return v + tail;
}

uint32_t value_sum(const std::string &v)
{
	uint32_t sum = 0;
	for (size_t i = 0; i + 9 < v.size(); i++)
		sum = sum * 31 + static_cast<unsigned char>(v[i]);
	return sum;
}

// Empty if v is a whole value written for key with these flags.
std::string check_value(const std::string &key, const std::string &v, uint32_t flags)
{
	if (v.size() < key.size() + 12 || v.compare(0, key.size(), key) != 0 ||
	    v[key.size()] != '|')
		return "not a value of this key";
	unsigned sum = 0;
	if (sscanf(v.c_str() + v.size() - 9, "|%08x", &sum) != 1)
		return "no checksum";
	if (sum != value_sum(v))
		return "checksum differs";
	if (flags != sum)
		return "flags of another value";
	return "";
}

// A reader: batches of 1..64 keys (with repeats), every value checked;
// stops at the first bad one (a failure). Counts into *checked.
void read_batches(struct engine_worker *w, unsigned t, unsigned nkeys, unsigned batches,
		  std::atomic<uint64_t> *checked)
{
	uint64_t rng = 991 + t;
	std::vector<std::string> keys;
	std::vector<size_t> caps;

	for (unsigned b = 0; b < batches; b++) {
		unsigned n = 1 + static_cast<unsigned>(next_rand(&rng) % 64);
		keys.clear();
		caps.assign(n, 8192);
		for (unsigned i = 0; i < n; i++) {
			if (i > 0 && next_rand(&rng) % 8 == 0)
				keys.push_back(keys[next_rand(&rng) % i]);
			else
				keys.push_back("tk" + std::to_string(next_rand(&rng) % nkeys));
		}
		if (b % 2 == 0) {
			// the two-phase burst's hint first, as the native server
			// gives it: reads racing writers and eviction, harmless
			std::vector<struct engine_key> ks;
			for (auto &k : keys)
				ks.push_back({k.data(), k.size()});
			engine_prefetch(w, ks.data(), n);
		}
		std::string order_error;
		std::vector<Result> got = get_batch(w, keys, caps, &order_error);
		ASSERT_EQ(order_error, "");
		for (unsigned i = 0; i < n; i++) {
			ASSERT_TRUE(got[i].st == ENGINE_OK || got[i].st == ENGINE_MISS)
				<< engine_status_name(got[i].st);
			if (got[i].st != ENGINE_OK)
				continue;
			ASSERT_EQ(check_value(keys[i], got[i].value, got[i].it.flags), "")
				<< "key " << keys[i] << " got " << got[i].value;
			(*checked)++;
		}
	}
}

// Writers overwrite, delete and churn keys through a heap a fraction of
// the key space's size (eviction never stops), while readers read them in
// batches of 1..64 (with repeats) and check every value they get.
static bool
turned_over(struct engine *e)
{
	struct engine_stats st;

	engine_stats(e, &st);
	return st.evictions + st.seg_evicted + st.seg_merged > 0;
}

TEST_P(EngineBatch, WritersAndEvictionNeverYieldOtherBytes)
{
	Engine x(GetParam().create, 8u << 20, nullptr);
	ASSERT_NE(x.w, nullptr);
	const unsigned nkeys = 30000, readers = 2, writers = 2;
	const unsigned batches = 10000;
	std::atomic<unsigned> readers_left{readers};
	std::atomic<uint64_t> checked{0}, retries{0};
	std::vector<std::thread> ts;

	for (unsigned t = 0; t < writers; t++) {
		ts.emplace_back([&, t] {
			struct engine_worker *w = engine_worker_create(x.e);
			ASSERT_NE(w, nullptr);
			uint64_t rng = 77 + t, seq = 0;
			while (readers_left.load() > 0) {
				unsigned k = static_cast<unsigned>(next_rand(&rng) % nkeys);
				std::string key = "tk" + std::to_string(k);
				if (next_rand(&rng) % 16 == 0) {
					engine_delete(w, key.data(), key.size(), 0);
					continue;
				}
				// mostly small, some a few KB: segments fill and turn over
				size_t len = next_rand(&rng) % 8 == 0 ? next_rand(&rng) % 6000
								     : next_rand(&rng) % 100;
				std::string v = make_value(key, (uint64_t)t << 48 | ++seq, len);
				enum engine_status rc =
					engine_store(w, ENGINE_SET, key.data(), key.size(), v.data(),
						     v.size(), value_sum(v), 0, 0, nullptr);
				ASSERT_TRUE(rc == ENGINE_OK || rc == ENGINE_NO_MEMORY)
					<< engine_status_name(rc);
			}
			engine_worker_destroy(w);
		});
	}
	for (unsigned t = 0; t < readers; t++) {
		ts.emplace_back([&, t] {
			struct engine_worker *w = engine_worker_create(x.e);
			if (w != nullptr) {
				read_batches(w, t, nkeys, batches, &checked);
				// The heap must turn over under the readers: on a
				// loaded host the writers may not have filled it
				// yet, so read on until they have (bounded).
				const auto until = std::chrono::steady_clock::now() +
						   std::chrono::seconds(60);
				while (!turned_over(x.e) &&
				       std::chrono::steady_clock::now() < until)
					read_batches(w, t, nkeys, 100, &checked);
				retries += w->counters[ENGINE_C_read_retries];
				engine_worker_destroy(w);
			}
			EXPECT_NE(w, nullptr);
			// even after a failure, or the writers would never stop
			readers_left--;
		});
	}
	for (auto &t : ts)
		t.join();
	struct engine_stats st;
	engine_stats(x.e, &st);
	// the heap did turn over under the readers, and they did read values
	EXPECT_GT(st.evictions + st.seg_evicted + st.seg_merged, 0u);
	EXPECT_GT(checked.load(), 0u);
	printf("checked %" PRIu64 " values, %" PRIu64 " read retries, %" PRIu64 " evictions\n",
	       checked.load(), retries.load(), st.evictions);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineBatch,
			 testing::Values(EngineKind{"seg", seg_create},
					 EngineKind{"baseline", baseline_create}),
			 [](const testing::TestParamInfo<EngineKind> &info) {
				 return std::string(info.param.name);
			 });

} // namespace
