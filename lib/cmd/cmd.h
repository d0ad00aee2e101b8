/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/cmd: executes memcached requests against a storage engine. Both
 * network stacks (posix sockets and the DPDK stack) feed connection bytes
 * to cmd_process() and send what it composed; the request path is this one
 * function, whatever carries the bytes.
 *
 * Threading: a cmd_conn belongs to one thread (it uses that thread's
 * engine_worker). `stats`, `stats reset`, `flush_all` and `verbosity` may run
 * on any thread at any time; the shared state they touch lives in
 * cmd_settings.rt and is accessed with atomics.
 */
#ifndef SEGCACHED_CMD_H
#define SEGCACHED_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/engine_config.h"
#include "proto/proto.h"
#include "proto/proto_out.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Server-level figures for `stats` and `stats settings`: everything
 * memcached prints that is not engine state. The server fills what it has
 * and leaves the rest 0/NULL (NULL strings print as memcached prints an
 * unset string, "NULL"). Counters are totals since start: `stats reset` is
 * handled by lib/cmd (it remembers a baseline and subtracts it). */
struct cmd_server_stats {
	/* stats */
	long pid;
	uint64_t uptime;              /* seconds since start */
	uint64_t time;                /* unix time now */
	uint64_t rusage_user_us;      /* user CPU time, microseconds */
	uint64_t rusage_system_us;    /* system CPU time, microseconds */
	uint64_t max_connections;
	uint64_t curr_connections;
	uint64_t total_connections;   /* resettable */
	uint64_t rejected_connections; /* resettable */
	uint64_t connection_structures;
	uint64_t reserved_fds;
	uint64_t bytes_read;          /* resettable */
	uint64_t bytes_written;       /* resettable */
	bool accepting_conns;
	uint64_t listen_disabled_num; /* resettable */
	uint64_t time_in_listen_disabled_us;
	uint64_t threads;
	uint64_t conn_yields;         /* resettable */
	uint64_t idle_kicks;          /* resettable: closed by the idle timeout */
	/* stats settings */
	uint64_t maxconns;
	uint64_t tcpport;
	uint64_t udpport;
	const char *inter;            /* listen address(es) */
	const char *domain_socket;    /* -s's path; NULL: none */
	uint64_t umask;               /* -a: the unix socket's mode */
	uint64_t tcp_backlog;
	uint64_t idle_timeout;
	const char *stack;            /* "posix" or "native" */
	const char *eviction;         /* "merge", "fifo", "random", "none" */
	uint64_t segment_size;
	/* warm restart (a heap file): "cold", "warm" or "refused:<code>";
	 * NULL: no heap file, the lines are left out */
	const char *restart_state;
	uint64_t restart_items;       /* items recovered */
	uint64_t restart_expired;     /* items that expired while down, dropped */
	uint64_t restart_segments;    /* segments scanned */
	uint64_t restart_us;          /* time the recovery took */
	/* per-worker engine counters for `stats workers` (may be NULL) */
	struct engine_worker *const *workers;
	unsigned nworkers;
	/* per-worker connections for `stats workers`, open now and served
	 * since start (NULL: the stack does not keep them) */
	void (*worker_conns)(const void *arg, unsigned worker, uint64_t *curr, uint64_t *total);
	const void *worker_conns_arg;
	/* segcached's hardening (docs/operations.md, Security): stats */
	uint64_t admin_connections;        /* open now on --admin-port */
	uint64_t conns_refused_per_source; /* resettable: over --max-conns-per-source */
	uint64_t conns_request_timeouts;   /* resettable: a request not whole in time */
	uint64_t conns_write_timeouts;     /* resettable: replies not taken in time */
	/* ... and stats settings */
	uint64_t max_conns_per_source;     /* 0: no limit */
	uint64_t request_timeout;          /* seconds; 0: none */
	uint64_t admin_port;               /* 0: none */
	uint64_t metrics_port;             /* --metrics-port; 0: none */
	uint64_t tcp_buffer_memory;        /* bytes, all TCP buffers; 0: no limit */
	/* the posix stack's connection memory (drivers/net/posix/posix_buffers.c):
	 * stats */
	uint64_t conn_buffer_in_bytes;     /* input connections hold, charged */
	uint64_t conn_buffer_out_bytes;    /* unsent output, charged */
	uint64_t conn_buffer_in_refused;   /* stores refused: input budget spent */
	uint64_t conns_slow_readers_closed; /* reset: output budget spent */
	/* ... and stats settings */
	uint64_t conn_buffer_uncharged;    /* per connection, input and output */
	uint64_t worker_buffer_bytes;      /* the workers' own buffers, at most */
	uint64_t conn_struct_bytes;        /* one connection object */
	/* sizing: where the segments are ("anon", "hugepage", "file"; "eal":
	 * the engine allocates from the EAL) and the most EAL memory the
	 * network stack may take (0: none, the posix stack) */
	const char *heap;
	uint64_t stack_memory_max;
};

