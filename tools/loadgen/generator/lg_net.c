/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The lib/net transport (lg_net.h): port set-up, a net_stack and its
 * connections per worker lcore, RSS-chosen local ports, sends and receives.
 */
#include "lg_net.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_random.h>

#include "drivers/net/dpdk/dpdk_port.h"
#include "lg_control.h"
#include "lg_rss.h"
#include "net/net.h"

#define NET_BURST 32
#define NET_TX_RING 1024
#define NET_BUFSZ (64 * 1024)
#define NET_UDP_LOCAL_PORT 40000 /* worker q: LG_NET_UDP_PORTS from here + q * them */
/* With RSS over several queues, local ports are chosen from these ranges
 * (lg_rss): those whose replies come back to the worker's queue. */
#define NET_TCP_PORT_LO 1024
#define NET_UDP_PORT_HI 65535
_Static_assert(LG_NET_UDP_PORTS <= NET_MAX_LISTEN, "a stack listens on that many UDP ports");
/* After the run: FINs out and answered, or give up. */
#define NET_CLOSE_NS 300000000ULL

struct net_worker;

struct net_lconn {
	struct lg_conn lc;
	struct net_worker *nw;
	struct net_conn *nc;
	uint16_t udp_port;  /* UDP: our source port (flows spread over several) */
	bool up;
	bool ready;   /* on the worker's ready ring */
};

struct net_worker {
	struct lg_worker w;
	const struct lg_options *o;
	const struct dpdk_port *port;
	uint16_t queue;
	unsigned lcore;
	struct net_stack *s;
	struct net_lconn *conns;
	/* Closed-loop TCP: the connections that may have a request to send
	 * (connected, answered, writable again), so that a pass costs what
	 * happened, not a visit to each of 10K connections. Everything else
	 * (UDP, a rate, a paced trace) and every phase change visit them all. */
	bool use_ready;
	int seen_phase;
	uint32_t *ready;
	uint32_t ready_head, ready_n;
	struct net_udp_peer peer;
	uint16_t udp_ports[LG_NET_UDP_PORTS];
	/* RSS: each TCP connection's local port (NULL: the stack picks) */
	uint16_t *tcp_ports;
	char *buf;
	uint64_t now;
	int rc;
	char err[256];
};

static void
mark_ready(struct net_worker *nw, struct net_lconn *lc)
{
	if (!nw->use_ready || lc->ready)
		return;
	lc->ready = true;
	nw->ready[(nw->ready_head + nw->ready_n++) % nw->w.run->conns] =
		(uint32_t)(lc - nw->conns);
}

static void
on_connected(void *app, struct net_conn *c)
{
	struct net_lconn *lc = net_conn_ctx(c);

	lc->up = true;
	mark_ready(app, lc);
}

static void
on_writable(void *app, struct net_conn *c)
{
	mark_ready(app, net_conn_ctx(c));
}

static size_t
on_recv(void *app, struct net_conn *c, const uint8_t *data, size_t len)
{
	struct net_worker *nw = app;
	struct net_lconn *lc = net_conn_ctx(c);
	size_t used = lg_conn_input(&lc->lc, (const char *)data, len, nw->now);

	if (lc->lc.dead)
		net_tcp_abort(c); /* closed() follows before this returns */
	else
		mark_ready(nw, lc);
	return used;
}

static void
on_peer_closed(void *app, struct net_conn *c)
{
	(void)app;
	net_tcp_close(c);
}

static void
on_closed(void *app, struct net_conn *c, enum net_close_reason why)
{
	struct net_worker *nw = app;
	struct net_lconn *lc = net_conn_ctx(c);

	if (lc == NULL)
		return;
	lc->nc = NULL;
	lc->up = false;
	if (lc->lc.outstanding || lg_phase_get(nw->w.run) < LG_PHASE_DRAIN) {
		lg_conn_lost(&lc->lc, nw->now);
		nw->w.stats.conn_failed++;
		if (!nw->w.last_bad)
			nw->w.last_bad = why == NET_CLOSE_REFUSED ? "connection refused" :
					 why == NET_CLOSE_TIMEOUT ? "connection timed out" :
					 "connection closed by the server";
	}
	lc->lc.dead = true;
}

