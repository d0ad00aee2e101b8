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
#include <string.h>

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
	c->trace_id = -1;
	/* A value longer than the item limit cannot be stored whatever its
	 * key: refuse it before buffering it (memcached swallows it too). */
	value_max = s->item_max ? s->item_max : 1024 * 1024;
	if (value_max > INT32_MAX)
		value_max = INT32_MAX;
	proto_parser_init(&c->parser, cmd_grammar(), value_max);
	cmd_stream_setup(c);
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
	if (c) {
		cmd_dump_free(c);
		cmd_stream_end(c); /* a value never finished: dead bytes in the heap */
	}
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
cmd_conn_event_begin(struct cmd_conn *c)
{
	c->yielded = false;
	c->budget_end = c->s->reqs_per_event ? c->requests + c->s->reqs_per_event : 0;
}

bool
cmd_conn_yielded(const struct cmd_conn *c)
{
	return c->yielded;
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

/* stats subcommands that list keys or clients (cachedump, hotkeys,
 * conns) or change counters (reset): not counters. */
static bool
stats_beyond_counters(const struct proto_req *req)
{
	static const char *const words[] = { "hotkeys", "conns", "reset" };

	if (req->cmd != PROTO_CMD_STATS || req->arg == NULL)
		return false;
	if (req->sub == PROTO_SUB_STATS_CACHEDUMP)
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (req->arg_len == strlen(words[i]) && memcmp(req->arg, words[i], req->arg_len) == 0)
			return true;
	return false;
}

/* The admin port serves what an operator needs on a full or misbehaving
 * server, and no item: it is not counted against -c, so it must not be a
 * way around it for clients. By default only counters: what lists keys
 * or changes the server needs --admin-commands all. Returns the refusal
 * line, or NULL when req is served. */
static const char *
admin_refusal(const struct cmd_conn *c, const struct proto_req *req)
{
	unsigned f = cmd_table[req->cmd].flags;

	if (!(f & (CMD_F_ADMIN | CMD_F_ADMIN_ALL)))
		return "CLIENT_ERROR only administration commands on the admin port";
	if (!c->s->admin_all && ((f & CMD_F_ADMIN_ALL) || stats_beyond_counters(req)))
		return "CLIENT_ERROR the admin port serves counters only "
		       "(this command needs --admin-commands all)";
	return NULL;
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
		const char *refusal;
		enum proto_status st;
		bool queued = false;
		size_t n;

		if (out->backpressure && proto_out_pending(out) >= out->backpressure)
			break;
		/* -R: this turn's requests are done (a batch of gets runs
		 * when it holds the last; a dump under way finishes first) */
		if (c->budget_end != 0 && c->requests >= c->budget_end && batch.n == 0 &&
		    c->dump == NULL) {
			c->yielded = true;
			break;
		}
		st = proto_parse(&c->parser, in + done, len - done, &req, &n);
		if (st == PROTO_REQ && cmd_tracing(c))
			cmd_trace_request(c, in + done, n);
		done += n;
		if (st == PROTO_REQ && cmd_batch_takes(c, &req)) {
			c->requests++;
			queued = true;
			/* a batch runs when full, or when it holds -R's last */
			if (!cmd_batch_add(c, &batch, &req, done) &&
			    (c->budget_end == 0 || c->requests < c->budget_end))
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
		if (st == PROTO_PIECE) {
			const struct proto_req *end = cmd_stream_piece(c, &req);

			if (end != NULL) {
				exec(c, end);
				cmd_stream_end(c);
			}
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

			if (cmd_udp_servable(c, &req)) {
				exec(c, &req);
			} else {
				engine_count(c->w, ENGINE_C_udp_refused);
				cmd_reply(c, req.noreply,
					  "CLIENT_ERROR only reads are served over UDP");
			}
			cmd_udp_cap(c, mark);
		} else if (c->admin && (refusal = admin_refusal(c, &req)) != NULL) {
			engine_count(c->w, ENGINE_C_admin_refused);
			cmd_reply(c, false, refusal);
		} else {
			exec(c, &req);
		}
		/* a streamed store refused at its line: its block is not wanted */
		if (req.stream == PROTO_STREAM_BEGIN && c->stream == NULL)
			proto_parser_stream_swallow(&c->parser);
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
