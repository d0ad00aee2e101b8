// SPDX-License-Identifier: BSD-3-Clause
// The engine contract: every behaviour that both engines promise through
// lib/engine/engine.h (memcached's semantics of get/gets/gat, set, add,
// replace, append, prepend, cas, delete, incr/decr, touch, flush_all;
// expiry on an injected clock; key and value limits; counters), run
// against lib/seg and lib/baseline alike. What only one engine does
// (segment layout, merge, eviction policy, rte_hash internals, its own
// item size accounting) stays in tests/unit/seg and tests/unit/baseline.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "baseline/baseline.h"
#include "seg/seg.h"
#include "../fake_clock.h"

namespace {

// Unix-like seconds, far from 0 so absolute exptimes (> 30 days) work.
typedef struct engine *(*engine_create_fn)(const struct engine_config *cfg, char *err,
					    size_t errlen);

struct EngineKind {
	const char *name;
	engine_create_fn create;
};

class EngineContract : public testing::TestWithParam<EngineKind> {
protected:
	FakeClock clock;
	struct engine *e = nullptr;
	struct engine_worker *w = nullptr;

	struct engine *create(const struct engine_config *cfg, char *err, size_t errlen)
	{
		return GetParam().create(cfg, err, errlen);
	}
	// A fresh engine (16 MiB, merge eviction, the fake clock) and worker.
	void make(size_t memory = 16u << 20, enum engine_eviction ev = ENGINE_EVICT_MERGE)
	{
		engine_config cfg = test_config(memory, &clock);
		char err[256] = "";

		destroy();
		cfg.eviction = ev;
		cfg.max_workers = 8;
		e = create(&cfg, err, sizeof(err));
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
	void SetUp() override { make(); }
	void TearDown() override { destroy(); }

	int set(const std::string &k, const std::string &v, int64_t exptime = 0,
		uint32_t flags = 0, enum engine_store_mode mode = ENGINE_SET, uint64_t cas = 0,
		uint64_t *cas_out = nullptr)
	{
		return engine_store(w, mode, k.data(), k.size(), v.data(), v.size(), flags, exptime,
				    cas, cas_out);
	}
	int store(enum engine_store_mode mode, const std::string &k, const std::string &v,
		  uint32_t flags = 0, int64_t exptime = 0, uint64_t cas_in = 0,
		  uint64_t *cas_out = nullptr)
	{
		return set(k, v, exptime, flags, mode, cas_in, cas_out);
	}
	// The value, or "<MISS>"; any other status fails the test and comes
	// back as "<STATUS>". The buffer starts small, so values over 64
	// bytes also take the ENGINE_BUF_SMALL retry.
	std::string get(const std::string &k, struct engine_item *out = nullptr,
			int64_t touch = ENGINE_NO_TOUCH, struct engine_worker *wk = nullptr)
	{
		struct engine_item it = {};
		std::string buf(64, '\0');
		engine_status rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(),
					      buf.size(), &it);

		if (rc == ENGINE_BUF_SMALL) {
			buf.resize(it.vlen);
			rc = engine_get(wk ? wk : w, k.data(), k.size(), touch, buf.data(),
					buf.size(), &it);
		}
		if (rc == ENGINE_MISS)
			return "<MISS>";
		EXPECT_EQ(rc, ENGINE_OK);
		if (rc != ENGINE_OK)
			return std::string("<") + engine_status_name(rc) + ">";
		if (out)
			*out = it;
		buf.resize(it.vlen);
		return buf;
	}
	struct engine_stats stats()
	{
		struct engine_stats st;
		engine_stats(e, &st);
		return st;
	}
	uint64_t counter(enum engine_worker_counter c) { return stats().counters[c]; }
};

// ---- cases first written for lib/seg ----

TEST_P(EngineContract, SetGetFlagsAndCas)
{
	struct engine_item it;
	uint64_t cas1 = 0, cas2 = 0;

	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "hello", 0, 0, ENGINE_SET, 0, &cas1), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "hello");
	EXPECT_EQ(it.flags, 0u);
	EXPECT_EQ(it.cas, cas1);
	EXPECT_NE(cas1, 0u);
	EXPECT_EQ(set("k", "world!", 0, 0xdeadbeef, ENGINE_SET, 0, &cas2), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "world!");
	EXPECT_EQ(it.flags, 0xdeadbeefu);
	EXPECT_NE(cas2, cas1);
	EXPECT_EQ(it.cas, cas2);
	EXPECT_EQ(set("empty", ""), ENGINE_OK);
	EXPECT_EQ(get("empty"), "");
	EXPECT_EQ(stats().curr_items, 2u);
}

