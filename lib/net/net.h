/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/net: a small user-space TCP/IP stack (Ethernet II, ARP, IPv4, ICMP
 * echo, UDP, TCP) for run-to-completion DPDK lcores. See docs/net.md.
 *
 * One `struct net_stack` per lcore: it is never touched by two threads,
 * takes no locks, makes no system calls and allocates nothing after
 * net_stack_create() except packets from the TX mempool. The stack never
 * talks to a NIC; the caller's loop moves packets in and out:
 *
 *	for (;;) {
 *		n = rte_eth_rx_burst(port, q, rx, 32);
 *		net_stack_input(s, rx, n);          // takes ownership of rx[]
 *		net_stack_poll(s);                  // timers, then build output
 *		m = net_stack_tx_burst_prepare(s, &tx);
 *		sent = rte_eth_tx_burst(port, q, tx, m);
 *		net_stack_tx_burst_done(s, sent);   // keeps the rest queued
 *	}
 *
 * Application callbacks (struct net_app_ops) run inside net_stack_input()
 * and net_stack_poll(); from a callback the application may call any
 * net_tcp_* / net_udp_* function, including on other connections.
 */
#ifndef SEGCACHED_NET_H
#define SEGCACHED_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "net/net_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

struct net_stack;
struct net_conn; /* a TCP connection; opaque */

#define NET_MAX_LISTEN 8 /* TCP and UDP listening ports, each */
/* Packets a stack takes from its TX mempool at once and holds ready, on
 * top of the tx_ring_size it may have queued: size the pool for both. */
#define NET_TX_BULK 32

/* Why a TCP connection ended (net_app_ops.closed). */
enum net_close_reason {
	NET_CLOSE_NORMAL,    /* FIN exchanged both ways, all data acknowledged */
	NET_CLOSE_RESET,     /* the peer sent a valid RST */
	NET_CLOSE_REFUSED,   /* active open answered with RST */
	NET_CLOSE_TIMEOUT,   /* retransmissions exhausted */
	NET_CLOSE_IDLE,      /* nothing received for idle_timeout_us */
	NET_CLOSE_ABORTED,   /* the application called net_tcp_abort() */
	NET_CLOSE_STACK,     /* net_stack_destroy() with the connection open */
};

/* The remote end of a UDP datagram; pass it back to net_udp_send() to
 * answer (the reply goes to the MAC the datagram came from). */
struct net_udp_peer {
	uint32_t addr;              /* IPv4, host byte order */
	uint16_t port;              /* remote port, host byte order */
	uint16_t local_port;        /* our port, host byte order */
	struct rte_ether_addr mac;  /* next hop MAC */
	bool mac_valid;             /* false: resolve addr with ARP */
};

/* A received payload shown to net_app_ops.rx_hint before its burst is
 * processed. */
struct net_rx_hint {
	const uint8_t *data;
	uint16_t len;
	bool udp;           /* a UDP datagram's payload; else a TCP segment's */
};

/* Application interface. Any callback may be NULL. `app` is
 * net_stack_config.app_arg. */
