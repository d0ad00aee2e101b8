/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP's send path: the send API (net.h: the send ring, window/commit),
 * the output list that connections with something to send wait on, and
 * segmentation: building segments, sending what the windows allow (flow
 * control against the peer's window, NewReno's cwnd), pure ACKs, RSTs,
 * the persist state and retransmission of the first unacknowledged
 * segment.
 */
#include <string.h>

#include "net/net_tcp.h"

/* Segments one connection may build per turn on the output list. */
#define TCP_BURST_PER_CONN 32

#define TCP_OPT_MSS_LEN 4
#define TCP_OPT_WS_LEN 4 /* NOP + kind 3 + len 3 + shift */

/* Build Ethernet, IPv4 and TCP headers (options included) for a segment
 * with `len` payload bytes, with room for them after the headers unless
 * the payload goes elsewhere (`chained`: an mbuf pointing into the send
 * ring); the payload and checksum are left to the caller. */
static struct rte_mbuf *
tcp_build(struct net_stack *s, const struct rte_ether_addr *mac,
	  const struct net_conn_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
	  uint16_t wnd, uint16_t mss_opt, int ws_opt, uint32_t len, bool chained,
	  struct rte_ipv4_hdr **ipp, struct rte_tcp_hdr **thp)
{
	uint16_t optlen = (mss_opt ? TCP_OPT_MSS_LEN : 0) + (ws_opt >= 0 ? TCP_OPT_WS_LEN : 0);
	uint16_t l4_len = (uint16_t)(sizeof(struct rte_tcp_hdr) + optlen + len);
	struct rte_mbuf *m = net_tx_alloc(s);
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint8_t *opt;

