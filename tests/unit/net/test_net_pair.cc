// SPDX-License-Identifier: BSD-3-Clause
// Two stack instances wired back to back: one opens actively (as the load
// generator will), the other listens (as the server does). Packets between
// them are dropped, duplicated and reordered at random, and every byte must
// still arrive intact and in order, both ways. One side sends its data
// without copying it (mbufs pointing into its send ring), which the
// reordering wire holds on to for a while.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <string>
#include <vector>

#include "net_harness.h"

using namespace nettest;

namespace {

constexpr uint32_t A_IP = ip4(198, 18, 0, 1);
constexpr uint32_t B_IP = ip4(198, 18, 0, 2);

struct Wire {
	double loss = 0, dup = 0, reorder = 0;
	std::mt19937 rng{2026};
	uint64_t dropped = 0, duplicated = 0, reordered = 0;

	bool chance(double p)
	{
		return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < p;
	}

	// Move what `from` built into `to`, through the faults.
	void carry(net_stack *from, net_stack *to)
	{
		rte_mbuf **tx;
		uint16_t n;
		std::vector<rte_mbuf *> pass;
		std::vector<rte_mbuf *> all;
		while ((n = net_stack_tx_burst_prepare(from, &tx)) > 0) { // a ring: maybe twice
			all.insert(all.end(), tx, tx + n);
			net_stack_tx_burst_done(from, n);
		}
		tx = all.data();
		n = uint16_t(all.size());
		for (uint16_t i = 0; i < n; i++) {
			if (chance(loss)) {
				rte_pktmbuf_free(tx[i]);
				dropped++;
				continue;
			}
			// What a NIC does: TX offload flags do not travel.
			tx[i]->ol_flags = 0;
			if (chance(dup)) {
				rte_mbuf *c = rte_pktmbuf_copy(tx[i], pool(), 0, UINT32_MAX);
				if (c != nullptr) {
					pass.push_back(c);
					duplicated++;
				}
			}
			pass.push_back(tx[i]);
		}
		if (pass.size() > 1 && chance(reorder)) {
			std::shuffle(pass.begin(), pass.end(), rng);
			reordered++;
		}
		if (!pass.empty())
			net_stack_input(to, pass.data(), uint16_t(pass.size()));
	}
};

class NetPair : public ::testing::Test {
protected:
	uint64_t now = 7000000000ull;
	App ca, sa; // client and server applications
	net_stack *a = nullptr, *b = nullptr;
	Wire wire;
	unsigned in_use_before = 0;
	uint32_t b_max_buf_pairs = 0; // the server's buffer budget; 0 = its slots

	static uint64_t clock_fn(void *p) { return *static_cast<uint64_t *>(p); }

	net_stack_config base(const char *name, uint8_t m, uint32_t ip, App *app)
	{
		net_stack_config c{};
		c.name = name;
		c.socket_id = SOCKET_ID_ANY;
		c.mac = mac(m);
		c.ip = ip;
		c.prefix_len = 24;
		c.tx_pool = pool();
		c.max_conns = 8;
		c.sndbuf = 64 * 1024;
		c.rcvbuf = 64 * 1024;
		c.clock = clock_fn;
		c.clock_arg = &now;
		c.ops = &App::ops;
		c.app_arg = app;
		return c;
	}

	void SetUp() override
	{
		in_use_before = rte_mempool_in_use_count(pool());
		char err[256] = "";
		net_stack_config ac = base("a", 1, A_IP, &ca);
		// a sends every data segment without a copy (pointing into its
		// send ring), b copies: both ways are checked byte for byte
		ac.tx_zero_copy_min = 1;
		a = net_stack_create(&ac, err, sizeof(err));
		ASSERT_NE(a, nullptr) << err;
		net_stack_config bc = base("b", 2, B_IP, &sa);
		bc.tcp_ports[0] = PORT;
		bc.max_buf_pairs = b_max_buf_pairs;
		b = net_stack_create(&bc, err, sizeof(err));
		ASSERT_NE(b, nullptr) << err;
	}

	void TearDown() override
	{
		for (net_stack *s : {a, b}) {
			if (s == nullptr)
				continue;
			net_stack_destroy(s); // frees what is still queued
		}
		EXPECT_EQ(rte_mempool_in_use_count(pool()), in_use_before) << "mbufs leaked";
	}

