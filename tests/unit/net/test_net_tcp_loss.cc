// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: TCP: loss, reordering, flow control. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <rte_ip.h>
#include <rte_udp.h>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, RetransmitsWithExponentialBackoffThenTimesOut)
{
	cfg.max_retries = 3;
	ASSERT_NO_FATAL_FAILURE(make_open());
	ASSERT_EQ(net_tcp_send(c, "response", 8), 8u);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	uint32_t seq = out[0].seq;
	// RTT measured on the handshake is 0: RTO = the 200 ms minimum.
	EXPECT_TRUE(advance(150000).empty());
	out = advance(60000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].seq, seq);
	EXPECT_EQ(out[0].payload, "response");
	EXPECT_EQ(ctr(NET_C_tcp_retransmits), 1u);
	// Backoff: the next one waits twice as long (400 ms).
	EXPECT_TRUE(advance(350000).empty());
	out = advance(60000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].seq, seq);
	// ... then 800 ms.
	EXPECT_TRUE(advance(750000).empty());
	out = advance(60000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_rto_expired), 3u);
	// The fourth expiry exceeds max_retries: RST, closed(TIMEOUT).
	out = advance(1700000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_TIMEOUT);
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, AckStopsRetransmissionAndSamplesRtt)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_send(c, "abc", 3);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	now += 5000;
	p.rcv_nxt = out[0].seq + 3;
	EXPECT_TRUE(send_frame(seg(p, ACK)).empty());
	EXPECT_EQ(net_tcp_send_queued(c), 0u);
	EXPECT_TRUE(advance(5000000).empty()); // nothing left to retransmit
	EXPECT_EQ(ctr(NET_C_tcp_retransmits), 0u);
}

TEST_F(Net, FastRetransmitOnThreeDupAcks)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	std::string data(1460 * 6, 'd');
	for (size_t i = 0; i < data.size(); i++)
		data[i] = char('a' + i % 26);
	net_tcp_send(c, data.data(), data.size());
	auto out = step();
	ASSERT_EQ(out.size(), 6u); // initial window: 10 segments
	uint32_t first = out[0].seq;
	// Segment 0 is lost; the peer ACKs first for each later arrival.
	p.rcv_nxt = first;
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(send_frame(seg(p, ACK)).empty());
	}
	out = send_frame(seg(p, ACK));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].seq, first);
	EXPECT_EQ(out[0].payload, data.substr(0, 1460));
	EXPECT_EQ(ctr(NET_C_tcp_fast_retransmits), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_dup_acks), 3u);
	// A partial ACK (NewReno): segment 2 was lost as well.
	p.rcv_nxt = first + 2 * 1460;
	out = send_frame(seg(p, ACK));
	ASSERT_GE(out.size(), 1u);
	EXPECT_EQ(out[0].seq, first + 2 * 1460);
	// Full ACK ends recovery.
	p.rcv_nxt = first + data.size();
	send_frame(seg(p, ACK));
	EXPECT_EQ(net_tcp_send_queued(c), 0u);
}

TEST_F(Net, OutOfOrderSegmentsAreReassembled)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	uint32_t base = p.snd_nxt;
	std::string a(500, 'A'), b(500, 'B'), d(500, 'D');
	// B and D arrive before A (and D before B).
	auto out = send_frame(seg_at(p, base + 1000, ACK, d));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, base); // duplicate ACK at once
	out = send_frame(seg_at(p, base + 500, ACK, b));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, base);
	EXPECT_EQ(app.rx[c], "");
	EXPECT_EQ(ctr(NET_C_tcp_ooo_segs), 2u);
	// A duplicate of B changes nothing.
	send_frame(seg_at(p, base + 500, ACK, b));
	out = send_frame(seg_at(p, base, ACK, a));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, base + 1500); // gap filled: ACK at once
	EXPECT_EQ(app.rx[c], a + b + d);
}

