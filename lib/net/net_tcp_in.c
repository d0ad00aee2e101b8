/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP input for a connection (net_tcp_listen.c finds it): RFC 9293
 * section 3.10.7 "SEGMENT ARRIVES", with RFC 5961
 * (RST and SYN validation, challenge ACKs), RFC 6298 (RTT estimation,
 * Karn), RFC 5681/6582 (slow start, congestion avoidance, NewReno fast
 * retransmit and recovery) and RFC 7323 window scaling. SACK-permitted
 * and timestamps are ignored: they are simply not echoed in our SYN-ACK.
 */
#include <string.h>

#include "net/net_tcp.h"

/* --- helpers --- */

static void
ack_now(struct net_stack *s, struct net_conn *c)
{
	c->flags |= CF_ACK_NOW;
	tcp_want_output(s, c);
}

/* ACK from inside input rather than at the next output: duplicate ACKs
 * must reach the sender one per segment for its fast retransmit to
 * count three, and bulk senders clock on every second segment. */
static void
ack_immediately(struct net_stack *s, struct net_conn *c)
{
	if (!tcp_xmit(s, c, c->snd_nxt, 0, RTE_TCP_ACK_FLAG))
		ack_now(s, c);
}

static void
challenge_ack(struct net_stack *s, struct net_conn *c)
{
	NET_INC(s, tcp_challenge_acks);
	ack_now(s, c);
}

void
tcp_take_peer_options(struct net_stack *s, struct net_conn *c, const struct tcp_seg *g)
{
	uint16_t peer_mss = g->has_mss ? g->mss : 536;

	c->mss = RTE_MAX(RTE_MIN(peer_mss, s->mss), (uint16_t)64);
	if (g->has_ws && (c->flags & CF_WS_OFFER)) {
		c->snd_wscale = g->ws;
	} else {
		c->snd_wscale = 0;
		c->rcv_wscale = 0;
		c->flags &= ~CF_WS_OFFER;
	}
}

static void
rtt_sample(struct net_stack *s, struct net_conn *c, uint32_t r)
{
	/* RFC 6298 2.2 / 2.3, in microseconds, G = one timer tick. */
	if (c->srtt == 0) {
		c->srtt = RTE_MAX(r, 1u);
		c->rttvar = r / 2;
	} else {
		uint32_t d = r > c->srtt ? r - c->srtt : c->srtt - r;

		c->rttvar = c->rttvar - c->rttvar / 4 + d / 4;
		c->srtt = c->srtt - c->srtt / 8 + r / 8;
	}
	c->rto = (uint32_t)RTE_MIN(RTE_MAX((uint64_t)c->srtt +
					   RTE_MAX(4ull * c->rttvar, 1ull << NET_TICK_SHIFT),
					   s->cfg.rto_min_us),
				   s->cfg.rto_max_us);
}

/* --- ACK processing --- */

/* Congestion control on an ACK of `acked` new bytes (RFC 5681 / 6582). */
static void
cc_on_ack(struct net_stack *s, struct net_conn *c, uint32_t ack, uint32_t acked)
{
	if (c->flags & CF_IN_RECOVERY) {
		if (seq_ge(ack, c->recover)) {
			/* Full ACK: deflate (RFC 6582 3.2 step 3, option 2). */
			c->cwnd = RTE_MAX(RTE_MIN(c->ssthresh, tcp_flight(c) + c->mss),
					  (uint32_t)c->mss);
			c->flags &= ~CF_IN_RECOVERY;
			c->dupacks = 0;
		} else {
			/* Partial ACK: the next hole is lost too. */
			tcp_retransmit_first(s, c);
			c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
			c->cwnd += c->mss;
			if (c->cwnd < c->mss)
				c->cwnd = c->mss;
			tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
		}
		return;
	}
	c->dupacks = 0;
	if (c->cwnd < c->ssthresh) {
		c->cwnd += RTE_MIN(acked, (uint32_t)c->mss); /* slow start */
	} else {
		/* Congestion avoidance with appropriate byte counting. */
		c->bytes_acked += acked;
		if (c->bytes_acked >= c->cwnd) {
			c->bytes_acked -= c->cwnd;
			c->cwnd += c->mss;
		}
	}
}

