// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: TCP: closing, resets. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, PeerClosesFirst)
{
	make();
	app.on_peer_closed = [](net_conn *c) { net_tcp_close(c); };
	c = open(p);
	ASSERT_NE(c, nullptr);
	auto out = send_frame(seg(p, ACK | FIN, "bye"));
	EXPECT_EQ(app.rx[c], "bye");
	ASSERT_EQ(app.peer_closed.size(), 1u);
	// ACK of the FIN rides on our FIN (LAST_ACK).
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(FIN | ACK));
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_STREQ(net_conn_state_name(c), "LAST_ACK");
	EXPECT_FALSE(app.was_closed(c));
	p.rcv_nxt = out[0].seq + 1;
	EXPECT_TRUE(send_frame(seg(p, ACK)).empty());
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_NORMAL);
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, ServerClosesFirstThroughTimeWait)
{
	cfg.time_wait_us = 500000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_send(c, "last words", 10);
	net_tcp_close(c);
	EXPECT_EQ(net_tcp_send(c, "more", 4), 0u);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(FIN | ACK));
	EXPECT_EQ(out[0].payload, "last words");
	EXPECT_STREQ(net_conn_state_name(c), "FIN_WAIT_1");
	p.rcv_nxt = out[0].seq + 11;
	send_frame(seg(p, ACK));
	EXPECT_STREQ(net_conn_state_name(c), "FIN_WAIT_2");
	out = send_frame(seg(p, ACK | FIN));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(ACK));
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	ASSERT_TRUE(app.was_closed(c));
	EXPECT_EQ(net_stack_conns_in_use(s), 1u); // TIME_WAIT holds the slot
	// A retransmitted FIN is ACKed again.
	out = send_frame(seg_at(p, p.snd_nxt - 1, ACK | FIN));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	advance(600000);
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
	// Now the 4-tuple is unknown: RST.
	out = send_frame(seg(p, ACK));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
}

TEST_F(Net, SimultaneousCloseGoesThroughClosing)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_close(c);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	uint32_t our_fin = out[0].seq;
	// The peer's FIN crosses ours (does not ACK it).
	out = send_frame(seg(p, ACK | FIN));
	EXPECT_STREQ(net_conn_state_name(c), "CLOSING");
	p.rcv_nxt = our_fin + 1;
	send_frame(seg(p, ACK));
	EXPECT_STREQ(net_conn_state_name(c), "TIME_WAIT");
	EXPECT_TRUE(app.was_closed(c));
}

TEST_F(Net, FinWait2TimesOut)
{
	cfg.fin_wait2_us = 1000000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_close(c);
	auto out = step();
	p.rcv_nxt = out[0].seq + 1;
	send_frame(seg(p, ACK));
	EXPECT_STREQ(net_conn_state_name(c), "FIN_WAIT_2");
	advance(1100000);
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_TIMEOUT);
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

// RST handling in every state a connection can be in.
class NetRst : public Net, public ::testing::WithParamInterface<const char *> {};

TEST_P(NetRst, ValidRstReleasesConnection)
{
	std::string state = GetParam();
	make();
	ASSERT_NO_FATAL_FAILURE(into_state(state));
	uint64_t resets = ctr(NET_C_tcp_resets_rx);
	// Out of window: ignored.
	EXPECT_TRUE(send_frame(seg_at(p, p.snd_nxt + 1000000, RST)).empty());
	EXPECT_EQ(net_stack_conns_in_use(s), 1u);
	// In window but not exactly rcv_nxt: challenge ACK (RFC 5961).
	auto out = send_frame(seg_at(p, p.snd_nxt + 10, RST));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(ACK));
	EXPECT_FALSE(out[0].has(RST));
	EXPECT_EQ(ctr(NET_C_tcp_challenge_acks), 1u);
	EXPECT_EQ(net_stack_conns_in_use(s), 1u);
	// Exactly rcv_nxt: the connection is gone.
	EXPECT_TRUE(send_frame(seg_at(p, p.snd_nxt, RST)).empty());
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
	EXPECT_EQ(ctr(NET_C_tcp_resets_rx), resets + 1);
	if (c != nullptr && state != "CLOSING") {
		EXPECT_EQ(app.close_reason(c), NET_CLOSE_RESET);
	}
	if (state == "SYN_RCVD") {
		EXPECT_TRUE(app.closed.empty()); // the app never saw it
	}
}

INSTANTIATE_TEST_SUITE_P(States, NetRst,
			 ::testing::Values("SYN_RCVD", "ESTABLISHED", "CLOSE_WAIT", "LAST_ACK",
					   "FIN_WAIT_1", "FIN_WAIT_2", "CLOSING"),
			 [](const ::testing::TestParamInfo<const char *> &i) {
				 return std::string(i.param);
			 });

// The peer's FIN in every state: where it leads, and that it is ACKed.
struct FinCase {
	const char *state, *after;
};

