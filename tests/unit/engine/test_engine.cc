// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for the helpers both engines share (lib/engine).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "engine/engine.h"

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
