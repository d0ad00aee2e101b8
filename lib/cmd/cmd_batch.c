/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Batched gets (see cmd_private.h): the keys that cmd_process() queued
 * go to the engine in one engine_get_batch(), whose sink writes each reply
 * straight into the output buffer, in order: the value is copied once,
 * behind a header whose length is known from the item before the copy.
 */
#include <string.h>

#include "cmd/cmd_private.h"

__attribute__((hot)) bool
cmd_batch_takes(const struct cmd_conn *c, const struct proto_req *req)
{
	/* The admin port refuses gets, and so does UDP a command it does not
	 * serve: both answer it one at a time. UDP's size cap is checked
	 * after each key's reply (batch_done), as cmd_process() does. */
	if (c->admin || req->error != NULL || req->key == NULL)
		return false;
	/* -vv: traced one at a time, each reply after its request */
	if (cmd_tracing(c))
		return false;
	if (c->udp && !cmd_udp_servable(c, req))
		return false;
	if (req->cmd == PROTO_CMD_GET || req->cmd == PROTO_CMD_GETS)
		return true;
	/* an mg that touches, or whose key lives in req->keybuf (b), or that
	 * exec_mg refuses (l), goes its own way */
	return req->cmd == PROTO_CMD_MG && !req->meta.has_ttl && !req->meta.base64 &&
	       !proto_meta_has(&req->meta, 'l');
}

__attribute__((hot)) bool
cmd_batch_add(struct cmd_conn *c, struct cmd_batch *b, const struct proto_req *req,
	      size_t done)
{
	struct cmd_batch_entry *e = &b->e[b->n];

	b->keys[b->n].key = req->key;
	b->keys[b->n].klen = req->klen;
	e->cmd = req->cmd;
	e->get_last = req->get_last;
	e->done_after = done;
	e->parser = c->parser;
	if (req->cmd == PROTO_CMD_MG) {
		e->meta = req->meta;
		e->now = proto_meta_has(&req->meta, 't') ? cmd_now(c) : 0;
	}
	return ++b->n == CMD_BATCH_MAX;
}

struct batch_run {
	struct cmd_conn *c;
	struct cmd_batch *b;
	size_t *done;
	enum cmd_batch_result result;
	/* The get/gets header batch_value_buf() wrote last, in front of the
	 * value: batch_done() keeps it when the item it reports is that
	 * one, instead of formatting it a second time. */
	unsigned hdr_key;
	size_t hdr_len;
	struct engine_item hdr_item;
};

/* The request loop goes on from just after key i. */
static void
rewind_to(struct batch_run *r, unsigned i)
{
	struct cmd_conn *c = r->c;

	c->parser = r->b->e[i].parser;
	*r->done = r->b->e[i].done_after;
	c->requests -= r->b->n - 1 - i;
}

/* The length of key i's reply header for it. */
static size_t
header_len(const struct batch_run *r, unsigned i, const struct engine_item *it)
{
	const struct cmd_batch_entry *e = &r->b->e[i];
	const struct engine_key *k = &r->b->keys[i];
	char h[CMD_HDR_MAX];

	if (e->cmd == PROTO_CMD_MG)
		return cmd_mg_header(h, &e->meta, k->key, k->klen, it, e->now);
	return cmd_value_header_len(k->klen, it, e->cmd == PROTO_CMD_GETS);
}

static __attribute__((hot)) void *
batch_value_buf(void *arg, unsigned i, const struct engine_item *it)
{
	struct batch_run *r = arg;
	/* as much room as cmd_fetch() asks for, so the same replies fail */
	size_t room = it->vlen > CMD_VALUE_ROOM_MIN ? it->vlen : CMD_VALUE_ROOM_MIN;
	char *p;

	if (r->b->e[i].cmd == PROTO_CMD_MG && !r->b->e[i].meta.value)
		return NULL; /* meta data only */
	p = proto_out_reserve(r->c->out, CMD_HDR_MAX + room + 2);
	if (p == NULL)
		return NULL;
	if (r->b->e[i].cmd == PROTO_CMD_MG)
		return p + header_len(r, i, it);
	r->hdr_key = i;
	r->hdr_item = *it;
	r->hdr_len = cmd_value_header(p, r->b->keys[i].key, r->b->keys[i].klen, it,
				      r->b->e[i].cmd == PROTO_CMD_GETS);
	return p + r->hdr_len;
}

/* Whether it is the item whose header batch_value_buf() wrote for key i
 * (an engine that read the item again may report another). */
static bool
header_written(const struct batch_run *r, unsigned i, const struct engine_item *it)
{
	return r->hdr_key == i && r->hdr_item.flags == it->flags &&
	       r->hdr_item.vlen == it->vlen && r->hdr_item.cas == it->cas;
}

