/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP connections: the preallocated table, the 4-tuple hash (rte_hash
 * with CRC32C), per-connection timers, delivery to the application, SYN
 * cookies and the application API (connect, send, close, abort).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "net/net_tcp.h"
#include "util/util_err.h"

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

static void conn_timer_cb(struct net_stack *s, struct net_timer *t);

/* The last mbuf pointing into a pair that no connection holds is freed
 * (by the driver, after transmission). */
static void
bufs_unpinned(void *addr, void *opaque)
{
	struct net_bufs_tail *t = opaque;
	struct net_stack *s = t->stack;

	RTE_SET_USED(addr);
	if (s == NULL) {
		rte_free(t->bufs); /* its stack is gone */
		return;
	}
	TAILQ_REMOVE(&s->bufs_in_flight, t, link);
	net_pool_put(&s->buf_pool, t->bufs);
}

static rte_iova_t
iova_of(const void *va)
{
	const struct rte_memseg *ms;

	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		return (uintptr_t)va;
	ms = rte_mem_virt2memseg(va, NULL);
	if (ms == NULL || ms->iova == RTE_BAD_IOVA)
		return RTE_BAD_IOVA;
	return ms->iova + RTE_PTR_DIFF(va, ms->addr);
}

/* buf_pool's `made`: the tail of a new pair. Its IOVA is looked up once:
 * a send ring that spans two pages not adjacent in IOVA space (possible
 * with physical addresses) is always copied from. */
static void
bufs_made(void *obj, void *arg)
{
	struct net_stack *s = arg;
	uint8_t *bufs = obj;
	struct net_bufs_tail *t = tcp_bufs_tail(s, bufs);
	size_t len = (size_t)s->cfg.sndbuf;
	rte_iova_t first = iova_of(bufs);

	memset(t, 0, sizeof(*t));
	t->stack = s;
	t->bufs = bufs;
	t->iova = first != RTE_BAD_IOVA && iova_of(bufs + len - 1) == first + len - 1 ?
		first : RTE_BAD_IOVA;
	t->shared.free_cb = bufs_unpinned;
	t->shared.fcb_opaque = t;
}

void
tcp_bufs_put(struct net_stack *s, uint8_t *bufs)
{
	struct net_bufs_tail *t = tcp_bufs_tail(s, bufs);

	if (rte_mbuf_ext_refcnt_update(&t->shared, -1) == 0)
		net_pool_put(&s->buf_pool, bufs);
	else
		TAILQ_INSERT_TAIL(&s->bufs_in_flight, t, link);
}

/* At destroy: pairs still pointed at by mbufs the driver holds are left
 * to those mbufs, which free them (bufs_unpinned). */
static void
bufs_orphan_in_flight(struct net_stack *s)
{
	struct net_bufs_tail *t;

	while ((t = TAILQ_FIRST(&s->bufs_in_flight)) != NULL) {
		TAILQ_REMOVE(&s->bufs_in_flight, t, link);
		t->stack = NULL;
	}
}

