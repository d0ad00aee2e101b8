// SPDX-License-Identifier: BSD-3-Clause
// Test harness for lib/net and the test binary's main (EAL without
// hugepages or devices).
#include "net_harness.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

namespace nettest {

static rte_mempool *g_pool;

rte_mempool *pool() { return g_pool; }

rte_ether_addr mac(uint8_t last)
{
	rte_ether_addr a = {{0x02, 0x00, 0x00, 0x00, 0x00, last}};
	return a;
}

static void put_eth(Bytes &f, const rte_ether_addr &src, const rte_ether_addr &dst, uint16_t type)
{
	rte_ether_hdr eth;
	eth.dst_addr = dst;
	eth.src_addr = src;
	eth.ether_type = rte_cpu_to_be_16(type);
	// resize and copy rather than insert: GCC 12 at -O3 (the release
	// build) reports insert's inlined copy out of bounds, wrongly
	size_t off = f.size();
	f.resize(off + sizeof(eth));
	memcpy(f.data() + off, &eth, sizeof(eth));
}

static void put_ip(Bytes &f, uint32_t src, uint32_t dst, uint8_t proto, uint16_t l4_len,
		   uint8_t ttl)
{
	rte_ipv4_hdr ip;
	memset(&ip, 0, sizeof(ip));
	ip.version_ihl = RTE_IPV4_VHL_DEF;
	ip.total_length = rte_cpu_to_be_16(sizeof(ip) + l4_len);
	ip.packet_id = rte_cpu_to_be_16(1);
	ip.time_to_live = ttl;
	ip.next_proto_id = proto;
	ip.src_addr = rte_cpu_to_be_32(src);
	ip.dst_addr = rte_cpu_to_be_32(dst);
	f.insert(f.end(), (uint8_t *)&ip, (uint8_t *)&ip + sizeof(ip));
}

void fix_checksums(Bytes &f)
{
	if (f.size() < sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr))
		return;
	auto *ip = reinterpret_cast<rte_ipv4_hdr *>(f.data() + sizeof(rte_ether_hdr));
	size_t ihl = (ip->version_ihl & 0xf) * 4u;
	size_t room = f.size() - sizeof(rte_ether_hdr);
	size_t total = rte_be_to_cpu_16(ip->total_length);
	// Mangled frames: fix only what lies inside the frame.
	if (ihl < sizeof(*ip) || ihl > room)
		return;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (total > room || total < ihl + 8)
		return;
	uint8_t *l4 = (uint8_t *)ip + ihl;
	if (ip->next_proto_id == IPPROTO_TCP && total < ihl + sizeof(rte_tcp_hdr))
		return;
	if (ip->next_proto_id == IPPROTO_TCP) {
		auto *th = reinterpret_cast<rte_tcp_hdr *>(l4);
		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	} else if (ip->next_proto_id == IPPROTO_UDP) {
		auto *uh = reinterpret_cast<rte_udp_hdr *>(l4);
		uh->dgram_cksum = 0;
		uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
	}
}

Bytes opt_mss(uint16_t mss) { return {2, 4, uint8_t(mss >> 8), uint8_t(mss)}; }
Bytes opt_ws(uint8_t ws) { return {1, 3, 3, ws}; }

Bytes tcp_frame(const TcpSpec &t)
{
	Bytes f, opts = t.opts;
	while (opts.size() % 4)
		opts.push_back(0);
	uint16_t l4 = sizeof(rte_tcp_hdr) + opts.size() + t.payload.size();
	put_eth(f, t.src_mac, t.dst_mac, RTE_ETHER_TYPE_IPV4);
	put_ip(f, t.src_ip, t.dst_ip, IPPROTO_TCP, l4, t.ttl);
	rte_tcp_hdr th;
	memset(&th, 0, sizeof(th));
	th.src_port = rte_cpu_to_be_16(t.sport);
	th.dst_port = rte_cpu_to_be_16(t.dport);
	th.sent_seq = rte_cpu_to_be_32(t.seq);
	th.recv_ack = rte_cpu_to_be_32(t.ack);
	th.data_off = uint8_t(((sizeof(th) + opts.size()) / 4) << 4);
	th.tcp_flags = t.flags;
	th.rx_win = rte_cpu_to_be_16(t.win);
	f.insert(f.end(), (uint8_t *)&th, (uint8_t *)&th + sizeof(th));
	f.insert(f.end(), opts.begin(), opts.end());
	f.insert(f.end(), t.payload.begin(), t.payload.end());
	fix_checksums(f);
	return f;
}

