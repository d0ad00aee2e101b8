/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libFuzzer target for lib/net's packet input path.
 *
 * Each input is a little program run against a fresh stack (198.18.0.2,
 * TCP and UDP port 11211, an echoing application that sometimes closes):
 *
 *   op 0: raw frame       len:u16 bytes       injected as is
 *   op 1: fixed frame     len:u16 bytes       IPv4/TCP/UDP checksums fixed first
 *   op 2: time            ms:u16              advance the clock
 *   op 3: TCP segment     port flags dseq:i16 dack:i16 win:u16 olen opts plen:u16 payload
 *                         headers built here, sequence numbers relative to
 *                         what each side last sent, so segments land in the
 *                         window and the state machine gets deep
 *   op 4: app action      which               close / abort / send / set the
 *                                             application timer (which aborts or
 *                                             closes when it fires) on a connection
 *
 * TCP segments go to port 11211 or, with bit 7 of their port byte, to the
 * admin port 11212, which keeps 2 of the 8 slots reserved.
 *
 * After every op the stack is polled and its output parsed (to track
 * sequence numbers) and freed. ASan/UBSan find the rest; a leak check
 * runs at the end of each input (every mbuf back in the pool).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "net/net.h"

#define SRV_IP 0xc6120002u /* 198.18.0.2 */
#define CLI_IP 0xc6120001u /* 198.18.0.1 */
#define PORT 11211
#define ADMIN_PORT 11212
#define NPEERS 8

static struct rte_mempool *pool;
static struct net_stack *stack;
/* Segments sent without a copy, which "the NIC" holds until the next
 * drain (or past the stack's end): their buffer pairs must outlive the
 * connections' hold on them. */
static struct rte_mbuf *held[64];
static unsigned nheld;

static void
free_held(void)
{
	rte_pktmbuf_free_bulk(held, nheld);
	nheld = 0;
}
static uint64_t now_us;
static struct net_conn *conns[16];
static unsigned nconns;

struct peer {
	uint32_t snd_nxt; /* next sequence number the fuzzed peer uses */
	uint32_t rcv_nxt; /* after the stack's last segment to this port */
};
static struct peer peers[NPEERS];

static uint64_t
clock_fn(void *arg)
{
	(void)arg;
	return now_us;
}

static int
on_accepted(void *app, struct net_conn *c)
{
	(void)app;
	if (nconns < 16)
		conns[nconns++] = c;
	return 0;
}

static size_t
on_recv(void *app, struct net_conn *c, const uint8_t *data, size_t len)
{
	size_t room, n;
	uint8_t *win;

	(void)app;
	/* Echo what fits; leave the rest (exercises partial consumption).
	 * Payloads of odd length are composed in the send ring's window, as
	 * segcached composes its replies (net_tcp_send_window/commit). */
	if (len % 2 == 0)
		return net_tcp_send(c, data, len);
	win = net_tcp_send_window(c, &room);
	if (win == NULL)
		return 0;
	n = len < room ? len : room;
	memcpy(win, data, n);
	if (net_tcp_send_commit(c, win, n) != n)
		abort(); /* a window just returned takes what fits in it */
	return n;
}

static void
forget(struct net_conn *c)
{
	for (unsigned i = 0; i < nconns; i++)
		if (conns[i] == c)
			conns[i] = conns[--nconns];
}

static void
on_closed(void *app, struct net_conn *c, enum net_close_reason why)
{
	(void)app;
	(void)why;
	forget(c);
}

static void
on_peer_closed(void *app, struct net_conn *c)
{
	(void)app;
	net_tcp_close(c);
}

static void
on_udp(void *app, const struct net_udp_peer *p, const uint8_t *d, size_t len)
{
	(void)app;
	net_udp_send(stack, p, d, len);
}

static void
on_timer(void *app, struct net_conn *c)
{
	(void)app;
	/* as segcached's request timeout does; or a graceful close */
	if (net_stack_now(stack) & 1024)
		net_tcp_close(c);
	else
		net_tcp_abort(c);
}

/* Reads every byte it is shown, so that a payload located past the
 * frame's end is caught (ASan) in the first phase of a burst too. */
static void
on_rx_hint(void *app, const struct net_rx_hint *p, unsigned n)
{
	static volatile uint8_t sink;

	(void)app;
	for (unsigned i = 0; i < n; i++)
		for (uint16_t j = 0; j < p[i].len; j++)
			sink ^= p[i].data[j];
}

