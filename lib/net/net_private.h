/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/net internals shared by its files; nothing here is API.
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

#define NET_LOG(level, s, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, net_logtype, "net(%s): " fmt "\n",         \
		(s)->name, ##__VA_ARGS__)

#define NET_INC(s, c) ((s)->ctr[NET_C_##c]++)
#define NET_ADD(s, c, n) ((s)->ctr[NET_C_##c] += (n))

/* Sequence number comparisons (RFC 9293 modular arithmetic). */
static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

/* --- timer wheel (net_timer.c) --- */

#define NET_WHEEL_BITS 10
#define NET_WHEEL_SLOTS (1u << NET_WHEEL_BITS)
#define NET_TICK_SHIFT 10 /* one tick = 1024 us */

/* A connection's timer: 24 bytes, so that it shares a cache line with
 * the deadlines it serves. Armed when tick != 0; every timer of a wheel
 * has the wheel's callback. */
struct net_timer {
	TAILQ_ENTRY(net_timer) link;
	uint64_t tick;  /* expiry, in ticks, rounded up; 0 = not armed */
};
TAILQ_HEAD(net_timer_list, net_timer);
typedef void (*net_timer_cb)(struct net_stack *s, struct net_timer *t);

struct net_wheel {
	struct net_timer_list slot[NET_WHEEL_SLOTS];
	uint64_t tick; /* every slot up to this tick has been processed */
	net_timer_cb cb;
};

static inline bool
net_timer_armed(const struct net_timer *t)
{
	return t->tick != 0;
}

void net_wheel_init(struct net_wheel *w, uint64_t now_us, net_timer_cb cb);
/* Arm (or re-arm) t to fire at or after at_us. */
void net_timer_arm(struct net_wheel *w, struct net_timer *t, uint64_t at_us);
void net_timer_cancel(struct net_wheel *w, struct net_timer *t);
void net_wheel_run(struct net_stack *s, struct net_wheel *w, uint64_t now_us);

/* --- byte buffers (net_buf.c) --- */

/* Send buffer: a ring of `cap` bytes at `base` holding bytes from snd_una
 * onwards (sent and not yet acknowledged, then not yet sent). Base and
 * capacity live elsewhere (struct net_conn.bufs, the stack's sndbuf): the
 * connection keeps only the two offsets in its hot lines. */
struct net_sndbuf {
	uint32_t head; /* ring offset of the byte at snd_una */
	uint32_t len;  /* bytes held */
};

/* Ring offset of the byte `off` bytes after the head (off <= cap). */
static inline uint32_t
net_sndbuf_pos(const struct net_sndbuf *b, uint32_t cap, uint32_t off)
{
	uint32_t pos = b->head + off;

	return pos >= cap ? pos - cap : pos;
}

uint32_t net_sndbuf_append(struct net_sndbuf *b, uint8_t *base, uint32_t cap,
			   const void *data, uint32_t len);
/* Copy len bytes starting off bytes after the head into dst. */
void net_sndbuf_copy(const struct net_sndbuf *b, const uint8_t *base, uint32_t cap,
		     uint32_t off, void *dst, uint32_t len);
void net_sndbuf_drop(struct net_sndbuf *b, uint32_t cap, uint32_t len);

/* Receive buffer: linear, so the application always sees its unconsumed
 * bytes contiguously. [head, tail) are in-order bytes not yet consumed;
 * out-of-order bytes are written in place beyond tail (at tail + their
 * distance from rcv_nxt) and tracked as ranges until the gap fills. */
struct net_rcvbuf {
	uint32_t head;
	uint32_t tail;
};

/* Memory taken from rte_malloc on first need, one object at a time, and
 * kept for reuse (last freed, first reused: still warm in cache) until
 * the stack is destroyed; at most `max` objects ever. A connection's
 * buffers and out-of-order table come from here, so only connections
 * that hold bytes cost buffer memory (net_pool.c). */
struct net_pool {
	void **free;      /* stack of objects ready for reuse */
	/* Called once per object, when rte_malloc made it (NULL: none). */
	void (*made)(void *obj, void *arg);
	void *made_arg;
	uint32_t n_free;
	uint32_t n_made;  /* objects allocated so far */
	uint32_t max;
	size_t size;      /* bytes per object */
	int socket_id;
	const char *name;
};

int net_pool_init(struct net_pool *p, const char *name, size_t size, uint32_t max,
		  int socket_id);
