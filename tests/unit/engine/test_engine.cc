// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the helpers both engines share (lib/engine).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "engine/engine.h"
#include "engine/engine_config.h"

TEST(EngineExptime, NeverExpires) { EXPECT_EQ(engine_expiry_from_exptime(0, 1000), 0); }

TEST(EngineExptime, NegativeIsExpired) { EXPECT_EQ(engine_expiry_from_exptime(-1, 1000), -1); }

TEST(EngineExptime, RelativeUpTo30Days)
{
	EXPECT_EQ(engine_expiry_from_exptime(1, 1000), 1001);
	EXPECT_EQ(engine_expiry_from_exptime(ENGINE_RELATIVE_EXPTIME_MAX, 1000),
		  1000 + ENGINE_RELATIVE_EXPTIME_MAX);
}

TEST(EngineExptime, AbsoluteBeyond30Days)
{
	const int64_t now = 1700000000;
	EXPECT_EQ(engine_expiry_from_exptime(now + 10, now), now + 10);
	EXPECT_EQ(engine_expiry_from_exptime(now, now), -1);
	EXPECT_EQ(engine_expiry_from_exptime(ENGINE_RELATIVE_EXPTIME_MAX + 1, now), -1);
}

static bool parse(const std::string &s, uint64_t *v)
{
	return engine_parse_u64(s.data(), s.size(), v);
}

TEST(EngineNumber, ParsesDecimal)
{
	uint64_t v = 0;
	EXPECT_TRUE(parse("0", &v));
	EXPECT_EQ(v, 0u);
	EXPECT_TRUE(parse("18446744073709551615", &v));
	EXPECT_EQ(v, UINT64_MAX);
	EXPECT_TRUE(parse("42  ", &v)); // memcached pads decr results with spaces
	EXPECT_EQ(v, 42u);
}

TEST(EngineNumber, RejectsNonNumeric)
{
	uint64_t v;
	EXPECT_FALSE(parse("", &v));
	EXPECT_FALSE(parse("   ", &v));
	EXPECT_FALSE(parse("-1", &v));
	EXPECT_FALSE(parse("1a", &v));
	EXPECT_FALSE(parse(" 1", &v));
	EXPECT_FALSE(parse("18446744073709551616", &v));
	EXPECT_FALSE(parse("000000000000000000001", &v)); // 21 digits
}

TEST(EngineNumber, FormatsDecimal)
{
	char buf[20];
	EXPECT_EQ(std::string(buf, engine_format_u64(0, buf)), "0");
	EXPECT_EQ(std::string(buf, engine_format_u64(UINT64_MAX, buf)), "18446744073709551615");
	EXPECT_EQ(std::string(buf, engine_format_u64(1000, buf)), "1000");
}

TEST(EngineStatus, Names)
{
	EXPECT_STREQ(engine_status_name(ENGINE_OK), "OK");
	EXPECT_STREQ(engine_status_name(ENGINE_EXISTS), "EXISTS");
	EXPECT_STREQ(engine_status_name(static_cast<engine_status>(ENGINE_INVALID + 1)), "UNKNOWN");
}

// The eviction policy table (engine_eviction.c): one row per policy, in
// enum order, and every lookup answers from it.
TEST(EngineEviction, TableHasOneRowPerPolicyInEnumOrder)
{
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++) {
		const engine_eviction_policy &p = engine_eviction_policies[i];

		EXPECT_EQ(static_cast<unsigned>(p.id), i);
		ASSERT_NE(p.name, nullptr);
		EXPECT_GT(std::strlen(p.name), 0u);
		EXPECT_EQ(std::strchr(p.name, '|'), nullptr) << p.name;
		ASSERT_NE(p.help, nullptr);
		EXPECT_GT(std::strlen(p.help), 0u) << p.name;
		EXPECT_NE(p.engines, 0u) << p.name << " is in no engine";
		for (unsigned j = 0; j < i; j++)
			EXPECT_STRNE(p.name, engine_eviction_policies[j].name);
	}
}

