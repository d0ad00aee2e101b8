/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The native stack behind native_stack_ops: set-up, the lcore loop, stats.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "drivers/net/native/native_private.h"
#include "util/util_err.h"

RTE_LOG_REGISTER(native_logtype, segcached.net.native, NOTICE);

const char *const native_counter_names[NATIVE_C_MAX] = {
#define NATIVE_COUNTER_NAME(name, desc) #name,
	NATIVE_COUNTERS(NATIVE_COUNTER_NAME)
#undef NATIVE_COUNTER_NAME
};

/* How long a stopping lcore keeps serving so that its connections close
 * with FIN exchanges rather than silently. */
#define DRAIN_MS 500

/* Worker lcores available besides the main lcore. */
static unsigned
worker_lcores(void)
{
	unsigned n = rte_lcore_count();

	return n > 0 ? n - 1 : 0;
}

/* Connection slots per lcore. RSS spreads connections evenly only on
 * average: an lcore gets room for twice its share (never more than -c),
 * and for connections that still hold a slot after closing (LAST_ACK,
 * TIME_WAIT). A slot costs about 400 bytes; TCP buffers are taken only
 * while a connection holds bytes (docs/net.md, "Memory"). */
static uint32_t
slots_per_lcore(const struct stack_config *cfg, unsigned nworkers)
{
	uint64_t share = 2 * (uint64_t)cfg->max_conns / nworkers + 64;

	return (uint32_t)RTE_MIN(share, (uint64_t)cfg->max_conns) + cfg->max_conns / 8 + 16 +
	       (cfg->admin_port != 0 ? STACK_ADMIN_CONNS : 0);
}

/* --tcp-buffer-memory, per lcore: the buffer pairs lib/net may hold at
 * once (0: one per slot, no limit). The budget is split evenly, as RSS
 * spreads the connections; an lcore keeps a few pairs whatever the
 * budget, so that some requests are always served, and never more pairs
 * than slots. */
static uint32_t
buf_pairs_per_lcore(const struct stack_config *cfg, unsigned nworkers)
{
	uint32_t slots = slots_per_lcore(cfg, nworkers);
	uint64_t pairs;

	if (cfg->native.tcp_buffer_memory == 0)
		return 0;
	pairs = cfg->native.tcp_buffer_memory / nworkers / NATIVE_BUF_PAIR;
	return (uint32_t)RTE_MIN(RTE_MAX(pairs, (uint64_t)NATIVE_MIN_BUF_PAIRS),
				 (uint64_t)slots);
}

/* --max-conns-per-source N, per lcore. Counting on each lcore alone keeps
 * accepts free of any line another lcore writes; RSS spreads one source's
 * connections over the lcores by their ports, evenly only on average. So
 * an lcore admits min(N, 2N/W + 8) of one source, as the slots above give
 * room for twice an lcore's share: a source below N is as good as never
 * refused, and one source holds at most about 2N + 8W connections in all
 * (exactly N with one worker lcore). */
static uint32_t
source_limit_per_lcore(unsigned limit, unsigned nworkers)
{
	uint64_t share = 2 * (uint64_t)limit / nworkers + 8;

	return (uint32_t)RTE_MIN(share, (uint64_t)limit);
}

/* lib/net's TX array: every connection may have a segment to send in one
 * loop iteration, within reason. */
static uint16_t
tx_array_size(const struct stack_config *cfg, unsigned nworkers)
{
	uint32_t n = slots_per_lcore(cfg, nworkers);

	return (uint16_t)RTE_MIN(RTE_MAX(n, 512u), 4096u);
}

/* EAL memory for --no-huge, before the EAL starts: per worker its
 * connection slots and their state, the TCP buffers they may hold at
 * once (a pair per slot, or --tcp-buffer-memory's share and the admin
 * port's reserved pairs) and its mbuf pool. */
static unsigned
eal_memory_mb(unsigned max_conns, size_t tcp_buffer_memory, unsigned lcores)
{
	/* an admin port or not: its slots are counted either way */
	const struct stack_config cfg = {
		.max_conns = max_conns,
		.admin_port = 1,
		.native.tcp_buffer_memory = tcp_buffer_memory,
	};
	unsigned workers = RTE_MAX(lcores, 2u) - 1;
	uint64_t slots = slots_per_lcore(&cfg, workers);
	uint64_t pairs = buf_pairs_per_lcore(&cfg, workers);
	/* a budget leaves the admin port pairs of its own beyond it */
	uint64_t per = slots * 4096 +
		       (pairs != 0 ? pairs + NET_RESERVED_BUF_PAIRS : slots) * NATIVE_BUF_PAIR +
		       16384ull * 2600;

	return (unsigned)((workers * per) >> 20) + 128;
}

