/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP and the application: a connection established (accepted or
 * connected), received bytes delivered, a stalled writer resumed, and the
 * API that opens, closes, aborts and describes a connection (net.h). The
 * send API belongs to the send path (net_tcp_out.c).
 */
#include <errno.h>

#include "net/net_tcp.h"

static const char *const state_names[TCP_STATE__COUNT] = {
	[TCP_CLOSED] = "CLOSED",
	[TCP_SYN_SENT] = "SYN_SENT",
	[TCP_SYN_RCVD] = "SYN_RCVD",
	[TCP_ESTABLISHED] = "ESTABLISHED",
	[TCP_FIN_WAIT_1] = "FIN_WAIT_1",
	[TCP_FIN_WAIT_2] = "FIN_WAIT_2",
	[TCP_CLOSE_WAIT] = "CLOSE_WAIT",
	[TCP_CLOSING] = "CLOSING",
	[TCP_LAST_ACK] = "LAST_ACK",
	[TCP_TIME_WAIT] = "TIME_WAIT",
};

/* SYN_RCVD or SYN_SENT -> ESTABLISHED; tells the application. */
void
tcp_established(struct net_stack *s, struct net_conn *c)
{
	/* A simultaneous open passes SYN_RCVD too: it is still ours. */
	bool passive = !(c->flags & CF_ACTIVE);

	if (c->state == TCP_SYN_RCVD && c->listen_idx < NET_MAX_LISTEN) {
		struct net_listener *l = &s->tcp_listen[c->listen_idx];

		if (l->syn_rcvd > 0)
			l->syn_rcvd--;
	}
	c->state = TCP_ESTABLISHED;
	c->deadline[TD_LINGER] = 0;
	c->deadline[TD_PERSIST] = 0;
	c->retries = 0;
	c->backoff = 0;
	/* RFC 6928 initial window. */
	c->cwnd = RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u));
	c->ssthresh = UINT32_MAX;
	c->recover = c->snd_una;
	c->max_snd_wnd = c->snd_wnd;
	NET_INC(s, tcp_established);
	tcp_touch_idle(s, c);
	if (passive) {
		int rc = 0;

		/* Known to the app from here: an abort inside accepted gets
		 * its closed callback like any other. */
		c->flags |= CF_APP_KNOWS;
		if (s->ops != NULL && s->ops->accepted != NULL)
			rc = s->ops->accepted(s->cfg.app_arg, c);
		if (c->flags & CF_RELEASED)
			return;
		if (rc != 0) {
			c->flags &= ~CF_APP_KNOWS; /* refused: no closed callback */
			tcp_send_rst(s, c);
			tcp_conn_release(s, c, NET_CLOSE_ABORTED);
			return;
		}
	} else if (s->ops != NULL && s->ops->connected != NULL) {
		s->ops->connected(s->cfg.app_arg, c);
	}
	if (!(c->flags & CF_RELEASED) && c->snd.len > 0)
		tcp_want_output(s, c);
}

bool
tcp_app_resume(struct net_stack *s, struct net_conn *c)
{
	c->flags &= ~CF_WANT_WRITE;
	tcp_deliver(s, c);
	if (c->flags & CF_RELEASED)
		return false;
	if (s->ops != NULL && s->ops->writable != NULL && (c->flags & CF_APP_KNOWS))
		s->ops->writable(s->cfg.app_arg, c);
	return !(c->flags & CF_RELEASED);
}

/* Resume connections that found no buffer pair: one per free pair in the
 * pool, or the first once per millisecond, when the pool must allocate
 * and the allocation may succeed now (never at max_buf_pairs: there
 * only a pair given back helps; the reserved port's pairs are for its
 * connections only). A connection that finds none again goes back to the
 * list and ends the round. */
void
net_tcp_wake_buf_waiters(struct net_stack *s)
{
	struct net_conn *c;

	while ((c = TAILQ_FIRST(&s->buf_waiters)) != NULL) {
		if (!tcp_bufs_allowed(s, c))
			return;
		if (s->buf_pool.n_free == 0) {
			if (s->buf_pool.n_made >= s->buf_pool.max || s->now < s->buf_retry_at)
				return;
			s->buf_retry_at = s->now + 1000;
		}
		TAILQ_REMOVE(&s->buf_waiters, c, wait_link);
		c->flags &= ~CF_BUF_WAIT;
		if (!(c->flags & CF_WANT_WRITE) || (c->flags & CF_APP_CLOSED))
			continue;
		if (tcp_app_resume(s, c) && (c->flags & CF_BUF_WAIT))
			return;
	}
}

/* Offer buffered in-order bytes to the application. */
void
tcp_deliver(struct net_stack *s, struct net_conn *c)
{
	struct net_rcvbuf *b = &c->rcv;
	uint32_t before_edge, avail;
	size_t n;

	if (c->flags & (CF_IN_DELIVERY | CF_RELEASED))
		return;
	avail = b->tail - b->head;
	if (avail == 0)
		return;
	if ((c->flags & CF_APP_CLOSED) || !(c->flags & CF_APP_KNOWS) ||
	    s->ops == NULL || s->ops->recv == NULL) {
		n = avail; /* nobody will read these: discard */
	} else {
		c->flags |= CF_IN_DELIVERY;
		n = s->ops->recv(s->cfg.app_arg, c, tcp_rcv_base(c) + b->head, avail);
		c->flags &= ~CF_IN_DELIVERY;
		if (c->flags & CF_RELEASED)
			return;
		if (n > avail)
			n = avail;
		if (n < avail && net_tcp_send_space(c) < s->cfg.sndbuf / 2)
			c->flags |= CF_WANT_WRITE; /* stalled on output: resume later */
	}
	before_edge = c->rcv_adv;
	b->head += n;
	if (b->head == b->tail && c->ooo_count == 0)
		b->head = b->tail = 0;
	/* Receiver SWS avoidance (RFC 9293 3.8.6.2.2): announce a window
	 * opening once it is worth a segment or half the buffer. */
	if (n > 0) {
		uint32_t edge = c->rcv_nxt + ((tcp_rcv_space(c) >> c->rcv_wscale) << c->rcv_wscale);

		if (seq_ge(edge, before_edge + RTE_MIN(s->cfg.rcvbuf / 2, 2u * s->mss))) {
			c->flags |= CF_ACK_NOW;
			tcp_want_output(s, c);
		}
	}
}

