/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Composing replies into the connection's output buffer. Every command
 * file writes its replies through these, so a full buffer is handled the
 * same way everywhere: the connection is closed (CMD_ACT_CLOSE).
 */
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

void
cmd_reply(struct cmd_conn *c, bool noreply, const char *line)
{
	if (!noreply && !proto_out_line(c->out, line))
		cmd_fail(c);
}