/* Whether the port's link is up now. */
static bool
link_is_up(uint16_t port)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

/* An empty RX burst in this many looks at the link again (see worker_main). */
#define LINK_CHECK_IDLE_LOOPS 1024

static __attribute__((hot)) int
worker_main(void *arg)
{
	struct native_worker *w = arg;
	struct native *nat = w->nat;
	struct net_stack *s = w->stack;
	const uint16_t port = nat->port.port_id;
	const uint16_t q = (uint16_t)w->id;
	struct rte_mbuf *rx[NATIVE_BURST];
	/* A port is polled only while its link was last seen up. net_memif
	 * computes a queue's ring from the peer's regions before it checks
	 * that the peer is connected: a burst that straddles the connect
	 * (the control thread mapping the regions) used a ring pointer of
	 * regions not yet mapped and the lcore died in eth_memif_rx (7
	 * lcores on 2 CPUs: 2 runs in 50 of the 16-core script's top memif
	 * point). The link goes up once the connect is complete. An idle
	 * lcore looks again now and then, so a peer that leaves and comes
	 * back is waited for too; a disconnect itself unmaps the regions
	 * under a burst in flight, which no caller can prevent. */
	bool port_up = false;
	unsigned idle = 0;

	uint64_t drain_end = 0;

	NATIVE_LOG(INFO, "lcore %u serves queue %u of port %u", w->lcore, q, port);
	for (;;) {
		struct rte_mbuf **tx;
		uint16_t n, m, sent = 0;
		uint64_t start = rte_rdtsc();

		if (unlikely(atomic_load_explicit(&nat->stop, memory_order_relaxed))) {
			/* Stopping: FIN every connection and keep the loop
			 * running a moment so that the FINs go out and are
			 * acknowledged; then leave whatever remains. */
			if (drain_end == 0) {
				drain_end = rte_get_timer_cycles() +
					    rte_get_timer_hz() * DRAIN_MS / 1000;
				native_conn_close_all(w);
			}
			if (w->conns == 0 || rte_get_timer_cycles() > drain_end)
				break;
		}

		if (unlikely(!port_up)) {
			port_up = link_is_up(port);
			if (!port_up) {
				net_stack_poll(s);
				rte_pause();
				continue;
			}
		}
		n = rte_eth_rx_burst(port, q, rx, NATIVE_BURST);
		if (n > 0)
			net_stack_input(s, rx, n);
		else if (unlikely(++idle == LINK_CHECK_IDLE_LOOPS)) {
			idle = 0;
			port_up = link_is_up(port);
		}
		net_stack_poll(s);
		/* What the NIC does not take stays queued in lib/net and goes
		 * first next time round, after the RX burst that may have let
		 * the NIC free descriptors. A second try only for what wrapped
		 * round the end of lib/net's ring. */
		m = net_stack_tx_burst_prepare(s, &tx);
		if (m > 0) {
			uint16_t more;

			sent = rte_eth_tx_burst(port, q, tx, m);
			net_stack_tx_burst_done(s, sent);
			if (sent == m && (more = net_stack_tx_burst_prepare(s, &tx)) > 0)
				net_stack_tx_burst_done(s, rte_eth_tx_burst(port, q, tx, more));
		}
		NATIVE_INC(w, loops);
		if (n > 0 || m > 0) {
			NATIVE_INC(w, busy_loops);
			NATIVE_ADD(w, busy_cycles, rte_rdtsc() - start);
		}
	}
	return 0;
}