/* State shared by all connections of a server that lib/cmd changes at run
 * time. Zero it with the rest of cmd_settings (designated initialisers or
 * memset) and do not touch it: lib/cmd owns it. */
struct cmd_runtime {
	uint64_t cmd_flush;          /* flush_all commands, allowed or not */
	uint64_t cmd_meta;           /* me commands (memcached's cmd_meta) */
	int verbosity_plus1;         /* 0: never changed, use cmd_settings.verbosity */
	/* `stats reset` baselines, subtracted from what is printed */
	uint64_t base_engine[ENGINE_C_MAX];
	uint64_t base_evictions, base_reclaimed, base_expired, base_evicted_unfetched;
	uint64_t base_expired_unfetched;
	uint64_t base_total_connections, base_rejected_connections, base_bytes_read,
		base_bytes_written, base_listen_disabled_num, base_conn_yields,
		base_idle_kicks;
	uint64_t base_cmd_flush, base_cmd_meta;
	uint64_t base_conns_refused_per_source, base_conns_request_timeouts,
		base_conns_write_timeouts;
	uint64_t base_conn_buffer_in_refused, base_conns_slow_readers_closed;
};

struct cmd_settings {            /* server-wide, read-only after start */
	struct engine *engine;
	size_t item_max;             /* -I */
	bool cas_disabled;           /* -C */
	bool flush_disabled;         /* -F */
	bool shutdown_enabled;       /* -A */
	/* UDP (sources are forged at no cost, replies can be thousands of
	 * times a request): only what changes nothing (get/gets, mg without
	 * T, N or R, mn, version) unless udp_writes, and at most
	 * udp_reply_max reply bytes per datagram, the error line included
	 * (0: no limit); over it the reply is an error line. */
	bool udp_writes;
	size_t udp_reply_max;
	/* The admin port (--admin-commands): false, counters only (stats
	 * but its key lists and reset, version, quit); true, every
	 * administration command too (CMD_F_ADMIN_ALL, and stats cachedump,
	 * hotkeys, conns, reset). */
	bool admin_all;
	int verbosity;               /* -v count */
	bool dump_disabled;          /* -X: no stats cachedump, lru_crawler metadump */
	/* -vv (or `verbosity 2`): takes each trace line, whole, without its
	 * newline ("<28 get foo"); NULL: no traces. Any thread. */
	void (*trace)(void *arg, const char *line);
	void *trace_arg;
	unsigned reqs_per_event;     /* -R, see cmd_conn_event_begin(); 0: no cap */
	const char *version;         /* VERSION reply and `stats` version */
	/* Fills server-level stats; may be NULL (those lines then print 0). */
	void (*server_stats)(void *arg, struct cmd_server_stats *out);
	/* `stats conns`: appends one line per field and connection with
	 * proto_out_stat(), e.g. ("23:addr", "tcp:127.0.0.1:51234"); may be
	 * NULL (the reply is then just END). */
	void (*stats_conns)(void *arg, struct proto_out *out);
	/* `stats mrc` and `stats hotkeys` (issue 23): lines as stats_conns;
	 * NULL: the reply says the sampler is off. */
	void (*stats_mrc)(void *arg, struct proto_out *out);
	void (*stats_hotkeys)(void *arg, struct proto_out *out);
	void *server_stats_arg;
	/* The engine's clock (the one given in engine_config; NULL: the
	 * default): meta 't' and `me` report TTLs relative to it. */
	engine_clock_fn clock;
	void *clock_arg;
	struct cmd_runtime rt;       /* owned by lib/cmd, see above */
};

/* Actions for the caller, or-ed into *actions by cmd_process(). */
#define CMD_ACT_CLOSE    (1u << 0) /* quit, or input that cannot be resynchronised */
#define CMD_ACT_SHUTDOWN (1u << 1) /* shutdown [graceful], when enabled */

/* Per connection (or per UDP socket and thread) state: the parser and
 * what a multi-key get or a swallowed data block left pending. */
struct cmd_conn;

struct cmd_conn *cmd_conn_create(struct cmd_settings *s, struct engine_worker *w,
				 bool udp);
void cmd_conn_destroy(struct cmd_conn *c);
/* The bytes cmd_conn_create() allocates (for the sizing figures). */
size_t cmd_conn_size(void);
/* Forgets partial input (call before each UDP datagram: requests never
 * span datagrams). */
void cmd_conn_reset(struct cmd_conn *c);

/* True while a request is partly read: a data block still to come or
 * being swallowed, or a get line not finished. */
bool cmd_conn_busy(const struct cmd_conn *c);

/* Data blocks of this many bytes or more, of set, add, replace, cas and
 * ms, go into their item as they arrive (when the engine can: lib/seg),
 * so that a value in flight is heap memory -m bounds (issue 35); smaller
 * ones, and append and prepend, are buffered whole by the stacks, within
 * their connection buffer budget. */
#define CMD_STREAM_MIN (16u << 10)

/* A value is being streamed into its item (its block not yet ended). */
bool cmd_conn_streaming(const struct cmd_conn *c);

