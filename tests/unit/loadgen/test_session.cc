// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// The per-connection pipeline, driven with made-up times (no clock, no
// network): the closed loop keeps `depth` requests in flight, the open loop
// sends at its scheduled times and counts late sends, answers are matched
// to requests in order (TCP) or by request id (UDP), and a bad answer kills
// the connection without counting as served.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "lg_session.h"
}

namespace {

class LoadgenSession : public ::testing::Test {
protected:
	struct lg_run run;
	struct lg_worker w;
	struct lg_conn c;

	void start(double rate, unsigned depth, double get_ratio = 1.0)
	{
		char err[128];

		memset(&run, 0, sizeof(run));
		run.wl.keys = 100;
		run.wl.key_size = 8;
		run.wl.vmin = run.wl.vmax = 10;
		run.wl.get_ratio = get_ratio;
		run.wl.multiget = 1;
		ASSERT_EQ(lg_workload_init(&run.wl, err, sizeof(err)), 0) << err;
		run.workers = 1;
		run.conns = 1;
		run.depth = depth;
		run.rate = rate;
		run.check_every = 1;
		run.late_ns = 100000;
		run.udp_timeout_ns = 1000000;
		run.phase = LG_PHASE_MEASURE;
		lg_worker_init(&w, &run, 0, 42);
		ASSERT_EQ(lg_conn_init(&c, &w, 0), 0);
	}

	void TearDown() override { lg_conn_free(&c); }

	std::string answer(const struct lg_req *r)
	{
		// A miss for a get, STORED for a set: valid either way.
		return r->op == LG_OP_GET ? "END\r\n" : "STORED\r\n";
	}
};

TEST_F(LoadgenSession, ClosedLoopKeepsDepthInFlight)
{
	start(0, 2);
	struct lg_req *r1 = lg_conn_next(&c, 1000);
	ASSERT_NE(r1, nullptr);
	// Not committed: the same request again (the transport had no space).
	EXPECT_EQ(lg_conn_next(&c, 1000), r1);
	lg_conn_commit(&c, 1000);
	ASSERT_NE(lg_conn_next(&c, 1000), nullptr);
	lg_conn_commit(&c, 1000);
	EXPECT_EQ(lg_conn_next(&c, 1000), nullptr); // depth reached
	EXPECT_EQ(c.outstanding, 2u);

	std::string a = "END\r\n";
	EXPECT_EQ(lg_conn_input(&c, a.data(), a.size(), 6000), a.size());
	EXPECT_EQ(c.outstanding, 1u);
	EXPECT_EQ(w.stats.requests, 1u);
	EXPECT_EQ(w.stats.gets, 1u);
	EXPECT_EQ(w.stats.hits, 0u);
	EXPECT_EQ(w.stats.hist.count, 1u);
	EXPECT_EQ(w.stats.hist.max, 5000u); // from the send at 1000 to 6000
	EXPECT_NE(lg_conn_next(&c, 7000), nullptr);
}

TEST_F(LoadgenSession, PartialAnswersWaitForTheirRest)
{
	start(0, 1);
	ASSERT_NE(lg_conn_next(&c, 0), nullptr);
	lg_conn_commit(&c, 0);
	EXPECT_EQ(lg_conn_input(&c, "EN", 2, 10), 0u);
	EXPECT_EQ(c.outstanding, 1u);
	EXPECT_EQ(lg_conn_input(&c, "END\r\n", 5, 20), 5u);
	EXPECT_EQ(c.outstanding, 0u);
	EXPECT_EQ(w.stats.requests, 1u);
}

TEST_F(LoadgenSession, OpenLoopSendsOnScheduleAndCountsLateSends)
{
	start(1000, 64); // one connection: 1000 requests/s, mean gap 1 ms
	const uint64_t t0 = 1000000000ULL;

	EXPECT_EQ(lg_conn_next(&c, t0), nullptr); // schedule starts now
	ASSERT_TRUE(c.scheduled);
	uint64_t due = c.next_ns;
	ASSERT_GT(due, t0);
	EXPECT_EQ(lg_conn_next(&c, due - 1), nullptr); // not yet
	struct lg_req *r = lg_conn_next(&c, due);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->intended_ns, due);
	lg_conn_commit(&c, due);
	EXPECT_EQ(w.stats.late, 0u);

	// The generator stalls for 5 ms past the next due time: the request
	// keeps its intended time, is counted late, and its latency runs from
	// the intended time.
	uint64_t due2 = c.next_ns;
	r = lg_conn_next(&c, due2 + 5000000);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->intended_ns, due2);
	lg_conn_commit(&c, due2 + 5000000);
	EXPECT_EQ(w.stats.late, 1u);
	std::string a = answer(&c.reqs[c.head]) + answer(&c.reqs[(c.head + 1) % 64]);
	EXPECT_EQ(lg_conn_input(&c, a.data(), a.size(), due2 + 5000000 + 1000), a.size());
	EXPECT_EQ(w.stats.requests, 2u);
	EXPECT_GE(w.stats.hist.max, 5000000u + 1000);

	// Over many arrivals the schedule keeps the asked rate.
	uint64_t now = c.next_ns, sent = 0;
	for (int i = 0; i < 20000; i++) {
		while ((r = lg_conn_next(&c, now)) != nullptr) {
			lg_conn_commit(&c, now);
			sent++;
			std::string x = answer(r);
			lg_conn_input(&c, x.data(), x.size(), now);
		}
		now += 100000; // look every 100 us for 2 s
	}
	EXPECT_NEAR((double)sent, 2000.0, 4 * 45.0); // Poisson: sd = sqrt(2000)
}

