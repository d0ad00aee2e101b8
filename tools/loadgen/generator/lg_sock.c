/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The kernel-socket transport (lg_sock.h): one epoll thread per worker
 * over non-blocking TCP connections or connected UDP sockets.
 */
#include "lg_sock.h"
#include "lg_epoll.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SOCK_BUF (256 * 1024)

struct sock_conn {
	struct lg_conn lc;
	int fd;
	char *in, *out;
	size_t in_len;
	size_t out_off, out_len;
	bool blocked;             /* the socket refused bytes (send buffer full) */
};

static int
connect_one(const struct addrinfo *ai, bool udp)
{
	int fd = socket(ai->ai_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC,
			0);
	int one = 1;

	if (fd < 0)
		return -1;
	if (!udp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void
drop(struct sock_conn *sc, int ep)
{
	if (sc->fd < 0)
		return;
	epoll_ctl(ep, EPOLL_CTL_DEL, sc->fd, NULL);
	close(sc->fd);
	sc->fd = -1;
	lg_conn_lost(&sc->lc, lg_now_ns());
	sc->lc.w->stats.conn_failed++;
}

/* Builds every request due into the output buffer and writes it. */
static void
tcp_send(struct sock_conn *sc, int ep, uint64_t now)
{
	struct lg_req *r;

	if (sc->fd < 0)
		return;
	if (sc->out_off == sc->out_len) {
		sc->out_off = sc->out_len = 0;
		while ((r = lg_conn_next(&sc->lc, now)) != NULL) {
			size_t n = lg_req_build(&sc->lc.w->run->wl, r, sc->out + sc->out_len,
						SOCK_BUF - sc->out_len);

			if (n == 0)
				break;
			sc->out_len += n;
			lg_conn_commit(&sc->lc, now);
		}
	}
	while (sc->out_off < sc->out_len) {
		ssize_t n = send(sc->fd, sc->out + sc->out_off, sc->out_len - sc->out_off,
				 MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				sc->blocked = true;
				return; /* EPOLLOUT is not watched: retried each loop */
			}
			if (errno == EINTR)
				continue;
			drop(sc, ep);
			return;
		}
		sc->out_off += (size_t)n;
	}
	if (sc->blocked) {
		/* Requests due while the buffer was full waited on the
		 * connection, not on the generator (window_late). */
		sc->blocked = false;
		sc->lc.window_open_ns = now;
	}
}

static void
tcp_recv(struct sock_conn *sc, int ep, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(sc->fd, sc->in + sc->in_len, SOCK_BUF - sc->in_len, 0);
		size_t used;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			drop(sc, ep);
			return;
		}
		if (n < 0)
			return;
		sc->in_len += (size_t)n;
		used = lg_conn_input(&sc->lc, sc->in, sc->in_len, now);
		if (sc->lc.dead) {
			drop(sc, ep);
			return;
		}
		memmove(sc->in, sc->in + used, sc->in_len - used);
		sc->in_len -= used;
		if (sc->in_len == SOCK_BUF) {
			/* A value larger than the buffer: not supported. */
			sc->lc.w->last_bad = "a response larger than the socket buffer";
			drop(sc, ep);
			return;
		}
		if ((size_t)n < SOCK_BUF / 2)
			return;
	}
}

static void
udp_send(struct sock_conn *sc, uint64_t now)
{
	struct lg_req *r;

	if (sc->fd < 0)
		return;
	while ((r = lg_conn_next(&sc->lc, now)) != NULL) {
		size_t n = lg_req_build(&sc->lc.w->run->wl, r, sc->out + 8, SOCK_BUF - 8);

		lg_udp_hdr_write((uint8_t *)sc->out, r->udp_id);
		if (send(sc->fd, sc->out, n + 8, MSG_NOSIGNAL) < 0)
			return; /* buffer full: the same request next time */
		lg_conn_commit(&sc->lc, now);
	}
}

