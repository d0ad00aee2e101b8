// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// The per-connection pipeline, driven with made-up times (no clock, no
// network): the closed loop keeps `depth` requests in flight, the open loop
// sends at its scheduled times and counts late sends (the generator's or
// the window's), the backlog and what was unsent at the drain, answers are matched
// to requests in order (TCP) or by request id (UDP), and a bad answer kills
// the connection without counting as served.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "lg_session.h"
#include "lg_trace.h"
}

namespace {

class LoadgenSession : public ::testing::Test {
protected:
	struct lg_run run;
	struct lg_worker w;
	struct lg_conn c;

	void start(double rate, unsigned depth, double get_ratio = 1.0, bool udp = false)
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
		run.udp = udp;
		run.phase = LG_PHASE_MEASURE;
		lg_worker_init(&w, &run, 0, 42);
		ASSERT_EQ(lg_conn_init(&c, &w, 0), 0);
	}

	void TearDown() override { lg_conn_free(&c); }

	// Sends n requests at time 0 and keeps their UDP request ids.
	void send_udp(uint16_t *ids, unsigned n)
	{
		for (unsigned i = 0; i < n; i++) {
			struct lg_req *r = lg_conn_next(&c, 0);
			ASSERT_NE(r, nullptr);
			ids[i] = r->udp_id;
			lg_conn_commit(&c, 0);
		}
	}

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

// A late send is the generator's fault when the connection could have
// sent (due, a slot free) more than late_ns before the worker got to it;
// otherwise the window was full (depth in flight) when it came due.
TEST_F(LoadgenSession, GeneratorLateAndWindowLateAreCountedApart)
{
	start(1, 1); // 1 request/s, mean gap 1 s: no arrival between the steps
	const uint64_t ms = 1000000;

	EXPECT_EQ(lg_conn_next(&c, 1000), nullptr);
	uint64_t d1 = c.next_ns;
	ASSERT_NE(lg_conn_next(&c, d1), nullptr);
	lg_conn_commit(&c, d1); // on time; the one slot is taken

	// Due at d2 with the window full; the answer frees it 5 ms later and
	// the request goes at once: late, but the connection's doing.
	uint64_t d2 = c.next_ns;
	ASSERT_GT(d2, d1 + 10 * ms);
	EXPECT_EQ(lg_conn_next(&c, d2), nullptr); // window full
	std::string a = "END\r\n";
	ASSERT_EQ(lg_conn_input(&c, a.data(), a.size(), d2 + 5 * ms), a.size());
	struct lg_req *r = lg_conn_next(&c, d2 + 5 * ms);
	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->intended_ns, d2);
	lg_conn_commit(&c, d2 + 5 * ms);
	EXPECT_EQ(w.stats.late, 1u);
	EXPECT_EQ(w.stats.window_late, 1u);
	EXPECT_EQ(w.stats.generator_late, 0u);

	// Answered long before d3; the worker gets to d3's send 5 ms late.
	ASSERT_EQ(lg_conn_input(&c, a.data(), a.size(), d2 + 6 * ms), a.size());
	uint64_t d3 = c.next_ns;
	ASSERT_GT(d3, d2 + 10 * ms);
	ASSERT_NE(lg_conn_next(&c, d3 + 5 * ms), nullptr);
	lg_conn_commit(&c, d3 + 5 * ms);
	EXPECT_EQ(w.stats.generator_late, 1u);
	EXPECT_EQ(w.stats.window_late, 1u);

	// Due with the window full, freed 1 ms later, sent 5 ms after that:
	// the generator's 5 ms count.
	uint64_t d4 = c.next_ns;
	ASSERT_GT(d4, d3 + 10 * ms);
	ASSERT_EQ(lg_conn_input(&c, a.data(), a.size(), d4 + ms), a.size());
	ASSERT_NE(lg_conn_next(&c, d4 + 6 * ms), nullptr);
	lg_conn_commit(&c, d4 + 6 * ms);
	EXPECT_EQ(w.stats.generator_late, 2u);
	EXPECT_EQ(w.stats.window_late, 1u);

	// A prepared request the transport could not take (no room) is the
	// connection's wait, not the generator's.
	ASSERT_EQ(lg_conn_input(&c, a.data(), a.size(), d4 + 7 * ms), a.size());
	uint64_t d5 = c.next_ns;
	ASSERT_NE(lg_conn_next(&c, d5), nullptr); // prepared, not sent
	ASSERT_NE(lg_conn_next(&c, d5 + 5 * ms), nullptr);
	lg_conn_commit(&c, d5 + 5 * ms);
	EXPECT_EQ(w.stats.generator_late, 2u);
	EXPECT_EQ(w.stats.window_late, 2u);
	EXPECT_EQ(w.stats.late, 4u);
	EXPECT_EQ(w.stats.sent, 5u);
}