TEST(EngineEviction, NamesAreTheOnesUsersType)
{
	EXPECT_STREQ(engine_eviction_name(ENGINE_EVICT_MERGE), "merge");
	EXPECT_STREQ(engine_eviction_name(ENGINE_EVICT_FIFO), "fifo");
	EXPECT_STREQ(engine_eviction_name(ENGINE_EVICT_RANDOM), "random");
	EXPECT_STREQ(engine_eviction_name(ENGINE_EVICT_NONE), "none");
	EXPECT_STREQ(engine_eviction_name(ENGINE_EVICT_COUNT), "unknown");
	EXPECT_STREQ(engine_eviction_name(static_cast<engine_eviction>(-1)), "unknown");
}

TEST(EngineEviction, LookupByNameRoundTrips)
{
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++) {
		const engine_eviction_policy *p = engine_eviction_by_name(engine_eviction_policies[i].name);

		ASSERT_NE(p, nullptr);
		EXPECT_EQ(p, &engine_eviction_policies[i]);
		EXPECT_EQ(engine_eviction_of(p->id), p);
		EXPECT_STREQ(engine_eviction_name(p->id), p->name);
	}
	EXPECT_EQ(engine_eviction_by_name("lru"), nullptr);
	EXPECT_EQ(engine_eviction_by_name(""), nullptr);
	EXPECT_EQ(engine_eviction_by_name("MERGE"), nullptr);
	EXPECT_EQ(engine_eviction_by_name("merge "), nullptr);
	EXPECT_EQ(engine_eviction_of(ENGINE_EVICT_COUNT), nullptr);
	EXPECT_EQ(engine_eviction_of(static_cast<engine_eviction>(42)), nullptr);
}

TEST(EngineEviction, SupportFollowsTheEnginesColumn)
{
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++) {
		const engine_eviction_policy &p = engine_eviction_policies[i];

		EXPECT_EQ(engine_eviction_supported(p.id, ENGINE_KIND_SEG),
			  (p.engines & ENGINE_KIND_SEG) != 0);
		EXPECT_EQ(engine_eviction_supported(p.id, ENGINE_KIND_BASELINE),
			  (p.engines & ENGINE_KIND_BASELINE) != 0);
	}
	// Today every policy is in both engines.
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++)
		EXPECT_EQ(engine_eviction_policies[i].engines, ENGINE_KIND_SEG | ENGINE_KIND_BASELINE);
	// A value past the table is no policy, for any engine (what
	// baseline's "> ENGINE_EVICT_NONE" check did by hand).
	EXPECT_FALSE(engine_eviction_supported(ENGINE_EVICT_COUNT, ENGINE_KIND_SEG));
	EXPECT_FALSE(engine_eviction_supported(static_cast<engine_eviction>(42),
					       ENGINE_KIND_SEG | ENGINE_KIND_BASELINE));
	EXPECT_FALSE(engine_eviction_supported(ENGINE_EVICT_MERGE, 0));
}

TEST(EngineEviction, NamesJoinedForUsageAndErrors)
{
	char buf[128];

	EXPECT_STREQ(engine_eviction_names(buf, sizeof(buf)), "merge|fifo|random|none");
	// Truncated at a name boundary, never overrun.
	char small[12];
	std::memset(small, 'x', sizeof(small));
	EXPECT_STREQ(engine_eviction_names(small, sizeof(small)), "merge|fifo");
	char tiny[1] = {'x'};
	EXPECT_STREQ(engine_eviction_names(tiny, sizeof(tiny)), "");
}

TEST(EngineEviction, HelpFitsTheUsageColumns)
{
	// segcached --help prints "          NAME    HELP" (18 columns first).
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++)
		EXPECT_LE(18 + std::strlen(engine_eviction_policies[i].help), 80u)
			<< engine_eviction_policies[i].name;
}