class NetFin : public Net, public ::testing::WithParamInterface<FinCase> {};

TEST_P(NetFin, PeerFinIsAckedAndMovesTheState)
{
	std::string state = GetParam().state;
	make();
	ASSERT_NO_FATAL_FAILURE(into_state(state));
	// the peer's FIN was sent already: the one below is a retransmission
	if (state == "CLOSE_WAIT" || state == "LAST_ACK" || state == "CLOSING" || state == "TIME_WAIT")
		p.snd_nxt--;
	auto out = send_frame(seg(p, ACK | FIN));
	bool acked = false;
	for (auto &k : out)
		acked |= k.has(ACK) && k.ack == p.snd_nxt;
	EXPECT_TRUE(acked) << "no ACK of the FIN";
	if (c == nullptr) {
		// The FIN's ACK completed the handshake, then closed the stream.
		ASSERT_EQ(app.accepted.size(), 1u);
		c = app.accepted[0];
		EXPECT_EQ(app.peer_closed.size(), 1u);
	}
	EXPECT_STREQ(net_conn_state_name(c), GetParam().after);
}

INSTANTIATE_TEST_SUITE_P(
	States, NetFin,
	::testing::Values(FinCase{"SYN_RCVD", "CLOSE_WAIT"}, FinCase{"ESTABLISHED", "CLOSE_WAIT"},
			  FinCase{"FIN_WAIT_1", "CLOSING"}, FinCase{"FIN_WAIT_2", "TIME_WAIT"},
			  FinCase{"CLOSE_WAIT", "CLOSE_WAIT"}, FinCase{"LAST_ACK", "LAST_ACK"},
			  FinCase{"CLOSING", "CLOSING"}, FinCase{"TIME_WAIT", "TIME_WAIT"}),
	[](const ::testing::TestParamInfo<FinCase> &i) { return std::string(i.param.state); });

TEST_F(Net, RstInTimeWaitReleases)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	ASSERT_NO_FATAL_FAILURE(to_time_wait(p, c));
	send_frame(seg_at(p, p.snd_nxt, RST));
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, SynInEstablishedGetsChallengeAck)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	auto out = send_frame(seg_at(p, p.snd_nxt + 5, SYN, "", opt_mss(1460)));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(ACK));
	EXPECT_FALSE(out[0].has(SYN));
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_STREQ(net_conn_state_name(c), "ESTABLISHED");
}

TEST_F(Net, BlindAcksOutsideTheWindowAreChallenged)
{
	ASSERT_NO_FATAL_FAILURE(make_open(-1));
	// Data with an ACK far below snd_una (more than the peer's largest
	// window): an ACK in answer, the data dropped (RFC 5961 5.2).
	Bytes f = seg_at(p, p.snd_nxt, ACK | PSH, "inject");
	auto *th = reinterpret_cast<rte_tcp_hdr *>(f.data() + 34);
	th->recv_ack = rte_cpu_to_be_32(p.rcv_nxt - 200000);
	fix_checksums(f);
	auto out = send_frame(f);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_EQ(app.rx[c], "");
	EXPECT_EQ(ctr(NET_C_drop_tcp_bad_ack), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_challenge_acks), 1u);
	// An ACK of data never sent: the same.
	th->recv_ack = rte_cpu_to_be_32(p.rcv_nxt + 5000);
	fix_checksums(f);
	EXPECT_EQ(send_frame(f).size(), 1u);
	EXPECT_EQ(ctr(NET_C_drop_tcp_bad_ack), 2u);
	// A slightly old ACK (within the window) is fine.
	th->recv_ack = rte_cpu_to_be_32(p.rcv_nxt - 100);
	fix_checksums(f);
	send_frame(f);
	EXPECT_EQ(app.rx[c], "inject");
}

TEST_F(Net, AbortSendsRstAndReportsClosed)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_abort(c);
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_ABORTED);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(out[0].seq, p.rcv_nxt);
}

TEST_F(Net, AppAbortInsideRecvIsSafe)
{
	make();
	app.on_recv = [](net_conn *c, const uint8_t *, size_t n) {
		net_tcp_abort(c);
		return n;
	};
	c = open(p);
	ASSERT_NE(c, nullptr);
	auto out = send_frame(seg(p, ACK | PSH | FIN, "boom"));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_TRUE(app.was_closed(c));
	EXPECT_TRUE(app.peer_closed.empty());
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

TEST_F(Net, SegmentToClosedPortGetsRst)
{
	make();
	p.snd_nxt = 777;
	TcpSpec t;
	t.src_mac = cmac;
	t.dst_mac = smac;
	t.src_ip = CLI_IP;
	t.dst_ip = SRV_IP;
	t.sport = 1234;
	t.dport = 80;
	t.seq = 777;
	t.flags = SYN;
	auto out = send_frame(tcp_frame(t));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST | ACK));
	EXPECT_EQ(out[0].ack, 778u);
	EXPECT_EQ(ctr(NET_C_drop_tcp_no_conn), 1u);
	// An RST is never answered.
	t.flags = RST;
	EXPECT_TRUE(send_frame(tcp_frame(t)).empty());
}