/* Key i of an mg, as exec_mg() answers it. */
static void
mg_done(struct cmd_conn *c, const struct cmd_batch_entry *e, const struct engine_key *k,
	enum engine_status st, const struct engine_item *it)
{
	struct proto_out *out = c->out;
	char hdr[CMD_HDR_MAX];
	size_t hlen;

	if (st == ENGINE_MISS) {
		if (!e->meta.quiet)
			cmd_meta_status(c, &e->meta, k->key, k->klen, "EN");
		return;
	}
	if (e->meta.value && st == ENGINE_OK) {
		/* the value is at tail + hlen (batch_value_buf) */
		hlen = cmd_mg_header(proto_out_tail(out), &e->meta, k->key, k->klen, it, e->now);
		proto_out_commit(out, hlen + it->vlen);
		memcpy(proto_out_tail(out), "\r\n", 2);
		proto_out_commit(out, 2);
		c->last = *it;
	} else if (e->meta.value) {
		cmd_reply(c, false, CMD_E_GET_NO_MEMORY);
	} else {
		/* the engine counts a read only when it copies the value */
		engine_count(c->w, ENGINE_C_cmd_get);
		engine_count(c->w, ENGINE_C_get_hits);
		hlen = cmd_mg_header(hdr, &e->meta, k->key, k->klen, it, e->now);
		cmd_put(c, hdr, hlen);
	}
}

static __attribute__((hot)) bool
batch_done(void *arg, unsigned i, enum engine_status st, const struct engine_item *it)
{
	struct batch_run *r = arg;
	struct cmd_conn *c = r->c;
	const struct cmd_batch_entry *e = &r->b->e[i];
	struct proto_out *out = c->out;
	/* over UDP, where this key's reply starts as cmd_process() marks it:
	 * a get key's is where its line's replies start */
	size_t mark = proto_out_mark(out);

	if (e->cmd == PROTO_CMD_MG) {
		mg_done(c, e, &r->b->keys[i], st, it);
		goto next;
	}
	if (!c->line_mark_valid) {
		c->line_mark_valid = true;
		c->line_mark = mark;
	}
	mark = c->line_mark;
	if (st == ENGINE_BUF_SMALL) {
		/* no room for the value: as cmd_exec_get(), with the parser
		 * where it was after this key */
		rewind_to(r, i);
		cmd_get_failed(c);
		if (c->udp)
			cmd_udp_cap(c, mark);
		r->result = *c->actions ? CMD_BATCH_STOP : CMD_BATCH_RESUME;
		return false;
	}
	if (st == ENGINE_OK) {
		/* the value is at tail + hlen (batch_value_buf) */
		size_t hlen = header_written(r, i, it)
				      ? r->hdr_len
				      : cmd_value_header(proto_out_tail(out), r->b->keys[i].key,
							 r->b->keys[i].klen, it,
							 e->cmd == PROTO_CMD_GETS);
		char *end = proto_out_tail(out) + hlen + it->vlen;

		c->last = *it;
		/* the line's END in the same write when it fits (one key a
		 * line, as over UDP, is the common case) */
		if (e->get_last && proto_out_room(out) >= hlen + it->vlen + 7) {
			memcpy(end, "\r\nEND\r\n", 7);
			proto_out_commit(out, hlen + it->vlen + 7);
			c->line_mark_valid = false;
			if (cmd_tracing(c))
				cmd_trace_reply(c, "END");
			goto next;
		}
		memcpy(end, "\r\n", 2);
		proto_out_commit(out, hlen + it->vlen + 2);
	}
	if (e->get_last) {
		c->line_mark_valid = false;
		cmd_put(c, "END\r\n", 5);
		if (cmd_tracing(c))
			cmd_trace_reply(c, "END");
	}
next:
	if (c->udp)
		cmd_udp_cap(c, mark);
	/* where cmd_process() would not start the next request */
	if (*c->actions || (out->backpressure && proto_out_pending(out) >= out->backpressure)) {
		rewind_to(r, i);
		r->result = CMD_BATCH_STOP;
		return false;
	}
	return true;
}

__attribute__((hot)) enum cmd_batch_result
cmd_batch_run(struct cmd_conn *c, struct cmd_batch *b, size_t *done)
{
	struct batch_run r = { .c = c, .b = b, .done = done, .result = CMD_BATCH_DONE,
			       .hdr_key = CMD_BATCH_MAX };
	const struct engine_get_sink sink = {
		.value_buf = batch_value_buf,
		.done = batch_done,
		.arg = &r,
	};

	if (b->n > 0)
		engine_get_batch(c->w, b->keys, b->n, &sink);
	b->n = 0;
	return r.result;
}
