/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP input's entry and the LISTEN state: a segment is parsed and checked,
 * handed to its connection (net_tcp_in.c) or to its listener, which opens
 * connections for SYNs (SYN_RCVD, or a SYN cookie when the backlog or the
 * table is full) and for the ACKs that complete a cookie handshake; a
 * segment for neither is answered with a RST.
 */
#include <string.h>

#include "net/net_tcp.h"

/* --- parsing --- */

/* Parse options; false on malformed ones. Only SYNs' MSS and window
 * scale matter; everything else is skipped. */
static bool
parse_options(const uint8_t *p, uint32_t len, struct tcp_seg *g)
{
	while (len > 0) {
		uint8_t kind = p[0], olen;

		if (kind == 0) /* end of options */
			return true;
		if (kind == 1) { /* NOP */
			p++;
			len--;
			continue;
		}
		if (len < 2)
			return false;
		olen = p[1];
		if (olen < 2 || olen > len)
			return false;
		if (kind == 2) {
			if (olen != 4)
				return false;
			g->has_mss = true;
			g->mss = (uint16_t)(p[2] << 8 | p[3]);
		} else if (kind == 3) {
			if (olen != 3)
				return false;
			g->has_ws = true;
			g->ws = RTE_MIN(p[2], (uint8_t)14); /* RFC 7323 2.3 */
		}
		p += olen;
		len -= olen;
	}
	return true;
}

/* --- LISTEN --- */

/* A handshake completed (from a cookie) with every slot taken. Keeping
 * quiet would leave the peer with a connection that never answers and
 * that it retransmits into for minutes, to be accepted long after it gave
 * up. Refuse it at once, statelessly: the configured reply (memcached's
 * error line) with a FIN, or a RST. */
static void
refuse_full(struct net_stack *s, const struct net_conn_key *k, const struct tcp_seg *g)
{
	const char *reply = s->cfg.full_reply;
	uint32_t ack = g->seq + g->len + ((g->flags & RTE_TCP_FIN_FLAG) ? 1 : 0);

	NET_INC(s, tcp_refused_full);
	if (reply == NULL) {
		tcp_send_raw(s, g->src_mac, k, g->ack, 0, RTE_TCP_RST_FLAG, 0, 0, -1);
		return;
	}
	tcp_send_raw_data(s, g->src_mac, k, g->ack, ack,
			  RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG | RTE_TCP_FIN_FLAG, reply,
			  (uint32_t)strlen(reply));
}

static void
listen_input(struct net_stack *s, struct net_listener *l, const struct net_conn_key *k,
	     struct tcp_seg *g)
{
	struct net_conn *c;

	if (g->flags & RTE_TCP_RST_FLAG)
		return;
	if (g->flags & RTE_TCP_ACK_FLAG) {
		uint16_t mss;

		/* Not a SYN: it may complete a handshake answered with a cookie
		 * - if cookies went out recently (within their lifetime), so a
		 * stray ACK for a closed connection is not taken for a guess. */
		bool cookies_out = !(g->flags & RTE_TCP_SYN_FLAG) && s->last_cookie_at != 0 &&
				   s->now - s->last_cookie_at < tcp_syncookie_lifetime_us();

		if (!cookies_out || !tcp_syncookie_check(s, k, g->seq - 1, g->ack - 1, &mss)) {
			if (cookies_out)
				NET_INC(s, tcp_syncookies_bad);
			else
				NET_INC(s, drop_tcp_no_conn);
			tcp_send_raw(s, g->src_mac, k, g->ack, 0, RTE_TCP_RST_FLAG, 0, 0, -1);
			return;
		}
		c = tcp_conn_alloc(s, k, l->port == s->cfg.reserved_port);
		if (c == NULL) {
			refuse_full(s, k, g);
			return;
		}
		NET_INC(s, tcp_syncookies_ok);
		NET_INC(s, tcp_passive_opens);
		c->flags |= CF_SYNCOOKIE | CF_MAC_OK;
		rte_ether_addr_copy(g->src_mac, &c->peer_mac);
		c->listen_idx = (uint16_t)(l - s->tcp_listen);
		c->irs = g->seq - 1;
		c->rcv_nxt = g->seq;
		c->iss = g->ack - 1;
		c->snd_una = c->snd_nxt = c->snd_max = g->ack;
		c->recover = c->iss;
		c->mss = RTE_MIN(mss, s->mss);
		/* no window scaling: the cookie SYN-ACK did not offer it */
		c->snd_wnd = (uint32_t)g->wnd << c->snd_wscale;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = g->ack;
		c->rcv_adv = c->rcv_nxt;
		tcp_established(s, c);
		if (c->flags & CF_RELEASED)
			return;
		/* The ACK may carry data (or a FIN): process it normally. */
		if (g->len > 0 || (g->flags & RTE_TCP_FIN_FLAG))
			tcp_conn_input(s, c, g);
		return;
	}
	if (!(g->flags & RTE_TCP_SYN_FLAG) || (g->flags & RTE_TCP_FIN_FLAG))
		return;
	if (l->syn_rcvd >= s->cfg.syn_backlog ||
	    !tcp_slot_available(s, l->port == s->cfg.reserved_port)) {
		NET_INC(s, tcp_backlog_full);
		if (!s->cfg.syn_cookies_disabled) {
			uint32_t cookie = tcp_syncookie_make(s, k, g->seq,
							     g->has_mss ? g->mss : 536);
			uint16_t mss = RTE_MIN(g->has_mss ? g->mss : (uint16_t)536, s->mss);

			NET_INC(s, tcp_syncookies_sent);
			s->last_cookie_at = s->now;
			tcp_send_raw(s, g->src_mac, k, cookie, g->seq + 1,
				     RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
				     (uint16_t)RTE_MIN(s->cfg.rcvbuf, 0xffffu), mss, -1);
		}
		return;
	}
	c = tcp_conn_alloc(s, k, l->port == s->cfg.reserved_port);
	if (c == NULL)
		return;
	NET_INC(s, tcp_passive_opens);
	c->state = TCP_SYN_RCVD;
	c->flags |= CF_MAC_OK;
	if (g->has_ws) {
		c->flags |= CF_WS_OFFER;
		c->rcv_wscale = s->rcv_wscale;
	}
	tcp_take_peer_options(s, c, g);
	rte_ether_addr_copy(g->src_mac, &c->peer_mac);
	c->listen_idx = (uint16_t)(l - s->tcp_listen);
	l->syn_rcvd++;
	c->irs = g->seq;
	c->rcv_nxt = g->seq + 1;
	c->iss = tcp_gen_isn(s, k);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->recover = c->iss;
	c->snd_wnd = g->wnd;
	tcp_want_output(s, c);
}