TEST_F(Net, OutOfOrderQueueIsBounded)
{
	cfg.ooo_max = 2;
	ASSERT_NO_FATAL_FAILURE(make_open());
	uint32_t base = p.snd_nxt;
	send_frame(seg_at(p, base + 100, ACK, std::string(10, '1')));
	send_frame(seg_at(p, base + 200, ACK, std::string(10, '2')));
	send_frame(seg_at(p, base + 300, ACK, std::string(10, '3'))); // no room
	EXPECT_EQ(ctr(NET_C_tcp_ooo_drop), 1u);
	// Adjacent to a held range: merges, needs no new slot.
	send_frame(seg_at(p, base + 110, ACK, std::string(10, '4')));
	EXPECT_EQ(ctr(NET_C_tcp_ooo_drop), 1u);
	send_frame(seg_at(p, base, ACK, std::string(100, '0')));
	EXPECT_EQ(app.rx[c], std::string(100, '0') + std::string(10, '1') + std::string(10, '4'));
}

TEST_F(Net, PeerWindowFullStopsSendingAndProbes)
{
	make();
	p.win = 1000;
	c = open(p, -1); // no window scaling: p.win is bytes
	ASSERT_NE(c, nullptr);
	std::string data(5000, 'w');
	EXPECT_EQ(net_tcp_send(c, data.data(), data.size()), 5000u);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload.size(), 1000u); // the peer's window, not more
	uint32_t seq = out[0].seq;
	// ACK with a zero window: nothing more goes out.
	p.rcv_nxt = seq + 1000;
	p.win = 0;
	EXPECT_TRUE(send_frame(seg(p, ACK)).empty());
	EXPECT_TRUE(advance(100000).empty());
	// Persist: a probe below the window (seq = snd_una - 1, no data).
	out = advance(200000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].seq, seq + 1000 - 1);
	EXPECT_TRUE(out[0].payload.empty());
	EXPECT_EQ(ctr(NET_C_tcp_zero_window_probes), 1u);
	// Backoff: the next probe comes later.
	EXPECT_TRUE(advance(300000).empty());
	out = advance(200000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_zero_window_probes), 2u);
	// The window opens (answer to the probe): sending resumes, in full
	// segments only (sender SWS avoidance holds back the 40-byte runt).
	p.win = 2960;
	out = send_frame(seg(p, ACK));
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0].seq, seq + 1000);
	EXPECT_EQ(out[0].payload.size() + out[1].payload.size(), 2920u);
	EXPECT_EQ(ctr(NET_C_tcp_retransmits), 0u);
}

TEST_F(Net, WindowClosingWithDataInFlightTurnsIntoProbes)
{
	cfg.max_retries = 2;
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	std::string data(3000, 'q');
	net_tcp_send(c, data.data(), data.size());
	auto out = step();
	ASSERT_EQ(out.size(), 3u);
	uint32_t first = out[0].seq;
	// The peer takes nothing and closes its window (an old ACK, new window).
	p.win = 0;
	EXPECT_TRUE(send_frame(seg(p, ACK)).empty());
	// The RTO finds a closed window: no retransmission, probes instead,
	// and probes that are answered never time the connection out.
	EXPECT_TRUE(advance(1000000).empty());
	EXPECT_EQ(ctr(NET_C_tcp_rto_expired), 1u);
	for (int i = 0; i < 10; i++) {
		out = advance(70000000);
		ASSERT_EQ(out.size(), 1u) << i;
		EXPECT_TRUE(out[0].payload.empty());
		send_frame(seg(p, ACK)); // the answer: still zero
	}
	EXPECT_FALSE(app.was_closed(c));
	EXPECT_GE(ctr(NET_C_tcp_zero_window_probes), 9u);
	// The window opens: everything is sent again from the first byte.
	p.win = 5000;
	out = send_frame(seg(p, ACK));
	ASSERT_FALSE(out.empty());
	EXPECT_EQ(out[0].seq, first);
	size_t bytes = 0;
	for (auto &k : out)
		bytes += k.payload.size();
	EXPECT_GE(bytes, 1460u);
	// A peer that stops answering probes is given up on.
	for (int i = 0; i < 10 && !app.was_closed(c); i++)
		advance(70000000);
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_TIMEOUT);
}

TEST_F(Net, ZeroWindowProbeCarryingDataIsAcked)
{
	cfg.rcvbuf = 4096;
	make();
	app.on_recv = [&](net_conn *, const uint8_t *, size_t) -> size_t { return 0; };
	ASSERT_NE(open(p), nullptr);
	std::string chunk(1024, 'x');
	for (int i = 0; i < 4; i++)
		send_frame(seg(p, ACK, chunk));
	auto out = advance(10000);
	ASSERT_FALSE(out.empty());
	EXPECT_EQ(out.back().win, 0);
	// BSD, macOS and Windows probe a zero window with one byte of data:
	// the answer repeats the window (still 0) and what was received.
	out = send_frame(seg(p, ACK, "p"));
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_TRUE(out[0].payload.empty());
	EXPECT_EQ(out[0].ack, p.snd_nxt - 1);
	EXPECT_EQ(out[0].win, 0);
}