// Requests due but unsent when the drain begins are counted, not dropped:
// two workers with the same seed have the same arrivals; one sends each
// on time up to the drain, the other stalls (its one look, at the drain,
// finds no room to send).
TEST_F(LoadgenSession, DueButUnsentAtTheDrainIsCounted)
{
	start(1000, 4); // 1 ms mean gap
	const uint64_t t0 = 1000000000ULL, drain = t0 + 50000000ULL;
	struct lg_worker w2;
	struct lg_conn c2;
	lg_worker_init(&w2, &run, 0, 42);
	ASSERT_EQ(lg_conn_init(&c2, &w2, 0), 0);

	EXPECT_EQ(lg_conn_next(&c, t0), nullptr);
	EXPECT_EQ(lg_conn_next(&c2, t0), nullptr);
	EXPECT_EQ(c.next_ns, c2.next_ns);
	uint64_t sent = 0;
	for (uint64_t now = t0; now <= drain; now += 10000) {
		struct lg_req *r;

		while ((r = lg_conn_next(&c, now)) != nullptr) {
			lg_conn_commit(&c, now);
			std::string x = answer(r);
			lg_conn_input(&c, x.data(), x.size(), now);
			sent++;
		}
	}
	EXPECT_NEAR((double)sent, 50.0, 4 * 7.1); // Poisson: sd = sqrt(50)
	EXPECT_EQ(w.stats.sent, sent);
	ASSERT_NE(lg_conn_next(&c2, drain), nullptr); // prepared, never sent
	EXPECT_EQ(w2.stats.backlog_peak, sent);
	EXPECT_EQ(w2.stats.sent, 0u);

	run.drain_ns = drain;
	run.phase = LG_PHASE_DRAIN;
	EXPECT_EQ(lg_conn_next(&c, drain + 7000000), nullptr);
	EXPECT_EQ(lg_conn_next(&c2, drain + 7000000), nullptr);
	EXPECT_EQ(w.stats.unsent_at_drain, 0u);
	EXPECT_EQ(w2.stats.unsent_at_drain, sent);
	// Counted once, whoever looks again.
	lg_conn_lost(&c2, drain + 8000000);
	EXPECT_EQ(w2.stats.unsent_at_drain, sent);
	lg_conn_free(&c2);
}

// Over a full window the backlog builds on schedule; draining it counts
// each of its sends window-late and leaves nothing unsent.
TEST_F(LoadgenSession, BacklogPeakFollowsAFullWindow)
{
	start(1000, 1);
	const uint64_t t0 = 1000000000ULL;

	EXPECT_EQ(lg_conn_next(&c, t0), nullptr);
	uint64_t d1 = c.next_ns;
	ASSERT_NE(lg_conn_next(&c, d1), nullptr);
	lg_conn_commit(&c, d1);
	for (uint64_t now = d1; now <= d1 + 20000000; now += 10000)
		EXPECT_EQ(lg_conn_next(&c, now), nullptr); // window full 20 ms
	uint64_t peak = w.stats.backlog_peak;
	EXPECT_GT(peak, 5u);
	EXPECT_EQ(w.backlog, peak);
	uint64_t now = d1 + 20000000;
	std::string a = "END\r\n";
	for (uint64_t i = 0; i < peak; i++) {
		lg_conn_input(&c, a.data(), a.size(), now);
		ASSERT_NE(lg_conn_next(&c, now), nullptr);
		lg_conn_commit(&c, now);
	}
	EXPECT_EQ(w.backlog, 0u);
	EXPECT_EQ(w.stats.generator_late, 0u);
	EXPECT_GE(w.stats.window_late, peak - 1); // the last may be < 100 us late
	EXPECT_EQ(w.stats.late, w.stats.window_late);
	run.drain_ns = now;
	run.phase = LG_PHASE_DRAIN;
	EXPECT_EQ(lg_conn_next(&c, now), nullptr);
	EXPECT_EQ(w.stats.unsent_at_drain, 0u);
}

