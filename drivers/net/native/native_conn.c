/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the native stack does with lib/net's callbacks: a TCP connection's
 * bytes go to cmd_process(), its replies into TCP's send buffer; a UDP
 * datagram is one memcached frame, answered in numbered datagrams.
 *
 * Requests are parsed where lib/net keeps them (its receive buffer is
 * contiguous and keeps what we do not consume), so an ordinary request is
 * never copied. Only a request that outgrows half of that buffer (a large
 * set) is moved into a buffer of the connection's own and assembled there.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "drivers/net/native/native_private.h"
#include "util/util_ratelimit.h"
#include "proto/proto_udp.h"

/* memcached's words, byte for byte. */
static const char too_many_conns[] = NATIVE_TOO_MANY_CONNS;

static size_t
out_pending(const struct native_conn *c)
{
	return proto_out_pending(&c->ses.out);
}

static void conn_lend_send_space(struct native_conn *c);

/* Moves composed replies into TCP's send buffer, as far as it has room.
 * The session loop calls it before each request, so replies leave the
 * output buffer as soon as TCP can take them. Bytes composed in TCP's
 * own free space (conn_lend_send_space) are queued where they lie;
 * others are copied. */
static void
conn_flush(void *arg)
{
	struct native_conn *c = arg;
	struct proto_out *o = &c->ses.out;

	while (out_pending(c) > 0) {
		bool in_ring = proto_out_is_lent(o) || o->kept_len > 0;
		size_t n, k;
		const char *p = proto_out_front(o, &n);

		k = in_ring ? net_tcp_send_commit(c->nc, p, n) : net_tcp_send(c->nc, p, n);
		if (k == 0)
			break;
		proto_out_consume(o, k);
		c->ses.sent = true;
		NATIVE_ADD(c->w, bytes_written, k);
		if (in_ring)
			NATIVE_ADD(c->w, bytes_composed_in_place, k);
	}
	/* all sent, and more replies to come: compose them in place again */
	if (c->executing && out_pending(c) == 0 && !proto_out_is_lent(o))
		conn_lend_send_space(c);
}

/* Lends the free space at the end of TCP's send ring to the session's
 * output, so that replies are composed where TCP sends them from: a value
 * is copied once, from the heap into the ring (which the NIC reads
 * without a copy where it offloads checksums), instead of into the
 * worker's buffer and then into the ring. Only while the output holds no
 * bytes, which would have to go first, and only while the session runs
 * (conn_execute): lib/net may move the ring's free space in between. */
static void
conn_lend_send_space(struct native_conn *c)
{
	size_t room;
	void *win;

	if (out_pending(c) > 0)
		return;
	win = net_tcp_send_window(c->nc, &room);
	if (win != NULL && room >= NATIVE_LEND_MIN)
		proto_out_lend(&c->ses.out, win, room);
}

/* The session's output composes in its own memory again; bytes it
 * composed in TCP's ring and TCP did not take (it can no longer send)
 * move there. Without memory for them they are dropped, and the
 * connection closes after the replies before them: the client never sees
 * a reply with a hole in it. */
static void
conn_end_loan(struct native_conn *c)
{
	if (proto_out_end_loan(&c->ses.out))
		return;
	NATIVE_INC(c->w, conns_out_of_memory);
	c->ses.closing = true;
}

/* --request-timeout: after each turn of the connection, start, restart
 * or stop its timer (cmd_session_wait() has the rule). The timer is
 * lib/net's, one per connection; pushing it back is a store.
 * Bytes in TCP's send ring that the client has not acknowledged are
 * output still owed: they hold a buffer pair (memory of ours, and under
 * --tcp-buffer-memory a share of the budget), so a client that keeps its
 * window shut, or never acknowledges, is timed like one whose reply waits
 * in ses.out. The client acknowledging bytes is progress (`sent`).
 * An admin port connection with nothing pending has the timer at
 * --admin-idle-timeout from its last turn instead. */
static void
conn_watch(struct native_conn *c)
{
	uint64_t t = c->w->nat->request_timeout_us;
	uint64_t idle = c->admin ? c->w->nat->admin_idle_timeout_us : 0;
	uint8_t was = c->ses.wait;
	uint32_t queued;
	bool restart;

	if (t == 0 && idle == 0)
		return;
	queued = (uint32_t)net_tcp_send_queued(c->nc);
	if (queued < c->watch_queued)
		c->ses.sent = true;
	c->watch_queued = queued;
	if (cmd_session_wait(&c->ses, c->rx_left > 0 || c->in_len > 0, queued > 0, &restart) ==
	    CMD_WAIT_NONE || t == 0) {
		if (idle != 0)
			net_tcp_set_timer(c->nc, net_stack_now(c->w->stack) + idle);
		else if (was != CMD_WAIT_NONE)
			net_tcp_set_timer(c->nc, 0);
		return;
	}
	if (restart)
		net_tcp_set_timer(c->nc, net_stack_now(c->w->stack) + t);
}