// A closed connection whose peer holds its window shut while answering the
// zero-window probes: reset after orphan_timeout_us, not kept for ever.
TEST_F(Net, OrphanHeldByAZeroWindowIsResetInTime)
{
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	std::string data(3000, 'o');
	net_tcp_send(c, data.data(), data.size());
	step();
	p.win = 0;
	send_frame(seg(p, ACK));
	net_tcp_close(c);
	step();
	bool reset = false;
	for (int i = 0; i < 30 && !reset; i++) {
		for (auto &k : advance(5000000)) {
			if (k.has(RST))
				reset = true;
		}
		if (!reset)
			send_frame(seg(p, ACK)); // answers the probes: window still 0
		EXPECT_TRUE(reset || now < 5000000000ull + 61000000ull) << i;
	}
	EXPECT_TRUE(reset) << dump();
	EXPECT_EQ(ctr(NET_C_tcp_orphan_timeouts), 1u);
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_TIMEOUT);
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, ClosingBeyondMaxOrphansResets)
{
	cfg.max_orphans = 1;
	make();
	Peer a, b;
	b.port = a.port + 1;
	net_conn *ca = open(a, -1), *cb = open(b, -1);
	ASSERT_NE(ca, nullptr);
	ASSERT_NE(cb, nullptr);
	// The first close is graceful (FIN), the second would be a second
	// orphan: it is reset.
	net_tcp_close(ca);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(FIN));
	net_tcp_close(cb);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(ctr(NET_C_tcp_orphan_overflow), 1u);
	// Once the first is done closing, a close is graceful again.
	a.rcv_nxt++;
	send_frame(seg(a, ACK | FIN));
	EXPECT_TRUE(app.was_closed(ca));
	Peer d;
	d.port = a.port + 2;
	net_conn *cd = open(d, -1);
	ASSERT_NE(cd, nullptr);
	net_tcp_close(cd);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(FIN));
}

TEST_F(Net, AbortInsideAcceptedReportsClosed)
{
	make();
	struct Ops {
		static int accepted(void *a, net_conn *c)
		{
			static_cast<App *>(a)->accepted.push_back(c);
			net_tcp_abort(c);
			return 0;
		}
	};
	net_app_ops ops = App::ops;
	ops.accepted = Ops::accepted;
	cfg.ops = &ops;
	net_stack_destroy(s);
	s = nullptr;
	make();
	p.snd_nxt = p.iss;
	auto out = send_frame(seg(p, SYN, "", opt_mss(1460)));
	p.rcv_nxt = out[0].seq + 1;
	out = send_frame(seg(p, ACK | PSH, "data"));
	ASSERT_EQ(app.accepted.size(), 1u);
	net_close_reason why;
	ASSERT_TRUE(app.was_closed(app.accepted[0], &why));
	EXPECT_EQ(why, NET_CLOSE_ABORTED);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, SendBufferBackpressureAndRedelivery)
{
	cfg.sndbuf = 4096;
	make();
	// The app answers each "x" with 3000 bytes; it stops consuming when
	// the answer does not fit.
	std::string answer(3000, 'r');
	app.on_recv = [&](net_conn *c, const uint8_t *d, size_t n) -> size_t {
		size_t used = 0;
		while (used < n && d[used] == 'x') {
			if (net_tcp_send_space(c) < answer.size())
				break;
			net_tcp_send(c, answer.data(), answer.size());
			used++;
		}
		return used;
	};
	c = open(p);
	ASSERT_NE(c, nullptr);
	auto out = send_frame(seg(p, ACK | PSH, "xxx"));
	EXPECT_EQ(tcp_to(out, p).size(), 3u); // 3000 bytes in 1460-byte segments
	EXPECT_EQ(app.writable.size(), 0u);
	unsigned calls = app.recv_calls;
	// ACK everything: half the buffer frees, the app is offered "xx" again.
	p.rcv_nxt = out.back().seq + out.back().payload.size();
	out = send_frame(seg(p, ACK));
	EXPECT_EQ(app.recv_calls, calls + 1);
	EXPECT_EQ(app.writable.size(), 1u);
	EXPECT_EQ(tcp_to(out, p).size(), 3u);
	// A send beyond the space is cut short.
	EXPECT_LT(net_tcp_send(c, std::string(8000, 'y').data(), 8000), 8000u);
}

