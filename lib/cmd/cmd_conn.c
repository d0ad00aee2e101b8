/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The connection object, the request loop and dispatch: each parsed request
 * runs the handler of its row in the command table (cmd_table.c), which
 * also says whether it is served over UDP and on the admin port. Handlers
 * write their replies through cmd_reply.c and read items through
 * cmd_fetch.c.
 */
#include <stdlib.h>

#include "cmd/cmd_private.h"

struct cmd_conn *
cmd_conn_create(struct cmd_settings *s, struct engine_worker *w, bool udp)
{
	struct cmd_conn *c = calloc(1, sizeof(*c));
	size_t value_max;

	if (!c)
		return NULL;
	c->s = s;
	/* the settings are read-only here except rt, which lib/cmd owns */
	c->rt = &s->rt;
	c->w = w;
	c->udp = udp;
	/* A value longer than the item limit cannot be stored whatever its
	 * key: refuse it before buffering it (memcached swallows it too). */
	value_max = s->item_max ? s->item_max : 1024 * 1024;
	if (value_max > INT32_MAX)
		value_max = INT32_MAX;
	proto_parser_init(&c->parser, cmd_grammar(), value_max);
	/* a first guess for the header of the first value */
	c->last.vlen = 100;
	c->last.cas = 1;
	return c;
}

size_t
cmd_conn_size(void)
{
	return sizeof(struct cmd_conn);
}

void
cmd_conn_destroy(struct cmd_conn *c)
{
	if (c)
		cmd_dump_free(c);
	free(c);
}

__attribute__((hot)) void
cmd_conn_reset(struct cmd_conn *c)
{
	proto_parser_reset(&c->parser);
	c->udp_sent = 0;
}

bool
cmd_conn_busy(const struct cmd_conn *c)
{
	return c->parser.state != PROTO_PS_LINE;
}

bool
cmd_conn_dumping(const struct cmd_conn *c)
{
	return c->dump != NULL;
}

uint64_t
cmd_conn_requests(const struct cmd_conn *c)
{
	return c->requests;
}

void
cmd_conn_set_admin(struct cmd_conn *c)
{
	c->admin = true;
}

/* Runs req by its row of the command table. A parse error is answered
 * here, honouring noreply where the command takes it (meta errors are never
 * quiet), unless the command answers it itself (CMD_F_OWN_ERROR). */
static __attribute__((hot)) void
exec(struct cmd_conn *c, const struct proto_req *req)
{
	const struct cmd_def *d = &cmd_table[req->cmd];

	if (req->error && !(d->flags & CMD_F_OWN_ERROR)) {
		/* a get line's error replaces the line's replies */
		if (d->word.syntax == PROTO_SYN_GET || d->word.syntax == PROTO_SYN_GAT)
			c->line_mark_valid = false;
		cmd_reply(c, req->noreply && (d->flags & CMD_F_NOREPLY), req->error);
		return;
	}
	if (d->exec)
		d->exec(c, req);
	else
		cmd_reply(c, false, "ERROR");
}

/* Over UDP only reads are served unless --udp-writes: a forged source
 * must not store, delete, flush or read the statistics. */
static bool
udp_servable(const struct cmd_conn *c, const struct proto_req *req)
{
	return c->s->udp_writes || (cmd_table[req->cmd].flags & CMD_F_UDP);
}

/* The admin port serves what an operator needs on a full or misbehaving
 * server, and no item: it is not counted against -c, so it must not be a
 * way around it for clients. */
static bool
admin_servable(const struct proto_req *req)
{
	return cmd_table[req->cmd].flags & CMD_F_ADMIN;
}

__attribute__((hot)) size_t
cmd_process(struct cmd_conn *c, const char *in, size_t len, struct proto_out *out,
	    unsigned *actions)
{
	size_t done = 0, start = proto_out_pending(out);
	struct cmd_batch batch;

	*actions = 0;
	c->udp_start = start;
	c->out = out;
	c->actions = actions;
	c->line_mark_valid = false;
	batch.n = 0;
	for (;;) {
		struct proto_req req;
		enum proto_status st;
		bool queued = false;
		size_t n;

		if (out->backpressure && proto_out_pending(out) >= out->backpressure)
			break;
		st = proto_parse(&c->parser, in + done, len - done, &req, &n);
		done += n;
		if (st == PROTO_REQ && cmd_batch_takes(c, &req)) {
			c->requests++;
			queued = true;
			if (!cmd_batch_add(c, &batch, &req, done))
				continue;
		}
		/* A full batch runs, and anything else waits for the gets
		 * queued before it. A batch that rewound leaves this request
		 * to be parsed again. */
		if (batch.n > 0) {
			enum cmd_batch_result r = cmd_batch_run(c, &batch, &done);

			if (r == CMD_BATCH_STOP)
				break;
			if (r == CMD_BATCH_RESUME || queued)
				continue;
		}
		if (st == PROTO_NEED_MORE)
			break;
		if (st == PROTO_CLOSE) {
			*actions |= CMD_ACT_CLOSE;
			break;
		}
		c->requests++;
		if (c->udp) {
			/* where this request's reply starts: for a key of a
			 * multi-key get, where the get line's replies start */
			size_t mark = c->line_mark_valid ? c->line_mark : proto_out_mark(out);

			if (udp_servable(c, &req)) {
				exec(c, &req);
			} else {
				engine_count(c->w, ENGINE_C_udp_refused);
				cmd_reply(c, req.noreply,
					  "CLIENT_ERROR only reads are served over UDP");
			}
			cmd_udp_cap(c, mark);
		} else if (c->admin && !admin_servable(&req)) {
			cmd_reply(c, false,
				  "CLIENT_ERROR only administration commands on the admin port");
		} else {
			exec(c, &req);
		}
		if (c->dump && !*actions) {
			/* a key dump goes on: its line again next time */
			done -= n;
			break;
		}
		if (*actions)
			break;
	}
	if (c->udp)
		c->udp_sent += proto_out_pending(out) - start;
	c->out = NULL;
	c->actions = NULL;
	return done;
}
