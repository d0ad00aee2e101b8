// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// --verify all: a get's value must be of a version that may be current.
// Replies are built here byte for byte (well formed, bytes matching their
// own flags), so only the version check can fail them: an older set's
// value after a newer set was acknowledged (a lost update, a stale read),
// a version never handed out, and an earlier run's value after this run
// stored the key. Overlapping sets, which the server may apply in either
// order, must not read as staleness.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "lg_proto.h"
#include "lg_session.h"
#include "lg_verify.h"
}

namespace {

// "VALUE key version len\r\n<bytes>\r\nEND\r\n" as a server would send
// it for a set of key with that version.
std::string
value_reply(const struct lg_workload *wl, uint64_t id, uint32_t version,
	    uint32_t len, bool damage = false)
{
	char key[LG_KEY_MAX];
	size_t klen = lg_key_format(wl, id, key);
	std::string data(len, '\0');

	lg_value_fill(&data[0], lg_value_seed(key, klen, version, len), 0, len);
	if (damage)
		data[len / 2] = data[len / 2] == 'x' ? 'y' : 'x';
	return "VALUE " + std::string(key, klen) + " " + std::to_string(version) +
	       " " + std::to_string(len) + "\r\n" + data + "\r\nEND\r\n";
}

TEST(LoadgenVerify, FloorRisesOnlyPastSetsThatCannotBeReordered)
{
	struct lg_verify v;
	uint32_t raise1, raise2, raise3;

	ASSERT_EQ(lg_verify_init(&v, 4, 7), 0);
	uint32_t v1 = lg_verify_set_prepared(&v, 2, &raise1);
	EXPECT_EQ(v1 >> LG_VERIFY_COUNTER_BITS, v.epoch);
	EXPECT_EQ(lg_verify_floor(&v, 2), 0u);
	lg_verify_set_acked(&v, 2, raise1);
	EXPECT_EQ(lg_verify_floor(&v, 2), 1u);

	// Two sets in flight together: either may end up stored.
	uint32_t v2 = lg_verify_set_prepared(&v, 2, &raise2);
	uint32_t v3 = lg_verify_set_prepared(&v, 2, &raise3);
	EXPECT_EQ(raise3, 0u);
	lg_verify_set_acked(&v, 2, raise3);
	lg_verify_set_acked(&v, 2, raise2);
	uint32_t floor = lg_verify_floor(&v, 2);
	EXPECT_EQ(floor, v2 & LG_VERIFY_COUNTER_MASK);
	EXPECT_EQ(lg_verify_check(&v, 2, floor, v2), nullptr);
	EXPECT_EQ(lg_verify_check(&v, 2, floor, v3), nullptr);
	// The first set was replaced before the get: stale.
	EXPECT_NE(lg_verify_check(&v, 2, floor, v1), nullptr);
	// A get sent before the floor rose may still see it.
	EXPECT_EQ(lg_verify_check(&v, 2, 1, v1), nullptr);
	// Never handed out.
	EXPECT_NE(lg_verify_check(&v, 2, floor, v3 + 1), nullptr);
	// Another run's value: fine before this run stored the key, not after.
	uint32_t foreign = ((v.epoch % 255) + 1) << LG_VERIFY_COUNTER_BITS | 9;
	EXPECT_EQ(lg_verify_check(&v, 3, 0, foreign), nullptr);
	EXPECT_NE(lg_verify_check(&v, 2, floor, foreign), nullptr);

	// A set given up on (lost, failed) does not hold the floor back for
	// ever, and does not raise it.
	uint32_t raise4, raise5;
	lg_verify_set_prepared(&v, 2, &raise4);
	lg_verify_set_dropped(&v, 2);
	uint32_t v5 = lg_verify_set_prepared(&v, 2, &raise5);
	EXPECT_EQ(raise5, v5 & LG_VERIFY_COUNTER_MASK);
	lg_verify_set_acked(&v, 2, raise5);
	EXPECT_EQ(lg_verify_floor(&v, 2), v5 & LG_VERIFY_COUNTER_MASK);
	lg_verify_free(&v);
}

class LoadgenVerifySession : public ::testing::Test {
protected:
	struct lg_run run;
	struct lg_worker w;
	struct lg_conn c;
	struct lg_verify v;