static int
worker_init(struct native *nat, struct native_worker *w, unsigned id, unsigned lcore,
	    char *err, size_t errlen)
{
	const struct stack_config *cfg = &nat->cfg;
	struct net_stack_config nc;
	char name[32], why[256];

	w->nat = nat;
	w->id = id;
	w->lcore = lcore;
	rte_spinlock_init(&w->open_lock);
	w->ew = engine_worker_create(cfg->engine);
	if (w->ew == NULL)
		return util_fail(err, errlen, "cannot create an engine worker for lcore %u", lcore);
	snprintf(name, sizeof(name), "lcore%u", lcore);
	memset(&nc, 0, sizeof(nc));
	nc.name = name;
	nc.socket_id = (int)rte_lcore_to_socket_id(lcore);
	nc.mac = nat->port.mac;
	nc.ip = cfg->native.ip;
	nc.prefix_len = cfg->native.prefix_len;
	nc.mtu = nat->port.mtu;
	nc.tx_pool = nat->port.pools[id];
	nc.tx_ring_size = tx_array_size(cfg, nat->nworkers);
	nc.rx_cksum_offload = nat->port.rx_cksum;
	nc.tx_cksum_offload = nat->port.tx_cksum;
	nc.rx_ip_cksum_offload = nat->port.rx_ip_cksum;
	nc.tx_ip_cksum_offload = nat->port.tx_ip_cksum;
	/* Without a copy only where the CPU then never reads the bytes: with
	 * the checksum in software it reads them anyway, and a copy of bytes
	 * in cache costs what the second mbuf does (docs/bench/journal/native-hot-path.md). */
	nc.tx_zero_copy_min =
		nat->port.tx_multi_seg && nat->port.tx_cksum ? NATIVE_TX_ZERO_COPY_MIN : 0;
	nc.tx_tso_max = nat->port.tx_tso ? NATIVE_TX_TSO_MAX : 0;
	nc.tcp_ports[0] = cfg->tcp_port;
	nc.udp_ports[0] = cfg->udp_port;
	nc.max_conns = slots_per_lcore(cfg, nat->nworkers);
	if (cfg->admin_port != 0) {
		/* the admin port keeps slots of its own: a full table (clients
		 * at -c, SYN_RCVD from a flood, closing ones) cannot lock out
		 * `stats` */
		nc.tcp_ports[1] = cfg->admin_port;
		nc.reserved_port = cfg->admin_port;
		nc.reserved_slots = STACK_ADMIN_CONNS;
	}
	nc.sndbuf = NATIVE_SNDBUF;
	nc.rcvbuf = NATIVE_RCVBUF;
	nc.max_buf_pairs = buf_pairs_per_lcore(cfg, nat->nworkers);
	nc.idle_timeout_us = (uint64_t)cfg->idle_timeout_s * 1000000u;
	/* a handshake lib/net has no slot for gets what -c refuses with */
	nc.full_reply = NATIVE_TOO_MANY_CONNS;
	nc.udp_off_subnet = cfg->native.udp_any_source;
	/* struct stack_cidr and struct net_cidr are the same two words */
	RTE_BUILD_BUG_ON(sizeof(struct stack_cidr) != sizeof(struct net_cidr));
	nc.allow = (const struct net_cidr *)cfg->allow;
	nc.n_allow = cfg->n_allow;
	nc.ops = &native_app_ops;
	nc.app_arg = w;
	w->stack = net_stack_create(&nc, why, sizeof(why));
	if (w->stack == NULL)
		return util_fail(err, errlen,
				 "lcore %u: cannot create its TCP/IP stack: %s "
				 "(%u connection slots, %u KiB of buffers each while busy; "
				 "lower --max-conns, or raise -m with --no-huge)",
				 lcore, why, nc.max_conns, (unsigned)(NATIVE_BUF_PAIR >> 10));
	w->udp_cmd = cmd_conn_create(cfg->cmd, w->ew, true);
	if (w->udp_cmd == NULL || proto_out_init(&w->out, 0, nat->out_limit) < 0)
		return util_fail(err, errlen, "lcore %u: out of memory", lcore);
	if (cfg->max_conns_per_source != 0) {
		/* never more sources than the lcore has connection slots */
		w->sources = stack_sources_create(nc.max_conns, why, sizeof(why));
		if (w->sources == NULL)
			return util_fail(err, errlen, "lcore %u: %s", lcore, why);
		w->source_limit = source_limit_per_lcore(cfg->max_conns_per_source,
							 nat->nworkers);
	}
	return 0;
}

