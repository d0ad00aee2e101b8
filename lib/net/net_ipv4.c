/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * IPv4 input (RFC 791 header checks) and ICMP echo (RFC 792). Fragments
 * and options are dropped and counted: memcached requests and our TCP
 * segments never need them, and reassembly would be state an attacker
 * could fill.
 */
#include <rte_icmp.h>

#include "net/net_private.h"

static bool
ip_cksum_ok(const struct net_stack *s, const struct rte_mbuf *m,
	    const struct rte_ipv4_hdr *ip, uint16_t ihl)
{
	if (s->cfg.rx_ip_cksum_offload) {
		uint64_t f = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

		/* NONE: the data's checksum is wrong but the NIC verified it. */
		if (f == RTE_MBUF_F_RX_IP_CKSUM_GOOD || f == RTE_MBUF_F_RX_IP_CKSUM_NONE)
			return true;
		if (f == RTE_MBUF_F_RX_IP_CKSUM_BAD)
			return false;
	}
	if (likely(ihl == sizeof(*ip)))
		return net_cksum_20(ip) == 0xffff;
	return rte_raw_cksum(ip, ihl) == 0xffff;
}

/* The port's RX checksum verdicts, counted by kind (net_counters.h keeps
 * each four in the order unknown, bad, good, none): which of the paths
 * below a packet took, the NIC's or the software check. The two flag bits
 * of each mask become an index without a branch. */
_Static_assert(NET_C_rx_ip_cksum_bad == NET_C_rx_ip_cksum_unknown + 1 &&
	       NET_C_rx_ip_cksum_good == NET_C_rx_ip_cksum_unknown + 2 &&
	       NET_C_rx_ip_cksum_none == NET_C_rx_ip_cksum_unknown + 3 &&
	       NET_C_rx_l4_cksum_bad == NET_C_rx_l4_cksum_unknown + 1 &&
	       NET_C_rx_l4_cksum_good == NET_C_rx_l4_cksum_unknown + 2 &&
	       NET_C_rx_l4_cksum_none == NET_C_rx_l4_cksum_unknown + 3,
	       "the RX checksum verdict counters out of order");
_Static_assert(RTE_MBUF_F_RX_IP_CKSUM_BAD == 1ull << 4 && RTE_MBUF_F_RX_IP_CKSUM_GOOD == 1ull << 7 &&
	       RTE_MBUF_F_RX_L4_CKSUM_BAD == 1ull << 3 && RTE_MBUF_F_RX_L4_CKSUM_GOOD == 1ull << 8,
	       "DPDK's RX checksum flags moved");

static inline void
count_ip_verdict(struct net_stack *s, uint64_t f)
{
	s->ctr[NET_C_rx_ip_cksum_unknown + (((f >> 4) & 1) | ((f >> 6) & 2))]++;
}

static inline void
count_l4_verdict(struct net_stack *s, uint64_t f)
{
	s->ctr[NET_C_rx_l4_cksum_unknown + (((f >> 3) & 1) | ((f >> 7) & 2))]++;
}

/* Cold: pings are rare next to the traffic served, and in line its reply
 * building would sit among net_ipv4_input's hot lines. */
static __attribute__((cold)) void
icmp_input(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	   uint16_t l4_len)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint32_t addr;
	uint16_t ck;

	if (l4_len < sizeof(*icmp) || rte_raw_cksum(icmp, l4_len) != 0xffff ||
	    icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0) {
		NET_INC(s, drop_icmp);
		goto drop;
	}
	NET_INC(s, icmp_echo_rx);
	if (!net_tx_room(s)) {
		NET_INC(s, tx_queue_full);
		goto drop;
	}
	/* Echo reply in place: same identifier, sequence and data. */
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	ck = ~rte_raw_cksum(icmp, l4_len);
	icmp->icmp_cksum = ck;
	addr = ip->src_addr;
	ip->src_addr = s->ip_be;
	ip->dst_addr = addr;
	ip->time_to_live = 64;
	ip->packet_id = rte_cpu_to_be_16(s->ip_id++);
	ip->hdr_checksum = 0;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&s->cfg.mac, &eth->src_addr);
	m->ol_flags = 0;
	net_ipv4_cksum(s, m, ip);
	net_tx_push(s, m);
	NET_INC(s, icmp_echo_replies);
	return;
