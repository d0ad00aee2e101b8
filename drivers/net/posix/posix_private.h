/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Internals of the posix stack, shared by its files: posix_stack.c (set-up,
 * threads, the event loop, the stack ops), posix_sockets.c (listening
 * sockets), posix_unix.c (memcached's -s: a unix socket listener),
 * posix_yield.c (-R: turns of a connection over its requests cap),
 * posix_handoff.c (accepted connections dealt round-robin to the
 * workers), posix_accept.c (accepting, --max-conns), posix_tcp.c
 * (connections), posix_buffers.c (the input and output memory they hold,
 * and its budget), posix_udp.c (datagrams) and posix_refused.c
 * (connections accepted but not served: the refusal log line, giving a
 * count back).
 * Outside drivers/net/posix the stack is posix_stack_ops (stack.h) only.
 *
 * The stack: memcached over kernel TCP and UDP sockets.
 *
 * N worker threads, each with its own epoll instance and its own
 * engine_worker, each on its own CPU set (stack_config.posix.cpus). The
 * listening TCP socket and the UDP socket of each address are shared by all
 * workers (EPOLLEXCLUSIVE wakes one); the worker that accepts a connection
 * hands it to the next worker in round-robin order, as memcached does
 * (posix_handoff.c), and the connection stays there. Every request goes
 * through lib/cmd's cmd_process(), the executor the DPDK stack uses too.
 */
#ifndef SEGCACHED_POSIX_PRIVATE_H
#define SEGCACHED_POSIX_PRIVATE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>

#include <rte_log.h>

#include "cmd/cmd.h"
#include "cmd/cmd_session.h"
#include "proto/proto.h"
#include "proto/proto_out.h"
#include "proto/proto_udp.h"
#include "drivers/net/stack.h"
#include "drivers/net/stack_sources.h"
#include "util/util_err.h"
#include "util/util_ratelimit.h"

extern int posix_logtype;
#define POSIX_LOG(level, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, posix_logtype, "posix: " fmt "\n", ##__VA_ARGS__)

#define POSIX_SOCKETS_MAX 32
#define POSIX_EVENTS_BURST 64
/* Input: a connection reads into its worker's buffer (POSIX_IN_WORKER
 * bytes), so an idle one holds no input buffer. What a read leaves
 * unconsumed (a request not yet complete, or requests held back by the
 * output bound) moves to a buffer of the connection's own, freed once it
 * is empty. Up to POSIX_IN_MOVE_MAX such bytes move back to the front of
 * the worker's buffer for the next read; more (a large request) stay and
 * are read after in their own buffer, which grows up to what one request
 * can need (cmd_session_in_max()). Reading stops while the session's
 * output is over its high-water mark (resumed on EPOLLOUT). 64 KiB: a
 * large value streamed into its item (lib/cmd's cmd_stream.c) comes in
 * 64 KiB reads, not 16 KiB ones (a 1 MB set: 16 recv calls, not 64). */
#define POSIX_IN_WORKER (64u << 10)
/* --tcp-buffer-memory (posix_buffers.c): input or output a connection may
 * hold without charging the budget; a larger buffer is charged whole. */
#define POSIX_BUF_UNCOUNTED (16u << 10)
#define POSIX_IN_MOVE_MAX (POSIX_BUF_UNCOUNTED / 2)
/* Its default: room for twice this many connections (or -c, if fewer)
 * to hold the largest request at once; a quarter of it (of any
 * --tcp-buffer-memory) is for output. Output is the smaller share: a
 * reply held for a reader that fell behind is a copy of an item that the
 * heap still has, and memcached, which sends from the item itself, holds
 * little for it. */
#define POSIX_BUDGET_LARGE_CONNS 32u
#define POSIX_BUDGET_OUT_SHARE 4u
/* Largest UDP datagram we accept. */
#define POSIX_UDP_MAX 65536
/* Work done per wake-up for one socket, so that others get their turn. */
#define POSIX_ACCEPT_BURST 16
/* Idle connections closed per pass of the worker loop; more wait for the
 * next pass, after the events of this one. */
#define POSIX_IDLE_BURST 32
#define POSIX_UDP_BURST 32
#define POSIX_READ_ROUNDS 4

/* Counters kept by each worker thread, summed by posix_counters() (posix_stack.c).
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
	X(conn_buffer_in_refused, "stores refused (SERVER_ERROR out of memory storing "  \
	  "object): the input share of --tcp-buffer-memory is spent")                 \
	X(conns_slow_readers_closed, "connections reset: unsent replies over the "      \
	  "output share of --tcp-buffer-memory (a reader that fell behind)")           \
	X(admin_conns_opened, "admin port connections accepted")                        \
	X(admin_conns_closed, "admin port connections closed")                          \
	X(admin_conns_rejected, "admin port connections refused: over 16 at once")      \
	X(admin_conns_refused_per_source, "admin port connections refused: 4 from the address") \
	X(admin_idle_kicks, "admin port connections closed: nothing received for --admin-idle-timeout") \
	X(conn_yields, "turns a connection gave up at the -R requests cap")

enum posix_stack_counter {
#define POSIX_COUNTER_ENUM(name, desc) POSIX_C_##name,
	POSIX_STACK_COUNTERS(POSIX_COUNTER_ENUM)
#undef POSIX_COUNTER_ENUM
	POSIX_C_MAX
};

enum posix_poll_kind {
	POSIX_POLL_INBOX,  /* the worker's inbox pipe: connections handed over, stop */
	POSIX_POLL_LISTEN, /* shared listening TCP socket */
	POSIX_POLL_UDP,    /* shared UDP socket */
	POSIX_POLL_CONN,   /* one client connection */
};

