/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP connections of the posix stack, on the worker that serves them:
 * adopt (set up after posix_accept.c and posix_handoff.c), read into
 * the worker's input buffer (or the connection's own while it holds part
 * of a request), run lib/cmd's session loop over it
 * (cmd_session_execute()), write the output, and stop reading while too
 * much output is unsent. Connections that receive nothing for
 * --idle-timeout are closed, as memcached closes them.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Makes close(fd) send a reset rather than a FIN: nothing of it lingers
 * in the kernel (no FIN_WAIT, no TIME_WAIT, unsent replies dropped). */
static void
set_reset_on_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static void
close_reset(int fd)
{
	set_reset_on_close(fd);
	close(fd);
}

/* --request-timeout: the worker's list of connections with a deadline. */
static void
timed_unlink(struct posix_conn *c)
{
	if (!c->timed)
		return;
	TAILQ_REMOVE(&c->w->timed, c, timed_link);
	c->timed = false;
}

static void
timed_append(struct posix_conn *c, uint64_t deadline_ms)
{
	timed_unlink(c);
	c->deadline_ms = deadline_ms;
	TAILQ_INSERT_TAIL(&c->w->timed, c, timed_link);
	c->timed = true;
}

/* --idle-timeout: the worker's list of open connections, least recently
 * active first. Only kept with a timeout (idle_ms() != 0). The admin
 * port's connections have a list and a timeout of their own
 * (--admin-idle-timeout). */
static struct posix_conn_list *
idle_list(struct posix_conn *c)
{
	return c->admin ? &c->w->admin_idle : &c->w->idle;
}

static uint64_t
idle_ms(const struct posix_conn *c)
{
	return c->admin ? c->w->stack->admin_idle_timeout_ms : c->w->stack->idle_timeout_ms;
}

static void
idle_unlink(struct posix_conn *c)
{
	TAILQ_REMOVE(idle_list(c), c, idle_link);
}

static void
idle_append(struct posix_conn *c, uint64_t now_ms)
{
	c->active_ms = now_ms;
	TAILQ_INSERT_TAIL(idle_list(c), c, idle_link);
}

/* Bytes arrived: the connection is the most recently active one. */
static void
idle_touch(struct posix_conn *c)
{
	if (idle_ms(c) == 0)
		return;
	if (TAILQ_LAST(idle_list(c), posix_conn_list) != c) {
		idle_unlink(c);
		idle_append(c, c->w->now_ms);
	} else {
		c->active_ms = c->w->now_ms;
	}
}

/* After each turn of the connection: start, restart or end its deadline
 * (cmd_session_wait() has the rule). */
static void
conn_watch(struct posix_conn *c)
{
	uint64_t t = c->w->stack->request_timeout_ms;
	bool restart;

	if (t == 0)
		return;
	/* What the kernel holds unacknowledged is in its socket buffer, not
	 * in memory of ours: out_held false. */
	if (cmd_session_wait(&c->ses, c->in_end > c->in_start, false, &restart) ==
	    CMD_WAIT_NONE)
		timed_unlink(c);
	else if (restart || !c->timed)
		timed_append(c, posix_now_ms() + t);
}

static size_t
out_pending(const struct posix_conn *c)
{
	return proto_out_pending(&c->ses.out);
}

static size_t
item_max(const struct posix_worker *w)
{
	return w->stack->cfg.cmd->item_max;
}