TEST_P(EngineContract, BinaryValuesAndValueLengthEncodings)
{
	for (size_t len : {0, 1, 127, 128, 16383, 16384, 100000}) {
		std::string v(len, '\0');
		for (size_t i = 0; i < len; i++)
			v[i] = static_cast<char>(i * 131 + len);
		std::string k = "bin" + std::to_string(len);
		ASSERT_EQ(set(k, v, 0, static_cast<uint32_t>(len)), ENGINE_OK);
		struct engine_item it;
		EXPECT_EQ(get(k, &it), v) << len;
		EXPECT_EQ(it.flags, len);
	}
}

TEST_P(EngineContract, BufferTooSmallReportsLength)
{
	struct engine_item it = {};
	char small[4];

	ASSERT_EQ(set("k", "0123456789"), ENGINE_OK);
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, small, sizeof(small), &it),
		  ENGINE_BUF_SMALL);
	EXPECT_EQ(it.vlen, 10u);
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, nullptr, 0, &it), ENGINE_BUF_SMALL);
}

TEST_P(EngineContract, KeyLengthLimits)
{
	std::string k250(250, 'k'), k251(251, 'k');
	EXPECT_EQ(set(k250, "v"), ENGINE_OK);
	EXPECT_EQ(get(k250), "v");
	EXPECT_EQ(set(k251, "v"), ENGINE_INVALID);
	EXPECT_EQ(set("", "v"), ENGINE_INVALID);
	EXPECT_EQ(engine_delete(w, "", 0, 0), ENGINE_INVALID);
}

TEST_P(EngineContract, AddReplace)
{
	EXPECT_EQ(set("k", "a", 0, 0, ENGINE_REPLACE), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "a", 0, 0, ENGINE_ADD), ENGINE_OK);
	EXPECT_EQ(set("k", "b", 0, 0, ENGINE_ADD), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "a");
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_REPLACE), ENGINE_OK);
	EXPECT_EQ(get("k"), "c");
	// add succeeds over an expired item
	EXPECT_EQ(set("t", "old", 5), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(set("t", "new", 0, 0, ENGINE_ADD), ENGINE_OK);
	EXPECT_EQ(get("t"), "new");
}

TEST_P(EngineContract, AppendPrepend)
{
	struct engine_item it;

	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_APPEND), ENGINE_NOT_STORED);
	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_PREPEND), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	ASSERT_EQ(set("k", "mid", 100, 42), ENGINE_OK);
	EXPECT_EQ(set("k", "_end", 0, 7, ENGINE_APPEND), ENGINE_OK);
	EXPECT_EQ(set("k", "start_", 0, 9, ENGINE_PREPEND), ENGINE_OK);
	EXPECT_EQ(get("k", &it), "start_mid_end");
	EXPECT_EQ(it.flags, 42u); // flags and expiry stay those of the item
	clock.advance(100);
	EXPECT_EQ(get("k"), "<MISS>");
}