/* First member of everything registered with epoll (epoll_event.data.ptr). */
struct posix_pollable {
	enum posix_poll_kind kind;
};

struct posix_socket {
	struct posix_pollable p;
	int fd;
	bool admin;        /* on --admin-port: administration only, not counted in -c */
	char name[160];
	char addr[160]; /* "tcp:127.0.0.1:11211", for stats conns */
	char unix_path[108]; /* a unix socket's file, removed at close; "" for others */
};

struct posix_worker;

struct posix_conn {
	struct posix_pollable p;
	int fd;
	struct posix_worker *w;
	struct posix_conn *prev, *next; /* the worker's open list, or free list */
	const struct posix_socket *listen; /* the socket it came from */
	char peer[160];      /* "tcp:127.0.0.1:51234", for stats conns */
	struct cmd_session ses; /* requests and replies; ses.out is unsent */
	/* Received bytes not yet consumed, in[in_start..in_end): NULL while
	 * it holds none; the worker's `in` during a read (conn_in_borrow),
	 * else memory of its own. */
	char *in;
	size_t in_start, in_end, in_cap;
	/* what its own input and its unsent output are charged to the
	 * stack's budgets now (posix_buffers.c) */
	uint64_t in_charged, out_charged;
	uint32_t events;     /* epoll mask registered now */
	bool admin;          /* from the admin port */
	bool src_counted;    /* holds a count in posix_stack.sources */
	struct stack_source src;
	/* --request-timeout: on the worker's timed list while waiting for a
	 * request to complete or replies to be taken (cmd_session_wait()) */
	TAILQ_ENTRY(posix_conn) timed_link;
	bool timed;
	uint64_t deadline_ms;
	/* --idle-timeout: on the worker's idle list from adoption to close,
	 * moved to its tail whenever bytes arrive */
	TAILQ_ENTRY(posix_conn) idle_link;
	uint64_t active_ms;  /* when bytes last arrived (or it was adopted) */
	/* -R: on the worker's yielded list while requests it received wait
	 * for its next turn (posix_yield.c) */
	TAILQ_ENTRY(posix_conn) yield_link;
	bool on_yield;
};

TAILQ_HEAD(posix_conn_list, posix_conn);

/* Bytes the connections of all workers hold together, of one kind
 * (posix_buffers.c); max 0: no limit. */
struct posix_budget {
	_Atomic uint64_t used;
	uint64_t max;
};

struct posix_worker {
	struct posix_stack *stack;
	unsigned id;
	char name[24];   /* thread name, "posix-w0" (at most 15 characters used) */
	pthread_t thread;
	bool started;
	int epfd;
	/* The inbox, a pipe: whichever worker accepted a connection writes a
	 * struct posix_handoff here when it is this worker's turn to serve
	 * it; posix_stop() writes one with fd -1 to wake the worker. */
	struct posix_pollable inbox;
	int inbox_rd, inbox_wr;
	struct engine_worker *ew;
	/* Open connections. The owner thread changes the list under the
	 * lock (once per accept or close, never per request) so that
	 * `stats conns` on another thread can walk it. */
	pthread_mutex_t open_lock;
	struct posix_conn *open;
	struct posix_conn *free_list; /* closed connections kept for reuse */
	/* UDP: one executor context for all datagrams. */
	struct cmd_conn *udp_cmd;
	/* Where replies are composed: every UDP reply, and a TCP
	 * connection's while it holds no unsent bytes (lent to its session
	 * for conn_service, cmd_session_out_borrow). */
	struct proto_out out;
	/* Where a TCP connection that holds no input of its own reads
	 * (POSIX_IN_WORKER bytes; lent for one read, conn_in_borrow). */
	char *in;
	uint8_t *udp_buf;
	bool accept_paused;          /* listening sockets out of the epoll set */
	uint64_t accept_resume_ms;
	/* Connections with a --request-timeout deadline, earliest first: every
	 * deadline is its start plus the same timeout, so appending keeps the
	 * order and the epoll_wait timeout is the head's. */
	struct posix_conn_list timed;
	/* With --idle-timeout, every open connection, least recently active
	 * first: a connection that receives bytes moves to the tail, so the
	 * head is the next to expire and both are O(1). */
	struct posix_conn_list idle;
	/* The same for the admin port's connections, with
	 * --admin-idle-timeout. */
	struct posix_conn_list admin_idle;
	uint64_t now_ms;             /* posix_now_ms() after each epoll_wait */
	/* -R: connections that stopped at their requests cap with complete
	 * requests left, served again after the next epoll_wait (which then
	 * does not wait) */
	struct posix_conn_list yielded;
	/* Written by this worker only; read by anyone (relaxed atomics). */
	_Atomic uint64_t counters[POSIX_C_MAX];
};