static void
on_udp(void *app, const struct net_udp_peer *peer, const uint8_t *data,
       size_t len)
{
	struct net_worker *nw = app;
	unsigned k = 0;
	int idx;

	if (len < 8 || peer->addr != nw->o->server_ip || peer->port != nw->o->port)
		return;
	while (k < LG_NET_UDP_PORTS && nw->udp_ports[k] != peer->local_port)
		k++;
	if (k == LG_NET_UDP_PORTS)
		return;
	/* Our port and the request id name the flow. */
	idx = lg_udp_flow_of(k, (uint16_t)(data[0] << 8 | data[1]), nw->w.run->conns,
			     LG_NET_UDP_PORTS);
	if (idx >= 0)
		lg_conn_udp_input(&nw->conns[idx].lc, data, len, nw->now);
}

static const struct net_app_ops lg_net_ops = {
	.connected = on_connected,
	.recv = on_recv,
	.writable = on_writable,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
	.udp_recv = on_udp,
};

static void
tcp_send(struct net_worker *nw, struct net_lconn *lc)
{
	const struct lg_workload *wl = &nw->w.run->wl;
	size_t space = net_tcp_send_space(lc->nc);
	struct lg_req *r;

	while ((r = lg_conn_next(&lc->lc, nw->now)) != NULL) {
		size_t need = lg_req_wire_size(wl, r), n;

		if (need > space || need > NET_BUFSZ)
			break;
		n = lg_req_build(wl, r, nw->buf, need);
		/* All or nothing, as space allowed it; nothing when no buffer
		 * pair could be had (the request stays prepared: lib/net calls
		 * again when memory returns, and so does the next pass). */
		if (net_tcp_send(lc->nc, nw->buf, n) != n)
			break;
		space -= n;
		lg_conn_commit(&lc->lc, nw->now);
	}
}

static void
udp_send(struct net_worker *nw, struct net_lconn *lc)
{
	const struct lg_workload *wl = &nw->w.run->wl;
	struct net_udp_peer peer = nw->peer;
	struct lg_req *r;

	peer.local_port = lc->udp_port;
	while ((r = lg_conn_next(&lc->lc, nw->now)) != NULL) {
		size_t n = lg_req_build(wl, r, nw->buf + 8, NET_BUFSZ - 8);

		lg_udp_hdr_write((uint8_t *)nw->buf, r->udp_id);
		if (net_udp_send(nw->s, &peer, nw->buf, n + 8) < 0)
			return; /* ARP pending or no TX slot: the same request later */
		lg_conn_commit(&lc->lc, nw->now);
	}
	lg_conn_udp_expire(&lc->lc, nw->now);
}

/* Every connection that may send does. */
static void
send_due(struct net_worker *nw)
{
	const unsigned conns = nw->w.run->conns;
	int phase = lg_phase_get(nw->w.run);

	if (nw->use_ready && phase == nw->seen_phase) {
		/* only those marked before this pass; a send marks none */
		for (uint32_t n = nw->ready_n; n > 0; n--) {
			struct net_lconn *lc = &nw->conns[nw->ready[nw->ready_head]];

			nw->ready_head = (nw->ready_head + 1) % conns;
			nw->ready_n--;
			lc->ready = false;
			if (lc->up)
				tcp_send(nw, lc);
		}
		return;
	}
	nw->seen_phase = phase;
	nw->ready_n = 0;
	for (unsigned i = 0; i < conns; i++) {
		struct net_lconn *lc = &nw->conns[i];

		lc->ready = false;
		if (nw->o->udp)
			udp_send(nw, lc);
		else if (lc->up)
			tcp_send(nw, lc);
	}
}

/* One pass: receive, send what is due, build and transmit. */
static void
loop_once(struct net_worker *nw, bool send)
{
	struct rte_mbuf *rx[NET_BURST], **tx;
	uint16_t n, m, sent = 0;

	nw->now = lg_now_ns();
	n = rte_eth_rx_burst(nw->port->port_id, nw->queue, rx, NET_BURST);
	if (n)
		net_stack_input(nw->s, rx, n);
	if (send)
		send_due(nw);
	net_stack_poll(nw->s);
	m = net_stack_tx_burst_prepare(nw->s, &tx);
	if (m) {
		/* what the NIC does not take stays queued in lib/net for the
		 * next turn; a second try for what wrapped round its ring */
		sent = rte_eth_tx_burst(nw->port->port_id, nw->queue, tx, m);
		net_stack_tx_burst_done(nw->s, sent);
		if (sent == m && (m = net_stack_tx_burst_prepare(nw->s, &tx)) > 0)
			net_stack_tx_burst_done(nw->s,
						rte_eth_tx_burst(nw->port->port_id, nw->queue, tx, m));
	}
}