static void
on_dup_ack(struct net_stack *s, struct net_conn *c)
{
	NET_INC(s, tcp_dup_acks);
	c->dupacks++;
	if (c->flags & CF_IN_RECOVERY) {
		c->cwnd += c->mss; /* each dup ACK: a segment has left */
		tcp_want_output(s, c);
		return;
	}
	if (c->dupacks != 3)
		return;
	/* RFC 6582 3.2 step 1: no second recovery while the ACKs are still
	 * for data sent before the last loss event (recover). */
	if (seq_lt(c->snd_una, c->recover))
		return;
	NET_INC(s, tcp_fast_retransmits);
	c->ssthresh = RTE_MAX(tcp_flight(c) / 2, 2u * c->mss);
	c->recover = c->snd_max;
	c->flags |= CF_IN_RECOVERY;
	tcp_retransmit_first(s, c);
	c->cwnd = c->ssthresh + 3u * c->mss;
	tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
	tcp_want_output(s, c);
}

/* Returns false when the segment must be dropped (after any reply). */
static bool
process_ack(struct net_stack *s, struct net_conn *c, const struct tcp_seg *g)
{
	uint32_t ack = g->ack;
	uint32_t wnd = (uint32_t)g->wnd << c->snd_wscale;

	if (c->flags & CF_PERSIST)
		c->retries = 0; /* the peer answers our probes */

	/* RFC 5961 5.2: acceptable ACKs lie in [snd_una - max window,
	 * snd_max]; anything else (data never sent, or far too old: a blind
	 * injection) is answered with an ACK and dropped. */
	if (seq_gt(ack, c->snd_max) || seq_lt(ack, c->snd_una - c->max_snd_wnd)) {
		NET_INC(s, drop_tcp_bad_ack);
		challenge_ack(s, c);
		return false;
	}
	if (seq_gt(ack, c->snd_una)) {
		uint32_t acked = ack - c->snd_una;
		uint32_t data_acked = acked;

		if ((c->flags & CF_FIN_QUEUED) && seq_gt(ack, c->fin_seq))
			data_acked--; /* the FIN's sequence number */
		if ((c->flags & CF_RTT_TIMING) && seq_gt(ack, c->rtt_seq)) {
			rtt_sample(s, c, (uint32_t)RTE_MIN(s->now - c->rtt_start,
							   (uint64_t)UINT32_MAX));
			c->flags &= ~CF_RTT_TIMING;
		}
		net_sndbuf_drop(&c->snd, s->cfg.sndbuf, data_acked);
		c->snd_una = ack;
		if (seq_lt(c->snd_nxt, c->snd_una))
			c->snd_nxt = c->snd_una;
		cc_on_ack(s, c, ack, acked);
		c->retries = 0;
		c->backoff = 0;
		if (c->snd_una == c->snd_max)
			c->deadline[TD_RTX] = 0;
		else if (!(c->flags & CF_IN_RECOVERY))
			tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
		tcp_want_output(s, c);
	} else if (ack == c->snd_una && g->len == 0 &&
		   !(g->flags & (RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG)) &&
		   wnd == c->snd_wnd && c->snd_max != c->snd_una) {
		on_dup_ack(s, c);
	}
	/* Window update (RFC 9293 3.10.7.4, fifth check), from the newest
	 * segment only. */
	if (seq_lt(c->snd_wl1, g->seq) ||
	    (c->snd_wl1 == g->seq && seq_le(c->snd_wl2, ack))) {
		if (wnd > c->snd_wnd)
			tcp_want_output(s, c);
		c->snd_wnd = wnd;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = ack;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
		if (wnd > 0 && (c->flags & CF_PERSIST)) {
			c->flags &= ~CF_PERSIST;
			c->deadline[TD_PERSIST] = 0;
			c->backoff = 0;
		}
	}
	/* Backpressure released: let the application run again. */
	if ((c->flags & CF_WANT_WRITE) && s->cfg.sndbuf - c->snd.len >= s->cfg.sndbuf / 2 &&
	    !(c->flags & CF_APP_CLOSED) && !tcp_app_resume(s, c))
		return false;
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		if (tcp_fin_acked(c)) {
			c->state = TCP_FIN_WAIT_2;
			tcp_set_deadline(s, c, TD_LINGER, s->now + s->cfg.fin_wait2_us);
		}
		break;
	case TCP_CLOSING:
		if (tcp_fin_acked(c)) {
			tcp_enter_time_wait(s, c);
			return false;
		}
		break;
	case TCP_LAST_ACK:
		if (tcp_fin_acked(c)) {
			tcp_conn_release(s, c, NET_CLOSE_NORMAL);
			return false;
		}
		break;
	default:
		break;
	}
	return true;
}