struct net_app_ops {
	/* A passive open completed (the three-way handshake is done). Return 0
	 * to keep the connection, non-zero to refuse it (it is reset and no
	 * other callback is called for it). */
	int (*accepted)(void *app, struct net_conn *c);
	/* An active open (net_tcp_connect) completed. */
	void (*connected)(void *app, struct net_conn *c);
	/* In-order bytes are buffered: data[0..len) is every byte received and
	 * not yet consumed, contiguous. Return how many leading bytes were
	 * consumed (0..len); the rest stay buffered and are offered again
	 * with the next data, so a partial request needs no copy in the
	 * application. The receive window opens as bytes are consumed; at
	 * most rcvbuf bytes are ever buffered, so a request larger than
	 * rcvbuf must be consumed in pieces. */
	size_t (*recv)(void *app, struct net_conn *c, const uint8_t *data,
		       size_t len);
	/* Send space was short (a net_tcp_send accepted less than asked, or
	 * the app stopped consuming because net_tcp_send_space was low) and
	 * acknowledgements have since freed at least half the send buffer.
	 * If bytes are still buffered, recv is called again first. */
	void (*writable)(void *app, struct net_conn *c);
	/* The peer sent FIN: no more bytes will arrive (every byte before it
	 * has been offered to recv). The application may still send, then
	 * net_tcp_close(). */
	void (*peer_closed)(void *app, struct net_conn *c);
	/* The connection is gone (after a graceful close, a reset, a timeout or
	 * an abort). Called exactly once for every connection the application
	 * was given by accepted/connect; the handle is invalid afterwards. */
	void (*closed)(void *app, struct net_conn *c,
		       enum net_close_reason why);
	/* A UDP datagram arrived on a port in udp_ports. */
	void (*udp_recv)(void *app, const struct net_udp_peer *peer,
			 const uint8_t *data, size_t len);
	/* The time the application set with net_tcp_set_timer() has come
	 * (the timer is then off). Typically the application closes or aborts
	 * the connection here. */
	void (*timer)(void *app, struct net_conn *c);
	/* Before a received burst of two frames or more is processed: its
	 * TCP and UDP payloads for our address, headers located but nothing
	 * validated yet. Only a
	 * hint, for the application to start loading what the requests in
	 * them will read, so the cache misses of many connections overlap
	 * (the first phase of a two-phase burst; the stack prefetches the
	 * connections meanwhile). It must change nothing: a payload may be a
	 * retransmission, out of order, the middle of a request or garbage.
	 * The data stays valid only during the call. */
	void (*rx_hint)(void *app, const struct net_rx_hint *p, unsigned n);
};

/* Time source in microseconds (monotonic). Tests inject their own. */
typedef uint64_t (*net_clock_fn)(void *arg);

struct net_cidr {
	uint32_t addr;
	uint32_t mask;
};

#define NET_ALLOW_MAX 32

/* Buffer pairs kept for connections to reserved_port when max_buf_pairs
 * caps the others (at most reserved_slots): enough for an operator's
 * `stats` while every other connection waits for a pair. */
#define NET_RESERVED_BUF_PAIRS 2u

struct net_stack_config {
	const char *name;               /* for logs and the connection hash */
	int socket_id;                  /* NUMA node for tables and buffers */
	struct rte_ether_addr mac;      /* our MAC */
	uint32_t ip;                    /* our IPv4 address, host byte order */
	uint8_t prefix_len;             /* subnet prefix (for active opens) */
	uint32_t gateway;               /* next hop outside the subnet; 0 = none */
	uint16_t mtu;                   /* IP MTU; 0 = 1500 */
	struct rte_mempool *tx_pool;    /* packets the stack builds come from here */
	uint16_t tx_ring_size;          /* most packets queued per tx_burst; 0 = 512 */

	/* Checksum offloads the port offers, the TCP/UDP checksums (rx_/
	 * tx_cksum_offload) apart from the IPv4 header's (rx_/tx_ip_...):
	 * virtio ports offer the first and not the second. rx: trust the RX
	 * ol_flags when they say GOOD, BAD or NONE (UNKNOWN is verified in
	 * software). tx: leave the checksum to the NIC (ol_flags, l2/l3 len,
	 * for TCP/UDP the pseudo-header checksum); otherwise computed in
	 * software. */
	bool rx_cksum_offload;
	bool tx_cksum_offload;
	bool rx_ip_cksum_offload;
	bool tx_ip_cksum_offload;
	/* A TCP segment with at least this many data bytes is sent without
	 * copying them: its payload is an mbuf pointing into the connection's
	 * send ring (an external buffer), chained after the headers, and the
	 * ring's memory stays allocated until the driver frees that mbuf.
	 * 0: always copy. Set it only for a port that sends chained mbufs
	 * (RTE_ETH_TX_OFFLOAD_MULTI_SEGS). */
	uint32_t tx_zero_copy_min;
	/* TCP segmentation offload: a segment sent without a copy may carry
	 * up to this many bytes (at most 65,000), which the NIC cuts into
	 * MSS-sized ones (RTE_MBUF_F_TX_TCP_SEG). 0: off. Only with
	 * tx_cksum_offload and tx_zero_copy_min; set it only for a port that
	 * offers RTE_ETH_TX_OFFLOAD_TCP_TSO. */
	uint32_t tx_tso_max;

