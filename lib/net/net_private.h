/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/net internals shared by its files; nothing here is API: struct
 * net_stack and what every layer calls of another (TX, ARP, IPv4, UDP, the
 * entry points into TCP). The parts have headers of their own:
 * net_timer.h and net_pool.h (included here: the stack holds a wheel and
 * pools), net_buf.h and net_conn.h (the connection slot), net_tcp.h (TCP's
 * files among themselves).
 */
#ifndef SEGCACHED_NET_PRIVATE_H
#define SEGCACHED_NET_PRIVATE_H

#include <sys/queue.h>

#include <rte_branch_prediction.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_reciprocal.h>
#include <rte_tcp.h>

#include "net/net.h"
#include "net/net_cksum.h"
#include "net/net_pool.h"
#include "net/net_timer.h"

#define NET_LOG(level, s, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, net_logtype, "net(%s): " fmt "\n",         \
		(s)->name, ##__VA_ARGS__)

#define NET_INC(s, c) ((s)->ctr[NET_C_##c]++)
#define NET_ADD(s, c, n) ((s)->ctr[NET_C_##c] += (n))

/* Connections and buffer pairs (net_conn.h), as the stack lists them. */
struct net_conn;
struct net_conn_key;
struct net_bufs_tail;
TAILQ_HEAD(net_conn_list, net_conn);
TAILQ_HEAD(net_bufs_list, net_bufs_tail);

/* --- ARP cache --- */

struct net_arp_entry {
	uint32_t ip;
	struct rte_ether_addr mac;
	uint64_t learned_at;
	uint64_t requested_at; /* last request we sent for ip */
};

#define NET_ARP_SLOTS 256 /* direct-mapped by the low bits of the address */
#define NET_ARP_TTL_US (300ull * 1000 * 1000)
#define NET_ARP_RETRY_US (1000ull * 1000)

/* --- the first phase of an RX burst (net_burst.c) --- */

/* Frames taken per phase: one bulk connection lookup covers them
 * (at most RTE_HASH_LOOKUP_BULK_MAX). */
#define NET_RX_GROUP 32

/* What the first phase found for one frame of the group. */
struct net_rx_slot {
	const struct rte_mbuf *m;
	struct net_conn *conn;  /* the TCP lookup's result (NULL: none) */
	bool looked_up;         /* conn is valid while conn_epoch is unchanged */
};

struct net_rx_group {
	struct net_rx_slot slot[NET_RX_GROUP];
	const struct net_rx_slot *cur; /* the frame the second phase is in */
	uint32_t epoch;                /* conn_epoch when the lookup was done */
};

/* Whether the first phase pays, found by trying (net_burst.c): it costs
 * a few percent of the worker's cycles and saves more only when what the
 * requests read is out of cache (large working sets, many connections).
 * A probe alternates groups with and without it and keeps each group's
 * cycles per frame; the side with the lower median (robust to a group
 * that was preempted) is then used alone for NET_RX_EXPLOIT_GROUPS
 * groups, and the next probe looks again. */
#define NET_RX_PREPARE_MIN 4       /* smaller groups have little to overlap */
#define NET_RX_PROBE_SAMPLES 64    /* groups timed per side per probe */
#define NET_RX_EXPLOIT_GROUPS 4096 /* groups between two probes */

struct net_rx_adapt {
	uint32_t sample[2][NET_RX_PROBE_SAMPLES]; /* cycles/frame: [0] without, [1] with */
	uint16_t n[2];
	uint32_t left;  /* groups until the next probe (0: probing) */
	bool prepare;   /* the choice between probes */
	bool probing;
	bool next;      /* while probing: the side the next group takes */
};

/* Whether a group of n frames runs the first phase; *timed: whether its
 * cost is to be given to net_burst_account(). */
bool net_burst_choose(struct net_stack *s, uint16_t n, bool *timed);
/* A timed group's cost, in TSC cycles. */
void net_burst_account(struct net_stack *s, bool prepared, uint64_t cycles, uint16_t n);

/* Look up, prefetch and hint frames pkts[0..n), n <= NET_RX_GROUP. */
void net_burst_prepare(struct net_stack *s, struct rte_mbuf **pkts, uint16_t n);
/* The connection of TCP frame m with key k: the first phase's lookup
 * when it still holds, a lookup otherwise. */