static int
worker_main(void *arg)
{
	struct net_worker *nw = arg;
	const struct lg_run *run = nw->w.run;
	uint64_t end;
	bool open;

	nw->now = lg_now_ns();
	for (unsigned i = 0; i < run->conns; i++) {
		struct net_lconn *lc = &nw->conns[i];

		lc->nw = nw;
		if (nw->o->udp) {
			struct lg_udp_flow f;

			lg_udp_flow(i, run->conns, LG_NET_UDP_PORTS, &f);
			lc->lc.udp_id = f.id_base;
			lc->lc.udp_id_mask = f.id_mask;
			lc->udp_port = nw->udp_ports[f.port_idx];
			continue;
		}
		lc->nc = net_tcp_connect(nw->s, nw->o->server_ip, nw->o->port,
					 nw->tcp_ports ? nw->tcp_ports[i] : 0, lc);
		if (lc->nc == NULL) {
			nw->w.stats.conn_failed++;
			nw->w.last_bad = "net_tcp_connect failed";
		}
	}
	while (lg_phase_get(run) != LG_PHASE_STOP)
		loop_once(nw, true);
	/* Requests still unanswered after the drain are lost; then close
	 * gracefully so the server sees FINs, not silence. */
	nw->now = lg_now_ns();
	for (unsigned i = 0; i < run->conns; i++) {
		lg_conn_lost(&nw->conns[i].lc, nw->now);
		if (nw->conns[i].nc)
			net_tcp_close(nw->conns[i].nc);
	}
	end = lg_now_ns() + NET_CLOSE_NS;
	do {
		open = false;
		loop_once(nw, false);
		for (unsigned i = 0; i < run->conns; i++)
			open |= nw->conns[i].nc != NULL;
	} while (open && lg_now_ns() < end);
	return 0;
}

/* The worker's local ports. Without RSS (one queue, memif, af_packet) the
 * UDP ports are consecutive and TCP's are the stack's ephemeral ones, as
 * before; with RSS, each is one whose reply the NIC puts on queue q. */
static int
pick_ports(struct net_worker *nw, const struct lg_rss *rss, uint16_t q)
{
	const struct lg_options *o = nw->o;
	const struct lg_rss_flow f = {
		.server_ip = o->server_ip, .local_ip = o->local_ip, .server_port = o->port,
	};
	unsigned got;
	uint16_t start;

	if (rss == NULL) {
		for (unsigned k = 0; k < LG_NET_UDP_PORTS; k++)
			nw->udp_ports[k] = (uint16_t)(NET_UDP_LOCAL_PORT + q * LG_NET_UDP_PORTS + k);
		return 0;
	}
	got = lg_rss_pick_ports(rss, &f, q, NET_UDP_LOCAL_PORT, NET_UDP_PORT_HI,
				NET_UDP_LOCAL_PORT, nw->udp_ports, LG_NET_UDP_PORTS);
	if (got < LG_NET_UDP_PORTS) {
		snprintf(nw->err, sizeof(nw->err),
			 "queue %u: the RSS redirection table sends replies to only %u of "
			 "the UDP ports %u-%u there, %u needed: give fewer lcores (-l)",
			 q, got, NET_UDP_LOCAL_PORT, NET_UDP_PORT_HI, LG_NET_UDP_PORTS);
		return -1;
	}
	if (o->udp)
		return 0;
	nw->tcp_ports = calloc(o->run.conns, sizeof(*nw->tcp_ports));
	if (nw->tcp_ports == NULL)
		return -1;
	/* from a random port, as the stack's ephemeral ones: a run does not
	 * reuse the last run's 4-tuples, which the server may still hold */
	start = (uint16_t)(NET_TCP_PORT_LO + rte_rand_max(65536 - NET_TCP_PORT_LO));
	got = lg_rss_pick_ports(rss, &f, q, NET_TCP_PORT_LO, 65535, start, nw->tcp_ports,
				o->run.conns);
	if (got < o->run.conns) {
		snprintf(nw->err, sizeof(nw->err),
			 "queue %u: only %u of the local ports %u-65535 bring the server's "
			 "replies back to it (RSS), fewer than --conns %u: use fewer "
			 "connections per worker", q, got, NET_TCP_PORT_LO, o->run.conns);
		return -1;
	}
	return 0;
}