/* --- data --- */

/* Make room for bytes up to `end` bytes beyond rcv.tail by moving the
 * unconsumed and out-of-order bytes to the buffer start. */
static void
rcv_make_room(struct net_conn *c, uint32_t end)
{
	struct net_rcvbuf *b = &c->rcv;
	uint8_t *base = tcp_rcv_base(c);
	uint32_t extent = 0;

	if (b->tail + end <= c->stack->cfg.rcvbuf || b->head == 0)
		return;
	for (unsigned i = 0; i < c->ooo_count; i++)
		extent = RTE_MAX(extent, c->ooo[i].end - c->rcv_nxt);
	memmove(base, base + b->head, b->tail - b->head + extent);
	b->tail -= b->head;
	b->head = 0;
}

/* Record [start, end) as held out of order; false when no range is free. */
static bool
ooo_add(struct net_stack *s, struct net_conn *c, uint32_t start, uint32_t end)
{
	unsigned i, n = c->ooo_count;

	/* Keep ranges sorted and disjoint; merge what touches. */
	for (i = 0; i < n; i++) {
		struct net_ooo_range *r = &c->ooo[i];

		if (seq_lt(end, r->start))
			break;
		if (seq_le(start, r->end)) {
			if (seq_lt(start, r->start))
				r->start = start;
			if (seq_gt(end, r->end))
				r->end = end;
			/* Swallow following ranges now covered. */
			while (i + 1 < c->ooo_count && seq_ge(r->end, c->ooo[i + 1].start)) {
				if (seq_gt(c->ooo[i + 1].end, r->end))
					r->end = c->ooo[i + 1].end;
				memmove(&c->ooo[i + 1], &c->ooo[i + 2],
					(c->ooo_count - i - 2) * sizeof(c->ooo[0]));
				c->ooo_count--;
			}
			return true;
		}
	}
	if (n >= s->cfg.ooo_max)
		return false;
	if (c->ooo == NULL) {
		/* the first hole: most connections never see one */
		c->ooo = net_pool_get(&s->ooo_pool);
		if (c->ooo == NULL)
			return false;
	}
	memmove(&c->ooo[i + 1], &c->ooo[i], (n - i) * sizeof(c->ooo[0]));
	c->ooo[i].start = start;
	c->ooo[i].end = end;
	c->ooo_count++;
	return true;
}

/* Place the payload (already trimmed to the window); returns true if
 * rcv_nxt advanced. */
