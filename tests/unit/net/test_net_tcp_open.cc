// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: TCP: handshake, data, ACKs. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <rte_malloc.h>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, HandshakeNegotiatesMssAndWindowScale)
{
	make();
	p.snd_nxt = p.iss;
	Bytes opts = opt_mss(1200);
	Bytes w = opt_ws(5);
	opts.insert(opts.end(), w.begin(), w.end());
	opts.push_back(4); // SACK permitted: ignored
	opts.push_back(2);
	auto out = send_frame(seg(p, SYN, "", opts));
	ASSERT_EQ(out.size(), 1u);
	const Pkt &sa = out[0];
	EXPECT_TRUE(sa.has(SYN | ACK));
	EXPECT_EQ(sa.ack, p.iss + 1);
	EXPECT_EQ(sa.mss, 1460);
	EXPECT_EQ(sa.ws, 1); // a 64 KiB window needs 17 bits
	EXPECT_TRUE(sa.l4_cksum_ok);
	EXPECT_TRUE(sa.ip_cksum_ok);
	EXPECT_EQ(sa.win, 65535);
	EXPECT_TRUE(app.accepted.empty()); // not before the handshake completes
	EXPECT_EQ(net_stack_conns_in_use(s), 1u);
	p.rcv_nxt = sa.seq + 1;
	out = send_frame(seg(p, ACK));
	EXPECT_TRUE(out.empty());
	ASSERT_EQ(app.accepted.size(), 1u);
	EXPECT_STREQ(net_conn_state_name(app.accepted[0]), "ESTABLISHED");
	uint32_t la, ra;
	uint16_t lp, rp;
	net_conn_addrs(app.accepted[0], &la, &lp, &ra, &rp);
	EXPECT_EQ(la, SRV_IP);
	EXPECT_EQ(lp, PORT);
	EXPECT_EQ(ra, CLI_IP);
	EXPECT_EQ(rp, p.port);
	EXPECT_EQ(ctr(NET_C_tcp_passive_opens), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_established), 1u);

	// The peer's MSS (1200) bounds our segments.
	std::string big(3000, 'z');
	EXPECT_EQ(net_tcp_send(app.accepted[0], big.data(), big.size()), big.size());
	out = step();
	ASSERT_EQ(out.size(), 3u);
	EXPECT_EQ(out[0].payload.size(), 1200u);
	EXPECT_EQ(out[1].payload.size(), 1200u);
	EXPECT_EQ(out[2].payload.size(), 600u);
}

TEST_F(Net, WindowScaleOfferedForLargeBuffers)
{
	cfg.rcvbuf = 1024 * 1024;
	make();
	p.snd_nxt = p.iss;
	Bytes opts = opt_mss(1460), w = opt_ws(2);
	opts.insert(opts.end(), w.begin(), w.end());
	auto out = send_frame(seg(p, SYN, "", opts));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ws, 5); // 1 MiB >> 5 fits in 16 bits
	EXPECT_EQ(out[0].win, 65535);
	p.rcv_nxt = out[0].seq + 1;
	send_frame(seg(p, ACK));
	ASSERT_EQ(app.accepted.size(), 1u);
	// The SYN-ACK could only say 65535: the first data consumed makes the
	// real (scaled) window worth announcing at once.
	out = send_frame(seg(p, ACK | PSH, std::string(10, 'a')));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].win, (1024 * 1024) >> 5);
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	// Without the peer's option there is no scaling at all.
	Peer q;
	q.port = 40001;
	q.snd_nxt = q.iss;
	out = send_frame(seg(q, SYN, "", opt_mss(1460)));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ws, -1);
}

TEST_F(Net, RequestAndResponseCarryThePiggybackedAck)
{
	make();
	app.on_recv = [&](net_conn *c, const uint8_t *d, size_t n) {
		app.rx[c].append((const char *)d, n);
		EXPECT_EQ(net_tcp_send(c, "VALUE\r\n", 7), 7u);
		return n;
	};
	c = open(p);
	ASSERT_NE(c, nullptr);
	auto out = send_frame(seg(p, ACK | PSH, "get foo\r\n"));
	EXPECT_EQ(app.rx[c], "get foo\r\n");
	ASSERT_EQ(out.size(), 1u); // one segment: data + ACK, no separate ACK
	EXPECT_EQ(out[0].payload, "VALUE\r\n");
	EXPECT_TRUE(out[0].has(ACK | PSH));
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_EQ(out[0].seq, p.rcv_nxt);
	EXPECT_TRUE(out[0].l4_cksum_ok);
	EXPECT_EQ(ctr(NET_C_tcp_delayed_acks), 0u);
}