static const struct net_app_ops ops = {
	.accepted = on_accepted,
	.recv = on_recv,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
	.udp_recv = on_udp,
	.timer = on_timer,
	.rx_hint = on_rx_hint,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { "fuzz_net", "--no-huge", "--no-shconf", "--no-pci", "-l", "0",
			"--log-level=error" };

	(void)argc;
	(void)argv;
	if (rte_eal_init(RTE_DIM(eal), eal) < 0) {
		fprintf(stderr, "fuzz_net: rte_eal_init failed\n");
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_net", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL)
		abort();
	return 0;
}

static void
fix_checksums(uint8_t *f, size_t len)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	size_t ihl, total;

	if (len < 34)
		return;
	ihl = (ip->version_ihl & 0xf) * 4u;
	total = rte_be_to_cpu_16(ip->total_length);
	if (ihl < 20 || 14 + ihl > len)
		return;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (total < ihl + 20 || 14 + total > len)
		return;
	if (ip->next_proto_id == IPPROTO_TCP) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ip + ihl);

		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	} else if (ip->next_proto_id == IPPROTO_UDP) {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)((uint8_t *)ip + ihl);

		uh->dgram_cksum = 0;
		uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
	}
}

static void
inject(struct net_stack *s, const uint8_t *f, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	if (m == NULL)
		return;
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(p, f, len);
	net_stack_input(s, &m, 1);
}

