// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: malformed input. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <rte_ip.h>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, MalformedPacketsAreDroppedAndCounted)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	Bytes good = seg_at(p, p.snd_nxt, ACK | PSH, "data");
	auto expect_drop = [&](Bytes f, net_counter_id id, const char *what) {
		uint64_t before = ctr(id);
		EXPECT_TRUE(send_frame(f).empty()) << what;
		EXPECT_EQ(ctr(id), before + 1) << what;
	};
	// good with one byte changed, the checksums right again
	auto patched = [&](size_t at, uint8_t v) {
		Bytes f = good;
		f[at] = v;
		fix_checksums(f);
		return f;
	};
	Bytes f = good;
	f[14 + 10] ^= 0xff; // IP checksum
	expect_drop(f, NET_C_drop_ip_bad_cksum, "ip cksum");
	f = good;
	f.back() ^= 0x01; // TCP checksum (payload changed)
	expect_drop(f, NET_C_drop_tcp_bad_cksum, "tcp cksum");
	f = good;
	f[14] = 0x65; // version 6
	expect_drop(f, NET_C_drop_ip_bad_header, "version");
	f = good;
	f[14] = 0x44; // IHL 4
	expect_drop(f, NET_C_drop_ip_bad_header, "ihl");
	expect_drop(patched(14 + 2, 0x10), NET_C_drop_truncated, "ip total length 4096 > frame");
	f = good;
	f[14 + 2] = 0;
	f[14 + 3] = 10; // total length < IHL
	f[14 + 10] = f[14 + 11] = 0;
	{
		auto *ip = reinterpret_cast<rte_ipv4_hdr *>(f.data() + 14);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	expect_drop(f, NET_C_drop_ip_bad_header, "total length < ihl");
	expect_drop(patched(14 + 6, 0x20), NET_C_drop_ip_fragment, "fragment (MF)");
	expect_drop(patched(14 + 7, 0x08), NET_C_drop_ip_fragment, "fragment offset");
	expect_drop(patched(14 + 16, 10), NET_C_drop_ip_not_for_us, "another destination");
	expect_drop(patched(14 + 8, 0), NET_C_drop_ip_ttl, "ttl 0");
	expect_drop(patched(14 + 9, 47), NET_C_drop_ip_proto, "proto (GRE)");
	expect_drop(patched(34 + 12, 0x40), NET_C_drop_tcp_bad_header, "doff < 5");
	expect_drop(patched(34 + 12, 0xf0), NET_C_drop_tcp_bad_header, "doff 60 > len");
	f = good;
	f.resize(14 + 20 + 10); // TCP header cut
	f[14 + 2] = 0;
	f[14 + 3] = 30;
	fix_checksums(f);
	expect_drop(f, NET_C_drop_truncated, "tcp truncated");
	f = good;
	f.resize(20);
	expect_drop(f, NET_C_drop_truncated, "ip truncated");
	f = good;
	f.resize(10);
	expect_drop(f, NET_C_drop_truncated, "eth truncated");
	f = good;
	f[12] = 0x86;
	f[13] = 0xdd; // IPv6
	expect_drop(f, NET_C_drop_ethertype, "ethertype");
	// IP options: a 24-byte header.
	f = good;
	f.insert(f.begin() + 34, {1, 1, 1, 0});
	f[14] = 0x46;
	f[14 + 3] += 4;
	fix_checksums(f);
	expect_drop(f, NET_C_drop_ip_options, "options");
	// SYN with malformed options (length 0).
	{
		Peer q;
		q.port = 41000;
		q.snd_nxt = 1;
		expect_drop(seg(q, SYN, "", {2, 0, 0, 0}), NET_C_drop_tcp_bad_header, "bad opt");
		expect_drop(seg(q, SYN, "", {3, 9, 1, 1}), NET_C_drop_tcp_bad_header,
			    "opt overrun");
		expect_drop(seg(q, SYN | FIN), NET_C_drop_tcp_bad_header, "syn+fin");
	}
	// After all that, the connection still works.
	EXPECT_STREQ(net_conn_state_name(c), "ESTABLISHED");
	send_frame(good);
	EXPECT_EQ(app.rx[c], "data");
}

