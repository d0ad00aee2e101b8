// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the rte_hash baseline engine: every operation and its
// edges with memcached's semantics, expiry with a fake clock, flush_all,
// the expiration sweep, eviction, stats.
#include <cinttypes>
#include <string>
#include <vector>

#include "bl_test.h"

// --- creation ------------------------------------------------------------

TEST(BaselineCreate, RejectsBadConfig)
{
	char err[256];
	engine_config cfg = test_config(16u << 20, nullptr);

	err[0] = '\0';
	EXPECT_EQ(baseline_create(nullptr, err, sizeof(err)), nullptr);
	EXPECT_STRNE(err, "");

	cfg.memory = 1000;
	err[0] = '\0';
	EXPECT_EQ(baseline_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("memory"), std::string::npos) << err;

	cfg = test_config(16u << 20, nullptr);
	cfg.item_max = 100;
	EXPECT_EQ(baseline_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("item_max"), std::string::npos) << err;

	cfg = test_config(16u << 20, nullptr);
	cfg.hash_power = 3;
	EXPECT_EQ(baseline_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("hash_power"), std::string::npos) << err;

	cfg = test_config(16u << 20, nullptr);
	cfg.eviction = static_cast<engine_eviction>(42);
	EXPECT_EQ(baseline_create(&cfg, err, sizeof(err)), nullptr);

	// A table far larger than the budget does not fit.
	cfg = test_config(2u << 20, nullptr);
	cfg.hash_power = 20;
	EXPECT_EQ(baseline_create(&cfg, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("too small"), std::string::npos) << err;

	// err may be absent.
	EXPECT_EQ(baseline_create(&cfg, nullptr, 0), nullptr);
}

TEST(BaselineCreate, WorkerLimit)
{
	engine_config cfg = test_config(8u << 20, nullptr);
	cfg.max_workers = 2;
	char err[256];
	engine *e = baseline_create(&cfg, err, sizeof(err));
	ASSERT_NE(e, nullptr) << err;
	engine_worker *a = engine_worker_create(e);
	engine_worker *b = engine_worker_create(e);
	ASSERT_NE(a, nullptr);
	ASSERT_NE(b, nullptr);
	EXPECT_EQ(engine_worker_create(e), nullptr);
	engine_worker_destroy(a);
	a = engine_worker_create(e);
	EXPECT_NE(a, nullptr);
	engine_worker_destroy(a);
	engine_worker_destroy(b);
	engine_destroy(e);
}

TEST_F(BaselineTest, StatsDescribeTheBudget)
{
	struct engine_stats st = stats();
	EXPECT_EQ(st.limit_maxbytes, 16u << 20);
	EXPECT_GT(st.table_bytes, 0u);
	EXPECT_GT(st.hash_buckets, 0u);
	EXPECT_LT(st.table_bytes + st.meta_bytes, st.limit_maxbytes);
	EXPECT_EQ(st.curr_items, 0u);
	EXPECT_EQ(st.heap_bytes, 0u); // pages come on demand
}

// --- get / set -------------------------------------------------------------

TEST_F(BaselineTest, SetThenGet)
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

TEST_F(BaselineTest, BinaryAndEmptyValues)
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

TEST_F(BaselineTest, KeyLength)
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

TEST_F(BaselineTest, SmallBufferGivesMetaData)
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

TEST_F(BaselineTest, ManyKeysAllReadable)
{
	const int n = 20000;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(set("key:" + std::to_string(i), "value-" + std::to_string(i)), ENGINE_OK) << i;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(get("key:" + std::to_string(i)), "value-" + std::to_string(i)) << i;
	struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, static_cast<uint64_t>(n));
	EXPECT_EQ(st.evictions, 0u);
	EXPECT_GT(st.bytes, static_cast<uint64_t>(n) * 10);
	EXPECT_GT(st.heap_bytes, 0u);
}

// --- expiry ---------------------------------------------------------------

TEST_F(BaselineTest, ExptimeZeroNeverExpires)
{
	ASSERT_EQ(set("k", "v", 0), ENGINE_OK);
	clock.advance(100LL * 24 * 3600);
	EXPECT_EQ(get("k"), "v");
}