Bytes udp_frame(const rte_ether_addr &src_mac, const rte_ether_addr &dst_mac, uint32_t src_ip,
		uint32_t dst_ip, uint16_t sport, uint16_t dport, const std::string &payload)
{
	Bytes f;
	uint16_t l4 = sizeof(rte_udp_hdr) + payload.size();
	put_eth(f, src_mac, dst_mac, RTE_ETHER_TYPE_IPV4);
	put_ip(f, src_ip, dst_ip, IPPROTO_UDP, l4, 64);
	rte_udp_hdr uh;
	uh.src_port = rte_cpu_to_be_16(sport);
	uh.dst_port = rte_cpu_to_be_16(dport);
	uh.dgram_len = rte_cpu_to_be_16(l4);
	uh.dgram_cksum = 0;
	f.insert(f.end(), (uint8_t *)&uh, (uint8_t *)&uh + sizeof(uh));
	f.insert(f.end(), payload.begin(), payload.end());
	fix_checksums(f);
	return f;
}

Bytes icmp_echo_frame(const rte_ether_addr &src_mac, const rte_ether_addr &dst_mac,
		      uint32_t src_ip, uint32_t dst_ip, uint16_t id, uint16_t seq,
		      const std::string &payload)
{
	Bytes f;
	uint16_t l4 = sizeof(rte_icmp_hdr) + payload.size();
	put_eth(f, src_mac, dst_mac, RTE_ETHER_TYPE_IPV4);
	put_ip(f, src_ip, dst_ip, IPPROTO_ICMP, l4, 64);
	size_t off = f.size();
	rte_icmp_hdr ic;
	ic.icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic.icmp_code = 0;
	ic.icmp_cksum = 0;
	ic.icmp_ident = rte_cpu_to_be_16(id);
	ic.icmp_seq_nb = rte_cpu_to_be_16(seq);
	f.insert(f.end(), (uint8_t *)&ic, (uint8_t *)&ic + sizeof(ic));
	f.insert(f.end(), payload.begin(), payload.end());
	uint16_t ck = ~rte_raw_cksum(f.data() + off, l4);
	memcpy(f.data() + off + 2, &ck, 2);
	fix_checksums(f);
	return f;
}

Bytes arp_frame(const rte_ether_addr &src_mac, const rte_ether_addr &eth_dst, uint16_t op,
		const rte_ether_addr &sha, uint32_t sip, const rte_ether_addr &tha, uint32_t tip)
{
	Bytes f;
	put_eth(f, src_mac, eth_dst, RTE_ETHER_TYPE_ARP);
	rte_arp_hdr a;
	a.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a.arp_hlen = 6;
	a.arp_plen = 4;
	a.arp_opcode = rte_cpu_to_be_16(op);
	a.arp_data.arp_sha = sha;
	a.arp_data.arp_sip = rte_cpu_to_be_32(sip);
	a.arp_data.arp_tha = tha;
	a.arp_data.arp_tip = rte_cpu_to_be_32(tip);
	// resize and copy rather than insert: GCC 12 at -O3 (the release
	// build) reports insert's inlined copy out of bounds, wrongly
	size_t off = f.size();
	f.resize(RTE_MAX(off + sizeof(a), (size_t)60), 0); // 60: Ethernet minimum frame (padding), as a NIC delivers it
	memcpy(f.data() + off, &a, sizeof(a));
	return f;
}

rte_mbuf *to_mbuf(const Bytes &f)
{
	rte_mbuf *m = rte_pktmbuf_alloc(g_pool);
	if (m == nullptr)
		return nullptr;
	char *p = rte_pktmbuf_append(m, f.size());
	if (p == nullptr) {
		rte_pktmbuf_free(m);
		return nullptr;
	}
	memcpy(p, f.data(), f.size());
	return m;
}