TEST_F(Net, ChecksumOffloadFlagsAndTrust)
{
	cfg.tx_cksum_offload = true;
	cfg.rx_cksum_offload = true;
	cfg.tx_ip_cksum_offload = true;
	cfg.rx_ip_cksum_offload = true;
	make();
	p.snd_nxt = p.iss;
	Bytes syn = seg(p, SYN, "", opt_mss(1460));
	syn[34 + 16] ^= 0xff; // broken checksum, but the NIC says GOOD
	rte_mbuf *m = to_mbuf(syn);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	net_stack_input(s, &m, 1);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_IPV4);
	// The field holds the pseudo-header checksum for the NIC to finish.
	auto *ip = reinterpret_cast<const rte_ipv4_hdr *>(out[0].raw.data() + 14);
	auto *th = reinterpret_cast<const rte_tcp_hdr *>(out[0].raw.data() + 34);
	EXPECT_EQ(th->cksum, rte_ipv4_phdr_cksum(ip, 0));
	EXPECT_EQ(ip->hdr_checksum, 0);
	// NIC says BAD: dropped even though the bytes are right.
	Peer q;
	q.port = 40100;
	q.snd_nxt = q.iss;
	m = to_mbuf(seg(q, SYN, "", opt_mss(1460)));
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_BAD;
	net_stack_input(s, &m, 1);
	EXPECT_TRUE(step().empty());
	EXPECT_EQ(ctr(NET_C_drop_tcp_bad_cksum), 1u);
}

// The virtio case: TCP/UDP checksums offloaded, the IPv4 header's not.
// The header is summed here, the L4 field holds the pseudo-header sum, and
// the counters say which path each took; the RX verdicts are counted by
// kind (IP and L4 apart).
TEST_F(Net, L4ChecksumOffloadWithoutTheHeaders)
{
	cfg.tx_cksum_offload = true;
	cfg.rx_cksum_offload = true;
	make();
	p.snd_nxt = p.iss;
	Bytes syn = seg(p, SYN, "", opt_mss(1460));
	syn[34 + 16] ^= 0xff; // broken L4 checksum, but the NIC says NONE: valid
	rte_mbuf *m = to_mbuf(syn);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_NONE; // IP: unknown, checked here
	net_stack_input(s, &m, 1);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	EXPECT_TRUE(out[0].ol_flags & RTE_MBUF_F_TX_IPV4);
	EXPECT_FALSE(out[0].ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	auto *ip = reinterpret_cast<const rte_ipv4_hdr *>(out[0].raw.data() + 14);
	auto *th = reinterpret_cast<const rte_tcp_hdr *>(out[0].raw.data() + 34);
	EXPECT_EQ(th->cksum, rte_ipv4_phdr_cksum(ip, 0));
	EXPECT_EQ(rte_raw_cksum(ip, sizeof(*ip)), 0xffff); // a valid header
	EXPECT_EQ(ctr(NET_C_tx_ip_cksum_sw), 1u);
	EXPECT_EQ(ctr(NET_C_tx_ip_cksum_offload), 0u);
	EXPECT_EQ(ctr(NET_C_tx_l4_cksum_offload), 1u);
	EXPECT_EQ(ctr(NET_C_tx_l4_cksum_sw), 0u);
	EXPECT_EQ(ctr(NET_C_rx_ip_cksum_unknown), 1u);
	EXPECT_EQ(ctr(NET_C_rx_l4_cksum_none), 1u);
	// IP flag BAD while the header offload is off: not trusted, the
	// header (valid) is checked here; L4 BAD is trusted: dropped.
	Peer q;
	q.port = 40100;
	q.snd_nxt = q.iss;
	m = to_mbuf(seg(q, SYN, "", opt_mss(1460)));
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD | RTE_MBUF_F_RX_L4_CKSUM_BAD;
	net_stack_input(s, &m, 1);
	EXPECT_TRUE(step().empty());
	EXPECT_EQ(ctr(NET_C_rx_ip_cksum_bad), 1u);
	EXPECT_EQ(ctr(NET_C_rx_l4_cksum_bad), 1u);
	EXPECT_EQ(ctr(NET_C_drop_ip_bad_cksum), 0u);
	EXPECT_EQ(ctr(NET_C_drop_tcp_bad_cksum), 1u);
}

// No offload: everything summed here and counted so.
TEST_F(Net, NoChecksumOffloadCountsSoftware)
{
	make();
	p.snd_nxt = p.iss;
	rte_mbuf *m = to_mbuf(seg(p, SYN, "", opt_mss(1460)));
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	net_stack_input(s, &m, 1);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].ol_flags & (RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IP_CKSUM), 0u);
	EXPECT_EQ(ctr(NET_C_tx_ip_cksum_sw), 1u);
	EXPECT_EQ(ctr(NET_C_tx_l4_cksum_sw), 1u);
	EXPECT_EQ(ctr(NET_C_tx_l4_cksum_offload) + ctr(NET_C_tx_ip_cksum_offload), 0u);
	// the flags are counted as the port set them, trusted or not
	EXPECT_EQ(ctr(NET_C_rx_ip_cksum_good), 1u);
	EXPECT_EQ(ctr(NET_C_rx_l4_cksum_good), 1u);
}