TEST_F(BaselineTest, RelativeExptime)
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

TEST_F(BaselineTest, OneSecondTtlLivesItsSecond)
{
	ASSERT_EQ(set("k", "v", 1), ENGINE_OK);
	EXPECT_EQ(get("k"), "v");
	clock.advance(1);
	EXPECT_EQ(get("k"), "<MISS>");
}

TEST_F(BaselineTest, ThirtyDaysIsTheLastRelativeExptime)
{
	const int64_t month = ENGINE_RELATIVE_EXPTIME_MAX;
	ASSERT_EQ(set("rel", "v", month), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("rel", &it), "v");
	EXPECT_EQ(it.expires_at, kStart + month);
	// One more is an absolute unix time, long past: expired at once.
	ASSERT_EQ(set("abs", "v", month + 1), ENGINE_OK);
	EXPECT_EQ(get("abs"), "<MISS>");
}

TEST_F(BaselineTest, AbsoluteExptime)
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

TEST_F(BaselineTest, NegativeExptimeExpiresAtOnce)
{
	ASSERT_EQ(set("k", "old"), ENGINE_OK);
	ASSERT_EQ(set("k", "new", -1), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	// The expired item does not block an add.
	EXPECT_EQ(store(ENGINE_ADD, "k", "added"), ENGINE_OK);
	EXPECT_EQ(get("k"), "added");
}

TEST_F(BaselineTest, Touch)
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

TEST_F(BaselineTest, GetAndTouch)
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

// --- add / replace / cas ---------------------------------------------------

TEST_F(BaselineTest, AddAndReplace)
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

TEST_F(BaselineTest, CasMatchAndMismatch)
{
	uint64_t c1 = 0, c2 = 0, c3 = 0;
	EXPECT_EQ(store(ENGINE_CAS, "k", "x", 0, 0, 12345), ENGINE_MISS);
	ASSERT_EQ(store(ENGINE_SET, "k", "v1", 0, 0, 0, &c1), ENGINE_OK);
	engine_item it;
	ASSERT_EQ(get("k", &it), "v1");
	EXPECT_EQ(it.cas, c1);
	EXPECT_EQ(store(ENGINE_CAS, "k", "v2", 9, 0, c1, &c2), ENGINE_OK);
	EXPECT_NE(c2, c1);
	EXPECT_EQ(get("k", &it), "v2");
	EXPECT_EQ(it.flags, 9u);
	// The client's cas is stale now.
	EXPECT_EQ(store(ENGINE_CAS, "k", "v3", 0, 0, c1), ENGINE_EXISTS);
	EXPECT_EQ(get("k"), "v2");
	// Any write changes the cas; touch does not.
	ASSERT_EQ(engine_touch(w, "k", 1, 100), ENGINE_OK);
	EXPECT_EQ(store(ENGINE_CAS, "k", "v3", 0, 0, c2, &c3), ENGINE_OK);
	ASSERT_EQ(engine_delete(w, "k", 1, 0), ENGINE_OK);
	EXPECT_EQ(store(ENGINE_CAS, "k", "v4", 0, 0, c3), ENGINE_MISS);
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_cas_hits], 2u);
	EXPECT_EQ(st.counters[ENGINE_C_cas_badval], 1u);
	EXPECT_EQ(st.counters[ENGINE_C_cas_misses], 2u);
}

TEST_F(BaselineTest, CasInOnOtherModesCompares)
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