// Composing in place: the window is the free space after the queued
// bytes up to the ring's end; committed bytes leave in order, through a
// wrap of the ring, and a commit that is not at the queued bytes' end, or
// larger than the space, takes nothing.
TEST_F(Net, BytesComposedInTheSendWindowLeaveInOrder)
{
	cfg.sndbuf = 4096;
	ASSERT_NO_FATAL_FAILURE(make_open());
	auto compose = [&](char ch, size_t n) {
		size_t room;
		char *w = (char *)net_tcp_send_window(c, &room);
		EXPECT_NE(w, nullptr);
		EXPECT_GE(room, n);
		memset(w, ch, n);
		EXPECT_EQ(net_tcp_send_commit(c, w + 1, n), 0u) << "not where the bytes end";
		EXPECT_EQ(net_tcp_send_commit(c, w, room + 1), 0u) << "beyond the window";
		EXPECT_EQ(net_tcp_send_commit(c, w, n), n);
	};
	size_t room;
	ASSERT_NE(net_tcp_send_window(c, &room), nullptr);
	EXPECT_EQ(room, 4096u) << "an empty ring starts at its beginning";

	compose('a', 3000);
	std::string got;
	for (auto &k : tcp_to(step(), p))
		got += k.payload;
	EXPECT_EQ(got, std::string(3000, 'a'));
	// 1460 acknowledged: 1096 bytes to the ring's end, then 1460 after
	// the wrap (where the acknowledged bytes were)
	p.rcv_nxt += 1460;
	send_frame(seg(p, ACK));
	ASSERT_NE(net_tcp_send_window(c, &room), nullptr);
	EXPECT_EQ(room, 1096u);
	compose('b', 1096);
	ASSERT_NE(net_tcp_send_window(c, &room), nullptr);
	EXPECT_EQ(room, 1460u);
	compose('c', 1460);
	EXPECT_EQ(net_tcp_send_window(c, &room), nullptr) << "the ring is full";
	EXPECT_EQ(room, 0u);
	got.clear();
	for (auto &k : tcp_to(step(), p))
		got += k.payload;
	// the peer's window may hold some back; what went out is in order
	EXPECT_EQ(got, std::string(1096, 'b') + std::string(got.size() - 1096, 'c'));
	EXPECT_EQ(net_tcp_send_queued(c), 4096u);

	// a closed connection can compose no more
	net_tcp_close(c);
	EXPECT_EQ(net_tcp_send_window(c, &room), nullptr);
	EXPECT_EQ(net_tcp_send_commit(c, nullptr, 1), 0u);
}

TEST_F(Net, RtoFollowsMeasuredRtt)
{
	cfg.rto_min_us = 10000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	// The handshake measured ~0 (SRTT 1 us, RTTVAR 0). A 50 ms sample:
	// RTTVAR = |1 - 50000| / 4 = 12499, SRTT = 1 + 50000 / 8 = 6251,
	// RTO = SRTT + 4 * RTTVAR = 56247 us.
	net_tcp_send(c, "a", 1);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	now += 50000;
	p.rcv_nxt = out[0].seq + 1;
	send_frame(seg(p, ACK));
	net_tcp_send(c, "b", 1);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(advance(54000).empty());
	out = advance(4000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload, "b");
	// Karn: the ACK of the retransmitted segment gives no sample (one
	// would have been 57 ms and raised the RTO to ~101 ms); the new ACK
	// resets the backoff.
	p.rcv_nxt = out[0].seq + 1;
	now += 1000;
	send_frame(seg(p, ACK));
	net_tcp_send(c, "c", 1);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(advance(54000).empty());
	EXPECT_EQ(advance(4000).size(), 1u);
}