static int
worker_setup(struct net_worker *nw, const struct lg_options *o,
	     const struct dpdk_port *port, const struct lg_rss *rss, uint16_t q,
	     unsigned lcore)
{
	struct net_stack_config nc;
	char name[32];

	nw->o = o;
	nw->port = port;
	nw->queue = q;
	nw->lcore = lcore;
	nw->buf = malloc(NET_BUFSZ);
	nw->conns = calloc(o->run.conns, sizeof(*nw->conns));
	nw->ready = calloc(o->run.conns, sizeof(*nw->ready));
	if (!nw->buf || !nw->conns || !nw->ready)
		return -1;
	nw->use_ready = !o->udp && o->run.rate <= 0 &&
			!(o->run.wl.trace != NULL && o->run.trace_speed > 0);
	nw->seen_phase = -1;
	for (unsigned i = 0; i < o->run.conns; i++)
		if (lg_conn_init(&nw->conns[i].lc, &nw->w, lg_now_ns()) < 0)
			return -1;
	if (pick_ports(nw, rss, q) < 0)
		return -1;
	snprintf(name, sizeof(name), "lg%u", lcore);
	memset(&nc, 0, sizeof(nc));
	nc.name = name;
	nc.socket_id = (int)rte_lcore_to_socket_id(lcore);
	nc.mac = port->mac;
	nc.ip = o->local_ip;
	nc.prefix_len = o->prefix_len;
	nc.mtu = port->mtu;
	nc.tx_pool = port->pools[q];
	nc.tx_ring_size = NET_TX_RING;
	nc.rx_cksum_offload = port->rx_cksum;
	nc.tx_cksum_offload = port->tx_cksum;
	nc.rx_ip_cksum_offload = port->rx_ip_cksum;
	nc.tx_ip_cksum_offload = port->tx_ip_cksum;
	memcpy(nc.udp_ports, nw->udp_ports, sizeof(nw->udp_ports));
	nc.max_conns = o->run.conns + 8;
	nc.ops = &lg_net_ops;
	nc.app_arg = nw;
	nw->s = net_stack_create(&nc, nw->err, sizeof(nw->err));
	if (nw->s == NULL)
		return -1;
	nw->peer.addr = o->server_ip;
	nw->peer.port = o->port;
	nw->peer.local_port = nc.udp_ports[0];
	return 0;
}

/* With RSS over several queues, the port's key and table into *rss so
 * that each worker picks local ports its replies come back to; NULL when
 * the port spreads nothing (one queue, no RSS: memif pairs queue q with
 * the server's queue q). -1 with a message when the port hashes in a way
 * that no local port can steer. */
static int
rss_of_port(const struct dpdk_port *port, bool udp, struct lg_rss *rss,
	    const struct lg_rss **out)
{
	const uint64_t l4 = udp ? RTE_ETH_RSS_NONFRAG_IPV4_UDP : RTE_ETH_RSS_NONFRAG_IPV4_TCP;
	const uint64_t partial = RTE_ETH_RSS_L3_SRC_ONLY | RTE_ETH_RSS_L3_DST_ONLY |
				 RTE_ETH_RSS_L4_SRC_ONLY | RTE_ETH_RSS_L4_DST_ONLY;

	*out = NULL;
	if (!port->rss || port->nb_queues < 2)
		return 0;
	if ((port->rss_hf & l4) == 0 || (port->rss_hf & partial) != 0) {
		fprintf(stderr, "loadgen: port %u (%s) hashes IPv4/%s without both ports "
			"(RSS hf 0x%" PRIx64 "): replies cannot be steered to each worker's "
			"queue by our port; run one worker lcore\n", port->port_id,
			port->driver, udp ? "UDP" : "TCP", port->rss_hf);
		return -1;
	}
	if (lg_rss_init(rss, port->rss_key, port->rss_key_len, port->reta,
			port->reta_size) < 0) {
		fprintf(stderr, "loadgen: port %u (%s): RSS key of %u bytes or redirection "
			"table of %u entries unusable (keys of %u-%u bytes in whole words, "
			"tables of 1-%u): run one worker lcore\n", port->port_id,
			port->driver, port->rss_key_len, port->reta_size, LG_RSS_KEY_MIN,
			LG_RSS_KEY_MAX, LG_RSS_RETA_MAX);
		return -1;
	}
	*out = rss;
	return 0;
}