/* Free every object (all must have been put back). */
void net_pool_fini(struct net_pool *p);
/* A new object while fewer than max were made; NULL otherwise or when
 * rte_malloc fails. */
void *net_pool_grow(struct net_pool *p);

/* NULL when max objects are out or rte_malloc fails. */
static inline void *
net_pool_get(struct net_pool *p)
{
	if (likely(p->n_free > 0))
		return p->free[--p->n_free];
	return net_pool_grow(p);
}

static inline void
net_pool_put(struct net_pool *p, void *obj)
{
	p->free[p->n_free++] = obj;
}

/* --- connections --- */

/* The end of every buffer pair. A segment sent without a copy is an mbuf
 * pointing into the pair's send ring (net_tcp_out.c), so the pair must
 * outlive its connection's hold on it: `shared` counts the connection
 * (1 while it holds the pair) and every such mbuf, and the pair goes back
 * to the pool when the count reaches 0, however that happens last. */
struct net_bufs_tail {
	struct rte_mbuf_ext_shared_info shared;
	struct net_stack *stack;    /* NULL once the stack is destroyed: the last
				     * mbuf's free gives the pair to rte_free */
	uint8_t *bufs;              /* the pair's first byte */
	rte_iova_t iova;            /* its IOVA; RTE_BAD_IOVA: not contiguous (copy) */
	TAILQ_ENTRY(net_bufs_tail) link; /* on bufs_in_flight: let go, still pointed at */
};
TAILQ_HEAD(net_bufs_list, net_bufs_tail);

#define NET_DEFAULT_BUF (64u << 10) /* sndbuf and rcvbuf when 0 */
/* The largest TSO payload: an IPv4 packet and an mbuf's buf_len both stop
 * at 65,535 bytes, headers included. */
#define NET_TSO_MAX 65000u

/* The tail follows the ring and the receive buffer, on its own lines. */
static inline size_t
net_bufs_tail_offset(uint32_t sndbuf, uint32_t rcvbuf)
{
	return RTE_ALIGN_CEIL((size_t)(sndbuf ? sndbuf : NET_DEFAULT_BUF) +
			      (rcvbuf ? rcvbuf : NET_DEFAULT_BUF), RTE_CACHE_LINE_SIZE);
}

enum net_tcp_state {
	TCP_CLOSED = 0, /* slot free */
	TCP_SYN_SENT,
	TCP_SYN_RCVD,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
	TCP_STATE__COUNT
};

struct net_conn_key {
	uint32_t raddr; /* host order */
	uint16_t rport;
	uint16_t lport;
};

struct net_ooo_range {
	uint32_t start; /* sequence number of the first byte */
	uint32_t end;   /* one past the last */
};

#define NET_OOO_MAX 32
#define NET_NO_LISTENER 0xffff

enum {
	CF_ACK_NOW = 1u << 0,      /* send an ACK at the next output */
	CF_DELACK = 1u << 1,       /* an ACK is owed; the delayed-ACK timer runs */
	CF_FIN_QUEUED = 1u << 2,   /* the app closed: FIN after the data */
	CF_FIN_SENT = 1u << 3,     /* FIN has a sequence number (fin_seq) */
	CF_PEER_FIN = 1u << 4,     /* FIN received and processed */
	CF_APP_KNOWS = 1u << 5,    /* accepted/connected was delivered */
	CF_WANT_WRITE = 1u << 6,   /* call writable when space frees */
	CF_IN_RECOVERY = 1u << 7,  /* NewReno fast recovery */
	CF_RTT_TIMING = 1u << 8,   /* rtt_seq/rtt_start measure a segment */
	CF_ON_OUTPUT = 1u << 9,    /* linked on the stack's output list */
	CF_RELEASED = 1u << 10,    /* waiting on the release list */
	CF_PERSIST = 1u << 11,     /* zero window: probing */
	CF_SYNCOOKIE = 1u << 12,   /* created from a SYN cookie */
	CF_IN_DELIVERY = 1u << 13, /* inside recv: do not re-enter */
	CF_APP_CLOSED = 1u << 14,  /* net_tcp_close/abort called */
	CF_MAC_OK = 1u << 15,      /* peer_mac is known */
	CF_WS_OFFER = 1u << 16,    /* put a window scale option in our SYN */
	CF_PEER_FIN_OOO = 1u << 17, /* a FIN beyond a gap: rcv_fin_seq */
	CF_ACTIVE = 1u << 18,      /* opened by net_tcp_connect */
	CF_ORPHAN = 1u << 19,      /* closed by the app, not yet in TIME_WAIT: counted in orphans */
	CF_BUF_WAIT = 1u << 20,    /* on buf_waiters: a send found no buffer pair */
};

