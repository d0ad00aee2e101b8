/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP's timers: what happens when a connection's deadline passes
 * (retransmission, zero-window probes, delayed ACK, the lingering states,
 * idle connections, the application's timer), and the entry into
 * TIME_WAIT. Deadlines are set with tcp_set_deadline (net_tcp.h); the one
 * wheel timer of a connection calls net_tcp_timer_cb for them.
 */
#include "net/net_tcp.h"

static void
on_rtx_timeout(struct net_stack *s, struct net_conn *c)
{
	bool syn = c->state == TCP_SYN_SENT || c->state == TCP_SYN_RCVD;
	uint8_t limit = syn ? s->cfg.max_syn_retries : s->cfg.max_retries;

	if (c->snd_una == c->snd_max)
		return; /* everything was acknowledged meanwhile */
	if (++c->retries > limit) {
		NET_INC(s, tcp_timeouts);
		if (c->state != TCP_SYN_SENT)
			tcp_send_rst(s, c);
		tcp_conn_release(s, c, NET_CLOSE_TIMEOUT);
		return;
	}
	NET_INC(s, tcp_rto_expired);
	if (c->backoff < 20)
		c->backoff++;
	/* RFC 5681 (3.1) loss window; RFC 6582 leaves recovery. */
	if (!syn) {
		c->ssthresh = RTE_MAX(tcp_flight(c) / 2, 2u * c->mss);
		c->cwnd = c->mss;
		c->bytes_acked = 0;
	}
	c->flags &= ~(CF_IN_RECOVERY | CF_RTT_TIMING); /* Karn: no sample */
	c->dupacks = 0;
	c->recover = c->snd_max;
	/* Go back N: everything from snd_una is sent again as the window
	 * allows; the receiver's ACKs skip what it already holds. */
	c->snd_nxt = c->snd_una;
	tcp_set_deadline(s, c, TD_RTX, s->now + tcp_rto_current(s, c));
	tcp_want_output(s, c);
}

static void
on_persist_timeout(struct net_stack *s, struct net_conn *c)
{
	uint32_t unsent = c->snd.len - (c->snd_nxt - tcp_data_seq(c));

	if (!(c->flags & CF_PERSIST))
		return;
	/* Probes nobody answers: the peer is gone. */
	if (++c->retries > 2 * s->cfg.max_retries) {
		NET_INC(s, tcp_timeouts);
		tcp_send_rst(s, c);
		tcp_conn_release(s, c, NET_CLOSE_TIMEOUT);
		return;
	}
	if (c->snd_wnd != 0 || unsent == 0) {
		c->flags &= ~CF_PERSIST;
		tcp_want_output(s, c);
		return;
	}
	/* A segment below the window (seq snd_una - 1) makes the receiver
	 * answer with an ACK carrying its current window (RFC 9293 3.8.6.1;
	 * Linux's tcp_xmit_probe_skb does the same). */
	if (tcp_xmit(s, c, c->snd_una - 1, 0, RTE_TCP_ACK_FLAG))
		NET_INC(s, tcp_zero_window_probes);
	if (c->backoff < 20)
		c->backoff++;
	tcp_set_deadline(s, c, TD_PERSIST,
			 s->now + RTE_MAX(tcp_rto_current(s, c), (uint32_t)s->cfg.rto_min_us));
}

static void
on_linger_timeout(struct net_stack *s, struct net_conn *c)
{
	if (c->state == TCP_TIME_WAIT)
		tcp_conn_release(s, c, NET_CLOSE_NORMAL);
	else if (c->state == TCP_FIN_WAIT_2)
		tcp_conn_release(s, c, NET_CLOSE_TIMEOUT);
	else if (c->state == TCP_SYN_SENT)
		/* ARP never answered for the peer */
		tcp_conn_release(s, c, NET_CLOSE_TIMEOUT);
	else if (c->flags & CF_ORPHAN) {
		/* FIN_WAIT_1, CLOSING or LAST_ACK for orphan_timeout_us: a peer
		 * that answers zero-window probes but never opens its window
		 * would hold the slot for ever */
		NET_INC(s, tcp_orphan_timeouts);
		tcp_send_rst(s, c);
		tcp_conn_release(s, c, NET_CLOSE_TIMEOUT);
	}
}

void
net_tcp_timer_cb(struct net_stack *s, struct net_timer *t)
{
	struct net_conn *c = container_of(t, struct net_conn, timer);
	uint64_t next = 0;

	for (int d = 0; d < TD__COUNT; d++) {
		if (c->deadline[d] == 0 || c->deadline[d] > s->now)
			continue;
		c->deadline[d] = 0;
		switch (d) {
		case TD_RTX:
			on_rtx_timeout(s, c);
			break;
		case TD_PERSIST:
			if (c->state == TCP_SYN_SENT)
				tcp_want_output(s, c); /* ARP retry */
			else
				on_persist_timeout(s, c);
			break;
		case TD_DELACK:
			if (c->flags & CF_DELACK) {
				c->flags |= CF_ACK_NOW;
				NET_INC(s, tcp_delayed_acks);
				tcp_want_output(s, c);
			}
			break;
		case TD_LINGER:
			on_linger_timeout(s, c);
			break;
		case TD_IDLE:
			NET_INC(s, tcp_idle_timeouts);
			tcp_send_rst(s, c);
			tcp_conn_release(s, c, NET_CLOSE_IDLE);
			break;
		case TD_APP:
			if ((c->flags & CF_APP_KNOWS) && s->ops != NULL && s->ops->timer != NULL)
				s->ops->timer(s->cfg.app_arg, c);
			break;
		}
		if (c->flags & CF_RELEASED)
			return;
	}
	for (int d = 0; d < TD__COUNT; d++)
		if (c->deadline[d] != 0 && (next == 0 || c->deadline[d] < next))
			next = c->deadline[d];
	if (next != 0)
		net_timer_arm(&s->wheel, &c->timer, next);
}

void
tcp_enter_time_wait(struct net_stack *s, struct net_conn *c)
{
	if (c->state == TCP_SYN_RCVD)
		return;
	c->state = TCP_TIME_WAIT;
	tcp_orphan_end(s, c);
	c->flags &= ~CF_PERSIST;
	c->deadline[TD_RTX] = c->deadline[TD_PERSIST] = c->deadline[TD_IDLE] = 0;
	c->deadline[TD_APP] = 0;
	TAILQ_INSERT_TAIL(&s->time_wait, c, tw_link);
	tcp_set_deadline(s, c, TD_LINGER, s->now + s->cfg.time_wait_us);
	/* Every byte was acknowledged both ways; whatever the application
	 * left unread it will never read. A TIME_WAIT slot holds no memory
	 * beyond itself. */
	if (!(c->flags & CF_IN_DELIVERY)) {
		c->rcv.head = c->rcv.tail = 0;
		tcp_ooo_detach(s, c);
		c->snd.len = 0;
		tcp_bufs_detach(s, c);
	}
	/* For the application the connection is over. */
	if (c->flags & CF_APP_KNOWS) {
		c->flags &= ~CF_APP_KNOWS;
		if (s->ops != NULL && s->ops->closed != NULL)
			s->ops->closed(s->cfg.app_arg, c, NET_CLOSE_NORMAL);
	}
}
