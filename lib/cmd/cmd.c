/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The connection object, the request loop and dispatch: each parsed request
 * goes to the file of its role (cmd_classic.c, cmd_meta.c, cmd_stats.c),
 * which writes its replies through cmd_reply.c and reads items through
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
	proto_parser_init(&c->parser, value_max);
	/* a first guess for the header of the first value */
	c->last.vlen = 100;
	c->last.cas = 1;
	return c;
}

void
cmd_conn_destroy(struct cmd_conn *c)
{
	free(c);
}

void
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

static void
exec(struct cmd_conn *c, const struct proto_req *req)
{
	switch (req->cmd) {
	case PROTO_CMD_FLUSH_ALL:
		cmd_exec_flush_all(c, req);
		return;
	case PROTO_CMD_SHUTDOWN:
		cmd_exec_shutdown(c, req);
		return;
	case PROTO_CMD_MS:
	case PROTO_CMD_MG:
	case PROTO_CMD_MD:
	case PROTO_CMD_MA:
	case PROTO_CMD_ME:
		if (req->error) {
			/* meta errors are never quiet */
			cmd_reply(c, false, req->error);
			return;
		}
		cmd_exec_meta(c, req);
		return;
	default:
		break;
	}
	if (req->error) {
		if (req->cmd >= PROTO_CMD_GET && req->cmd <= PROTO_CMD_GATS)
			c->line_mark_valid = false;
		cmd_reply(c, req->noreply, req->error);
		return;
	}
	switch (req->cmd) {
	case PROTO_CMD_GET:
	case PROTO_CMD_GETS:
	case PROTO_CMD_GAT:
	case PROTO_CMD_GATS:
		cmd_exec_get(c, req);
		break;
	case PROTO_CMD_SET:
	case PROTO_CMD_ADD:
	case PROTO_CMD_REPLACE:
	case PROTO_CMD_APPEND:
	case PROTO_CMD_PREPEND:
	case PROTO_CMD_CAS:
		cmd_exec_store(c, req);
		break;
	case PROTO_CMD_DELETE:
		cmd_exec_delete(c, req);
		break;
	case PROTO_CMD_INCR:
	case PROTO_CMD_DECR:
		cmd_exec_arith(c, req);
		break;
	case PROTO_CMD_TOUCH:
		cmd_exec_touch(c, req);
		break;
	case PROTO_CMD_VERSION:
		cmd_exec_version(c, req);
		break;
	case PROTO_CMD_VERBOSITY:
		cmd_exec_verbosity(c, req);
		break;
	case PROTO_CMD_QUIT:
		*c->actions |= CMD_ACT_CLOSE;
		break;
	case PROTO_CMD_STATS:
		cmd_exec_stats(c, req);
		break;
	case PROTO_CMD_CACHE_MEMLIMIT:
		cmd_exec_cache_memlimit(c, req);
		break;
	case PROTO_CMD_SLABS:
		cmd_exec_slabs(c, req);
		break;
	case PROTO_CMD_LRU_CRAWLER:
		cmd_exec_lru_crawler(c, req);
		break;
	case PROTO_CMD_MN:
		cmd_exec_meta(c, req);
		break;
	default:
		cmd_reply(c, false, "ERROR");
		break;
	}
}

/* Over UDP only reads are served unless --udp-writes: a forged source
 * must not store, delete, flush or read the statistics. */
static bool
udp_servable(const struct cmd_conn *c, const struct proto_req *req)
{
	if (c->s->udp_writes)
		return true;
	switch (req->cmd) {
	case PROTO_CMD_GET:
	case PROTO_CMD_GETS:
	case PROTO_CMD_GAT:
	case PROTO_CMD_GATS:
	case PROTO_CMD_MG:
	case PROTO_CMD_MN:
	case PROTO_CMD_VERSION:
		return true;
	default:
		return false;
	}
}

/* The admin port serves what an operator needs on a full or misbehaving
 * server, and no item: it is not counted against -c, so it must not be a
 * way around it for clients. */
static bool
admin_servable(const struct proto_req *req)
{
	switch (req->cmd) {
	case PROTO_CMD_ERROR: /* answered with its error, as anywhere */
	case PROTO_CMD_STATS:
	case PROTO_CMD_VERSION:
	case PROTO_CMD_VERBOSITY:
	case PROTO_CMD_QUIT:
	case PROTO_CMD_SHUTDOWN:
	case PROTO_CMD_CACHE_MEMLIMIT:
	case PROTO_CMD_SLABS:
	case PROTO_CMD_LRU_CRAWLER:
		return true;
	default:
		return false;
	}
}

/* The datagram's replies went over udp_reply_max: the last request's
 * reply (a whole get line), from mark on, becomes one error line, and the
 * rest of the datagram is dropped. */
static void
udp_cap(struct cmd_conn *c, size_t start, size_t mark)
{
	size_t max = c->s->udp_reply_max;

	if (max == 0 || c->udp_sent + proto_out_pending(c->out) - start <= max)
		return;
	proto_out_truncate(c->out, mark);
	c->line_mark_valid = false;
	c->w->counters[ENGINE_C_udp_capped]++;
	cmd_reply(c, false, "SERVER_ERROR reply over the UDP size limit");
	*c->actions |= CMD_ACT_CLOSE;
}

size_t
cmd_process(struct cmd_conn *c, const char *in, size_t len, struct proto_out *out,
	    unsigned *actions)
{
	size_t done = 0, start = proto_out_pending(out);
	struct cmd_batch batch;

	*actions = 0;
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
				c->w->counters[ENGINE_C_udp_refused]++;
				cmd_reply(c, req.noreply,
					  "CLIENT_ERROR only reads are served over UDP");
			}
			udp_cap(c, start, mark);
		} else if (c->admin && !admin_servable(&req)) {
			cmd_reply(c, false,
				  "CLIENT_ERROR only administration commands on the admin port");
		} else {
			exec(c, &req);
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