/* A storage request's line was parsed and its data block is arriving:
 * the bytes the whole request needs, from the start of its line (0 when
 * no data block is pending). A stack that buffers requests knows from it
 * how much memory the request will take before taking it. */
size_t cmd_conn_data_need(const struct cmd_conn *c);

/* The stack has no memory for that data block (its budget for connection
 * buffers is spent): refuses the request as memcached refuses an item it
 * cannot allocate, "SERVER_ERROR out of memory storing object" appended
 * to out (a set or ms drops the key's old value), and the rest of the
 * block is swallowed as it arrives. in[0..len) are the request's bytes
 * received so far, from the start of its line; the caller drops them all.
 * False (nothing done) when no data block is pending or it is whole. */
bool cmd_conn_refuse_data(struct cmd_conn *c, const char *in, size_t len,
			  struct proto_out *out);

/* A key dump (lru_crawler metadump, stats cachedump) is under way: its
 * request line stays unconsumed and each cmd_process() call writes the
 * next chunk of it, so call again, with the same input, as long as the
 * output has room (cmd_session_execute does). */
bool cmd_conn_dumping(const struct cmd_conn *c);

/* Requests parsed on this connection so far (complete ones, answered or
 * refused): tells a partial request that lingers from one that follows
 * completed ones (cmd_session_wait()). */
uint64_t cmd_conn_requests(const struct cmd_conn *c);

/* -R (cmd_settings.reqs_per_event): a stack that gives its connections
 * turns calls event_begin at the start of each; cmd_process() then runs
 * at most reqs_per_event requests (a batch of gets or a dump under way
 * finishes) until the next, and yielded says that it stopped for it, with
 * the rest of the input left for a later turn. Without event_begin there
 * is no cap. */
void cmd_conn_event_begin(struct cmd_conn *c);
bool cmd_conn_yielded(const struct cmd_conn *c);

/* -vv: a stack names a connection for memcached's trace lines (its
 * descriptor) as it opens, which traces "<id new auto-negotiating client
 * connection", and says when it closes ("<id connection closed."); then
 * its requests and status replies are traced while the verbosity is 2 or
 * more (cmd_settings.trace). */
void cmd_conn_trace_open(struct cmd_conn *c, int id);
void cmd_conn_trace_close(struct cmd_conn *c);

/* The connection came in on the admin port (--admin-port): from now on
 * only the administration commands are served: counters (stats, version,
 * quit), and with cmd_settings.admin_all also those that list keys,
 * change the server or its memory (verbosity, shutdown, stats cachedump,
 * hotkeys, conns and reset, memcached's cache_memlimit, slabs and
 * lru_crawler lines); anything else, reading or writing items included,
 * gets "CLIENT_ERROR only administration commands on the admin port". */
void cmd_conn_set_admin(struct cmd_conn *c);

/* Executes every complete request in in[0..len) and appends the replies to
 * out. Returns the bytes consumed: the rest is an incomplete request that
 * the caller presents again, unchanged and followed by more bytes. Stops
 * early (returning what it consumed) when proto_out_pending(out) reaches
 * out->backpressure, after a CMD_ACT_* action, or when out cannot grow
 * (the limit; *actions then has CMD_ACT_CLOSE). *actions is set to 0 first. */
size_t cmd_process(struct cmd_conn *c, const char *in, size_t len, struct proto_out *out,
		   unsigned *actions);

/* The command table (cmd_table.c): one row per enum proto_cmd with its
 * name, syntax, handler and these flags. */
#define CMD_F_UDP       (1u << 0) /* served over UDP without --udp-writes */
#define CMD_F_ADMIN     (1u << 1) /* served on the admin port (counters) */
#define CMD_F_ADMIN_ALL (1u << 5) /* ... with --admin-commands all only */
#define CMD_F_NOREPLY   (1u << 2) /* takes classic noreply (an error line too) */
#define CMD_F_WRITE     (1u << 3) /* stores, changes or removes items */
#define CMD_F_OWN_ERROR (1u << 4) /* the handler answers a parse error itself */

/* The command's name ("get", "cache_memlimit"; "none", "error"), or
 * "unknown" for a value that is no command. */
const char *cmd_name(enum proto_cmd cmd);
/* Its CMD_F_* flags (0 for a value that is no command). */
unsigned cmd_flags(enum proto_cmd cmd);
/* The table's command words, for proto_parser_init(); built on first use,
 * from any thread. */
const struct proto_grammar *cmd_grammar(void);

/* Current verbosity (the `verbosity` command changes it). */
int cmd_verbosity(const struct cmd_settings *s);

/* The keys of the get, gets and mg lines at the start of data (a TCP
 * segment's payload, a UDP datagram's requests), at most max, pointing
 * into data: a hint for engine_prefetch() before the requests are
 * processed. A scan, not a parse; the first other line ends it. */
unsigned cmd_hint_keys(const void *data, size_t len, struct engine_key *keys, unsigned max);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_CMD_H */
