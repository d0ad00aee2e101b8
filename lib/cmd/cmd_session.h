/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The session loop of one client connection, shared by both network
 * stacks (Pelikan's core/data/worker.c with its data_processor is the
 * model): run the requests in the connection's input while its output is
 * under the high-water mark, act on the CMD_ACT_* bits, and decide when the
 * connection is finished. The stacks only move bytes: they present what
 * they received, send what was composed into `out`, and close the
 * connection when cmd_session_finished() says so.
 *
 * A session belongs to the thread (lcore) of its connection.
 */
#ifndef SEGCACHED_CMD_SESSION_H
#define SEGCACHED_CMD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "proto/proto_out.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stop executing a connection's requests while more than this much of its
 * output is unsent: one slow reader cannot make the server buffer without
 * bound. */
#define CMD_SESSION_OUT_HIGH (256u << 10)
/* A closed connection's output buffer is kept for the next one up to this
 * size; larger ones are freed. */
#define CMD_SESSION_OUT_KEEP (64u << 10)
/* Room for a storage command line besides an item's data: the largest
 * request is item_max plus this. */
#define CMD_SESSION_IN_SLACK (64u << 10)

/* What a connection waits for, as far as the request timeout goes
 * (cmd_session_wait()). */
enum cmd_session_wait {
	CMD_WAIT_NONE,    /* nothing pending: idle, or busy and making way */
	CMD_WAIT_REQUEST, /* the client started a request and has not finished it */
	CMD_WAIT_WRITE,   /* replies wait for the client to take them */
};

struct cmd_session {
	struct cmd_conn *cmd;   /* the parser and executor state */
	struct proto_out out;   /* composed replies; data[head..len) not yet sent */
	/* Moves composed bytes to the transport, called before each request
	 * and after the last (NULL: the stack sends after the whole batch
	 * itself). A stack whose send is a copy into its own TCP buffer
	 * passes one; a stack whose send is a system call does not. */
	void (*flush)(void *arg);
	void *flush_arg;
	/* `shutdown` from the client. */
	void (*on_shutdown)(void *arg);
	void *on_shutdown_arg;
	/* Where to count the times the session stopped on the output bound
	 * (NULL: not counted). Written by the session's thread only. */
	uint64_t *stalls;
	bool closing;           /* quit or bad input: finish the output, then close */
	bool eof;               /* the client sent FIN: answer, then close */
	bool stalled;           /* stopped on the output bound */
	/* for cmd_session_wait(): the stack sets `sent` when the client took
	 * replies (the transport accepted bytes); the rest is the session's */
	bool sent;
	uint8_t wait;           /* enum cmd_session_wait, as last seen */
	uint64_t requests_seen; /* cmd_conn_requests() then */
};

/* The most input one request can need, and the output limit of a session:
 * the high-water mark plus the largest single reply. */
static inline size_t
cmd_session_in_max(size_t item_max)
{
	return item_max + CMD_SESSION_IN_SLACK;
}

static inline size_t
cmd_session_out_limit(size_t item_max)
{
	return CMD_SESSION_OUT_HIGH + item_max + CMD_SESSION_IN_SLACK;
}

/* Prepares the output buffer of a new connection object (kept across the
 * connections it serves). 0, or -1 for lack of memory. */
int cmd_session_init(struct cmd_session *s, size_t item_max);
/* Frees what cmd_session_init() allocated. */
void cmd_session_fini(struct cmd_session *s);

/* A session needs output memory of its own only while it holds bytes the
 * transport did not take. A stack that sends replies as soon as they are
 * composed lets its sessions compose in one per-worker buffer instead:
 * borrow `spare`'s memory before running requests (when the session holds
 * none) and give it back once everything was sent (to `spare` when it has
 * none again and the buffer did not grow past CMD_SESSION_OUT_KEEP, else
 * to free()). Replies are then written to lines still in cache, and an idle
 * connection holds no output buffer (release it with proto_out_release
 * after cmd_session_init or cmd_session_close). Never call them while the
 * session runs (from a flush callback). */
void cmd_session_out_borrow(struct cmd_session *s, struct proto_out *spare);
void cmd_session_out_give_back(struct cmd_session *s, struct proto_out *spare);

/* A connection opens on this session: creates its executor state. The
 * callbacks and stall counter are set by the caller before or after.
 * 0, or -1 for lack of memory. */
int cmd_session_open(struct cmd_session *s, struct cmd_settings *settings,
		     struct engine_worker *w);
/* The connection is gone: forgets its state and keeps the output buffer
 * for the next one (a large one is replaced by a small one). -1 when no
 * buffer could be had: the caller then drops the object (after
 * cmd_session_fini(), which is then a no-op). */
int cmd_session_close(struct cmd_session *s, size_t item_max);

/* Unsent output at or over the high-water mark: do not read or run more. */
static inline bool
cmd_session_backlogged(const struct cmd_session *s)
{
	return proto_out_pending(&s->out) >= CMD_SESSION_OUT_HIGH;
}

/* Sends what it can (flush) and tells whether the output is still over the
 * high-water mark; counts a stall when it newly is. */
bool cmd_session_blocked(struct cmd_session *s);

/* Executes the complete requests in in[0..len) while the output stays
 * under the high-water mark and the session is not closing; returns the
 * bytes consumed (the rest is an incomplete request, presented again with
 * more bytes, or requests that wait for the output to drain). */
size_t cmd_session_execute(struct cmd_session *s, const char *in, size_t len);

/* The request timeout's rule, the same on both stacks. Called after the
 * stack has run the session and sent what it could; input_left says that
 * received bytes wait unconsumed (an incomplete request, when the output
 * is not over the bound). Returns what the connection waits for now, and
 * sets *restart when its deadline is to start over:
 *  - CMD_WAIT_WRITE (unsent replies the transport cannot take, or, with
 *    out_held, replies the transport holds in memory of ours that the
 *    client has not acknowledged): restarts whenever the client took some
 *    (`sent`), so only a client that takes nothing for the whole timeout
 *    is cut off;
 *  - CMD_WAIT_REQUEST (a request begun and not complete): restarts only
 *    when a request completed since the last call, so a request dribbled a
 *    byte at a time (slowloris) has the timeout once, while a pipelining
 *    client whose reads end mid-request is never cut off;
 *  - CMD_WAIT_NONE: idle connections, with nothing begun, never time out
 *    (that is the idle timeout's business).
 * A change of kind restarts too. */
enum cmd_session_wait cmd_session_wait(struct cmd_session *s, bool input_left, bool out_held,
				       bool *restart);

/* The close rule: quit, bad input or the client's FIN, and every reply
 * handed to the transport. */
static inline bool
cmd_session_finished(const struct cmd_session *s)
{
	return (s->closing || s->eof) && proto_out_pending(&s->out) == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_CMD_SESSION_H */