void
net_tcp_close(struct net_conn *c)
{
	struct net_stack *s = c->stack;

	if (c->flags & (CF_APP_CLOSED | CF_RELEASED))
		return;
	c->flags |= CF_APP_CLOSED;
	switch (c->state) {
	case TCP_SYN_SENT:
		tcp_conn_release(s, c, NET_CLOSE_NORMAL);
		return;
	case TCP_ESTABLISHED:
		c->state = TCP_FIN_WAIT_1;
		break;
	case TCP_CLOSE_WAIT:
		c->state = TCP_LAST_ACK;
		break;
	default:
		return;
	}
	if (s->orphans >= s->cfg.max_orphans) {
		/* Linux does the same ("too many orphaned sockets"): the slots
		 * stay free for connections that still have a user */
		NET_INC(s, tcp_orphan_overflow);
		tcp_send_rst(s, c);
		tcp_conn_release(s, c, NET_CLOSE_ABORTED);
		return;
	}
	c->flags |= CF_ORPHAN;
	s->orphans++;
	tcp_set_deadline(s, c, TD_LINGER, s->now + s->cfg.orphan_timeout_us);
	c->flags |= CF_FIN_QUEUED;
	c->fin_seq = tcp_data_seq(c) + c->snd.len;
	tcp_want_output(s, c);
}

void
net_tcp_abort(struct net_conn *c)
{
	struct net_stack *s = c->stack;

	if (c->flags & CF_RELEASED)
		return;
	c->flags |= CF_APP_CLOSED;
	if (c->state != TCP_SYN_SENT && c->state != TCP_TIME_WAIT)
		tcp_send_rst(s, c);
	tcp_conn_release(s, c, NET_CLOSE_ABORTED);
}

struct net_conn *
net_tcp_connect(struct net_stack *s, uint32_t addr, uint16_t port,
		uint16_t local_port, void *ctx)
{
	struct net_conn_key k = { .raddr = addr, .rport = port };
	struct net_conn *c;

	if (addr == 0 || addr == s->ip || port == 0 || (addr & 0xf0000000u) == 0xe0000000u) {
		errno = EINVAL;
		return NULL;
	}
	if (!net_ip_local_subnet(s, addr) && s->cfg.gateway == 0) {
		errno = EHOSTUNREACH;
		return NULL;
	}
	if (local_port != 0) {
		k.lport = local_port;
		if (tcp_conn_lookup(s, &k) != NULL) {
			errno = EADDRINUSE;
			return NULL;
		}
	} else {
		for (unsigned tries = 0; tries < 16384; tries++) {
			k.lport = s->next_ephemeral++;
			if (s->next_ephemeral == 0)
				s->next_ephemeral = 49152;
			if (tcp_listener(s, k.lport) == NULL && tcp_conn_lookup(s, &k) == NULL)
				break;
			k.lport = 0;
		}
		if (k.lport == 0) {
			errno = EADDRINUSE;
			return NULL;
		}
	}
	c = tcp_conn_alloc(s, &k, true);
	if (c == NULL) {
		errno = ENOSPC;
		return NULL;
	}
	c->state = TCP_SYN_SENT;
	c->ctx = ctx;
	c->flags |= CF_APP_KNOWS | CF_ACTIVE;
	c->iss = tcp_gen_isn(s, &k);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->mss = s->mss;
	c->rcv_wscale = s->rcv_wscale; /* offered; kept only if the peer scales too */
	c->flags |= CF_WS_OFFER;
	NET_INC(s, tcp_active_opens);
	/* Give up on an unresolvable peer after the SYN retries' worth of time. */
	tcp_set_deadline(s, c, TD_LINGER,
			 s->now + ((uint64_t)s->cfg.rto_initial_us <<
				   (s->cfg.max_syn_retries + 1)));
	tcp_want_output(s, c);
	return c;
}

void
net_tcp_set_timer(struct net_conn *c, uint64_t at_us)
{
	if (c->flags & CF_RELEASED)
		return;
	tcp_set_deadline(c->stack, c, TD_APP, at_us);
}

void
net_conn_set_ctx(struct net_conn *c, void *ctx)
{
	c->ctx = ctx;
}

void *
net_conn_ctx(const struct net_conn *c)
{
	return c->ctx;
}

void
net_conn_addrs(const struct net_conn *c, uint32_t *local_addr, uint16_t *local_port,
	       uint32_t *remote_addr, uint16_t *remote_port)
{
	if (local_addr != NULL)
		*local_addr = c->stack->ip;
	if (local_port != NULL)
		*local_port = c->key.lport;
	if (remote_addr != NULL)
		*remote_addr = c->key.raddr;
	if (remote_port != NULL)
		*remote_port = c->key.rport;
}

const char *
net_conn_state_name(const struct net_conn *c)
{
	return c->state < TCP_STATE__COUNT ? state_names[c->state] : "?";
}
