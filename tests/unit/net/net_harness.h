// SPDX-License-Identifier: BSD-3-Clause
// Test harness for lib/net: frames crafted byte by byte, emitted frames
// parsed back, a fake clock, an application that records every callback.
#ifndef SEGCACHED_TEST_NET_HARNESS_H
#define SEGCACHED_TEST_NET_HARNESS_H

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <netinet/in.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "net/net.h"

namespace nettest {

constexpr uint32_t ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (a << 24) | (b << 16) | (c << 8) | d;
}

rte_ether_addr mac(uint8_t last);

// The mempool shared by all tests (created in main after EAL init).
rte_mempool *pool();

using Bytes = std::vector<uint8_t>;

struct TcpSpec {
	rte_ether_addr src_mac, dst_mac;
	uint32_t src_ip = 0, dst_ip = 0;
	uint16_t sport = 0, dport = 0;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = 0;
	uint16_t win = 65535;
	Bytes opts; // raw option bytes, padded to 4 by the builder
	std::string payload;
	uint8_t ttl = 64;
};

// Frame builders: correct checksums unless the caller breaks them after.
Bytes tcp_frame(const TcpSpec &t);
Bytes udp_frame(const rte_ether_addr &src_mac, const rte_ether_addr &dst_mac, uint32_t src_ip,
		uint32_t dst_ip, uint16_t sport, uint16_t dport, const std::string &payload);
Bytes icmp_echo_frame(const rte_ether_addr &src_mac, const rte_ether_addr &dst_mac,
		      uint32_t src_ip, uint32_t dst_ip, uint16_t id, uint16_t seq,
		      const std::string &payload);
Bytes arp_frame(const rte_ether_addr &src_mac, const rte_ether_addr &eth_dst, uint16_t op,
		const rte_ether_addr &sha, uint32_t sip, const rte_ether_addr &tha, uint32_t tip);
// Recompute the IPv4 header checksum and the L4 checksum of a frame
// after a test edited it.
void fix_checksums(Bytes &f);
Bytes opt_mss(uint16_t mss);
Bytes opt_ws(uint8_t ws);

rte_mbuf *to_mbuf(const Bytes &f);

// One emitted packet, decoded.
struct Pkt {
	Bytes raw;                // every segment's bytes, joined
	unsigned segs = 1;        // mbufs in the chain
	uint64_t ol_flags = 0;
	rte_ether_addr eth_src{}, eth_dst{};
	uint16_t ethertype = 0;
	// ARP
	uint16_t arp_op = 0;
	rte_ether_addr arp_sha{}, arp_tha{};
	uint32_t arp_sip = 0, arp_tip = 0;
	// IPv4
	bool ip = false;
	bool ip_cksum_ok = false;
	uint32_t ip_src = 0, ip_dst = 0;
	uint8_t proto = 0, ttl = 0;
	// TCP / UDP
	bool l4_cksum_ok = false;
	uint16_t sport = 0, dport = 0;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = 0;
	uint16_t win = 0;
	int mss = -1, ws = -1;
	std::string payload;
	// ICMP
	uint8_t icmp_type = 0;
	uint16_t icmp_id = 0, icmp_seq = 0;

	bool is_tcp() const { return ip && proto == IPPROTO_TCP; }
	bool has(uint8_t f) const { return (flags & f) == f; }
};
Pkt parse(const rte_mbuf *m);

// Records every callback; behaviour is adjustable per test.
struct App {
	std::vector<net_conn *> accepted, connected, peer_closed, writable, timers;
	std::vector<std::pair<net_conn *, net_close_reason>> closed;
	std::map<net_conn *, std::string> rx;
	int accept_rc = 0;
	// Return how many bytes were consumed; default: all, appended to rx.
	std::function<size_t(net_conn *, const uint8_t *, size_t)> on_recv;
	std::function<void(net_conn *)> on_peer_closed, on_writable, on_connected, on_timer;
	struct Udp {
		net_udp_peer peer;
		std::string data;
	};
	std::vector<Udp> udp;
	unsigned recv_calls = 0;
	// rx_hint: every payload shown, with recv_calls and udp.size() at the
	// time (so a test sees the hint came before the bytes were delivered).
	struct Hint {
		std::string data;
		bool udp;
		unsigned recv_calls_before, udp_before;
	};
	std::vector<Hint> hints;

	static const net_app_ops ops;
	bool was_closed(net_conn *c, net_close_reason *why = nullptr) const;
	// Why c was closed; nullopt while it is not.
	std::optional<net_close_reason> close_reason(net_conn *c) const;
};

// --- the fixture of test_net_*.cc: one stack (the server) driven with
// frames crafted here; the frames it emits are decoded and checked. Time
// is a fake clock the tests advance; nothing sleeps. Every test ends with
// a check that no mbuf leaked. ---

