/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP internals shared by its files, one job each. Calls between them run
 * one way, down this list (what several of them use is inline here):
 *   net_tcp_listen.c  input's entry: parsing, finding the connection, the
 *                     LISTEN state (passive opens, SYN cookies' ACKs), RSTs
 *                     for segments that belong to nothing
 *   net_tcp_in.c      a segment for a connection (RFC 9293 SEGMENT ARRIVES)
 *   net_tcp_timer.c   deadlines that pass (RTO, persist, delayed ACK,
 *                     TIME_WAIT and the other lingering states, idle) and
 *                     entering TIME_WAIT
 *   net_tcp_app.c     the application: established, delivery, resuming
 *                     writers, the API (connect, close, abort, timer, ctx)
 *   net_tcp_out.c     the send path: the send API (send ring,
 *                     window/commit), the output list, segmentation, ACKs,
 *                     RSTs
 *   net_tcp_cookie.c  ISNs and SYN cookies (keyed SipHash)
 *   net_tcp.c         the connection table: slots, the 4-tuple hash, buffer
 *                     pairs, the release list that net_stack.c empties after
 *                     every event
 */
#ifndef SEGCACHED_NET_TCP_H
#define SEGCACHED_NET_TCP_H

#include "net/net_conn.h"
#include "net/net_private.h"

/* Sequence number comparisons (RFC 9293 modular arithmetic). */
static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

/* A parsed incoming segment. */
struct tcp_seg {
	uint32_t seq, ack;
	uint32_t len;          /* payload bytes (SYN/FIN not counted) */
	uint16_t wnd;          /* raw window field */
	uint8_t flags;         /* RTE_TCP_*_FLAG */
	bool has_mss, has_ws;
	uint16_t mss;
	uint8_t ws;
	const uint8_t *data;
	const struct rte_ether_addr *src_mac;
};

static inline uint32_t
seg_seq_len(const struct tcp_seg *g)
{
	return g->len + ((g->flags & RTE_TCP_SYN_FLAG) ? 1 : 0) +
	       ((g->flags & RTE_TCP_FIN_FLAG) ? 1 : 0);
}

/* Sequence number of the first byte of the send buffer: snd_una, or one
 * past it while our SYN is unacknowledged. */
static inline uint32_t
tcp_data_seq(const struct net_conn *c)
{
	return c->snd_una + ((c->state == TCP_SYN_SENT || c->state == TCP_SYN_RCVD) ? 1 : 0);
}

static inline uint32_t
tcp_rcv_space(const struct net_conn *c)
{
	return c->stack->cfg.rcvbuf - (c->rcv.tail - c->rcv.head);
}

/* The receive buffer follows the send ring in the connection's pair. */
static inline uint8_t *
tcp_rcv_base(const struct net_conn *c)
{
	return c->bufs + c->stack->cfg.sndbuf;
}

static inline struct net_bufs_tail *
tcp_bufs_tail(const struct net_stack *s, uint8_t *bufs)
{
	return (struct net_bufs_tail *)(bufs + s->bufs_tail_off);
}

/* A connection accepted on cfg.reserved_port (the administration port). */
static inline bool
tcp_conn_reserved(const struct net_stack *s, const struct net_conn *c)
{
	return s->cfg.reserved_port != 0 && c->key.lport == s->cfg.reserved_port &&
	       !(c->flags & CF_ACTIVE);
}

/* Whether c may take a pair now: the other ports' connections only while
 * fewer than buf_cap are out; the reserved port's may take the rest. */
static inline bool
tcp_bufs_allowed(const struct net_stack *s, const struct net_conn *c)
{
	return s->buf_pool.n_made - s->buf_pool.n_free < s->buf_cap || tcp_conn_reserved(s, c);
}

/* Take a buffer pair for c if it holds none; false when none can be had
 * (counted: the caller drops or refuses the bytes). */
static inline bool
tcp_bufs_attach(struct net_stack *s, struct net_conn *c)
{
	if (likely(c->bufs != NULL))
		return true;
	c->bufs = unlikely(!tcp_bufs_allowed(s, c)) ? NULL :
		  (uint8_t *)net_pool_get(&s->buf_pool);
	if (unlikely(c->bufs == NULL)) {
		NET_INC(s, tcp_no_buffers);
		return false;
	}
	/* a pair in the pool is pointed at by nothing: c's hold is all */
	rte_mbuf_ext_refcnt_set(&tcp_bufs_tail(s, c->bufs)->shared, 1);
	return true;
}

/* Let go of a pair: to the pool, or to bufs_in_flight while mbufs still
 * point into it (net_tcp.c). */
void tcp_bufs_put(struct net_stack *s, uint8_t *bufs);
/* c found no pair: on buf_waiters until net_tcp_wake_buf_waiters()
 * (net_tcp_out.c). */
void tcp_buf_wait(struct net_stack *s, struct net_conn *c);

/* c lets go of its buffer pair. */
static inline void
tcp_bufs_detach(struct net_stack *s, struct net_conn *c)
{
	if (c->bufs == NULL)
		return;
	tcp_bufs_put(s, c->bufs);
	c->bufs = NULL;
	c->snd.head = c->snd.len = 0;
	c->rcv.head = c->rcv.tail = 0;
}

/* An idle connection (nothing to send or acknowledge, nothing unread,
 * nothing out of order) needs no buffers until its next bytes: give them
 * back, so that memory follows the connections that are busy. The next
 * request most likely gets the same pair again, still in cache. */
static inline void
tcp_bufs_release_if_idle(struct net_stack *s, struct net_conn *c)
{
	if (c->bufs != NULL && c->snd.len == 0 && c->rcv.tail == c->rcv.head &&
	    c->ooo_count == 0 && !(c->flags & (CF_IN_DELIVERY | CF_RELEASED)))
		tcp_bufs_detach(s, c);
}

static inline void
tcp_ooo_detach(struct net_stack *s, struct net_conn *c)
{
	if (c->ooo == NULL)
		return;
	net_pool_put(&s->ooo_pool, c->ooo);
	c->ooo = NULL;
	c->ooo_count = 0;
}

static inline uint32_t
tcp_flight(const struct net_conn *c)
{
	return c->snd_max - c->snd_una;
}

static inline bool
tcp_fin_acked(const struct net_conn *c)
{
	return (c->flags & CF_FIN_QUEUED) && seq_gt(c->snd_una, c->fin_seq);
}

/* A connection's deadlines (enum net_tcp_deadline): its one wheel timer is
 * armed for the earliest; net_tcp_timer.c serves them. */
static inline void
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

static inline uint32_t
tcp_rto_current(const struct net_stack *s, const struct net_conn *c)
{
	uint64_t rto = (uint64_t)c->rto << RTE_MIN(c->backoff, 20);

	return (uint32_t)RTE_MIN(rto, s->cfg.rto_max_us);
}

static inline void
tcp_touch_idle(struct net_stack *s, struct net_conn *c)
{
	uint64_t limit = s->cfg.idle_timeout_us;

	if (limit == 0 && (c->flags & CF_SYNCOOKIE))
		limit = s->cfg.syncookie_idle_us;
	if (limit != 0)
		tcp_set_deadline(s, c, TD_IDLE, s->now + limit);
}

/* net_tcp.c */
void net_tcp_release_list(struct net_stack *s);
/* Frees the connections closed during the current event: a list check in
 * line, as every burst and poll makes it (net_stack.c) and the list is
 * nearly always empty. */
static inline void
net_tcp_release_pending(struct net_stack *s)
{
	if (!TAILQ_EMPTY(&s->release_list))
		net_tcp_release_list(s);
}

struct net_conn *tcp_conn_lookup(struct net_stack *s, const struct net_conn_key *k);
struct net_listener *tcp_listener(struct net_stack *s, uint16_t port);
/* A free slot (or a recycled TIME_WAIT one) for k; NULL when none. Without
 * reserved_ok the last cfg.reserved_slots free slots are not taken. */
struct net_conn *tcp_conn_alloc(struct net_stack *s, const struct net_conn_key *k,
				bool reserved_ok);
/* Would tcp_conn_alloc find a slot? */
bool tcp_slot_available(const struct net_stack *s, bool reserved_ok);
void tcp_conn_release(struct net_stack *s, struct net_conn *c, enum net_close_reason why);
/* The application closed c and the stack still holds it for the close
 * handshake: bounded in number (max_orphans) and in time (TD_LINGER).
 * Here c is no orphan any more. */
void tcp_orphan_end(struct net_stack *s, struct net_conn *c);

/* net_tcp_in.c */
/* A segment for c (found by net_tcp_input, or a cookie's completing ACK). */
void tcp_conn_input(struct net_stack *s, struct net_conn *c, struct tcp_seg *g);
/* The peer's MSS and window scale from its SYN. */
void tcp_take_peer_options(struct net_stack *s, struct net_conn *c, const struct tcp_seg *g);

/* net_tcp_app.c */
/* SYN_RCVD or SYN_SENT -> ESTABLISHED; tells the application. */
void tcp_established(struct net_stack *s, struct net_conn *c);
void tcp_deliver(struct net_stack *s, struct net_conn *c);
/* Send space is back (acknowledgements, or a buffer pair for a waiter):
 * buffered bytes are offered again, then `writable`. False when the
 * application released the connection meanwhile. */
bool tcp_app_resume(struct net_stack *s, struct net_conn *c);

/* net_tcp_timer.c */
void tcp_enter_time_wait(struct net_stack *s, struct net_conn *c);

/* net_tcp_cookie.c */
uint32_t tcp_gen_isn(struct net_stack *s, const struct net_conn_key *k);
uint32_t tcp_syncookie_make(struct net_stack *s, const struct net_conn_key *k,
			    uint32_t peer_isn, uint16_t peer_mss);
#define COOKIE_PERIOD_SHIFT 26 /* a cookie period is 2^26 us (~67 s) */

/* How long a cookie stays valid: the current and the previous period. */
static inline uint64_t
tcp_syncookie_lifetime_us(void)
{
	return 2ull << COOKIE_PERIOD_SHIFT;
}
bool tcp_syncookie_check(struct net_stack *s, const struct net_conn_key *k,
			 uint32_t peer_isn, uint32_t cookie, uint16_t *mss);

/* net_tcp_out.c */
/* Build everything c may send now; false if the TX array filled first. */
bool tcp_output(struct net_stack *s, struct net_conn *c);
/* One segment of c at seq with len data bytes (from the send buffer). */
bool tcp_xmit(struct net_stack *s, struct net_conn *c, uint32_t seq,
	      uint32_t len, uint8_t flags);
void tcp_send_ack(struct net_stack *s, struct net_conn *c);
/* Stateless segments (RST for unknown connections, cookie SYN-ACKs). */
void tcp_send_raw(struct net_stack *s, const struct rte_ether_addr *mac,
		  const struct net_conn_key *k, uint32_t seq, uint32_t ack,
		  uint8_t flags, uint16_t wnd, uint16_t mss_opt, int ws_opt);
/* A stateless segment with data (and no options, a zero window). */
void tcp_send_raw_data(struct net_stack *s, const struct rte_ether_addr *mac,
		       const struct net_conn_key *k, uint32_t seq, uint32_t ack, uint8_t flags,
		       const void *data, uint32_t len);
void tcp_send_rst(struct net_stack *s, struct net_conn *c);
/* Retransmit the first unacknowledged segment (fast retransmit, NewReno
 * partial ACK). */
void tcp_retransmit_first(struct net_stack *s, struct net_conn *c);
void tcp_want_output(struct net_stack *s, struct net_conn *c);

#endif /* SEGCACHED_NET_TCP_H */