static bool
process_data(struct net_stack *s, struct net_conn *c, uint32_t seq,
	     const uint8_t *data, uint32_t len)
{
	uint32_t off = seq - c->rcv_nxt;
	bool in_order = off == 0;

	if (len == 0)
		return false;
	if (unlikely(!tcp_bufs_attach(s, c))) {
		/* Not taken: the peer sends it again. ACK at once (as Linux
		 * does when it drops for want of memory): one duplicate per
		 * dropped segment, so that a sender whose burst was refused
		 * retransmits after a round trip (three of them) rather than
		 * after its retransmission timeout. */
		ack_immediately(s, c);
		return false;
	}
	rcv_make_room(c, off + len);
	if (!in_order && !ooo_add(s, c, seq, seq + len)) {
		NET_INC(s, tcp_ooo_drop);
		ack_immediately(s, c);
		return false;
	}
	memcpy(tcp_rcv_base(c) + c->rcv.tail + off, data, len);
	if (!in_order) {
		NET_INC(s, tcp_ooo_segs);
		ack_immediately(s, c); /* a duplicate ACK tells the sender about the hole */
		return false;
	}
	c->rcv_nxt += len;
	c->rcv.tail += len;
	if (c->ooo_count > 0) {
		/* The hole may be filled: absorb ranges now in order. */
		while (c->ooo_count > 0 && seq_le(c->ooo[0].start, c->rcv_nxt)) {
			if (seq_gt(c->ooo[0].end, c->rcv_nxt)) {
				c->rcv.tail += c->ooo[0].end - c->rcv_nxt;
				c->rcv_nxt = c->ooo[0].end;
			}
			memmove(&c->ooo[0], &c->ooo[1], (c->ooo_count - 1) * sizeof(c->ooo[0]));
			c->ooo_count--;
		}
		if (c->ooo_count == 0)
			tcp_ooo_detach(s, c);
		ack_immediately(s, c); /* RFC 5681 4.2: ACK at once when a gap fills */
		return true;
	}
	/* Delayed ACK: every second full-sized segment is ACKed at once;
	 * otherwise the ACK waits for a response to ride on, or the timer. */
	if (len >= c->mss)
		c->segs_unacked++;
	if (c->segs_unacked >= 2) {
		ack_immediately(s, c);
	} else if (!(c->flags & CF_ACK_NOW)) {
		c->flags |= CF_DELACK;
		if (c->deadline[TD_DELACK] == 0)
			tcp_set_deadline(s, c, TD_DELACK, s->now + s->cfg.delack_us);
	}
	return true;
}

static void
process_fin(struct net_stack *s, struct net_conn *c)
{
	c->rcv_nxt++;
	c->flags |= CF_PEER_FIN;
	c->flags &= ~CF_PEER_FIN_OOO;
	ack_now(s, c);
	switch (c->state) {
	case TCP_ESTABLISHED:
		c->state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT_1:
		if (tcp_fin_acked(c)) {
			tcp_enter_time_wait(s, c);
			return;
		}
		c->state = TCP_CLOSING;
		break;
	case TCP_FIN_WAIT_2:
		tcp_enter_time_wait(s, c);
		return;
	default:
		return;
	}
	if ((c->flags & CF_APP_KNOWS) && !(c->flags & CF_APP_CLOSED) && s->ops != NULL &&
	    s->ops->peer_closed != NULL)
		s->ops->peer_closed(s->cfg.app_arg, c);
}

/* --- states --- */