TEST(BaselineCasDisabled, ReportsZero)
{
	FakeClock clock;
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.cas_disabled = true;
	char err[256];
	engine *e = baseline_create(&cfg, err, sizeof(err));
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

// --- append / prepend --------------------------------------------------------

TEST_F(BaselineTest, AppendPrependOnMissingKey)
{
	EXPECT_EQ(store(ENGINE_APPEND, "k", "x"), ENGINE_NOT_STORED);
	EXPECT_EQ(store(ENGINE_PREPEND, "k", "x"), ENGINE_NOT_STORED);
	EXPECT_EQ(get("k"), "<MISS>");
	ASSERT_EQ(set("t", "v", 5), ENGINE_OK);
	clock.advance(5);
	EXPECT_EQ(store(ENGINE_APPEND, "t", "x"), ENGINE_NOT_STORED);
}

TEST_F(BaselineTest, AppendPrependKeepFlagsAndExpiry)
{
	ASSERT_EQ(set("k", "mid", 100, 17), ENGINE_OK);
	uint64_t c = 0;
	EXPECT_EQ(store(ENGINE_APPEND, "k", "-end", 99, 5, 0, &c), ENGINE_OK);
	EXPECT_NE(c, 0u);
	EXPECT_EQ(store(ENGINE_PREPEND, "k", "start-", 98, 7), ENGINE_OK);
	engine_item it;
	EXPECT_EQ(get("k", &it), "start-mid-end");
	EXPECT_EQ(it.flags, 17u);
	EXPECT_EQ(it.expires_at, kStart + 100);
	EXPECT_EQ(it.cas, c + 1);
	EXPECT_EQ(store(ENGINE_APPEND, "k", ""), ENGINE_OK);
	EXPECT_EQ(get("k"), "start-mid-end");
}

// --- delete ------------------------------------------------------------------

TEST_F(BaselineTest, Delete)
{
	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	uint64_t c = 0;
	ASSERT_EQ(store(ENGINE_SET, "k", "v", 0, 0, 0, &c), ENGINE_OK);
	EXPECT_EQ(engine_delete(w, "k", 1, c + 1), ENGINE_EXISTS);
	EXPECT_EQ(get("k"), "v");
	EXPECT_EQ(engine_delete(w, "k", 1, c), ENGINE_OK);
	EXPECT_EQ(get("k"), "<MISS>");
	EXPECT_EQ(engine_delete(w, "k", 1, 0), ENGINE_MISS);
	ASSERT_EQ(set("k", "again"), ENGINE_OK);
	EXPECT_EQ(get("k"), "again");
	// Deleting an expired item is a miss.
	ASSERT_EQ(set("t", "v", 1), ENGINE_OK);
	clock.advance(1);
	EXPECT_EQ(engine_delete(w, "t", 1, 0), ENGINE_MISS);
	struct engine_stats st = stats();
	EXPECT_EQ(st.counters[ENGINE_C_delete_hits], 1u);
	EXPECT_EQ(st.counters[ENGINE_C_delete_misses], 3u);
	EXPECT_EQ(st.curr_items, 1u);
}

// --- incr / decr ---------------------------------------------------------------

TEST_F(BaselineTest, IncrDecr)
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

TEST_F(BaselineTest, IncrWrapsDecrStopsAtZero)
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

TEST_F(BaselineTest, IncrNonNumeric)
{
	uint64_t v = 99;
	for (const char *bad : {"abc", "12a", "-1", "", "18446744073709551616",
				"123456789012345678901"}) {
		ASSERT_EQ(set("n", bad), ENGINE_OK);
		EXPECT_EQ(engine_arith(w, "n", 1, true, 1, &v, nullptr), ENGINE_NON_NUMERIC) << bad;
		EXPECT_EQ(engine_arith(w, "n", 1, false, 1, &v, nullptr), ENGINE_NON_NUMERIC) << bad;
		EXPECT_EQ(get("n"), bad); // unchanged
	}
	EXPECT_EQ(v, 99u);
}

// --- limits ---------------------------------------------------------------------

TEST_F(BaselineTest, ItemTooLarge)
{
	engine_config cfg = test_config(16u << 20, &clock);
	cfg.item_max = 4096;
	start(cfg);
	std::string fits(4096 - 100, 'x'), big(4096, 'x');
	EXPECT_EQ(set("k", fits), ENGINE_OK);
	EXPECT_EQ(set("k", big), ENGINE_TOO_LARGE);
	EXPECT_EQ(get("k"), fits); // the failed set changed nothing
	// append that would make the item too large
	EXPECT_EQ(store(ENGINE_APPEND, "k", std::string(200, 'y')), ENGINE_TOO_LARGE);
	EXPECT_EQ(get("k"), fits);
	EXPECT_EQ(stats().counters[ENGINE_C_set_too_large], 2u);

	// Default limit: 1 MiB.
	start(test_config(16u << 20, &clock));
	EXPECT_EQ(set("k", std::string(1 << 20, 'z')), ENGINE_TOO_LARGE);
	std::string almost((1 << 20) - 512, 'z');
	EXPECT_EQ(set("k", almost), ENGINE_OK);
	EXPECT_EQ(get("k"), almost);
}

// --- flush_all -------------------------------------------------------------------

TEST_F(BaselineTest, FlushAllNow)
{
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	ASSERT_EQ(set("b", "2", 100), ENGINE_OK);
	engine_flush_all(e, 0);
	EXPECT_EQ(get("a"), "<MISS>");
	EXPECT_EQ(get("b"), "<MISS>");
	EXPECT_EQ(store(ENGINE_REPLACE, "a", "x"), ENGINE_NOT_STORED);
	// Stored after the flush, in the same second: kept.
	ASSERT_EQ(set("c", "3"), ENGINE_OK);
	EXPECT_EQ(get("c"), "3");
	EXPECT_EQ(store(ENGINE_ADD, "a", "new"), ENGINE_OK);
	EXPECT_EQ(get("a"), "new");
	struct engine_stats st = stats();
	EXPECT_EQ(st.flushes, 1u);
	EXPECT_EQ(st.counters[ENGINE_C_get_flushed], 2u);
}

TEST_F(BaselineTest, FlushAllDelayed)
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

TEST_F(BaselineTest, FlushAllNowCancelsDelayed)
{
	engine_flush_all(e, 10);
	engine_flush_all(e, 0);
	ASSERT_EQ(set("a", "1"), ENGINE_OK);
	clock.advance(20);
	EXPECT_EQ(get("a"), "1");
}

// --- expiration sweep ------------------------------------------------------------

TEST_F(BaselineTest, ExpireSweepRemovesOnlyDeadItems)
{
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(set("ttl:" + std::to_string(i), "v", 5), ENGINE_OK);
		ASSERT_EQ(set("keep:" + std::to_string(i), "v"), ENGINE_OK);
	}
	EXPECT_EQ(engine_expire(e), 0u);
	clock.advance(5);
	unsigned removed = 0;
	for (int pass = 0; pass < 64; pass++) {
		unsigned n = engine_expire(e);
		removed += n;
		if (n == 0 && removed > 0)
			break;
	}
	EXPECT_EQ(removed, 1000u);
	struct engine_stats st = stats();
	EXPECT_EQ(st.curr_items, 1000u);
	EXPECT_GE(st.expired, 1000u);
	for (int i = 0; i < 1000; i += 97)
		EXPECT_EQ(get("keep:" + std::to_string(i)), "v");
}

