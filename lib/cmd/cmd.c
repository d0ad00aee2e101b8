/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The request loop and the classic memcached commands. Replies are
 * memcached 1.6's, byte for byte; see docs/protocol.md for the few
 * differences and why.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_private.h"

struct cmd_conn *cmd_conn_create(const struct cmd_settings *s, struct engine_worker *w, bool udp)
{
	struct cmd_conn *c = calloc(1, sizeof(*c));
	size_t value_max;

	if (!c)
		return NULL;
	c->s = s;
	/* cmd_settings is documented as owned by the server except rt */
	c->rt = (struct cmd_runtime *)&s->rt;
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

void cmd_conn_destroy(struct cmd_conn *c)
{
	free(c);
}

void cmd_conn_reset(struct cmd_conn *c)
{
	proto_parser_reset(&c->parser);
}

bool cmd_conn_busy(const struct cmd_conn *c)
{
	return c->parser.state != PROTO_PS_LINE;
}

int cmd_verbosity(const struct cmd_settings *s)
{
	int v = __atomic_load_n(&s->rt.verbosity_plus1, __ATOMIC_RELAXED);

	return v ? v - 1 : s->verbosity;
}

int64_t cmd_now(const struct cmd_conn *c)
{
	if (c->s->clock)
		return c->s->clock(c->s->clock_arg);
	return engine_clock_default(NULL);
}

void cmd_fail(struct cmd_conn *c)
{
	*c->actions |= CMD_ACT_CLOSE;
}

bool cmd_put(struct cmd_conn *c, const void *p, size_t n)
{
	if (proto_out_append(c->out, p, n))
		return true;
	cmd_fail(c);
	return false;
}

void cmd_reply(struct cmd_conn *c, bool noreply, const char *line)
{
	if (!noreply && !proto_out_line(c->out, line))
		cmd_fail(c);
}

void cmd_drop_key(struct cmd_conn *c, const char *key, size_t klen)
{
	uint64_t hits = c->w->counters[ENGINE_C_delete_hits];
	uint64_t misses = c->w->counters[ENGINE_C_delete_misses];

	engine_delete(c->w, key, klen, 0);
	/* the worker is this thread's: restoring is race-free */
	c->w->counters[ENGINE_C_delete_hits] = hits;
	c->w->counters[ENGINE_C_delete_misses] = misses;
}

int cmd_fetch(struct cmd_conn *c, const char *key, size_t klen, int64_t touch, size_t gap,
	      bool buf_wanted, struct engine_item *it)
{
	size_t want = CMD_HDR_MAX + CMD_VALUE_ROOM_MIN + 2;

	if (!buf_wanted) {
		int rc = engine_get(c->w, key, klen, touch, NULL, 0, it);

		return rc == ENGINE_BUF_SMALL ? ENGINE_OK : rc;
	}
	for (unsigned tries = 0; tries < CMD_FETCH_TRIES; tries++) {
		char *p = proto_out_reserve(c->out, want);
		size_t cap;
		int rc;

		if (!p)
			return -1;
		/* offer all the room there is: one engine call for most values */
		cap = proto_out_room(c->out) - CMD_HDR_MAX - 2;
		rc = engine_get(c->w, key, klen, touch, p + gap, cap, it);
		if (rc != ENGINE_BUF_SMALL)
			return rc;
		want = CMD_HDR_MAX + (size_t)it->vlen + 2;
		/* the touch is done: the retry only copies the value (touching
		 * again would rewrite the item and count the touch twice) */
		touch = ENGINE_NO_TOUCH;
	}
	return -1;
}

/* ---- get, gets, gat, gats -------------------------------------------------- */

static size_t value_header(char *h, const struct proto_req *req, const struct engine_item *it,
			   bool with_cas)
{
	size_t n = 0;

	memcpy(h, "VALUE ", 6);
	n = 6;
	memcpy(h + n, req->key, req->klen);
	n += req->klen;
	h[n++] = ' ';
	n += proto_u64_to_dec(it->flags, h + n);
	h[n++] = ' ';
	n += proto_u64_to_dec(it->vlen, h + n);
	if (with_cas) {
		h[n++] = ' ';
		n += proto_u64_to_dec(it->cas, h + n);
	}
	h[n++] = '\r';
	h[n++] = '\n';
	return n;
}

static size_t value_header_len(size_t klen, const struct engine_item *it, bool with_cas)
{
	return 6 + klen + 1 + proto_dec_len(it->flags) + 1 + proto_dec_len(it->vlen) +
	       (with_cas ? 1 + proto_dec_len(it->cas) : 0) + 2;
}

static void get_failed(struct cmd_conn *c)
{
	/* memcached replaces the whole reply of the line with the error;
	 * what an earlier cmd_process() call composed may be gone already */
	if (c->line_mark_valid)
		proto_out_truncate(c->out, c->line_mark);
	proto_parser_abort_line(&c->parser);
	cmd_reply(c, false, "SERVER_ERROR out of memory writing get response");
}

static void exec_get(struct cmd_conn *c, const struct proto_req *req)
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
		gap = value_header_len(req->klen, &c->last, with_cas);
		rc = cmd_fetch(c, req->key, req->klen, touch ? req->exptime : ENGINE_NO_TOUCH,
			       gap, true, &it);
		if (rc < 0) {
			get_failed(c);
			return;
		}
		if (rc == ENGINE_OK) {
			hlen = value_header(hdr, req, &it, with_cas);
			proto_out_place_header(c->out, gap, hdr, hlen, it.vlen);
			memcpy(proto_out_tail(c->out), "\r\n", 2);
			proto_out_commit(c->out, 2);
			c->last = it;
		}
	}
	if (req->get_last) {
		c->line_mark_valid = false;
		cmd_put(c, "END\r\n", 5);
	}
}