struct posix_stack {
	struct stack base;            /* first: the stack interface */
	struct stack_config cfg;      /* cfg.posix.listen and .allow: the copies below */
	char listen[512];
	char unix_path[108];          /* cfg.posix.unix_path's copy */
	struct posix_socket sockets[POSIX_SOCKETS_MAX];
	unsigned nsockets;
	struct posix_worker *workers;
	struct engine_worker **engine_workers;
	unsigned nworkers;
	cpu_set_t *cpus;             /* worker i runs on cpus[i % ncpus] */
	unsigned ncpus;              /* 0: threads keep the creator's CPUs */
	_Atomic unsigned next_worker; /* whose turn the next connection is */
	size_t in_max;               /* input buffer limit per connection */
	size_t out_limit;            /* output buffer limit per connection */
	/* --tcp-buffer-memory (0: no limit), a quarter for output and the
	 * rest for input (posix_buffers.c) */
	size_t buffer_memory;
	struct posix_budget in_budget, out_budget;
	_Atomic uint64_t curr_conns; /* for --max-conns */
	_Atomic uint64_t admin_conns; /* on the admin port, at most STACK_ADMIN_CONNS */
	/* ... at most STACK_ADMIN_CONNS_PER_SOURCE from one address; a
	 * connection's id is its descriptor + 1 */
	struct stack_admin_sources admin_sources;
	/* --max-conns-per-source: one table for every worker (a connection
	 * is accepted by one and closed by another), under the lock; NULL
	 * without a limit */
	struct stack_sources *sources;
	pthread_mutex_t sources_lock;
	uint64_t request_timeout_ms; /* 0: none */
	uint64_t idle_timeout_ms;    /* 0: never */
	uint64_t admin_idle_timeout_ms; /* the admin port's; 0: never */
	struct stack_cidr allow[STACK_ALLOW_MAX]; /* cfg.allow, copied */
	atomic_bool stopping;
	bool running;
};

/* A counter of the worker's own (single writer, no lock prefix needed). */
static inline void
posix_count(struct posix_worker *w, enum posix_stack_counter c, uint64_t n)
{
	uint64_t v = atomic_load_explicit(&w->counters[c], memory_order_relaxed);

	atomic_store_explicit(&w->counters[c], v + n, memory_order_relaxed);
}