	void start(bool verify_all)
	{
		char err[128];

		memset(&run, 0, sizeof(run));
		run.wl.keys = 1; // every request is of key 0
		run.wl.key_size = 8;
		run.wl.vmin = run.wl.vmax = 40;
		run.wl.get_ratio = 0; // sets first
		run.wl.multiget = 1;
		ASSERT_EQ(lg_workload_init(&run.wl, err, sizeof(err)), 0) << err;
		ASSERT_EQ(lg_verify_init(&v, 1, 3), 0);
		run.wl.verify = verify_all ? &v : nullptr;
		run.workers = 1;
		run.conns = 1;
		run.depth = 1;
		run.check_every = 16; // the sampled default: not this get
		run.late_ns = 100000;
		run.phase = LG_PHASE_MEASURE;
		lg_worker_init(&w, &run, 0, 42);
		ASSERT_EQ(lg_conn_init(&c, &w, 0), 0);
	}

	void TearDown() override
	{
		lg_conn_free(&c);
		lg_verify_free(&v);
	}

	uint32_t set_stored()
	{
		struct lg_req *r = lg_conn_next(&c, 1000);
		std::string a = "STORED\r\n";

		EXPECT_NE(r, nullptr);
		if (!r)
			return 0;
		EXPECT_EQ(r->op, LG_OP_SET);
		uint32_t version = r->version;
		lg_conn_commit(&c, 1000);
		lg_conn_input(&c, a.data(), a.size(), 2000);
		return version;
	}

	// A get of key 0 answered with reply.
	void get_answered(const std::string &reply)
	{
		run.wl.get_ratio = 1;
		struct lg_req *r = lg_conn_next(&c, 3000);
		ASSERT_NE(r, nullptr);
		ASSERT_EQ(r->op, LG_OP_GET);
		lg_conn_commit(&c, 3000);
		EXPECT_EQ(lg_conn_input(&c, reply.data(), reply.size(), 4000), reply.size());
		EXPECT_FALSE(c.dead);
		run.wl.get_ratio = 0;
	}
};

TEST_F(LoadgenVerifySession, OlderSetsValueAfterANewerAckIsStale)
{
	start(true);
	uint32_t first = set_stored();
	uint32_t second = set_stored();
	ASSERT_NE(first, second);
	get_answered(value_reply(&run.wl, 0, first, 40)); // the second set lost
	EXPECT_EQ(w.stats.stale, 1u);
	EXPECT_EQ(w.stats.corrupt, 0u);
	EXPECT_EQ(w.stats.gets, 0u);
	get_answered(value_reply(&run.wl, 0, second, 40));
	EXPECT_EQ(w.stats.stale, 1u);
	EXPECT_EQ(w.stats.gets, 1u);
	EXPECT_EQ(w.stats.values_checked, 2u); // every get, not one in 16
}

TEST_F(LoadgenVerifySession, VersionNeverSetIsStale)
{
	start(true);
	uint32_t first = set_stored();
	get_answered(value_reply(&run.wl, 0, first + 1, 40));
	EXPECT_EQ(w.stats.stale, 1u);
}

TEST_F(LoadgenVerifySession, EveryValuesBytesAreChecked)
{
	start(true);
	uint32_t first = set_stored();
	get_answered(value_reply(&run.wl, 0, first, 40, true));
	EXPECT_EQ(w.stats.corrupt, 1u);
	EXPECT_EQ(w.stats.gets, 0u);
}

// The hole --verify all closes: sampled, the same stale reply passes.
TEST_F(LoadgenVerifySession, SampledModeCannotSeeStaleness)
{
	start(false);
	uint32_t first = set_stored();
	set_stored();
	get_answered(value_reply(&run.wl, 0, first, 40));
	EXPECT_EQ(w.stats.stale, 0u);
	EXPECT_EQ(w.stats.gets, 1u);
}

} // namespace
