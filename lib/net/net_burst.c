/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The first phase of an RX burst (net_stack_input): locate the TCP and
 * UDP headers of each frame, look their connections up in one bulk
 * rte_hash call and prefetch them, and show the payloads to the
 * application (rx_hint) so that it can prefetch what the requests read.
 * Nothing here changes state or counts: the second phase (eth_input)
 * validates every frame as if this had not run, and takes this phase's
 * lookup only while no connection was added or removed since. Whether
 * the phase runs at all is tried out as the traffic goes (net_burst_choose).
 */
#include <stdlib.h>

#include <rte_prefetch.h>
#include <rte_udp.h>

#include "net/net_tcp.h"

/* The IPv4 header of a frame for our address without options, with its
 * IP payload length; NULL for anything else (the second phase decides
 * what that is). A chained frame is left alone: the second phase
 * linearizes it. */
static const struct rte_ipv4_hdr *
frame_ipv4(const struct net_stack *s, const struct rte_mbuf *m, uint16_t *l4_len)
{
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	uint16_t total;

	if (m->nb_segs != 1 || m->data_len < sizeof(*eth) + sizeof(*ip))
		return NULL;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ip->version_ihl != RTE_IPV4_VHL_DEF || ip->dst_addr != s->ip_be)
		return NULL;
	total = rte_be_to_cpu_16(ip->total_length);
	if (total < sizeof(*ip) || total > m->data_len - sizeof(*eth))
		return NULL;
	*l4_len = total - sizeof(*ip);
	return ip;
}

/* A TCP segment's connection key and payload; false when its header does
 * not fit. */
static bool
tcp_frame(const struct rte_ipv4_hdr *ip, uint16_t l4_len, struct net_conn_key *k,
	  struct net_rx_hint *h)
{
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
	uint16_t doff;

	if (l4_len < sizeof(*th))
		return false;
	doff = (th->data_off >> 4) * 4;
	if (doff < sizeof(*th) || doff > l4_len)
		return false;
	k->raddr = rte_be_to_cpu_32(ip->src_addr);
	k->rport = rte_be_to_cpu_16(th->src_port);
	k->lport = rte_be_to_cpu_16(th->dst_port);
	*h = (struct net_rx_hint){ (const uint8_t *)th + doff, (uint16_t)(l4_len - doff), false };
	return true;
}

/* A UDP datagram's payload; false when its header does not fit. */
static bool
udp_frame(const struct rte_ipv4_hdr *ip, uint16_t l4_len, struct net_rx_hint *h)
{
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	uint16_t ulen;

	if (l4_len < sizeof(*udp))
		return false;
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < sizeof(*udp) || ulen > l4_len)
		return false;
	*h = (struct net_rx_hint){ (const uint8_t *)(udp + 1), (uint16_t)(ulen - sizeof(*udp)),
				   true };
	return true;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint32_t
median(uint32_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[n / 2];
}

__attribute__((hot)) bool
net_burst_choose(struct net_stack *s, uint16_t n, bool *timed)
{
	struct net_rx_adapt *a = &s->rx_adapt;

	*timed = false;
	if (n < NET_RX_PREPARE_MIN)
		return false;
	if (!a->probing) {
		if (a->left > 0) {
			a->left--;
			return a->prepare;
		}
		a->probing = true;
		a->n[0] = a->n[1] = 0;
	}
	*timed = true;
	a->next = !a->next;
	return a->next;
}