TEST_F(Net, RandomGarbageNeverCrashes)
{
	ASSERT_NO_FATAL_FAILURE(make_open());
	std::mt19937 rng(12345);
	std::vector<Bytes> seeds = {
		seg_at(p, p.snd_nxt, ACK | PSH, "get key\r\n"),
		seg_at(p, p.snd_nxt, SYN, "", opt_mss(1460)),
		udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "udp payload"),
		icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, 1, "ping"),
	};
	uint64_t injected = 0, rx_before = ctr(NET_C_rx_packets);
	for (int i = 0; i < 20000; i++) {
		Bytes f = seeds[rng() % seeds.size()];
		int flips = 1 + rng() % 4;
		for (int k = 0; k < flips; k++)
			f[rng() % f.size()] = uint8_t(rng());
		if (rng() % 4 == 0)
			f.resize(rng() % (f.size() + 1));
		if (rng() % 2)
			fix_checksums(f); // get past the checksums to the parsers
		if (f.empty())
			continue;
		inject(f);
		injected++;
		if (i % 64 == 0) {
			now += 1000;
			step();
		}
	}
	now += 100000000;
	step();
	EXPECT_EQ(ctr(NET_C_rx_packets) - rx_before, injected) << "every frame was seen";
	// Once the timers have run out what the garbage opened, the stack
	// still serves: a new peer opens a connection and is answered.
	for (int i = 0; i < 300; i++)
		advance(1000000);
	Peer q;
	q.port = 41000;
	net_conn *d = open(q);
	ASSERT_NE(d, nullptr) << dump();
	send_frame(seg(q, ACK | PSH, "get k\r\n"));
	EXPECT_EQ(app.rx[d], "get k\r\n");
}

TEST_F(Net, BadConfigIsRefusedWithAMessage)
{
	char err[256] = "";
	net_stack_config c = cfg;
	c.max_conns = 0;
	EXPECT_EQ(net_stack_create(&c, err, sizeof(err)), nullptr);
	EXPECT_NE(std::string(err).find("max_conns"), std::string::npos);
	c = cfg;
	c.tx_pool = nullptr;
	EXPECT_EQ(net_stack_create(&c, err, sizeof(err)), nullptr);
	c = cfg;
	c.mtu = 100;
	EXPECT_EQ(net_stack_create(&c, err, sizeof(err)), nullptr);
	c = cfg;
	c.mac = rte_ether_addr{};
	EXPECT_EQ(net_stack_create(&c, err, sizeof(err)), nullptr);
	for (unsigned i = 0; i < NET_C__COUNT; i++) {
		EXPECT_NE(net_counter_name(net_counter_id(i)), nullptr);
		EXPECT_NE(net_counter_desc(net_counter_id(i)), nullptr);
	}
	EXPECT_EQ(net_counter_name(NET_C__COUNT), nullptr);
	make();
	send_frame(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 1, 1, "x"));
	uint64_t all[NET_C__COUNT];
	net_stack_counters_read(s, all);
	EXPECT_EQ(all[NET_C_icmp_echo_replies], 1u);
	EXPECT_EQ(all[NET_C_rx_packets], 1u);
	EXPECT_EQ(all[NET_C_tx_packets], 1u);
}

} // namespace
