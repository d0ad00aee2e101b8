/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Internals of the native stack, shared by its files: native_stack.c
 * (set-up, the lcore loop and the stack ops), native_conn.c (what lib/net's
 * callbacks do, `stats conns`) and native_telemetry.c (/segcached/net).
 * Outside drivers/net/native the stack is native_stack_ops (stack.h) only.
 *
 * The stack: memcached on DPDK with lib/net, run to completion.
 *
 * Every worker lcore owns one RX/TX queue pair of the port, one lib/net
 * stack instance and one engine_worker, and loops
 *
 *	rx_burst -> net_stack_input (-> recv callbacks -> cmd_process)
 *	         -> net_stack_poll -> tx_burst
 *
 * without blocking, sleeping or taking a lock per request. A TCP
 * connection lives on the lcore whose queue RSS (or the device's own flow
 * distribution) gives its packets, so no packet is ever handled by two
 * lcores. The main lcore only runs the control loop (control.c).
 */
#ifndef SEGCACHED_NATIVE_PRIVATE_H
#define SEGCACHED_NATIVE_PRIVATE_H

#include <stdatomic.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "cmd/cmd.h"
#include "cmd/cmd_session.h"
#include "drivers/net/dpdk/dpdk_port.h"
#include "drivers/net/stack.h"
#include "drivers/net/stack_sources.h"
#include "net/net.h"
#include "proto/proto_out.h"