int
net_tcp_init(struct net_stack *s, char *err, size_t errlen)
{
	static uint32_t instance;
	const struct net_stack_config *cfg = &s->cfg;
	char hname[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = hname,
		.entries = RTE_MAX(cfg->max_conns, 8u),
		.key_len = sizeof(struct net_conn_key),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = (uint32_t)s->secret[1],
		.socket_id = cfg->socket_id,
		/* The extendable table guarantees room for `entries` keys. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	size_t tail_off = net_bufs_tail_offset(cfg->sndbuf, cfg->rcvbuf);
	size_t pair = net_buf_pair_bytes(cfg->sndbuf, cfg->rcvbuf);
	/* Under a real cap the reserved port gets pairs of its own, beyond
	 * it (without one every connection can hold a pair anyway). */
	uint32_t reserve = cfg->max_buf_pairs < cfg->max_conns ?
			   RTE_MIN(cfg->reserved_slots, NET_RESERVED_BUF_PAIRS) : 0;

	snprintf(hname, sizeof(hname), "net_conns_%u",
		 __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED));
	net_wheel_init(&s->wheel, s->now, conn_timer_cb);
	s->bufs_tail_off = tail_off;
	s->buf_cap = cfg->max_buf_pairs;
	TAILQ_INIT(&s->bufs_in_flight);
	s->conns = rte_zmalloc_socket("net_conns", sizeof(*s->conns) * cfg->max_conns,
				      RTE_CACHE_LINE_SIZE, cfg->socket_id);
	s->conn_hash = rte_hash_create(&hp);
	if (s->conns == NULL || s->conn_hash == NULL ||
	    net_pool_init(&s->buf_pool, "net_bufs", pair, cfg->max_buf_pairs + reserve,
			  cfg->socket_id) < 0 ||
	    net_pool_init(&s->ooo_pool, "net_ooo", sizeof(struct net_ooo_range) * cfg->ooo_max,
			  cfg->max_conns, cfg->socket_id) < 0) {
		util_fail(err, errlen, "cannot allocate %u connections (%zu bytes, hash: %s)",
			  cfg->max_conns, sizeof(*s->conns) * cfg->max_conns,
			  s->conn_hash == NULL ? rte_strerror(rte_errno) : "ok");
		net_tcp_fini(s);
		return -1;
	}
	s->buf_pool.made = bufs_made;
	s->buf_pool.made_arg = s;
	for (uint32_t i = 0; i < cfg->max_conns; i++) {
		struct net_conn *c = &s->conns[i];

		c->stack = s;
		TAILQ_INSERT_TAIL(&s->free_list, c, out_link);
	}
	return 0;
}

void
net_tcp_fini(struct net_stack *s)
{
	if (s->conns != NULL) {
		for (uint32_t i = 0; i < s->cfg.max_conns; i++) {
			struct net_conn *c = &s->conns[i];

			if (c->state != TCP_CLOSED && !(c->flags & CF_RELEASED))
				tcp_conn_release(s, c, NET_CLOSE_STACK);
		}
		net_tcp_release_pending(s); /* their buffers go back to the pools */
	}
	bufs_orphan_in_flight(s);
	rte_hash_free(s->conn_hash);
	net_pool_fini(&s->buf_pool);
	net_pool_fini(&s->ooo_pool);
	rte_free(s->conns);
	s->conn_hash = NULL;
	s->conns = NULL;
}

struct net_conn *
tcp_conn_lookup(struct net_stack *s, const struct net_conn_key *k)
{
	void *data;

	if (rte_hash_lookup_data(s->conn_hash, k, &data) < 0)
		return NULL;
	return data;
}

struct net_listener *
tcp_listener(struct net_stack *s, uint16_t port)
{
	for (unsigned i = 0; i < s->n_tcp_listen; i++)
		if (s->tcp_listen[i].port == port)
			return &s->tcp_listen[i];
	return NULL;
}

/* Free slots beyond the reserve, or any free slot when reserved_ok. */
static bool
free_slot_usable(const struct net_stack *s, bool reserved_ok)
{
	uint32_t free = s->cfg.max_conns - s->conns_in_use;

	return free > (reserved_ok ? 0 : s->cfg.reserved_slots);
}

bool
tcp_slot_available(const struct net_stack *s, bool reserved_ok)
{
	return (free_slot_usable(s, reserved_ok) && !TAILQ_EMPTY(&s->free_list)) ||
	       !TAILQ_EMPTY(&s->time_wait);
}

struct net_conn *
tcp_conn_alloc(struct net_stack *s, const struct net_conn_key *k, bool reserved_ok)
{
	struct net_conn *c = NULL;

	if (free_slot_usable(s, reserved_ok))
		c = TAILQ_FIRST(&s->free_list);
	if (c == NULL) {
		/* Full: a TIME_WAIT connection is the cheapest to give up. */
		c = TAILQ_FIRST(&s->time_wait);
		if (c == NULL) {
			NET_INC(s, tcp_conn_table_full);
			return NULL;
		}
		NET_INC(s, tcp_time_wait_reused);
		tcp_conn_release(s, c, NET_CLOSE_NORMAL);
		/* Nothing up the stack refers to a TIME_WAIT slot: take it
		 * straight off the release list. */
		TAILQ_REMOVE(&s->release_list, c, out_link);
		s->conns_in_use--;
	} else {
		TAILQ_REMOVE(&s->free_list, c, out_link);
	}
	/* A recycled TIME_WAIT slot skipped net_tcp_release_pending. */
	tcp_bufs_detach(s, c);
	tcp_ooo_detach(s, c);
	memset(c, 0, sizeof(*c));
	c->stack = s;
	c->key = *k;
	s->conn_epoch++;
	if (rte_hash_add_key_data(s->conn_hash, k, c) < 0) {
		TAILQ_INSERT_HEAD(&s->free_list, c, out_link);
		NET_INC(s, tcp_conn_table_full);
		return NULL;
	}
	c->mss = 536; /* RFC 9293 default until the peer says otherwise */
	c->rto = s->cfg.rto_initial_us;
	s->conns_in_use++;
	return c;
}

