/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A storage request whose data block the stack has no memory to hold
 * (its connection buffer budget is spent, cmd.h's cmd_conn_refuse_data):
 * refused as memcached refuses an item it cannot allocate, "SERVER_ERROR
 * out of memory storing object", with the key's old value dropped so that
 * a stale value does not outlive a failed update, and the rest of the
 * block swallowed as it arrives, without being buffered.
 */
#include "cmd/cmd_private.h"

size_t
cmd_conn_data_need(const struct cmd_conn *c)
{
	return c->parser.state == PROTO_PS_DATA ? c->parser.need : 0;
}

bool
cmd_conn_refuse_data(struct cmd_conn *c, const char *in, size_t len, struct proto_out *out)
{
	size_t need = cmd_conn_data_need(c), n;
	unsigned actions = 0;
	struct proto_req req;

	if (need == 0 || len >= need)
		return false;
	/* The request line is in[0..): parse it again for its key. It
	 * waits for its data block as before (PROTO_NEED_MORE). */
	c->parser.state = PROTO_PS_LINE;
	if (proto_parse(&c->parser, in, len, &req, &n) != PROTO_NEED_MORE ||
	    c->parser.state != PROTO_PS_DATA || c->parser.need != need) {
		/* cannot happen: the same bytes parsed the same way before */
		c->parser.state = PROTO_PS_DATA;
		c->parser.need = need;
		return false;
	}
	c->requests++;
	c->out = out;
	c->actions = &actions;
	engine_count(c->w, ENGINE_C_cmd_set);
	engine_count(c->w, ENGINE_C_set_no_memory);
	/* memcached drops the old value of a set (and of any ms) it could
	 * not allocate */
	if (req.key != NULL && (req.cmd == PROTO_CMD_SET || req.cmd == PROTO_CMD_MS))
		cmd_drop_key(c, req.key, req.klen);
	cmd_reply(c, false, CMD_E_NO_MEMORY_STORING); /* errors ignore noreply */
	c->out = NULL;
	c->actions = NULL;
	c->parser.state = PROTO_PS_SWALLOW;
	c->parser.swallow = need - len;
	return true;
}
