/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The memory a posix connection holds beyond its object: input it
 * received and could not consume yet, output it composed and the client
 * has not taken. Both are charged to a budget for all connections
 * together (--tcp-buffer-memory, posix_stack.in_budget and out_budget: a
 * quarter for output, the rest for input), so that the sum stays bounded whatever the clients do:
 *  - a request whose data block would take input memory over the budget
 *    is refused as memcached refuses an item it cannot allocate
 *    (SERVER_ERROR out of memory storing object) and the rest of the block
 *    is swallowed as it arrives (lib/cmd's cmd_conn_refuse_data);
 *  - a connection whose unsent replies would take output memory over the
 *    budget is reset: a reader that fell behind (the per-connection bound,
 *    CMD_SESSION_OUT_HIGH, stops it earlier; this stops the sum). The
 *    connection that finds the budget spent is the one reset, whichever
 *    holds the most.
 * Up to POSIX_BUF_UNCOUNTED bytes of each kind per connection are not
 * charged: every connection may hold that much at any time, -c times it
 * is part of what the start-up sizing line states.
 *
 * Input. A connection needs input memory of its own only while received
 * bytes of it wait unconsumed: part of a request, or requests held back by
 * the output bound. Otherwise it reads into its worker's buffer, so that
 * an idle connection holds none (100,000 of them held 16 KiB each, 1.6 GB,
 * when every connection had its own). A connection never changes worker
 * (posix_handoff.c hands over the descriptor before the connection is set
 * up), so the buffer it borrows is its worker's.
 */
#include "drivers/net/posix/posix_private.h"

#include <stdlib.h>
#include <string.h>

bool
posix_budget_take(struct posix_budget *b, uint64_t n)
{
	uint64_t was;

	if (n == 0)
		return true;
	was = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed);
	if (b->max == 0 || was + n <= b->max)
		return true;
	atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
	return false;
}

void
posix_budget_put(struct posix_budget *b, uint64_t n)
{
	if (n != 0)
		atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
}

size_t
posix_buffer_memory_default(unsigned max_conns, size_t item_max)
{
	size_t conns = max_conns < POSIX_BUDGET_LARGE_CONNS ? max_conns :
			       POSIX_BUDGET_LARGE_CONNS;

	if (conns == 0)
		conns = 1;
	return 2 * conns * cmd_session_in_max(item_max);
}

/* What a buffer of cap bytes is charged: nothing up to the allowance
 * every connection has, all of it beyond. */
static uint64_t
charge_of(size_t cap)
{
	return cap > POSIX_BUF_UNCOUNTED ? cap : 0;
}

/* ---- input ---- */

bool
posix_conn_in_borrowed(const struct posix_conn *c)
{
	return c->in != NULL && c->in == c->w->in;
}

/* The connection's own input buffer changed (or went): its charge
 * follows. Only posix_conn_make_room() grows one past the allowance, and
 * it takes the charge first. */
static void
in_recharge(struct posix_conn *c)
{
	uint64_t now = posix_conn_in_borrowed(c) || c->in == NULL ? 0 : charge_of(c->in_cap);
	struct posix_budget *b = &c->w->stack->in_budget;

	if (now > c->in_charged)
		atomic_fetch_add_explicit(&b->used, now - c->in_charged, memory_order_relaxed);
	else
		posix_budget_put(b, c->in_charged - now);
	c->in_charged = now;
}

/* Before a read: lend the connection the worker's buffer, with the few
 * bytes it holds (up to POSIX_IN_MOVE_MAX, part of a request) moved to
 * its front, so that a client whose reads end mid-request still has the
 * room of a whole buffer to read into. A large request being assembled
 * is read after in its own buffer instead (posix_conn_make_room grows it).
 * No other connection has the worker's buffer: it is lent for one read
 * and the session's turn that follows, and given back before the next. */
void
posix_conn_in_borrow(struct posix_conn *c)
{
	size_t left = c->in_end - c->in_start;

	if (posix_conn_in_borrowed(c) || left > POSIX_IN_MOVE_MAX)
		return;
	if (left > 0)
		memcpy(c->w->in, c->in + c->in_start, left);
	free(c->in);
	c->in = c->w->in;
	c->in_cap = POSIX_IN_WORKER;
	c->in_start = 0;
	c->in_end = left;
	in_recharge(c);
}