// A paced replay's requests due by the drain and not sent are counted.
TEST_F(LoadgenSession, PacedReplayCountsWhatWasDueAtTheDrain)
{
	std::string csv;
	struct lg_trace t;
	char err[256];

	for (int i = 0; i < 6; i++) // one every ms from 0
		csv += "0.00" + std::to_string(i) + ",k" + std::to_string(i) + ",10,get,0\n";
	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0) << err;
	start(0, 4);
	run.wl.trace = &t;
	run.trace_speed = 1;
	run.trace_start_ns = 1000;
	struct lg_req *r;
	while ((r = lg_conn_next(&c, 1000 + 1000000)) != nullptr)
		lg_conn_commit(&c, 1000 + 1000000); // those at 0 and 1 ms
	EXPECT_EQ(w.stats.sent, 2u);
	run.drain_ns = 1000 + 3500000; // 2 and 3 ms were due, 4 and 5 not
	run.phase = LG_PHASE_DRAIN;
	EXPECT_EQ(lg_conn_next(&c, 1000 + 9000000), nullptr);
	EXPECT_EQ(w.stats.unsent_at_drain, 2u);
	lg_trace_free(&t);
}

TEST(LoadgenStats, OverOnePercentGeneratorLateIsBehindAndMergesAdd)
{
	struct lg_stats a, b;

	lg_stats_init(&a);
	lg_stats_init(&b);
	EXPECT_FALSE(lg_stats_generator_behind(&a)); // nothing sent
	a.sent = 1000;
	a.generator_late = 10; // exactly 1%
	a.window_late = 900;
	EXPECT_FALSE(lg_stats_generator_behind(&a));
	a.generator_late = 11;
	EXPECT_TRUE(lg_stats_generator_behind(&a));
	b.sent = 100000;
	b.unsent_at_drain = 3;
	a.unsent_at_drain = 4;
	a.backlog_peak = 7;
	b.backlog_peak = 5;
	lg_stats_merge(&b, &a);
	EXPECT_EQ(b.sent, 101000u);
	EXPECT_EQ(b.generator_late, 11u);
	EXPECT_EQ(b.window_late, 900u);
	EXPECT_EQ(b.unsent_at_drain, 7u);
	EXPECT_EQ(b.backlog_peak, 7u); // the worst worker's
	EXPECT_FALSE(lg_stats_generator_behind(&b)); // 11 of 101000
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
	lg_conn_lost(&c, 20);
	EXPECT_EQ(w.stats.lost, 1u); // the second one never got its answer
	// ... and is a latency sample at how long it waited: sent at 0, given
	// up on at 20 (the bad answer is no sample).
	ASSERT_EQ(w.stats.hist.count, 1u);
	EXPECT_EQ(w.stats.hist.max, 20u);
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
	ASSERT_NO_FATAL_FAILURE(send_udp(ids, 2));
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

// A lost request weighs on the percentiles: it is a sample at its
// timeout, measured like every sample from its intended send time (here
// 2 ms before its send, which waited on a full window).
TEST_F(LoadgenSession, UdpTimeoutIsALatencySampleAtTheTimeout)
{
	start(0, 4, 1.0, true);
	struct lg_req *r = lg_conn_next(&c, 0);
	ASSERT_NE(r, nullptr);
	lg_conn_commit(&c, 0);
	r = lg_conn_next(&c, 100);
	ASSERT_NE(r, nullptr);
	r->intended_ns = 100; // as an open loop would have it
	lg_conn_commit(&c, 2000100);
	lg_conn_udp_expire(&c, 5000000);
	EXPECT_EQ(w.stats.lost, 2u);
	EXPECT_EQ(w.stats.requests, 0u);
	ASSERT_EQ(w.stats.hist.count, 2u);
	EXPECT_EQ(w.stats.hist.min, run.udp_timeout_ns);
	EXPECT_EQ(w.stats.hist.max, 2000000 + run.udp_timeout_ns);
}

// One datagram answering request id `id` (a miss or STORED).
static void
udp_answer(struct lg_conn *c, uint16_t id, bool set, uint64_t now)
{
	uint8_t dgram[64];
	const char *a = set ? "STORED\r\n" : "END\r\n";

	lg_udp_hdr_write(dgram, id);
	memcpy(dgram + 8, a, strlen(a));
	lg_conn_udp_input(c, dgram, 8 + strlen(a), now);
}

TEST_F(LoadgenSession, UdpLateAnswerDoesNotMatchANewerRequest)
{
	start(0, 1, 1.0, true);
	struct lg_req *r = lg_conn_next(&c, 0);
	ASSERT_NE(r, nullptr);
	uint16_t lost_id = r->udp_id;
	lg_conn_commit(&c, 0);
	lg_conn_udp_expire(&c, 2000000); // timed out
	EXPECT_EQ(w.stats.lost, 1u);
	// 256 more requests on the flow, each answered but the last.
	uint64_t now = 3000000;
	for (int i = 0; i < 256; i++, now += 10) {
		r = lg_conn_next(&c, now);
		ASSERT_NE(r, nullptr);
		uint16_t id = r->udp_id;
		EXPECT_NE(id, lost_id);
		lg_conn_commit(&c, now);
		if (i < 255)
			udp_answer(&c, id, false, now + 1);
	}
	EXPECT_EQ(w.stats.requests, 255u);
	// The answer to the first request comes now: it answers nothing.
	udp_answer(&c, lost_id, false, now);
	EXPECT_EQ(c.outstanding, 1u);
	EXPECT_EQ(w.stats.requests, 255u);
}

TEST_F(LoadgenSession, UdpLostDatagramDoesNotStallTheOthers)
{
	start(0, 2, 1.0, true);
	uint16_t ids[2];
	ASSERT_NO_FATAL_FAILURE(send_udp(ids, 2));
	// The first datagram is lost; the second is answered, and its slot
	// takes the next request at once, not after the first one's timeout.
	udp_answer(&c, ids[1], false, 10);
	for (int i = 0; i < 3; i++) {
		struct lg_req *r = lg_conn_next(&c, 20 + i);
		ASSERT_NE(r, nullptr);
		lg_conn_commit(&c, 20 + i);
		udp_answer(&c, r->udp_id, false, 30 + i);
	}
	EXPECT_EQ(w.stats.requests, 4u);
	EXPECT_EQ(c.outstanding, 1u);
	lg_conn_udp_expire(&c, 2000000);
	EXPECT_EQ(w.stats.lost, 1u);
	EXPECT_EQ(c.outstanding, 0u);
}

TEST_F(LoadgenSession, UdpTimeoutRunsFromEachRequestsOwnSend)
{
	start(0, 1, 1.0, true);
	// Due at 0, sent only at 0.9 ms (the socket was full): the 1 ms
	// timeout runs from the send.
	ASSERT_NE(lg_conn_next(&c, 0), nullptr);
	lg_conn_commit(&c, 900000);
	lg_conn_udp_expire(&c, 1500000);
	EXPECT_EQ(w.stats.lost, 0u);
	EXPECT_EQ(c.outstanding, 1u);
	lg_conn_udp_expire(&c, 2000000);
	EXPECT_EQ(w.stats.lost, 1u);
}

class LoadgenUdpPreload : public LoadgenSession {
protected:
	void preload(unsigned keys)
	{
		start(0, 4, 1.0, true);
		run.phase = LG_PHASE_PRELOAD;
		run.preload = true;
		lg_worker_init(&w, &run, 0, 42);
		w.pre_next = 0;
		w.pre_end = keys;
		w.preloaded = 0;
	}

	// Sends what may be sent at `now`; answers all but key 0.
	void pass(uint64_t now, bool answer_key0)
	{
		struct lg_req *r;

		while ((r = lg_conn_next(&c, now)) != nullptr) {
			uint16_t id = r->udp_id;
			bool key0 = r->keys[0] == 0;

			EXPECT_EQ(r->op, LG_OP_SET);
			lg_conn_commit(&c, now);
			if (!key0 || answer_key0)
				udp_answer(&c, id, true, now + 1);
		}
	}
};

TEST_F(LoadgenUdpPreload, LostSetIsSentAgainUntilAnswered)
{
	preload(10);
	pass(0, false);
	EXPECT_EQ(w.pre_next, 10u);
	EXPECT_EQ(w.preloaded, 0);
	EXPECT_EQ(c.outstanding, 1u); // key 0's set, lost
	lg_conn_udp_expire(&c, 2000000);
	pass(2000000, true); // sent again, answered this time
	EXPECT_EQ(w.preloaded, 1);
	EXPECT_EQ(w.pre_resent, 1u);
	EXPECT_EQ(w.pre_failed, 0u);
	EXPECT_EQ(w.stats.lost, 0u);
	EXPECT_EQ(c.outstanding, 0u);
}

TEST_F(LoadgenUdpPreload, SetNeverAnsweredIsGivenUpAfterBoundedTries)
{
	preload(3);
	uint64_t now = 0;
	for (int i = 0; i < 2 * LG_PRELOAD_TRIES && !w.preloaded; i++) {
		pass(now, false);
		now += 2000000;
		lg_conn_udp_expire(&c, now);
	}
	EXPECT_EQ(w.preloaded, 1);
	EXPECT_EQ(w.pre_failed, 1u);
	EXPECT_EQ(w.pre_resent, (uint64_t)LG_PRELOAD_TRIES - 1);
	EXPECT_EQ(c.outstanding, 0u);
}

// c prepares a request whose send fails (not committed) while c2 sends
// all it can; then c sends the rest. Six keys (preload or trace), each
// sent exactly once between them.
static void
expect_each_sent_once(struct lg_conn *c, struct lg_conn *c2)
{
	std::vector<uint64_t> sent;
	struct lg_req *r = lg_conn_next(c, 0);

	ASSERT_NE(r, nullptr);
	EXPECT_EQ(r->keys[0], 0u);
	while ((r = lg_conn_next(c2, 0)) != nullptr) {
		sent.push_back(r->keys[0]);
		lg_conn_commit(c2, 0);
	}
	while ((r = lg_conn_next(c, 1)) != nullptr) {
		sent.push_back(r->keys[0]);
		lg_conn_commit(c, 1);
	}
	std::sort(sent.begin(), sent.end());
	EXPECT_EQ(sent, (std::vector<uint64_t>{ 0, 1, 2, 3, 4, 5 }));
}

// A request prepared but not sent (lib/net: ARP pending or no TX slot;
// TCP: no send space) stays prepared while the worker's other flows send.
// Its preload key must not be one they sent meanwhile: every flow of a
// run over memif had prepared key 0 while ARP resolved, so the first set
// went out once per flow and as many keys were never stored.
TEST_F(LoadgenUdpPreload, SetPreparedButNotSentTakesAKeyNoOtherFlowSent)
{
	preload(6);
	struct lg_conn c2;
	ASSERT_EQ(lg_conn_init(&c2, &w, 1), 0);
	expect_each_sent_once(&c, &c2);
	lg_conn_free(&c2);
}

// The same for a trace request: each is replayed once, by one connection.
TEST_F(LoadgenSession, TraceRequestPreparedButNotSentIsNotSentTwice)
{
	std::string csv;
	struct lg_trace t;
	char err[256];

	for (int i = 0; i < 6; i++)
		csv += "0,k" + std::to_string(i) + ",10,set,0\n";
	ASSERT_EQ(lg_trace_parse(&t, csv.data(), csv.size(), err, sizeof(err)), 0) << err;
	start(0, 4);
	run.wl.trace = &t;
	struct lg_conn c2;
	ASSERT_EQ(lg_conn_init(&c2, &w, 1), 0);
	expect_each_sent_once(&c, &c2);
	lg_conn_free(&c2);
	lg_trace_free(&t);
}

TEST(LoadgenUdpFlows, ManySourcePortsAndIdsNameTheirFlow)
{
	const unsigned ns[] = { 1, 3, 8, 16, 100, 256, 2048 };

	for (unsigned n : ns) {
		std::vector<int> seen(8 * 65536, -1);
		unsigned ports_used = 0;
		for (unsigned i = 0; i < n; i++) {
			struct lg_udp_flow f;

			lg_udp_flow(i, n, 8, &f);
			ASSERT_LT(f.port_idx, 8u);
			// A flow has 16-bit ids when it has its port to itself,
			// never fewer than 8 bits (depth <= 128 stays distinct).
			if (n <= 8) {
				EXPECT_EQ(f.id_mask, 0xffff);
			}
			EXPECT_GE(f.id_mask, 0xff);
			EXPECT_EQ(f.id_base & f.id_mask, 0);
			for (unsigned x : { 0u, 1u, (unsigned)f.id_mask }) {
				uint16_t id = (uint16_t)(f.id_base | x);
				EXPECT_EQ(lg_udp_flow_of(f.port_idx, id, n, 8), (int)i);
				int &s = seen[f.port_idx * 65536 + id];
				EXPECT_EQ(s, -1);
				s = (int)i;
			}
			if (i < 8)
				ports_used |= 1u << f.port_idx;
		}
		// Every port is used as soon as there are as many flows.
		EXPECT_EQ(__builtin_popcount(ports_used), (int)(n < 8 ? n : 8)) << n;
	}
	// An id no flow has is nobody's.
	EXPECT_EQ(lg_udp_flow_of(5, 0x8000, 12, 8), -1);
	EXPECT_EQ(lg_udp_flow_of(5, 0, 4, 8), -1);
}

} // namespace