TEST_P(EngineContract, AppendWithCasComparesFirst)
{
	struct engine_item it;

	ASSERT_EQ(set("k", "a"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(set("k", "x", 0, 0, ENGINE_APPEND, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(get("k"), "a");
	uint64_t cas = 0;
	EXPECT_EQ(set("k", "b", 0, 0, ENGINE_APPEND, it.cas, &cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "ab");
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_PREPEND, it.cas), ENGINE_EXISTS); // stale now
	EXPECT_EQ(set("k", "c", 0, 0, ENGINE_PREPEND, cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "cab");
}

TEST_P(EngineContract, CasSemantics)
{
	struct engine_item it;
	uint64_t cas = 0;

	EXPECT_EQ(set("k", "v", 0, 0, ENGINE_CAS, 12345), ENGINE_MISS);
	ASSERT_EQ(set("k", "v1"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(set("k", "v2", 0, 0, ENGINE_CAS, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(set("k", "v2", 0, 0, ENGINE_CAS, it.cas, &cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "v2");
	// The old cas is stale now, and stays stale forever.
	EXPECT_EQ(set("k", "v3", 0, 0, ENGINE_CAS, it.cas), ENGINE_EXISTS);
	EXPECT_EQ(set("k", "v3", 0, 0, ENGINE_CAS, cas), ENGINE_OK);
	EXPECT_EQ(counter(ENGINE_C_cas_hits), 2u);
	EXPECT_EQ(counter(ENGINE_C_cas_badval), 2u);
	EXPECT_EQ(counter(ENGINE_C_cas_misses), 1u);
	// A write to another key never invalidates this key's cas.
	get("k", &it);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set("other" + std::to_string(i), "x"), ENGINE_OK);
	EXPECT_EQ(set("k", "v4", 0, 0, ENGINE_CAS, it.cas), ENGINE_OK);
}

TEST_P(EngineContract, CasDisabled)
{
	struct engine_config cfg = {};
	char err[256];
	struct engine_item it;

	cfg.memory = 8u << 20;
	cfg.cas_disabled = true;
	struct engine *e2 = create(&cfg, err, sizeof(err));
	ASSERT_NE(e2, nullptr) << err;
	struct engine_worker *w2 = engine_worker_create(e2);
	ASSERT_EQ(engine_store(w2, ENGINE_SET, "k", 1, "v", 1, 0, 0, 0, nullptr), ENGINE_OK);
	ASSERT_EQ(engine_get(w2, "k", 1, ENGINE_NO_TOUCH, nullptr, 0, &it), ENGINE_BUF_SMALL);
	EXPECT_EQ(it.cas, 0u);
	engine_worker_destroy(w2);
	engine_destroy(e2);
}

TEST_P(EngineContract, IncrDecr)
{
	uint64_t v = 0;

	EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_MISS);
	ASSERT_EQ(set("n", "99", 0, 5), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 100u);
	struct engine_item it;
	EXPECT_EQ(get("n", &it), "100");
	EXPECT_EQ(it.flags, 5u);
	EXPECT_EQ(engine_arith(w, "n", 1, false, 1000, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 0u); // decr stops at 0
	EXPECT_EQ(get("n"), "0");
	ASSERT_EQ(set("n", "18446744073709551615"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 2, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 1u); // incr wraps at 2^64
	ASSERT_EQ(set("s", "abc"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", "18446744073709551616"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", ""), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	ASSERT_EQ(set("s", std::string(300, '1')), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "s", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC);
	EXPECT_EQ(get("s"), std::string(300, '1'));
	// incr keeps the expiry
	ASSERT_EQ(set("t", "1", 10), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "t", 1, true, 1, &v, nullptr), ENGINE_OK);
	clock.advance(10);
	EXPECT_EQ(get("t"), "<MISS>");
}

TEST_P(EngineContract, Delete)
{
	struct engine_item it;

	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	get("k", &it);
	EXPECT_EQ(engine_delete(w, "k", 1, it.cas + 1), ENGINE_EXISTS);
	EXPECT_EQ(engine_delete(w, "k", 1, it.cas), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	EXPECT_EQ(stats().curr_items, 0u);
	EXPECT_EQ(stats().bytes, 0u);
}

TEST_P(EngineContract, ExptimeForms)
{
	const int64_t t0 = clock.now;

	ASSERT_EQ(set("never", "v", 0), ENGINE_OK);
	ASSERT_EQ(set("rel", "v", 100), ENGINE_OK);
	ASSERT_EQ(set("abs", "v", t0 + 200), ENGINE_OK);
	ASSERT_EQ(set("neg", "v", -1), ENGINE_OK); // stored, expired at once
	ASSERT_EQ(set("past", "v", t0 - 5), ENGINE_OK);
	EXPECT_EQ(get("neg"), "<MISS>");
	EXPECT_EQ(get("past"), "<MISS>");
	EXPECT_EQ(get("rel"), "v");
	EXPECT_EQ(get("abs"), "v");
	clock.advance(99);
	EXPECT_EQ(get("rel"), "v");
	clock.advance(1);
	EXPECT_EQ(get("rel"), "<MISS>");
	EXPECT_EQ(get("abs"), "v");
	clock.advance(100);
	EXPECT_EQ(get("abs"), "<MISS>");
	EXPECT_EQ(get("never"), "v");
	clock.advance(3600L * 24 * 365 * 10);
	EXPECT_EQ(get("never"), "v");
}

TEST_P(EngineContract, NegativeExptimeRemovesExistingItem)
{
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	EXPECT_EQ(set("k", "w", -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(set("k", "w", -1, 0, ENGINE_REPLACE), ENGINE_NOT_STORED);
}

// Short TTLs are exact to the second; longer ones are never late.
TEST_P(EngineContract, ExpiryPrecision)
{
	const std::vector<int64_t> exact = {1, 2, 7, 8, 9, 100, 1000, 2047};
	const std::vector<int64_t> coarse = {2048, 5000, 40000, 600000, 2592000};

	for (int64_t ttl : exact) {
		make();
		// Written at several points of a segment's life, not just at open.
		for (int spread = 0; spread < 3; spread++) {
			std::string k = "k" + std::to_string(ttl) + "_" + std::to_string(spread);
			ASSERT_EQ(set(k, "v", ttl), ENGINE_OK);
			clock.advance(ttl - 1);
			EXPECT_EQ(get(k), "v") << "ttl " << ttl << " died early";
			clock.advance(1);
			EXPECT_EQ(get(k), "<MISS>") << "ttl " << ttl << " served late";
			clock.advance(3);
		}
	}
	for (int64_t ttl : coarse) {
		make();
		ASSERT_EQ(set("k", "v", ttl), ENGINE_OK);
		// early by less than the delta unit (16 s .. 4096 s, < 1%)
		clock.advance(ttl - ttl / 100 - 1);
		EXPECT_EQ(get("k"), "v") << "ttl " << ttl;
		clock.advance(ttl / 100 + 1);
		EXPECT_EQ(get("k"), "<MISS>") << "ttl " << ttl << " served late";
	}
}

TEST_P(EngineContract, TouchAndGat)
{
	struct engine_item it;

	EXPECT_EQ(engine_touch(w, "k", 1, 10), ENGINE_MISS);
	ASSERT_EQ(set("k", "value", 10, 3), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(engine_touch(w, "k", 1, 100), ENGINE_OK);
	clock.advance(50);
	EXPECT_EQ(get("k", &it), "value");
	EXPECT_EQ(it.flags, 3u);
	EXPECT_EQ(it.expires_at, clock.now - 50 + 100);
	// gat: returns the value and sets a new expiry (0 = never)
	EXPECT_EQ(get("k", &it, 0), "value");
	EXPECT_EQ(it.expires_at, 0);
	clock.advance(1000);
	EXPECT_EQ(get("k"), "value");
	EXPECT_EQ(get("nokey", nullptr, 10), "<MISS>");
	// touch into the past removes it
	EXPECT_EQ(engine_touch(w, "k", 1, -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_GE(counter(ENGINE_C_touch_hits), 2u);
	EXPECT_GE(counter(ENGINE_C_touch_misses), 1u);
}

TEST_P(EngineContract, FlushAll)
{
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(set("k" + std::to_string(i), "v", i % 2 ? 100 : 0), ENGINE_OK);
	engine_flush_all(e, 0);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(get("k" + std::to_string(i)), "<MISS>");
	EXPECT_EQ(stats().curr_items, 0u);
	ASSERT_EQ(set("after", "v"), ENGINE_OK);
	EXPECT_EQ(get("after"), "v");
	EXPECT_EQ(stats().flushes, 1u);
}

TEST_P(EngineContract, FlushAllDelayed)
{
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	engine_flush_all(e, 10);
	clock.advance(9);
	EXPECT_EQ(get("a"), "1");
	ASSERT_EQ(set("b", "2"), ENGINE_OK);
	clock.advance(1);
	EXPECT_EQ(get("a"), "<MISS>");
	EXPECT_EQ(get("b"), "<MISS>"); // existed when the delay ran out
	ASSERT_EQ(set("c", "3"), ENGINE_OK);
	clock.advance(100);
	EXPECT_EQ(get("c"), "3");
	// The sweep also runs a due flush.
	engine_flush_all(e, 5);
	clock.advance(5);
	engine_expire(e);
	EXPECT_EQ(stats().curr_items, 0u);
}

TEST_P(EngineContract, WorkerCountersSurviveWorkerDestroy)
{
	ASSERT_EQ(set("k", "v"), ENGINE_OK);
	get("k");
	engine_worker_destroy(w);
	w = engine_worker_create(e);
	ASSERT_NE(w, nullptr);
	EXPECT_EQ(counter(ENGINE_C_get_hits), 1u);
	EXPECT_EQ(counter(ENGINE_C_set_stored), 1u);
	EXPECT_EQ(get("k"), "v");
}

// ---- cases first written for lib/baseline ----

TEST_P(EngineContract, SetThenGet)
{
	uint64_t cas = 0;
	ASSERT_EQ(store(ENGINE_SET, "k", "hello", 42, 0, 0, &cas), ENGINE_OK);
	EXPECT_NE(cas, 0u);
	engine_item it;
	EXPECT_EQ(get("k", &it), "hello");
	EXPECT_EQ(it.flags, 42u);
	EXPECT_EQ(it.vlen, 5u);
	EXPECT_EQ(it.cas, cas);
	EXPECT_EQ(it.expires_at, 0);
	EXPECT_FALSE(it.fetched_before);
	EXPECT_EQ(get("k", &it), "hello");
	EXPECT_TRUE(it.fetched_before);
	EXPECT_EQ(get("other"), "<MISS>");

	// Overwrite: new value, new flags, new cas.
	uint64_t cas2 = 0;
	ASSERT_EQ(store(ENGINE_SET, "k", "bye", 7, 0, 0, &cas2), ENGINE_OK);
	EXPECT_NE(cas2, cas);
	EXPECT_EQ(get("k", &it), "bye");
	EXPECT_EQ(it.flags, 7u);
	EXPECT_FALSE(it.fetched_before);
}

TEST_P(EngineContract, BinaryAndEmptyValues)
{
	std::string bin("a\0b\r\n\xff", 6);
	ASSERT_EQ(set("bin", bin), ENGINE_OK);
	EXPECT_EQ(get("bin"), bin);
	ASSERT_EQ(set("empty", ""), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("empty", &it), "");
	EXPECT_EQ(it.vlen, 0u);
	// Keys are bytes too.
	std::string k("\x01 \x7f", 3);
	ASSERT_EQ(set(k, "v"), ENGINE_OK);
	EXPECT_EQ(get(k), "v");
}

TEST_P(EngineContract, KeyLength)
{
	std::string k250(250, 'k'), k251(251, 'k');
	EXPECT_EQ(set(k250, "v"), ENGINE_OK);
	EXPECT_EQ(get(k250), "v");
	EXPECT_EQ(set(k251, "v"), ENGINE_INVALID);
	EXPECT_EQ(set("", "v"), ENGINE_INVALID);
	engine_item it;
	char buf[8];
	EXPECT_EQ(engine_get(w, "", 0, ENGINE_NO_TOUCH, buf, sizeof(buf), &it), ENGINE_INVALID);
	EXPECT_EQ(engine_get(w, k251.data(), k251.size(), ENGINE_NO_TOUCH, buf, sizeof(buf), &it),
		  ENGINE_INVALID);
	EXPECT_EQ(engine_delete(w, "", 0, 0), ENGINE_INVALID);
	EXPECT_EQ(engine_touch(w, "", 0, 0), ENGINE_INVALID);
	EXPECT_EQ(engine_arith(w, "", 0, true, 1, nullptr, nullptr), ENGINE_INVALID);
	// Keys that differ in one byte or in length are different keys.
	EXPECT_EQ(set("ab", "1"), ENGINE_OK);
	EXPECT_EQ(set("ac", "2"), ENGINE_OK);
	EXPECT_EQ(set("a", "3"), ENGINE_OK);
	EXPECT_EQ(get("ab"), "1");
	EXPECT_EQ(get("ac"), "2");
	EXPECT_EQ(get("a"), "3");
}

TEST_P(EngineContract, SmallBufferGivesMetaData)
{
	ASSERT_EQ(set("k", "0123456789", 0, 5), ENGINE_OK);
	engine_item it;
	char buf[4];
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, buf, sizeof(buf), &it), ENGINE_BUF_SMALL);
	EXPECT_EQ(it.vlen, 10u);
	EXPECT_EQ(it.flags, 5u);
	EXPECT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, nullptr, 0, &it), ENGINE_BUF_SMALL);
	EXPECT_EQ(it.vlen, 10u);
	// A meta-only fetch does not count as the first read.
	EXPECT_EQ(get("k", &it), "0123456789");
	EXPECT_FALSE(it.fetched_before);
}

TEST_P(EngineContract, ManyKeysAllReadable)
{
	const int n = 20000;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(set("key:" + std::to_string(i), "value-" + std::to_string(i)), ENGINE_OK)
			<< i;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(get("key:" + std::to_string(i)), "value-" + std::to_string(i)) << i;
	struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, static_cast<uint64_t>(n));
	EXPECT_EQ(st.evictions, 0u);
	EXPECT_GT(st.bytes, static_cast<uint64_t>(n) * 10);
	EXPECT_GT(st.heap_bytes, 0u);
}

TEST_P(EngineContract, ExptimeZeroNeverExpires)
{
	ASSERT_EQ(set("k", "v", 0), ENGINE_OK);
	clock.advance(100LL * 24 * 3600);
	EXPECT_EQ(get("k"), "v");
}

TEST_P(EngineContract, RelativeExptime)
{
	ASSERT_EQ(set("k", "v", 10), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("k", &it), "v");
	EXPECT_EQ(it.expires_at, kStart + 10);
	clock.advance(9);
	EXPECT_EQ(get("k"), "v");
	clock.advance(1); // never served at or after its expiry
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(stats().counters[ENGINE_C_get_expired], 1u);
}

TEST_P(EngineContract, OneSecondTtlLivesItsSecond)
{
	ASSERT_EQ(set("k", "v", 1), ENGINE_OK);
	EXPECT_EQ(get("k"), "v");
	clock.advance(1);
	EXPECT_EQ(get("k"), "<MISS>");
}

TEST_P(EngineContract, AbsoluteExptime)
{
	ASSERT_EQ(set("k", "v", kStart + 100), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("k", &it), "v");
	EXPECT_EQ(it.expires_at, kStart + 100);
	clock.advance(99);
	EXPECT_EQ(get("k"), "v");
	clock.advance(1);
	EXPECT_EQ(get("k"), "<MISS>");
	// Absolute times at or before now are expired at once.
	ASSERT_EQ(set("past", "v", clock.now.load()), ENGINE_OK);
	EXPECT_EQ(get("past"), "<MISS>");
}

// Absolute exptimes as far as memcached takes them (2038). lib/seg may cut
// lives beyond ~97 days short (early, never late); each write opens
// segments of the far TTL buckets, which must take the item at once (a
// cap one delta unit too high once made every such write evict the heap
// forever).
TEST_P(EngineContract, FarFutureExptimes)
{
	const int64_t far[] = {kStart + 2592000, kStart + 200 * 86400, 2147483646, 2147483647};
	const int64_t days_90 = 90 * 86400;

	for (int round = 0; round < 3; round++) {
		for (int64_t exp : far) {
			const std::string k = "far" + std::to_string(exp) + "_" + std::to_string(round);
			engine_item it;

			ASSERT_EQ(set(k, "v", exp), ENGINE_OK) << exp;
			ASSERT_EQ(store(ENGINE_APPEND, k, "w"), ENGINE_OK);
			ASSERT_EQ(engine_touch(w, k.data(), k.size(), exp), ENGINE_OK);
			EXPECT_EQ(get(k, &it, exp), "vw") << exp;
			EXPECT_LE(it.expires_at, exp);
			// early by less than lib/seg's coarsest delta unit, 4096 s
			EXPECT_GT(it.expires_at, std::min(exp, clock.now.load() + days_90) - 4096);
		}
		clock.advance(86400);
	}
	clock.advance(25 * 86400);
	for (int64_t exp : far)
		EXPECT_EQ(get("far" + std::to_string(exp) + "_2"), "vw") << exp;
}

TEST_P(EngineContract, NegativeExptimeExpiresAtOnce)
{
	ASSERT_EQ(set("k", "old"), ENGINE_OK);
	ASSERT_EQ(set("k", "new", -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	// The expired item does not block an add.
	EXPECT_EQ(store(ENGINE_ADD, "k", "added"), ENGINE_OK);
	EXPECT_EQ(get("k"), "added");
}

TEST_P(EngineContract, Touch)
{
	ASSERT_EQ(set("k", "v", 10), ENGINE_OK);
	clock.advance(8);
	EXPECT_EQ(engine_touch(w, "k", 1, 10), ENGINE_OK);
	clock.advance(8);
	EXPECT_EQ(get("k"), "v"); // would have expired at +10 without the touch
	EXPECT_EQ(engine_touch(w, "k", 1, 0), ENGINE_OK); // now never expires
	clock.advance(1000);
	EXPECT_EQ(get("k"), "v");
	EXPECT_EQ(engine_touch(w, "k", 1, -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(engine_touch(w, "missing", 7, 10), ENGINE_MISS);
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_cmd_touch], 4u);
	EXPECT_EQ(st.counters[ENGINE_C_touch_hits], 3u);
	EXPECT_EQ(st.counters[ENGINE_C_touch_misses], 1u);
}

TEST_P(EngineContract, GetAndTouch)
{
	ASSERT_EQ(set("k", "v", 10, 3), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("k", &it, 100), "v");
	EXPECT_EQ(it.expires_at, kStart + 100);
	EXPECT_EQ(it.flags, 3u);
	clock.advance(50);
	EXPECT_EQ(get("k"), "v");
	EXPECT_EQ(get("missing", nullptr, 100), "<MISS>");
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_cmd_touch], 2u);
	EXPECT_EQ(st.counters[ENGINE_C_touch_hits], 1u);
	EXPECT_EQ(st.counters[ENGINE_C_get_hits], 2u);
	EXPECT_EQ(st.counters[ENGINE_C_get_misses], 1u);
}

TEST_P(EngineContract, AddAndReplace)
{
	EXPECT_EQ(store(ENGINE_REPLACE, "k", "r"), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(store(ENGINE_ADD, "k", "a"), ENGINE_OK);
	EXPECT_EQ(store(ENGINE_ADD, "k", "b"), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "a");
	EXPECT_EQ(store(ENGINE_REPLACE, "k", "r"), ENGINE_OK);
	EXPECT_EQ(get("k"), "r");
	// An expired item counts as absent.
	ASSERT_EQ(set("t", "v", 5), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(store(ENGINE_REPLACE, "t", "r"), ENGINE_NOT_STORED);
	EXPECT_EQ(store(ENGINE_ADD, "t", "a"), ENGINE_OK);
	EXPECT_EQ(get("t"), "a");
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_set_not_stored], 3u);
	EXPECT_EQ(st.counters[ENGINE_C_set_stored], 4u);
	EXPECT_EQ(st.counters[ENGINE_C_cmd_set], 7u);
}

TEST_P(EngineContract, CasInOnOtherModesCompares)
{
	uint64_t c = 0;
	ASSERT_EQ(store(ENGINE_SET, "k", "v", 0, 0, 0, &c), ENGINE_OK);
	EXPECT_EQ(store(ENGINE_SET, "k", "x", 0, 0, c + 1000), ENGINE_EXISTS);
	EXPECT_EQ(store(ENGINE_APPEND, "k", "x", 0, 0, c + 1000), ENGINE_EXISTS);
	EXPECT_EQ(get("k"), "v");
	EXPECT_EQ(store(ENGINE_APPEND, "k", "x", 0, 0, c), ENGINE_OK);
	EXPECT_EQ(get("k"), "vx");
	EXPECT_EQ(store(ENGINE_SET, "nokey", "x", 0, 0, 5), ENGINE_MISS);
}

TEST_P(EngineContract, CasDisabledReportsZero)
{
	FakeClock clock;
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.cas_disabled = true;
	char err[256];
	engine *e = create(&cfg, err, sizeof(err));
	ASSERT_NE(e, nullptr) << err;
	engine_worker *w = engine_worker_create(e);
	ASSERT_NE(w, nullptr);
	uint64_t cas = 77;
	ASSERT_EQ(engine_store(w, ENGINE_SET, "k", 1, "v", 1, 0, 0, 0, &cas), ENGINE_OK);
	EXPECT_EQ(cas, 0u);
	engine_item it;
	char buf[8];
	ASSERT_EQ(engine_get(w, "k", 1, ENGINE_NO_TOUCH, buf, sizeof(buf), &it), ENGINE_OK);
	EXPECT_EQ(it.cas, 0u);
	engine_worker_destroy(w);
	engine_destroy(e);
}

TEST_P(EngineContract, AppendPrependOnMissingKey)
{
	EXPECT_EQ(store(ENGINE_APPEND, "k", "x"), ENGINE_NOT_STORED);
	EXPECT_EQ(store(ENGINE_PREPEND, "k", "x"), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	ASSERT_EQ(set("t", "v", 5), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(store(ENGINE_APPEND, "t", "x"), ENGINE_NOT_STORED);
}

TEST_P(EngineContract, IncrDecrKeepsFlagsAndCas)
{
	uint64_t v = 0, c = 0;
	EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_MISS);
	ASSERT_EQ(set("n", "10", 0, 4), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 5, &v, &c), ENGINE_OK);
	EXPECT_EQ(v, 15u);
	engine_item it;
	EXPECT_EQ(get("n", &it), "15");
	EXPECT_EQ(it.cas, c);
	EXPECT_EQ(it.flags, 4u);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 85, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(get("n"), "100"); // grows by a digit
	EXPECT_EQ(engine_arith(w, "n", 1, false, 1, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(get("n"), "99"); // shrinks, no padding
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_incr_hits], 2u);
	EXPECT_EQ(st.counters[ENGINE_C_incr_misses], 1u);
	EXPECT_EQ(st.counters[ENGINE_C_decr_hits], 1u);
}

TEST_P(EngineContract, IncrWrapsDecrStopsAtZero)
{
	uint64_t v = 0;
	ASSERT_EQ(set("n", "18446744073709551615"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "n", 1, true, 2, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 1u);
	EXPECT_EQ(get("n"), "1");
	ASSERT_EQ(set("d", "5"), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "d", 1, false, 10, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 0u);
	EXPECT_EQ(get("d"), "0");
	EXPECT_EQ(engine_arith(w, "d", 1, false, 1, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(v, 0u);
	// memcached pads decr results with spaces: those parse.
	ASSERT_EQ(set("p", "42  "), ENGINE_OK);
	EXPECT_EQ(engine_arith(w, "p", 1, true, 1, &v, nullptr), ENGINE_OK);
	EXPECT_EQ(get("p"), "43");
}

TEST_P(EngineContract, IncrNonNumeric)
{
	uint64_t v = 99;
	for (const char *bad : {"abc", "12a", "-1", "", "18446744073709551616",
				"123456789012345678901"}) {
		ASSERT_EQ(set("n", bad), ENGINE_OK);
		EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC) << bad;
		EXPECT_EQ(engine_arith(w, "n", 1, false, 1, &v, nullptr), ENGINE_NON_NUMERIC)
			<< bad;
		EXPECT_EQ(get("n"), bad); // unchanged
	}
	EXPECT_EQ(v, 99u);
}

TEST_P(EngineContract, FlushAllDelayedHappensOnce)
{
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	engine_flush_all(e, 10);
	clock.advance(5);
	ASSERT_EQ(set("b", "2"), ENGINE_OK); // exists when the delay passes
	clock.advance(4);
	EXPECT_EQ(get("a"), "1");
	EXPECT_EQ(get("b"), "2");
	clock.advance(1);
	EXPECT_EQ(get("a"), "<MISS>");
	EXPECT_EQ(get("b"), "<MISS>");
	ASSERT_EQ(set("c", "3"), ENGINE_OK);
	clock.advance(100);
	EXPECT_EQ(get("c"), "3"); // a delayed flush happens once
	EXPECT_EQ(stats().flushes, 1u);
}

TEST_P(EngineContract, FlushAllNowCancelsDelayed)
{
	engine_flush_all(e, 10);
	engine_flush_all(e, 0);
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	clock.advance(20);
	EXPECT_EQ(get("a"), "1");
}

TEST_P(EngineContract, StatsSumDestroyedWorkers)
{
	engine_worker *w2 = engine_worker_create(e);
	ASSERT_NE(w2, nullptr);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(engine_store(w2, ENGINE_SET, "x", 1, "v", 1, 0, 0, 0, nullptr),
			  ENGINE_OK);
	engine_item it;
	char buf[4];
	EXPECT_EQ(engine_get(w2, "x", 1, ENGINE_NO_TOUCH, buf, sizeof(buf), &it), ENGINE_OK);
	EXPECT_EQ(engine_get(w2, "y", 1, ENGINE_NO_TOUCH, buf, sizeof(buf), &it), ENGINE_MISS);
	engine_worker_destroy(w2);
	ASSERT_EQ(set("z", "v"), ENGINE_OK);
	EXPECT_EQ(get("x"), "v");
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_cmd_set], 11u);
	EXPECT_EQ(st.counters[ENGINE_C_set_stored], 11u);
	EXPECT_EQ(st.counters[ENGINE_C_total_items], 11u);
	EXPECT_EQ(st.counters[ENGINE_C_cmd_get], 3u);
	EXPECT_EQ(st.counters[ENGINE_C_get_hits], 2u);
	EXPECT_EQ(st.counters[ENGINE_C_get_misses], 1u);
	EXPECT_EQ(st.curr_items, 2u);
	EXPECT_GT(st.bytes, 2u * 3);
	// One stripe lock per write, none per read.
	EXPECT_EQ(st.counters[ENGINE_C_lock_bucket], 11u);
}

// ---- written for the contract ----

// Both engines refuse an item over the limit (1 MiB by default) before
// touching the key, and an append that would outgrow it leaves the value
// as it was. (Whether a too large set also drops the old value differs:
// see ItemTooLarge in each engine's suite.)
TEST_P(EngineContract, TooLargeIsRefused)
{
	std::string v(100, 'x');

	EXPECT_EQ(set("big", std::string(1 << 20, 'z')), ENGINE_TOO_LARGE);
	EXPECT_EQ(get("big"), "<MISS>");
	EXPECT_EQ(counter(ENGINE_C_set_too_large), 1u);
	EXPECT_EQ(set("a", v), ENGINE_OK);
	EXPECT_EQ(set("a", std::string(1 << 20, 'y'), 0, 0, ENGINE_APPEND), ENGINE_TOO_LARGE);
	EXPECT_EQ(set("a", std::string(1 << 20, 'y'), 0, 0, ENGINE_PREPEND), ENGINE_TOO_LARGE);
	EXPECT_EQ(get("a"), v);
}

// Every keyed operation refuses an empty key and one over 250 bytes.
TEST_P(EngineContract, InvalidKeyIsRefusedByEveryOp)
{
	const std::string k251(ENGINE_KEY_MAX + 1, 'k');
	struct engine_item it;
	char buf[8];

	for (const std::string &k : {std::string(), k251}) {
		EXPECT_EQ(engine_get(w, k.data(), k.size(), ENGINE_NO_TOUCH, buf, sizeof(buf), &it),
			  ENGINE_INVALID);
		EXPECT_EQ(engine_get(w, k.data(), k.size(), 10, buf, sizeof(buf), &it),
			  ENGINE_INVALID);
		for (auto mode : {ENGINE_SET, ENGINE_ADD, ENGINE_REPLACE, ENGINE_APPEND,
				  ENGINE_PREPEND, ENGINE_CAS})
			EXPECT_EQ(set(k, "v", 0, 0, mode, mode == ENGINE_CAS ? 1 : 0),
				  ENGINE_INVALID);
		EXPECT_EQ(engine_delete(w, k.data(), k.size(), 0), ENGINE_INVALID);
		EXPECT_EQ(engine_arith(w, k.data(), k.size(), true, 1, nullptr, nullptr),
			  ENGINE_INVALID);
		EXPECT_EQ(engine_touch(w, k.data(), k.size(), 10), ENGINE_INVALID);
	}
	EXPECT_EQ(stats().curr_items, 0u);
}

// Failure messages name the engine rather than dumping the struct's bytes.
void PrintTo(const EngineKind &k, std::ostream *os) { *os << k.name; }

INSTANTIATE_TEST_SUITE_P(Engines, EngineContract,
			 testing::Values(EngineKind{"seg", seg_create},
					 EngineKind{"baseline", baseline_create}),
			 [](const testing::TestParamInfo<EngineKind> &info) {
				 return std::string(info.param.name);
			 });

} // namespace