/* Graceful close once the session is finished (cmd_session_finished()):
 * TCP sends the FIN after the queued bytes. */
static void
conn_maybe_close(struct native_conn *c)
{
	if (c->close_sent || !cmd_session_finished(&c->ses))
		return;
	c->close_sent = true;
	net_tcp_close(c->nc);
}

/* Runs the session loop over buf[0..len); returns the bytes consumed. */
static size_t
conn_execute(struct native_conn *c, const char *buf, size_t len)
{
	size_t used;

	cmd_session_out_borrow(&c->ses, &c->w->out); /* w->out, while c holds no bytes */
	c->executing = true;
	conn_lend_send_space(c);
	used = cmd_session_execute(&c->ses, buf, len); /* ends with conn_flush */
	c->executing = false;
	conn_end_loan(c);
	cmd_session_out_give_back(&c->ses, &c->w->out);
	NATIVE_ADD(c->w, bytes_read, used);
	return used;
}

/* Appends to the connection's own input buffer; false when a request would
 * exceed what any valid request needs. */
static bool
conn_in_append(struct native_conn *c, const uint8_t *data, size_t len)
{
	size_t need = c->in_len + len;

	if (need > c->w->nat->in_max)
		return false;
	if (need > c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap : 2 * NATIVE_RCVBUF;
		char *in;

		while (cap < need)
			cap *= 2;
		if (cap > c->w->nat->in_max)
			cap = c->w->nat->in_max;
		in = realloc(c->in, cap);
		if (in == NULL)
			return false;
		c->in = in;
		c->in_cap = cap;
	}
	memcpy(c->in + c->in_len, data, len);
	c->in_len += len;
	return true;
}