TEST_F(LoadgenSession, NothingIsSentWhileDraining)
{
	start(0, 4);
	run.phase = LG_PHASE_DRAIN;
	EXPECT_EQ(lg_conn_next(&c, 0), nullptr);
}

TEST_F(LoadgenSession, PreloadSetsEveryKeyOnceThenReportsDone)
{
	start(0, 8, 1.0);
	run.phase = LG_PHASE_PRELOAD;
	run.preload = true;
	lg_worker_init(&w, &run, 0, 42);
	w.pre_next = 0;
	w.pre_end = 10;
	struct lg_req *r;
	unsigned n = 0;
	uint64_t expect = 0;

	while (w.pre_next < w.pre_end) {
		while ((r = lg_conn_next(&c, 0)) != nullptr) {
			EXPECT_EQ(r->op, LG_OP_SET);
			EXPECT_EQ(r->keys[0], expect++);
			lg_conn_commit(&c, 0);
			n++;
		}
		std::string s = "STORED\r\n";
		while (c.outstanding)
			lg_conn_input(&c, s.data(), s.size(), 0);
	}
	EXPECT_EQ(n, 10u);
	EXPECT_EQ(w.preloaded, 1);
	EXPECT_EQ(w.stats.requests, 0u); // preload is not measured
}

TEST_F(LoadgenSession, BadAnswerKillsTheConnectionAndIsNotServed)
{
	start(0, 2);
	ASSERT_NE(lg_conn_next(&c, 0), nullptr);
	lg_conn_commit(&c, 0);
	ASSERT_NE(lg_conn_next(&c, 0), nullptr);
	lg_conn_commit(&c, 0);
	std::string a = "STORED\r\n"; // to a get
	lg_conn_input(&c, a.data(), a.size(), 10);
	EXPECT_TRUE(c.dead);
	EXPECT_EQ(w.stats.bad, 1u);
	EXPECT_EQ(w.stats.requests, 0u);
	lg_conn_lost(&c);
	EXPECT_EQ(w.stats.lost, 1u); // the second one never got its answer
	EXPECT_EQ(lg_conn_next(&c, 20), nullptr);
}

TEST_F(LoadgenSession, BytesWithoutARequestAreBad)
{
	start(0, 2);
	lg_conn_input(&c, "END\r\n", 5, 0);
	EXPECT_TRUE(c.dead);
	EXPECT_EQ(w.stats.bad, 1u);
}

TEST_F(LoadgenSession, UdpAnswersMatchByRequestIdInAnyOrder)
{
	start(0, 4);
	c.udp_id = 0x0500; // flow 5
	uint16_t ids[2];
	for (int i = 0; i < 2; i++) {
		struct lg_req *r = lg_conn_next(&c, 0);
		ASSERT_NE(r, nullptr);
		ids[i] = r->udp_id;
		lg_conn_commit(&c, 0);
	}
	EXPECT_EQ(ids[0] >> 8, 5);
	EXPECT_NE(ids[0], ids[1]);
	uint8_t dgram[64];
	// The second answer first.
	lg_udp_hdr_write(dgram, ids[1]);
	memcpy(dgram + 8, "END\r\n", 5);
	lg_conn_udp_input(&c, dgram, 13, 100);
	EXPECT_EQ(c.outstanding, 1u);
	EXPECT_EQ(c.count, 2u); // the oldest slot is still pending
	lg_udp_hdr_write(dgram, ids[0]);
	lg_conn_udp_input(&c, dgram, 13, 200);
	EXPECT_EQ(c.outstanding, 0u);
	EXPECT_EQ(c.count, 0u);
	EXPECT_EQ(w.stats.requests, 2u);
	// A stray id is ignored.
	lg_udp_hdr_write(dgram, 0x0777);
	lg_conn_udp_input(&c, dgram, 13, 300);
	EXPECT_EQ(w.stats.requests, 2u);
}

TEST_F(LoadgenSession, UdpRequestsTimeOutAsLost)
{
	start(0, 4);
	ASSERT_NE(lg_conn_next(&c, 0), nullptr);
	lg_conn_commit(&c, 0);
	lg_conn_udp_expire(&c, 500000);
	EXPECT_EQ(c.outstanding, 1u);
	lg_conn_udp_expire(&c, 2000000);
	EXPECT_EQ(c.outstanding, 0u);
	EXPECT_EQ(w.stats.lost, 1u);
}

} // namespace