TEST_F(BaselineTest, ExpireSweepRemovesFlushedItems)
{
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(set("f:" + std::to_string(i), "v"), ENGINE_OK);
	engine_flush_all(e, 0);
	ASSERT_EQ(set("after", "v"), ENGINE_OK);
	unsigned removed = 0;
	for (int pass = 0; pass < 64; pass++) {
		unsigned n = engine_expire(e);
		removed += n;
		if (n == 0 && removed > 0)
			break;
	}
	EXPECT_EQ(removed, 100u);
	EXPECT_EQ(stats().curr_items, 1u);
	EXPECT_EQ(get("after"), "v");
}

// --- eviction --------------------------------------------------------------------

// Writing far more than fits: every set succeeds, the newest keys are
// there, and memory stays within the budget.
TEST_F(BaselineTest, EvictionKeepsSetsSucceeding)
{
	start(test_config(8u << 20, &clock));
	std::vector<std::string> keys;
	fill(200, 150000, &keys); // ~35 MB of items into 8 MB
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_LT(st.curr_items, 150000u);
	EXPECT_GT(st.curr_items, 1000u);
	EXPECT_LE(st.heap_bytes + st.table_bytes + st.meta_bytes, st.limit_maxbytes);
	EXPECT_EQ(st.counters[ENGINE_C_set_no_memory], 0u);
	// The last keys written are still there (sampled LRU keeps new items).
	for (size_t i = keys.size() - 100; i < keys.size(); i++)
		EXPECT_EQ(get(keys[i]), std::string(200, 'v')) << keys[i];
}

