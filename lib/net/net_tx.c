/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The way out: the TX array (packets built, queued in order until the
 * NIC takes them) and what every outgoing packet is built with (the
 * Ethernet and IPv4 headers, the L4 checksum, the local subnet test).
 */
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "net/net_private.h"

/* --- TX array --- */

/* Take one packet from the stack's stash, refilled NET_TX_BULK at a time
 * with rte_pktmbuf_alloc_bulk: one mempool access per burst instead of one
 * per segment. The bulk call is all or nothing, so a pool too low for a
 * whole refill still gives single packets. */
static struct rte_mbuf *
tx_stash_get(struct net_stack *s)
{
	if (unlikely(s->stash_n == 0)) {
		if (rte_pktmbuf_alloc_bulk(s->cfg.tx_pool, s->stash, NET_TX_BULK) == 0)
			s->stash_n = NET_TX_BULK;
		else
			return rte_pktmbuf_alloc(s->cfg.tx_pool);
	}
	return s->stash[--s->stash_n];
}

/* A packet for a frame when the TX ring has room: from the stash, or
 * (recycled) from the pool cache's top. */
static inline struct rte_mbuf *
tx_alloc(struct net_stack *s, bool recycled)
{
	struct rte_mbuf *m;

	if (unlikely(!net_tx_room(s))) {
		NET_INC(s, tx_queue_full);
		return NULL;
	}
	m = recycled ? rte_pktmbuf_alloc(s->cfg.tx_pool) : tx_stash_get(s);
	if (unlikely(m == NULL))
		NET_INC(s, mempool_empty);
	return m;
}

struct rte_mbuf *
net_tx_alloc(struct net_stack *s)
{
	return tx_alloc(s, false);
}

__attribute__((hot)) struct rte_mbuf *
net_tx_alloc_recycled(struct net_stack *s)
{
	/* One reply a datagram: the stash's packets were taken a burst
	 * ago and are out of the L1 cache by the time they are used (the
	 * 500-key replay: 5.8 more D1 misses a request, callgrind's cache
	 * simulation), the pool cache's top was freed one request ago. */
	return tx_alloc(s, true);
}

struct rte_mbuf *
net_tx_alloc_extra(struct net_stack *s)
{
	struct rte_mbuf *m = tx_stash_get(s);

	if (unlikely(m == NULL))
		NET_INC(s, mempool_empty);
	return m;
}