static void
worker_fini(struct native_worker *w)
{
	/* Open connections are dropped; on_closed frees each. */
	net_stack_destroy(w->stack);
	w->stack = NULL;
	native_conn_free_all(w);
	stack_sources_destroy(w->sources);
	w->sources = NULL;
	cmd_conn_destroy(w->udp_cmd);
	w->udp_cmd = NULL;
	proto_out_fini(&w->out);
	engine_worker_destroy(w->ew);
	w->ew = NULL;
}

static void native_destroy(struct stack *s);

/* Sets up the port, the per-lcore stacks and engine workers. Its part of
 * cfg: the shared settings and cfg->native; cfg is kept by value, the
 * memory its pointers point to must outlive the stack. */
static struct stack *
native_create(const struct stack_config *cfg, char *err, size_t errlen, bool *bind_failed)
{
	unsigned avail = worker_lcores(), nworkers, lcores[DPDK_PORT_MAX_QUEUES];
	struct dpdk_port_config pc;
	struct native *nat;
	unsigned lcore, i = 0;

	*bind_failed = false;
	if (avail == 0) {
		util_fail(err, errlen,
			  "the native stack needs at least two lcores: "
			  "the main lcore runs the control\n"
			  "  loop and each worker lcore serves one queue; "
			  "give e.g. --lcores 0-1 (or the EAL's -l 0-1 before a '--')");
		return NULL;
	}
	nworkers = cfg->native.queues ? cfg->native.queues : avail;
	if (nworkers > avail) {
		util_fail(err, errlen,
			  "--queues %u needs %u worker lcores besides the main lcore, "
			  "but the EAL has %u;\n"
			  "  give more lcores (e.g. -l 0-%u) or fewer queues",
			  cfg->native.queues, cfg->native.queues, avail, cfg->native.queues);
		return NULL;
	}
	if (nworkers > DPDK_PORT_MAX_QUEUES) {
		util_fail(err, errlen, "at most %d queues (worker lcores) are supported, got %u",
			  DPDK_PORT_MAX_QUEUES, nworkers);
		return NULL;
	}
	if (nworkers < avail)
		NATIVE_LOG(NOTICE, "%u queue(s): %u worker lcore(s) stay idle", nworkers,
			avail - nworkers);
	if (cfg->admin_port != 0 && cfg->admin_port == cfg->tcp_port) {
		util_fail(err, errlen, "the admin port %u is the clients' TCP port",
			  cfg->admin_port);
		return NULL;
	}
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == nworkers)
			break;
		lcores[i++] = lcore;
	}

	/* cache-line aligned: curr_conns has a line of its own */
	nat = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*nat), RTE_CACHE_LINE_SIZE));
	if (nat == NULL) {
		util_fail(err, errlen, "out of memory");
		return NULL;
	}
	memset(nat, 0, sizeof(*nat));
	nat->base.ops = &native_stack_ops;
	nat->cfg = *cfg;
	nat->in_max = cmd_session_in_max(cfg->cmd->item_max);
	nat->out_limit = cmd_session_out_limit(cfg->cmd->item_max);
	atomic_init(&nat->stop, false);
	atomic_init(&nat->curr_conns, 0);
	atomic_init(&nat->admin_conns, 0);
	nat->request_timeout_us = (uint64_t)cfg->request_timeout_s * 1000000u;
	nat->admin_idle_timeout_us = (uint64_t)cfg->admin_idle_timeout_s * 1000000u;

	memset(&pc, 0, sizeof(pc));
	pc.port_id = cfg->native.port_id;
	pc.nb_queues = (uint16_t)nworkers;
	pc.lcores = lcores;
	pc.rx_desc = cfg->native.rx_desc;
	pc.tx_desc = cfg->native.tx_desc;
	pc.mtu = cfg->native.mtu;
	/* a queued packet sent without a copy is two mbufs */
	pc.extra_mbufs = 2 * tx_array_size(cfg, nworkers) + NET_TX_BULK;
	pc.link_timeout_ms = cfg->native.link_timeout_ms;
	pc.rss_key = cfg->native.rss_key;
	pc.rss_key_len = cfg->native.rss_key_len;
	pc.no_cksum_offload = cfg->native.no_cksum_offload;
	pc.no_tso = cfg->native.no_tso;
	if (dpdk_port_setup(&nat->port, &pc, err, errlen) < 0) {
		free(nat);
		return NULL;
	}

	nat->workers = rte_zmalloc("native_workers", sizeof(*nat->workers) * nworkers,
				   RTE_CACHE_LINE_SIZE);
	nat->engine_workers = calloc(nworkers, sizeof(*nat->engine_workers));
	if (nat->workers == NULL || nat->engine_workers == NULL) {
		util_fail(err, errlen, "out of memory for %u workers", nworkers);
		native_destroy(&nat->base);
		return NULL;
	}
	nat->nworkers = nworkers;
	for (i = 0; i < nworkers; i++) {
		if (worker_init(nat, &nat->workers[i], i, lcores[i], err, errlen) < 0) {
			native_destroy(&nat->base);
			return NULL;
		}
		nat->engine_workers[i] = nat->workers[i].ew;
	}
	return &nat->base;
}