/* --- entry --- */

void
net_tcp_input(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	      uint16_t l4_len)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	struct tcp_seg g = { 0 };
	struct net_conn_key k;
	struct net_listener *l;
	struct net_conn *c;
	uint16_t doff;

	if (unlikely(l4_len < sizeof(*th))) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	doff = (th->data_off >> 4) * 4;
	if (unlikely(doff < sizeof(*th) || doff > l4_len)) {
		NET_INC(s, drop_tcp_bad_header);
		goto drop;
	}
	if (unlikely(!net_l4_cksum_ok(s, m, ip, th, l4_len))) {
		NET_INC(s, drop_tcp_bad_cksum);
		goto drop;
	}
	g.flags = th->tcp_flags & (RTE_TCP_FIN_FLAG | RTE_TCP_SYN_FLAG | RTE_TCP_RST_FLAG |
				   RTE_TCP_PSH_FLAG | RTE_TCP_ACK_FLAG | RTE_TCP_URG_FLAG);
	if ((g.flags & RTE_TCP_SYN_FLAG) &&
	    !parse_options((const uint8_t *)(th + 1), doff - sizeof(*th), &g)) {
		NET_INC(s, drop_tcp_bad_header);
		goto drop;
	}
	/* SYN+FIN, SYN+RST: never legitimate. A source port of 0 or a
	 * broadcast/multicast source cannot be answered. */
	if (unlikely(((g.flags & RTE_TCP_SYN_FLAG) &&
		      (g.flags & (RTE_TCP_FIN_FLAG | RTE_TCP_RST_FLAG))) ||
		     th->src_port == 0 || th->dst_port == 0 ||
		     !rte_is_unicast_ether_addr(&eth->src_addr))) {
		NET_INC(s, drop_tcp_bad_header);
		goto drop;
	}
	NET_INC(s, tcp_rx_segs);
	g.seq = rte_be_to_cpu_32(th->sent_seq);
	g.ack = rte_be_to_cpu_32(th->recv_ack);
	g.wnd = rte_be_to_cpu_16(th->rx_win);
	g.data = (const uint8_t *)th + doff;
	g.len = l4_len - doff;
	g.src_mac = &eth->src_addr;
	k.raddr = rte_be_to_cpu_32(ip->src_addr);
	k.rport = rte_be_to_cpu_16(th->src_port);
	k.lport = rte_be_to_cpu_16(th->dst_port);

	c = net_burst_conn(s, m, &k);
	/* A new SYN for a TIME_WAIT connection (RFC 9293 3.6.1): start over. */
	if (c != NULL && c->state == TCP_TIME_WAIT && (g.flags & RTE_TCP_SYN_FLAG) &&
	    !(g.flags & RTE_TCP_ACK_FLAG) && seq_gt(g.seq, c->rcv_nxt) &&
	    tcp_listener(s, k.lport) != NULL) {
		NET_INC(s, tcp_time_wait_reused);
		tcp_conn_release(s, c, NET_CLOSE_NORMAL);
		c = NULL;
	}
	if (c != NULL) {
		tcp_conn_input(s, c, &g);
		tcp_bufs_release_if_idle(s, c);
		goto drop;
	}
	l = tcp_listener(s, k.lport);
	if (l != NULL) {
		listen_input(s, l, &k, &g);
		goto drop;
	}
	/* No connection, no listener (RFC 9293 3.10.7.1): RST unless RST. */
	NET_INC(s, drop_tcp_no_conn);
	if (!(g.flags & RTE_TCP_RST_FLAG)) {
		if (g.flags & RTE_TCP_ACK_FLAG)
			tcp_send_raw(s, g.src_mac, &k, g.ack, 0, RTE_TCP_RST_FLAG, 0, 0, -1);
		else
			tcp_send_raw(s, g.src_mac, &k, 0, g.seq + seg_seq_len(&g),
				     RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG, 0, 0, -1);
	}
drop:
	rte_pktmbuf_free(m);
}
