/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The posix network stack: memcached over kernel TCP and UDP sockets.
 *
 * N worker threads, each with its own epoll instance and its own
 * engine_worker, each on its own CPU set (posix_stack_config.cpus). The
 * listening TCP socket and the UDP socket of each address are shared by all
 * workers (EPOLLEXCLUSIVE wakes one); the worker that accepts a connection
 * hands it to the next worker in round-robin order, as memcached does
 * (posix_handoff.c), and the connection stays there. Every request goes
 * through lib/cmd's cmd_process(), the executor the DPDK stack uses too.
 */
#ifndef SEGCACHED_POSIX_STACK_H
#define SEGCACHED_POSIX_STACK_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct engine;
struct engine_worker;
struct cmd_settings;
struct proto_out;
struct stack_cidr;

struct posix_stack_config {
	const char *listen;      /* comma-separated HOST, HOST:PORT, [V6]:PORT */
	uint16_t tcp_port;       /* for entries without a port; 0 = no TCP */
	uint16_t udp_port;       /* 0 = no UDP */
	unsigned threads;        /* worker threads, >= 1 */
	/* CPUs of the workers: worker i runs on cpus[i % ncpus] (copied).
	 * ncpus 0: the threads keep the CPUs of the thread that starts them. */
	const cpu_set_t *cpus;
	unsigned ncpus;
	unsigned max_conns;      /* client connections over it are refused */
	/* IPv4 clients allowed (copied); n_allow 0: everyone */
	const struct stack_cidr *allow;
	unsigned n_allow;
	int backlog;             /* listen(2) backlog */
	struct engine *engine;
	struct cmd_settings *cmd; /* shared by every connection (lib/cmd writes its rt) */
	/* Called (from a worker) when a client sent `shutdown`. */
	void (*on_shutdown)(void *arg);
	void *on_shutdown_arg;
	unsigned max_conns_per_source; /* 0: no limit */
	unsigned request_timeout_s;    /* 0: none */
	unsigned idle_timeout_s;       /* close connections silent this long; 0: never */
	uint16_t admin_port;           /* also listen here, administration only; 0: no */
};

/* Counters kept by each worker thread, summed by posix_stack_counters().
 * One table; each counter is written by its own worker only. */
#define POSIX_STACK_COUNTERS(X)                                                         \
	X(bytes_read, "bytes received, TCP and UDP payloads")                           \
	X(bytes_written, "bytes sent")                                                  \
	X(conns_opened, "client connections accepted and kept")                         \
	X(conns_closed, "client connections closed (any reason)")                       \
	X(conns_rejected, "connections refused: over --max-conns")                      \
	X(conns_not_allowed, "connections closed at once: the peer is not in --allow")  \
	X(udp_not_allowed, "datagrams dropped: the source is not in --allow")          \
	X(conn_structures, "connection objects allocated")                              \
	X(accept_errors, "accept(2) failures (EMFILE, ...)")                            \
	X(listen_disabled, "times accepts paused for lack of descriptors")              \
	X(udp_requests, "datagrams received")                                           \
	X(udp_bad_frames, "datagrams without a valid frame header")                     \
	X(udp_responses, "datagrams sent")                                              \
	X(conns_refused_per_source, "connections reset: over --max-conns-per-source")   \
	X(conns_request_timeouts, "connections reset: a request not whole in time")     \
	X(conns_write_timeouts, "connections reset: replies not taken in time")         \
	X(idle_kicks, "connections closed: nothing received for --idle-timeout")        \
	X(admin_conns_opened, "admin port connections accepted")                        \
	X(admin_conns_closed, "admin port connections closed")                          \
	X(admin_conns_rejected, "admin port connections refused: over 16 at once")

enum posix_stack_counter {
#define POSIX_COUNTER_ENUM(name, desc) POSIX_C_##name,
	POSIX_STACK_COUNTERS(POSIX_COUNTER_ENUM)
#undef POSIX_COUNTER_ENUM
	POSIX_C_MAX
};

extern const char *const posix_stack_counter_names[POSIX_C_MAX];

struct posix_stack;

/* The posix stack behind the stack interface (stack.h). */
struct stack_ops;
extern const struct stack_ops posix_stack_ops;

/* Binds the sockets and prepares the workers (epoll instances, engine
 * workers, per-worker buffers); no thread runs yet. Raises the open file
 * limit to what max_conns needs. Returns NULL with a message in err;
 * *bind_failed tells a socket that could not be bound from other errors. */
struct posix_stack *posix_stack_create(const struct posix_stack_config *cfg,
				       char *err, size_t errlen,
				       bool *bind_failed);

/* Starts the worker threads. Returns 0 or -1 with a message. */
int posix_stack_start(struct posix_stack *s, char *err, size_t errlen);

/* Stops and joins the workers; connections are closed. Idempotent. */
void posix_stack_stop(struct posix_stack *s);

/* Stops if needed and frees everything. NULL is fine. */
void posix_stack_destroy(struct posix_stack *s);

unsigned posix_stack_threads(const struct posix_stack *s);

/* Sums the counters of all workers (thread < 0) or reads one worker's.
 * Safe to call from any thread while the stack runs. */
void posix_stack_counters(const struct posix_stack *s, int thread,
			  uint64_t out[POSIX_C_MAX]);

/* Client connections open now, over all workers. */
uint64_t posix_stack_curr_conns(const struct posix_stack *s);

/* One worker's connections: open now and served since start. Any thread. */
void posix_stack_worker_conns(const struct posix_stack *s, unsigned worker,
			      uint64_t *curr, uint64_t *total);

/* The engine workers of the worker threads (for per-worker engine
 * counters); *n receives their number. */
struct engine_worker *const *posix_stack_engine_workers(const struct posix_stack *s,
							unsigned *n);

/* True while every worker accepts connections (none paused for lack of
 * file descriptors). */
bool posix_stack_accepting(const struct posix_stack *s);

/* `stats conns`: appends memcached-style lines for every socket and open
 * connection ("<fd>:addr", "<fd>:listen_addr", "<fd>:state"). Any thread. */
void posix_stack_stats_conns(struct posix_stack *s, struct proto_out *out);

/* "127.0.0.1:11211 (tcp)" style description of bound socket i, or NULL
 * past the last one; for the start-up log. */
const char *posix_stack_socket_name(const struct posix_stack *s, unsigned i);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_POSIX_STACK_H */