void
posix_conn_in_drop(struct posix_conn *c)
{
	if (!posix_conn_in_borrowed(c))
		free(c->in);
	c->in = NULL;
	c->in_start = c->in_end = c->in_cap = 0;
	in_recharge(c);
}

/* After the session's turn, or a read that brought nothing: an emptied
 * buffer is given up (a closing session runs nothing more, so its input
 * is dropped too), and bytes left in the worker's buffer move to one of
 * the connection's own: just as many when the next read moves them back
 * (posix_conn_in_borrow), the allowance when the rest of a large request
 * is to be read after them (posix_conn_make_room grows it from there,
 * charged). False when there is no memory. */
bool
posix_conn_in_give_back(struct posix_conn *c)
{
	size_t left = c->in_end - c->in_start, cap;
	char *own;

	if (left == 0 || c->ses.closing) {
		posix_conn_in_drop(c);
		return true;
	}
	if (!posix_conn_in_borrowed(c))
		return true;
	/* Just as many bytes, or room for the rest of a large request. More
	 * than the allowance is left only after a read of a streamed value
	 * (posix_tcp.c): the end of its block and pipelined requests behind. */
	cap = left;
	if (left > POSIX_IN_MOVE_MAX && left < POSIX_BUF_UNCOUNTED)
		cap = POSIX_BUF_UNCOUNTED;
	own = malloc(cap);
	if (own == NULL)
		return false;
	memcpy(own, c->in + c->in_start, left);
	c->in = own;
	c->in_cap = cap;
	c->in_start = 0;
	c->in_end = left;
	in_recharge(c);
	return true;
}

/* Makes room at the end of the connection's own input buffer: moves the
 * unconsumed bytes to the front, then grows, straight to what the request
 * waiting for its data block needs (lib/cmd tells) or else twice as
 * large, up to the per-connection limit and as the budget allows. */
enum posix_room
posix_conn_make_room(struct posix_conn *c)
{
	const struct posix_stack *s = c->w->stack;
	size_t used = c->in_end - c->in_start, cap, need;
	uint64_t charge;
	char *in;

	if (c->in_start > 0) {
		memmove(c->in, c->in + c->in_start, used);
		c->in_start = 0;
		c->in_end = used;
	}
	if (c->in_end < c->in_cap)
		return POSIX_ROOM_OK;
	if (c->in_cap >= s->in_max)
		return POSIX_ROOM_TOO_LARGE;
	need = cmd_conn_data_need(c->ses.cmd);
	cap = need > c->in_cap ? need : c->in_cap * 2;
	if (cap > s->in_max)
		cap = s->in_max;
	charge = charge_of(cap);
	if (charge > c->in_charged &&
	    !posix_budget_take(&c->w->stack->in_budget, charge - c->in_charged))
		return POSIX_ROOM_NO_BUDGET;
	in = realloc(c->in, cap);
	if (in == NULL) {
		posix_budget_put(&c->w->stack->in_budget, charge - c->in_charged);
		return POSIX_ROOM_TOO_LARGE;
	}
	c->in = in;
	c->in_cap = cap;
	c->in_charged = charge > c->in_charged ? charge : c->in_charged;
	in_recharge(c);
	return POSIX_ROOM_OK;
}

bool
posix_conn_in_refuse(struct posix_conn *c)
{
	struct posix_worker *w = c->w;
	bool refused;

	cmd_session_out_borrow(&c->ses, &w->out);
	refused = cmd_conn_refuse_data(c->ses.cmd, c->in + c->in_start, c->in_end - c->in_start,
				       &c->ses.out);
	if (!refused)
		return false;
	posix_count(w, POSIX_C_conn_buffer_in_refused, 1);
	posix_conn_in_drop(c); /* the request's bytes are swallowed */
	return true;
}

/* ---- output ---- */

bool
posix_conn_out_settle(struct posix_conn *c)
{
	const struct proto_out *o = &c->ses.out;
	uint64_t now = proto_out_holds_memory(o) && proto_out_pending(o) > 0 ? charge_of(o->cap) : 0;
	struct posix_budget *b = &c->w->stack->out_budget;

	if (now <= c->out_charged) {
		posix_budget_put(b, c->out_charged - now);
		c->out_charged = now;
		return true;
	}
	if (!posix_budget_take(b, now - c->out_charged))
		return false;
	c->out_charged = now;
	return true;
}

void
posix_conn_out_release(struct posix_conn *c)
{
	posix_budget_put(&c->w->stack->out_budget, c->out_charged);
	c->out_charged = 0;
}