	void pump(uint64_t step_us = 200)
	{
		now += step_us;
		net_stack_poll(a);
		wire.carry(a, b);
		net_stack_poll(b);
		wire.carry(b, a);
	}
};

std::string pattern(size_t n, uint32_t seed)
{
	std::string s(n, '\0');
	std::mt19937 rng(seed);
	for (auto &ch : s)
		ch = char(rng());
	return s;
}

TEST_F(NetPair, ActiveOpenResolvesArpAndExchangesData)
{
	net_conn *c = net_tcp_connect(a, B_IP, PORT, 0, &ca);
	ASSERT_NE(c, nullptr);
	EXPECT_STREQ(net_conn_state_name(c), "SYN_SENT");
	EXPECT_EQ(net_conn_ctx(c), &ca);
	// Data queued before the handshake completes goes out after it.
	EXPECT_EQ(net_tcp_send(c, "early", 5), 5u);
	sa.on_recv = [&](net_conn *sc, const uint8_t *d, size_t n) {
		sa.rx[sc].append((const char *)d, n);
		net_tcp_send(sc, d, n);
		return n;
	};
	for (int i = 0; i < 100 && ca.rx[c].size() < 5; i++)
		pump();
	ASSERT_EQ(ca.connected.size(), 1u);
	EXPECT_EQ(ca.connected[0], c);
	ASSERT_EQ(sa.accepted.size(), 1u);
	EXPECT_EQ(sa.rx[sa.accepted[0]], "early");
	EXPECT_EQ(ca.rx[c], "early");
	EXPECT_EQ(net_stack_counter(a, NET_C_arp_requests_sent), 1u);
	EXPECT_EQ(net_stack_counter(b, NET_C_arp_replies_sent), 1u);
	EXPECT_EQ(net_stack_counter(a, NET_C_tcp_active_opens), 1u);
	uint16_t lp;
	net_conn_addrs(c, nullptr, &lp, nullptr, nullptr);
	EXPECT_GE(lp, 49152);
	// Orderly close from the client; the server closes when told.
	sa.on_peer_closed = [](net_conn *sc) { net_tcp_close(sc); };
	net_tcp_close(c);
	for (int i = 0; i < 100; i++)
		pump();
	EXPECT_TRUE(ca.was_closed(c));
	EXPECT_TRUE(sa.was_closed(sa.accepted[0]));
	EXPECT_EQ(net_stack_conns_in_use(b), 0u);
	EXPECT_EQ(net_stack_conns_in_use(a), 1u); // TIME_WAIT on the closing side
	for (int i = 0; i < 10; i++)
		pump(200000);
	EXPECT_EQ(net_stack_conns_in_use(a), 0u);
}

TEST_F(NetPair, SimultaneousOpen)
{
	// Both sides connect to each other with fixed ports: the SYNs cross.
	net_conn *ca_c = net_tcp_connect(a, B_IP, 5000, 6000, nullptr);
	net_conn *sb_c = net_tcp_connect(b, A_IP, 6000, 5000, nullptr);
	ASSERT_NE(ca_c, nullptr);
	ASSERT_NE(sb_c, nullptr);
	net_tcp_send(ca_c, "from a", 6);
	net_tcp_send(sb_c, "from b", 6);
	for (int i = 0; i < 200 && (ca.rx[ca_c].size() < 6 || sa.rx[sb_c].size() < 6); i++)
		pump(1000);
	EXPECT_STREQ(net_conn_state_name(ca_c), "ESTABLISHED");
	EXPECT_STREQ(net_conn_state_name(sb_c), "ESTABLISHED");
	// Both were opened actively: connected, never accepted.
	EXPECT_EQ(ca.connected.size(), 1u);
	EXPECT_EQ(sa.connected.size(), 1u);
	EXPECT_TRUE(ca.accepted.empty());
	EXPECT_TRUE(sa.accepted.empty());
	EXPECT_EQ(ca.rx[ca_c], "from b");
	EXPECT_EQ(sa.rx[sb_c], "from a");
}

TEST_F(NetPair, ConnectErrors)
{
	errno = 0;
	EXPECT_EQ(net_tcp_connect(a, ip4(10, 0, 0, 1), PORT, 0, nullptr), nullptr);
	EXPECT_EQ(errno, EHOSTUNREACH);
	EXPECT_EQ(net_tcp_connect(a, 0, PORT, 0, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(net_tcp_connect(a, B_IP, 0, 0, nullptr), nullptr);
	EXPECT_EQ(errno, EINVAL);
	net_conn *c = net_tcp_connect(a, B_IP, PORT, 5000, nullptr);
	ASSERT_NE(c, nullptr);
	EXPECT_EQ(net_tcp_connect(a, B_IP, PORT, 5000, nullptr), nullptr);
	EXPECT_EQ(errno, EADDRINUSE);
	// A port nobody listens on: the SYN is answered with RST.
	net_conn *r = net_tcp_connect(a, B_IP, 9999, 0, nullptr);
	ASSERT_NE(r, nullptr);
	for (int i = 0; i < 50; i++)
		pump();
	EXPECT_EQ(ca.close_reason(r), NET_CLOSE_REFUSED);
	EXPECT_FALSE(ca.was_closed(c));
	// The table fills: the ninth connection has no slot.
	std::vector<net_conn *> more;
	for (int i = 0; i < 8; i++)
		more.push_back(net_tcp_connect(a, B_IP, PORT, 0, nullptr));
	EXPECT_NE(more[6], nullptr);
	EXPECT_EQ(more[7], nullptr);
	EXPECT_EQ(errno, ENOSPC);
}

TEST_F(NetPair, PeerThatNeverAnswersArpTimesOut)
{
	net_conn *c = net_tcp_connect(a, ip4(198, 18, 0, 77), PORT, 0, nullptr);
	ASSERT_NE(c, nullptr);
	for (int i = 0; i < 400 && !ca.was_closed(c); i++)
		pump(500000);
	EXPECT_EQ(ca.close_reason(c), NET_CLOSE_TIMEOUT);
	EXPECT_GT(net_stack_counter(a, NET_C_arp_requests_sent), 1u);
	EXPECT_EQ(net_stack_conns_in_use(a), 0u);
}

// A server with two buffer pairs for eight connections that all send
// requests and read the answers at once: the pairs go round (segments
// refused at the cap come again), every byte arrives intact and in
// order, and the server never holds more than two pairs.
class NetPairBudget : public NetPair {
protected:
	void SetUp() override
	{
		b_max_buf_pairs = 2;
		NetPair::SetUp();
	}
};

TEST_F(NetPairBudget, EightBusyConnectionsShareTwoBufferPairs)
{
	const unsigned nconn = 8;
	const size_t request = 20000, total = 4 * request;
	const size_t pair = net_buf_pair_bytes(64 * 1024, 64 * 1024);
	struct Client {
		net_conn *c;
		std::string up;
		size_t sent = 0;
	};
	std::vector<Client> cl(nconn);

	// The server answers each byte with itself (consuming only what it
	// can send: backpressure), so an answer mixed up with another
	// connection's, reordered or short shows in the comparison.
	sa.on_recv = [&](net_conn *sc, const uint8_t *d, size_t n) {
		return net_tcp_send(sc, d, n);
	};
	for (unsigned i = 0; i < nconn; i++) {
		cl[i].c = net_tcp_connect(a, B_IP, PORT, 0, nullptr);
		ASSERT_NE(cl[i].c, nullptr);
		cl[i].up = pattern(total, 100 + i);
	}
	uint32_t most_in_use = 0;
	size_t done = 0;
	int it;
	for (it = 0; it < 2000000 && done < nconn; it++) {
		for (auto &k : cl)
			if (k.sent < total)
				k.sent += net_tcp_send(k.c, k.up.data() + k.sent,
						       std::min(request, total - k.sent));
		pump();
		net_stack_memory m;
		net_stack_memory_read(b, &m);
		most_in_use = std::max(most_in_use, m.buffers_in_use);
		ASSERT_LE(m.buffers_in_use, 2u) << "iteration " << it;
		ASSERT_LE(m.buffers, 2 * pair) << "iteration " << it;
		ASSERT_EQ(m.buffers_max, 2 * pair);
		done = 0;
		for (auto &k : cl)
			done += ca.rx[k.c].size() == total;
	}
	for (unsigned i = 0; i < nconn; i++) {
		const std::string &got = ca.rx[cl[i].c];
		EXPECT_EQ(got.size(), total) << "connection " << i;
		EXPECT_TRUE(got == cl[i].up) << "connection " << i << ": answer differs";
	}
	EXPECT_TRUE(ca.closed.empty()) << "a connection gave up";
	EXPECT_EQ(most_in_use, 2u);
	EXPECT_GT(net_stack_counter(b, NET_C_tcp_no_buffers), 0u) << "the cap was never reached";
	RecordProperty("iterations", it);
	RecordProperty("refused", int(net_stack_counter(b, NET_C_tcp_no_buffers)));
	RecordProperty("fast_retransmits", int(net_stack_counter(a, NET_C_tcp_fast_retransmits)));
	RecordProperty("rto", int(net_stack_counter(a, NET_C_tcp_rto_expired)));
}

// A few MB each way through loss, duplication and reordering.
class NetPairLossy : public NetPair, public ::testing::WithParamInterface<double> {};

TEST_P(NetPairLossy, BulkTransferBothWaysArrivesIntact)
{
	wire.loss = GetParam();
	wire.dup = 0.005;
	wire.reorder = 0.02;
	const size_t total = 3u << 20;
	const std::string up = pattern(total, 1);
	size_t sent = 0;

	// The server echoes every byte; when its send buffer is full it
	// consumes less, and the stack offers the rest again when ACKs free
	// space (backpressure end to end).
	sa.on_recv = [&](net_conn *sc, const uint8_t *d, size_t n) {
		size_t k = net_tcp_send(sc, d, n);
		sa.rx[sc].append((const char *)d, k);
		return k;
	};
	sa.on_peer_closed = [](net_conn *sc) { net_tcp_close(sc); };
	net_conn *c = net_tcp_connect(a, B_IP, PORT, 0, nullptr);
	ASSERT_NE(c, nullptr);
	bool closing = false;
	int i;
	for (i = 0; i < 3000000; i++) {
		if (!ca.was_closed(c) && sent < total)
			sent += net_tcp_send(c, up.data() + sent,
					     std::min<size_t>(total - sent, 16384));
		if (!closing && ca.rx[c].size() == total) {
			net_tcp_close(c);
			closing = true;
		}
		if (ca.was_closed(c) && !sa.accepted.empty() && sa.was_closed(sa.accepted[0]))
			break;
		pump();
		if (::testing::Test::HasFailure())
			break;
	}
	ASSERT_EQ(sa.accepted.size(), 1u);
	const std::string &echo = ca.rx[c];
	const std::string &got = sa.rx[sa.accepted[0]];
	EXPECT_EQ(got.size(), total);
	EXPECT_EQ(echo.size(), total);
	EXPECT_TRUE(got == up) << "server stream differs";
	EXPECT_TRUE(echo == up) << "echoed stream differs";
	EXPECT_EQ(ca.close_reason(c), NET_CLOSE_NORMAL);
	EXPECT_EQ(sa.close_reason(sa.accepted[0]), NET_CLOSE_NORMAL);
	if (wire.loss > 0) {
		EXPECT_GT(wire.dropped, 0u);
		EXPECT_GT(net_stack_counter(a, NET_C_tcp_retransmits) +
				  net_stack_counter(b, NET_C_tcp_retransmits),
			  0u);
		EXPECT_GT(net_stack_counter(a, NET_C_tcp_ooo_segs) +
				  net_stack_counter(b, NET_C_tcp_ooo_segs),
			  0u);
	}
	// a's segments went out without a copy but where the ring wrapped
	EXPECT_GT(net_stack_counter(a, NET_C_tcp_tx_zero_copy), 0u);
	EXPECT_LT(net_stack_counter(a, NET_C_tcp_tx_zero_copy),
		  net_stack_counter(a, NET_C_tcp_tx_segs));
	EXPECT_EQ(net_stack_counter(b, NET_C_tcp_tx_zero_copy), 0u);
	RecordProperty("iterations", i);
	RecordProperty("dropped", int(wire.dropped));
	RecordProperty("fast_retransmits", int(net_stack_counter(a, NET_C_tcp_fast_retransmits) +
					       net_stack_counter(b, NET_C_tcp_fast_retransmits)));
	RecordProperty("rto", int(net_stack_counter(a, NET_C_tcp_rto_expired) +
				  net_stack_counter(b, NET_C_tcp_rto_expired)));
}

INSTANTIATE_TEST_SUITE_P(Loss, NetPairLossy, ::testing::Values(0.0, 0.01, 0.05),
			 [](const ::testing::TestParamInfo<double> &i) {
				 return "loss" + std::to_string(int(i.param * 100)) + "pct";
			 });

} // namespace
