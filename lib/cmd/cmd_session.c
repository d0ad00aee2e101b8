/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The session loop of a client connection (cmd_session.h).
 */
#include "cmd/cmd_session.h"

#include <string.h>

static int
out_init(struct cmd_session *s, size_t item_max)
{
	if (proto_out_init(&s->out, 0, cmd_session_out_limit(item_max)) < 0)
		return -1;
	/* cmd_process() stops at the mark too, within a multi-key get. */
	s->out.backpressure = CMD_SESSION_OUT_HIGH;
	return 0;
}

int
cmd_session_init(struct cmd_session *s, size_t item_max)
{
	memset(s, 0, sizeof(*s));
	return out_init(s, item_max);
}

void
cmd_session_fini(struct cmd_session *s)
{
	proto_out_fini(&s->out);
}

void
cmd_session_out_borrow(struct cmd_session *s, struct proto_out *spare)
{
	if (!proto_out_holds_memory(&s->out) && proto_out_holds_memory(spare))
		proto_out_move(&s->out, spare);
}

void
cmd_session_out_give_back(struct cmd_session *s, struct proto_out *spare)
{
	if (!proto_out_holds_memory(&s->out) || proto_out_pending(&s->out) > 0)
		return;
	if (!proto_out_holds_memory(spare) && s->out.cap <= CMD_SESSION_OUT_KEEP)
		proto_out_move(spare, &s->out);
	else
		proto_out_release(&s->out);
}

int
cmd_session_open(struct cmd_session *s, struct cmd_settings *settings,
		 struct engine_worker *w)
{
	s->cmd = cmd_conn_create(settings, w, false);
	return s->cmd != NULL ? 0 : -1;
}

int
cmd_session_close(struct cmd_session *s, size_t item_max)
{
	cmd_conn_destroy(s->cmd);
	s->cmd = NULL;
	s->closing = s->eof = s->stalled = s->sent = false;
	s->wait = CMD_WAIT_NONE;
	s->requests_seen = 0;
	if (s->out.cap > CMD_SESSION_OUT_KEEP) {
		proto_out_fini(&s->out);
		return out_init(s, item_max);
	}
	proto_out_consume(&s->out, proto_out_pending(&s->out));
	return 0;
}

bool
cmd_session_blocked(struct cmd_session *s)
{
	if (s->flush != NULL)
		s->flush(s->flush_arg);
	if (cmd_session_backlogged(s)) {
		if (!s->stalled && s->stalls != NULL)
			(*s->stalls)++;
		s->stalled = true;
		return true;
	}
	s->stalled = false;
	return false;
}

size_t
cmd_session_execute(struct cmd_session *s, const char *in, size_t len)
{
	size_t used = 0;

	while (!s->closing && !cmd_session_blocked(s) && used < len) {
		unsigned actions = 0;
		size_t n = cmd_process(s->cmd, in + used, len - used, &s->out, &actions);

		used += n;
		if ((actions & CMD_ACT_SHUTDOWN) && s->on_shutdown != NULL)
			s->on_shutdown(s->on_shutdown_arg);
		if (actions & CMD_ACT_CLOSE)
			s->closing = true;
		if (n == 0 && !cmd_conn_dumping(s->cmd))
			break; /* an incomplete request: wait for more bytes */
	}
	if (s->flush != NULL)
		s->flush(s->flush_arg);
	return used;
}

enum cmd_session_wait
cmd_session_wait(struct cmd_session *s, bool input_left, bool out_held, bool *restart)
{
	enum cmd_session_wait w = CMD_WAIT_NONE;
	uint64_t done = cmd_conn_requests(s->cmd);

	if (proto_out_pending(&s->out) > 0 || out_held)
		w = CMD_WAIT_WRITE;
	else if (!s->closing && !s->eof && (input_left || cmd_conn_busy(s->cmd)))
		w = CMD_WAIT_REQUEST;
	*restart = w != CMD_WAIT_NONE &&
		   (w != s->wait || (w == CMD_WAIT_WRITE ? s->sent : done != s->requests_seen));
	s->wait = (uint8_t)w;
	s->sent = false;
	s->requests_seen = done;
	return w;
}