drop:
	rte_pktmbuf_free(m);
}

/* A source a reply may go to. Broadcast and multicast sources are how
 * reflection attacks reach many hosts at once (a smurf with ICMP echo, a
 * memcached amplification with UDP); 0/8, loopback, class E and our own
 * address are never a real peer (RFC 1122 3.2.1.3). */
static bool
source_answerable(const struct net_stack *s, uint32_t src)
{
	uint32_t top = src >> 24;

	if (top == 0 || top == 127 || top >= 224 || src == s->ip)
		return false;
	/* the subnet's broadcast address (not on /31 and /32 point-to-point) */
	if (s->netmask < 0xfffffffeu && net_ip_local_subnet(s, src) &&
	    (src | s->netmask) == 0xffffffffu)
		return false;
	return true;
}

/* The allow-list, checked before anything else looks at the packet: a
 * client outside it creates no state and gets no answer. */
static bool
source_allowed(const struct net_stack *s, uint32_t src)
{
	for (unsigned i = 0; i < s->cfg.n_allow; i++)
		if ((src & s->allow[i].mask) == s->allow[i].addr)
			return true;
	return false;
}

__attribute__((hot)) void
net_ipv4_input(struct net_stack *s, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip;
	uint32_t len = m->data_len - sizeof(struct rte_ether_hdr);
	uint16_t ihl, total;

	if (unlikely(len < sizeof(*ip))) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	ihl = (ip->version_ihl & RTE_IPV4_HDR_IHL_MASK) * RTE_IPV4_IHL_MULTIPLIER;
	total = rte_be_to_cpu_16(ip->total_length);
	if (unlikely((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || total < ihl)) {
		NET_INC(s, drop_ip_bad_header);
		goto drop;
	}
	if (unlikely(total > len || ihl > len)) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	count_ip_verdict(s, m->ol_flags);
	if (unlikely(!ip_cksum_ok(s, m, ip, ihl))) {
		NET_INC(s, drop_ip_bad_cksum);
		goto drop;
	}
	if (unlikely(ip->dst_addr != s->ip_be)) {
		NET_INC(s, drop_ip_not_for_us);
		goto drop;
	}
	if (unlikely(!source_answerable(s, rte_be_to_cpu_32(ip->src_addr)))) {
		NET_INC(s, drop_ip_bad_source);
		goto drop;
	}
	if (s->cfg.n_allow != 0 && !source_allowed(s, rte_be_to_cpu_32(ip->src_addr))) {
		NET_INC(s, drop_ip_not_allowed);
		goto drop;
	}
	if (unlikely(ip->fragment_offset &
		     RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))) {
		NET_INC(s, drop_ip_fragment);
		goto drop;
	}
	if (unlikely(ihl != sizeof(*ip))) {
		NET_INC(s, drop_ip_options);
		goto drop;
	}
	if (unlikely(ip->time_to_live == 0)) {
		NET_INC(s, drop_ip_ttl);
		goto drop;
	}
	/* Drop Ethernet padding so every layer above sees the IP length. */
	if (len > total)
		rte_pktmbuf_trim(m, len - total);
	NET_INC(s, ip_rx);
	switch (ip->next_proto_id) {
	case IPPROTO_TCP:
		count_l4_verdict(s, m->ol_flags);
		net_tcp_input(s, m, ip, total - ihl);
		return;
	case IPPROTO_UDP:
		count_l4_verdict(s, m->ol_flags);
		net_udp_input(s, m, ip, total - ihl);
		return;
	case IPPROTO_ICMP:
		icmp_input(s, m, ip, total - ihl);
		return;
	default:
		NET_INC(s, drop_ip_proto);
	}
drop:
	net_drop_cold(m);
}