void
net_burst_account(struct net_stack *s, bool prepared, uint64_t cycles, uint16_t n)
{
	struct net_rx_adapt *a = &s->rx_adapt;
	uint64_t per_frame = cycles / n;

	if (a->n[prepared] < NET_RX_PROBE_SAMPLES)
		a->sample[prepared][a->n[prepared]++] =
			per_frame > UINT32_MAX ? UINT32_MAX : (uint32_t)per_frame;
	if (a->n[0] < NET_RX_PROBE_SAMPLES || a->n[1] < NET_RX_PROBE_SAMPLES)
		return;
	/* a tie goes to the cheaper code: without */
	a->prepare = median(a->sample[1], NET_RX_PROBE_SAMPLES) <
		     median(a->sample[0], NET_RX_PROBE_SAMPLES);
	a->probing = false;
	a->left = NET_RX_EXPLOIT_GROUPS;
	if (a->prepare)
		NET_INC(s, rx_probes_prepare);
	else
		NET_INC(s, rx_probes_plain);
}

void
net_burst_prepare(struct net_stack *s, struct rte_mbuf **pkts, uint16_t n)
{
	struct net_conn_key keys[NET_RX_GROUP];
	const void *kp[NET_RX_GROUP];
	void *found[NET_RX_GROUP];
	uint16_t frame_of[NET_RX_GROUP];
	struct net_rx_hint hint[NET_RX_GROUP];
	unsigned nk = 0, nh = 0;
	uint64_t hits = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct net_rx_slot *r = &s->rx.slot[i];
		const struct rte_ipv4_hdr *ip;
		struct net_rx_hint h;
		uint16_t l4_len;

		*r = (struct net_rx_slot){ .m = pkts[i] };
		ip = frame_ipv4(s, pkts[i], &l4_len);
		if (ip == NULL)
			continue;
		if (ip->next_proto_id == IPPROTO_TCP && tcp_frame(ip, l4_len, &keys[nk], &h)) {
			kp[nk] = &keys[nk];
			frame_of[nk++] = i;
		} else if (ip->next_proto_id != IPPROTO_UDP || !udp_frame(ip, l4_len, &h)) {
			continue;
		}
		if (h.len > 0)
			hint[nh++] = h;
	}
	if (nk > 0 && rte_hash_lookup_bulk_data(s->conn_hash, kp, nk, &hits, found) < 0)
		hits = 0;
	for (unsigned j = 0; j < nk; j++) {
		struct net_rx_slot *r = &s->rx.slot[frame_of[j]];

		r->looked_up = true;
		if (!(hits & (1ull << j)))
			continue;
		r->conn = found[j];
		/* the three hot lines (struct net_conn) */
		rte_prefetch0(r->conn);
		rte_prefetch0((const uint8_t *)r->conn + RTE_CACHE_LINE_SIZE);
		rte_prefetch0((const uint8_t *)r->conn + 2 * RTE_CACHE_LINE_SIZE);
	}
	s->rx.epoch = s->conn_epoch;
	if (nh > 0 && s->ops != NULL && s->ops->rx_hint != NULL)
		s->ops->rx_hint(s->cfg.app_arg, hint, nh);
	/* Then where the bytes will go: the end of the receive buffer and of
	 * the send ring of each connection holding a pair (its lines, asked
	 * for above, had the hint's time to arrive). With thousands of
	 * connections waiting for their replies to be acknowledged, thousands
	 * of pairs are held, out of cache, and the copies into them were a
	 * sixth of the worker's time. */
	for (unsigned j = 0; j < nk; j++) {
		const struct net_conn *c = s->rx.slot[frame_of[j]].conn;

		if (c == NULL || c->bufs == NULL)
			continue;
		rte_prefetch0(c->bufs + s->cfg.sndbuf + c->rcv.tail);
		rte_prefetch0(c->bufs + net_sndbuf_pos(&c->snd, s->cfg.sndbuf, c->snd.len));
	}
}

struct net_conn *
net_burst_conn(struct net_stack *s, const struct rte_mbuf *m, const struct net_conn_key *k)
{
	const struct net_rx_slot *r = s->rx.cur;

	if (r != NULL && r->m == m && r->looked_up && s->rx.epoch == s->conn_epoch &&
	    (r->conn == NULL || memcmp(&r->conn->key, k, sizeof(*k)) == 0))
		return r->conn;
	return tcp_conn_lookup(s, k);
}