extern int native_logtype;
#define NATIVE_LOG(level, fmt, ...)                                        \
	rte_log(RTE_LOG_##level, native_logtype, "native: " fmt "\n", ##__VA_ARGS__)

#define NATIVE_BURST 32
/* lib/net buffers per connection. The receive buffer holds ordinary
 * requests in place; a request that outgrows half of it (a large set) is
 * assembled in the connection's own buffer instead (native_conn.c). */
#define NATIVE_SNDBUF (64u << 10)
#define NATIVE_RCVBUF (32u << 10)
#define NATIVE_SPILL (NATIVE_RCVBUF / 2)
#define NATIVE_BUF_PAIR net_buf_pair_bytes(NATIVE_SNDBUF, NATIVE_RCVBUF)
/* Replies are composed in the free space at the end of TCP's send ring
 * when at least this much lies there without a wrap: a get reserves room
 * for a 4 KiB value and its header before the engine copies (lib/cmd). */
#define NATIVE_LEND_MIN (8u << 10)
/* --tcp-buffer-memory: the fewest pairs an lcore gets, whatever the budget */
#define NATIVE_MIN_BUF_PAIRS 4u
/* TCP segments with at least this many data bytes point at the send ring
 * instead of copying it, on ports that send chained mbufs and compute the
 * checksums (native_stack.c). Below it a copy costs less than the second
 * mbuf. */
#define NATIVE_TX_ZERO_COPY_MIN 1024
/* With TSO, a segment carries up to this much of a reply (lib/net's
 * largest): a 64 KiB send ring is one or two packets for the stack. */
#define NATIVE_TX_TSO_MAX 65000

/* Counters of the application side of one worker lcore; lib/net keeps
 * the packet and TCP counters. One table. */
#define NATIVE_COUNTERS(X)                                                       \
	X(conns_opened, "TCP connections accepted and kept")                     \
	X(conns_closed, "TCP connections closed (any reason)")                   \
	X(conns_rejected, "TCP connections refused: over --max-conns")           \
	X(conns_reset, "TCP connections that ended by reset, timeout or idleness") \
	X(bytes_read, "request bytes consumed (TCP and UDP payload)")             \
	X(bytes_written, "response bytes handed to TCP or sent in datagrams")    \
	X(bytes_composed_in_place, "of those, bytes composed in TCP's send ring itself " \
	  "(one copy fewer)")                                                      \
	X(backpressure_stalls, "times a connection's requests waited for its output to drain") \
	X(large_requests, "requests larger than the receive buffer, assembled aside") \
	X(conns_oversized, "connections closed: a request over the item limit")  \
	X(udp_requests, "UDP datagrams received")                                \
	X(udp_bad_frames, "UDP datagrams without a valid frame header")          \
	X(udp_responses, "UDP response datagrams sent")                          \
	X(udp_send_failed, "UDP response datagrams that could not be sent")      \
	X(loops, "iterations of the lcore loop")                                 \
	X(busy_loops, "iterations that received or sent packets")                \
	X(busy_cycles, "TSC cycles spent in those iterations: the lcore's work, whatever " \
	  "its load (divided by the requests served, the cost of one)")           \
	X(conns_refused_per_source, "TCP connections reset at once: over the lcore's " \
	  "share of --max-conns-per-source")                                     \
	X(conns_request_timeouts, "TCP connections reset: a request not whole within " \
	  "--request-timeout")                                                   \
	X(conns_write_timeouts, "TCP connections reset: replies not taken within " \
	  "--request-timeout")                                                   \
	X(conns_out_of_memory, "TCP connections closed: no memory to keep replies TCP " \
	  "could not take")                                                      \
	X(admin_conns_opened, "admin port connections accepted")                 \
	X(admin_conns_closed, "admin port connections closed")                   \
	X(admin_conns_rejected, "admin port connections refused: over 16 at once") \
	X(admin_conns_refused_per_source, "admin port connections refused: 4 from " \
	  "the address")                                                         \
	X(admin_idle_kicks, "admin port connections reset: nothing received for " \
	  "--admin-idle-timeout")

enum native_counter {
#define NATIVE_COUNTER_ENUM(name, desc) NATIVE_C_##name,
	NATIVE_COUNTERS(NATIVE_COUNTER_ENUM)
#undef NATIVE_COUNTER_ENUM
	NATIVE_C_MAX
};

extern const char *const native_counter_names[NATIVE_C_MAX];

struct native_worker;

/* The running stack (struct stack for the ops). */
struct native {
	struct stack base;        /* first: the stack interface */
	struct stack_config cfg;
	struct dpdk_port port;
	struct native_worker *workers;
	unsigned nworkers;
	struct engine_worker **engine_workers;
	size_t in_max;            /* largest request assembled for one connection */
	size_t out_limit;         /* output buffer limit per connection */
	uint64_t request_timeout_us; /* 0: none */
	uint64_t admin_idle_timeout_us; /* 0: never */
	/* the admin port's connections by source (ids: the net_conn) */
	struct stack_admin_sources admin_sources;
	atomic_bool stop;         /* read by every lcore on every loop */
	bool launched;
	/* Written by every lcore on every accept and close: on a cache line
	 * of its own, away from the fields above that every loop reads. */
	_Atomic uint64_t curr_conns __rte_cache_aligned; /* for --max-conns */
	_Atomic uint64_t admin_conns; /* on --admin-port, at most STACK_ADMIN_CONNS */
	char curr_conns_pad[RTE_CACHE_LINE_SIZE - 2 * sizeof(uint64_t)];
};

struct native_conn {
	struct native_worker *w;
	struct net_conn *nc;
	struct cmd_session ses; /* requests and replies; ses.out not yet in TCP */
	char *in;               /* a request larger than NATIVE_SPILL, being assembled */
	size_t in_len, in_cap;
	struct native_conn *prev, *next; /* the worker's open connections */
	uint32_t id;            /* for `stats conns` */
	uint32_t peer_addr;     /* host byte order */
	uint16_t peer_port;
	struct native_conn *next_free;
	bool close_sent;        /* net_tcp_close() was called */
	bool admin;             /* from the admin port */
	bool src_counted;       /* holds a count in the worker's source table */
	bool executing;         /* in conn_execute: its output may be lent TCP's ring */
	uint32_t rx_left;       /* bytes on_recv left in TCP's buffer last time */
	/* net_tcp_send_queued() when conn_watch() last looked: less now means
	 * the client acknowledged bytes since (ACKs do not call us). */
	uint32_t watch_queued;
};

struct native_worker {
	struct native *nat;
	unsigned id;            /* = queue */
	unsigned lcore;
	struct net_stack *stack;
	struct engine_worker *ew;
	/* Open connections, for the shutdown drain and `stats conns`. The
	 * owner changes the list under the lock (once per accept or close,
	 * never per request) so that `stats conns` on any lcore can walk it. */
	rte_spinlock_t open_lock;
	struct native_conn *open;
	uint32_t next_conn_id;
	struct native_conn *free_list;
	uint32_t conns;         /* open connections (owner writes, others read) */
	/* --max-conns-per-source: this lcore's connections per source, and
	 * the most it admits of one (its share); NULL without a limit */
	struct stack_sources *sources;
	uint32_t source_limit;
	/* UDP: one executor context for all datagrams */
	struct cmd_conn *udp_cmd;
	/* Where replies are composed: every UDP reply, and the replies of a
	 * TCP connection while it holds no unsent bytes (its session's output
	 * borrows this memory and gives it back once TCP took everything,
	 * native_conn.c), so a reply is written to lines still in cache and
	 * an idle connection holds no output buffer. */
	struct proto_out out;
	uint64_t ctr[NATIVE_C_MAX]; /* owner writes, others read */
} __rte_cache_aligned;

#define NATIVE_INC(w, c) ((w)->ctr[NATIVE_C_##c]++)
#define NATIVE_ADD(w, c, n) ((w)->ctr[NATIVE_C_##c] += (n))

/* native_conn.c: lib/net's application callbacks. */
extern const struct net_app_ops native_app_ops;
/* Frees the connection objects on the worker's free list. */
void native_conn_free_all(struct native_worker *w);
/* Shutdown: a graceful close (FIN after what is already in TCP) for every
 * open connection of the worker. */
void native_conn_close_all(struct native_worker *w);

/* memcached's refusal of a connection over -c: one error line, then close */
#define NATIVE_TOO_MANY_CONNS "ERROR Too many open connections\r\n"

static inline struct native *
native_of(struct stack *s)
{
	return (struct native *)s;
}

static inline const struct native *
native_of_const(const struct stack *s)
{
	return (const struct native *)s;
}

/* native_stack.c: for stats and telemetry; safe from any thread while
 * running (counters may be a few packets old). */
void native_counters(const struct native *n, int worker, uint64_t out[NATIVE_C_MAX]);
uint64_t native_net_counter(const struct native *n, int worker, enum net_counter_id id);
/* Every lib/net counter of worker `worker`, or summed over all (< 0). */
void native_net_counters(const struct native *n, int worker, uint64_t out[NET_C__COUNT]);
unsigned native_worker_lcore(const struct native *n, unsigned worker);
uint32_t native_worker_conns(const struct native *n, unsigned worker);
/* lib/net connection slots of a worker in use (any TCP state), and how
 * many each worker has. */
uint32_t native_worker_slots_in_use(const struct native *n, unsigned worker);
uint32_t native_slots_per_worker(const struct native *n);
/* Buffer pairs a worker may hold at once (--tcp-buffer-memory's share, or
 * one per slot), and a worker's buffer bytes: allocated so far, and held
 * by connections now. */
uint32_t native_buf_pairs_per_worker(const struct native *n);
void native_worker_buffers(const struct native *n, unsigned worker, uint64_t *bytes,
			   uint64_t *in_use);

/* native_conn.c: the stats_conns op. */
void native_stats_conns(struct stack *s, struct proto_out *out);

/* native_metrics.c: the counters one at a time. Worker w's own and
 * lib/net's (summed over the workers for w < 0); the port's; and the
 * stack op `counters` (all of them, and the workers' levels). */
void native_counters_visit(const struct native *n, int worker, stack_counter_fn *fn, void *arg);
void native_port_counters_visit(const struct native *n, stack_counter_fn *fn, void *arg);
void native_stack_counters(const struct stack *s, stack_counter_fn *fn, void *arg);

/* native_telemetry.c: the telemetry ops, /segcached/net. */
int native_telemetry_register(void);
void native_telemetry_attach(struct stack *s);
void native_telemetry_detach(struct stack *s);

#endif /* SEGCACHED_NATIVE_PRIVATE_H */