/* Launches the worker lcores (rte_eal_remote_launch). */
static int
native_start(struct stack *s, char *err, size_t errlen)
{
	struct native *nat = native_of(s);

	for (unsigned i = 0; i < nat->nworkers; i++) {
		struct native_worker *w = &nat->workers[i];
		int rc = rte_eal_remote_launch(worker_main, w, w->lcore);

		if (rc != 0) {
			util_fail(err, errlen, "cannot launch lcore %u: %s", w->lcore,
				  strerror(-rc));
			atomic_store(&nat->stop, true);
			rte_eal_mp_wait_lcore();
			return -1;
		}
		nat->launched = true;
	}
	return 0;
}

/* Stops the lcores (each closes its connections) and waits for them.
 * Idempotent. */
static void
native_stop(struct stack *s)
{
	struct native *nat = native_of(s);

	atomic_store(&nat->stop, true);
	if (nat->launched)
		rte_eal_mp_wait_lcore();
	nat->launched = false;
}

/* Stops, closes every connection, releases the port. */
static void
native_destroy(struct stack *s)
{
	struct native *nat = native_of(s);

	native_stop(s);
	if (nat->workers != NULL)
		for (unsigned i = 0; i < nat->nworkers; i++)
			worker_fini(&nat->workers[i]);
	/* The pools go last: the stacks freed their packets into them. */
	dpdk_port_teardown(&nat->port);
	rte_free(nat->workers);
	free(nat->engine_workers);
	free(nat);
}

void
native_counters(const struct native *nat, int worker, uint64_t out[NATIVE_C_MAX])
{
	memset(out, 0, sizeof(uint64_t) * NATIVE_C_MAX);
	for (unsigned i = 0; i < nat->nworkers; i++) {
		if (worker >= 0 && (unsigned)worker != i)
			continue;
		for (unsigned c = 0; c < NATIVE_C_MAX; c++)
			out[c] += ((const volatile uint64_t *)nat->workers[i].ctr)[c];
	}
}

uint64_t
native_net_counter(const struct native *nat, int worker, enum net_counter_id id)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < nat->nworkers; i++)
		if ((worker < 0 || (unsigned)worker == i) && nat->workers[i].stack != NULL)
			sum += net_stack_counter(nat->workers[i].stack, id);
	return sum;
}

void
native_net_counters(const struct native *nat, int worker, uint64_t out[NET_C__COUNT])
{
	uint64_t one[NET_C__COUNT];

	memset(out, 0, sizeof(uint64_t) * NET_C__COUNT);
	for (unsigned i = 0; i < nat->nworkers; i++) {
		if ((worker >= 0 && (unsigned)worker != i) || nat->workers[i].stack == NULL)
			continue;
		net_stack_counters_read(nat->workers[i].stack, one);
		for (unsigned c = 0; c < NET_C__COUNT; c++)
			out[c] += one[c];
	}
}

unsigned
native_worker_lcore(const struct native *nat, unsigned worker)
{
	return worker < nat->nworkers ? nat->workers[worker].lcore : 0;
}

uint32_t
native_worker_conns(const struct native *nat, unsigned worker)
{
	return worker < nat->nworkers ?
		       *(const volatile uint32_t *)&nat->workers[worker].conns : 0;
}

uint32_t
native_worker_slots_in_use(const struct native *nat, unsigned worker)
{
	if (worker >= nat->nworkers || nat->workers[worker].stack == NULL)
		return 0;
	/* another lcore's word: a plain aligned read, a few packets old */
	return net_stack_conns_in_use(nat->workers[worker].stack);
}

