/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Internals of the native stack shared by native_stack.c (set-up and the
 * lcore loop) and native_conn.c (what lib/net's callbacks do).
 */
#ifndef SEGCACHED_NATIVE_INTERNAL_H
#define SEGCACHED_NATIVE_INTERNAL_H

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "native_stack.h"
#include "proto/proto_out.h"

#define NATIVE_BURST 32
/* lib/net buffers per connection. The receive buffer holds ordinary
 * requests in place; a request that outgrows half of it (a large set) is
 * assembled in the connection's own buffer instead (native_conn.c). */
#define NATIVE_SNDBUF (64u << 10)
#define NATIVE_RCVBUF (32u << 10)
#define NATIVE_SPILL (NATIVE_RCVBUF / 2)
#define NATIVE_IN_SLACK (64u << 10)
/* Stop executing a connection's requests while more than this much of
 * its output is unsent (the posix stack's rule): a slow reader cannot
 * make the server buffer without bound. */
#define NATIVE_OUT_HIGH (256u << 10)
/* A closed connection's output buffer is kept for the next one up to this
 * size. */
#define NATIVE_OUT_KEEP (64u << 10)

struct native_conn {
	struct native_worker *w;
	struct net_conn *nc;
	struct cmd_conn *cmd;
	struct proto_out out;   /* composed replies; data[head..len) not yet in TCP */
	char *in;               /* a request larger than NATIVE_SPILL, being assembled */
	size_t in_len, in_cap;
	struct native_conn *prev, *next; /* the worker's open connections */
	uint32_t id;            /* for `stats conns` */
	uint32_t peer_addr;     /* host byte order */
	uint16_t peer_port;
	struct native_conn *next_free;
	bool closing;           /* close once the output is in TCP */
	bool close_sent;        /* net_tcp_close() was called */
	bool eof;               /* the peer sent FIN */
	bool stalled;           /* stopped on the output bound */
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
	/* UDP: one executor context and one output buffer for all datagrams */
	struct cmd_conn *udp_cmd;
	struct proto_out udp_out;
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

#endif /* SEGCACHED_NATIVE_INTERNAL_H */
