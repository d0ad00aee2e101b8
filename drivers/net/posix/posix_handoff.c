/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Accepted connections dealt round-robin over the workers, as memcached's
 * listener hands each new connection to the next worker thread.
 *
 * Why not let the accepting worker keep the connection: EPOLLEXCLUSIVE
 * wakes whichever workers sleep in epoll_wait, and a burst of connects is
 * taken by the first of them (POSIX_ACCEPT_BURST at a time), so on a
 * 16-core host 256 connections landed on 2 of 8 workers. Why not
 * SO_REUSEPORT with a listening socket per worker: the kernel picks the
 * socket by a hash of the 4-tuple, an even spread only on average (64
 * connections over 4 workers: 16 ± 3.5, so one worker or another is off
 * by more than 4 in about half of all runs), and the connections queued on
 * a worker's socket are lost when that socket closes.
 *
 * So any worker may accept (the listening sockets stay shared; accepting is
 * rare next to requests), and a shared counter says whose turn the
 * connection is. The owner gets it through its inbox: a pipe, because a
 * pipe both carries the fd and wakes the owner's epoll_wait, and writes of
 * one 8-byte struct posix_handoff from several workers never interleave.
 * A handoff costs two system calls, next to accept's and the connection's
 * own; the request path never touches the inbox.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Handoffs read per wake-up. */
#define POSIX_HANDOFF_BURST 64

int
posix_inbox_open(struct posix_worker *w)
{
	int fds[2];

	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	w->inbox_rd = fds[0];
	w->inbox_wr = fds[1];
	w->inbox.kind = POSIX_POLL_INBOX;
	return posix_epoll_add(w->epfd, w->inbox_rd, EPOLLIN, &w->inbox);
}

/* Closes the inbox, and the connections still in it (the worker stopped
 * before it could adopt them). */
void
posix_inbox_close(struct posix_worker *w)
{
	struct posix_handoff h[POSIX_HANDOFF_BURST];
	ssize_t n;

	if (w->inbox_rd >= 0) {
		while ((n = read(w->inbox_rd, h, sizeof(h))) > 0)
			for (size_t i = 0; i < (size_t)n / sizeof(h[0]); i++)
				if (h[i].fd >= 0)
					posix_accept_abandon(w->stack, h[i].fd);
		close(w->inbox_rd);
	}
	if (w->inbox_wr >= 0)
		close(w->inbox_wr);
	w->inbox_rd = w->inbox_wr = -1;
}

static bool
inbox_send(struct posix_worker *to, const struct posix_handoff *h)
{
	ssize_t n;

	do {
		n = write(to->inbox_wr, h, sizeof(*h));
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*h);
}

void
posix_handoff_dispatch(struct posix_worker *w, int fd, const struct posix_socket *ls)
{
	struct posix_stack *s = w->stack;
	unsigned turn = atomic_fetch_add_explicit(&s->next_worker, 1, memory_order_relaxed);
	struct posix_worker *to = &s->workers[turn % s->nworkers];
	struct posix_handoff h = {
		.fd = fd,
		.listen = (uint32_t)(ls - s->sockets),
	};

	/* A full inbox (thousands of connections the owner has not taken
	 * yet) means the owner is stuck: serve the connection here. */
	if (to == w || !inbox_send(to, &h))
		posix_tcp_adopt(w, fd, ls);
}

void
posix_handoff_receive(struct posix_worker *w)
{
	struct posix_stack *s = w->stack;
	struct posix_handoff h[POSIX_HANDOFF_BURST];
	ssize_t n;

	/* Reads of a multiple of 8 bytes from a pipe that only ever gets
	 * whole 8-byte writes return whole handoffs. */
	n = read(w->inbox_rd, h, sizeof(h));
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			POSIX_LOG(ERR, "worker %u: reading the inbox: %s", w->id,
				  strerror(errno));
		return;
	}
	for (size_t i = 0; i < (size_t)n / sizeof(h[0]); i++) {
		if (h[i].fd < 0)
			continue; /* a wake-up: the loop condition sees the flag */
		if (h[i].listen >= s->nsockets) {
			posix_accept_abandon(s, h[i].fd);
			continue;
		}
		posix_tcp_adopt(w, h[i].fd, &s->sockets[h[i].listen]);
	}
}

void
posix_inbox_wake(struct posix_worker *w)
{
	struct posix_handoff h = { .fd = -1 };

	/* A full inbox wakes the worker as well. */
	if (w->inbox_wr >= 0 && !inbox_send(w, &h) && errno != EAGAIN)
		POSIX_LOG(WARNING, "cannot wake worker %u: %s", w->id, strerror(errno));
}