	uint16_t tcp_ports[NET_MAX_LISTEN]; /* listening ports; 0 = unused */
	uint16_t udp_ports[NET_MAX_LISTEN];
	/* Clients allowed (every protocol, before any state); n_allow 0 =
	 * everyone. Host byte order, addr already masked. */
	const struct net_cidr *allow;
	unsigned n_allow;               /* at most NET_ALLOW_MAX */
	bool udp_off_subnet;            /* answer UDP from beyond the subnet (via the
					 * gateway); off: only local peers, which a
					 * spoofer must be on the segment to fake */

	uint32_t max_conns;             /* connection slots (all states); required */
	uint32_t syn_backlog;           /* SYN_RCVD connections at once; 0 = max_conns/4 */
	bool syn_cookies_disabled;      /* backlog full: drop SYNs instead */
	const char *full_reply;         /* sent (with a FIN) to a handshake completed
					 * when no slot is free; NULL: a RST */
	/* The last reserved_slots free slots are kept for connections to
	 * reserved_port (an administration port that must stay reachable when
	 * the other ports filled the table); 0: none. */
	uint16_t reserved_port;
	uint32_t reserved_slots;
	/* Under max_buf_pairs below max_conns, reserved_port's connections
	 * also have min(reserved_slots, NET_RESERVED_BUF_PAIRS) buffer pairs
	 * beyond the cap, which the other ports' cannot take. */
	uint32_t sndbuf;                /* send buffer per connection; 0 = 64 KiB */
	uint32_t rcvbuf;                /* receive buffer per connection; 0 = 64 KiB */
	/* Buffer pairs (sndbuf + rcvbuf) held at once, by all connections
	 * together: the stack's memory budget for TCP bytes; 0 (or more than
	 * max_conns) = max_conns. At the cap a data segment that finds no
	 * pair is dropped and acknowledged at once without its bytes (the
	 * peer sends them again) and a send waits for a pair (docs/net.md,
	 * "Memory"). */
	uint32_t max_buf_pairs;
	uint8_t ooo_max;                /* out-of-order ranges held; 0 = 8, max 32 */

	/* Times, microseconds; 0 selects the default in brackets. */
	uint64_t rto_initial_us;        /* [1 s] RFC 6298 */
	uint64_t rto_min_us;            /* [200 ms] */
	uint64_t rto_max_us;            /* [60 s] */
	uint64_t delack_us;             /* [5 ms] delayed ACK when no response comes */
	uint64_t time_wait_us;          /* [1 s] TIME_WAIT (short on purpose) */
	uint64_t fin_wait2_us;          /* [30 s] orphaned FIN_WAIT_2 */
	uint64_t orphan_timeout_us;     /* [60 s] a connection the application closed
					 * that is not done closing by then (a peer
					 * holding its window shut) is reset */
	uint32_t max_orphans;           /* [max_conns / 4] beyond it, closing resets */
	uint64_t idle_timeout_us;       /* [0 = never] no segment received */
	uint64_t syncookie_idle_us;     /* [120 s] the same for connections made from a
					 * SYN cookie when idle_timeout_us is 0: a
					 * forged one must not live for ever */
	uint8_t max_retries;            /* [8] data/FIN retransmissions before giving up */
	uint8_t max_syn_retries;        /* [5] SYN / SYN-ACK retransmissions */

