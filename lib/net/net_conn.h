/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A TCP connection slot, struct net_conn: its states, flags and
 * deadlines, the key it is found by, and the layout of its cache lines;
 * and the buffer pair it holds while it has bytes (struct net_bufs_tail
 * at the pair's end). The TCP files (net_tcp.h) and the stack's sizing
 * (net_stack.c) use it.
 */
#ifndef SEGCACHED_NET_CONN_H
#define SEGCACHED_NET_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net/net_buf.h"
#include "net/net_timer.h"

struct net_stack;

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

/* Bytes of the connection hash (rte_hash, extendable table) per slot. */
#define NET_HASH_BYTES_PER_CONN 64


#endif /* SEGCACHED_NET_CONN_H */
