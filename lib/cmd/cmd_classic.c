/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The classic memcached commands: get/gets/gat/gats, the storage
 * commands, delete, incr/decr, touch, flush_all, shutdown, version,
 * verbosity and quit. Replies are memcached 1.6's, byte for byte; see
 * docs/protocol.md for the few differences and why.
 */
#include <string.h>

#include "cmd/cmd_private.h"

/* The classic reply to rc: ok on success, else the status's line when the
 * command answers it (answers, CMD_ST bits), else PROTO_E_BAD_FORMAT. */
static void
reply_status(struct cmd_conn *c, const struct proto_req *req, enum engine_status rc,
	     const char *ok, unsigned answers)
{
	cmd_reply(c, req->noreply,
		  rc == ENGINE_OK ? ok : cmd_status_reply(CMD_CLASSIC, rc, answers)->line);
}

/* ---- get, gets, gat, gats -------------------------------------------------- */

void
cmd_exec_get(struct cmd_conn *c, const struct proto_req *req)
{
	bool with_cas = req->cmd == PROTO_CMD_GETS || req->cmd == PROTO_CMD_GATS;
	bool touch = req->cmd == PROTO_CMD_GAT || req->cmd == PROTO_CMD_GATS;
	struct engine_item it;
	char hdr[CMD_HDR_MAX];
	size_t gap, hlen;
	int rc;

	if (req->key) {
		if (!c->line_mark_valid) {
			c->line_mark_valid = true;
			c->line_mark = proto_out_mark(c->out);
		}
		gap = cmd_value_header_len(req->klen, &c->last, with_cas);
		rc = cmd_fetch(c, req->key, req->klen, touch ? req->exptime : ENGINE_NO_TOUCH,
			       gap, true, &it);
		if (rc < 0) {
			cmd_get_failed(c);
			return;
		}
		if (rc == ENGINE_OK) {
			hlen = cmd_value_header(hdr, req->key, req->klen, &it, with_cas);
			proto_out_place_header(c->out, gap, hdr, hlen, it.vlen);
			memcpy(proto_out_tail(c->out), "\r\n", 2);
			proto_out_commit(c->out, 2);
			c->last = it;
			if (cmd_tracing(c))
				cmd_trace_key(c, req->key, req->klen);
		}
	}
	if (req->get_last) {
		c->line_mark_valid = false;
		cmd_put(c, "END\r\n", 5);
		if (cmd_tracing(c))
			cmd_trace_reply(c, "END");
	}
}

/* ---- storage ------------------------------------------------------------------ */

__attribute__((hot)) void
cmd_exec_store(struct cmd_conn *c, const struct proto_req *req)
{
	static const enum engine_store_mode modes[] = {
		[PROTO_CMD_SET] = ENGINE_SET,	      [PROTO_CMD_ADD] = ENGINE_ADD,
		[PROTO_CMD_REPLACE] = ENGINE_REPLACE, [PROTO_CMD_APPEND] = ENGINE_APPEND,
		[PROTO_CMD_PREPEND] = ENGINE_PREPEND, [PROTO_CMD_CAS] = ENGINE_CAS,
	};
	enum engine_store_mode mode = modes[req->cmd];
	enum engine_status rc;

	if (req->too_large) {
		/* refused by size before the data was read: count it as the
		 * engine would, and drop the old value of a set as memcached
		 * does so a stale value does not outlive a failed update */
		engine_count(c->w, ENGINE_C_cmd_set);
		engine_count(c->w, ENGINE_C_set_too_large);
		if (mode == ENGINE_SET)
			cmd_drop_key(c, req->key, req->klen);
		cmd_reply(c, req->noreply, CMD_E_TOO_LARGE);
		return;
	}
	const struct cmd_store_args a = { .mode = mode, .flags = req->flags,
					  .exptime = req->exptime,
					  .cas_in = mode == ENGINE_CAS ? req->cas : 0 };

	if (!cmd_store(c, req, &a, NULL, &rc))
		return; /* the value is arriving: this runs again at its end */
	if (rc == ENGINE_NO_MEMORY && mode == ENGINE_SET)
		cmd_drop_key(c, req->key, req->klen);
	reply_status(c, req, rc, "STORED", CMD_ST_STORE);
}