/* ---- storage ------------------------------------------------------------------ */

static void exec_store(struct cmd_conn *c, const struct proto_req *req)
{
	static const enum engine_store_mode modes[] = {
		[PROTO_CMD_SET] = ENGINE_SET,	      [PROTO_CMD_ADD] = ENGINE_ADD,
		[PROTO_CMD_REPLACE] = ENGINE_REPLACE, [PROTO_CMD_APPEND] = ENGINE_APPEND,
		[PROTO_CMD_PREPEND] = ENGINE_PREPEND, [PROTO_CMD_CAS] = ENGINE_CAS,
	};
	enum engine_store_mode mode = modes[req->cmd];
	int rc;

	if (req->too_large) {
		/* refused by size before the data was read: count it as the
		 * engine would, and drop the old value of a set as memcached
		 * does so a stale value does not outlive a failed update */
		c->w->counters[ENGINE_C_cmd_set]++;
		c->w->counters[ENGINE_C_set_too_large]++;
		if (mode == ENGINE_SET)
			cmd_drop_key(c, req->key, req->klen);
		cmd_reply(c, req->noreply, "SERVER_ERROR object too large for cache");
		return;
	}
	rc = engine_store(c->w, mode, req->key, req->klen, req->value, req->vlen, req->flags,
			  req->exptime, mode == ENGINE_CAS ? req->cas : 0, NULL);
	switch (rc) {
	case ENGINE_OK:
		cmd_reply(c, req->noreply, "STORED");
		break;
	case ENGINE_NOT_STORED:
		cmd_reply(c, req->noreply, "NOT_STORED");
		break;
	case ENGINE_EXISTS:
		cmd_reply(c, req->noreply, "EXISTS");
		break;
	case ENGINE_MISS:
		cmd_reply(c, req->noreply, "NOT_FOUND");
		break;
	case ENGINE_TOO_LARGE:
		cmd_reply(c, req->noreply, "SERVER_ERROR object too large for cache");
		break;
	case ENGINE_NO_MEMORY:
		if (mode == ENGINE_SET)
			cmd_drop_key(c, req->key, req->klen);
		cmd_reply(c, req->noreply, "SERVER_ERROR out of memory storing object");
		break;
	default:
		cmd_reply(c, req->noreply, "CLIENT_ERROR bad command line format");
		break;
	}
}

/* ---- the other classic commands ------------------------------------------ */