constexpr uint32_t SRV_IP = ip4(198, 18, 0, 2);
constexpr uint32_t CLI_IP = ip4(198, 18, 0, 1);
constexpr uint16_t PORT = 11211;
constexpr uint8_t SYN = RTE_TCP_SYN_FLAG, ACK = RTE_TCP_ACK_FLAG, FIN = RTE_TCP_FIN_FLAG,
		  RST = RTE_TCP_RST_FLAG, PSH = RTE_TCP_PSH_FLAG;

// The client side of a connection, kept by the test.
struct Peer {
	uint32_t ip = CLI_IP;
	uint16_t port = 40000;
	uint16_t lport = PORT; // the server's port
	uint32_t iss = 1000;
	uint32_t snd_nxt = 0, rcv_nxt = 0;
	uint16_t win = 65535;
	uint32_t srv_iss = 0;
};

class Net : public ::testing::Test {
protected:
	uint64_t now = 5000000000ull; // us
	App app;
	net_stack_config cfg{};
	net_stack *s = nullptr;
	rte_ether_addr smac = mac(2), cmac = mac(1);
	unsigned in_use_before = 0;

	static uint64_t clock_fn(void *a) { return *static_cast<uint64_t *>(a); }

	void SetUp() override
	{
		in_use_before = rte_mempool_in_use_count(pool());
		cfg.name = "srv";
		cfg.socket_id = SOCKET_ID_ANY;
		cfg.mac = smac;
		cfg.ip = SRV_IP;
		cfg.prefix_len = 24;
		cfg.tx_pool = pool();
		cfg.tcp_ports[0] = PORT;
		cfg.udp_ports[0] = PORT;
		cfg.max_conns = 16;
		cfg.sndbuf = 64 * 1024;
		cfg.rcvbuf = 64 * 1024;
		cfg.clock = clock_fn;
		cfg.clock_arg = &now;
		cfg.ops = &App::ops;
		cfg.app_arg = &app;
		cfg.secret_seed = 42;
	}

	void make()
	{
		char err[256] = "";
		s = net_stack_create(&cfg, err, sizeof(err));
		ASSERT_NE(s, nullptr) << err;
	}

	// The peer and the connection most tests start from: make_open() makes
	// the stack (with cfg as the test left it) and opens c from p, with p's
	// options (window scale, -1 for none; MSS). A test that stops there
	// must say ASSERT_NO_FATAL_FAILURE(make_open()).
	Peer p;
	net_conn *c = nullptr;

	void make_open(int ws = 7, uint16_t mss = 1460)
	{
		make();
		if (HasFatalFailure())
			return;
		c = open(p, ws, mss);
		ASSERT_NE(c, nullptr);
	}

	void TearDown() override
	{
		if (s != nullptr) {
			drain();
			net_stack_destroy(s);
		}
		EXPECT_EQ(rte_mempool_in_use_count(pool()), in_use_before) << "mbufs leaked";
	}

	uint64_t ctr(net_counter_id id) { return net_stack_counter(s, id); }

	// Non-zero counters, for failure messages.
	std::string dump()
	{
		std::string r;
		for (unsigned i = 0; i < NET_C__COUNT; i++)
			if (ctr(net_counter_id(i)) != 0)
				r += std::string(net_counter_name(net_counter_id(i))) + "=" +
				     std::to_string(ctr(net_counter_id(i))) + " ";
		return r;
	}

	void inject(const Bytes &f)
	{
		rte_mbuf *m = to_mbuf(f);
		ASSERT_NE(m, nullptr);
		net_stack_input(s, &m, 1);
	}

	std::vector<Pkt> drain()
	{
		rte_mbuf **tx;
		uint16_t n;
		std::vector<Pkt> out;
		// the queue is a ring: a burst stops at the array's end
		while ((n = net_stack_tx_burst_prepare(s, &tx)) > 0) {
			for (uint16_t i = 0; i < n; i++) {
				out.push_back(parse(tx[i]));
				rte_pktmbuf_free(tx[i]); // "the NIC sent it"
			}
			net_stack_tx_burst_done(s, n);
		}
		return out;
	}

	// "The NIC" takes what the stack built and has not sent it yet; the
	// test frees the packets when it likes.
	std::vector<rte_mbuf *> poll_and_hold()
	{
		std::vector<rte_mbuf *> held;
		rte_mbuf **tx;
		uint16_t n;
		net_stack_poll(s);
		while ((n = net_stack_tx_burst_prepare(s, &tx)) > 0) {
			held.insert(held.end(), tx, tx + n);
			net_stack_tx_burst_done(s, n);
		}
		return held;
	}