TEST_F(Net, FinBeyondAGapWaitsForTheGap)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	uint32_t base = p.snd_nxt;
	auto out = send_frame(seg_at(p, base + 5, ACK | FIN, "world"));
	EXPECT_TRUE(app.peer_closed.empty());
	EXPECT_STREQ(net_conn_state_name(c), "ESTABLISHED");
	out = send_frame(seg_at(p, base, ACK, "hello"));
	EXPECT_EQ(app.rx[c], "helloworld");
	ASSERT_EQ(app.peer_closed.size(), 1u);
	EXPECT_STREQ(net_conn_state_name(c), "CLOSE_WAIT");
	ASSERT_FALSE(out.empty());
	EXPECT_EQ(out.back().ack, base + 11); // data and FIN
}

TEST_F(Net, TimeWaitSlotIsReusedByANewSynOrWhenFull)
{
	cfg.max_conns = 2;
	cfg.time_wait_us = 60000000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	ASSERT_NO_FATAL_FAILURE(to_time_wait(p, c));
	// Same 4-tuple, higher sequence number: a new connection.
	p.iss = p.snd_nxt + 100000;
	ASSERT_NE(open(p), nullptr);
	EXPECT_EQ(ctr(NET_C_tcp_time_wait_reused), 1u);
	EXPECT_EQ(app.accepted.size(), 2u);
	// Fill the table: the second slot goes to TIME_WAIT, the first stays open.
	Peer q;
	q.port = 40001;
	net_conn *d = open(q);
	ASSERT_NE(d, nullptr);
	ASSERT_NO_FATAL_FAILURE(to_time_wait(q, d));
	EXPECT_EQ(net_stack_conns_in_use(s), 2u);
	// A third peer gets the TIME_WAIT slot.
	Peer r;
	r.port = 40002;
	ASSERT_NE(open(r), nullptr);
	EXPECT_EQ(ctr(NET_C_tcp_time_wait_reused), 2u);
	EXPECT_EQ(net_stack_conns_in_use(s), 2u);
	// A fourth, with nothing to recycle: a SYN cookie instead of a slot.
	Peer t;
	t.port = 40003;
	t.snd_nxt = t.iss;
	auto out = send_frame(seg(t, SYN, "", opt_mss(1460)));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(SYN | ACK));
	EXPECT_EQ(ctr(NET_C_tcp_syncookies_sent), 1u);
}

TEST_F(Net, FullTxArrayDefersOutputAndCountsDrops)
{
	cfg.tx_ring_size = 4;
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	std::string data(1460 * 8, 'T');
	net_tcp_send(c, data.data(), data.size());
	auto out = step();
	EXPECT_EQ(out.size(), 4u); // the array's size per poll
	out = step();
	EXPECT_EQ(out.size(), 4u); // the rest at the next poll
	EXPECT_TRUE(step().empty());
	// Pings beyond the array are dropped and counted.
	for (int i = 0; i < 6; i++)
		inject(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, uint16_t(i), "x"));
	EXPECT_EQ(drain().size(), 4u);
	EXPECT_EQ(ctr(NET_C_tx_queue_full), 2u);
	// The NIC taking only some: the rest is kept for the next burst.
	inject(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, 9, "x"));
	inject(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, 10, "x"));
	rte_mbuf **tx;
	uint16_t n = net_stack_tx_burst_prepare(s, &tx);
	ASSERT_EQ(n, 2u);
	EXPECT_EQ(parse(tx[0]).icmp_seq, 9u);
	rte_pktmbuf_free(tx[0]);
	net_stack_tx_burst_done(s, 1);
	EXPECT_EQ(ctr(NET_C_tx_nic_deferred), 1u);
	out = drain();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].icmp_seq, 10u);
}