static struct posix_conn *
conn_get(struct posix_worker *w)
{
	struct posix_conn *c = w->free_list;

	if (c != NULL) {
		w->free_list = c->next;
		return c;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	/* no input buffer: it reads into the worker's (conn_in_borrow) */
	c->p.kind = POSIX_POLL_CONN;
	c->w = w;
	/* The output buffer grows as replies need, up to the backpressure
	 * bound plus the largest single reply. Sends are system calls: this
	 * stack writes after each batch of requests (conn_service), so the
	 * session gets no flush callback. */
	if (cmd_session_init(&c->ses, item_max(w)) < 0) {
		free(c);
		return NULL;
	}
	c->ses.on_shutdown = w->stack->cfg.on_shutdown;
	c->ses.on_shutdown_arg = w->stack->cfg.on_shutdown_arg;
	proto_out_release(&c->ses.out); /* it borrows w->out (conn_service) */
	posix_count(w, POSIX_C_conn_structures, 1);
	return c;
}

static void
conn_close(struct posix_conn *c)
{
	struct posix_worker *w = c->w;

	pthread_mutex_lock(&w->open_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->open = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&w->open_lock);
	timed_unlink(c);
	posix_yield_unlink(c);
	if (idle_ms(c) != 0)
		idle_unlink(c);
	if (c->admin)
		stack_admin_put(&w->stack->admin_sources, (uint64_t)c->fd + 1);
	close(c->fd); /* also leaves the epoll set */
	c->fd = -1;
	if (c->admin) {
		atomic_fetch_sub_explicit(&w->stack->admin_conns, 1, memory_order_relaxed);
		posix_count(w, POSIX_C_admin_conns_closed, 1);
	} else {
		atomic_fetch_sub_explicit(&w->stack->curr_conns, 1, memory_order_relaxed);
		posix_count(w, POSIX_C_conns_closed, 1);
	}
	if (c->src_counted) {
		pthread_mutex_lock(&w->stack->sources_lock);
		stack_sources_put(w->stack->sources, &c->src);
		pthread_mutex_unlock(&w->stack->sources_lock);
		c->src_counted = false;
	}
	c->admin = false;

	/* Keep the object for the next connection, with no input and a
	 * small output buffer. */
	if (c->ses.cmd != NULL)
		cmd_conn_trace_close(c->ses.cmd); /* -vv */
	posix_conn_in_drop(c);
	posix_conn_out_release(c);
	if (cmd_session_close(&c->ses, item_max(w)) < 0) {
		/* No memory for even a small buffer: drop the object. */
		free(c);
		posix_count(w, POSIX_C_conn_structures, (uint64_t)-1);
		return;
	}
	cmd_session_out_give_back(&c->ses, &w->out);
	c->events = 0;
	c->prev = NULL;
	c->next = w->free_list;
	w->free_list = c;
}

/* Gives up a connection that could not be set up; it was counted in
 * curr_conns (or admin_conns) by the worker that accepted it. */
static void
adopt_failed(struct posix_worker *w, int fd, const struct posix_socket *ls)
{
	if (ls->admin) {
		stack_admin_put(&w->stack->admin_sources, (uint64_t)fd + 1);
		close(fd);
		atomic_fetch_sub_explicit(&w->stack->admin_conns, 1, memory_order_relaxed);
	} else {
		posix_accept_abandon(w->stack, fd);
	}
	posix_count(w, POSIX_C_accept_errors, 1);
}

/* --max-conns-per-source, on the worker that serves the connection: the
 * count is taken where it is given back (conn_close). A refused client is
 * reset at once; false then, and fd is gone. */
static bool
source_admit(struct posix_worker *w, int fd, const struct sockaddr *peer,
	     struct stack_source *src)
{
	struct posix_stack *s = w->stack;
	bool ok;

	if (!stack_source_of(src, peer))
		return true; /* neither IPv4 nor IPv6: not counted */
	pthread_mutex_lock(&s->sources_lock);
	ok = stack_sources_take(s->sources, src, s->cfg.max_conns_per_source);
	pthread_mutex_unlock(&s->sources_lock);
	if (ok)
		return true;
	close_reset(fd);
	atomic_fetch_sub_explicit(&s->curr_conns, 1, memory_order_relaxed);
	posix_count(w, POSIX_C_conns_refused_per_source, 1);
	{
		static struct util_ratelimit source_log =
			UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);
		char why[96];

		snprintf(why, sizeof(why), "the address holds %u connections, the "
			 "--max-conns-per-source limit", s->cfg.max_conns_per_source);
		posix_log_refused(&source_log, peer,
				  peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
				  sizeof(struct sockaddr_in), why);
	}
	return false;
}