struct net_conn *net_burst_conn(struct net_stack *s, const struct rte_mbuf *m,
				const struct net_conn_key *k);

/* --- the stack --- */

struct net_listener {
	uint16_t port;
	uint32_t syn_rcvd; /* SYN_RCVD connections from this listener */
};

struct net_stack {
	char name[32];
	struct net_stack_config cfg;   /* with defaults filled in */
	const struct net_app_ops *ops;
	uint32_t ip;                   /* host order */
	uint32_t ip_be;
	uint32_t netmask;
	uint16_t mss;                  /* our MSS: mtu - 40 */
	uint8_t rcv_wscale;            /* the scale we offer */
	uint64_t now;                  /* us, refreshed per input/poll */
	struct rte_reciprocal_u64 per_us; /* default clock: TSC cycles per us */
	bool now_from_input;           /* net_stack_input read the clock this loop */
	uint64_t secret[2];
	uint16_t ip_id;
	uint16_t next_ephemeral;
	uint64_t last_cookie_at;       /* last SYN cookie sent (us), 0 = never */

	struct net_listener tcp_listen[NET_MAX_LISTEN];
	unsigned n_tcp_listen;
	uint16_t udp_listen[NET_MAX_LISTEN];
	unsigned n_udp_listen;

	/* TX queue drained by the caller, a ring: what the NIC did not take
	 * stays at its head for the next burst, and nothing moves (with
	 * thousands of packets queued behind a full NIC ring, moving them
	 * down after every burst, and reading every packet's length to count
	 * bytes, cost a twentieth of the worker's time). tx_len keeps each
	 * packet's length from when it was queued. */
	struct rte_mbuf **tx;
	uint32_t *tx_len;
	uint16_t tx_head, tx_count, tx_cap;
	uint16_t tx_offered;               /* by the last prepare, from tx_head */
	uint16_t stash_n;                  /* fresh packets in stash */
	struct rte_mbuf *stash[NET_TX_BULK];

	/* connections */
	struct net_conn *conns;
	struct net_pool buf_pool;      /* send + receive buffer pairs, each with its tail */
	size_t bufs_tail_off;          /* where in a pair its struct net_bufs_tail is */
	/* Pairs no connection holds that mbufs still point into: they
	 * return to the pool when the driver frees the last one. */
	struct net_bufs_list bufs_in_flight;
	struct net_pool ooo_pool;      /* out-of-order range tables */
	struct rte_hash *conn_hash;
	uint32_t conn_epoch;           /* bumped when conn_hash gains or loses a key */
	struct net_rx_group rx;        /* the first phase's findings */
	struct net_rx_adapt rx_adapt;  /* whether it runs */
	uint32_t conns_in_use;
	uint32_t orphans;              /* connections with CF_ORPHAN */
	struct net_cidr allow[NET_ALLOW_MAX]; /* cfg.allow, copied */
	struct net_conn_list free_list;
	struct net_conn_list output_list;  /* something to send */
	struct net_conn_list release_list; /* freed after the current event */
	struct net_conn_list time_wait;
	/* Connections whose send found no buffer pair (rte_malloc failed):
	 * their `writable` comes when a pair is free again, or once per
	 * millisecond to try the allocation again. */
	struct net_conn_list buf_waiters;
	uint64_t buf_retry_at;         /* us */
	/* Pairs the ports other than cfg.reserved_port may hold together:
	 * cfg.max_buf_pairs. buf_pool.max adds the reserved port's own
	 * (NET_RESERVED_BUF_PAIRS at most, only under a real cap). */
	uint32_t buf_cap;
	struct net_wheel wheel;
	bool in_event;

	struct net_arp_entry arp[NET_ARP_SLOTS];

	uint64_t ctr[NET_C__COUNT];
};

/* net_tx.c: the TX array, outgoing headers */
struct rte_mbuf *net_tx_alloc(struct net_stack *s);
/* net_tx_alloc for a packet built while its request's packet is being
 * read, freed right after (a UDP reply): the pool's cache gives the
 * packet freed last, still in the CPU's cache, instead of the stash's. */
struct rte_mbuf *net_tx_alloc_recycled(struct net_stack *s);
/* Another segment for a packet net_tx_alloc gave (it takes no TX slot of
 * its own); NULL when the pool is empty. */