// A NIC whose queue has room for only part of a burst: the rest stays
// queued in the stack, in order, and goes out at the next polls; TCP never
// has to wait for a retransmission timeout. The queue (tx_ring_size) is
// the bound: TCP builds no more than fits, only stateless replies beyond
// it are dropped.
TEST_F(Net, BurstLargerThanTheNicTakesIsDeliveredInOrderOverPolls)
{
	cfg.tx_ring_size = 6;
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	std::string data;
	for (size_t i = 0; i < 1460 * 9; i++)
		data += char('a' + i % 26);
	ASSERT_EQ(net_tcp_send(c, data.data(), data.size()), data.size());
	uint64_t sent_before = ctr(NET_C_tx_packets); // the SYN-ACK
	net_stack_poll(s);
	std::string got;
	uint32_t next = p.rcv_nxt;
	uint64_t partial_bursts = 0;
	for (int poll = 0; poll < 20 && got.size() < data.size(); poll++) {
		rte_mbuf **tx;
		uint16_t n = net_stack_tx_burst_prepare(s, &tx);
		EXPECT_LE(n, 6u) << "more packets than the queue holds";
		uint16_t take = std::min<uint16_t>(n, 2); // what the NIC has room for
		for (uint16_t i = 0; i < take; i++) {
			Pkt k = parse(tx[i]);
			rte_pktmbuf_free(tx[i]);
			ASSERT_TRUE(k.is_tcp());
			EXPECT_EQ(k.seq, next) << "out of order at poll " << poll;
			next = k.seq + uint32_t(k.payload.size());
			got += k.payload;
		}
		net_stack_tx_burst_done(s, take);
		partial_bursts += take < n;
		now += 10; // far below any RTO
		net_stack_poll(s);
	}
	EXPECT_EQ(got.size(), data.size());
	EXPECT_TRUE(got == data);
	EXPECT_EQ(ctr(NET_C_tcp_retransmits), 0u) << dump();
	EXPECT_EQ(ctr(NET_C_tx_queue_full), 0u) << dump();
	// once for every burst the NIC took only part of
	EXPECT_GT(partial_bursts, 0u);
	EXPECT_EQ(ctr(NET_C_tx_nic_deferred), partial_bursts);
	EXPECT_EQ(ctr(NET_C_tx_packets) - sent_before, 9u);
	EXPECT_EQ(net_tcp_send_queued(c), data.size()); // all sent, none acknowledged yet

	// A full queue the NIC does not drain: pings beyond it are dropped
	// (the bound), what was queued first still leaves first.
	for (int i = 0; i < 8; i++)
		inject(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, uint16_t(i), "x"));
	rte_mbuf **tx;
	EXPECT_LE(net_stack_tx_burst_prepare(s, &tx), 6u);
	net_stack_tx_burst_done(s, 0);
	EXPECT_EQ(ctr(NET_C_tx_queue_full), 2u);
	auto out = drain();
	ASSERT_EQ(out.size(), 6u);
	for (int i = 0; i < 6; i++)
		EXPECT_EQ(out[i].icmp_seq, uint16_t(i));
}

TEST_F(Net, EmptyMempoolIsCountedAndRecovered)
{
	rte_mempool *tiny = rte_pktmbuf_pool_create("net_tiny", 7, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
						     SOCKET_ID_ANY);
	ASSERT_NE(tiny, nullptr);
	cfg.tx_pool = tiny;
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	std::string data(1460 * 10, 'M');
	net_tcp_send(c, data.data(), data.size());
	// Hold on to what the stack built, as a slow NIC would.
	rte_mbuf **tx;
	net_stack_poll(s);
	uint16_t n = net_stack_tx_burst_prepare(s, &tx);
	std::vector<rte_mbuf *> held(tx, tx + n);
	net_stack_tx_burst_done(s, n);
	EXPECT_EQ(n, 7u) << "every mbuf of the pool carries a segment";
	EXPECT_GT(ctr(NET_C_mempool_empty), 0u);
	for (auto *m : held)
		rte_pktmbuf_free(m);
	// With mbufs back, the rest goes out (what was held counts as sent).
	size_t bytes = 0;
	for (int i = 0; i < 10; i++)
		for (auto &k : step())
			bytes += k.payload.size();
	EXPECT_EQ(bytes + n * 1460u, data.size());
	net_stack_destroy(s);
	s = nullptr;
	EXPECT_EQ(rte_mempool_in_use_count(tiny), 0u);
	rte_mempool_free(tiny);
}

TEST_F(Net, UdpChecksumOffload)
{
	cfg.tx_cksum_offload = true;
	make();
	send_frame(udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "q"));
	ASSERT_EQ(app.udp.size(), 1u);
	ASSERT_EQ(net_udp_send(s, &app.udp[0].peer, "answer", 6), 0);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_UDP_CKSUM);
	auto *ip = reinterpret_cast<const rte_ipv4_hdr *>(out[0].raw.data() + 14);
	auto *uh = reinterpret_cast<const rte_udp_hdr *>(out[0].raw.data() + 34);
	EXPECT_EQ(uh->dgram_cksum, rte_ipv4_phdr_cksum(ip, 0));
}

} // namespace