static void
udp_recv(struct sock_conn *sc, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(sc->fd, sc->in, SOCK_BUF, 0);

		if (n < 0)
			return;
		lg_conn_udp_input(&sc->lc, (const uint8_t *)sc->in, (size_t)n, now);
	}
}

int
lg_sock_worker(struct lg_worker *w, const struct lg_options *o)
{
	const struct lg_run *run = w->run;
	struct addrinfo hints = { .ai_family = AF_INET }, *ai = NULL;
	struct sock_conn *conns;
	struct epoll_event evs[64];
	char port[8];
	int ep, rc = 0;
	uint64_t now = lg_now_ns();

	/* Open loop sleeps until the next arrival: the default 50 us timer
	 * slack would make every such send late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	hints.ai_socktype = o->udp ? SOCK_DGRAM : SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", o->port);
	if (getaddrinfo(o->server, port, &hints, &ai) != 0) {
		w->last_bad = "cannot resolve --server";
		return -1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	conns = calloc(run->conns, sizeof(*conns));
	if (ep < 0 || !conns) {
		w->last_bad = "out of memory";
		freeaddrinfo(ai);
		return -1;
	}
	for (unsigned i = 0; i < run->conns; i++) {
		struct sock_conn *sc = &conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = sc };

		sc->fd = -1;
		sc->in = malloc(SOCK_BUF);
		sc->out = malloc(SOCK_BUF);
		if (!sc->in || !sc->out || lg_conn_init(&sc->lc, w, now) < 0) {
			w->last_bad = "out of memory";
			rc = -1;
			continue;
		}
		/* Each flow is its own socket (source port): its request ids
		 * are all its own, 16 bits. */
		sc->fd = connect_one(ai, o->udp);
		if (sc->fd < 0) {
			w->stats.conn_failed++;
			w->last_bad = "connect failed";
			continue;
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, sc->fd, &ev);
	}
	freeaddrinfo(ai);

	while (lg_phase_get(run) != LG_PHASE_STOP) {
		uint64_t wait_ns = 10000000; /* re-read the phase at least this often */
		int n;

		now = lg_now_ns();
		for (unsigned i = 0; i < run->conns; i++) {
			struct sock_conn *sc = &conns[i];

			if (o->udp) {
				udp_send(sc, now);
				if (sc->fd >= 0)
					lg_conn_udp_expire(&sc->lc, now);
			} else {
				tcp_send(sc, ep, now);
			}
			if (sc->fd >= 0 && sc->out_off < sc->out_len)
				wait_ns = 0; /* unsent bytes: poll */
			if (run->rate == 0 || !sc->lc.scheduled || sc->fd < 0)
				continue;
			if (sc->lc.next_ns > now &&
			    sc->lc.next_ns - now < wait_ns)
				wait_ns = sc->lc.next_ns - now;
			else if (sc->lc.next_ns <= now &&
				 sc->lc.count < run->depth)
				wait_ns = 0;
		}
		if (o->spin)
			wait_ns = 0;
		if (run->wl.trace && run->trace_speed > 0 && wait_ns > 50000)
			wait_ns = 50000;
		n = lg_epoll_wait_ns(ep, evs, 64, wait_ns);
		if (n < 0) {
			/* Not a signal: the epoll set itself is broken. */
			w->last_bad = "epoll wait failed";
			rc = -1;
			break;
		}
		now = lg_now_ns();
		for (int i = 0; i < n; i++) {
			struct sock_conn *sc = evs[i].data.ptr;

			if (sc->fd < 0)
				continue;
			if (o->udp)
				udp_recv(sc, now);
			else
				tcp_recv(sc, ep, now);
		}
	}
	now = lg_now_ns();
	for (unsigned i = 0; i < run->conns; i++) {
		/* Still unanswered after the drain: lost. */
		lg_conn_lost(&conns[i].lc, now);
		if (conns[i].fd >= 0)
			close(conns[i].fd);
		lg_conn_free(&conns[i].lc);
		free(conns[i].in);
		free(conns[i].out);
	}
	free(conns);
	close(ep);
	return rc;
}