void
posix_tcp_adopt(struct posix_worker *w, int fd, const struct posix_socket *ls)
{
	struct posix_stack *s = w->stack;
	struct sockaddr_storage peer;
	socklen_t peerlen = sizeof(peer);
	struct epoll_event ev;
	struct stack_source src;
	bool counted = false;
	struct posix_conn *c;
	int one = 1;

	if (getpeername(fd, (struct sockaddr *)&peer, &peerlen) < 0) {
		adopt_failed(w, fd, ls); /* reset before we got to it */
		return;
	}
	if (s->sources != NULL && !ls->admin) {
		if (!source_admit(w, fd, (struct sockaddr *)&peer, &src))
			return;
		counted = true;
	}
	c = conn_get(w);
	if (c != NULL && cmd_session_open(&c->ses, s->cfg.cmd, w->ew) < 0) {
		c->next = w->free_list;
		w->free_list = c;
		c = NULL;
	}
	if (c == NULL) {
		POSIX_LOG(WARNING, "out of memory for a connection");
		goto fail;
	}
	/* Responses are whole; send them at once (memcached does). */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	cmd_conn_trace_open(c->ses.cmd, fd); /* -vv */
	c->events = EPOLLIN;
	ev.events = c->events;
	ev.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		POSIX_LOG(WARNING, "epoll_ctl: %s", strerror(errno));
		cmd_conn_destroy(c->ses.cmd);
		c->ses.cmd = NULL;
		c->next = w->free_list;
		w->free_list = c;
		goto fail;
	}
	c->listen = ls;
	c->admin = ls->admin;
	if (c->admin) {
		cmd_conn_set_admin(c->ses.cmd);
		posix_count(w, POSIX_C_admin_conns_opened, 1);
	} else {
		posix_count(w, POSIX_C_conns_opened, 1);
	}
	c->src_counted = counted;
	if (counted)
		c->src = src;
	posix_addr_string((struct sockaddr *)&peer, peerlen, true, c->peer, sizeof(c->peer));
	pthread_mutex_lock(&w->open_lock);
	c->prev = NULL;
	c->next = w->open;
	if (w->open)
		w->open->prev = c;
	w->open = c;
	pthread_mutex_unlock(&w->open_lock);
	if (idle_ms(c) != 0)
		idle_append(c, w->now_ms);
	return;
fail:
	if (counted) {
		pthread_mutex_lock(&s->sources_lock);
		stack_sources_put(s->sources, &src);
		pthread_mutex_unlock(&s->sources_lock);
	}
	adopt_failed(w, fd, ls);
}

/* Writes queued output. Returns false when the connection is dead. */
static bool
conn_flush(struct posix_conn *c)
{
	while (out_pending(c) > 0) {
		ssize_t n = send(c->fd, c->ses.out.data + c->ses.out.head,
				 out_pending(c), MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			return false;
		}
		proto_out_consume(&c->ses.out, (size_t)n);
		c->ses.sent = true;
		posix_count(c->w, POSIX_C_bytes_written, (uint64_t)n);
	}
	return true;
}

/* Runs the session loop over the input buffer: it executes requests until
 * the input runs out, the output is over the bound or the client is to be
 * closed. Returns true if a request was consumed. */
static bool
conn_execute(struct posix_conn *c)
{
	size_t used;

	if (c->in_end == c->in_start)
		return false; /* nothing received waits (c->in may be NULL) */
	used = cmd_session_execute(&c->ses, c->in + c->in_start, c->in_end - c->in_start);
	c->in_start += used;
	if (c->in_start == c->in_end)
		c->in_start = c->in_end = 0;
	return used > 0;
}

/* conn_in_give_back(), closing the connection when there is no memory
 * for its bytes. Returns false when it was closed. */
static bool
conn_in_settle(struct posix_conn *c)
{
	if (posix_conn_in_give_back(c))
		return true;
	POSIX_LOG(WARNING, "closing %s: out of memory for its input", c->peer);
	conn_close(c);
	return false;
}

/* Executes and writes until nothing more can be done now; closes the
 * connection when it is finished. Returns false when it was closed. */