// The first phase of a burst: every payload of the burst is shown to the
// application before the first of them is delivered.
TEST_F(Net, RxHintShowsABurstsPayloadsBeforeAnyIsDelivered)
{
	make();
	Peer p1, p2;
	p2.port = 40001;
	net_conn *c1 = open(p1), *c2 = open(p2);
	ASSERT_NE(c1, nullptr);
	ASSERT_NE(c2, nullptr);
	app.hints.clear();
	unsigned calls = app.recv_calls;
	Bytes bad = seg(p2, ACK | PSH, "bad sum");
	bad[14 + 20 + 16] ^= 0xff; // TCP checksum: the hint does not validate, phase two drops it
	p2.snd_nxt -= 7;
	std::vector<Bytes> frames = {
		seg(p1, ACK | PSH, "get a\r\n"),
		bad,
		seg(p2, ACK | PSH, "get bb\r\n"),
		seg(p1, ACK), // no payload: nothing to show
		udp_frame(cmac, smac, CLI_IP, SRV_IP, 5000, PORT, "udp req"),
	};
	rte_mbuf *m[5];
	for (unsigned i = 0; i < 5; i++)
		ASSERT_NE(m[i] = to_mbuf(frames[i]), nullptr);
	net_stack_input(s, m, 5);
	step();
	ASSERT_EQ(app.hints.size(), 4u);
	EXPECT_EQ(app.hints[0].data, "get a\r\n");
	EXPECT_EQ(app.hints[1].data, "bad sum");
	EXPECT_EQ(app.hints[2].data, "get bb\r\n");
	EXPECT_EQ(app.hints[3].data, "udp req");
	EXPECT_TRUE(app.hints[3].udp);
	for (auto &h : app.hints) {
		EXPECT_EQ(h.recv_calls_before, calls);
		EXPECT_EQ(h.udp_before, 0u);
	}
	EXPECT_EQ(app.rx[c1], "get a\r\n");
	EXPECT_EQ(app.rx[c2], "get bb\r\n");
	EXPECT_EQ(app.udp.size(), 1u);
	EXPECT_EQ(ctr(NET_C_drop_tcp_bad_cksum), 1u);
}

// The first phase looks connections up for the whole burst; a frame after
// one that released or created a connection must not use that lookup.
TEST_F(Net, BurstLookupIsNotUsedAfterTheBurstChangedTheConnections)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	// One burst: the peer resets the connection, then opens the same
	// 4-tuple again. The SYN must reach the listener, not the old slot.
	Bytes rst = seg_at(p, p.snd_nxt, RST);
	p.iss = 900000;
	p.snd_nxt = p.iss;
	Bytes syn = seg(p, SYN, "", opt_mss(1460));
	rte_mbuf *m[2] = { to_mbuf(rst), to_mbuf(syn) };
	ASSERT_NE(m[0], nullptr);
	ASSERT_NE(m[1], nullptr);
	net_stack_input(s, m, 2);
	auto out = step();
	ASSERT_TRUE(app.was_closed(c));
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_TRUE(out[0].has(SYN | ACK));
	EXPECT_EQ(out[0].ack, p.iss + 1);
	EXPECT_EQ(net_stack_conns_in_use(s), 1u);
}

// A send that finds no buffer pair (the EAL heap is exhausted) is not
// lost for ever: nothing will be acknowledged to bring `writable`, so the
// stack retries the allocation (once per millisecond) and resumes the
// application when it succeeds.
TEST_F(Net, SendWithoutABufferPairResumesWhenMemoryReturns)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	app.on_writable = [&](net_conn *w) { net_tcp_send(w, "hello", 5); };
	std::vector<void *> hog;
	for (size_t sz = size_t(1) << 24; sz >= 4096; sz /= 2)
		while (hog.size() < 200000) {
			void *v = rte_malloc(nullptr, sz, 0);
			if (v == nullptr)
				break;
			hog.push_back(v);
		}
	uint64_t fails = ctr(NET_C_tcp_no_buffers);
	EXPECT_EQ(net_tcp_send(c, "hello", 5), 0u);
	EXPECT_EQ(ctr(NET_C_tcp_no_buffers), fails + 1);
	auto out = advance(1500); // a retry, still without memory
	EXPECT_TRUE(tcp_to(out, p).empty());
	EXPECT_EQ(app.writable.size(), 1u);
	EXPECT_EQ(ctr(NET_C_tcp_no_buffers), fails + 2);
	out = step(); // not again within the millisecond
	EXPECT_EQ(app.writable.size(), 1u);
	for (void *v : hog)
		rte_free(v);
	out = advance(1500);
	EXPECT_EQ(app.writable.size(), 2u);
	auto seg_out = tcp_to(out, p);
	ASSERT_EQ(seg_out.size(), 1u) << dump();
	EXPECT_EQ(seg_out[0].payload, "hello");
}