/* The application closed c and the stack still holds it for the close
 * handshake: bounded in number (max_orphans) and in time (TD_LINGER). */
static void
orphan_end(struct net_stack *s, struct net_conn *c)
{
	if (c->flags & CF_ORPHAN) {
		c->flags &= ~CF_ORPHAN;
		s->orphans--;
	}
}

void
tcp_conn_release(struct net_stack *s, struct net_conn *c, enum net_close_reason why)
{
	if (c->state == TCP_CLOSED || (c->flags & CF_RELEASED))
		return;
	orphan_end(s, c);
	if (c->state == TCP_SYN_RCVD && c->listen_idx < NET_MAX_LISTEN) {
		struct net_listener *l = &s->tcp_listen[c->listen_idx];

		if (l->syn_rcvd > 0)
			l->syn_rcvd--;
	}
	if (c->state == TCP_TIME_WAIT)
		TAILQ_REMOVE(&s->time_wait, c, tw_link);
	if (c->flags & CF_BUF_WAIT)
		TAILQ_REMOVE(&s->buf_waiters, c, wait_link);
	rte_hash_del_key(s->conn_hash, &c->key);
	s->conn_epoch++;
	net_timer_cancel(&s->wheel, &c->timer);
	if (c->flags & CF_ON_OUTPUT)
		TAILQ_REMOVE(&s->output_list, c, out_link);
	c->flags = (c->flags & CF_APP_KNOWS) | CF_RELEASED;
	c->state = TCP_CLOSED;
	/* The slot is reused only after the current event, so callers up the
	 * stack may still look at c (and see CF_RELEASED). */
	TAILQ_INSERT_TAIL(&s->release_list, c, out_link);
	NET_INC(s, tcp_closed);
	if (c->flags & CF_APP_KNOWS) {
		c->flags &= ~CF_APP_KNOWS;
		if (s->ops != NULL && s->ops->closed != NULL)
			s->ops->closed(s->cfg.app_arg, c, why);
	}
}

void
net_tcp_release_pending(struct net_stack *s)
{
	struct net_conn *c;

	while ((c = TAILQ_FIRST(&s->release_list)) != NULL) {
		TAILQ_REMOVE(&s->release_list, c, out_link);
		c->flags = 0;
		/* Only now: a recv callback that aborted its connection may
		 * still be reading the receive buffer. */
		tcp_bufs_detach(s, c);
		tcp_ooo_detach(s, c);
		TAILQ_INSERT_TAIL(&s->free_list, c, out_link);
		s->conns_in_use--;
	}
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

/* --- timers --- */

void
tcp_set_deadline(struct net_stack *s, struct net_conn *c, enum net_tcp_deadline d,
		 uint64_t at)
{
	c->deadline[d] = at;
	if (at == 0 || (c->flags & CF_RELEASED))
		return;
	/* Only pull the timer earlier; a later deadline is found when the
	 * timer fires early and re-arms. */
	if (!net_timer_armed(&c->timer) ||
	    ((at + (1u << NET_TICK_SHIFT) - 1) >> NET_TICK_SHIFT) < c->timer.tick)
		net_timer_arm(&s->wheel, &c->timer, at);
}

uint32_t
tcp_rto_current(const struct net_stack *s, const struct net_conn *c)
{
	uint64_t rto = (uint64_t)c->rto << RTE_MIN(c->backoff, 20);

	return (uint32_t)RTE_MIN(rto, s->cfg.rto_max_us);
}

void
tcp_touch_idle(struct net_stack *s, struct net_conn *c)
{
	uint64_t limit = s->cfg.idle_timeout_us;

	if (limit == 0 && (c->flags & CF_SYNCOOKIE))
		limit = s->cfg.syncookie_idle_us;
	if (limit != 0)
		tcp_set_deadline(s, c, TD_IDLE, s->now + limit);
}

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

static void
conn_timer_cb(struct net_stack *s, struct net_timer *t)
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

/* --- state changes --- */

void
tcp_enter_time_wait(struct net_stack *s, struct net_conn *c)
{
	if (c->state == TCP_SYN_RCVD)
		return;
	c->state = TCP_TIME_WAIT;
	orphan_end(s, c);
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

/* --- ISN and SYN cookies --- */

/* SipHash-2-4 over whole 64-bit words: the keyed PRF behind ISNs and SYN
 * cookies. A CRC would be cheaper but is linear, so one observed cookie
 * would let an attacker compute valid ones for spoofed 4-tuples. */
#define SIPROUND                                                             \
	do {                                                                 \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);    \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                       \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                       \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);    \
	} while (0)