struct rte_mbuf *net_tx_alloc_extra(struct net_stack *s);
void net_tx_push(struct net_stack *s, struct rte_mbuf *m);
/* Frees a dropped packet, out of line: rte_pktmbuf_free() in line is
 * most of a hot function's code, for the path a drop rarely takes. */
void net_drop_cold(struct rte_mbuf *m) __attribute__((cold, noinline));
/* The IPv4 header's checksum of a frame about to leave: the port's
 * offload when it has one (l2_len, l3_len and the flags set), or software. */
void net_ipv4_cksum(struct net_stack *s, struct rte_mbuf *m, struct rte_ipv4_hdr *ip);
static inline bool
net_tx_room(const struct net_stack *s)
{
	return s->tx_count < s->tx_cap;
}
/* Ethernet + IPv4 header into m (data_len must already cover l4), then
 * IPv4 checksum or offload flags; returns the IPv4 header. */
struct rte_ipv4_hdr *net_ipv4_build(struct net_stack *s, struct rte_mbuf *m,
				    const struct rte_ether_addr *dst_mac,
				    uint32_t dst_ip, uint8_t proto,
				    uint16_t l4_len);
/* The value for the L4 checksum field (whose current value must be 0):
 * the full checksum in software, or with TX offload the pseudo-header
 * checksum after setting the offload flag. */
uint16_t net_l4_cksum(struct net_stack *s, struct rte_mbuf *m,
		      const struct rte_ipv4_hdr *ip, const void *l4, bool tcp);
bool net_ip_local_subnet(const struct net_stack *s, uint32_t ip);

/* RX L4 checksum: the NIC's verdict when offload is on and it has one,
 * otherwise the one's complement sum over pseudo-header and segment. */
static inline bool
net_l4_cksum_ok(const struct net_stack *s, const struct rte_mbuf *m,
		const struct rte_ipv4_hdr *ip, const void *l4, uint16_t l4_len)
{
	if (s->cfg.rx_cksum_offload) {
		uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

		if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD || f == RTE_MBUF_F_RX_L4_CKSUM_NONE)
			return true;
		if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
			return false;
	}
	/* The pseudo-header's sum unfolded, in memory order: l4_len is the
	 * IP total length less the header's, the length that
	 * rte_ipv4_phdr_cksum() would take, which builds the pseudo-header
	 * on the stack and sums it with rte_raw_cksum's loop. */
	uint64_t phdr = (uint64_t)ip->src_addr + ip->dst_addr +
			rte_cpu_to_be_16(ip->next_proto_id) + rte_cpu_to_be_16(l4_len);

	return net_cksum_fold(net_cksum_add(l4, l4_len, phdr)) == 0xffff;
}

/* net_arp.c */
void net_arp_input(struct net_stack *s, struct rte_mbuf *m);
void net_arp_learn(struct net_stack *s, uint32_t ip, const struct rte_ether_addr *mac);
/* Resolve the next hop for ip; false (and an ARP request, rate limited)
 * when unknown. */
bool net_arp_resolve(struct net_stack *s, uint32_t ip, struct rte_ether_addr *mac);

/* net_ipv4.c */
void net_ipv4_input(struct net_stack *s, struct rte_mbuf *m);

/* net_udp.c */
void net_udp_input(struct net_stack *s, struct rte_mbuf *m,
		   struct rte_ipv4_hdr *ip, uint16_t l4_len);

/* TCP (net_tcp_*.c; net_tcp.h says which file holds what) */
/* net_tcp.c: the connection table (its release list, emptied after every
 * event: net_tcp_release_pending(), net_tcp.h) */
int net_tcp_init(struct net_stack *s, char *err, size_t errlen);
void net_tcp_fini(struct net_stack *s);
/* net_tcp_listen.c: a segment arrives */
void net_tcp_input(struct net_stack *s, struct rte_mbuf *m,
		   struct rte_ipv4_hdr *ip, uint16_t l4_len);
/* net_tcp_out.c: the output list */
void net_tcp_output_all(struct net_stack *s);
/* net_tcp_app.c: writers that waited for a buffer pair */
void net_tcp_wake_buf_waiters(struct net_stack *s);
/* net_tcp_timer.c: the wheel's callback, a connection's timer fired */
void net_tcp_timer_cb(struct net_stack *s, struct net_timer *t);

#endif /* SEGCACHED_NET_PRIVATE_H */