TEST_F(BaselineTest, EvictionWhenTheTableIsFull)
{
	// Tiny items: the hash table (not the item heap) runs out first.
	start(test_config(4u << 20, &clock));
	std::vector<std::string> keys;
	fill(1, 120000, &keys);
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_EQ(st.counters[ENGINE_C_set_no_memory], 0u);
	EXPECT_EQ(get(keys.back()), "v");
}

TEST_F(BaselineTest, EvictionAcrossSizeClasses)
{
	start(test_config(8u << 20, &clock));
	for (int i = 0; i < 40000; i++) {
		size_t len = 10 + (i * 37) % 3000;
		std::string k = "mix:" + std::to_string(i);
		ASSERT_EQ(set(k, std::string(len, 'a' + i % 26)), ENGINE_OK) << i;
		ASSERT_EQ(get(k), std::string(len, 'a' + i % 26)) << i;
	}
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_LE(st.heap_bytes + st.table_bytes + st.meta_bytes, st.limit_maxbytes);
}

TEST_F(BaselineTest, EvictRandomAlsoWorks)
{
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.eviction = ENGINE_EVICT_RANDOM;
	start(cfg);
	std::vector<std::string> keys;
	fill(200, 100000, &keys);
	EXPECT_GT(stats().evictions, 0u);
}

TEST_F(BaselineTest, NoEvictionRefusesWhenFull)
{
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.eviction = ENGINE_EVICT_NONE;
	start(cfg);
	std::string v(200, 'v');
	int stored = 0, rc = ENGINE_OK;
	for (int i = 0; i < 200000 && rc == ENGINE_OK; i++) {
		rc = set("k" + std::to_string(i), v);
		if (rc == ENGINE_OK)
			stored++;
	}
	ASSERT_EQ(rc, ENGINE_NO_MEMORY);
	ASSERT_GT(stored, 1000);
	EXPECT_EQ(get("k0"), v); // nothing was evicted
	struct engine_stats st = stats();
	EXPECT_EQ(st.evictions, 0u);
	EXPECT_EQ(st.counters[ENGINE_C_set_no_memory], 1u);
	// Deleting makes room again.
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(engine_delete(w, ("k" + std::to_string(i)).data(),
					("k" + std::to_string(i)).size(), 0),
			  ENGINE_OK);
	EXPECT_EQ(set("again", v), ENGINE_OK);
	EXPECT_EQ(get("again"), v);
}

TEST_F(BaselineTest, NoEvictionStillReclaimsExpiredItems)
{
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.eviction = ENGINE_EVICT_NONE;
	start(cfg);
	std::string v(200, 'v');
	int rc = ENGINE_OK, stored = 0;
	for (int i = 0; i < 200000 && rc == ENGINE_OK; i++) {
		rc = set("t" + std::to_string(i), v, 10);
		stored += rc == ENGINE_OK;
	}
	ASSERT_EQ(rc, ENGINE_NO_MEMORY);
	clock.advance(10);
	// Everything expired: new sets take the memory of expired items.
	for (int i = 0; i < stored; i++)
		ASSERT_EQ(set("n" + std::to_string(i), v), ENGINE_OK) << i;
	EXPECT_EQ(stats().evictions, 0u);
}

// --- stats -----------------------------------------------------------------------

TEST_F(BaselineTest, StatsSumDestroyedWorkers)
{
	engine_worker *w2 = engine_worker_create(e);
	ASSERT_NE(w2, nullptr);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(engine_store(w2, ENGINE_SET, "x", 1, "v", 1, 0, 0, 0, nullptr), ENGINE_OK);
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
