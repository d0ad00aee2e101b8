// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: UDP. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <rte_arp.h>
#include <rte_ip.h>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, UdpDatagramDeliveredAndAnswered)
{
	make();
	auto out = send_frame(udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "hello udp"));
	EXPECT_TRUE(out.empty());
	ASSERT_EQ(app.udp.size(), 1u);
	EXPECT_EQ(app.udp[0].data, "hello udp");
	EXPECT_EQ(app.udp[0].peer.addr, CLI_IP);
	EXPECT_EQ(app.udp[0].peer.port, 5555);
	EXPECT_EQ(app.udp[0].peer.local_port, PORT);
	ASSERT_EQ(net_udp_send(s, &app.udp[0].peer, "reply!", 6), 0);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].proto, IPPROTO_UDP);
	EXPECT_EQ(out[0].payload, "reply!");
	EXPECT_EQ(out[0].sport, PORT);
	EXPECT_EQ(out[0].dport, 5555);
	EXPECT_TRUE(out[0].l4_cksum_ok);
	EXPECT_TRUE(out[0].ip_cksum_ok);
	EXPECT_TRUE(rte_is_same_ether_addr(&out[0].eth_dst, &cmac));

	// Gathered from pieces: one datagram, the pieces in order.
	const struct iovec pieces[3] = { { (void *)"head|", 5 }, { (void *)"", 0 },
					 { (void *)"body", 4 } };
	ASSERT_EQ(net_udp_sendv(s, &app.udp[0].peer, pieces, 3), 0);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload, "head|body");
	EXPECT_TRUE(out[0].l4_cksum_ok);

	// Pieces of odd lengths, so that later ones start at odd offsets (the
	// checksum is summed from the pieces, not read back), one longer than
	// the sum's 32-byte step.
	const std::string longer(37, 'L');
	const struct iovec odd[4] = { { (void *)"a", 1 }, { (void *)"bcd", 3 },
				      { (void *)longer.data(), longer.size() }, { (void *)"z", 1 } };
	ASSERT_EQ(net_udp_sendv(s, &app.udp[0].peer, odd, 4), 0);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload, "abcd" + longer + "z");
	EXPECT_TRUE(out[0].l4_cksum_ok);

	// 8-byte pieces (summed inline) at an even and an odd offset.
	const struct iovec eights[3] = { { (void *)"frame-hd", 8 }, { (void *)"x", 1 },
					 { (void *)"87654321", 8 } };
	ASSERT_EQ(net_udp_sendv(s, &app.udp[0].peer, eights, 3), 0);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].payload, "frame-hdx87654321");
	EXPECT_TRUE(out[0].l4_cksum_ok);

	// Too large, whole or gathered.
	std::string big(net_udp_max_payload(s) + 1, 'x');
	EXPECT_EQ(net_udp_send(s, &app.udp[0].peer, big.data(), big.size()), -EMSGSIZE);
	const struct iovec halves[2] = { { big.data(), 8 }, { big.data() + 8, big.size() - 8 } };
	EXPECT_EQ(net_udp_sendv(s, &app.udp[0].peer, halves, 2), -EMSGSIZE);
	EXPECT_TRUE(step().empty());
	// Closed port: dropped, counted, no reply.
	EXPECT_TRUE(send_frame(udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, 9999, "x")).empty());
	EXPECT_EQ(ctr(NET_C_drop_udp_no_port), 1u);
	// Bad checksum.
	Bytes f = udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "hello");
	f[42] ^= 1;
	EXPECT_TRUE(send_frame(f).empty());
	EXPECT_EQ(ctr(NET_C_drop_udp_bad_cksum), 1u);
	// Length field beyond the IP payload.
	f = udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "hello");
	f[38] = 0;
	f[39] = 200;
	fix_checksums(f);
	EXPECT_TRUE(send_frame(f).empty());
	EXPECT_EQ(ctr(NET_C_drop_udp_bad_len), 1u);
	// Zero checksum means "none": accepted.
	f = udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "nock");
	f[40] = f[41] = 0;
	send_frame(f);
	ASSERT_EQ(app.udp.size(), 2u);
	EXPECT_EQ(app.udp[1].data, "nock");
}

// Reflection: no answer to a source that is many hosts, or none.
TEST_F(Net, UdpAndPingFromUnanswerableSourcesAreDropped)
{
	make();
	const rte_ether_addr bcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	const rte_ether_addr mcast = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 } };
	for (uint32_t src : { ip4(198, 18, 0, 255), ip4(255, 255, 255, 255), ip4(224, 0, 0, 1),
			      ip4(0, 0, 0, 0), ip4(127, 0, 0, 1), ip4(240, 0, 0, 1), SRV_IP }) {
		EXPECT_TRUE(send_frame(udp_frame(cmac, smac, src, SRV_IP, 5555, PORT, "get k\r\n"))
				    .empty());
		EXPECT_TRUE(send_frame(icmp_echo_frame(cmac, smac, src, SRV_IP, 1, 1, "x"))
				    .empty());
	}
	EXPECT_EQ(ctr(NET_C_drop_ip_bad_source), 14u);
	EXPECT_EQ(ctr(NET_C_icmp_echo_replies), 0u);
	// UDP: a broadcast or multicast source MAC, source port 0, a peer
	// beyond the subnet.
	send_frame(udp_frame(bcast, smac, CLI_IP, SRV_IP, 5555, PORT, "x"));
	send_frame(udp_frame(mcast, smac, CLI_IP, SRV_IP, 5555, PORT, "x"));
	send_frame(udp_frame(cmac, smac, CLI_IP, SRV_IP, 0, PORT, "x"));
	send_frame(udp_frame(cmac, smac, ip4(198, 19, 7, 7), SRV_IP, 5555, PORT, "x"));
	EXPECT_EQ(ctr(NET_C_drop_udp_bad_source), 4u);
	EXPECT_TRUE(app.udp.empty());
	// The same peer from the subnet is answered; TCP and ping from beyond
	// it are not affected.
	send_frame(udp_frame(cmac, smac, CLI_IP, SRV_IP, 5555, PORT, "x"));
	EXPECT_EQ(app.udp.size(), 1u);
	EXPECT_EQ(send_frame(icmp_echo_frame(cmac, smac, ip4(198, 19, 7, 7), SRV_IP, 1, 2, "x"))
			  .size(),
		  1u);
}

