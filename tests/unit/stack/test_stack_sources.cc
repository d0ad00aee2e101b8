// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// drivers/net/stack_sources.c: connections per source address for
// --max-conns-per-source, as both stacks use it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <map>
#include <random>

extern "C" {
#include "drivers/net/stack_sources.h"
}

namespace {

struct stack_source v4(uint32_t a)
{
	struct stack_source s;

	stack_source_ipv4(&s, a);
	return s;
}

struct stack_source v6(const char *text)
{
	struct sockaddr_in6 sa = {};
	struct stack_source s;

	sa.sin6_family = AF_INET6;
	EXPECT_EQ(inet_pton(AF_INET6, text, &sa.sin6_addr), 1) << text;
	EXPECT_TRUE(stack_source_of(&s, (struct sockaddr *)&sa));
	return s;
}

class Sources : public ::testing::Test {
protected:
	struct stack_sources *t = nullptr;

	void SetUp() override
	{
		char err[256] = "";

		t = stack_sources_create(64, err, sizeof(err));
		ASSERT_NE(t, nullptr) << err;
	}
	void TearDown() override { stack_sources_destroy(t); }
};

TEST_F(Sources, CountsUpToTheLimitPerSourceAndForgetsAtZero)
{
	struct stack_source a = v4(0xc6120001), b = v4(0xc6120003);

	for (int i = 0; i < 3; i++)
		EXPECT_TRUE(stack_sources_take(t, &a, 3)) << i;
	EXPECT_FALSE(stack_sources_take(t, &a, 3));
	EXPECT_EQ(stack_sources_count(t, &a), 3u);
	/* another source is counted apart */
	EXPECT_TRUE(stack_sources_take(t, &b, 3));
	EXPECT_EQ(stack_sources_count(t, &b), 1u);
	/* a close makes room for one more */
	stack_sources_put(t, &a);
	EXPECT_TRUE(stack_sources_take(t, &a, 3));
	EXPECT_FALSE(stack_sources_take(t, &a, 3));
	for (int i = 0; i < 3; i++)
		stack_sources_put(t, &a);
	EXPECT_EQ(stack_sources_count(t, &a), 0u);
	stack_sources_put(t, &a); /* nothing to give back: no effect */
	EXPECT_EQ(stack_sources_count(t, &a), 0u);
	stack_sources_put(t, &b);
}

TEST_F(Sources, EverySlotOfTheTableIsUsable)
{
	/* as many sources as the table was made for, one connection each,
	 * and again after they all left: deleted keys leave no debris */
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < 64; i++) {
			struct stack_source s = v4(0x0a000000 + i * 7919);

			ASSERT_TRUE(stack_sources_take(t, &s, 1)) << round << " " << i;
		}
		for (uint32_t i = 0; i < 64; i++) {
			struct stack_source s = v4(0x0a000000 + i * 7919);

			stack_sources_put(t, &s);
		}
	}
}

TEST_F(Sources, RandomTakesAndPutsMatchAModel)
{
	/* 16,000 takes and puts over 100 sources (the table holds at most 64
	 * at once): long probe runs, and deletions inside them that must
	 * leave every other source findable with its count */
	std::map<uint32_t, uint32_t> model;
	std::mt19937 rng(7);

	for (int step = 0; step < 16000; step++) {
		uint32_t a = 0x0a000000 + rng() % 100;
		struct stack_source s = v4(a);

		if (rng() % 2 == 0) {
			bool room = model.count(a) != 0 || model.size() < 64;
			bool ok = stack_sources_take(t, &s, 4);

			ASSERT_EQ(ok, room && model[a] < 4) << step;
			if (ok)
				model[a]++;
			else if (model[a] == 0)
				model.erase(a);
		} else if (model.count(a) != 0) {
			stack_sources_put(t, &s);
			if (--model[a] == 0)
				model.erase(a);
		}
		if (step % 1000 == 0) {
			for (uint32_t k = 0; k < 100; k++) {
				struct stack_source q = v4(0x0a000000 + k);
				uint32_t want = model.count(0x0a000000 + k) ? model[0x0a000000 + k] : 0;

				ASSERT_EQ(stack_sources_count(t, &q), want) << step << " " << k;
			}
		}
	}
}

TEST_F(Sources, ASourceBeyondTheTablesRoomIsRefused)
{
	/* 64 sources made it: with the table at that, a 65th is refused
	 * (a connection limit, not a hang), and one more fits once one left */
	for (uint32_t i = 0; i < 64; i++) {
		struct stack_source s = v4(0x0b000000 + i);

		ASSERT_TRUE(stack_sources_take(t, &s, 1)) << i;
	}
	struct stack_source extra = v4(0x0c000000), first = v4(0x0b000000);

	EXPECT_FALSE(stack_sources_take(t, &extra, 1));
	stack_sources_put(t, &first);
	EXPECT_TRUE(stack_sources_take(t, &extra, 1));
}

TEST_F(Sources, AddressesAreSourcesByFamily)
{
	struct sockaddr_in in = {};
	struct sockaddr_in6 mapped = {};
	struct sockaddr_un_like {
		sa_family_t family;
		char path[8];
	} un = { AF_UNIX, "x" };
	struct stack_source s;

	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(0xc6120001);
	ASSERT_TRUE(stack_source_of(&s, (struct sockaddr *)&in));
	struct stack_source direct = v4(0xc6120001);
	EXPECT_EQ(memcmp(&s, &direct, sizeof(s)), 0);
	/* an IPv4 client of a dual-stack socket is its IPv4 address */
	mapped.sin6_family = AF_INET6;
	ASSERT_EQ(inet_pton(AF_INET6, "::ffff:198.18.0.1", &mapped.sin6_addr), 1);
	ASSERT_TRUE(stack_source_of(&s, (struct sockaddr *)&mapped));
	EXPECT_EQ(memcmp(&s, &direct, sizeof(s)), 0);
	/* IPv6: the /64 is the source */
	struct stack_source x = v6("2001:db8:1:2::1"), y = v6("2001:db8:1:2:ffff::9"),
			    z = v6("2001:db8:1:3::1");
	EXPECT_EQ(memcmp(&x, &y, sizeof(x)), 0);
	EXPECT_NE(memcmp(&x, &z, sizeof(x)), 0);
	EXPECT_TRUE(stack_sources_take(t, &x, 1));
	EXPECT_FALSE(stack_sources_take(t, &y, 1));
	EXPECT_TRUE(stack_sources_take(t, &z, 1));
	stack_sources_put(t, &x);
	stack_sources_put(t, &z);
	EXPECT_FALSE(stack_source_of(&s, (struct sockaddr *)&un));
}

} // namespace
