/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * -vv (or `verbosity 2`): memcached's per-connection and per-command
 * lines, "<28 new auto-negotiating client connection", "28: Client using
 * the ascii protocol", "<28 get foo", ">28 END", "<28 connection
 * closed.", handed whole to cmd_settings.trace (the server logs them,
 * rate-limited). Only connections a stack named with
 * cmd_conn_trace_open() are traced; the check on the request path is a
 * load and a compare (cmd_tracing()).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd_private.h"

/* memcached prints the whole command line; a longer one is cut here. */
#define TRACE_LINE_MAX 240

static void
trace(const struct cmd_conn *c, const char *fmt, ...)
{
	char line[TRACE_LINE_MAX + 32];
	va_list ap;

	if (c->s->trace == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->s->trace(c->s->trace_arg, line);
}

void
cmd_conn_trace_open(struct cmd_conn *c, int id)
{
	c->trace_id = id;
	if (cmd_tracing(c))
		trace(c, "<%d new auto-negotiating client connection", id);
}

void
cmd_conn_trace_close(struct cmd_conn *c)
{
	if (cmd_tracing(c))
		trace(c, "<%d connection closed.", c->trace_id);
	c->trace_id = -1;
}

void
cmd_trace_request(struct cmd_conn *c, const char *req, size_t len)
{
	const char *nl = memchr(req, '\n', len);
	size_t n = nl ? (size_t)(nl - req) : len;

	if (n > 0 && req[n - 1] == '\r')
		n--;
	if (!c->trace_said_protocol) {
		c->trace_said_protocol = true;
		trace(c, "%d: Client using the ascii protocol", c->trace_id);
	}
	trace(c, "<%d %.*s", c->trace_id, (int)(n < TRACE_LINE_MAX ? n : TRACE_LINE_MAX), req);
}

void
cmd_trace_reply(struct cmd_conn *c, const char *line)
{
	size_t n = strcspn(line, "\r\n");

	trace(c, ">%d %.*s", c->trace_id, (int)(n < TRACE_LINE_MAX ? n : TRACE_LINE_MAX), line);
}

void
cmd_trace_key(struct cmd_conn *c, const char *key, size_t klen)
{
	trace(c, ">%d sending key %.*s", c->trace_id,
	      (int)(klen < TRACE_LINE_MAX ? klen : TRACE_LINE_MAX), key);
}