static inline uint64_t
rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t
siphash_words(const uint64_t key[2], const uint64_t *m, unsigned n)
{
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
	uint64_t last = (uint64_t)(n * 8) << 56;

	for (unsigned i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND;
		SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static inline uint64_t
key_word(const struct net_conn_key *k)
{
	return (uint64_t)k->raddr << 32 | (uint32_t)k->rport << 16 | k->lport;
}

uint32_t
tcp_gen_isn(struct net_stack *s, const struct net_conn_key *k)
{
	/* RFC 6528: a 4 us clock plus a keyed hash of the 4-tuple. */
	uint64_t m[1] = { key_word(k) };

	return (uint32_t)siphash_words(s->secret, m, 1) + (uint32_t)(s->now >> 2);
}

/* The MSS a cookie connection may use: the largest entry not above the
 * peer's offer and ours. Four entries: the index rides in 2 bits. */
static const uint16_t cookie_mss[4] = { 536, 1220, 1460, 8960 };

/* A 32-bit keyed MAC over the 4-tuple, the peer's ISN and the cookie
 * period (the whole period number, not a few bits of it). */
static uint32_t
cookie_mac(struct net_stack *s, const struct net_conn_key *k, uint32_t peer_isn,
	   uint64_t period)
{
	uint64_t m[3] = { key_word(k), peer_isn, period };

	return (uint32_t)siphash_words(s->secret, m, 3);
}

/* cookie = mac(tuple, peer ISN, period) + MSS index (0..3).
 *
 * As Linux does without TCP timestamps, nothing else is encoded: the
 * cookie SYN-ACK offers no window scaling, so a cookie connection runs
 * unscaled. The check recovers the index by subtraction for the current
 * and the previous period, so a blind guess passes with probability
 * 2 * 4 / 2^32 = 2^-29 (Linux: about the same), against 2^-20 for the
 * 20-bit MAC with attacker-chosen fields this replaces (~14 forged
 * connections a second at 10 GbE minimum-frame rate). */
uint32_t
tcp_syncookie_make(struct net_stack *s, const struct net_conn_key *k,
		   uint32_t peer_isn, uint16_t peer_mss)
{
	uint64_t period = s->now >> COOKIE_PERIOD_SHIFT;
	uint32_t idx = 0;

	for (uint32_t i = 0; i < RTE_DIM(cookie_mss); i++)
		if (cookie_mss[i] <= peer_mss && cookie_mss[i] <= s->mss)
			idx = i;
	return cookie_mac(s, k, peer_isn, period) + idx;
}

bool
tcp_syncookie_check(struct net_stack *s, const struct net_conn_key *k,
		    uint32_t peer_isn, uint32_t cookie, uint16_t *mss)
{
	uint64_t now_period = s->now >> COOKIE_PERIOD_SHIFT;

	/* Valid for the current and the previous period. */
	for (uint64_t age = 0; age < 2 && age <= now_period; age++) {
		uint32_t idx = cookie - cookie_mac(s, k, peer_isn, now_period - age);

		if (idx < RTE_DIM(cookie_mss)) {
			*mss = cookie_mss[idx];
			return true;
		}
	}
	return false;
}

/* --- application API --- */

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

struct net_stack *
net_conn_stack(const struct net_conn *c)
{
	return c->stack;
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
