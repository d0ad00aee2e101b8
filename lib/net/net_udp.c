/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * UDP (RFC 768): datagrams to a listening port go to the application's
 * udp_recv; net_udp_send builds one datagram. No ICMP port-unreachable is
 * sent for closed ports (it would only help scanners).
 */
#include <errno.h>
#include <string.h>

#include <rte_udp.h>

#include "net/net_cksum.h"
#include "net/net_private.h"

static bool
udp_listening(const struct net_stack *s, uint16_t port)
{
	for (unsigned i = 0; i < s->n_udp_listen; i++)
		if (s->udp_listen[i] == port)
			return true;
	return false;
}

__attribute__((hot)) void
net_udp_input(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	      uint16_t l4_len)
{
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct net_udp_peer peer;
	uint16_t ulen;

	if (l4_len < sizeof(*udp)) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < sizeof(*udp) || ulen > l4_len) {
		NET_INC(s, drop_udp_bad_len);
		goto drop;
	}
	/* A zero checksum means the sender did not compute one. The sum
	 * covers ulen bytes: trailing IP payload beyond it is ignored. */
	if (udp->dgram_cksum != 0 && ulen == l4_len &&
	    !net_l4_cksum_ok(s, m, ip, udp, ulen)) {
		NET_INC(s, drop_udp_bad_cksum);
		goto drop;
	}
	if (udp->dgram_cksum != 0 && ulen != l4_len) {
		/* IP payload longer than the datagram: only seen in crafted
		 * packets; the pseudo-header would disagree, so drop. */
		NET_INC(s, drop_udp_bad_len);
		goto drop;
	}
	peer.local_port = rte_be_to_cpu_16(udp->dst_port);
	if (!udp_listening(s, peer.local_port) || s->ops == NULL || s->ops->udp_recv == NULL) {
		NET_INC(s, drop_udp_no_port);
		goto drop;
	}
	peer.addr = rte_be_to_cpu_32(ip->src_addr);
	peer.port = rte_be_to_cpu_16(udp->src_port);
	/* UDP sources are forged at no cost, and a reply can be many times
	 * the request: answer unicast peers on our own subnet only, unless
	 * the configuration allows routed ones. TCP checks its peers by the
	 * handshake instead. */
	if (!rte_is_unicast_ether_addr(&eth->src_addr) || peer.port == 0 ||
	    (!s->cfg.udp_off_subnet && !net_ip_local_subnet(s, peer.addr))) {
		NET_INC(s, drop_udp_bad_source);
		goto drop;
	}
	rte_ether_addr_copy(&eth->src_addr, &peer.mac);
	peer.mac_valid = true;
	NET_INC(s, udp_rx);
	s->ops->udp_recv(s->cfg.app_arg, &peer, (const uint8_t *)(udp + 1),
			 ulen - sizeof(*udp));
drop:
	rte_pktmbuf_free(m);
}

__attribute__((hot)) size_t
net_udp_max_payload(const struct net_stack *s)
{
	return s->cfg.mtu - sizeof(struct rte_ipv4_hdr) - sizeof(struct rte_udp_hdr);
}

/* The checksum's sum of len bytes at b that lie off bytes into the UDP
 * header: a piece at an odd offset has its bytes in the other halves of
 * the 16-bit words, which rotates its folded sum by a byte. */
static uint64_t
cksum_piece(const void *b, size_t len, size_t off, uint64_t sum)
{
	uint16_t f;

	if ((off & 1) == 0 && len == 8) {
		/* two words inline: memcached's frame header is such a piece
		 * in front of every UDP reply */
		uint32_t w[2];

		memcpy(w, b, sizeof(w));
		return sum + w[0] + w[1];
	}
	if ((off & 1) == 0)
		return net_cksum_add(b, len, sum);
	f = net_cksum_fold(net_cksum_add(b, len, 0));
	return sum + (uint16_t)((f << 8) | (f >> 8));
}

__attribute__((hot)) int
net_udp_sendv(struct net_stack *s, const struct net_udp_peer *peer,
	      const struct iovec *iov, unsigned n)
{
	struct rte_ether_addr mac;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct rte_mbuf *m;
	uint16_t l4_len;
	size_t len = 0;
	char *p;

	for (unsigned i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len > net_udp_max_payload(s))
		return -EMSGSIZE;
	if (peer->mac_valid)
		mac = peer->mac;
	else if (!net_arp_resolve(s, peer->addr, &mac))
		return -EHOSTUNREACH;
	m = net_tx_alloc_recycled(s);
	if (m == NULL)
		return -ENOBUFS;
	l4_len = (uint16_t)(sizeof(*udp) + len);
	p = rte_pktmbuf_append(m, sizeof(struct rte_ether_hdr) + sizeof(*ip) + l4_len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	ip = net_ipv4_build(s, m, &mac, peer->addr, IPPROTO_UDP, l4_len);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(peer->local_port);
	udp->dst_port = rte_cpu_to_be_16(peer->port);
	udp->dgram_len = rte_cpu_to_be_16(l4_len);
	p = (char *)(udp + 1);
	for (unsigned i = 0; i < n; i++) {
		if (iov[i].iov_len == 8)
			memcpy(p, iov[i].iov_base, 8); /* a move, not a call */
		else
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	m->l4_len = sizeof(*udp);
	udp->dgram_cksum = 0;
	if (s->cfg.tx_cksum_offload) {
		udp->dgram_cksum = net_l4_cksum(s, m, ip, udp, false);
	} else {
		/* Summed from what was copied and the values just stored, in
		 * memory order: reading the datagram back right after the
		 * copy's stores stalls on store forwarding (issue 24). The
		 * pseudo-header and the UDP header count the length twice. */
		uint64_t sum = (uint64_t)s->ip_be + rte_cpu_to_be_32(peer->addr) +
			       RTE_BE16(IPPROTO_UDP) + 2u * rte_cpu_to_be_16(l4_len) +
			       rte_cpu_to_be_16(peer->local_port) + rte_cpu_to_be_16(peer->port);
		size_t off = sizeof(*udp);
		uint16_t ck;

		for (unsigned i = 0; i < n; i++) {
			sum = cksum_piece(iov[i].iov_base, iov[i].iov_len, off, sum);
			off += iov[i].iov_len;
		}
		ck = (uint16_t)~net_cksum_fold(sum);
		/* RFC 768: a sum of 0 is sent as all ones (0 means "none") */
		udp->dgram_cksum = ck == 0 ? 0xffff : ck;
		NET_INC(s, tx_l4_cksum_sw);
	}
	net_tx_push(s, m);
	NET_INC(s, udp_tx);
	return 0;
}

int
net_udp_send(struct net_stack *s, const struct net_udp_peer *peer,
	     const void *data, size_t len)
{
	const struct iovec one = { .iov_base = (void *)(uintptr_t)data, .iov_len = len };

	return net_udp_sendv(s, peer, &one, 1);
}
