/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Port set-up for the DPDK data path: any ethdev port (a PCI NIC bound to
 * vfio-pci, or a virtual device such as net_af_packet, net_memif, net_tap).
 *
 * One RX and one TX queue per worker lcore, each with its own mbuf pool on
 * the lcore's NUMA node. RSS over IPv4/TCP/UDP spreads connections over
 * the queues when the port can hash (the key and redirection table are
 * logged and kept for telemetry); checksum offloads are used when the port
 * offers them and reported so that lib/net computes the rest in software.
 * Every failure that an operator can fix (no port, a busy port, too few
 * lcores or queues, no memory for the pools, a link that stays down) comes
 * back as one message that says what to do.
 */
#ifndef SEGCACHED_DPDK_PORT_H
#define SEGCACHED_DPDK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_dev.h>
#include <rte_ether.h>
#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPDK_PORT_MAX_QUEUES 128
#define DPDK_PORT_RSS_KEY_MAX 64
#define DPDK_PORT_RETA_MAX 512

struct dpdk_port_config {
	int port_id;            /* -1: the first available port */
	uint16_t nb_queues;     /* RX/TX queue pairs = worker lcores */
	const unsigned *lcores; /* lcore of each queue (its pool's NUMA node) */
	uint16_t rx_desc;       /* per queue; 0 = 1024 */
	uint16_t tx_desc;       /* per queue; 0 = 1024 */
	uint16_t mtu;           /* IP MTU; 0 = 1500 */
	/* Packets a queue's lcore can hold besides the rings (lib/net's TX
	 * array, connections with a segment in flight); the pool adds them
	 * to the ring sizes. */
	uint32_t extra_mbufs;
	unsigned link_timeout_ms; /* wait for link up; 0 = do not wait */
	/* RSS hash key, repeated to the NIC's key size; NULL: random */
	const uint8_t *rss_key;
	uint8_t rss_key_len;
	/* Offloads not to use even where the port has them (--offloads):
	 * no checksum offload (then no TSO either), no TSO. */
	bool no_cksum_offload;
	bool no_tso;
};

/* What was set up, for lib/net's configuration, logs and telemetry. */
struct dpdk_port {
	uint16_t port_id;
	char name[RTE_DEV_NAME_MAX_LEN];
	char driver[64];
	struct rte_ether_addr mac;
	uint16_t nb_queues;
	uint16_t rx_desc, tx_desc;
	uint16_t mtu;
	int socket_id;
	struct rte_mempool *pools[DPDK_PORT_MAX_QUEUES]; /* per queue */
	/* Checksum offloads in use: TCP and UDP (rx_/tx_cksum), the IPv4
	 * header (rx_/tx_ip_cksum); virtio ports offer the first only. */
	bool rx_cksum;
	bool tx_cksum;
	bool rx_ip_cksum;
	bool tx_ip_cksum;
	/* The port sends chained mbufs (a header and a payload elsewhere),
	 * so TCP can send large segments without copying them. */
	bool tx_multi_seg;
	/* TCP segmentation offload, with chained mbufs and checksum offload. */
	bool tx_tso;
	char rx_offloads[160]; /* names, for logs and telemetry */
	char tx_offloads[160];
	/* RSS: on only with several queues and a port that can hash. */
	bool rss;
	uint64_t rss_hf;
	uint8_t rss_key[DPDK_PORT_RSS_KEY_MAX];
	uint8_t rss_key_len;
	uint16_t reta[DPDK_PORT_RETA_MAX];
	uint16_t reta_size;
	/* Link at start. */
	bool link_up;
	uint32_t link_speed_mbps;
	bool started;
};

/* Picks, configures and starts the port; creates the pools. Returns 0, or
 * -1 with an operator-facing message in err (port left closed). */
int dpdk_port_setup(struct dpdk_port *p, const struct dpdk_port_config *cfg,
		    char *err, size_t errlen);

/* Stops and closes the port and frees the pools. Call after every lcore
 * using the queues stopped and freed its packets. */
void dpdk_port_teardown(struct dpdk_port *p);

/* The RSS key as hex ("6d5a56da..."), into buf; returns buf. */
char *dpdk_port_rss_key_hex(const struct dpdk_port *p, char *buf, size_t len);
/* The redirection table as "q0 q1 q0 q1 ...", truncated to len; returns buf. */
char *dpdk_port_reta_string(const struct dpdk_port *p, char *buf, size_t len);

/* Port statistics (rte_eth_stats) summed, for telemetry. */
struct dpdk_port_stats {
	uint64_t ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf;
};
void dpdk_port_stats(const struct dpdk_port *p, struct dpdk_port_stats *st);

extern int dpdk_port_logtype;

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_DPDK_PORT_H */