static void parse_tcp_options(const uint8_t *p, size_t len, Pkt &k)
{
	size_t i = 0;
	while (i < len) {
		if (p[i] == 0)
			break;
		if (p[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || p[i + 1] < 2)
			break;
		if (p[i] == 2 && p[i + 1] == 4)
			k.mss = (p[i + 2] << 8) | p[i + 3];
		if (p[i] == 3 && p[i + 1] == 3)
			k.ws = p[i + 2];
		i += p[i + 1];
	}
}

Pkt parse(const rte_mbuf *m)
{
	Pkt k;
	k.ol_flags = m->ol_flags;
	k.segs = m->nb_segs;
	for (const rte_mbuf *g = m; g != nullptr; g = g->next) { // as the NIC reads it
		const uint8_t *p = rte_pktmbuf_mtod(g, const uint8_t *);
		k.raw.insert(k.raw.end(), p, p + rte_pktmbuf_data_len(g));
	}
	const uint8_t *d = k.raw.data();
	if (k.raw.size() < sizeof(rte_ether_hdr))
		return k;
	auto *eth = reinterpret_cast<const rte_ether_hdr *>(d);
	k.eth_src = eth->src_addr;
	k.eth_dst = eth->dst_addr;
	k.ethertype = rte_be_to_cpu_16(eth->ether_type);
	if (k.ethertype == RTE_ETHER_TYPE_ARP && k.raw.size() >= 42) {
		auto *a = reinterpret_cast<const rte_arp_hdr *>(eth + 1);
		k.arp_op = rte_be_to_cpu_16(a->arp_opcode);
		k.arp_sha = a->arp_data.arp_sha;
		k.arp_tha = a->arp_data.arp_tha;
		k.arp_sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
		k.arp_tip = rte_be_to_cpu_32(a->arp_data.arp_tip);
		return k;
	}
	if (k.ethertype != RTE_ETHER_TYPE_IPV4 || k.raw.size() < 34)
		return k;
	auto *ip = reinterpret_cast<const rte_ipv4_hdr *>(eth + 1);
	k.ip = true;
	k.ip_cksum_ok = rte_raw_cksum(ip, 20) == 0xffff;
	k.ip_src = rte_be_to_cpu_32(ip->src_addr);
	k.ip_dst = rte_be_to_cpu_32(ip->dst_addr);
	k.proto = ip->next_proto_id;
	k.ttl = ip->time_to_live;
	uint16_t tot = rte_be_to_cpu_16(ip->total_length);
	const uint8_t *l4 = (const uint8_t *)(ip + 1);
	uint16_t l4_len = tot - 20;
	if (k.proto == IPPROTO_TCP) {
		auto *th = reinterpret_cast<const rte_tcp_hdr *>(l4);
		k.l4_cksum_ok = __rte_ipv4_udptcp_cksum(ip, th) == 0xffff;
		k.sport = rte_be_to_cpu_16(th->src_port);
		k.dport = rte_be_to_cpu_16(th->dst_port);
		k.seq = rte_be_to_cpu_32(th->sent_seq);
		k.ack = rte_be_to_cpu_32(th->recv_ack);
		k.flags = th->tcp_flags;
		k.win = rte_be_to_cpu_16(th->rx_win);
		size_t doff = (th->data_off >> 4) * 4u;
		parse_tcp_options(l4 + 20, doff - 20, k);
		k.payload.assign((const char *)l4 + doff, l4_len - doff);
	} else if (k.proto == IPPROTO_UDP) {
		auto *uh = reinterpret_cast<const rte_udp_hdr *>(l4);
		k.l4_cksum_ok = __rte_ipv4_udptcp_cksum(ip, uh) == 0xffff;
		k.sport = rte_be_to_cpu_16(uh->src_port);
		k.dport = rte_be_to_cpu_16(uh->dst_port);
		k.payload.assign((const char *)l4 + 8, rte_be_to_cpu_16(uh->dgram_len) - 8);
	} else if (k.proto == IPPROTO_ICMP) {
		auto *ic = reinterpret_cast<const rte_icmp_hdr *>(l4);
		k.l4_cksum_ok = rte_raw_cksum(ic, l4_len) == 0xffff;
		k.icmp_type = ic->icmp_type;
		k.icmp_id = rte_be_to_cpu_16(ic->icmp_ident);
		k.icmp_seq = rte_be_to_cpu_16(ic->icmp_seq_nb);
		k.payload.assign((const char *)l4 + 8, l4_len - 8);
	}
	return k;
}

// --- App ---

static int cb_accepted(void *a, net_conn *c)
{
	auto *app = static_cast<App *>(a);
	app->accepted.push_back(c);
	app->rx[c];
	return app->accept_rc;
}

static void cb_connected(void *a, net_conn *c)
{
	auto *app = static_cast<App *>(a);
	app->connected.push_back(c);
	if (app->on_connected)
		app->on_connected(c);
}

static size_t cb_recv(void *a, net_conn *c, const uint8_t *data, size_t len)
{
	auto *app = static_cast<App *>(a);
	app->recv_calls++;
	if (app->on_recv)
		return app->on_recv(c, data, len);
	app->rx[c].append((const char *)data, len);
	return len;
}

static void cb_writable(void *a, net_conn *c)
{
	auto *app = static_cast<App *>(a);
	app->writable.push_back(c);
	if (app->on_writable)
		app->on_writable(c);
}

static void cb_peer_closed(void *a, net_conn *c)
{
	auto *app = static_cast<App *>(a);
	app->peer_closed.push_back(c);
	if (app->on_peer_closed)
		app->on_peer_closed(c);
}

static void cb_closed(void *a, net_conn *c, net_close_reason why)
{
	static_cast<App *>(a)->closed.emplace_back(c, why);
}

static void cb_udp(void *a, const net_udp_peer *peer, const uint8_t *data, size_t len)
{
	static_cast<App *>(a)->udp.push_back({*peer, std::string((const char *)data, len)});
}

static void cb_timer(void *a, net_conn *c)
{
	auto *app = static_cast<App *>(a);
	app->timers.push_back(c);
	if (app->on_timer)
		app->on_timer(c);
}

static void cb_rx_hint(void *a, const net_rx_hint *h, unsigned n)
{
	auto *app = static_cast<App *>(a);
	for (unsigned i = 0; i < n; i++)
		app->hints.push_back({std::string((const char *)h[i].data, h[i].len), h[i].udp,
				      app->recv_calls, unsigned(app->udp.size())});
}

const net_app_ops App::ops = {
	cb_accepted, cb_connected, cb_recv, cb_writable, cb_peer_closed, cb_closed, cb_udp,
	cb_timer, cb_rx_hint,
};

bool App::was_closed(net_conn *c, net_close_reason *why) const
{
	for (auto &p : closed)
		if (p.first == c) {
			if (why)
				*why = p.second;
			return true;
		}
	return false;
}

std::optional<net_close_reason> App::close_reason(net_conn *c) const
{
	net_close_reason why;
	if (!was_closed(c, &why))
		return std::nullopt;
	return why;
}

} // namespace nettest

int main(int argc, char **argv)
{
	::testing::InitGoogleTest(&argc, argv);
	// --in-memory implies --legacy-mem with --no-huge, which the EAL
	// refuses; --no-shconf gives the same "no files, no collisions".
	const char *eal_argv[] = {"test_net", "--no-huge", "--no-shconf", "--no-pci",
				  "-l", "0", "--log-level=error"};
	if (rte_eal_init(RTE_DIM(eal_argv), const_cast<char **>(eal_argv)) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	nettest::g_pool = rte_pktmbuf_pool_create("test_net_pool", 8191, 0, 0,
						  RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (nettest::g_pool == nullptr) {
		fprintf(stderr, "cannot create the mbuf pool\n");
		return 1;
	}
	int rc = RUN_ALL_TESTS();
	rte_mempool_free(nettest::g_pool);
	rte_eal_cleanup();
	return rc;
}
