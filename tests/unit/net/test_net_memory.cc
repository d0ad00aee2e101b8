// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: memory. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <rte_malloc.h>

#include "net_harness.h"

extern "C" {
#include "net/net_tcp.h" /* internals, tested directly */
}

using namespace nettest;

// What a request and its response touch lies in a connection's first
// three cache lines; the cold rest (handshake, close, RTT estimation,
// recovery, the out-of-order table's address) follows.
static_assert(alignof(net_conn) == 64, "slots start on a cache line");
static_assert(offsetof(net_conn, rcv_adv) + sizeof(uint32_t) <= 64,
	      "line 0: the sequence space and the windows");
static_assert(offsetof(net_conn, stack) == 64 && offsetof(net_conn, retries) < 128,
	      "line 1: buffers, the application, the output list, the peer's MAC");
static_assert(offsetof(net_conn, timer) == 128 &&
		      offsetof(net_conn, deadline) + (TD_PERSIST + 1) * sizeof(uint64_t) <= 192,
	      "line 2: the timer and every deadline but TD_LINGER");
static_assert(offsetof(net_conn, iss) >= 192 && offsetof(net_conn, rtt_start) >= 192 &&
		      offsetof(net_conn, ooo) >= 192,
	      "the cold part comes after the hot lines");
static_assert(sizeof(net_conn) <= 5 * 64, "a slot is at most five cache lines");

namespace {

// Bytes allocated from the DPDK heaps, all sockets.
size_t heap_used()
{
	size_t sum = 0;
	for (unsigned i = 0; i < rte_socket_count(); i++) {
		rte_malloc_socket_stats st;
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			sum += st.heap_allocsz_bytes;
	}
	return sum;
}

} // namespace

// A slot costs net_conn_slot_bytes() (docs/net.md gives the figure): two
// stacks N slots apart differ by at most N times that.
TEST_F(Net, SlotCostsWhatIsDocumented)
{
	const uint32_t n = 4096;
	char err[256] = "";
	size_t before = heap_used();
	cfg.max_conns = n;
	net_stack *small = net_stack_create(&cfg, err, sizeof(err));
	ASSERT_NE(small, nullptr) << err;
	size_t mid = heap_used();
	cfg.max_conns = 2 * n;
	net_stack *big = net_stack_create(&cfg, err, sizeof(err));
	ASSERT_NE(big, nullptr) << err;
	size_t after = heap_used();
	double per_slot = double((after - mid) - (mid - before)) / n;
	RecordProperty("bytes_per_slot", std::to_string(per_slot));
	EXPECT_LE(per_slot, double(net_conn_slot_bytes()));
	EXPECT_GE(per_slot, double(sizeof(net_conn)));
	net_stack_memory m;
	net_stack_memory_read(big, &m);
	EXPECT_EQ(m.slots, 2 * n * net_conn_slot_bytes());
	EXPECT_EQ(m.buffers, 0u); // no connection yet: no buffers
	EXPECT_EQ(m.buffers_max, 2 * n * net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf)); // no cap: a pair a slot
	net_stack_destroy(big);
	net_stack_destroy(small);
	EXPECT_EQ(heap_used(), before);
}

