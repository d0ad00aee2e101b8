/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's -R on the posix stack: a connection runs at most that many
 * requests per turn (lib/cmd stops it, cmd_conn_event_begin), so that a
 * client pipelining thousands of requests cannot keep the others of its
 * worker waiting. One that stopped with requests left goes on its
 * worker's yielded list, does not read more meanwhile (its buffer holds
 * what it has yet to run), and gets its next turn after the next
 * epoll_wait, which then returns at once: the others' events come in
 * between, as in memcached's conn_yields.
 */
#include "drivers/net/posix/posix_private.h"

void
posix_yield_begin(struct posix_conn *c)
{
	if (c->w->stack->cfg.cmd->reqs_per_event != 0 && c->ses.cmd != NULL)
		cmd_conn_event_begin(c->ses.cmd);
}

bool
posix_yield_waiting(const struct posix_conn *c)
{
	return c->ses.cmd != NULL && cmd_conn_yielded(c->ses.cmd) && c->in_end > c->in_start &&
	       !c->ses.closing;
}

bool
posix_yield_note(struct posix_conn *c)
{
	if (c->on_yield)
		return true;
	if (!posix_yield_waiting(c))
		return false;
	TAILQ_INSERT_TAIL(&c->w->yielded, c, yield_link);
	c->on_yield = true;
	posix_count(c->w, POSIX_C_conn_yields, 1);
	return true;
}

void
posix_yield_unlink(struct posix_conn *c)
{
	if (!c->on_yield)
		return;
	TAILQ_REMOVE(&c->w->yielded, c, yield_link);
	c->on_yield = false;
}

int
posix_yield_run(struct posix_worker *w)
{
	struct posix_conn_list turn = TAILQ_HEAD_INITIALIZER(turn);
	struct posix_conn *c;

	if (TAILQ_EMPTY(&w->yielded))
		return -1;
	/* This pass serves those that yielded before it; one that yields
	 * again goes back on w->yielded, for the pass after the next wait. */
	TAILQ_CONCAT(&turn, &w->yielded, yield_link);
	while ((c = TAILQ_FIRST(&turn)) != NULL) {
		TAILQ_REMOVE(&turn, c, yield_link);
		c->on_yield = false;
		/* as if output space came: run what waits, send, read again
		 * once nothing waits (c may be closed, even freed, after) */
		posix_tcp_event(c, EPOLLOUT);
	}
	return TAILQ_EMPTY(&w->yielded) ? -1 : 0;
}