static void exec_arith(struct cmd_conn *c, const struct proto_req *req)
{
	uint64_t v;
	char num[24];
	size_t n;

	switch (engine_arith(c->w, req->key, req->klen, req->cmd == PROTO_CMD_INCR, req->delta,
			     &v, NULL)) {
	case ENGINE_OK:
		if (req->noreply)
			break;
		n = proto_u64_to_dec(v, num);
		memcpy(num + n, "\r\n", 2);
		cmd_put(c, num, n + 2);
		break;
	case ENGINE_MISS:
		cmd_reply(c, req->noreply, "NOT_FOUND");
		break;
	case ENGINE_NON_NUMERIC:
		cmd_reply(c, req->noreply,
			  "CLIENT_ERROR cannot increment or decrement non-numeric value");
		break;
	case ENGINE_NO_MEMORY:
		cmd_reply(c, req->noreply, "SERVER_ERROR out of memory");
		break;
	default:
		cmd_reply(c, req->noreply, "CLIENT_ERROR bad command line format");
		break;
	}
}

static void exec_flush_all(struct cmd_conn *c, const struct proto_req *req)
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

static void exec_shutdown(struct cmd_conn *c, const struct proto_req *req)
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

static void exec(struct cmd_conn *c, const struct proto_req *req)
{
	switch (req->cmd) {
	case PROTO_CMD_FLUSH_ALL:
		exec_flush_all(c, req);
		return;
	case PROTO_CMD_SHUTDOWN:
		exec_shutdown(c, req);
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
		exec_get(c, req);
		break;
	case PROTO_CMD_SET:
	case PROTO_CMD_ADD:
	case PROTO_CMD_REPLACE:
	case PROTO_CMD_APPEND:
	case PROTO_CMD_PREPEND:
	case PROTO_CMD_CAS:
		exec_store(c, req);
		break;
	case PROTO_CMD_DELETE:
		switch (engine_delete(c->w, req->key, req->klen, 0)) {
		case ENGINE_OK:
			cmd_reply(c, req->noreply, "DELETED");
			break;
		case ENGINE_MISS:
			cmd_reply(c, req->noreply, "NOT_FOUND");
			break;
		default:
			cmd_reply(c, req->noreply, "CLIENT_ERROR bad command line format");
			break;
		}
		break;
	case PROTO_CMD_INCR:
	case PROTO_CMD_DECR:
		exec_arith(c, req);
		break;
	case PROTO_CMD_TOUCH:
		switch (engine_touch(c->w, req->key, req->klen, req->exptime)) {
		case ENGINE_OK:
			cmd_reply(c, req->noreply, "TOUCHED");
			break;
		case ENGINE_MISS:
			cmd_reply(c, req->noreply, "NOT_FOUND");
			break;
		default:
			cmd_reply(c, req->noreply, "CLIENT_ERROR bad command line format");
			break;
		}
		break;
	case PROTO_CMD_VERSION: {
		const char *v = c->s->version ? c->s->version : "unknown";

		if (cmd_put(c, "VERSION ", 8))
			cmd_reply(c, false, v);
		break;
	}
	case PROTO_CMD_VERBOSITY: {
		/* memcached caps the level at 2 */
		unsigned level = req->level > 2 ? 2 : req->level;

		__atomic_store_n(&c->rt->verbosity_plus1, (int)level + 1, __ATOMIC_RELAXED);
		cmd_reply(c, req->noreply, "OK");
		break;
	}
	case PROTO_CMD_QUIT:
		*c->actions |= CMD_ACT_CLOSE;
		break;
	case PROTO_CMD_STATS:
		cmd_exec_stats(c, req);
		break;
	case PROTO_CMD_MN:
		cmd_put(c, "MN\r\n", 4);
		break;
	default:
		cmd_reply(c, false, "ERROR");
		break;
	}
}

size_t cmd_process(struct cmd_conn *c, const char *in, size_t len, struct proto_out *out,
		   unsigned *actions)
{
	size_t done = 0;

	*actions = 0;
	c->out = out;
	c->actions = actions;
	c->line_mark_valid = false;
	for (;;) {
		struct proto_req req;
		enum proto_status st;
		size_t n;

		if (out->backpressure && proto_out_pending(out) >= out->backpressure)
			break;
		st = proto_parse(&c->parser, in + done, len - done, &req, &n);
		done += n;
		if (st == PROTO_NEED_MORE)
			break;
		if (st == PROTO_CLOSE) {
			*actions |= CMD_ACT_CLOSE;
			break;
		}
		exec(c, &req);
		if (*actions)
			break;
	}
	c->out = NULL;
	c->actions = NULL;
	return done;
}
