// SPDX-License-Identifier: BSD-3-Clause
// Test harness for lib/net: frames crafted byte by byte, emitted frames
// parsed back, a fake clock, an application that records every callback.
#ifndef SEGCACHED_TEST_NET_HARNESS_H
#define SEGCACHED_TEST_NET_HARNESS_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <netinet/in.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

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
};

} // namespace nettest

#endif