static void
poll_and_drain(struct net_stack *s)
{
	struct rte_mbuf **tx;
	uint16_t n;

	net_stack_poll(s);
	free_held();
again: /* the queue is a ring: what wrapped comes in a second burst */
	n = net_stack_tx_burst_prepare(s, &tx);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(tx[i], const uint8_t *);
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(d + 14);

		if (tx[i]->data_len >= 54 && ip->next_proto_id == IPPROTO_TCP) {
			const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
			unsigned port = rte_be_to_cpu_16(th->dst_port) - 40000;
			uint32_t plen = rte_be_to_cpu_16(ip->total_length) - 20 -
					(th->data_off >> 4) * 4u;

			if (port < NPEERS)
				peers[port].rcv_nxt = rte_be_to_cpu_32(th->sent_seq) + plen +
					!!(th->tcp_flags & RTE_TCP_SYN_FLAG) +
					!!(th->tcp_flags & RTE_TCP_FIN_FLAG);
		}
		if (tx[i]->nb_segs > 1 && nheld < RTE_DIM(held))
			held[nheld++] = tx[i];
		else
			rte_pktmbuf_free(tx[i]);
	}
	net_stack_tx_burst_done(s, n);
	if (n > 0)
		goto again;
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static int
take(struct reader *r, void *out, size_t n)
{
	if (r->left < n)
		return -1;
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

static void
tcp_op(struct net_stack *s, struct reader *r)
{
	uint8_t port, flags, olen, frame[1600];
	int16_t dseq, dack;
	uint16_t win, plen;
	uint8_t opts[40];
	struct peer *pe;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + 14);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	size_t hl, l4;

	if (take(r, &port, 1) || take(r, &flags, 1) || take(r, &dseq, 2) || take(r, &dack, 2) ||
	    take(r, &win, 2) || take(r, &olen, 1))
		return;
	olen = (uint8_t)((olen % 41) & ~3u);
	if (take(r, opts, olen) || take(r, &plen, 2))
		return;
	plen %= 1400;
	if (r->left < plen)
		plen = (uint16_t)r->left;
	pe = &peers[port % NPEERS];
	hl = sizeof(*th) + olen;
	l4 = hl + plen;
	memset(frame, 0, 14 + 20 + hl);
	frame[0] = 0x02, frame[5] = 0x02; /* to 02:00:00:00:00:02 */
	frame[6] = 0x02, frame[11] = 0x01;
	frame[12] = 0x08;
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + l4));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(CLI_IP);
	ip->dst_addr = rte_cpu_to_be_32(SRV_IP);
	th->src_port = rte_cpu_to_be_16((uint16_t)(40000 + port % NPEERS));
	th->dst_port = rte_cpu_to_be_16((port & 0x80) ? ADMIN_PORT : PORT);
	th->sent_seq = rte_cpu_to_be_32(pe->snd_nxt + (int32_t)dseq);
	th->recv_ack = rte_cpu_to_be_32(pe->rcv_nxt + (int32_t)dack);
	th->data_off = (uint8_t)((hl / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(win);
	memcpy(th + 1, opts, olen);
	memcpy((uint8_t *)th + hl, r->p, plen);
	r->p += plen;
	r->left -= plen;
	fix_checksums(frame, 14 + 20 + l4);
	if (dseq == 0)
		pe->snd_nxt += plen + !!(flags & RTE_TCP_SYN_FLAG) + !!(flags & RTE_TCP_FIN_FLAG);
	inject(s, frame, 14 + 20 + l4);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_stack_config cfg = { 0 };
	struct reader r = { data, size };
	unsigned in_use = rte_mempool_in_use_count(pool);
	struct net_stack *s;
	char err[256];
	uint8_t op;

	cfg.name = "fuzz";
	cfg.socket_id = SOCKET_ID_ANY;
	memcpy(cfg.mac.addr_bytes, "\x02\x00\x00\x00\x00\x02", 6);
	cfg.ip = SRV_IP;
	cfg.prefix_len = 24;
	cfg.tx_pool = pool;
	cfg.tx_ring_size = 64;
	cfg.tcp_ports[0] = PORT;
	cfg.tcp_ports[1] = ADMIN_PORT;
	cfg.reserved_port = ADMIN_PORT;
	cfg.reserved_slots = 2;
	cfg.udp_ports[0] = PORT;
	cfg.max_conns = 8;
	cfg.syn_backlog = 2;
	cfg.sndbuf = 4096;
	cfg.tx_zero_copy_min = 64;
	/* checksums "offloaded", so that segments of several MSS (TSO) are
	 * built too */
	cfg.tx_cksum_offload = true;
	cfg.tx_tso_max = 65000;
	cfg.rcvbuf = 4096;
	cfg.ooo_max = 4;
	cfg.idle_timeout_us = 30 * 1000 * 1000;
	cfg.clock = clock_fn;
	cfg.ops = &ops;
	cfg.secret_seed = 1;
	now_us = 1000000000ull;
	nconns = 0;
	for (unsigned i = 0; i < NPEERS; i++)
		peers[i] = (struct peer){ .snd_nxt = 1000 * (i + 1), .rcv_nxt = 0 };
	s = net_stack_create(&cfg, err, sizeof(err));
	if (s == NULL) {
		fprintf(stderr, "fuzz_net: %s\n", err);
		abort();
	}
	stack = s;

	while (take(&r, &op, 1) == 0) {
		uint16_t len;
		uint8_t frame[2048];

		switch (op % 5) {
		case 0:
		case 1:
			if (take(&r, &len, 2))
				break;
			len %= sizeof(frame);
			if (r.left < len)
				len = (uint16_t)r.left;
			memcpy(frame, r.p, len);
			r.p += len;
			r.left -= len;
			if (op % 5 == 1)
				fix_checksums(frame, len);
			if (len > 0)
				inject(s, frame, len);
			break;
		case 2:
			if (take(&r, &len, 2) == 0)
				now_us += (uint64_t)len * 1000;
			break;
		case 3:
			tcp_op(s, &r);
			break;
		case 4:
			if (nconns > 0 && take(&r, &op, 1) == 0) {
				struct net_conn *c = conns[op % nconns];

				if ((op >> 4) % 4 == 0)
					net_tcp_close(c);
				else if ((op >> 4) % 4 == 1)
					net_tcp_abort(c);
				else if ((op >> 4) % 4 == 2)
					net_tcp_send(c, "fuzz", 4);
				else
					net_tcp_set_timer(c, (op & 8) ? 0 :
							  now_us + (op & 7) * 100000ull);
			}
			break;
		}
		poll_and_drain(s);
	}
	/* Let every timer run out, then tear down. */
	for (int i = 0; i < 8; i++) {
		now_us += 60ull * 1000 * 1000;
		poll_and_drain(s);
	}
	net_stack_destroy(s);
	free_held(); /* the last of them free their pairs */
	if (rte_mempool_in_use_count(pool) != in_use) {
		fprintf(stderr, "fuzz_net: %u mbufs leaked\n",
			rte_mempool_in_use_count(pool) - in_use);
		abort();
	}
	return 0;
}