static bool
conn_service(struct posix_conn *c)
{
	/* replies are composed in w->out while c holds no unsent bytes */
	cmd_session_out_borrow(&c->ses, &c->w->out);
	for (;;) {
		bool progress = conn_execute(c);
		bool had_output = out_pending(c) > 0;

		if (!conn_flush(c)) {
			conn_close(c);
			return false;
		}
		if (c->ses.closing || out_pending(c) > 0)
			break;
		/* All output went out. Go on only if the executor did
		 * something: it may have stopped at its own output bound
		 * with complete requests still buffered. */
		if (!progress && !had_output)
			break;
		if (c->in_end == c->in_start)
			break;
	}
	cmd_session_out_give_back(&c->ses, &c->w->out);
	/* With no output left, nothing more can be executed now either: a
	 * connection whose client stopped sending is finished (unless -R
	 * left requests of it for its next turn). */
	if (cmd_session_finished(&c->ses) && !posix_yield_waiting(c)) {
		conn_close(c);
		return false;
	}
	if (!posix_conn_out_settle(c)) {
		static struct util_ratelimit slow_log = UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);
		uint64_t more;

		posix_count(c->w, POSIX_C_conns_slow_readers_closed, 1);
		if (util_ratelimit(&slow_log, &more))
			POSIX_LOG(NOTICE, "resetting %s: %zu bytes of replies unsent and the "
				  "output share of --tcp-buffer-memory spent, a reader that fell "
				  "behind (%" PRIu64 " more since the last such line)", c->peer,
				  out_pending(c), more);
		set_reset_on_close(c->fd);
		conn_close(c);
		return false;
	}
	return conn_in_settle(c);
}

/* Registers what the connection waits for now: input unless it is
 * finishing or over the output bound, output space while output is
 * queued. */
static void
conn_update_events(struct posix_conn *c)
{
	uint32_t want = 0;
	/* -R: a connection whose requests wait for its next turn reads no
	 * more until they ran */
	bool yielded = posix_yield_note(c);

	conn_watch(c);
	if (!yielded && !c->ses.closing && !c->ses.eof && !cmd_session_backlogged(&c->ses))
		want |= EPOLLIN;
	if (out_pending(c) > 0)
		want |= EPOLLOUT;
	if (want != c->events) {
		struct epoll_event ev = { .events = want, .data.ptr = c };

		if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
			conn_close(c);
			return;
		}
		c->events = want;
	}
}

static void
conn_readable(struct posix_conn *c)
{
	int round;

	for (round = 0; round < POSIX_READ_ROUNDS; round++) {
		size_t room;
		ssize_t n;

		posix_conn_in_borrow(c);
		/* only its own buffer, holding a large request, can be full */
		if (c->in_end == c->in_cap) {
			enum posix_room r = posix_conn_make_room(c);

			if (r == POSIX_ROOM_NO_BUDGET && posix_conn_in_refuse(c)) {
				/* its reply goes out, the rest is swallowed */
				if (!conn_service(c))
					return;
				continue;
			}
			if (r != POSIX_ROOM_OK) {
				POSIX_LOG(INFO, "closing a connection: request larger than %zu "
					  "bytes%s", c->w->stack->in_max,
					  r == POSIX_ROOM_NO_BUDGET ?
					  " or --tcp-buffer-memory spent" : "");
				conn_close(c);
				return;
			}
		}
		room = c->in_cap - c->in_end;
		/* the worker's whole buffer only for a value streamed into its
		 * item (fewer reads of a large set): what other reads leave over
		 * stays within a connection's uncharged allowance */
		if (posix_conn_in_borrowed(c) && !cmd_conn_streaming(c->ses.cmd) &&
		    c->in_end < POSIX_BUF_UNCOUNTED && room > POSIX_BUF_UNCOUNTED - c->in_end)
			room = POSIX_BUF_UNCOUNTED - c->in_end;
		n = recv(c->fd, c->in + c->in_end, room, MSG_DONTWAIT);
		if (n < 0) {
			int err = errno;

			if (err != EINTR && err != EAGAIN && err != EWOULDBLOCK) {
				conn_close(c);
				return;
			}
			/* nothing came: the worker's buffer goes back */
			if (!conn_in_settle(c))
				return;
			if (err == EINTR)
				continue;
			break;
		}
		if (n == 0) {
			/* The client is done sending: answer what it sent,
			 * then close. */
			c->ses.eof = true;
			if (!conn_service(c))
				return;
			break;
		}
		c->in_end += (size_t)n;
		posix_count(c->w, POSIX_C_bytes_read, (uint64_t)n);
		idle_touch(c);
		if (!conn_service(c))
			return;
		if (c->ses.closing || cmd_session_backlogged(&c->ses) ||
		    cmd_conn_yielded(c->ses.cmd))
			break;
		if ((size_t)n < room)
			break; /* the socket is drained */
	}
	conn_update_events(c);
}