/* Runs what was assembled aside; keeps the incomplete rest. */
static void
conn_run_aside(struct native_conn *c)
{
	size_t used = conn_execute(c, c->in, c->in_len);

	if (used > 0) {
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
	if (c->in_len == 0 || c->ses.closing) {
		/* Back to parsing in place; large buffers are not kept. */
		c->in_len = 0;
		free(c->in);
		c->in = NULL;
		c->in_cap = 0;
	}
}

static void
conn_oversized(struct native_conn *c)
{
	NATIVE_LOG(INFO, "lcore %u: closing a connection: request larger than %zu bytes",
		c->w->lcore, c->w->nat->in_max);
	NATIVE_INC(c->w, conns_oversized);
	net_tcp_abort(c->nc); /* calls on_closed, which frees c */
}

static size_t
on_recv(void *app, struct net_conn *nc, const uint8_t *data, size_t len)
{
	struct native_conn *c = net_conn_ctx(nc);
	size_t used, left;

	(void)app;
	if (c == NULL || c->ses.closing)
		return len; /* refused or finishing: input is discarded */
	if (c->in_len > 0) {
		/* A large request is being assembled: everything goes there,
		 * in order; but not while the output is over the bound, when
		 * the bytes wait in TCP's receive buffer and its window
		 * holds the client back. */
		if (cmd_session_blocked(&c->ses)) {
			c->rx_left = (uint32_t)len;
			conn_watch(c);
			return 0;
		}
		if (!conn_in_append(c, data, len)) {
			conn_oversized(c);
			return 0;
		}
		conn_run_aside(c);
		c->rx_left = 0;
		conn_watch(c);
		conn_maybe_close(c);
		return len;
	}
	used = conn_execute(c, (const char *)data, len);
	left = len - used;
	if (left >= NATIVE_SPILL && !c->ses.closing && !c->ses.stalled) {
		/* An incomplete request that may not fit the receive buffer. */
		if (!conn_in_append(c, data + used, left)) {
			conn_oversized(c);
			return 0;
		}
		NATIVE_INC(c->w, large_requests);
		used = len;
	}
	c->rx_left = (uint32_t)(len - used);
	/* before a close, which may release c */
	conn_watch(c);
	conn_maybe_close(c);
	return used;
}

static void
on_writable(void *app, struct net_conn *nc)
{
	struct native_conn *c = net_conn_ctx(nc);

	(void)app;
	if (c == NULL)
		return;
	conn_flush(c);
	cmd_session_out_give_back(&c->ses, &c->w->out);
	if (c->in_len > 0 && !c->ses.closing)
		conn_run_aside(c);
	conn_watch(c);
	conn_maybe_close(c);
}

static void
on_peer_closed(void *app, struct net_conn *nc)
{
	struct native_conn *c = net_conn_ctx(nc);

	(void)app;
	if (c == NULL) {
		net_tcp_close(nc);
		return;
	}
	/* Answer what was sent, then close, as memcached does; a request
	 * still incomplete can never complete now. */
	c->ses.eof = true;
	c->in_len = 0;
	c->rx_left = 0;
	conn_watch(c);
	conn_maybe_close(c);
}

/* The --request-timeout deadline passed (conn_watch() armed it). */
static void
on_timer(void *app, struct net_conn *nc)
{
	struct native_worker *w = app;
	struct native_conn *c = net_conn_ctx(nc);
	uint32_t t = (uint32_t)(w->nat->request_timeout_us / 1000000u);

	if (c == NULL)
		return;
	if (c->admin && w->nat->admin_idle_timeout_us != 0 &&
	    (c->ses.wait == CMD_WAIT_NONE || t == 0)) {
		NATIVE_INC(w, admin_idle_kicks);
		NATIVE_LOG(DEBUG, "lcore %u: resetting an admin port connection silent for %u s",
			   w->lcore, (unsigned)(w->nat->admin_idle_timeout_us / 1000000u));
		net_tcp_abort(nc); /* on_closed frees c */
		return;
	}
	if (c->ses.wait == CMD_WAIT_NONE)
		return;
	if (c->ses.wait == CMD_WAIT_WRITE && net_tcp_send_queued(nc) < c->watch_queued) {
		/* The client acknowledged bytes since the timer was armed, or
		 * all of them: it is reading; look again (a new deadline, or
		 * none). */
		conn_watch(c);
		return;
	}
	if (c->ses.wait == CMD_WAIT_WRITE) {
		NATIVE_INC(w, conns_write_timeouts);
		NATIVE_LOG(INFO, "lcore %u: resetting a connection that took no reply for %u s",
			   w->lcore, t);
	} else {
		NATIVE_INC(w, conns_request_timeouts);
		NATIVE_LOG(INFO, "lcore %u: resetting a connection whose request is "
			   "incomplete after %u s", w->lcore, t);
	}
	net_tcp_abort(nc); /* on_closed frees c */
}

static struct native_conn *
conn_get(struct native_worker *w)
{
	struct native_conn *c = w->free_list;

	if (c != NULL) {
		w->free_list = c->next_free;
		c->next_free = NULL;
		return c;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (cmd_session_init(&c->ses, w->nat->cfg.cmd->item_max) < 0) {
		free(c);
		return NULL;
	}
	proto_out_release(&c->ses.out); /* it borrows w->out (conn_execute) */
	c->ses.flush = conn_flush;
	c->ses.flush_arg = c;
	c->ses.on_shutdown = w->nat->cfg.on_shutdown;
	c->ses.on_shutdown_arg = w->nat->cfg.on_shutdown_arg;
	c->ses.stalls = &w->ctr[NATIVE_C_backpressure_stalls];
	c->w = w;
	return c;
}

static void
conn_put(struct native_worker *w, struct native_conn *c)
{
	c->nc = NULL;
	free(c->in);
	c->in = NULL;
	c->in_len = c->in_cap = 0;
	c->close_sent = false;
	c->admin = false;
	c->src_counted = false;
	c->rx_left = 0;
	c->watch_queued = 0;
	if (cmd_session_close(&c->ses, w->nat->cfg.cmd->item_max) < 0) {
		free(c);
		return;
	}
	cmd_session_out_give_back(&c->ses, &c->w->out);
	c->next_free = w->free_list;
	w->free_list = c;
}

/* One log line per refused connection, rl permitting (util_ratelimit.h):
 * the peer and why. On the lcore, at most once per interval. */
static void __rte_format_printf(3, 4)
log_refused(struct util_ratelimit *rl, uint32_t raddr, const char *fmt, ...)
{
	uint64_t suppressed;
	char why[128];
	va_list ap;

	if (!util_ratelimit(rl, &suppressed))
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (suppressed > 0)
		NATIVE_LOG(WARNING, "connection from %u.%u.%u.%u refused: %s (and %" PRIu64
			   " more refused for this since the last such line)", raddr >> 24,
			   (raddr >> 16) & 0xff, (raddr >> 8) & 0xff, raddr & 0xff, why,
			   suppressed);
	else
		NATIVE_LOG(WARNING, "connection from %u.%u.%u.%u refused: %s", raddr >> 24,
			   (raddr >> 16) & 0xff, (raddr >> 8) & 0xff, raddr & 0xff, why);
}

/* memcached's way of refusing: one error line, then close. */
static int
refuse(struct net_conn *nc)
{
	net_conn_set_ctx(nc, NULL);
	net_tcp_send(nc, too_many_conns, sizeof(too_many_conns) - 1);
	net_tcp_close(nc);
	return 0;
}

static int
on_accepted(void *app, struct net_conn *nc)
{
	struct native_worker *w = app;
	struct native *nat = w->nat;
	_Atomic uint64_t *count = &nat->curr_conns;
	struct stack_source src;
	bool counted = false;
	struct native_conn *c;
	uint32_t laddr, raddr;
	uint16_t lport, rport;

	net_conn_addrs(nc, &laddr, &lport, &raddr, &rport);
	if (unlikely(lport == nat->cfg.admin_port && lport != 0)) {
		/* not counted against -c; a few at most */
		enum stack_admin_take r;

		count = &nat->admin_conns;
		if (atomic_fetch_add_explicit(count, 1, memory_order_relaxed) >=
		    STACK_ADMIN_CONNS) {
			atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
			NATIVE_INC(w, admin_conns_rejected);
			return refuse(nc);
		}
		/* a few from one source, so that one cannot lock the others out */
		stack_source_ipv4(&src, raddr);
		r = stack_admin_take(&nat->admin_sources, &src, (uint64_t)(uintptr_t)nc,
				     STACK_ADMIN_CONNS_PER_SOURCE);
		if (r != STACK_ADMIN_TAKEN) {
			atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
			if (r == STACK_ADMIN_SOURCE_FULL)
				NATIVE_INC(w, admin_conns_refused_per_source);
			else
				NATIVE_INC(w, admin_conns_rejected);
			return refuse(nc);
		}
	} else {
		if (atomic_fetch_add_explicit(count, 1, memory_order_relaxed) >=
		    nat->cfg.max_conns) {
			static struct util_ratelimit full_log =
				UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);

			atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
			NATIVE_INC(w, conns_rejected);
			log_refused(&full_log, raddr, "%u connections are open, the -c limit",
				    nat->cfg.max_conns);
			return refuse(nc);
		}
		if (w->sources != NULL) {
			/* this lcore's share of --max-conns-per-source: over it,
			 * a reset and no state (lib/net refuses for us) */
			stack_source_ipv4(&src, raddr);
			if (!stack_sources_take(w->sources, &src, w->source_limit)) {
				static struct util_ratelimit source_log =
					UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);

				atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
				NATIVE_INC(w, conns_refused_per_source);
				log_refused(&source_log, raddr, "the address holds %u connections on "
					    "this lcore, its share of --max-conns-per-source",
					    w->source_limit);
				return -1;
			}
			counted = true;
		}
	}
	c = conn_get(w);
	if (c != NULL && cmd_session_open(&c->ses, nat->cfg.cmd, w->ew) < 0) {
		conn_put(w, c);
		c = NULL;
	}
	if (c == NULL) {
		atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
		if (counted)
			stack_sources_put(w->sources, &src);
		if (count == &nat->admin_conns)
			stack_admin_put(&nat->admin_sources, (uint64_t)(uintptr_t)nc);
		NATIVE_LOG(WARNING, "lcore %u: out of memory for a connection", w->lcore);
		return -1;
	}
	c->nc = nc;
	net_conn_set_ctx(nc, c);
	c->peer_addr = raddr;
	c->peer_port = rport;
	c->src_counted = counted;
	c->admin = count == &nat->admin_conns;
	if (c->admin) {
		cmd_conn_set_admin(c->ses.cmd);
		/* --admin-idle-timeout from now: conn_watch() pushes it back */
		if (nat->admin_idle_timeout_us != 0)
			net_tcp_set_timer(nc, net_stack_now(w->stack) + nat->admin_idle_timeout_us);
	}
	/* Ids say which worker: 1000000 * (worker + 1) + a counter. */
	c->id = (w->id + 1) * 1000000u + w->next_conn_id++ % 1000000u;
	rte_spinlock_lock(&w->open_lock);
	c->prev = NULL;
	c->next = w->open;
	if (w->open != NULL)
		w->open->prev = c;
	w->open = c;
	rte_spinlock_unlock(&w->open_lock);
	w->conns++;
	if (c->admin)
		NATIVE_INC(w, admin_conns_opened);
	else
		NATIVE_INC(w, conns_opened);
	return 0;
}

