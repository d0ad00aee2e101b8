/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * ARP (RFC 826): answer requests for our address, learn from requests and
 * replies, resolve next hops for active opens and unsolicited UDP. The
 * cache is small and direct-mapped; a collision just evicts, the next
 * resolve asks again. Replies to requests go to the MAC the request came
 * from, so a server never needs its cache.
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_hash_crc.h>

#include "net/net_private.h"

static struct net_arp_entry *
arp_slot(struct net_stack *s, uint32_t ip)
{
	return &s->arp[rte_hash_crc_4byte(ip, 0) & (NET_ARP_SLOTS - 1)];
}

void
net_arp_learn(struct net_stack *s, uint32_t ip, const struct rte_ether_addr *mac)
{
	struct net_arp_entry *e = arp_slot(s, ip);

	if (ip == 0 || !rte_is_unicast_ether_addr(mac) || rte_is_zero_ether_addr(mac))
		return;
	e->ip = ip;
	rte_ether_addr_copy(mac, &e->mac);
	e->learned_at = s->now;
	e->requested_at = 0;
	NET_INC(s, arp_learned);
}

static void
arp_send_request(struct net_stack *s, uint32_t ip)
{
	struct rte_mbuf *m = net_tx_alloc(s);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(&s->cfg.mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&s->cfg.mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = s->ip_be;
	memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = rte_cpu_to_be_32(ip);
	net_tx_push(s, m);
	NET_INC(s, arp_requests_sent);
}

bool
net_arp_resolve(struct net_stack *s, uint32_t ip, struct rte_ether_addr *mac)
{
	struct net_arp_entry *e;

	if (!net_ip_local_subnet(s, ip)) {
		if (s->cfg.gateway == 0)
			return false;
		ip = s->cfg.gateway;
	}
	e = arp_slot(s, ip);
	if (e->ip == ip && e->learned_at != 0 && s->now - e->learned_at < NET_ARP_TTL_US) {
		rte_ether_addr_copy(&e->mac, mac);
		return true;
	}
	if (e->ip != ip || e->requested_at == 0 || s->now - e->requested_at >= NET_ARP_RETRY_US) {
		if (e->ip != ip) {
			e->ip = ip;
			e->learned_at = 0;
		}
		e->requested_at = s->now | 1; /* never 0: 0 means "not asked" */
		arp_send_request(s, ip);
	}
	return false;
}

void
net_arp_input(struct net_stack *s, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	uint32_t sip, tip;
	struct net_arp_entry *e;

	NET_INC(s, arp_rx);
	if (m->data_len < sizeof(*eth) + sizeof(*arp)) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	if (arp->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    (arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST) &&
	     arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REPLY)))
		goto bad;
	sip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
	tip = rte_be_to_cpu_32(arp->arp_data.arp_tip);
	if (tip != s->ip) {
		/* RFC 826 merge: refresh an entry we already hold. */
		e = arp_slot(s, sip);
		if (e->ip == sip && e->learned_at != 0)
			net_arp_learn(s, sip, &arp->arp_data.arp_sha);
		goto bad;
	}
	net_arp_learn(s, sip, &arp->arp_data.arp_sha);
	if (arp->arp_opcode != RTE_BE16(RTE_ARP_OP_REQUEST))
		goto drop;
	/* Turn the request into the reply in place. */
	if (!net_tx_room(s)) {
		NET_INC(s, tx_queue_full);
		goto drop;
	}
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&arp->arp_data.arp_sha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	rte_ether_addr_copy(&s->cfg.mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = s->ip_be;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&s->cfg.mac, &eth->src_addr);
	rte_pktmbuf_trim(m, m->pkt_len - sizeof(*eth) - sizeof(*arp));
	m->ol_flags = 0;
	net_tx_push(s, m);
	NET_INC(s, arp_replies_sent);
	return;
bad:
	NET_INC(s, arp_drop);
drop:
	rte_pktmbuf_free(m);
}