/* Deadlines (absolute us, 0 = off); the conn's one wheel timer is armed
 * for the earliest. The order matters: the first five share the timer's
 * cache line (see struct net_conn), TD_LINGER (closing only) is next. */
enum net_tcp_deadline {
	TD_RTX,      /* retransmission (also SYN, SYN-ACK, FIN) */
	TD_DELACK,   /* delayed ACK */
	TD_IDLE,     /* idle timeout */
	TD_APP,      /* the application's timer (net_tcp_set_timer) */
	TD_PERSIST,  /* zero-window probe */
	TD_LINGER,   /* TIME_WAIT end, FIN_WAIT_2 end */
	TD__COUNT
};

/* One connection slot: three hot cache lines with everything a request
 * and its response touch, then the cold part (handshake, close, RTT
 * estimation, recovery, out-of-order table). The send and receive
 * buffers are not part of the slot: `bufs` points at a pair taken from
 * the stack's pool while the connection holds bytes either way, and is
 * NULL while it is idle (see docs/net.md, "Memory"). tests/unit/net
 * checks the layout. */
struct net_conn {
	/* line 0: sequence space and windows, read by every segment */
	struct net_conn_key key;
	uint32_t flags;
	uint8_t state;
	uint8_t snd_wscale;   /* shift applied to the peer's window field */
	uint8_t rcv_wscale;   /* shift the peer applies to ours */
	uint8_t dupacks;
	uint16_t mss;         /* send MSS (peer's, bounded by our MTU) */
	uint8_t segs_unacked; /* full segments received since our last ACK */
	uint8_t backoff;
	uint32_t snd_una, snd_nxt, snd_max;
	uint32_t snd_wnd;     /* scaled */
	uint32_t max_snd_wnd; /* largest window the peer offered (RFC 5961) */
	uint32_t snd_wl1, snd_wl2;
	uint32_t cwnd, ssthresh;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;     /* right edge of the window last advertised */

	/* line 1: buffers, the application, the output list, the peer */
	struct net_stack *stack;
	void *ctx;
	uint8_t *bufs;        /* sndbuf bytes of send ring, then the receive buffer */
	struct net_sndbuf snd;
	struct net_rcvbuf rcv;
	TAILQ_ENTRY(net_conn) out_link;  /* output list / free list */
	struct rte_ether_addr peer_mac;
	uint8_t ooo_count;
	uint8_t retries;      /* consecutive RTO expirations */

	/* line 2: the timer and its deadlines (TD_LINGER spills into line 3) */
	struct net_timer timer;
	uint64_t deadline[TD__COUNT];

	/* cold */
	uint32_t iss, irs;
	uint32_t fin_seq;     /* valid with CF_FIN_SENT */
	uint32_t rcv_fin_seq; /* with CF_PEER_FIN_OOO */
	uint32_t recover, bytes_acked;
	uint32_t rtt_seq;
	uint32_t srtt, rttvar; /* us; srtt 0 = no sample yet */
	uint32_t rto;          /* us, before backoff */
	uint64_t rtt_start;
	uint16_t listen_idx;   /* SYN backlog accounting */
	struct net_ooo_range *ooo; /* from the stack's pool while ooo_count > 0 */
	TAILQ_ENTRY(net_conn) tw_link;   /* TIME_WAIT list (oldest first) */
	TAILQ_ENTRY(net_conn) wait_link; /* buf_waiters, with CF_BUF_WAIT */
} __rte_cache_aligned;
TAILQ_HEAD(net_conn_list, net_conn);

/* Bytes of the connection hash (rte_hash, extendable table) per slot. */
#define NET_HASH_BYTES_PER_CONN 64

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
/* net_tcp.c: the connection table */
int net_tcp_init(struct net_stack *s, char *err, size_t errlen);
void net_tcp_fini(struct net_stack *s);
void net_tcp_release_list(struct net_stack *s);
/* Frees the connections closed during the current event: a list check in
 * line, as every burst and poll makes it and the list is nearly always
 * empty. */
static inline void
net_tcp_release_pending(struct net_stack *s)
{
	if (!TAILQ_EMPTY(&s->release_list))
		net_tcp_release_list(s);
}
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