TEST_F(Net, IdleConnectionIsClosed)
{
	cfg.idle_timeout_us = 2000000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	advance(1500000);
	send_frame(seg(p, ACK | PSH, "ping"));
	advance(1500000);
	EXPECT_FALSE(app.was_closed(c)); // activity pushed the deadline
	auto out = advance(600000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_IDLE);
}

TEST_F(Net, AppTimerFiresOnceAndCanBePushedBackOrStopped)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	net_tcp_set_timer(c, net_stack_now(s) + 1000000);
	advance(600000);
	net_tcp_set_timer(c, net_stack_now(s) + 1000000); /* pushed back */
	advance(600000);
	EXPECT_TRUE(app.timers.empty());
	advance(500000);
	ASSERT_EQ(app.timers.size(), 1u);
	EXPECT_EQ(app.timers[0], c);
	advance(5000000); /* it fired; it is off now */
	EXPECT_EQ(app.timers.size(), 1u);
	net_tcp_set_timer(c, net_stack_now(s) + 1000000);
	advance(500000);
	net_tcp_set_timer(c, 0); /* stopped */
	advance(5000000);
	EXPECT_EQ(app.timers.size(), 1u);
	/* the application aborts from the callback, as segcached's does */
	app.on_timer = [](net_conn *k) { net_tcp_abort(k); };
	net_tcp_set_timer(c, net_stack_now(s) + 1000000);
	auto out = advance(1100000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_EQ(app.close_reason(c), NET_CLOSE_ABORTED);
	EXPECT_EQ(app.timers.size(), 2u);
}

/* An administration port keeps reserved_slots of the table: clients of
 * the other port, SYN_RCVD ones of a flood included, cannot take them. */
TEST_F(Net, ReservedSlotsAreKeptForTheReservedPort)
{
	constexpr uint16_t ADMIN = 11299;
	cfg.max_conns = 6;
	cfg.tcp_ports[1] = ADMIN;
	cfg.reserved_port = ADMIN;
	cfg.reserved_slots = 2;
	cfg.syn_backlog = 4;
	cfg.full_reply = "ERROR Too many open connections\r\n";
	make();
	std::vector<Peer> peers(4);
	for (unsigned i = 0; i < peers.size(); i++) {
		peers[i].port = uint16_t(33000 + i);
		ASSERT_NE(open(peers[i]), nullptr) << dump();
	}
	/* A fifth client: no slot for it but the reserved ones, so its SYN
	 * is answered with a cookie and its ACK refused statelessly. */
	p.port = 33100;
	p.snd_nxt = 5000;
	auto out = send_frame(seg(p, SYN, "", opt_mss(1460)));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(SYN | ACK));
	EXPECT_EQ(ctr(NET_C_tcp_syncookies_sent), 1u);
	p.rcv_nxt = out[0].seq + 1;
	out = send_frame(seg(p, ACK | PSH, "version\r\n"));
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_EQ(ctr(NET_C_tcp_refused_full), 1u);
	EXPECT_EQ(app.accepted.size(), 4u);
	/* The admin port gets both reserved slots. */
	for (unsigned i = 0; i < 2; i++) {
		TcpSpec t;
		t.src_mac = cmac;
		t.dst_mac = smac;
		t.src_ip = CLI_IP;
		t.dst_ip = SRV_IP;
		t.sport = uint16_t(34000 + i);
		t.dport = ADMIN;
		t.seq = 9000;
		t.flags = SYN;
		t.opts = opt_mss(1460);
		out = send_frame(tcp_frame(t));
		ASSERT_EQ(out.size(), 1u);
		ASSERT_TRUE(out[0].has(SYN | ACK));
		EXPECT_EQ(out[0].sport, ADMIN);
	}
	EXPECT_EQ(net_stack_conns_in_use(s), 6u);
	/* A bad configuration is refused. */
	net_stack_config bad = cfg;
	char err[256];
	bad.reserved_slots = bad.max_conns;
	EXPECT_EQ(net_stack_create(&bad, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("reserved_slots"), std::string::npos) << err;
}

TEST_F(Net, AppRefusesConnection)
{
	make();
	app.accept_rc = -1;
	p.snd_nxt = p.iss;
	auto out = send_frame(seg(p, SYN, "", opt_mss(1460)));
	p.rcv_nxt = out[0].seq + 1;
	out = send_frame(seg(p, ACK));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].has(RST));
	EXPECT_TRUE(app.closed.empty());
	EXPECT_EQ(net_stack_conns_in_use(s), 0u);
}

} // namespace
