/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd internals, the one header every file of lib/cmd includes:
 *   cmd_table.c    the command table: one row per command (name, syntax,
 *                  handler, flags)
 *   cmd_conn.c     the connection, the request loop and dispatch by the table
 *   cmd_reply.c    composing replies (cmd_put, cmd_reply, cmd_fail) and the
 *                  engine status -> reply line tables of both dialects
 *   cmd_fetch.c    engine and settings access (cmd_fetch, cmd_drop_key, cmd_now)
 *   cmd_classic.c  the classic commands (cmd_exec_get, cmd_exec_store, ...)
 *   cmd_meta.c     the meta commands (cmd_exec_mg, cmd_exec_ms, ...)
 *   cmd_stats.c    stats and its subcommands (cmd_exec_stats)
 *   cmd_admin.c    cache_memlimit, slabs, lru_crawler (memcached's administration)
 *   cmd_dump.c     key dumps: lru_crawler metadump, stats cachedump, streamed
 *   cmd_batch.c    consecutive get/gets keys run as one engine_get_batch()
 *   cmd_session.c  a connection's reading and writing deadlines (cmd_session.h)
 *   cmd_hint.c     the keys of get lines for engine_prefetch() (cmd_hint_keys)
 *   cmd_refuse.c   a data block the stack has no memory for (cmd_conn_refuse_data)
 *   cmd_stream.c   a large value read straight into its item (cmd_store)
 * Calls run one way only: cmd_conn.c -> the command files -> the helpers.
 */
#ifndef SEGCACHED_CMD_PRIVATE_H
#define SEGCACHED_CMD_PRIVATE_H

#include "cmd/cmd.h"
#include "proto/proto.h"
#include "proto/proto_out.h"

/* Room kept in front of a value for its VALUE/VA header: the longest is a
 * meta header with every flag (a 250-byte key base64-encoded, a 32-byte
 * opaque, 20-digit numbers). */
#define CMD_HDR_MAX 512
/* Room offered to the engine for a value before its size is known. */
#define CMD_VALUE_ROOM_MIN 4096
/* A value that keeps changing size while being copied: give up after
 * this many tries. */
#define CMD_FETCH_TRIES 8

struct cmd_conn {
	const struct cmd_settings *s;
	struct cmd_runtime *rt;    /* s->rt, writable */
	struct engine_worker *w;
	struct proto_parser parser;
	bool udp;
	bool admin;                /* admin port: administration commands only */
	uint64_t requests;         /* parsed so far (cmd_conn_requests) */
	/* -R: requests stops this wake-up's turn at this count (0: no cap;
	 * cmd_conn_event_begin), and yielded says it did */
	uint64_t budget_end;
	bool yielded;
	/* -vv: the id the trace lines name (the stack's descriptor), -1 for
	 * an untraced connection (cmd_trace.c) */
	int trace_id;
	bool trace_said_protocol;
	size_t udp_sent;           /* reply bytes of this datagram, earlier calls */
	size_t udp_start;          /* pending output when this call began */
	/* this cmd_process() call */
	struct proto_out *out;
	unsigned *actions;
	bool line_mark_valid;      /* a get line started in this call */
	size_t line_mark;          /* where its replies start */
	/* the previous item fetched: predicts the next header's length */
	struct engine_item last;
	/* a key dump under way (cmd_dump.c), or NULL */
	struct cmd_dump *dump;
	/* a store whose value is still arriving (cmd_stream.c), or NULL */
	struct cmd_stream *stream;
};

/* ---- stores, and values read straight into their item (cmd_stream.c) ---- */

/* What a store handler asks of the engine. */
struct cmd_store_args {
	enum engine_store_mode mode;
	uint32_t flags;
	int64_t exptime;
	uint64_t cas_in;
};

/* The parser streams on connections whose engine can (not over UDP). */
void cmd_stream_setup(struct cmd_conn *c);
/* Runs req's store: engine_store, or a streamed store's begin (false:
 * the value is still arriving; the handler runs again with the line's
 * copy, stream END, at its end) or end. True: *rc is the outcome to
 * answer. A refused begin leaves the block to cmd_process to swallow. */
bool cmd_store(struct cmd_conn *c, const struct proto_req *req, const struct cmd_store_args *a,
	       uint64_t *cas_out, enum engine_status *rc);
/* A piece of the value under way goes into its item; the last returns
 * the line's request to run again (stream END, its error set when the
 * block ended wrongly), NULL until then. */
const struct proto_req *cmd_stream_piece(struct cmd_conn *c, const struct proto_req *piece);
/* The stream is over (answered, or the connection is going). */
void cmd_stream_end(struct cmd_conn *c);

/* ---- -vv traces (cmd_trace.c) ---- */

/* Is this connection traced now (verbosity 2 or more, live)? */
static inline bool
cmd_tracing(const struct cmd_conn *c)
{
	int v;

	if (c->trace_id < 0)
		return false;
	v = __atomic_load_n(&c->s->rt.verbosity_plus1, __ATOMIC_RELAXED);
	return (v ? v - 1 : c->s->verbosity) >= 2;
}

/* "<id LINE": the request's first line (its data block left out). */
void cmd_trace_request(struct cmd_conn *c, const char *req, size_t len);
/* ">id sending key KEY": a hit of a get. */
void cmd_trace_key(struct cmd_conn *c, const char *key, size_t klen);
/* ">id LINE": a status line of the reply. */
void cmd_trace_reply(struct cmd_conn *c, const char *line);

/* ---- the command table (cmd_table.c) ---- */

typedef void cmd_handler(struct cmd_conn *c, const struct proto_req *req);

struct cmd_def {
	struct proto_word word;  /* name, syntax and token counts: the parser's */
	/* runs a request that parsed (or, with CMD_F_OWN_ERROR, any);
	 * NULL: the command is only ever an error (PROTO_CMD_ERROR) */
	cmd_handler *exec;
	unsigned flags;          /* CMD_F_* (cmd.h) */
};

/* Indexed by enum proto_cmd; every value has its row. */
extern const struct cmd_def cmd_table[PROTO_CMD_MAX];

/* ---- replies (cmd_reply.c) ---- */

/* Error lines that more than one command writes (with
 * PROTO_E_BAD_FORMAT, proto.h). */
#define CMD_E_TOO_LARGE "SERVER_ERROR object too large for cache"
#define CMD_E_NO_MEMORY_STORING "SERVER_ERROR out of memory storing object"
#define CMD_E_NO_MEMORY "SERVER_ERROR out of memory" /* incr, decr, ma */
#define CMD_E_NON_NUMERIC "CLIENT_ERROR cannot increment or decrement non-numeric value"
#define CMD_E_GET_NO_MEMORY "SERVER_ERROR out of memory writing get response"

/* The reply to an engine status, per dialect (cmd_reply.c): classic
 * NOT_STORED, EXISTS, NOT_FOUND (success is each command's own line:
 * STORED, DELETED, ...); meta HD, NS, EX, NF (a code the command follows
 * with its return flags); and the error lines, the same in both. A command
 * names the statuses it answers besides success (CMD_ST bits); any other
 * status is PROTO_E_BAD_FORMAT, as memcached's fall-through is. */
enum cmd_dialect { CMD_CLASSIC, CMD_META };
#define CMD_ST(status) (1u << (status))
/* What a store answers (classic set & co and ms); success always is. */
#define CMD_ST_STORE                                                               \
	(CMD_ST(ENGINE_NOT_STORED) | CMD_ST(ENGINE_EXISTS) | CMD_ST(ENGINE_MISS) |  \
	 CMD_ST(ENGINE_TOO_LARGE) | CMD_ST(ENGINE_NO_MEMORY))

struct cmd_status_reply {
	const char *line;
	bool error;  /* an error line: meta never hides it (q) nor echoes flags */
};

const struct cmd_status_reply *cmd_status_reply(enum cmd_dialect d, enum engine_status rc,
						unsigned answers);

/* Appends a line unless the request is noreply. A full output buffer is
 * fatal for the connection (CMD_ACT_CLOSE). */
void cmd_reply(struct cmd_conn *c, bool noreply, const char *line);
/* Appends bytes; sets CMD_ACT_CLOSE when out cannot take them. */
bool cmd_put(struct cmd_conn *c, const void *p, size_t n);
void cmd_fail(struct cmd_conn *c);
/* Writes "VALUE <key> <flags> <bytes>[ <cas>]\r\n" at h; returns its
 * length, which cmd_value_header_len() tells beforehand. */
size_t cmd_value_header(char *h, const char *key, size_t klen, const struct engine_item *it,
			bool with_cas);
size_t cmd_value_header_len(size_t klen, const struct engine_item *it, bool with_cas);
/* A get line's reply does not fit the output limit: the line's replies
 * become one SERVER_ERROR and the rest of the line is discarded. */
void cmd_get_failed(struct cmd_conn *c);
/* Over UDP: the datagram's replies went over udp_reply_max; the reply
 * from mark on (the last request's, a whole get line) becomes one error
 * line and the rest of the datagram is dropped (cmd_reply.c). */
void cmd_udp_cap(struct cmd_conn *c, size_t mark);
/* Is req served over UDP? Only what changes nothing (the table's
 * CMD_F_UDP, and an mg without T, N or R) unless --udp-writes; the
 * request loop and the batched gets both ask (cmd_reply.c). */
bool cmd_udp_servable(const struct cmd_conn *c, const struct proto_req *req);

/* ---- engine and settings access (cmd_fetch.c) ---- */

/* Reads key into the output buffer behind a gap of `gap` bytes (the gap
 * must not exceed CMD_HDR_MAX); on ENGINE_OK the value is at
 * tail + gap and room remains for a header of up to CMD_HDR_MAX bytes and
 * a trailing "\r\n". Returns an engine status, or -1 when the output
 * buffer cannot hold the value. buf_wanted = false fetches only the item's
 * meta data (returns ENGINE_OK on a hit). */
int cmd_fetch(struct cmd_conn *c, const char *key, size_t klen, int64_t touch, size_t gap,
	      bool buf_wanted, struct engine_item *it);

/* The engine clock now. */
int64_t cmd_now(const struct cmd_conn *c);

/* Removes a key without counting a delete (memcached drops the old value
 * of a set that failed for size or memory; that is not a delete command). */
void cmd_drop_key(struct cmd_conn *c, const char *key, size_t klen);

/* ---- the commands, called by cmd_conn.c's dispatch ---- */

/* The handlers, one per row of cmd_table (or per group of rows); a request
 * with req->error never reaches them unless their row has CMD_F_OWN_ERROR. */

/* Classic commands (cmd_classic.c). */
void cmd_exec_get(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_store(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_delete(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_arith(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_touch(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_flush_all(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_shutdown(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_version(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_verbosity(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_quit(struct cmd_conn *c, const struct proto_req *req);

/* Batched gets (cmd_batch.c): cmd_process() queues the keys of
 * consecutive get, gets and plain mg requests (of one line or of pipelined
 * lines) and runs them with one engine_get_batch(), so their cache misses
 * overlap. The replies are byte for byte those of cmd_exec_get() and
 * cmd_exec_mg() one key at a time, and so is where the request loop
 * stops: each queued key
 * remembers the input offset and parser state after it, and a batch that
 * must stop early (the output reached its backpressure mark, or an
 * action) rewinds the loop to just after the last key it answered. */
#define CMD_BATCH_MAX ENGINE_BATCH_GROUP

struct cmd_batch_entry {
	enum proto_cmd cmd;         /* get, gets or mg */
	bool get_last;              /* get/gets: the line's last key */
	int64_t now;                /* mg with t: the clock when it was parsed */
	size_t done_after;          /* input consumed once this key was parsed */
	struct proto_parser parser; /* parser state then */
	struct proto_meta meta;     /* mg: its flags (opaque points into the input) */
};

struct cmd_batch {
	unsigned n;
	struct engine_key keys[CMD_BATCH_MAX];
	struct cmd_batch_entry e[CMD_BATCH_MAX];
};

enum cmd_batch_result {
	CMD_BATCH_DONE,   /* every key answered; the loop goes on */
	CMD_BATCH_RESUME, /* rewound after a failed key (its line is aborted): parse on */
	CMD_BATCH_STOP,   /* rewound; the request loop ends here */
};

/* Can req join a batch? get/gets with a key, or mg without a touch (T), a
 * base64 key (b) or l, on a TCP client connection. */
bool cmd_batch_takes(const struct cmd_conn *c, const struct proto_req *req);
/* Queues req, parsed with the input consumed up to done and the parser
 * now in c->parser; returns true when the batch is full. */
bool cmd_batch_add(struct cmd_conn *c, struct cmd_batch *b, const struct proto_req *req,
		   size_t done);
/* Answers the queued keys and empties the batch. On a rewind, *done and
 * c->parser go back to just after the last key answered, and whatever
 * was parsed after the batch is to be parsed again. */
enum cmd_batch_result cmd_batch_run(struct cmd_conn *c, struct cmd_batch *b, size_t *done);

/* mg, ms, md, ma, me, mn (cmd_meta.c) */
void cmd_exec_mg(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_ms(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_md(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_ma(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_me(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_mn(struct cmd_conn *c, const struct proto_req *req);
/* The header of an mg hit: "VA <bytes>" or "HD", then the return flags of
 * m in request order, "\r\n"; returns its length (at most CMD_HDR_MAX). */
size_t cmd_mg_header(char *h, const struct proto_meta *m, const char *key, size_t klen,
		     const struct engine_item *it, int64_t now);
/* A meta status line ("EN", "NF", ...) echoing only m's O and k flags. */
void cmd_meta_status(struct cmd_conn *c, const struct proto_meta *m, const char *key,
		     size_t klen, const char *code);
/* stats [arg] (cmd_stats.c) */
void cmd_exec_stats(struct cmd_conn *c, const struct proto_req *req);
/* cache_memlimit, slabs, lru_crawler (cmd_admin.c) */
void cmd_exec_cache_memlimit(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_slabs(struct cmd_conn *c, const struct proto_req *req);
void cmd_exec_lru_crawler(struct cmd_conn *c, const struct proto_req *req);
/* Key dumps (cmd_dump.c): `lru_crawler metadump <classes>` and `stats
 * cachedump <class> <limit>` write their lines in chunks: each call goes
 * on from where the last stopped, until the output reaches its
 * backpressure mark, and leaves c->dump set while lines remain; cmd_process
 * then leaves the request line unconsumed, so the stacks present it again
 * once the client has taken the chunk (as for any request held back by
 * backpressure), and the dump goes on without ever blocking the thread. */
void cmd_dump_metadump(struct cmd_conn *c, const struct proto_req *req);
void cmd_dump_cachedump(struct cmd_conn *c, const struct proto_req *req);
void cmd_dump_free(struct cmd_conn *c);

#endif /* SEGCACHED_CMD_PRIVATE_H */