void
net_drop_cold(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

__attribute__((hot)) void
net_tx_push(struct net_stack *s, struct rte_mbuf *m)
{
	uint32_t i;

	if (unlikely(!net_tx_room(s))) {
		NET_INC(s, tx_queue_full);
		net_drop_cold(m);
		return;
	}
	i = s->tx_head + s->tx_count;
	if (i >= s->tx_cap)
		i -= s->tx_cap;
	s->tx[i] = m;
	s->tx_len[i] = m->pkt_len;
	s->tx_count++;
}

__attribute__((hot)) uint16_t
net_stack_tx_burst_prepare(struct net_stack *s, struct rte_mbuf ***pkts)
{
	/* the queue's first packets, up to the array's end (the rest, if
	 * the ring wraps, at the next burst) */
	s->tx_offered = (uint16_t)RTE_MIN((uint32_t)s->tx_count, (uint32_t)(s->tx_cap - s->tx_head));
	*pkts = s->tx + s->tx_head;
	return s->tx_offered;
}

__attribute__((hot)) void
net_stack_tx_burst_done(struct net_stack *s, uint16_t sent)
{
	uint16_t n = s->tx_offered;
	uint64_t bytes = 0;

	if (sent > n)
		sent = n;
	/* Sent packets belong to the NIC now; touch only what is still ours.
	 * What the NIC did not take stays queued, in order, ahead of what the
	 * next poll builds: freeing it would leave TCP waiting for an RTO
	 * (200 ms at least) for bytes the NIC would have taken a microsecond
	 * later. The array's size bounds the queue; output that finds the
	 * array full waits in the connection's send buffer. */
	NET_ADD(s, tx_packets, sent);
	if (sent < n)
		NET_INC(s, tx_nic_deferred); /* once per burst: a full ring, not a packet count */
	for (uint16_t i = 0; i < sent; i++)
		bytes += s->tx_len[s->tx_head + i];
	NET_ADD(s, tx_bytes, bytes);
	s->tx_count = (uint16_t)(s->tx_count - sent);
	/* An empty queue starts again at the array's front: a burst of
	 * replies then reuses the lines of s->tx and s->tx_len the last
	 * burst wrote, instead of walking the whole array (up to 4,096
	 * entries, 48 KiB) and missing the L1 cache every 8 packets. */
	if (s->tx_count == 0)
		s->tx_head = 0;
	else
		s->tx_head = (uint16_t)(s->tx_head + sent == s->tx_cap ? 0 : s->tx_head + sent);
	s->tx_offered = 0;
}

/* --- headers --- */

__attribute__((hot)) bool
net_ip_local_subnet(const struct net_stack *s, uint32_t ip)
{
	return ((ip ^ s->ip) & s->netmask) == 0;
}

__attribute__((hot)) struct rte_ipv4_hdr *
net_ipv4_build(struct net_stack *s, struct rte_mbuf *m,
	       const struct rte_ether_addr *dst_mac, uint32_t dst_ip,
	       uint8_t proto, uint16_t l4_len)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&s->cfg.mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + l4_len);
	ip->packet_id = rte_cpu_to_be_16(s->ip_id++);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->hdr_checksum = 0;
	ip->src_addr = s->ip_be;
	ip->dst_addr = rte_cpu_to_be_32(dst_ip);
	if (s->cfg.tx_ip_cksum_offload) {
		net_ipv4_cksum(s, m, ip);
	} else {
		/* the sum of the header's 16-bit words from the values just
		 * stored: reading the header back right after its narrow
		 * stores stalls on store forwarding (a tenth of a small UDP
		 * reply's cost, issue 24) */
		uint32_t sum = (RTE_IPV4_VHL_DEF << 8) + sizeof(*ip) + l4_len +
			       (uint16_t)(s->ip_id - 1) + RTE_IPV4_HDR_DF_FLAG + (64u << 8) +
			       proto + (s->ip >> 16) + (s->ip & 0xffff) + (dst_ip >> 16) +
			       (dst_ip & 0xffff);

		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
		m->l2_len = sizeof(struct rte_ether_hdr);
		m->l3_len = sizeof(*ip);
		NET_INC(s, tx_ip_cksum_sw);
	}
	return ip;
}

void
net_ipv4_cksum(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = sizeof(*ip);
	if (s->cfg.tx_ip_cksum_offload) {
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		NET_INC(s, tx_ip_cksum_offload);
	} else {
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		NET_INC(s, tx_ip_cksum_sw);
	}
}

uint16_t
net_l4_cksum(struct net_stack *s, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
	     const void *l4, bool tcp)
{
	if (s->cfg.tx_cksum_offload) {
		/* TX_IPV4 too when the IPv4 header's checksum is not offloaded:
		 * DPDK's L4 offload and TSO need the L3 type */
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 |
			       (tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM);
		NET_INC(s, tx_l4_cksum_offload);
		return rte_ipv4_phdr_cksum(ip, m->ol_flags);
	}
	NET_INC(s, tx_l4_cksum_sw);
	/* the L4 bytes of the first mbuf (all of them, or the headers of a
	 * segment sent without a copy: an even count), then the others' */
	const uint8_t *end = rte_pktmbuf_mtod(m, const uint8_t *) + m->data_len;
	uint64_t sum = net_cksum_add(l4, (size_t)(end - (const uint8_t *)l4),
				     rte_ipv4_phdr_cksum(ip, 0));
	uint16_t ck;

	for (const struct rte_mbuf *g = m->next; g != NULL; g = g->next)
		sum = net_cksum_add(rte_pktmbuf_mtod(g, const void *), g->data_len, sum);
	ck = (uint16_t)~net_cksum_fold(sum);
	/* RFC 768: a UDP sum of 0 is sent as all ones (0 means "none") */
	return ck == 0 && !tcp ? 0xffff : ck;
}