TEST_F(Net, AllowListDropsOthersBeforeAnyState)
{
	net_cidr allow[2] = { { ip4(198, 18, 0, 1), 0xffffffffu },
			      { ip4(10, 1, 0, 0), 0xffff0000u } };
	cfg.allow = allow;
	cfg.n_allow = 2;
	make();
	allow[0].addr = 0; // the stack keeps its own copy
	// An allowed client: served.
	Peer ok;
	ASSERT_NE(open(ok), nullptr);
	// Another one on the subnet: its SYN, datagram and ping get nothing,
	// and no slot.
	Peer other;
	other.ip = ip4(198, 18, 0, 9);
	EXPECT_TRUE(send_frame(seg(other, SYN, "", opt_mss(1460))).empty());
	EXPECT_TRUE(send_frame(udp_frame(cmac, smac, other.ip, SRV_IP, 5555, PORT, "x")).empty());
	EXPECT_TRUE(send_frame(icmp_echo_frame(cmac, smac, other.ip, SRV_IP, 1, 1, "x")).empty());
	EXPECT_EQ(ctr(NET_C_drop_ip_not_allowed), 3u);
	EXPECT_EQ(net_stack_conns_in_use(s), 1u);
	EXPECT_TRUE(app.udp.empty());
}

TEST_F(Net, UdpFromBeyondTheSubnetWhenAllowed)
{
	cfg.udp_off_subnet = true;
	make();
	send_frame(udp_frame(cmac, smac, ip4(198, 19, 7, 7), SRV_IP, 5555, PORT, "x"));
	EXPECT_EQ(app.udp.size(), 1u);
	EXPECT_EQ(ctr(NET_C_drop_udp_bad_source), 0u);
}

TEST_F(Net, UdpSendToUnknownPeerArps)
{
	make();
	net_udp_peer p{};
	p.addr = ip4(198, 18, 0, 9);
	p.port = 7;
	p.local_port = PORT;
	EXPECT_EQ(net_udp_send(s, &p, "x", 1), -EHOSTUNREACH);
	auto out = step();
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0].arp_op, RTE_ARP_OP_REQUEST);
	EXPECT_EQ(out[0].arp_tip, p.addr);
	// The reply teaches the cache; the send then goes out.
	send_frame(arp_frame(mac(9), smac, RTE_ARP_OP_REPLY, mac(9), p.addr, smac, SRV_IP));
	EXPECT_EQ(net_udp_send(s, &p, "x", 1), 0);
	out = step();
	ASSERT_EQ(out.size(), 1u);
	rte_ether_addr m9 = mac(9);
	EXPECT_TRUE(rte_is_same_ether_addr(&out[0].eth_dst, &m9));
	// Off-subnet without a gateway: unreachable, nothing sent.
	p.addr = ip4(198, 19, 0, 1);
	EXPECT_EQ(net_udp_send(s, &p, "x", 1), -EHOSTUNREACH);
	EXPECT_TRUE(step().empty());
}

} // namespace

/* Issue 24: whether a group runs the first phase (lookups, prefetches,
 * hints) is tried out: a probe times NET_RX_PROBE_SAMPLES (64) groups each
 * way and chooses; the choice holds for 4096 groups, then the next probe.
 * Which way wins depends on the host's caches, so what is checked is the
 * mechanism: groups under 4 frames are never probed (they never run the
 * phase), a probe ends after 128 timed groups, the next one comes 4096
 * groups later, and every frame is delivered whichever way it went. */
TEST_F(Net, RxFirstPhaseProbedAndChosen)
{
	make();
	auto burst = [&](unsigned n) {
		std::vector<rte_mbuf *> m;
		for (unsigned i = 0; i < n; i++) {
			m.push_back(to_mbuf(udp_frame(cmac, smac, CLI_IP, SRV_IP,
						      (uint16_t)(5000 + i), PORT, "get k\r\n")));
			ASSERT_NE(m.back(), nullptr);
		}
		net_stack_input(s, m.data(), (uint16_t)n);
		drain();
	};
	auto probes = [&] { return ctr(NET_C_rx_probes_prepare) + ctr(NET_C_rx_probes_plain); };

	for (int i = 0; i < 300; i++)
		burst(3);
	EXPECT_EQ(probes(), 0u);
	size_t delivered = app.udp.size();
	EXPECT_EQ(delivered, 900u);
	for (int i = 0; i < 127; i++)
		burst(8);
	EXPECT_EQ(probes(), 0u);
	burst(8);
	EXPECT_EQ(probes(), 1u);
	for (int i = 0; i < 4096; i++)
		burst(4);
	EXPECT_EQ(probes(), 1u);
	for (int i = 0; i < 128; i++)
		burst(4);
	EXPECT_EQ(probes(), 2u);
	EXPECT_EQ(app.udp.size(), delivered + 128 * 8 + 4224 * 4);
	EXPECT_EQ(ctr(NET_C_udp_rx), app.udp.size());
}