// max_buf_pairs caps the pairs held at once below the slot count. At the
// cap a data segment is dropped and acknowledged at once without its bytes
// (the peer sends them again; three such duplicates make it retransmit
// fast), and a send waits for a pair: it resumes when one comes back, not
// on the millisecond retry that serves a failed rte_malloc.
TEST_F(Net, AtMaxBufPairsDataIsRefusedAndSendsWaitForAPair)
{
	cfg.max_buf_pairs = 1;
	make();
	Peer p1, p2, p3;
	p1.port = 41001;
	p2.port = 41002;
	p3.port = 41003;
	net_conn *c1 = open(p1), *c2 = open(p2), *c3 = open(p3);
	ASSERT_TRUE(c1 != nullptr && c2 != nullptr && c3 != nullptr);
	app.on_recv = [](net_conn *c, const uint8_t *, size_t n) {
		net_tcp_send(c, "VALUE\r\n", 7);
		return n;
	};
	// c1's request takes the one pair, its answer holds it until acknowledged.
	ASSERT_EQ(tcp_to(send_frame(seg(p1, ACK | PSH, "get a\r\n")), p1).size(), 1u);
	net_stack_memory m;
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 1u);

	// c2's request finds no pair: dropped, acknowledged without its bytes.
	uint64_t refused = ctr(NET_C_tcp_no_buffers);
	auto out = tcp_to(send_frame(seg(p2, ACK | PSH, "get b\r\n")), p2);
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_EQ(out[0].ack, p2.snd_nxt - 7);
	EXPECT_TRUE(out[0].payload.empty());
	EXPECT_EQ(ctr(NET_C_tcp_no_buffers), refused + 1);
	EXPECT_EQ(app.recv_calls, 1u);
	p2.snd_nxt -= 7; // the peer will send them again

	// c3 sends unasked: it waits, and no retry wakes it while the pair is out.
	app.on_writable = [](net_conn *w) { net_tcp_send(w, "hello", 5); };
	EXPECT_EQ(net_tcp_send(c3, "hello", 5), 0u);
	EXPECT_TRUE(tcp_to(advance(5000), p3).empty());
	EXPECT_TRUE(app.writable.empty());
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers, net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf)) << "one pair made, never more";

	// c1's answer acknowledged: the pair comes back and c3 gets it.
	p1.rcv_nxt += 7;
	out = send_frame(seg(p1, ACK));
	ASSERT_EQ(app.writable.size(), 1u);
	EXPECT_EQ(app.writable[0], c3);
	auto to3 = tcp_to(out, p3);
	ASSERT_EQ(to3.size(), 1u);
	EXPECT_EQ(to3[0].payload, "hello");

	// Acknowledged too: c2's request, sent again, is served.
	p3.rcv_nxt += 5;
	EXPECT_TRUE(tcp_to(send_frame(seg(p3, ACK)), p3).empty());
	out = tcp_to(send_frame(seg(p2, ACK | PSH, "get b\r\n")), p2);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload, "VALUE\r\n");
	EXPECT_EQ(out[0].ack, p2.snd_nxt);
	EXPECT_EQ(app.recv_calls, 2u);
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers, net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf));
}

/* The administration port keeps pairs of its own beyond max_buf_pairs:
 * with the one pair taken on the main port, a request on the reserved
 * port is still served, and the main port's clients still wait. */
