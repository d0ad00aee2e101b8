/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Batched get/gets (see cmd_private.h): the keys that cmd_process() queued
 * go to the engine in one engine_get_batch(), whose sink writes each reply
 * straight into the output buffer, in order: the value is copied once,
 * behind a header whose length is known from the item before the copy.
 */
#include <string.h>

#include "cmd/cmd_private.h"

bool
cmd_batch_takes(const struct cmd_conn *c, const struct proto_req *req)
{
	/* UDP checks each request's reply against its size cap, and the
	 * admin port refuses gets: both keep the one-at-a-time path. */
	return !c->udp && !c->admin && req->error == NULL && req->key != NULL &&
	       (req->cmd == PROTO_CMD_GET || req->cmd == PROTO_CMD_GETS);
}

bool
cmd_batch_add(struct cmd_conn *c, struct cmd_batch *b, const struct proto_req *req,
	      size_t done)
{
	struct cmd_batch_entry *e = &b->e[b->n];

	b->keys[b->n].key = req->key;
	b->keys[b->n].klen = req->klen;
	e->with_cas = req->cmd == PROTO_CMD_GETS;
	e->get_last = req->get_last;
	e->done_after = done;
	e->parser = c->parser;
	return ++b->n == CMD_BATCH_MAX;
}

struct batch_run {
	struct cmd_conn *c;
	struct cmd_batch *b;
	size_t *done;
	enum cmd_batch_result result;
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

static void *
batch_value_buf(void *arg, unsigned i, const struct engine_item *it)
{
	struct batch_run *r = arg;
	size_t hlen = cmd_value_header_len(r->b->keys[i].klen, it, r->b->e[i].with_cas);
	/* as much room as cmd_fetch() asks for, so the same replies fail */
	size_t room = it->vlen > CMD_VALUE_ROOM_MIN ? it->vlen : CMD_VALUE_ROOM_MIN;
	char *p = proto_out_reserve(r->c->out, CMD_HDR_MAX + room + 2);

	return p != NULL ? p + hlen : NULL;
}

static bool
batch_done(void *arg, unsigned i, enum engine_status st, const struct engine_item *it)
{
	struct batch_run *r = arg;
	struct cmd_conn *c = r->c;
	const struct cmd_batch_entry *e = &r->b->e[i];
	struct proto_out *out = c->out;

	if (!c->line_mark_valid) {
		c->line_mark_valid = true;
		c->line_mark = proto_out_mark(out);
	}
	if (st == ENGINE_BUF_SMALL) {
		/* no room for the value: as cmd_exec_get(), with the parser
		 * where it was after this key */
		rewind_to(r, i);
		cmd_get_failed(c);
		r->result = *c->actions ? CMD_BATCH_STOP : CMD_BATCH_RESUME;
		return false;
	}
	if (st == ENGINE_OK) {
		/* the value is at tail + hlen (batch_value_buf) */
		size_t hlen = cmd_value_header(proto_out_tail(out), r->b->keys[i].key,
					       r->b->keys[i].klen, it, e->with_cas);

		proto_out_commit(out, hlen + it->vlen);
		memcpy(proto_out_tail(out), "\r\n", 2);
		proto_out_commit(out, 2);
		c->last = *it;
	}
	if (e->get_last) {
		c->line_mark_valid = false;
		cmd_put(c, "END\r\n", 5);
	}
	/* where cmd_process() would not start the next request */
	if (*c->actions || (out->backpressure && proto_out_pending(out) >= out->backpressure)) {
		rewind_to(r, i);
		r->result = CMD_BATCH_STOP;
		return false;
	}
	return true;
}

enum cmd_batch_result
cmd_batch_run(struct cmd_conn *c, struct cmd_batch *b, size_t *done)
{
	struct batch_run r = { .c = c, .b = b, .done = done, .result = CMD_BATCH_DONE };
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
