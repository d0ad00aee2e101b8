/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * DPDK telemetry of the native stack (dpdk-telemetry.py, or any client of
 * the telemetry socket):
 *
 *   /segcached/net       the port (queues, offloads, RSS key and table,
 *                        link, NIC counters), the stack counters summed
 *                        over the lcores, and per-lcore connection figures
 *   /segcached/net,N     worker N's counters alone (N = queue number)
 *
 * The callbacks run on the telemetry thread and only read counters that
 * the lcores write; a mutex keeps them away from a stack being torn down.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "drivers/net/native/native_private.h"
#include "util/util_heap.h"

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct native *tel_nat; /* NULL while no native stack runs */

static void
add_counter(void *arg, const struct stack_counter *c)
{
	rte_tel_data_add_dict_u64(arg, c->name, c->value);
}

/* Worker w's counters, or all workers' summed (w < 0). */
static void
add_counters(struct rte_tel_data *d, const struct native *nat, int w)
{
	native_counters_visit(nat, w, add_counter, d);
}

/* One array per figure, element i for worker i: shows at a glance how the
 * queues share the load. */
static void
add_per_worker(struct rte_tel_data *d, const struct native *nat, const char *name,
	       enum native_counter nc, int net_id)
{
	struct rte_tel_data *a = rte_tel_data_alloc();
	uint64_t c[NATIVE_C_MAX];

	if (a == NULL)
		return;
	rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
	for (unsigned i = 0; i < nat->nworkers; i++) {
		uint64_t v;

		if (net_id >= 0) {
			v = native_net_counter(nat, (int)i, (enum net_counter_id)net_id);
		} else if (nc < NATIVE_C_MAX) {
			native_counters(nat, (int)i, c);
			v = c[nc];
		} else {
			v = native_worker_conns(nat, i);
		}
		rte_tel_data_add_array_u64(a, v);
	}
	rte_tel_data_add_dict_container(d, name, a, 0);
}

static void
add_port(struct rte_tel_data *d, const struct dpdk_port *p)
{
	struct dpdk_port_stats st;
	char buf[2 * DPDK_PORT_RSS_KEY_MAX + 1];
	struct rte_tel_data *reta;

	rte_tel_data_add_dict_u64(d, "port_id", p->port_id);
	rte_tel_data_add_dict_string(d, "port_name", p->name);
	rte_tel_data_add_dict_string(d, "driver", p->driver);
	snprintf(buf, sizeof(buf), RTE_ETHER_ADDR_PRT_FMT, RTE_ETHER_ADDR_BYTES(&p->mac));
	rte_tel_data_add_dict_string(d, "mac", buf);
	rte_tel_data_add_dict_u64(d, "queues", p->nb_queues);
	rte_tel_data_add_dict_u64(d, "rx_desc", p->rx_desc);
	rte_tel_data_add_dict_u64(d, "tx_desc", p->tx_desc);
	rte_tel_data_add_dict_u64(d, "mtu", p->mtu);
	rte_tel_data_add_dict_u64(d, "link_up_at_start", p->link_up);
	rte_tel_data_add_dict_u64(d, "link_speed_mbps", p->link_speed_mbps);
	rte_tel_data_add_dict_u64(d, "rx_cksum_offload", p->rx_cksum);
	rte_tel_data_add_dict_u64(d, "tx_cksum_offload", p->tx_cksum);
	rte_tel_data_add_dict_u64(d, "rx_ip_cksum_offload", p->rx_ip_cksum);
	rte_tel_data_add_dict_u64(d, "tx_ip_cksum_offload", p->tx_ip_cksum);
	rte_tel_data_add_dict_u64(d, "tx_multi_seg", p->tx_multi_seg);
	rte_tel_data_add_dict_u64(d, "tx_tso", p->tx_tso);
	rte_tel_data_add_dict_string(d, "rx_offloads", p->rx_offloads);
	rte_tel_data_add_dict_string(d, "tx_offloads", p->tx_offloads);
	rte_tel_data_add_dict_u64(d, "rss", p->rss);
	rte_tel_data_add_dict_u64(d, "rss_hf", p->rss_hf);
	rte_tel_data_add_dict_string(d, "rss_key", dpdk_port_rss_key_hex(p, buf, sizeof(buf)));
	reta = rte_tel_data_alloc();
	if (reta != NULL) {
		rte_tel_data_start_array(reta, RTE_TEL_U64_VAL);
		for (unsigned i = 0; i < p->reta_size; i++)
			rte_tel_data_add_array_u64(reta, p->reta[i]);
		rte_tel_data_add_dict_container(d, "rss_reta", reta, 0);
	}
	dpdk_port_stats(p, &st);
	rte_tel_data_add_dict_u64(d, "nic_ipackets", st.ipackets);
	rte_tel_data_add_dict_u64(d, "nic_opackets", st.opackets);
	rte_tel_data_add_dict_u64(d, "nic_ibytes", st.ibytes);
	rte_tel_data_add_dict_u64(d, "nic_obytes", st.obytes);
	rte_tel_data_add_dict_u64(d, "nic_imissed", st.imissed);
	rte_tel_data_add_dict_u64(d, "nic_ierrors", st.ierrors);
	rte_tel_data_add_dict_u64(d, "nic_oerrors", st.oerrors);
	rte_tel_data_add_dict_u64(d, "nic_rx_nombuf", st.rx_nombuf);
}

