/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Accepting on the posix stack's listening TCP sockets: --allow,
 * --max-conns and the admin port's limit are applied here, the way
 * memcached refuses ("ERROR Too many open connections"), and accepts pause
 * for a moment when descriptors run out. An accepted connection goes to
 * the worker whose turn it is (posix_handoff.c), which adopts it
 * (posix_tcp.c).
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* memcached's words, byte for byte. */
static const char too_many_conns[] = "ERROR Too many open connections\r\n";

/* Refuses a connection the way memcached does: one error line, then close. */
static void
reject(struct posix_worker *w, int fd, enum posix_stack_counter why)
{
	ssize_t n = send(fd, too_many_conns, sizeof(too_many_conns) - 1,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n > 0)
		posix_count(w, POSIX_C_bytes_written, (uint64_t)n);
	close(fd);
	posix_count(w, why, 1);
}

/* The admin port: not counted against -c, at most STACK_ADMIN_CONNS at
 * once and STACK_ADMIN_CONNS_PER_SOURCE from one address, served by the
 * worker that accepted it (no handoff: few, and an operator's). The
 * connection's slot goes back where it closes (posix_tcp.c). */
static void
accept_admin(struct posix_worker *w, int fd, const struct posix_socket *ls,
	     const struct sockaddr *peer)
{
	struct posix_stack *s = w->stack;
	struct stack_source src;
	enum stack_admin_take r;

	if (atomic_fetch_add_explicit(&s->admin_conns, 1, memory_order_relaxed) >=
	    STACK_ADMIN_CONNS) {
		atomic_fetch_sub_explicit(&s->admin_conns, 1, memory_order_relaxed);
		reject(w, fd, POSIX_C_admin_conns_rejected);
		return;
	}
	if (!stack_source_of(&src, peer))
		memset(&src, 0, sizeof(src)); /* neither IPv4 nor IPv6: one source */
	r = stack_admin_take(&s->admin_sources, &src, (uint64_t)fd + 1,
			     STACK_ADMIN_CONNS_PER_SOURCE);
	if (r != STACK_ADMIN_TAKEN) {
		atomic_fetch_sub_explicit(&s->admin_conns, 1, memory_order_relaxed);
		reject(w, fd, r == STACK_ADMIN_SOURCE_FULL ? POSIX_C_admin_conns_refused_per_source
							   : POSIX_C_admin_conns_rejected);
		return;
	}
	posix_tcp_adopt(w, fd, ls);
}

/* Accepts what the listening socket has queued (up to a burst) and deals
 * each connection to the worker whose turn it is (posix_handoff.c). The
 * --max-conns check happens here, before any worker takes it. */
void
posix_accept(struct posix_worker *w, struct posix_socket *ls)
{
	struct posix_stack *s = w->stack;
	int i;

	for (i = 0; i < POSIX_ACCEPT_BURST; i++) {
		struct sockaddr_storage peer;
		socklen_t peerlen = sizeof(peer);
		uint64_t curr;
		int fd;

		fd = accept4(ls->fd, (struct sockaddr *)&peer, &peerlen,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			posix_count(w, POSIX_C_accept_errors, 1);
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				POSIX_LOG(WARNING,
					  "accept on %s: %s; pausing accepts",
					  ls->name, strerror(errno));
				posix_accept_pause(w);
			}
			return;
		}
		/* The kernel completed the handshake; nothing of ours is
		 * spent on a client outside --allow, not even a reply. */
		if (!posix_peer_allowed(s, (const struct sockaddr *)&peer)) {
			close(fd);
			posix_count(w, POSIX_C_conns_not_allowed, 1);
			continue;
		}
		if (ls->admin) {
			accept_admin(w, fd, ls, (const struct sockaddr *)&peer);
			continue;
		}
		curr = atomic_fetch_add_explicit(&s->curr_conns, 1,
						 memory_order_relaxed);
		if (curr >= s->cfg.max_conns) {
			static struct util_ratelimit full_log =
				UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);
			char why[96];

			atomic_fetch_sub_explicit(&s->curr_conns, 1,
						  memory_order_relaxed);
			reject(w, fd, POSIX_C_conns_rejected);
			snprintf(why, sizeof(why), "%u connections are open, the -c limit",
				 s->cfg.max_conns);
			posix_log_refused(&full_log, (const struct sockaddr *)&peer, peerlen, why);
			continue;
		}
		posix_handoff_dispatch(w, fd, ls);
	}
}

/* accept() failing for lack of file descriptors leaves the connection
 * queued, so a level-triggered epoll would report it again at once. Take
 * the listening sockets out of this worker's set for a moment instead. */
void
posix_accept_pause(struct posix_worker *w)
{
	struct posix_stack *s = w->stack;
	unsigned i;

	if (w->accept_paused)
		return;
	for (i = 0; i < s->nsockets; i++)
		if (s->sockets[i].p.kind == POSIX_POLL_LISTEN)
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, s->sockets[i].fd, NULL);
	__atomic_store_n(&w->accept_paused, true, __ATOMIC_RELAXED);
	w->accept_resume_ms = posix_now_ms() + 100;
	posix_count(w, POSIX_C_listen_disabled, 1);
}

void
posix_accept_resume(struct posix_worker *w)
{
	struct posix_stack *s = w->stack;
	unsigned i;

	for (i = 0; i < s->nsockets; i++)
		if (s->sockets[i].p.kind == POSIX_POLL_LISTEN)
			posix_epoll_add(w->epfd, s->sockets[i].fd,
				  EPOLLIN | EPOLLEXCLUSIVE, &s->sockets[i]);
	__atomic_store_n(&w->accept_paused, false, __ATOMIC_RELAXED);
}