	net_clock_fn clock;             /* NULL = rte_get_timer_cycles() */
	void *clock_arg;
	const struct net_app_ops *ops;
	void *app_arg;
	uint64_t secret_seed;           /* ISN and SYN cookie key; 0 = rte_rand() */
};

/* Create a stack instance. Returns NULL and writes a message to err on bad
 * configuration or when the tables cannot be allocated. */
struct net_stack *net_stack_create(const struct net_stack_config *cfg,
				   char *err, size_t errlen);
/* Release everything: open connections are dropped without packets
 * (closed(NET_CLOSE_STACK)), queued TX packets are freed. */
void net_stack_destroy(struct net_stack *s);

/* Process received frames; the stack owns them from here on (each is
 * freed, or reused as its own reply). */
void net_stack_input(struct net_stack *s, struct rte_mbuf **pkts, uint16_t n);
/* Run due timers and build every pending segment into the TX array. Call
 * once per loop iteration, after input; right after a net_stack_input it
 * runs at that input's time (the clock is read only when no input came
 * since the last poll). */
void net_stack_poll(struct net_stack *s);
/* The packets to transmit: *pkts points at the stack's TX array. */
uint16_t net_stack_tx_burst_prepare(struct net_stack *s, struct rte_mbuf ***pkts);
/* `sent` of the prepared packets (the first ones) were taken by the NIC;
 * the rest stay queued, in order, and lead the next prepare (the burst is
 * counted in tx_nic_deferred). The queue holds at most tx_ring_size packets: while
 * it is full TCP builds nothing (its bytes wait in the send buffers) and
 * only stateless replies are dropped (tx_queue_full). */
void net_stack_tx_burst_done(struct net_stack *s, uint16_t sent);

/* Counters. */
uint64_t net_stack_counter(const struct net_stack *s, enum net_counter_id id);
/* Copy every counter (indexed by enum net_counter_id), e.g. for telemetry
 * summing over lcores. */
void net_stack_counters_read(const struct net_stack *s, uint64_t out[NET_C__COUNT]);
const char *net_counter_name(enum net_counter_id id);
const char *net_counter_desc(enum net_counter_id id);
/* Connection slots in use (any state other than free). */
uint32_t net_stack_conns_in_use(const struct net_stack *s);
/* Memory a stack holds for its connections, bytes (see docs/net.md,
 * "Memory"). Slots are allocated at creation; buffer pairs and
 * out-of-order tables when a connection first needs one more than the
 * stack ever had, and are reused after. */
struct net_stack_memory {
	size_t slots;            /* max_conns slots: state, hash entry, pool places */
	size_t buffers;          /* buffer pairs allocated so far (net_buf_pair_bytes each) */
	size_t buffers_max;      /* the most they may take: max_buf_pairs pairs */
	uint32_t buffers_in_use; /* pairs held now, by connections or by packets
				  * sent without a copy that the driver holds */
	size_t ooo;              /* out-of-order tables allocated so far */
};
void net_stack_memory_read(const struct net_stack *s, struct net_stack_memory *out);
/* What one connection slot costs whether used or not, and so all that an
 * idle connection (nothing unsent, unacknowledged or unread) costs: its
 * state, its share of the connection hash table and its places in the
 * pools. A connection holding bytes adds a buffer pair while it does. */
size_t net_conn_slot_bytes(void);
/* What a connection holding bytes adds while it does: a buffer pair of
 * sndbuf + rcvbuf bytes and its bookkeeping (0 selects the defaults). */
size_t net_buf_pair_bytes(uint32_t sndbuf, uint32_t rcvbuf);

/* The stack's current time (its clock, read once per input/poll). */
uint64_t net_stack_now(const struct net_stack *s);

/* --- TCP --- */