static inline uint64_t
posix_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The sooner of two epoll_wait timeouts (-1: none). */
static inline int
posix_timeout_min(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* Adds fd to an epoll set; ptr is the posix_pollable it stands for. */
static inline int
posix_epoll_add(int epfd, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* posix_refused.c: one log line per refused connection, rl permitting
 * (util_ratelimit.h): the peer's address and why. Any worker. */
void posix_log_refused(struct util_ratelimit *rl, const struct sockaddr *peer, socklen_t len,
		       const char *why);
/* A client connection accepted (and counted in curr_conns) that will not
 * be served after all: closes it and gives its count back. */
void posix_accept_abandon(struct posix_stack *s, int fd);

/* posix_sockets.c */
void posix_addr_string(const struct sockaddr *sa, socklen_t len, bool tcp,
		       char *out, size_t outlen);
int posix_sockets_open(struct posix_stack *s, char *err, size_t errlen,
		       bool *bind_failed);
void posix_sockets_close(struct posix_stack *s);

/* A connection on its way from the worker that accepted it to the one
 * that serves it: 8 bytes, so that writes to a pipe from several workers
 * never interleave (POSIX makes writes up to PIPE_BUF atomic). */
struct posix_handoff {
	int32_t fd;      /* -1: no connection, just wake up */
	uint32_t listen; /* index into posix_stack.sockets */
};

/* posix_handoff.c */
int posix_inbox_open(struct posix_worker *w);
void posix_inbox_close(struct posix_worker *w);
/* Serves an accepted connection on the worker whose turn it is. */
void posix_handoff_dispatch(struct posix_worker *w, int fd, const struct posix_socket *ls);
/* Adopts the connections other workers handed over (the inbox is
 * readable). */
void posix_handoff_receive(struct posix_worker *w);
/* Wakes the worker (stop). */
void posix_inbox_wake(struct posix_worker *w);

/* posix_accept.c */
void posix_accept(struct posix_worker *w, struct posix_socket *ls);
/* Takes the listening sockets out of the worker's epoll set for a moment
 * (accept failed for lack of descriptors), and puts them back (the worker
 * loop, once posix_worker.accept_resume_ms has come). */
void posix_accept_pause(struct posix_worker *w);
void posix_accept_resume(struct posix_worker *w);

/* posix_tcp.c */
/* Resets the connections whose --request-timeout deadline has passed;
 * returns the milliseconds until the next one (-1: none). */
int posix_tcp_expire(struct posix_worker *w);
/* Closes the connections that received nothing for --idle-timeout (at
 * most POSIX_IDLE_BURST); returns the milliseconds until the next one
 * (0: more are due now, -1: none). */
int posix_tcp_idle_expire(struct posix_worker *w);
/* Starts serving an accepted connection on this worker. */
void posix_tcp_adopt(struct posix_worker *w, int fd, const struct posix_socket *ls);
void posix_tcp_event(struct posix_conn *c, uint32_t events);
void posix_tcp_close_all(struct posix_worker *w);
void posix_tcp_free_all(struct posix_worker *w);
/* posix_owner.c: "memcached (pid 812)" for the process holding a port
 * (TCP: listening on it), from /proc; false when it cannot be told. */
bool posix_port_owner(unsigned port, bool tcp, char *out, size_t outlen);
/* posix_unix.c: binds the -s socket with the -a mode, taking over a
 * stale socket file but never a live server's. 0, or -1 with why. */
int posix_unix_open(struct posix_stack *s, char *err, size_t errlen, bool *bind_failed);
/* posix_yield.c (-R) */
/* A connection's turn begins: its requests cap starts over. */
void posix_yield_begin(struct posix_conn *c);
/* After its turn: a connection that stopped at the cap with input left
 * goes on the yielded list (true: it is there, do not read more now). */
bool posix_yield_note(struct posix_conn *c);
/* Did it stop at the cap with received requests left to run? */
bool posix_yield_waiting(const struct posix_conn *c);
/* A closing connection leaves the list. */
void posix_yield_unlink(struct posix_conn *c);
/* Gives the yielded connections their next turn; returns 0 when some
 * yielded again (epoll_wait must not wait), else -1. */
int posix_yield_run(struct posix_worker *w);
/* posix_buffers.c */
bool posix_budget_take(struct posix_budget *b, uint64_t n);
void posix_budget_put(struct posix_budget *b, uint64_t n);
/* --tcp-buffer-memory's default for -c and -I. */
size_t posix_buffer_memory_default(unsigned max_conns, size_t item_max);
/* The connection reads into its worker's buffer now. */
bool posix_conn_in_borrowed(const struct posix_conn *c);
void posix_conn_in_borrow(struct posix_conn *c);
/* Forgets the connection's input: its own buffer is freed (its charge
 * given back), the worker's is left to the worker. */
void posix_conn_in_drop(struct posix_conn *c);
bool posix_conn_in_give_back(struct posix_conn *c);
enum posix_room {
	POSIX_ROOM_OK,
	POSIX_ROOM_TOO_LARGE, /* a single request over the per-connection limit */
	POSIX_ROOM_NO_BUDGET, /* the input budget cannot take the growth */
};
enum posix_room posix_conn_make_room(struct posix_conn *c);
/* The input budget is spent: refuses the storage request waiting for its
 * data block (a reply composed in the session's output, the bytes
 * dropped, the rest swallowed as they come); false when none waits. */
bool posix_conn_in_refuse(struct posix_conn *c);
/* After the connection's turn: charges its unsent output; false when the
 * output budget cannot take it (the caller resets the connection). */
bool posix_conn_out_settle(struct posix_conn *c);
void posix_conn_out_release(struct posix_conn *c);

/* posix_udp.c */
void posix_udp_readable(struct posix_worker *w, struct posix_socket *us);

/* posix_sockets.c: is a peer in --allow (always, without one)? */
bool posix_peer_allowed(const struct posix_stack *s, const struct sockaddr *sa);

#endif /* SEGCACHED_POSIX_PRIVATE_H */