uint32_t
native_slots_per_worker(const struct native *nat)
{
	return slots_per_lcore(&nat->cfg, nat->nworkers);
}

uint32_t
native_buf_pairs_per_worker(const struct native *nat)
{
	uint32_t pairs = buf_pairs_per_lcore(&nat->cfg, nat->nworkers);

	return pairs != 0 ? pairs : native_slots_per_worker(nat);
}

void
native_worker_buffers(const struct native *nat, unsigned worker, uint64_t *bytes,
		      uint64_t *in_use)
{
	struct net_stack_memory m;

	*bytes = *in_use = 0;
	if (worker >= nat->nworkers || nat->workers[worker].stack == NULL)
		return;
	/* another lcore's words: plain aligned reads, a few packets old */
	net_stack_memory_read(nat->workers[worker].stack, &m);
	*bytes = m.buffers;
	*in_use = (uint64_t)m.buffers_in_use * NATIVE_BUF_PAIR;
}

/* The rest of the stack ops. */

static const char *
native_describe(const struct stack *s, unsigned i, char *buf, size_t len)
{
	const struct native *nat = native_of_const(s);
	uint32_t ip = nat->cfg.native.ip;

	if (i > 1)
		return NULL;
	if (i == 1) {
		if (nat->cfg.admin_port == 0)
			return NULL;
		snprintf(buf, len, "native stack: admin port %u (TCP, administration only)",
			 nat->cfg.admin_port);
		return buf;
	}
	snprintf(buf, len,
		 "native stack: %u.%u.%u.%u/%u on port %u (%s), %u worker lcore(s), "
		 "TCP port %u, UDP port %u; TCP buffers for %u busy connections per lcore "
		 "(%" PRIu64 " MiB in all)",
		 ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff, nat->cfg.native.prefix_len,
		 nat->port.port_id, nat->port.name, nat->nworkers, nat->cfg.tcp_port,
		 nat->cfg.udp_port, native_buf_pairs_per_worker(nat),
		 ((uint64_t)native_buf_pairs_per_worker(nat) * nat->nworkers *
		  NATIVE_BUF_PAIR) >> 20);
	return buf;
}

static unsigned
native_workers(const struct stack *s)
{
	return native_of_const(s)->nworkers;
}

static void
native_stats(const struct stack *s, struct cmd_server_stats *out)
{
	const struct native *nat = native_of_const(s);
	uint64_t n[NATIVE_C_MAX];

	native_counters(nat, -1, n);
	out->threads = nat->nworkers;
	out->curr_connections = atomic_load_explicit(&nat->curr_conns, memory_order_relaxed);
	out->total_connections = n[NATIVE_C_conns_opened];
	out->rejected_connections = n[NATIVE_C_conns_rejected];
	out->connection_structures = n[NATIVE_C_conns_opened] - n[NATIVE_C_conns_closed];
	out->bytes_read = n[NATIVE_C_bytes_read];
	out->bytes_written = n[NATIVE_C_bytes_written];
	out->conn_yields = n[NATIVE_C_backpressure_stalls];
	out->workers = nat->engine_workers;
	out->nworkers = nat->nworkers;
	out->admin_connections = atomic_load_explicit(&nat->admin_conns, memory_order_relaxed);
	out->conns_refused_per_source = n[NATIVE_C_conns_refused_per_source];
	out->conns_request_timeouts = n[NATIVE_C_conns_request_timeouts];
	out->conns_write_timeouts = n[NATIVE_C_conns_write_timeouts];
	out->idle_kicks = native_net_counter(nat, -1, NET_C_tcp_idle_timeouts);
}

const struct stack_ops native_stack_ops = {
	.name = "native",
	.workers_noun = "worker lcores",
	.eal_memory_mb = eal_memory_mb,
	.create = native_create,
	.start = native_start,
	.stop = native_stop,
	.destroy = native_destroy,
	.describe = native_describe,
	.workers = native_workers,
	.stats = native_stats,
	.stats_conns = native_stats_conns,
	.counters = native_stack_counters,
	.telemetry_register = native_telemetry_register,
	.telemetry_attach = native_telemetry_attach,
	.telemetry_detach = native_telemetry_detach,
};