	if (m == NULL)
		return NULL;
	if (rte_pktmbuf_append(m, (uint16_t)(sizeof(struct rte_ether_hdr) + sizeof(*ip) + l4_len -
					     (chained ? len : 0))) == NULL) {
		rte_pktmbuf_free(m);
		NET_INC(s, mempool_empty);
		return NULL;
	}
	ip = net_ipv4_build(s, m, mac, k->raddr, IPPROTO_TCP, l4_len);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(k->lport);
	th->dst_port = rte_cpu_to_be_16(k->rport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = (flags & RTE_TCP_ACK_FLAG) ? rte_cpu_to_be_32(ack) : 0;
	th->data_off = (uint8_t)(((sizeof(*th) + optlen) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(wnd);
	th->cksum = 0;
	th->tcp_urp = 0;
	opt = (uint8_t *)(th + 1);
	if (mss_opt) {
		opt[0] = 2;
		opt[1] = 4;
		opt[2] = mss_opt >> 8;
		opt[3] = mss_opt & 0xff;
		opt += TCP_OPT_MSS_LEN;
	}
	if (ws_opt >= 0) {
		opt[0] = 1; /* NOP keeps the next option aligned */
		opt[1] = 3;
		opt[2] = 3;
		opt[3] = (uint8_t)ws_opt;
	}
	m->l4_len = sizeof(*th) + optlen;
	*ipp = ip;
	*thp = th;
	return m;
}

static void
tcp_finish(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	   struct rte_tcp_hdr *th)
{
	th->cksum = net_l4_cksum(s, m, ip, th, true);
	net_tx_push(s, m);
	NET_INC(s, tcp_tx_segs);
	if (th->tcp_flags & RTE_TCP_RST_FLAG)
		NET_INC(s, tcp_resets_tx);
}

void
tcp_send_raw(struct net_stack *s, const struct rte_ether_addr *mac,
	     const struct net_conn_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
	     uint16_t wnd, uint16_t mss_opt, int ws_opt)
{
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m = tcp_build(s, mac, k, seq, ack, flags, wnd, mss_opt, ws_opt, 0,
				       false, &ip, &th);

	if (m != NULL)
		tcp_finish(s, m, ip, th);
}

void
tcp_send_raw_data(struct net_stack *s, const struct rte_ether_addr *mac,
		  const struct net_conn_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
		  const void *data, uint32_t len)
{
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m = tcp_build(s, mac, k, seq, ack, flags, 0, 0, -1, len, false, &ip,
				       &th);

	if (m == NULL)
		return;
	memcpy((uint8_t *)(th + 1), data, len);
	tcp_finish(s, m, ip, th);
}

/* Whether the ring's bytes [off, off + len) can leave without a copy:
 * enough of them, not wrapping round the ring's end, in a pair contiguous
 * in IOVA space. */
static bool
tcp_zero_copy_ok(const struct net_stack *s, const struct net_conn *c, uint32_t off,
		 uint32_t len)
{
	return s->cfg.tx_zero_copy_min != 0 && len >= s->cfg.tx_zero_copy_min &&
	       net_sndbuf_pos(&c->snd, s->cfg.sndbuf, off) + len <= s->cfg.sndbuf &&
	       tcp_bufs_tail(s, c->bufs)->iova != RTE_BAD_IOVA;
}

/* Chains to m (headers only) an mbuf pointing at the ring's bytes [off,
 * off + len): the pair's count keeps its memory out of the pool until the
 * driver frees that mbuf (struct net_bufs_tail). False when no mbuf is
 * left. */
static bool
tcp_chain_ring(struct net_stack *s, struct net_conn *c, struct rte_mbuf *m, uint32_t off,
	       uint32_t len)
{
	struct net_bufs_tail *t = tcp_bufs_tail(s, c->bufs);
	uint32_t pos = net_sndbuf_pos(&c->snd, s->cfg.sndbuf, off);
	struct rte_mbuf *d = net_tx_alloc_extra(s);

	if (d == NULL)
		return false;
	rte_mbuf_ext_refcnt_update(&t->shared, 1);
	rte_pktmbuf_attach_extbuf(d, c->bufs + pos, t->iova + pos, (uint16_t)len, &t->shared);
	d->data_len = (uint16_t)len;
	d->pkt_len = len;
	rte_pktmbuf_chain(m, d); /* two segments: cannot fail */
	NET_INC(s, tcp_tx_zero_copy);
	return true;
}

bool
tcp_xmit(struct net_stack *s, struct net_conn *c, uint32_t seq, uint32_t len,
	 uint8_t flags)
{
	bool syn = flags & RTE_TCP_SYN_FLAG;
	uint32_t space = tcp_rcv_space(c);
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint32_t off = seq - tcp_data_seq(c);
	struct rte_mbuf *m;
	bool zero_copy;
	uint16_t wnd;
	int ws_opt = -1;

	if (syn) {
		wnd = (uint16_t)RTE_MIN(space, 0xffffu); /* never scaled in a SYN */
		if (c->flags & CF_WS_OFFER)
			ws_opt = c->rcv_wscale;
	} else {
		wnd = (uint16_t)RTE_MIN(space >> c->rcv_wscale, 0xffffu);
	}
	zero_copy = len > 0 && tcp_zero_copy_ok(s, c, off, len);
	m = tcp_build(s, &c->peer_mac, &c->key, seq, c->rcv_nxt, flags, wnd,
		      syn ? s->mss : 0, ws_opt, len, zero_copy, &ip, &th);
	if (m == NULL)
		return false;
	if (zero_copy) {
		if (!tcp_chain_ring(s, c, m, off, len)) {
			rte_pktmbuf_free(m); /* counted as mempool_empty */
			return false;
		}
		if (len > c->mss) {
			/* TSO (tcp_seg_max): the NIC cuts it into MSS segments */
			m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
			m->tso_segsz = c->mss;
			NET_INC(s, tcp_tx_tso);
		}
	} else if (len > 0) {
		net_sndbuf_copy(&c->snd, c->bufs, s->cfg.sndbuf, off,
				(uint8_t *)th + (th->data_off >> 4) * 4, len);
	}
	tcp_finish(s, m, ip, th);
	if (flags & RTE_TCP_ACK_FLAG) {
		uint32_t edge = c->rcv_nxt + ((uint32_t)wnd << (syn ? 0 : c->rcv_wscale));

		if (seq_gt(edge, c->rcv_adv) || c->rcv_adv == 0)
			c->rcv_adv = edge;
		c->flags &= ~(CF_ACK_NOW | CF_DELACK);
		c->deadline[TD_DELACK] = 0;
		c->segs_unacked = 0;
	}
	return true;
}

void
tcp_send_ack(struct net_stack *s, struct net_conn *c)
{
	tcp_xmit(s, c, c->snd_nxt, 0, RTE_TCP_ACK_FLAG);
}

void
tcp_send_rst(struct net_stack *s, struct net_conn *c)
{
	if (!(c->flags & CF_MAC_OK) || c->state == TCP_CLOSED)
		return;
	tcp_xmit(s, c, c->snd_max, 0, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
}

void
tcp_retransmit_first(struct net_stack *s, struct net_conn *c)
{
	uint32_t len = RTE_MIN(c->snd.len, (uint32_t)c->mss);
	uint8_t flags = RTE_TCP_ACK_FLAG;

	len = RTE_MIN(len, tcp_flight(c));
	if ((c->flags & CF_FIN_QUEUED) && c->snd_una + len == c->fin_seq &&
	    seq_gt(c->snd_max, c->fin_seq))
		flags |= RTE_TCP_FIN_FLAG;
	if (len == 0 && !(flags & RTE_TCP_FIN_FLAG))
		return;
	if (tcp_xmit(s, c, c->snd_una, len, flags)) {
		NET_INC(s, tcp_retransmits);
		c->flags &= ~CF_RTT_TIMING; /* Karn */
	}
}

/* The most data one segment may carry now: the MSS, or with TSO as many
 * whole MSS as lie contiguous in the send ring from snd_nxt (a segment is
 * one mbuf pointing into the ring), up to tx_tso_max. */
static uint32_t
tcp_seg_max(const struct net_stack *s, const struct net_conn *c)
{
	uint32_t pos, room;

	if (s->cfg.tx_tso_max <= c->mss || tcp_bufs_tail(s, c->bufs)->iova == RTE_BAD_IOVA)
		return c->mss;
	pos = net_sndbuf_pos(&c->snd, s->cfg.sndbuf, c->snd_nxt - tcp_data_seq(c));
	room = RTE_MIN(s->cfg.sndbuf - pos, s->cfg.tx_tso_max);
	return room > c->mss ? room - room % c->mss : c->mss;
}

static uint32_t
tcp_unsent(const struct net_conn *c)
{
	uint32_t off = c->snd_nxt - tcp_data_seq(c);

	return off < c->snd.len ? c->snd.len - off : 0;
}

static bool
tcp_output_syn(struct net_stack *s, struct net_conn *c)
{
	uint8_t flags = RTE_TCP_SYN_FLAG;

	if (!(c->flags & CF_MAC_OK)) {
		if (!net_arp_resolve(s, c->key.raddr, &c->peer_mac)) {
			/* Look again next tick: cheap, the request is rate limited. */
			tcp_set_deadline(s, c, TD_PERSIST, s->now + 1000);
			return true;
		}
		c->flags |= CF_MAC_OK;
	}
	if (c->snd_nxt != c->iss) {
		/* SYN in flight (the RTO resends it); a challenge ACK may be owed. */
		if ((c->flags & CF_ACK_NOW) && c->state == TCP_SYN_RCVD)
			tcp_send_ack(s, c);
		c->flags &= ~CF_ACK_NOW;
		return true;
	}
	if (c->state == TCP_SYN_RCVD)
		flags |= RTE_TCP_ACK_FLAG;
	if (!tcp_xmit(s, c, c->iss, 0, flags))
		return false;
	if (c->snd_max != c->iss) {
		NET_INC(s, tcp_retransmits);
	} else {
		c->snd_max = c->iss + 1;
		c->rtt_seq = c->iss;
		c->rtt_start = s->now;
		c->flags |= CF_RTT_TIMING;
	}
	c->snd_nxt = c->iss + 1;
	if (c->deadline[TD_RTX] == 0)
		tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
	return true;
}

bool
tcp_output(struct net_stack *s, struct net_conn *c)
{
	unsigned segs = 0;

	switch (c->state) {
	case TCP_CLOSED:
		return true;
	case TCP_SYN_SENT:
	case TCP_SYN_RCVD:
		return tcp_output_syn(s, c);
	case TCP_TIME_WAIT:
		if (c->flags & CF_ACK_NOW)
			tcp_send_ack(s, c);
		return !(c->flags & CF_ACK_NOW);
	default:
		break;
	}
	for (;;) {
		uint32_t unsent = tcp_unsent(c);
		uint32_t in_flight = c->snd_nxt - c->snd_una;
		uint32_t wnd = RTE_MIN(c->snd_wnd, c->cwnd);
		uint32_t usable = wnd > in_flight ? wnd - in_flight : 0;
		uint32_t len = RTE_MIN(RTE_MIN(unsent, usable),
				       unsent > c->mss ? tcp_seg_max(s, c) : (uint32_t)c->mss);
		bool fin = (c->flags & CF_FIN_QUEUED) && c->snd_nxt + len == c->fin_seq;
		uint8_t flags = RTE_TCP_ACK_FLAG;

		if (len == 0 && !fin)
			break;
		/* Sender SWS avoidance: with data in flight, wait for ACKs
		 * rather than send a runt because the window is nearly full. */
		if (len < unsent && len < c->mss && in_flight > 0)
			break;
		if (segs == TCP_BURST_PER_CONN || !net_tx_room(s))
			return false; /* more next turn; not a drop */
		if (len > 0 && len == unsent)
			flags |= RTE_TCP_PSH_FLAG;
		if (fin)
			flags |= RTE_TCP_FIN_FLAG;
		if (!tcp_xmit(s, c, c->snd_nxt, len, flags))
			return false;
		if (seq_lt(c->snd_nxt, c->snd_max)) {
			NET_INC(s, tcp_retransmits);
		} else if (!(c->flags & CF_RTT_TIMING)) {
			c->rtt_seq = c->snd_nxt;
			c->rtt_start = s->now;
			c->flags |= CF_RTT_TIMING;
		}
		c->snd_nxt += len + (fin ? 1 : 0);
		if (seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		if (c->deadline[TD_RTX] == 0)
			tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
		segs++;
	}
	/* Flow control: data waits, nothing is in flight to bring an ACK,
	 * and the peer's window is closed: probe it (persist). */
	if (tcp_unsent(c) > 0 && c->snd_nxt == c->snd_una && c->snd_wnd == 0 &&
	    !(c->flags & CF_PERSIST)) {
		/* Also after an RTO pulled snd_nxt back into a closed window:
		 * retransmission waits for the window, probes keep it alive. */
		c->flags |= CF_PERSIST;
		c->backoff = 0;
		c->retries = 0;
		c->deadline[TD_RTX] = 0;
		tcp_set_deadline(s, c, TD_PERSIST,
				 s->now + RTE_MAX(tcp_rto_current(s, c),
						  (uint32_t)s->cfg.rto_min_us));
	}
	if (c->flags & CF_ACK_NOW) {
		tcp_send_ack(s, c);
		if (c->flags & CF_ACK_NOW)
			return false;
	}
	return true;
}

/* --- the send API (net.h) and the output list --- */

/* c waits for a pair: the reserved port's connections at the head of
 * the list, so that they are resumed first and a waiter at the head that
 * may not take a pair means none behind it may either. */
void
tcp_buf_wait(struct net_stack *s, struct net_conn *c)
{
	if (c->flags & CF_BUF_WAIT)
		return;
	c->flags |= CF_BUF_WAIT;
	if (tcp_conn_reserved(s, c))
		TAILQ_INSERT_HEAD(&s->buf_waiters, c, wait_link);
	else
		TAILQ_INSERT_TAIL(&s->buf_waiters, c, wait_link);
}

size_t
net_tcp_send_space(const struct net_conn *c)
{
	if (c->flags & (CF_APP_CLOSED | CF_RELEASED))
		return 0;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RCVD:
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		return c->stack->cfg.sndbuf - c->snd.len;
	default:
		return 0;
	}
}

size_t
net_tcp_send_queued(const struct net_conn *c)
{
	return c->snd.len;
}

size_t
net_tcp_send(struct net_conn *c, const void *data, size_t len)
{
	size_t space = net_tcp_send_space(c);
	uint32_t n;

	if (len > space) {
		c->flags |= CF_WANT_WRITE;
		len = space;
	}
	if (len == 0)
		return 0;
	if (unlikely(!tcp_bufs_attach(c->stack, c))) {
		/* Nothing will be acknowledged to call writable: wait for a
		 * buffer pair instead (net_tcp_wake_buf_waiters). */
		c->flags |= CF_WANT_WRITE;
		tcp_buf_wait(c->stack, c);
		return 0;
	}
	n = net_sndbuf_append(&c->snd, c->bufs, c->stack->cfg.sndbuf, data, (uint32_t)len);
	tcp_want_output(c->stack, c);
	return n;
}

void *
net_tcp_send_window(struct net_conn *c, size_t *room)
{
	uint32_t cap = c->stack->cfg.sndbuf;
	uint32_t tail;

	*room = 0;
	if (net_tcp_send_space(c) == 0 || !tcp_bufs_attach(c->stack, c))
		return NULL;
	tail = net_sndbuf_pos(&c->snd, cap, c->snd.len);
	*room = RTE_MIN(cap - tail, cap - c->snd.len);
	return c->bufs + tail;
}

size_t
net_tcp_send_commit(struct net_conn *c, const void *at, size_t n)
{
	uint32_t cap = c->stack->cfg.sndbuf;
	uint32_t tail;

	if (n == 0 || c->bufs == NULL || n > net_tcp_send_space(c))
		return 0;
	tail = net_sndbuf_pos(&c->snd, cap, c->snd.len);
	if ((const uint8_t *)at != c->bufs + tail || tail + n > cap)
		return 0;
	c->snd.len += (uint32_t)n;
	tcp_want_output(c->stack, c);
	return n;
}

void
tcp_want_output(struct net_stack *s, struct net_conn *c)
{
	if (c->flags & (CF_ON_OUTPUT | CF_RELEASED))
		return;
	c->flags |= CF_ON_OUTPUT;
	TAILQ_INSERT_TAIL(&s->output_list, c, out_link);
}

void
net_tcp_output_all(struct net_stack *s)
{
	struct net_conn *c;

	/* Connections take turns: tcp_output builds a bounded number of
	 * segments and a connection with more to send goes back to the tail,
	 * so one bulk sender cannot starve the rest. The loop ends when the
	 * list is empty, the TX array is full, or a turn made no progress
	 * (the mempool is empty). */
	while ((c = TAILQ_FIRST(&s->output_list)) != NULL && net_tx_room(s)) {
		uint16_t before = s->tx_count;

		TAILQ_REMOVE(&s->output_list, c, out_link);
		c->flags &= ~CF_ON_OUTPUT;
		if (!tcp_output(s, c)) {
			tcp_want_output(s, c);
			if (s->tx_count == before)
				break;
		}
	}
}