void
posix_tcp_event(struct posix_conn *c, uint32_t events)
{
	posix_yield_begin(c);
	if ((events & EPOLLERR) || ((events & EPOLLHUP) && !(events & EPOLLIN))) {
		conn_close(c);
		return;
	}
	/* Output space: write, then run the requests that waited in the
	 * input buffer while the output was over the bound. */
	if ((events & EPOLLOUT) && !conn_service(c))
		return;
	if ((events & EPOLLIN) && !c->ses.closing && !c->ses.eof &&
	    !cmd_session_backlogged(&c->ses)) {
		conn_readable(c);
		return;
	}
	conn_update_events(c);
}

int
posix_tcp_expire(struct posix_worker *w)
{
	uint64_t now, t = w->stack->request_timeout_ms / 1000;
	struct posix_conn *c;

	if (TAILQ_EMPTY(&w->timed))
		return -1;
	now = posix_now_ms();
	while ((c = TAILQ_FIRST(&w->timed)) != NULL && c->deadline_ms <= now) {
		if (c->ses.wait == CMD_WAIT_WRITE) {
			posix_count(w, POSIX_C_conns_write_timeouts, 1);
			POSIX_LOG(INFO, "resetting %s: it took no reply for %" PRIu64 " s",
				  c->peer, t);
		} else {
			posix_count(w, POSIX_C_conns_request_timeouts, 1);
			POSIX_LOG(INFO, "resetting %s: a request incomplete after %" PRIu64 " s",
				  c->peer, t);
		}
		/* a reset: the unsent replies of a client that does not read
		 * would keep a FIN from leaving anyway */
		set_reset_on_close(c->fd);
		conn_close(c);
	}
	if (c == NULL)
		return -1;
	return (int)RTE_MIN(c->deadline_ms - now, (uint64_t)INT32_MAX);
}

/* One idle list: the clients' (--idle-timeout) or the admin port's. */
static int
idle_expire(struct posix_worker *w, struct posix_conn_list *list, uint64_t t,
	    enum posix_stack_counter kicks)
{
	uint64_t now;
	struct posix_conn *c;
	unsigned n = 0;

	if (TAILQ_EMPTY(list))
		return -1;
	now = posix_now_ms();
	while ((c = TAILQ_FIRST(list)) != NULL && c->active_ms + t <= now) {
		if (n++ == POSIX_IDLE_BURST)
			return 0;
		/* Replies still going out: not idle, as memcached leaves a
		 * connection alone while it writes to it (replies a client
		 * does not take are --request-timeout's business). Its
		 * silence is counted again from now. */
		if (out_pending(c) > 0) {
			idle_unlink(c);
			idle_append(c, now);
			continue;
		}
		posix_count(w, kicks, 1);
		POSIX_LOG(DEBUG, "closing %s: nothing received for %" PRIu64 " s",
			  c->peer, t / 1000);
		conn_close(c); /* a FIN: nothing is left to send */
	}
	if (c == NULL)
		return -1;
	return (int)RTE_MIN(c->active_ms + t - now, (uint64_t)INT32_MAX);
}

int
posix_tcp_idle_expire(struct posix_worker *w)
{
	const struct posix_stack *s = w->stack;

	return posix_timeout_min(idle_expire(w, &w->idle, s->idle_timeout_ms, POSIX_C_idle_kicks),
				 idle_expire(w, &w->admin_idle, s->admin_idle_timeout_ms,
					     POSIX_C_admin_idle_kicks));
}

void
posix_tcp_close_all(struct posix_worker *w)
{
	while (w->open != NULL)
		conn_close(w->open);
}

void
posix_tcp_free_all(struct posix_worker *w)
{
	posix_tcp_close_all(w);
	while (w->free_list != NULL) {
		struct posix_conn *c = w->free_list;

		w->free_list = c->next;
		cmd_session_fini(&c->ses);
		free(c);
	}
}