static void
on_closed(void *app, struct net_conn *nc, enum net_close_reason why)
{
	struct native_worker *w = app;
	struct native_conn *c = net_conn_ctx(nc);

	if (c == NULL)
		return; /* a refused connection */
	net_conn_set_ctx(nc, NULL);
	rte_spinlock_lock(&w->open_lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		w->open = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	rte_spinlock_unlock(&w->open_lock);
	c->prev = c->next = NULL;
	if (why != NET_CLOSE_NORMAL)
		NATIVE_INC(w, conns_reset);
	w->conns--;
	if (c->admin) {
		NATIVE_INC(w, admin_conns_closed);
		stack_admin_put(&w->nat->admin_sources, (uint64_t)(uintptr_t)nc);
		atomic_fetch_sub_explicit(&w->nat->admin_conns, 1, memory_order_relaxed);
	} else {
		NATIVE_INC(w, conns_closed);
		atomic_fetch_sub_explicit(&w->nat->curr_conns, 1, memory_order_relaxed);
	}
	if (c->src_counted) {
		struct stack_source src;

		stack_source_ipv4(&src, c->peer_addr);
		stack_sources_put(w->sources, &src);
	}
	conn_put(w, c);
}

/* Sends the composed reply as numbered datagrams that carry the request's
 * id, each gathered into its frame straight from the reply buffer. A
 * datagram that cannot be sent now is lost, as on any UDP path: clients
 * retry. */
static void
udp_respond(struct native_worker *w, const struct net_udp_peer *peer, uint16_t req_id)
{
	struct proto_out *o = &w->out;
	const char *data = o->data + o->head;
	size_t len = proto_out_pending(o);
	size_t maxp = net_udp_max_payload(w->stack);
	unsigned total;

	if (len == 0)
		return;
	maxp = maxp > PROTO_UDP_HDR_LEN ? maxp - PROTO_UDP_HDR_LEN : 0;
	if (maxp > PROTO_UDP_PAYLOAD_MAX)
		maxp = PROTO_UDP_PAYLOAD_MAX;
	total = proto_udp_count(len, maxp);
	for (unsigned seq = 0; seq < total; seq++) {
		uint8_t hdr[PROTO_UDP_HDR_LEN];
		struct iovec iov[2];
		size_t n = proto_udp_frame_iov(data, len, maxp, req_id, seq, total, hdr, iov);

		if (net_udp_sendv(w->stack, peer, iov, 2) == 0) {
			NATIVE_INC(w, udp_responses);
			NATIVE_ADD(w, bytes_written, n);
		} else {
			NATIVE_INC(w, udp_send_failed);
		}
	}
	proto_out_consume(o, len);
}

static __attribute__((hot)) void
on_udp_recv(void *app, const struct net_udp_peer *peer, const uint8_t *data, size_t len)
{
	struct native_worker *w = app;
	struct native *nat = w->nat;
	struct proto_udp_hdr h;
	const char *req;
	size_t reqlen;
	int off;

	NATIVE_INC(w, udp_requests);
	off = proto_udp_parse(data, len, &h);
	if (off < 0) {
		NATIVE_INC(w, udp_bad_frames);
		return;
	}
	req = (const char *)data + off;
	reqlen = len - (size_t)off;
	NATIVE_ADD(w, bytes_read, reqlen);
	/* A datagram holds whole requests; each reply is a message of its
	 * own (memcached's behaviour, as on the posix stack). */
	cmd_conn_reset(w->udp_cmd);
	while (reqlen > 0) {
		unsigned actions = 0;
		size_t used = cmd_process(w->udp_cmd, req, reqlen, &w->out, &actions);

		udp_respond(w, peer, h.req_id);
		if ((actions & CMD_ACT_SHUTDOWN) && nat->cfg.on_shutdown != NULL)
			nat->cfg.on_shutdown(nat->cfg.on_shutdown_arg);
		if (used == 0 || (actions & CMD_ACT_CLOSE))
			break;
		req += used;
		reqlen -= used;
	}
}

/* The first phase of an RX burst: the keys its get requests will read
 * are prefetched together, so their cache misses overlap across
 * connections and datagrams (each request is then answered in order).
 * Only payloads with a single key count: the keys of one payload (a
 * multi-key get, pipelined get lines) go through one batched get anyway
 * (lib/cmd, engine_get_batch), which overlaps them itself; hashing them
 * here as well cost pipelined TCP 5-8% for nothing. */
static void
on_rx_hint(void *app, const struct net_rx_hint *p, unsigned n)
{
	struct native_worker *w = app;
	struct engine_key keys[ENGINE_BATCH_GROUP], two[2];
	unsigned nk = 0;

	for (unsigned i = 0; i < n && nk < ENGINE_BATCH_GROUP; i++) {
		const uint8_t *d = p[i].data;
		size_t len = p[i].len;

		if (p[i].udp) {
			struct proto_udp_hdr h;
			int off = proto_udp_parse(d, len, &h);

			if (off < 0)
				continue;
			d += off;
			len -= (size_t)off;
		}
		if (cmd_hint_keys(d, len, two, 2) == 1)
			keys[nk++] = two[0];
	}
	if (nk > 1) /* one key has nothing to overlap with */
		engine_prefetch(w->ew, keys, nk);
}

const struct net_app_ops native_app_ops = {
	.accepted = on_accepted,
	.recv = on_recv,
	.writable = on_writable,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
	.udp_recv = on_udp_recv,
	.timer = on_timer,
	.rx_hint = on_rx_hint,
};

void
native_conn_free_all(struct native_worker *w)
{
	while (w->free_list != NULL) {
		struct native_conn *c = w->free_list;

		w->free_list = c->next_free;
		cmd_session_fini(&c->ses);
		free(c);
	}
}

void
native_conn_close_all(struct native_worker *w)
{
	struct native_conn *c, *next;

	/* net_tcp_close may end a connection at once (on_closed unlinks it). */
	for (c = w->open; c != NULL; c = next) {
		next = c->next;
		c->ses.closing = true;
		if (!c->close_sent) {
			c->close_sent = true;
			net_tcp_close(c->nc);
		}
	}
}

static void
conn_stat(struct proto_out *out, uint32_t id, const char *field, const char *value)
{
	char name[48];

	snprintf(name, sizeof(name), "%u:%s", id, field);
	proto_out_stat(out, name, value);
}

static void
ip_port(char *buf, size_t len, const char *proto, uint32_t addr, uint16_t port)
{
	snprintf(buf, len, "%s:%u.%u.%u.%u:%u", proto, addr >> 24, (addr >> 16) & 0xff,
		 (addr >> 8) & 0xff, addr & 0xff, port);
}

void
native_stats_conns(struct stack *s, struct proto_out *out)
{
	struct native *nat = native_of(s);
	char listen_tcp[48], listen_admin[48], buf[48];

	/* Listening "sockets" first, with ids below any connection's. */
	ip_port(listen_tcp, sizeof(listen_tcp), "tcp", nat->cfg.native.ip, nat->cfg.tcp_port);
	if (nat->cfg.tcp_port != 0) {
		conn_stat(out, 0, "addr", listen_tcp);
		conn_stat(out, 0, "state", "conn_listening");
	}
	if (nat->cfg.udp_port != 0) {
		ip_port(buf, sizeof(buf), "udp", nat->cfg.native.ip, nat->cfg.udp_port);
		conn_stat(out, 1, "addr", buf);
		conn_stat(out, 1, "state", "conn_read");
	}
	ip_port(listen_admin, sizeof(listen_admin), "tcp", nat->cfg.native.ip, nat->cfg.admin_port);
	if (nat->cfg.admin_port != 0) {
		conn_stat(out, 2, "addr", listen_admin);
		conn_stat(out, 2, "state", "conn_listening");
	}
	for (unsigned i = 0; i < nat->nworkers; i++) {
		struct native_worker *w = &nat->workers[i];
		char thread[24];

		snprintf(thread, sizeof(thread), "lcore%u", w->lcore);
		rte_spinlock_lock(&w->open_lock);
		for (const struct native_conn *c = w->open; c != NULL; c = c->next) {
			ip_port(buf, sizeof(buf), "tcp", c->peer_addr, c->peer_port);
			conn_stat(out, c->id, "addr", buf);
			conn_stat(out, c->id, "listen_addr", c->admin ? listen_admin : listen_tcp);
			conn_stat(out, c->id, "state", "conn_parse_cmd");
			conn_stat(out, c->id, "thread", thread);
		}
		rte_spinlock_unlock(&w->open_lock);
	}
}