static void
syn_sent_input(struct net_stack *s, struct net_conn *c, const struct tcp_seg *g)
{
	bool ack_ok = false;

	if (g->flags & RTE_TCP_ACK_FLAG) {
		if (seq_le(g->ack, c->iss) || seq_gt(g->ack, c->snd_max)) {
			if (!(g->flags & RTE_TCP_RST_FLAG))
				tcp_send_raw(s, g->src_mac, &c->key, g->ack, 0, RTE_TCP_RST_FLAG,
					     0, 0, -1);
			return;
		}
		ack_ok = true;
	}
	if (g->flags & RTE_TCP_RST_FLAG) {
		if (ack_ok) {
			NET_INC(s, tcp_resets_rx);
			tcp_conn_release(s, c, NET_CLOSE_REFUSED);
		}
		return;
	}
	if (!(g->flags & RTE_TCP_SYN_FLAG))
		return;
	c->irs = g->seq;
	c->rcv_nxt = g->seq + 1;
	tcp_take_peer_options(s, c, g);
	if (!ack_ok) {
		/* Simultaneous open: answer with SYN-ACK from SYN_RCVD. */
		c->state = TCP_SYN_RCVD;
		c->listen_idx = NET_NO_LISTENER;
		c->snd_nxt = c->iss;
		c->snd_wnd = g->wnd;
		tcp_want_output(s, c);
		return;
	}
	if ((c->flags & CF_RTT_TIMING) && c->retries == 0)
		rtt_sample(s, c, (uint32_t)RTE_MIN(s->now - c->rtt_start, (uint64_t)UINT32_MAX));
	c->flags &= ~CF_RTT_TIMING;
	c->snd_una = g->ack;
	if (seq_lt(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	c->deadline[TD_RTX] = 0;
	c->snd_wnd = g->wnd; /* never scaled in a SYN */
	c->snd_wl1 = g->seq;
	c->snd_wl2 = g->ack;
	tcp_established(s, c);
	if (c->flags & CF_RELEASED)
		return;
	ack_now(s, c);
}

/* Segment for an existing connection in any synchronized state (or
 * SYN_RCVD). RFC 9293 3.10.7.4. */
void
tcp_conn_input(struct net_stack *s, struct net_conn *c, struct tcp_seg *g)
{
	uint32_t seq = g->seq, len = g->len, seglen;
	uint32_t wnd = tcp_rcv_space(c);
	const uint8_t *data = g->data;
	bool acceptable, fin;

	if (c->state == TCP_SYN_SENT) {
		syn_sent_input(s, c, g);
		return;
	}
	/* A retransmitted SYN while we are in SYN_RCVD: resend the SYN-ACK. */
	if (c->state == TCP_SYN_RCVD && (g->flags & RTE_TCP_SYN_FLAG) &&
	    !(g->flags & (RTE_TCP_ACK_FLAG | RTE_TCP_RST_FLAG)) && g->seq == c->irs) {
		if (c->snd_nxt != c->iss) {
			c->snd_nxt = c->iss;
			tcp_want_output(s, c);
		}
		return;
	}
	/* First check: sequence number acceptable? */
	seglen = seg_seq_len(g);
	if (seglen == 0)
		acceptable = wnd == 0 ? seq == c->rcv_nxt
				      : seq_ge(seq, c->rcv_nxt) && seq_lt(seq, c->rcv_nxt + wnd);
	else
		acceptable = wnd != 0 &&
			     ((seq_ge(seq, c->rcv_nxt) && seq_lt(seq, c->rcv_nxt + wnd)) ||
			      (seq_ge(seq + seglen - 1, c->rcv_nxt) &&
			       seq_lt(seq + seglen - 1, c->rcv_nxt + wnd)));
	/* A zero window still takes ACKs, RSTs and a FIN exactly at rcv_nxt. */
	if (!acceptable && wnd == 0 && seq == c->rcv_nxt)
		acceptable = true;
	if (!acceptable) {
		if (!(g->flags & RTE_TCP_RST_FLAG)) {
			if (seglen > 0 || seq != c->rcv_nxt - 1)
				NET_INC(s, drop_tcp_out_of_window);
			if (c->state == TCP_TIME_WAIT && (g->flags & RTE_TCP_FIN_FLAG))
				tcp_set_deadline(s, c, TD_LINGER, s->now + s->cfg.time_wait_us);
			ack_now(s, c);
		}
		return;
	}
	/* Second check: RST (RFC 5961 3.2). */
	if (g->flags & RTE_TCP_RST_FLAG) {
		if (seq != c->rcv_nxt) {
			challenge_ack(s, c);
			return;
		}
		NET_INC(s, tcp_resets_rx);
		tcp_conn_release(s, c, NET_CLOSE_RESET);
		return;
	}
	/* Fourth check: a SYN in a synchronized state (RFC 5961 4.2). */
	if (g->flags & RTE_TCP_SYN_FLAG) {
		challenge_ack(s, c);
		return;
	}
	/* Fifth check: ACK. */
	if (!(g->flags & RTE_TCP_ACK_FLAG))
		return;
	tcp_touch_idle(s, c);
	if (c->state == TCP_SYN_RCVD) {
		if (!seq_gt(g->ack, c->snd_una) || seq_gt(g->ack, c->snd_max)) {
			tcp_send_raw(s, g->src_mac, &c->key, g->ack, 0, RTE_TCP_RST_FLAG, 0, 0, -1);
			return;
		}
		if ((c->flags & CF_RTT_TIMING) && c->retries == 0)
			rtt_sample(s, c, (uint32_t)RTE_MIN(s->now - c->rtt_start,
							   (uint64_t)UINT32_MAX));
		c->flags &= ~CF_RTT_TIMING;
		c->snd_una = g->ack;
		if (seq_lt(c->snd_nxt, c->snd_una))
			c->snd_nxt = c->snd_una;
		c->deadline[TD_RTX] = 0;
		c->snd_wnd = (uint32_t)g->wnd << c->snd_wscale;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = g->ack;
		tcp_established(s, c);
		if (c->flags & CF_RELEASED)
			return;
	} else if (!process_ack(s, c, g)) {
		return;
	}
	if (c->state == TCP_TIME_WAIT) {
		if (g->flags & RTE_TCP_FIN_FLAG) {
			ack_now(s, c);
			tcp_set_deadline(s, c, TD_LINGER, s->now + s->cfg.time_wait_us);
		}
		return;
	}
	/* Trim to the window: drop what we already have ... */
	fin = (g->flags & RTE_TCP_FIN_FLAG) != 0;
	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t dup = c->rcv_nxt - seq;

		/* Old bytes again: our ACK may have been lost; repeat it. */
		if (len > 0)
			ack_now(s, c);
		if (dup > len) {
			len = 0; /* the FIN, if any, is old too */
			fin = false;
		} else {
			data += dup;
			len -= dup;
		}
		seq = c->rcv_nxt;
	}
	/* ... and what does not fit. */
	if (seq_gt(seq + len, c->rcv_nxt + wnd)) {
		len = c->rcv_nxt + wnd - seq;
		fin = false;
		/* Nothing fits: a zero-window probe carrying a byte, as BSD,
		 * macOS and Windows send. Answer with our window (RFC 9293
		 * 3.10.7.4), or the peer's persist timer waits for an update. */
		if (len == 0)
			ack_now(s, c);
	}
	/* Seventh check: text. */
	if (c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
	    c->state == TCP_FIN_WAIT_2) {
		/* At a zero window, a probe gives a stalled application another
		 * look at its buffered bytes. */
		if (process_data(s, c, seq, data, len) ||
		    (wnd == 0 && seglen > 0 && c->rcv.tail != c->rcv.head))
			tcp_deliver(s, c);
		if (c->flags & CF_RELEASED)
			return;
	} else {
		fin = false; /* peer's FIN already seen: nothing more can come */
		if (len > 0)
			ack_now(s, c);
	}
	/* Eighth check: FIN, once every byte before it is in. */
	if (fin) {
		if (seq + len == c->rcv_nxt) {
			process_fin(s, c);
		} else {
			c->flags |= CF_PEER_FIN_OOO;
			c->rcv_fin_seq = seq + len;
		}
	} else if ((c->flags & CF_PEER_FIN_OOO) && c->rcv_nxt == c->rcv_fin_seq) {
		process_fin(s, c);
	}
}
