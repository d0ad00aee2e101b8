// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of what is the rte_hash baseline engine's own: creation and
// its limits, the cases where it differs from lib/seg (touch keeps the cas
// unique, exact expiry of long TTLs, delete/flush counters, a too large
// set keeps the old value), the expiration sweep and eviction. What both
// engines promise is in tests/unit/engine/test_engine_contract.cc.
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

// --- expiry ---------------------------------------------------------------

// Expiry is exact to the second at any TTL here (lib/seg keeps long TTLs
// in coarser buckets; the contract suite checks they are never late).
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

// --- add / replace / cas ---------------------------------------------------

// Here touch keeps the cas unique (lib/seg rewrites a touched item, which
// gives it a new one).
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

// --- append / prepend --------------------------------------------------------

// Cas uniques come from one engine-wide counter here, so they are
// consecutive.
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

// Here a cas mismatch is not a delete miss, and a delete of an expired
// item reclaims it at once (curr_items drops).
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

// Here gets that miss because of flush_all count as get_flushed.
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

// Random eviction: every set is stored and memory stays within the
// budget; each key reads back byte-exact or is gone, and the keys gone are
// exactly the evictions counted.
TEST_F(BaselineTest, EvictRandomKeepsTheBudgetAndExactSurvivors)
{
	engine_config cfg = test_config(8u << 20, &clock);
	cfg.eviction = ENGINE_EVICT_RANDOM;
	start(cfg);
	const int n = 100000;
	auto value = [](int i) {
		std::string v = "value:" + std::to_string(i) + ":";
		v.resize(200, static_cast<char>('a' + i % 26));
		return v;
	};
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(set("fill:" + std::to_string(i), value(i)), ENGINE_OK) << i;
		if (i % 1000 == 999)
			clock.advance(1);
	}
	struct engine_stats st = stats();
	EXPECT_GT(st.evictions, 0u);
	EXPECT_EQ(st.counters[ENGINE_C_set_no_memory], 0u);
	EXPECT_LE(st.heap_bytes + st.table_bytes + st.meta_bytes, st.limit_maxbytes);
	const std::string miss = std::string("<") + engine_status_name(ENGINE_MISS) + ">";
	uint64_t hits = 0;
	for (int i = 0; i < n; i++) {
		std::string got = get("fill:" + std::to_string(i));
		if (got == miss)
			continue;
		ASSERT_EQ(got, value(i)) << i;
		hits++;
	}
	EXPECT_EQ(hits, st.curr_items);
	EXPECT_EQ(hits + st.evictions, static_cast<uint64_t>(n));
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
