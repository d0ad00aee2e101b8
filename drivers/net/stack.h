/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * One interface for the network stacks that carry memcached: posix (kernel
 * sockets, epoll threads, drivers/net/posix) and native (DPDK queues served
 * by lcores running lib/net, drivers/net/native). The server picks one at
 * start-up by name (--stack) and from then on calls it through its ops,
 * without knowing which runs: the way lib/engine/engine.h treats engines,
 * and the way DPDK's examples/l3fwd picks one lookup mode at start.
 *
 * Both stacks hand a connection's bytes to lib/cmd's session loop
 * (cmd/cmd_session.h) and only move bytes themselves.
 */
#ifndef SEGCACHED_STACK_H
#define SEGCACHED_STACK_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmd_server_stats;
struct cmd_settings;
struct engine;
struct proto_out;

/* One entry of --allow: an IPv4 network, host byte order. */
struct stack_cidr {
	uint32_t addr;
	uint32_t mask;
};

#define STACK_ALLOW_MAX 32
/* Connections the admin port (--admin-port) takes at once, beyond -c,
 * and from one address: a few sources cannot lock the others out. */
#define STACK_ADMIN_CONNS 16
#define STACK_ADMIN_CONNS_PER_SOURCE 4

/* The posix stack's own settings (stack_config.posix). */
struct stack_posix_config {
	const char *listen;       /* comma-separated HOST, HOST:PORT, [V6]:PORT */
	unsigned threads;         /* worker threads, >= 1 */
	int backlog;              /* listen(2) backlog; <= 0: 1024 */
	/* CPUs of the worker threads: thread i runs on cpus[i % ncpus];
	 * ncpus 0: they keep the CPUs of the thread that starts them. */
	const cpu_set_t *cpus;
	unsigned ncpus;
	/* memcached's -s/-a: a unix socket at this path (NULL: none), its
	 * file's mode; served like a TCP listener (posix_unix.c) */
	const char *unix_path;
	unsigned unix_mask;
	/* --tcp-buffer-memory: the input and output all connections may hold
	 * in the stack's memory together, bytes (half each); 0: no limit;
	 * STACK_BUFFER_MEMORY_DEFAULT: derived from max_conns and -I */
	size_t buffer_memory;
};
#define STACK_BUFFER_MEMORY_DEFAULT SIZE_MAX

/* The native stack's own settings (stack_config.native). */
struct stack_native_config {
	uint32_t ip;              /* host byte order */
	uint8_t prefix_len;
	int port_id;              /* -1: the first port */
	unsigned queues;          /* 0: one per worker lcore */
	uint16_t rx_desc, tx_desc;
	uint16_t mtu;
	unsigned link_timeout_ms;
	const uint8_t *rss_key;   /* NULL: random */
	uint8_t rss_key_len;
	bool udp_any_source;      /* answer UDP from beyond the subnet */
	/* --offloads: leave these unused even where the port has them */
	bool no_cksum_offload;    /* checksums in software (and so no TSO) */
	bool no_tso;
	size_t tcp_buffer_memory; /* all TCP buffers, bytes; 0: no limit */
};

/* What create() is given. A stack keeps it by value; the memory its
 * pointers point to must outlive the stack unless the stack says it
 * copies it. */
struct stack_config {
	uint16_t tcp_port;        /* 0: no TCP */
	uint16_t udp_port;        /* 0: no UDP */
	unsigned max_conns;       /* client connections over it are refused */
	struct engine *engine;
	struct cmd_settings *cmd; /* shared by every connection (lib/cmd writes its rt) */
	/* Called (from a worker) when a client sent `shutdown`. */
	void (*on_shutdown)(void *arg);
	void *on_shutdown_arg;
	/* clients allowed; n_allow 0 = everyone */
	const struct stack_cidr *allow;
	unsigned n_allow;
	/* hardening (docs/operations.md, Security) */
	unsigned max_conns_per_source; /* 0: no limit */
	unsigned request_timeout_s;    /* 0: none (cmd_session_wait()) */
	unsigned idle_timeout_s;       /* close TCP connections silent this long; 0: never */
	uint16_t admin_port;           /* TCP, administration only; 0: none */
	/* posix: comma-separated hosts the admin port listens on (the native
	 * stack serves it on its --ip address); NULL: those of the listen list */
	const char *admin_listen;
	unsigned admin_idle_timeout_s; /* close admin connections silent this long; 0: never */
	/* the part of the stack that runs, by stack_ops.name */
	union {
		struct stack_posix_config posix;
		struct stack_native_config native;
	};
};

struct stack;

/* One of a stack's own figures, for /metrics (app/segcached/observe/metrics.c):
 * the counters `stats` has no name for (drops, retransmissions, the
 * port's missed packets). */
struct stack_counter {
	const char *name;         /* snake_case, e.g. "tcp_no_buffers" */
	const char *help;         /* what it counts, one line */
	uint64_t value;
	bool gauge;               /* a level now (link up, bytes held), not a count since start */
};
typedef void stack_counter_fn(void *arg, const struct stack_counter *c);