// Established connections with nothing to send, acknowledge or read hold
// no buffers; a connection holds a pair while it has bytes, and gives it
// back for the next one to reuse.
TEST_F(Net, IdleConnectionsHoldNoBuffersActiveOnesAPair)
{
	const unsigned k = 32;
	const size_t pair = net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf);
	cfg.max_conns = 64;
	make();
	net_stack_memory m;
	size_t base = heap_used();
	std::vector<Peer> peers(k);
	for (unsigned i = 0; i < k; i++) {
		peers[i].port = uint16_t(41000 + i);
		ASSERT_NE(open(peers[i]), nullptr);
	}
	EXPECT_EQ(heap_used(), base) << "idle connections cost their slots only";
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers, 0u);

	// A request each, answered; the answer not yet acknowledged.
	app.on_recv = [](net_conn *c, const uint8_t *, size_t n) {
		net_tcp_send(c, "VALUE\r\n", 7);
		return n;
	};
	auto requests = [&] {
		for (auto &p : peers) {
			auto out = tcp_to(send_frame(seg(p, ACK | PSH, "get k\r\n")), p);
			ASSERT_EQ(out.size(), 1u);
			EXPECT_EQ(out[0].payload, "VALUE\r\n");
		}
	};
	requests();
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, k);
	EXPECT_EQ(m.buffers, k * pair);
	size_t active = heap_used() - base;
	EXPECT_GE(active, k * pair);
	EXPECT_LE(active, k * (pair + 256)) << "rte_malloc's own overhead, at most";

	// Acknowledged: idle again, the pairs wait in the pool.
	for (auto &p : peers) {
		p.rcv_nxt += 7;
		EXPECT_TRUE(tcp_to(send_frame(seg(p, ACK)), p).empty());
	}
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 0u);
	// The next round reuses them: nothing new is allocated.
	requests();
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, k);
	EXPECT_EQ(heap_used() - base, active);

	// An out-of-order table is taken at the first hole only, and reused.
	EXPECT_EQ(m.ooo, 0u);
	for (int round = 0; round < 2; round++) {
		Peer &p = peers[round];
		p.rcv_nxt += 7;
		send_frame(seg_at(p, p.snd_nxt + 5, ACK, "later"));
		net_stack_memory_read(s, &m);
		EXPECT_EQ(m.ooo, 8 * sizeof(net_ooo_range)); // ooo_max ranges
		send_frame(seg(p, ACK, "hello"));
		p.snd_nxt += 5;
	}
	EXPECT_EQ(ctr(NET_C_tcp_ooo_segs), 2u);
	EXPECT_EQ(ctr(NET_C_tcp_no_buffers), 0u);
}

// Segments of at least tx_zero_copy_min data bytes leave as a header mbuf
// chained to one that points into the send ring. The pair must outlive
// the connection's hold while the driver holds such an mbuf: another
// connection may not get it (and overwrite bytes still to be sent), and it
// returns to the pool when the last mbuf is freed.
TEST_F(Net, LargeSegmentsLeaveWithoutACopyAndKeepTheirPairUntilFreed)
{
	cfg.tx_zero_copy_min = 512;
	make();
	const size_t pair = net_buf_pair_bytes(cfg.sndbuf, cfg.rcvbuf);
	Peer p, q;
	q.port = 40001;
	c = open(p);
	ASSERT_NE(c, nullptr);
	std::string reply(3000, '\0');
	for (size_t i = 0; i < reply.size(); i++)
		reply[i] = char('a' + i % 23);
	ASSERT_EQ(net_tcp_send(c, reply.data(), reply.size()), reply.size());

	std::vector<rte_mbuf *> held = poll_and_hold();
	ASSERT_EQ(held.size(), 3u);
	std::string got;
	for (size_t i = 0; i < held.size(); i++) {
		Pkt k = parse(held[i]);
		EXPECT_TRUE(k.l4_cksum_ok) << i;
		EXPECT_EQ(k.segs, k.payload.size() >= 512 ? 2u : 1u) << i;
		got += k.payload;
	}
	EXPECT_EQ(got, reply);
	EXPECT_EQ(ctr(NET_C_tcp_tx_zero_copy), 2u);

	// Everything acknowledged: c is idle and lets go of its pair, which
	// the held mbufs still point into.
	p.rcv_nxt += uint32_t(reply.size());
	EXPECT_TRUE(tcp_to(send_frame(seg(p, ACK)), p).empty());
	net_stack_memory m;
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 1u) << "the driver's mbufs hold the pair";

	// Another connection with bytes to send gets a pair of its own.
	net_conn *d = open(q);
	ASSERT_NE(d, nullptr);
	std::string other(3000, 'X');
	ASSERT_EQ(net_tcp_send(d, other.data(), other.size()), other.size());
	auto out = tcp_to(step(), q);
	ASSERT_EQ(out.size(), 3u);
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers, 2 * pair);
	EXPECT_EQ(m.buffers_in_use, 2u);
	got.clear();
	for (rte_mbuf *h : held)
		got += parse(h).payload;
	EXPECT_EQ(got, reply) << "bytes still to be sent were overwritten";

	// The driver is done: the pair goes back to the pool, and the next
	// connection to need one reuses it.
	for (rte_mbuf *h : held)
		rte_pktmbuf_free(h);
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 1u);
	q.rcv_nxt += uint32_t(other.size());
	EXPECT_TRUE(tcp_to(send_frame(seg(q, ACK)), q).empty());
	net_stack_memory_read(s, &m);
	EXPECT_EQ(m.buffers_in_use, 0u);
	EXPECT_EQ(m.buffers, 2 * pair);
}