/* ---- the other classic commands ------------------------------------------ */

void
cmd_exec_arith(struct cmd_conn *c, const struct proto_req *req)
{
	enum engine_status rc;
	uint64_t v;
	char num[24];
	size_t n;

	rc = engine_arith(c->w, req->key, req->klen, req->cmd == PROTO_CMD_INCR, req->delta, &v,
			  NULL);
	if (rc == ENGINE_OK) {
		if (req->noreply)
			return;
		n = proto_u64_to_dec(v, num);
		memcpy(num + n, "\r\n", 2);
		cmd_put(c, num, n + 2);
	} else if (rc == ENGINE_NO_MEMORY) {
		/* memcached's incr and decr say only "out of memory" */
		cmd_reply(c, req->noreply, CMD_E_NO_MEMORY);
	} else {
		reply_status(c, req, rc, NULL, CMD_ST(ENGINE_MISS) | CMD_ST(ENGINE_NON_NUMERIC));
	}
}

void
cmd_exec_flush_all(struct cmd_conn *c, const struct proto_req *req)
{
	int64_t delay = req->exptime;

	__atomic_add_fetch(&c->rt->cmd_flush, 1, __ATOMIC_RELAXED);
	if (c->s->flush_disabled) {
		cmd_reply(c, req->noreply, "CLIENT_ERROR flush_all not allowed");
		return;
	}
	if (req->error) {
		cmd_reply(c, req->noreply, req->error);
		return;
	}
	/* the delay is an exptime: beyond 30 days it is a unix time */
	if (delay > ENGINE_RELATIVE_EXPTIME_MAX)
		delay -= cmd_now(c);
	engine_flush_all(c->s->engine, delay > 0 ? delay : 0);
	cmd_reply(c, req->noreply, "OK");
}

void
cmd_exec_shutdown(struct cmd_conn *c, const struct proto_req *req)
{
	if (!c->s->shutdown_enabled) {
		cmd_reply(c, false, "ERROR: shutdown not enabled");
		return;
	}
	if (req->error) {
		cmd_reply(c, false, req->error);
		return;
	}
	*c->actions |= CMD_ACT_SHUTDOWN | CMD_ACT_CLOSE;
}

void
cmd_exec_delete(struct cmd_conn *c, const struct proto_req *req)
{
	reply_status(c, req, engine_delete(c->w, req->key, req->klen, 0), "DELETED",
		     CMD_ST(ENGINE_MISS));
}

void
cmd_exec_touch(struct cmd_conn *c, const struct proto_req *req)
{
	/* ENGINE_NO_MEMORY: segcache moves a touched item to its new TTL
	 * bucket's segment; with eviction off and the heap full there is
	 * nowhere to put it */
	reply_status(c, req, engine_touch(c->w, req->key, req->klen, req->exptime), "TOUCHED",
		     CMD_ST(ENGINE_MISS) | CMD_ST(ENGINE_NO_MEMORY));
}

void
cmd_exec_version(struct cmd_conn *c, const struct proto_req *req)
{
	const char *v = c->s->version ? c->s->version : "unknown";

	(void)req;
	if (cmd_put(c, "VERSION ", 8))
		cmd_reply(c, false, v);
}

void
cmd_exec_verbosity(struct cmd_conn *c, const struct proto_req *req)
{
	/* memcached caps the level at 2 */
	unsigned level = req->level > 2 ? 2 : req->level;

	__atomic_store_n(&c->rt->verbosity_plus1, (int)level + 1, __ATOMIC_RELAXED);
	cmd_reply(c, req->noreply, "OK");
}

void
cmd_exec_quit(struct cmd_conn *c, const struct proto_req *req)
{
	(void)req;
	*c->actions |= CMD_ACT_CLOSE;
}