struct stack_ops {
	const char *name;         /* the --stack word: "posix", "native" */
	const char *workers_noun; /* "posix threads", "worker lcores" */
	/* EAL memory in MiB the stack needs on --no-huge with `lcores`
	 * lcores, asked before the EAL starts (NULL: none). */
	unsigned (*eal_memory_mb)(unsigned max_conns, size_t tcp_buffer_memory,
				  unsigned lcores);
	/* Sets the stack up (sockets or port, workers); nothing runs yet.
	 * NULL with an operator-facing message in err; *bind_failed tells
	 * an address that could not be bound from other failures. */
	struct stack *(*create)(const struct stack_config *cfg, char *err, size_t errlen,
				bool *bind_failed);
	/* Starts the workers. 0, or -1 with a message. */
	int (*start)(struct stack *s, char *err, size_t errlen);
	/* Stops and joins the workers; connections are closed. Idempotent. */
	void (*stop)(struct stack *s);
	/* Stops if needed and frees everything. */
	void (*destroy)(struct stack *s);
	/* The stack's memory outside -m, for the start-up sizing line: "the
	 * network stack: ..." goes on with buf (NULL: the caller's words). */
	const char *(*sizing)(const struct stack *s, char *buf, size_t len);
	/* Start-up log line i (what it listens on), or NULL past the last. */
	const char *(*describe)(const struct stack *s, unsigned i, char *buf, size_t len);
	unsigned (*workers)(const struct stack *s);
	/* Fills the connection, traffic and worker fields of `stats` and
	 * `stats workers` (threads, connections, bytes, engine workers).
	 * Any thread while running. */
	void (*stats)(const struct stack *s, struct cmd_server_stats *out);
	/* `stats conns`: memcached-style lines for every listening socket
	 * and open connection. Any thread. */
	void (*stats_conns)(struct stack *s, struct proto_out *out);
	/* Calls fn for every counter of the stack, summed over its workers,
	 * and its port's (NULL: none). Any thread while running. */
	void (*counters)(const struct stack *s, stack_counter_fn *fn, void *arg);
	/* DPDK telemetry commands of the stack (NULL: none). They are
	 * registered once for the process and answer with an error while no
	 * stack is attached. */
	int (*telemetry_register)(void);
	void (*telemetry_attach)(struct stack *s);
	void (*telemetry_detach)(struct stack *s);
};

/* First member of each stack's own struct. */
struct stack {
	const struct stack_ops *ops;
};

/* The stacks. A driver's functions are its ops, and its ops are all it
 * shows outside its folder (drivers/net/posix, drivers/net/native). */
extern const struct stack_ops posix_stack_ops;
extern const struct stack_ops native_stack_ops;

/* The stack called `name`, or NULL. */
const struct stack_ops *stack_find(const char *name);

/* Splits one entry of a listen list (-l) into host and port: "host",
 * "host:port", "[v6]" or "[v6]:port" (a bare IPv6 address, with several
 * colons, has no port; port is then ""). 0, or -1 with a message. */
int stack_split_hostport(const char *entry, char *host, size_t hostlen,
			 char *port, size_t portlen, char *err, size_t errlen);

/* Registers the telemetry commands of every stack. 0, or -1. */
int stack_telemetry_register(void);

static inline struct stack *
stack_create(const struct stack_ops *ops, const struct stack_config *cfg, char *err,
	     size_t errlen, bool *bind_failed)
{
	return ops->create(cfg, err, errlen, bind_failed);
}

static inline int
stack_start(struct stack *s, char *err, size_t errlen)
{
	return s->ops->start(s, err, errlen);
}

static inline void
stack_stop(struct stack *s)
{
	if (s != NULL)
		s->ops->stop(s);
}

static inline void
stack_destroy(struct stack *s)
{
	if (s != NULL)
		s->ops->destroy(s);
}

static inline const char *
stack_describe(const struct stack *s, unsigned i, char *buf, size_t len)
{
	return s->ops->describe(s, i, buf, len);
}

static inline unsigned
stack_workers(const struct stack *s)
{
	return s->ops->workers(s);
}

static inline void
stack_stats(const struct stack *s, struct cmd_server_stats *out)
{
	s->ops->stats(s, out);
}

static inline void
stack_stats_conns(struct stack *s, struct proto_out *out)
{
	s->ops->stats_conns(s, out);
}

static inline void
stack_counters(const struct stack *s, stack_counter_fn *fn, void *arg)
{
	if (s->ops->counters != NULL)
		s->ops->counters(s, fn, arg);
}

static inline void
stack_telemetry_attach(struct stack *s)
{
	if (s->ops->telemetry_attach != NULL)
		s->ops->telemetry_attach(s);
}

static inline void
stack_telemetry_detach(struct stack *s)
{
	if (s != NULL && s->ops->telemetry_detach != NULL)
		s->ops->telemetry_detach(s);
}

#endif /* SEGCACHED_STACK_H */