static int
tel_net(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct native *nat;
	int rc = -1;

	(void)cmd;
	pthread_mutex_lock(&tel_lock);
	if (tel_nat == NULL)
		goto out;
	nat = tel_nat;
	rte_tel_data_start_dict(d);
	if (params != NULL && params[0] != '\0') {
		char *end;
		unsigned long w = strtoul(params, &end, 10);

		if (*end != '\0' || w >= nat->nworkers)
			goto out;
		rte_tel_data_add_dict_u64(d, "worker", w);
		rte_tel_data_add_dict_u64(d, "lcore", native_worker_lcore(nat, (unsigned)w));
		rte_tel_data_add_dict_u64(d, "queue", w);
		rte_tel_data_add_dict_u64(d, "curr_connections",
					  native_worker_conns(nat, (unsigned)w));
		add_counters(d, nat, (int)w);
		rc = 0;
		goto out;
	}
	add_port(d, &nat->port);
	rte_tel_data_add_dict_u64(d, "workers", nat->nworkers);
	rte_tel_data_add_dict_u64(d, "tsc_hz", rte_get_tsc_hz()); /* for busy_cycles */
	{
		struct rte_tel_data *a = rte_tel_data_alloc();

		if (a != NULL) {
			rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
			for (unsigned i = 0; i < nat->nworkers; i++)
				rte_tel_data_add_array_u64(a, native_worker_lcore(nat, i));
			rte_tel_data_add_dict_container(d, "worker_lcores", a, 0);
		}
	}
	add_per_worker(d, nat, "worker_curr_connections", NATIVE_C_MAX, -1);
	add_per_worker(d, nat, "worker_conns_opened", NATIVE_C_conns_opened, -1);
	add_per_worker(d, nat, "worker_rx_packets", NATIVE_C_MAX, NET_C_rx_packets);
	add_per_worker(d, nat, "worker_tx_packets", NATIVE_C_MAX, NET_C_tx_packets);
	{
		/* lib/net's slots in use: connections in any state, those the
		 * application never saw (SYN_RCVD) and closing ones included */
		struct rte_tel_data *a = rte_tel_data_alloc();
		uint64_t sum = 0;

		if (a != NULL) {
			rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
			for (unsigned i = 0; i < nat->nworkers; i++) {
				uint64_t v = native_worker_slots_in_use(nat, i);

				rte_tel_data_add_array_u64(a, v);
				sum += v;
			}
			rte_tel_data_add_dict_container(d, "worker_tcp_slots_in_use", a, 0);
		}
		rte_tel_data_add_dict_u64(d, "tcp_slots_in_use", sum);
		rte_tel_data_add_dict_u64(d, "tcp_slots_per_worker", native_slots_per_worker(nat));
	}
	{
		/* TCP buffers (docs/net.md, "Memory"): what the workers made,
		 * what connections hold now, and the most --tcp-buffer-memory
		 * lets each worker hold */
		uint64_t made = 0, held = 0;

		for (unsigned i = 0; i < nat->nworkers; i++) {
			uint64_t b, u;

			native_worker_buffers(nat, i, &b, &u);
			made += b;
			held += u;
		}
		rte_tel_data_add_dict_u64(d, "tcp_buffer_bytes", made);
		rte_tel_data_add_dict_u64(d, "tcp_buffer_bytes_in_use", held);
		rte_tel_data_add_dict_u64(d, "tcp_buf_pairs_per_worker",
					  native_buf_pairs_per_worker(nat));
		rte_tel_data_add_dict_u64(d, "tcp_buf_pair_bytes", NATIVE_BUF_PAIR);
	}
	/* the C heap (glibc) in use: per-connection state beyond lib/net's
	 * (struct native_conn, its command state, output held for a slow
	 * reader, a large request being assembled) */
	rte_tel_data_add_dict_u64(d, "malloc_bytes_in_use", util_heap_in_use());
	add_counters(d, nat, -1);
	rc = 0;
out:
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
native_telemetry_register(void)
{
	return rte_telemetry_register_cmd("/segcached/net", tel_net,
					  "The port, RSS, and the stack's counters "
					  "summed over lcores; "
					  "with a parameter N, worker N's counters");
}

void
native_telemetry_attach(struct stack *s)
{
	pthread_mutex_lock(&tel_lock);
	tel_nat = native_of(s);
	pthread_mutex_unlock(&tel_lock);
}

void
native_telemetry_detach(struct stack *s)
{
	(void)s;
	pthread_mutex_lock(&tel_lock);
	tel_nat = NULL;
	pthread_mutex_unlock(&tel_lock);
}