	std::vector<Pkt> step()
	{
		net_stack_poll(s);
		return drain();
	}

	std::vector<Pkt> send_frame(const Bytes &f)
	{
		inject(f);
		return step();
	}

	std::vector<Pkt> advance(uint64_t us)
	{
		now += us;
		return step();
	}

	Bytes seg_at(const Peer &p, uint32_t seq, uint8_t flags, const std::string &payload = "",
		     const Bytes &opts = {})
	{
		TcpSpec t;
		t.src_mac = cmac;
		t.dst_mac = smac;
		t.src_ip = p.ip;
		t.dst_ip = SRV_IP;
		t.sport = p.port;
		t.dport = p.lport;
		t.seq = seq;
		t.ack = (flags & ACK) ? p.rcv_nxt : 0;
		t.flags = flags;
		t.win = p.win;
		t.opts = opts;
		t.payload = payload;
		return tcp_frame(t);
	}

	// A segment at the peer's snd_nxt, advancing it.
	Bytes seg(Peer &p, uint8_t flags, const std::string &payload = "", const Bytes &opts = {})
	{
		Bytes f = seg_at(p, p.snd_nxt, flags, payload, opts);
		p.snd_nxt += payload.size() + ((flags & SYN) ? 1 : 0) + ((flags & FIN) ? 1 : 0);
		return f;
	}

	// Three-way handshake from the peer; returns the server's connection.
	net_conn *open(Peer &p, int ws = 7, uint16_t mss = 1460)
	{
		Bytes opts = opt_mss(mss);
		if (ws >= 0) {
			Bytes w = opt_ws(uint8_t(ws));
			opts.insert(opts.end(), w.begin(), w.end());
		}
		p.snd_nxt = p.iss;
		auto out = send_frame(seg(p, SYN, "", opts));
		EXPECT_EQ(out.size(), 1u);
		if (out.size() != 1)
			return nullptr;
		const Pkt &sa = out[0];
		EXPECT_TRUE(sa.has(SYN | ACK));
		EXPECT_EQ(sa.ack, p.iss + 1);
		p.srv_iss = sa.seq;
		p.rcv_nxt = sa.seq + 1;
		size_t before = app.accepted.size();
		out = send_frame(seg(p, ACK));
		EXPECT_TRUE(out.empty());
		EXPECT_EQ(app.accepted.size(), before + 1);
		return app.accepted.size() > before ? app.accepted.back() : nullptr;
	}

	// On the stack made: brings c, opened from p, into `state` (an RFC 9293
	// name, the peer's side done by p). In SYN_RCVD c stays nullptr: the
	// application knows nothing yet.
	void into_state(const std::string &state)
	{
		if (state == "SYN_RCVD") {
			p.snd_nxt = p.iss;
			auto out = send_frame(seg(p, SYN, "", opt_mss(1460)));
			ASSERT_EQ(out.size(), 1u);
			p.rcv_nxt = out[0].seq + 1;
			EXPECT_EQ(net_stack_conns_in_use(s), 1u);
			return;
		}
		c = open(p);
		ASSERT_NE(c, nullptr);
		if (state == "CLOSE_WAIT" || state == "LAST_ACK") {
			send_frame(seg(p, ACK | FIN));
			if (state == "LAST_ACK")
				net_tcp_close(c);
		} else if (state != "ESTABLISHED") {
			net_tcp_close(c);
			auto out = step();
			ASSERT_FALSE(out.empty());
			if (state == "FIN_WAIT_2" || state == "TIME_WAIT") {
				p.rcv_nxt = out[0].seq + 1;
				send_frame(seg(p, ACK));
			} else if (state == "CLOSING") {
				send_frame(seg(p, ACK | FIN));
			}
			if (state == "TIME_WAIT")
				send_frame(seg(p, ACK | FIN));
		}
		step();
		EXPECT_STREQ(net_conn_state_name(c), state.c_str());
	}

	// The server closes d and q answers its FIN with ACK|FIN: d is in
	// TIME_WAIT.
	void to_time_wait(Peer &q, net_conn *d)
	{
		net_tcp_close(d);
		auto out = tcp_to(step(), q);
		ASSERT_FALSE(out.empty());
		q.rcv_nxt = out[0].seq + 1;
		send_frame(seg(q, ACK | FIN));
		EXPECT_STREQ(net_conn_state_name(d), "TIME_WAIT");
	}

	// Everything TCP the server sent to p, in order; acknowledges nothing.
	static std::vector<Pkt> tcp_to(const std::vector<Pkt> &out, const Peer &p)
	{
		std::vector<Pkt> r;
		for (auto &k : out)
			if (k.is_tcp() && k.dport == p.port)
				r.push_back(k);
		return r;
	}
};

} // namespace nettest

#endif
