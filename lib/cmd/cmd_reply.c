/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Composing replies into the connection's output buffer, and the line
 * each dialect answers an engine status with. Every command file writes its
 * replies through these, so a full buffer is handled the same way
 * everywhere: the connection is closed (CMD_ACT_CLOSE). The cap on a UDP
 * datagram's replies (cmd_udp_cap) is here too: the request loop
 * (cmd_conn.c) and the batched gets (cmd_batch.c) both apply it, and it
 * rewrites replies, so it stays below both; so is the rule of what UDP
 * serves (cmd_udp_servable), for the same two.
 */
#include <string.h>

#include "cmd/cmd_private.h"

void
cmd_fail(struct cmd_conn *c)
{
	*c->actions |= CMD_ACT_CLOSE;
}

bool
cmd_put(struct cmd_conn *c, const void *p, size_t n)
{
	if (proto_out_append(c->out, p, n))
		return true;
	cmd_fail(c);
	return false;
}

__attribute__((hot)) void
cmd_reply(struct cmd_conn *c, bool noreply, const char *line)
{
	if (!noreply && !proto_out_line(c->out, line))
		cmd_fail(c);
	else if (!noreply && cmd_tracing(c))
		cmd_trace_reply(c, line);
}

/* A header's number: one or two digits (flags, a short value's length)
 * in line, longer ones by proto_u64_to_dec(). */
static inline size_t
put_dec(char *p, uint64_t v)
{
	return v < 100 ? proto_u64_to_dec_under_100(v, p) : proto_u64_to_dec(v, p);
}

__attribute__((hot)) size_t
cmd_value_header(char *h, const char *key, size_t klen, const struct engine_item *it,
		 bool with_cas)
{
	size_t n = 0;

	memcpy(h, "VALUE ", 6);
	n = 6;
	memcpy(h + n, key, klen);
	n += klen;
	h[n++] = ' ';
	n += put_dec(h + n, it->flags);
	h[n++] = ' ';
	n += put_dec(h + n, it->vlen);
	if (with_cas) {
		h[n++] = ' ';
		n += proto_u64_to_dec(it->cas, h + n);
	}
	h[n++] = '\r';
	h[n++] = '\n';
	return n;
}

size_t
cmd_value_header_len(size_t klen, const struct engine_item *it, bool with_cas)
{
	return 6 + klen + 1 + proto_dec_len(it->flags) + 1 + proto_dec_len(it->vlen) +
	       (with_cas ? 1 + proto_dec_len(it->cas) : 0) + 2;
}

void
cmd_get_failed(struct cmd_conn *c)
{
	/* memcached replaces the whole reply of the line with the error;
	 * what an earlier cmd_process() call composed may be gone already */
	if (c->line_mark_valid)
		proto_out_truncate(c->out, c->line_mark);
	proto_parser_abort_line(&c->parser);
	cmd_reply(c, false, CMD_E_GET_NO_MEMORY);
}

/* memcached 1.6's lines for an engine status; classic success is the
 * command's own (STORED, DELETED, TOUCHED, a number). */
#define ERROR_LINES                                                                	[ENGINE_TOO_LARGE] = { CMD_E_TOO_LARGE, true },                            	[ENGINE_NO_MEMORY] = { CMD_E_NO_MEMORY_STORING, true },                    	[ENGINE_NON_NUMERIC] = { CMD_E_NON_NUMERIC, true }

static const struct cmd_status_reply status_replies[][ENGINE_INVALID + 1] = {
	[CMD_CLASSIC] = {
		[ENGINE_NOT_STORED] = { "NOT_STORED", false },
		[ENGINE_EXISTS] = { "EXISTS", false },
		[ENGINE_MISS] = { "NOT_FOUND", false },
		ERROR_LINES,
	},
	[CMD_META] = {
		[ENGINE_OK] = { "HD", false },
		[ENGINE_NOT_STORED] = { "NS", false },
		[ENGINE_EXISTS] = { "EX", false },
		[ENGINE_MISS] = { "NF", false },
		ERROR_LINES,
	},
};

const struct cmd_status_reply *
cmd_status_reply(enum cmd_dialect d, enum engine_status rc, unsigned answers)
{
	static const struct cmd_status_reply bad_format = { PROTO_E_BAD_FORMAT, true };

	answers |= CMD_ST(ENGINE_OK);
	if ((unsigned)rc > ENGINE_INVALID || !(answers & CMD_ST(rc)) ||
	    !status_replies[d][rc].line)
		return &bad_format;
	return &status_replies[d][rc];
}

/* mg flags that change the item it reads (protocol.txt): T sets its
 * TTL, N creates it on a miss, R hands out the right to recache it. */
static bool
mg_changes_item(const struct proto_req *req)
{
	const struct proto_meta *m = &req->meta;

	return req->cmd == PROTO_CMD_MG && !req->error &&
	       (m->has_ttl || m->has_vivify || m->has_recache);
}

/* Over UDP only what changes nothing is served unless --udp-writes: a
 * forged source must not store, delete, flush, expire (gat, mg T) or
 * read the statistics. */
bool
cmd_udp_servable(const struct cmd_conn *c, const struct proto_req *req)
{
	if (c->s->udp_writes)
		return true;
	return (cmd_table[req->cmd].flags & CMD_F_UDP) && !mg_changes_item(req);
}

/* The line that replaces a reply over the cap; replies are held to the
 * cap less its length, so that the line itself never takes the
 * datagram's replies past --udp-reply-max (it would have: 4,140 bytes). */
#define UDP_CAPPED "SERVER_ERROR reply over the UDP size limit"
#define UDP_CAPPED_LEN (sizeof(UDP_CAPPED) - 1 + 2)

__attribute__((hot)) void
cmd_udp_cap(struct cmd_conn *c, size_t mark)
{
	size_t max = c->s->udp_reply_max;

	if (max == 0)
		return;
	max = max > UDP_CAPPED_LEN ? max - UDP_CAPPED_LEN : 0;
	if (c->udp_sent + proto_out_pending(c->out) - c->udp_start <= max)
		return;
	proto_out_truncate(c->out, mark);
	c->line_mark_valid = false;
	engine_count(c->w, ENGINE_C_udp_capped);
	/* a cap below the line's own length: no room even for it */
	if (c->s->udp_reply_max >= UDP_CAPPED_LEN)
		cmd_reply(c, false, UDP_CAPPED);
	*c->actions |= CMD_ACT_CLOSE;
}