/* The stack's and the port's loss counters, summed over lcores: a run with
 * retransmissions or drops says so next to its numbers. */
static void
report_net(struct net_worker *nw, unsigned n, const struct dpdk_port *port)
{
	static const enum net_counter_id ids[] = {
		NET_C_tcp_retransmits, NET_C_tcp_rto_expired, NET_C_tcp_fast_retransmits,
		NET_C_tx_nic_deferred, NET_C_tx_queue_full, NET_C_mempool_empty,
		NET_C_drop_tcp_out_of_window, NET_C_tcp_ooo_segs, NET_C_drop_chained,
	};
	struct dpdk_port_stats ps;

	fprintf(stderr, "loadgen: net:");
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		uint64_t sum = 0;

		for (unsigned i = 0; i < n; i++)
			sum += net_stack_counter(nw[i].s, ids[k]);
		fprintf(stderr, " %s %llu", net_counter_name(ids[k]),
			(unsigned long long)sum);
	}
	dpdk_port_stats(port, &ps);
	fprintf(stderr, " port_imissed %llu port_oerrors %llu rx_nombuf %llu\n",
		(unsigned long long)ps.imissed, (unsigned long long)ps.oerrors,
		(unsigned long long)ps.rx_nombuf);
}

int
lg_net_run(struct lg_options *o, struct lg_stats *total, double *measure_s)
{
	unsigned nworkers = rte_lcore_count() - 1, lcores[DPDK_PORT_MAX_QUEUES];
	unsigned lcore, i = 0;
	struct dpdk_port port;
	struct dpdk_port_config pc;
	struct lg_rss rss_buf;
	const struct lg_rss *rss;
	struct net_worker *nw;
	struct lg_worker **w;
	char err[512];
	int rc;

	if (nworkers == 0 || nworkers > DPDK_PORT_MAX_QUEUES) {
		fprintf(stderr, "loadgen: --stack net needs 1..%d worker lcores besides "
			"the main one (-l MAIN,WORKERS)\n", DPDK_PORT_MAX_QUEUES);
		return -1;
	}
	RTE_LCORE_FOREACH_WORKER(lcore)
		lcores[i++] = lcore;
	memset(&pc, 0, sizeof(pc));
	pc.port_id = -1;
	pc.nb_queues = (uint16_t)nworkers;
	pc.lcores = lcores;
	pc.extra_mbufs = NET_TX_RING + NET_TX_BULK + 1024;
	pc.link_timeout_ms = 5000;
	if (dpdk_port_setup(&port, &pc, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: %s\n", err);
		return -1;
	}
	if (rss_of_port(&port, o->udp, &rss_buf, &rss) < 0) {
		dpdk_port_teardown(&port);
		return -1;
	}
	if (rss != NULL)
		fprintf(stderr, "loadgen: RSS over %u queues (%u-entry table): each worker's "
			"local ports are those whose replies come back to its queue\n",
			nworkers, port.reta_size);
	o->run.workers = nworkers;
	nw = calloc(nworkers, sizeof(*nw));
	w = calloc(nworkers, sizeof(*w));
	if (!nw || !w) {
		fprintf(stderr, "loadgen: out of memory\n");
		return -1;
	}
	for (i = 0; i < nworkers; i++) {
		lg_worker_init(&nw[i].w, &o->run, i, o->seed);
		w[i] = &nw[i].w;
		if (worker_setup(&nw[i], o, &port, rss, (uint16_t)i, lcores[i]) < 0) {
			fprintf(stderr, "loadgen: lcore %u: %s\n", lcores[i],
				nw[i].err[0] ? nw[i].err : "out of memory");
			return -1;
		}
	}
	for (i = 0; i < nworkers; i++)
		rte_eal_remote_launch(worker_main, &nw[i], lcores[i]);
	rc = lg_control_run(o, w, nworkers, measure_s);
	rte_eal_mp_wait_lcore();
	lg_control_collect(w, nworkers, total);
	report_net(nw, nworkers, &port);
	for (i = 0; i < nworkers; i++) {
		net_stack_destroy(nw[i].s);
		for (unsigned j = 0; j < o->run.conns; j++)
			lg_conn_free(&nw[i].conns[j].lc);
		free(nw[i].conns);
		free(nw[i].ready);
		free(nw[i].tcp_ports);
		free(nw[i].buf);
	}
	dpdk_port_teardown(&port);
	free(nw);
	free(w);
	return rc;
}