// With TSO (and checksum offload, and segments without a copy) one
// segment carries as many whole MSS of the send ring as the windows allow;
// the NIC cuts it (RTE_MBUF_F_TX_TCP_SEG, tso_segsz). Every byte still goes
// out once, in order.
TEST_F(Net, TsoSegmentsCarrySeveralMssForTheNicToCut)
{
	cfg.tx_cksum_offload = true;
	cfg.tx_zero_copy_min = 1024;
	cfg.tx_tso_max = 65000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	std::string data(40000, '\0');
	for (size_t i = 0; i < data.size(); i++)
		data[i] = char('A' + i % 31);
	ASSERT_EQ(net_tcp_send(c, data.data(), data.size()), data.size());
	std::string got;
	std::vector<size_t> sizes; // payload of every data segment
	size_t tso = 0;
	for (int round = 0; round < 10 && got.size() < data.size(); round++) {
		std::vector<rte_mbuf *> held = poll_and_hold();
		for (rte_mbuf *m : held) {
			Pkt k = parse(m);
			ASSERT_TRUE(k.is_tcp());
			EXPECT_EQ(k.seq, p.srv_iss + 1 + uint32_t(got.size())) << "in order";
			if (k.payload.size() > 1460) {
				EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
				EXPECT_EQ(m->tso_segsz, 1460u);
				if (got.size() + k.payload.size() < data.size()) {
					EXPECT_EQ(k.payload.size() % 1460, 0u) << "whole MSS, but the last";
				}
				EXPECT_EQ(k.segs, 2u);
				tso++;
			} else {
				EXPECT_FALSE(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
			}
			got += k.payload;
			sizes.push_back(k.payload.size());
			rte_pktmbuf_free(m);
		}
		p.rcv_nxt = p.srv_iss + 1 + uint32_t(got.size());
		inject(seg(p, ACK)); // everything so far; what it lets out comes next round
	}
	EXPECT_TRUE(got == data);
	// Each window went out as one segment: the initial window (10 MSS,
	// RFC 6928) first, and no segment of a single MSS at all.
	ASSERT_FALSE(sizes.empty());
	EXPECT_EQ(sizes.front(), 10 * 1460u);
	EXPECT_EQ(tso, sizes.size());
	EXPECT_EQ(ctr(NET_C_tcp_tx_tso), tso);
}

// TSO needs the checksums offloaded: without, segments stay at the MSS.
TEST_F(Net, NoTsoWithoutChecksumOffload)
{
	cfg.tx_zero_copy_min = 1024;
	cfg.tx_tso_max = 65000;
	ASSERT_NO_FATAL_FAILURE(make_open());
	std::string data(10000, 'q');
	ASSERT_EQ(net_tcp_send(c, data.data(), data.size()), data.size());
	for (const Pkt &k : tcp_to(step(), p))
		EXPECT_LE(k.payload.size(), 1460u);
	EXPECT_EQ(ctr(NET_C_tcp_tx_tso), 0u);
}

// A stack destroyed while the driver still holds mbufs pointing into its
// pairs: the last of them frees the pair, and nothing is left behind.
TEST_F(Net, StackDestroyedWhileTheDriverHoldsZeroCopySegments)
{
	size_t before = heap_used();
	cfg.tx_zero_copy_min = 1;
	ASSERT_NO_FATAL_FAILURE(make_open());
	std::string reply(5000, 'z');
	ASSERT_EQ(net_tcp_send(c, reply.data(), reply.size()), reply.size());
	std::vector<rte_mbuf *> held = poll_and_hold();
	ASSERT_EQ(held.size(), 4u);
	net_stack_destroy(s);
	s = nullptr;
	EXPECT_GT(heap_used(), before) << "the pair waits for the driver";
	for (rte_mbuf *h : held)
		rte_pktmbuf_free(h);
	EXPECT_EQ(heap_used(), before);
}
