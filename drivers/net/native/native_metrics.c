/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The native stack's counters, one at a time through a callback: its own
 * (connections, bytes, UDP), lib/net's (drops, retransmissions, buffers
 * refused) and the port's (packets missed, mbufs refused, the link now).
 * The stack op `counters` (for /metrics) and the telemetry's
 * /segcached/net both read them here, so the two cannot disagree.
 */
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "drivers/net/native/native_private.h"

static const char *const native_counter_descs[NATIVE_C_MAX] = {
#define NATIVE_COUNTER_DESC(name, desc) desc,
	NATIVE_COUNTERS(NATIVE_COUNTER_DESC)
#undef NATIVE_COUNTER_DESC
};

static void
emit(stack_counter_fn *fn, void *arg, const char *name, const char *help, uint64_t v,
     bool gauge)
{
	struct stack_counter c = { name, help, v, gauge };

	fn(arg, &c);
}

void
native_counters_visit(const struct native *nat, int worker, stack_counter_fn *fn, void *arg)
{
	uint64_t c[NATIVE_C_MAX], n[NET_C__COUNT];

	native_counters(nat, worker, c);
	for (unsigned i = 0; i < NATIVE_C_MAX; i++)
		emit(fn, arg, native_counter_names[i], native_counter_descs[i], c[i], false);
	native_net_counters(nat, worker, n);
	for (unsigned i = 0; i < NET_C__COUNT; i++)
		emit(fn, arg, net_counter_name((enum net_counter_id)i),
		     net_counter_desc((enum net_counter_id)i), n[i], false);
}

void
native_port_counters_visit(const struct native *nat, stack_counter_fn *fn, void *arg)
{
	const struct dpdk_port *p = &nat->port;
	struct dpdk_port_stats st;
	struct rte_eth_link link;
	uint64_t avail = 0;

	dpdk_port_stats(p, &st);
	emit(fn, arg, "nic_ipackets", "packets the port received", st.ipackets, false);
	emit(fn, arg, "nic_opackets", "packets the port sent", st.opackets, false);
	emit(fn, arg, "nic_ibytes", "bytes the port received", st.ibytes, false);
	emit(fn, arg, "nic_obytes", "bytes the port sent", st.obytes, false);
	emit(fn, arg, "nic_imissed",
	     "packets the port dropped: its RX queues were full (the lcores fell behind)",
	     st.imissed, false);
	emit(fn, arg, "nic_ierrors", "erroneous packets the port received", st.ierrors, false);
	emit(fn, arg, "nic_oerrors", "packets the port failed to send", st.oerrors, false);
	emit(fn, arg, "nic_rx_nombuf", "packets the port dropped: no mbuf in the RX pool",
	     st.rx_nombuf, false);
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(p->port_id, &link) != 0)
		link.link_status = RTE_ETH_LINK_DOWN;
	emit(fn, arg, "link_up", "1 while the port's link is up", link.link_status, true);
	emit(fn, arg, "link_speed_mbps", "the port's link speed, Mbit/s (0: down or unknown)",
	     link.link_status ? link.link_speed : 0, true);
	for (unsigned q = 0; q < p->nb_queues; q++)
		if (p->pools[q] != NULL)
			avail += rte_mempool_avail_count(p->pools[q]);
	emit(fn, arg, "mbufs_available", "mbufs free in the port's pools, all queues", avail,
	     true);
}

/* The stack op: the counters summed over the workers, the port's, and
 * the levels of what the workers hold. */
void
native_stack_counters(const struct stack *s, stack_counter_fn *fn, void *arg)
{
	const struct native *nat = native_of_const(s);
	uint64_t slots = 0, made = 0, held = 0;

	native_counters_visit(nat, -1, fn, arg);
	native_port_counters_visit(nat, fn, arg);
	for (unsigned i = 0; i < nat->nworkers; i++) {
		uint64_t b, u;

		slots += native_worker_slots_in_use(nat, i);
		native_worker_buffers(nat, i, &b, &u);
		made += b;
		held += u;
	}
	emit(fn, arg, "tcp_slots_in_use",
	     "TCP connection slots in use, any state (SYN_RCVD and closing ones included)",
	     slots, true);
	emit(fn, arg, "tcp_slots", "TCP connection slots, all workers",
	     (uint64_t)native_slots_per_worker(nat) * nat->nworkers, true);
	emit(fn, arg, "tcp_buffer_bytes", "bytes of TCP buffers the workers made", made, true);
	emit(fn, arg, "tcp_buffer_bytes_in_use", "bytes of TCP buffers connections hold now",
	     held, true);
	emit(fn, arg, "tcp_buffer_bytes_limit",
	     "the most bytes of TCP buffers --tcp-buffer-memory lets the workers hold",
	     (uint64_t)native_buf_pairs_per_worker(nat) * nat->nworkers * NATIVE_BUF_PAIR, true);
}