TEST_F(Net, ReservedPortHasBufPairsBeyondTheCap)
{
	constexpr uint16_t ADMIN = 11299;
	cfg.max_buf_pairs = 1;
	cfg.tcp_ports[1] = ADMIN;
	cfg.reserved_port = ADMIN;
	cfg.reserved_slots = 4;
	make();
	Peer p1, p2, a1, a2, a3;
	p1.port = 41001;
	p2.port = 41002;
	a1.port = 42001;
	a2.port = 42002;
	a3.port = 42003;
	a1.lport = a2.lport = a3.lport = ADMIN;
	net_conn *c1 = open(p1), *c2 = open(p2);
	net_conn *d1 = open(a1), *d2 = open(a2), *d3 = open(a3);
	ASSERT_TRUE(c1 != nullptr && c2 != nullptr && d1 != nullptr && d2 != nullptr &&
		    d3 != nullptr);
	app.on_recv = [](net_conn *c, const uint8_t *, size_t n) {
		net_tcp_send(c, "STAT x 1\r\nEND\r\n", 15);
		return n;
	};
	ASSERT_EQ(tcp_to(send_frame(seg(p1, ACK | PSH, "get a\r\n")), p1).size(), 1u);

	// The main port is at the cap: c2's request is refused.
	uint64_t refused = ctr(NET_C_tcp_no_buffers);
	auto out = tcp_to(send_frame(seg(p2, ACK | PSH, "get b\r\n")), p2);
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_TRUE(out[0].payload.empty());
	EXPECT_EQ(ctr(NET_C_tcp_no_buffers), refused + 1);
	p2.snd_nxt -= 7;

	// The admin port is served, twice at once (min(reserved_slots, 2)).
	for (Peer *a : {&a1, &a2}) {
		out = tcp_to(send_frame(seg(*a, ACK | PSH, "stats\r\n")), *a);
		ASSERT_EQ(out.size(), 1u) << dump();
		EXPECT_EQ(out[0].payload, "STAT x 1\r\nEND\r\n");
		EXPECT_EQ(out[0].ack, a->snd_nxt);
	}
	net_stack_memory m;
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 3u);
	EXPECT_EQ(m.buffers_max, 3 * net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf));
	// A third admin request waits like any other: the reserve is two.
	out = tcp_to(send_frame(seg(a3, ACK | PSH, "stats\r\n")), a3);
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_TRUE(out[0].payload.empty());
	a3.snd_nxt -= 7;

	// An admin pair given back does not let the main port past its cap.
	a1.rcv_nxt += 15;
	EXPECT_TRUE(tcp_to(send_frame(seg(a1, ACK)), a1).empty());
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 2u);
	out = tcp_to(send_frame(seg(p2, ACK | PSH, "get b\r\n")), p2);
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_TRUE(out[0].payload.empty());
	p2.snd_nxt -= 7;
	// The admin port's may take it.
	out = tcp_to(send_frame(seg(a3, ACK | PSH, "stats\r\n")), a3);
	ASSERT_EQ(out.size(), 1u) << dump();
	EXPECT_EQ(out[0].payload, "STAT x 1\r\nEND\r\n");
}

TEST_F(Net, DelayedAckTimerAndEverySecondFullSegment)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	// One small request, no response: the ACK waits for the timer.
	auto out = send_frame(seg(p, ACK | PSH, "noreply"));
	EXPECT_TRUE(out.empty());
	out = advance(1000);
	EXPECT_TRUE(out.empty());
	out = advance(10000);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_TRUE(out[0].payload.empty());
	EXPECT_EQ(ctr(NET_C_tcp_delayed_acks), 1u);
	// Two full-sized segments: ACKed at once.
	std::string full(1460, 'f');
	out = send_frame(seg(p, ACK, full));
	EXPECT_TRUE(out.empty());
	out = send_frame(seg(p, ACK, full));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, p.snd_nxt);
	EXPECT_EQ(app.rx[c].size(), 7u + 2 * 1460u);
}

TEST_F(Net, PartialRequestStaysBufferedContiguous)
{
	make();
	std::vector<std::string> seen;
	app.on_recv = [&](net_conn *, const uint8_t *d, size_t n) -> size_t {
		std::string v((const char *)d, n);
		seen.push_back(v);
		size_t eol = v.rfind("\r\n");
		return eol == std::string::npos ? 0 : eol + 2; // whole lines only
	};
	ASSERT_NE(open(p), nullptr);
	send_frame(seg(p, ACK | PSH, "get a\r\nget b"));
	send_frame(seg(p, ACK | PSH, "bb\r\nget"));
	send_frame(seg(p, ACK | PSH, " c\r\n"));
	ASSERT_EQ(seen.size(), 3u);
	EXPECT_EQ(seen[0], "get a\r\nget b");
	EXPECT_EQ(seen[1], "get bbb\r\nget");
	EXPECT_EQ(seen[2], "get c\r\n");
}

TEST_F(Net, ReceiveWindowShrinksWhileUnconsumedAndReopens)
{
	cfg.rcvbuf = 4096;
	make();
	bool consume = false;
	app.on_recv = [&](net_conn *, const uint8_t *, size_t n) -> size_t {
		return consume ? n : 0;
	};
	c = open(p);
	ASSERT_NE(c, nullptr);
	std::string chunk(1000, 'x');
	for (int i = 0; i < 4; i++)
		send_frame(seg(p, ACK, chunk));
	auto out = advance(10000);
	ASSERT_FALSE(out.empty());
	EXPECT_EQ(out.back().win, 96); // 4096 - 4000
	// Beyond the window: trimmed to 96 bytes, the rest is the peer's to resend.
	out = send_frame(seg(p, ACK, chunk));
	p.snd_nxt -= 1000 - 96;
	consume = true;
	// The next arrival delivers everything; the reopened window is
	// announced at once, not after the delayed-ACK timer.
	out = send_frame(seg(p, ACK | PSH, "z"));
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ack, p.snd_nxt - 1); // "z" itself fell outside the zero window
	EXPECT_EQ(out[0].win, 4096);
	EXPECT_EQ(app.recv_calls, 6u);
	(void)c;
}

} // namespace