/* Start an active open to addr:port (host byte order). local_port 0 picks
 * an ephemeral port. `ctx` is the application's pointer (net_conn_ctx).
 * Returns NULL with errno set: EINVAL (bad address), ENOSPC (no slot),
 * EADDRINUSE (4-tuple in use), EHOSTUNREACH (off-subnet, no gateway). */
struct net_conn *net_tcp_connect(struct net_stack *s, uint32_t addr,
				 uint16_t port, uint16_t local_port, void *ctx);
/* Copy up to len bytes into the send buffer; returns how many were taken
 * (less than len when the buffer is full: backpressure). Returns 0 once the
 * connection cannot send any more (closed by us, or reset). */
size_t net_tcp_send(struct net_conn *c, const void *data, size_t len);
/* Free bytes in the send buffer (0 when sending is no longer possible). */
size_t net_tcp_send_space(const struct net_conn *c);
/* Composing in place, one copy fewer than net_tcp_send: the free bytes
 * that follow the send buffer's queued ones without wrapping round its
 * end (*room of them, fewer than net_tcp_send_space when the ring wraps).
 * The application writes its bytes there and queues the first n with
 * net_tcp_send_commit(c, at, n), at being the returned pointer moved on
 * by what was committed since. Nothing else may change the send buffer
 * in between (net_tcp_send, the stack's input or poll). NULL with
 * *room 0 when sending is no longer possible, or no buffer pair is free
 * (net_tcp_send then waits for one). */
void *net_tcp_send_window(struct net_conn *c, size_t *room);
/* Queues n bytes written at `at` in the window; returns how many were
 * taken: all, unless the connection can no longer send or `at` is not
 * where the queued bytes end (then none: the caller still holds them). */
size_t net_tcp_send_commit(struct net_conn *c, const void *at, size_t n);
/* Bytes sent or queued and not yet acknowledged. */
size_t net_tcp_send_queued(const struct net_conn *c);
/* Graceful close: FIN after every queued byte; no more sends. Bytes that
 * still arrive are acknowledged and discarded (recv is not called again);
 * `closed` follows when the exchange is over. */
void net_tcp_close(struct net_conn *c);
/* Reset now (RST to the peer); `closed(NET_CLOSE_ABORTED)` is called
 * before this returns. */
void net_tcp_abort(struct net_conn *c);
/* The application's own timer of the connection: net_app_ops.timer is
 * called at or after at_us (the stack's clock, net_stack_now()), within
 * one timer tick; 0 turns it off. Setting a later time costs no more than
 * a store, so it may be pushed back often. */
void net_tcp_set_timer(struct net_conn *c, uint64_t at_us);

void net_conn_set_ctx(struct net_conn *c, void *ctx);
void *net_conn_ctx(const struct net_conn *c);
/* Addresses and ports, host byte order. */
void net_conn_addrs(const struct net_conn *c, uint32_t *local_addr,
		    uint16_t *local_port, uint32_t *remote_addr,
		    uint16_t *remote_port);
/* RFC 9293 state name ("ESTABLISHED", ...), for logs and tests. */
const char *net_conn_state_name(const struct net_conn *c);

/* --- UDP --- */

/* Send one datagram from peer->local_port to peer->addr:port. Returns 0, or
 * -EMSGSIZE (larger than MTU - 28), -ENOBUFS (no TX slot or mbuf),
 * -EHOSTUNREACH (no MAC known; an ARP request is sent, retry later). */
int net_udp_send(struct net_stack *s, const struct net_udp_peer *peer,
		 const void *data, size_t len);
/* The same datagram gathered from n pieces (a header and a body written
 * straight into the frame, with no copy to join them first). */
int net_udp_sendv(struct net_stack *s, const struct net_udp_peer *peer,
		  const struct iovec *iov, unsigned n);
/* Largest payload net_udp_send accepts. */
size_t net_udp_max_payload(const struct net_stack *s);

/* The stack's log type ("segcached.net"), registered at load time. */
extern int net_logtype;

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_NET_H */
