/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Internals of the native stack shared by native_stack.c (set-up and the
 * lcore loop) and native_conn.c (what lib/net's callbacks do).
 */
#ifndef SEGCACHED_NATIVE_PRIVATE_H
#define SEGCACHED_NATIVE_PRIVATE_H

#include <stdatomic.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "cmd/cmd_session.h"
#include "drivers/net/native/native_stack.h"
#include "drivers/net/stack.h"
#include "drivers/net/stack_sources.h"
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

struct native_worker;

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

#endif /* SEGCACHED_NATIVE_PRIVATE_H */
