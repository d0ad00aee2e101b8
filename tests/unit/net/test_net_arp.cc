// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: link level, ARP, ICMP. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>

#include "net_harness.h"

using namespace nettest;

namespace {

TEST_F(Net, ArpRequestGetsReplyToTheRequester)
{
	make();
	auto out = send_frame(arp_frame(cmac, mac(0xff) /*unused*/, RTE_ARP_OP_REQUEST, cmac,
					CLI_IP, rte_ether_addr{}, SRV_IP));
	// The frame above went to 02:..:ff, not broadcast and not us: dropped.
	EXPECT_TRUE(out.empty());
	EXPECT_EQ(ctr(NET_C_drop_not_our_mac), 1u);

	rte_ether_addr bcast;
	memset(&bcast, 0xff, sizeof(bcast));
	out = send_frame(arp_frame(cmac, bcast, RTE_ARP_OP_REQUEST, cmac, CLI_IP,
				   rte_ether_addr{}, SRV_IP));
	ASSERT_EQ(out.size(), 1u);
	const Pkt &r = out[0];
	EXPECT_EQ(r.ethertype, RTE_ETHER_TYPE_ARP);
	EXPECT_EQ(r.arp_op, RTE_ARP_OP_REPLY);
	EXPECT_TRUE(rte_is_same_ether_addr(&r.eth_dst, &cmac));
	EXPECT_TRUE(rte_is_same_ether_addr(&r.eth_src, &smac));
	EXPECT_TRUE(rte_is_same_ether_addr(&r.arp_sha, &smac));
	EXPECT_TRUE(rte_is_same_ether_addr(&r.arp_tha, &cmac));
	EXPECT_EQ(r.arp_sip, SRV_IP);
	EXPECT_EQ(r.arp_tip, CLI_IP);
	EXPECT_EQ(ctr(NET_C_arp_replies_sent), 1u);

	// A request for another address is not answered.
	out = send_frame(arp_frame(cmac, bcast, RTE_ARP_OP_REQUEST, cmac, CLI_IP, rte_ether_addr{},
				   ip4(198, 18, 0, 3)));
	EXPECT_TRUE(out.empty());
	EXPECT_EQ(ctr(NET_C_arp_drop), 1u);
	// Malformed: wrong hardware length.
	Bytes bad = arp_frame(cmac, bcast, RTE_ARP_OP_REQUEST, cmac, CLI_IP, rte_ether_addr{},
			      SRV_IP);
	bad[14 + 4] = 8;
	EXPECT_TRUE(send_frame(bad).empty());
	EXPECT_EQ(ctr(NET_C_arp_drop), 2u);
	// Truncated.
	bad.resize(30);
	EXPECT_TRUE(send_frame(bad).empty());
	EXPECT_EQ(ctr(NET_C_drop_truncated), 1u);
}

TEST_F(Net, PingGetsEchoReply)
{
	make();
	std::string data = "0123456789abcdefghij";
	auto out = send_frame(icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 77, 5, data));
	ASSERT_EQ(out.size(), 1u);
	const Pkt &r = out[0];
	EXPECT_EQ(r.proto, IPPROTO_ICMP);
	EXPECT_EQ(r.icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	EXPECT_EQ(r.icmp_id, 77);
	EXPECT_EQ(r.icmp_seq, 5);
	EXPECT_EQ(r.payload, data);
	EXPECT_TRUE(r.ip_cksum_ok);
	EXPECT_TRUE(r.l4_cksum_ok);
	EXPECT_EQ(r.ip_src, SRV_IP);
	EXPECT_EQ(r.ip_dst, CLI_IP);
	EXPECT_TRUE(rte_is_same_ether_addr(&r.eth_dst, &cmac));
	EXPECT_EQ(ctr(NET_C_icmp_echo_replies), 1u);

	// A bad ICMP checksum is dropped.
	Bytes f = icmp_echo_frame(cmac, smac, CLI_IP, SRV_IP, 77, 6, data);
	f[34 + 8] ^= 0x55;
	EXPECT_TRUE(send_frame(f).empty());
	EXPECT_EQ(ctr(NET_C_drop_icmp), 1u);
}

} // namespace
