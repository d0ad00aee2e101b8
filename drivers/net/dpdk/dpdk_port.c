/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Port set-up: pick the port, size and create the per-queue pools,
 * configure RSS and offloads, start it and wait for the link.
 */
#include "drivers/net/dpdk/dpdk_port.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include "util/util_err.h"

RTE_LOG_REGISTER(dpdk_port_logtype, segcached.port, NOTICE);

#define PORT_LOG(level, fmt, ...)                                              \
	rte_log(RTE_LOG_##level, dpdk_port_logtype, "port: " fmt "\n", ##__VA_ARGS__)

#define DEFAULT_DESC 1024
#define POOL_CACHE 256
#define BURST_SLACK 64 /* an RX burst in hand and one being built */
#define LINK_POLL_MS 100

#define RSS_WANTED (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP | \
		    RTE_ETH_RSS_NONFRAG_IPV4_UDP)
/* TCP and UDP together (lib/net has one switch for both), the IPv4
 * header's apart: virtio offers the first and not the second, and asking
 * for all three left it with none, TSO included. */
#define RX_CKSUM (RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM)
#define TX_CKSUM (RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM)


/* What to try when the EAL found no port at all. */
static const char no_port_hint[] =
	"no DPDK port found. A physical NIC must be bound to vfio-pci first\n"
	"  (dpdk-devbind.py --status; dpdk-devbind.py -b vfio-pci 0000:01:00.0),\n"
	"  and must not be excluded by -b/--block or -a/--allow; for a try-out\n"
	"  without a NIC add a virtual port to the EAL options, e.g.\n"
	"  --vdev=net_af_packet0,iface=veth0 (see docs/operations.md). When a NIC or a\n"
	"  --vdev was given, the EAL messages above say why it did not become a port\n"
	"  (a device busy in another DPDK process, an interface that does not exist)";

static int
pick_port(const struct dpdk_port_config *cfg, uint16_t *port, char *err, size_t errlen)
{
	struct rte_eth_dev_owner owner;
	uint16_t p;

	if (cfg->port_id < 0) {
		RTE_ETH_FOREACH_DEV(p) {
			*port = p;
			return 0;
		}
		if (rte_eth_dev_count_total() > 0)
			return util_fail(err, errlen,
				    "every DPDK port is busy "
				    "(owned by another user of this process)");
		return util_fail(err, errlen, "%s", no_port_hint);
	}
	if (cfg->port_id >= RTE_MAX_ETHPORTS ||
	    !rte_eth_dev_is_valid_port((uint16_t)cfg->port_id)) {
		if (rte_eth_dev_count_avail() == 0)
			return util_fail(err, errlen, "--port-id %d: %s", cfg->port_id,
				    no_port_hint);
		return util_fail(err, errlen,
			    "--port-id %d: no such port; the EAL found %u port(s), ids from 0 "
			    "(leave --port-id out to take the first)",
			    cfg->port_id, rte_eth_dev_count_avail());
	}
	p = (uint16_t)cfg->port_id;
	if (rte_eth_dev_owner_get(p, &owner) == 0 && owner.id != RTE_ETH_DEV_NO_OWNER)
		return util_fail(err, errlen, "port %u is busy: owned by '%s'", p, owner.name);
	*port = p;
	return 0;
}

/* Readable names of the offload bits in `bits`. */
static void
offload_names(uint64_t bits, bool rx, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	while (bits != 0 && used + 1 < len) {
		uint64_t bit = bits & -bits;
		const char *n = rx ? rte_eth_dev_rx_offload_name(bit) :
				     rte_eth_dev_tx_offload_name(bit);
		int k = snprintf(buf + used, len - used, "%s%s", used ? "," : "", n);

		if (k < 0 || (size_t)k >= len - used)
			break;
		used += (size_t)k;
		bits &= ~bit;
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}

static const char *
errno_hint(int rc)
{
	if (rc == -EBUSY)
		return " (the port is busy: is another DPDK process, or another segcached, "
		       "using it?)";
	if (rc == -ENOMEM)
		return " (out of memory: reserve more hugepages, or raise -m with --no-huge)";
	if (rc == -EINVAL)
		return " (the driver refused the settings)";
	return "";
}

static int
create_pools(struct dpdk_port *p, const struct dpdk_port_config *cfg, char *err, size_t errlen)
{
	uint32_t room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM,
				(uint32_t)p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN +
					2 * RTE_VLAN_HLEN);
	uint32_t want = p->rx_desc + p->tx_desc + cfg->extra_mbufs + BURST_SLACK;
	uint32_t n = rte_align32pow2(want + POOL_CACHE * 3 / 2) - 1;

	for (uint16_t q = 0; q < p->nb_queues; q++) {
		unsigned lcore = cfg->lcores[q];
		int socket = (int)rte_lcore_to_socket_id(lcore);
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "sc_p%u_q%u", p->port_id, q);
		p->pools[q] = rte_pktmbuf_pool_create(name, n, POOL_CACHE, 0,
						      (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
						      socket);
		if (p->pools[q] == NULL) {
			uint64_t bytes = (uint64_t)n * (room + RTE_PKTMBUF_HEADROOM + 128);

			return util_fail(err, errlen,
				    "cannot create the mbuf pool of queue %u "
				    "(%u mbufs of %u bytes, %u MiB, NUMA node %d) "
				    "for lcore %u: %s.\n"
				    "  Reserve more hugepages on that node (dpdk-hugepages.py), "
				    "lower --rx-desc/--tx-desc/--max-conns,\n"
				    "  or with --no-huge raise -m",
				    q, n, room + RTE_PKTMBUF_HEADROOM, (unsigned)(bytes >> 20),
				    socket, lcore, rte_strerror(rte_errno));
		}
	}
	PORT_LOG(INFO, "%u pools of %u mbufs (%u bytes data room) per queue", p->nb_queues, n,
		 room);
	return 0;
}

/* Spread the redirection table over the queues and read back what the
 * device uses. */
static void
setup_reta(struct dpdk_port *p, uint16_t reta_size)
{
	struct rte_eth_rss_reta_entry64 conf[DPDK_PORT_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t groups, i;

	if (reta_size == 0 || reta_size > DPDK_PORT_RETA_MAX)
		return;
	groups = (reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE;
	memset(conf, 0, sizeof(conf));
	for (i = 0; i < reta_size; i++) {
		conf[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			i % p->nb_queues;
	}
	if (rte_eth_dev_rss_reta_update(p->port_id, conf, reta_size) != 0)
		PORT_LOG(NOTICE, "port %u: the redirection table cannot be set; using the driver's",
			 p->port_id);
	for (i = 0; i < groups; i++)
		conf[i].mask = UINT64_MAX;
	if (rte_eth_dev_rss_reta_query(p->port_id, conf, reta_size) != 0)
		return;
	for (i = 0; i < reta_size; i++)
		p->reta[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
	p->reta_size = reta_size;
}

/* Reads back the key and hash types the device uses. Some drivers keep
 * their own key at configure time and take ours only through
 * rss_hash_update: then it is set again, and what is read last is what is
 * reported. */
static void
read_rss_key(struct dpdk_port *p, const uint8_t *want, uint8_t key_size, uint64_t hf)
{
	struct rte_eth_rss_conf rc = {
		.rss_key = p->rss_key,
		.rss_key_len = key_size,
	};

	if (rte_eth_dev_rss_hash_conf_get(p->port_id, &rc) != 0)
		return;
	if (memcmp(p->rss_key, want, key_size) != 0) {
		struct rte_eth_rss_conf set = {
			.rss_key = (uint8_t *)(uintptr_t)want,
			.rss_key_len = key_size,
			.rss_hf = hf,
		};

		if (rte_eth_dev_rss_hash_update(p->port_id, &set) != 0)
			PORT_LOG(NOTICE, "port %u: the driver keeps its own RSS key", p->port_id);
		rc.rss_key_len = key_size;
		if (rte_eth_dev_rss_hash_conf_get(p->port_id, &rc) != 0)
			return;
	}
	p->rss_key_len = rc.rss_key_len ? rc.rss_key_len : key_size;
	p->rss_hf = rc.rss_hf;
}

static int
wait_link(struct dpdk_port *p, unsigned timeout_ms, char *err, size_t errlen)
{
	struct rte_eth_link link;
	unsigned waited = 0;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP) {
			p->link_up = true;
			p->link_speed_mbps = link.link_speed;
			return 0;
		}
		if (timeout_ms == 0) {
			PORT_LOG(WARNING, "port %u (%s): link is down; serving once it comes up",
				 p->port_id, p->name);
			return 0;
		}
		if (waited >= timeout_ms)
			return util_fail(err, errlen,
				    "port %u (%s): link still down after %u ms. "
				    "Check the cable and the switch\n"
				    "  port; for net_af_packet the interface and its veth peer "
				    "must both be up\n"
				    "  (ip link set IFACE up); "
				    "--link-timeout 0 starts without waiting",
				    p->port_id, p->name, timeout_ms);
		rte_delay_ms(LINK_POLL_MS);
		waited += LINK_POLL_MS;
	}
}

/* Picks the port and checks it against what the stack asks: queues, MTU.
 * Fills the identity fields of p and the device's info. */
static int
port_probe(struct dpdk_port *p, const struct dpdk_port_config *cfg,
	   struct rte_eth_dev_info *info, char *err, size_t errlen)
{
	uint16_t port = 0;
	int rc;

	if (cfg->nb_queues == 0 || cfg->nb_queues > DPDK_PORT_MAX_QUEUES)
		return util_fail(err, errlen, "queues must be 1..%d (got %u)", DPDK_PORT_MAX_QUEUES,
			    cfg->nb_queues);
	if (pick_port(cfg, &port, err, errlen) < 0)
		return -1;
	p->port_id = port;
	rte_eth_dev_get_name_by_port(port, p->name);
	rc = rte_eth_dev_info_get(port, info);
	if (rc != 0)
		return util_fail(err, errlen, "port %u (%s): cannot read device info: %s", port,
			    p->name, strerror(-rc));
	snprintf(p->driver, sizeof(p->driver), "%s", info->driver_name);
	if (cfg->nb_queues > info->max_rx_queues || cfg->nb_queues > info->max_tx_queues)
		return util_fail(err, errlen,
			    "port %u (%s, %s) has %u RX / %u TX queues "
			    "but %u worker lcores need one each.\n"
			    "  Give fewer lcores (-l), or more queues%s",
			    port, p->name, p->driver, info->max_rx_queues, info->max_tx_queues,
			    cfg->nb_queues,
			    strstr(p->driver, "af_packet") ?
				    " (net_af_packet: add qpairs=N to its --vdev)" :
				    "");
	p->nb_queues = cfg->nb_queues;
	p->socket_id = rte_eth_dev_socket_id(port);
	p->mtu = cfg->mtu ? cfg->mtu : RTE_ETHER_MTU;
	if (p->mtu < info->min_mtu || p->mtu > info->max_mtu)
		return util_fail(err, errlen, "port %u (%s): --mtu %u is outside %u..%u", port,
			    p->name, p->mtu, info->min_mtu, info->max_mtu);
	if (info->max_rx_pktlen != 0 &&
	    (uint32_t)p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > info->max_rx_pktlen)
		return util_fail(err, errlen,
			    "port %u (%s, %s): --mtu %u needs frames of %u bytes; "
			    "the port takes at most %u",
			    port, p->name, p->driver, p->mtu,
			    p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN, info->max_rx_pktlen);
	rc = rte_eth_macaddr_get(port, &p->mac);
	if (rc != 0)
		return util_fail(err, errlen, "port %u: cannot read its MAC address: %s", port,
			    strerror(-rc));
	return 0;
}

/* Chooses offloads and RSS (the key goes to key[]), configures the device
 * and settles the descriptor counts. */
static int
port_configure(struct dpdk_port *p, const struct dpdk_port_config *cfg,
	       const struct rte_eth_dev_info *info, struct rte_eth_conf *conf, uint8_t *key,
	       char *err, size_t errlen)
{
	const uint16_t port = p->port_id;
	uint16_t rxd, txd;
	int rc;

	memset(conf, 0, sizeof(*conf));
	conf->rxmode.mtu = p->mtu;
	offload_names(info->rx_offload_capa, true, p->rx_offloads, sizeof(p->rx_offloads));
	offload_names(info->tx_offload_capa, false, p->tx_offloads, sizeof(p->tx_offloads));
	PORT_LOG(NOTICE, "port %u (%s): the port offers rx offloads %s; tx offloads %s", port,
		 p->driver, p->rx_offloads, p->tx_offloads);
	if ((info->rx_offload_capa & RX_CKSUM) == RX_CKSUM && !cfg->no_cksum_offload) {
		conf->rxmode.offloads |= RX_CKSUM;
		p->rx_cksum = true;
	}
	if ((info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) && !cfg->no_cksum_offload) {
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		p->rx_ip_cksum = true;
	}
	if ((info->tx_offload_capa & TX_CKSUM) == TX_CKSUM && !cfg->no_cksum_offload) {
		conf->txmode.offloads |= TX_CKSUM;
		p->tx_cksum = true;
	}
	if ((info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) && !cfg->no_cksum_offload) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		p->tx_ip_cksum = true;
	}
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		p->tx_multi_seg = true;
	}
	/* net_tap offers TSO, but its software GSO (DPDK 22.11) counts the
	 * Ethernet header against the MTU and drops every full-MSS segment
	 * (tried: replies over 1 MSS never arrived), so it is not used there. */
	if (p->tx_multi_seg && p->tx_cksum && !cfg->no_tso &&
	    (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO) &&
	    strcmp(info->driver_name, "net_tap") != 0) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
		p->tx_tso = true;
	}
	offload_names(conf->rxmode.offloads, true, p->rx_offloads, sizeof(p->rx_offloads));
	offload_names(conf->txmode.offloads, false, p->tx_offloads, sizeof(p->tx_offloads));

	/* RSS keeps every packet of a connection on one queue. The key is
	 * random unless given: with a known key (the well-known symmetric
	 * 0x6d5a one) the queue of a flow depends only on the XOR of its
	 * tuple's 16-bit words, and an attacker picks source ports that
	 * load one lcore. */
	if (p->nb_queues > 1 && (info->flow_type_rss_offloads & RSS_WANTED) != 0) {
		uint8_t klen = info->hash_key_size ? info->hash_key_size : 40;

		if (klen > DPDK_PORT_RSS_KEY_MAX)
			klen = DPDK_PORT_RSS_KEY_MAX;
		for (unsigned i = 0; i < klen; i++)
			key[i] = cfg->rss_key != NULL ? cfg->rss_key[i % cfg->rss_key_len]
						      : (uint8_t)rte_rand();
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_key = key;
		conf->rx_adv_conf.rss_conf.rss_key_len = klen;
		conf->rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads & RSS_WANTED;
		p->rss = true;
		p->rss_hf = conf->rx_adv_conf.rss_conf.rss_hf;
		memcpy(p->rss_key, key, klen);
		p->rss_key_len = klen;
	} else if (p->nb_queues > 1) {
		PORT_LOG(NOTICE,
			 "port %u (%s): no RSS for IPv4/TCP/UDP; "
			 "the device spreads flows over its %u queues itself%s",
			 port, p->driver, p->nb_queues,
			 strstr(p->driver, "af_packet") ? " (PACKET_FANOUT by flow hash)" : "");
	}

	rc = rte_eth_dev_configure(port, p->nb_queues, p->nb_queues, conf);
	if (rc != 0)
		return util_fail(err, errlen, "port %u (%s): configure with %u queues failed: %s%s",
			    port, p->name, p->nb_queues, strerror(-rc), errno_hint(rc));
	rxd = cfg->rx_desc ? cfg->rx_desc : DEFAULT_DESC;
	txd = cfg->tx_desc ? cfg->tx_desc : DEFAULT_DESC;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (rc != 0)
		return util_fail(err, errlen, "port %u: descriptor counts %u/%u refused: %s", port,
			    rxd, txd, strerror(-rc));
	if ((cfg->rx_desc && rxd != cfg->rx_desc) || (cfg->tx_desc && txd != cfg->tx_desc))
		PORT_LOG(NOTICE,
			 "port %u: descriptors adjusted to the device's limits: rx %u, tx %u",
			 port, rxd, txd);
	p->rx_desc = rxd;
	p->tx_desc = txd;
	return 0;
}

/* Creates the per-queue pools and sets up each RX/TX queue pair on its
 * lcore's NUMA node. */
static int
port_queues(struct dpdk_port *p, const struct dpdk_port_config *cfg,
	    const struct rte_eth_dev_info *info, const struct rte_eth_conf *conf, char *err,
	    size_t errlen)
{
	if (create_pools(p, cfg, err, errlen) < 0)
		return -1;
	for (uint16_t q = 0; q < p->nb_queues; q++) {
		int socket = (int)rte_lcore_to_socket_id(cfg->lcores[q]);
		struct rte_eth_rxconf rxc = info->default_rxconf;
		struct rte_eth_txconf txc = info->default_txconf;
		int rc;

		rxc.offloads = conf->rxmode.offloads;
		txc.offloads = conf->txmode.offloads;
		rc = rte_eth_rx_queue_setup(p->port_id, q, p->rx_desc, socket, &rxc, p->pools[q]);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, q, p->tx_desc, socket, &txc);
		if (rc != 0)
			return util_fail(err, errlen, "port %u (%s): queue %u set-up failed: %s%s",
				    p->port_id, p->name, q, strerror(-rc), errno_hint(rc));
	}
	return 0;
}

/* Starts the port, reads back the RSS set-up the device uses and waits
 * for the link. */
static int
port_start(struct dpdk_port *p, const struct dpdk_port_config *cfg,
	   const struct rte_eth_dev_info *info, const uint8_t *key, char *err, size_t errlen)
{
	char why[256];
	int rc;

	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0)
		return util_fail(err, errlen, "port %u (%s): start failed: %s%s", p->port_id,
			    p->name, strerror(-rc), errno_hint(rc));
	p->started = true;
	if (p->rss) {
		read_rss_key(p, key, p->rss_key_len, p->rss_hf);
		setup_reta(p, info->reta_size);
	}
	if (wait_link(p, cfg->link_timeout_ms, why, sizeof(why)) < 0)
		return util_fail(err, errlen, "%s", why);
	return 0;
}

/* What the port runs with, for the operator. */
static void
port_log(const struct dpdk_port *p)
{
	const uint16_t port = p->port_id;

	PORT_LOG(NOTICE,
		 "port %u (%s, driver %s, NUMA node %d) MAC " RTE_ETHER_ADDR_PRT_FMT
		 ": %u queue(s), rx %u / tx %u descriptors, MTU %u, link %s %u Mbps",
		 port, p->name, p->driver, p->socket_id, RTE_ETHER_ADDR_BYTES(&p->mac),
		 p->nb_queues, p->rx_desc, p->tx_desc, p->mtu, p->link_up ? "up" : "down",
		 p->link_speed_mbps);
	PORT_LOG(NOTICE,
		 "port %u: in use: checksum offload rx TCP/UDP %s, IPv4 %s; tx TCP/UDP %s, "
		 "IPv4 %s (rx %s; tx %s)%s",
		 port, p->rx_cksum ? "on" : "off", p->rx_ip_cksum ? "on" : "off",
		 p->tx_cksum ? "on" : "off", p->tx_ip_cksum ? "on" : "off", p->rx_offloads,
		 p->tx_offloads,
		 p->rx_cksum && p->tx_cksum && p->rx_ip_cksum && p->tx_ip_cksum ?
			 "" : "; the stack computes the rest in software");
	PORT_LOG(NOTICE, "port %u: in use: chained TX mbufs %s, TSO %s", port,
		 p->tx_multi_seg ? "on" : "off", p->tx_tso ? "on" : "off");
	if (p->rss) {
		char keyhex[2 * DPDK_PORT_RSS_KEY_MAX + 1], reta[256];

		PORT_LOG(NOTICE, "port %u: RSS hf 0x%" PRIx64 " key %s", port, p->rss_hf,
			 dpdk_port_rss_key_hex(p, keyhex, sizeof(keyhex)));
		if (p->reta_size > 0)
			PORT_LOG(NOTICE, "port %u: RSS redirection table (%u entries): %s", port,
				 p->reta_size, dpdk_port_reta_string(p, reta, sizeof(reta)));
		else
			PORT_LOG(NOTICE,
				 "port %u: RSS redirection table: the driver does not expose it",
				 port);
	}
}

int
dpdk_port_setup(struct dpdk_port *p, const struct dpdk_port_config *cfg, char *err,
		size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint8_t key[DPDK_PORT_RSS_KEY_MAX];

	memset(p, 0, sizeof(*p));
	/* Until the device is configured there is nothing to undo. */
	if (port_probe(p, cfg, &info, err, errlen) < 0 ||
	    port_configure(p, cfg, &info, &conf, key, err, errlen) < 0)
		return -1;
	if (port_queues(p, cfg, &info, &conf, err, errlen) < 0 ||
	    port_start(p, cfg, &info, key, err, errlen) < 0) {
		dpdk_port_teardown(p);
		return -1;
	}
	port_log(p);
	return 0;
}

void
dpdk_port_teardown(struct dpdk_port *p)
{
	if (p->started) {
		rte_eth_dev_stop(p->port_id);
		p->started = false;
	}
	if (p->nb_queues > 0)
		rte_eth_dev_close(p->port_id);
	for (unsigned q = 0; q < DPDK_PORT_MAX_QUEUES; q++) {
		rte_mempool_free(p->pools[q]);
		p->pools[q] = NULL;
	}
	p->nb_queues = 0;
}

char *
dpdk_port_rss_key_hex(const struct dpdk_port *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->rss_key_len && used + 3 <= len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%02x", p->rss_key[i]);
	return buf;
}

char *
dpdk_port_reta_string(const struct dpdk_port *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->reta_size; i++) {
		int k = snprintf(buf + used, len - used, "%s%u", i ? " " : "", p->reta[i]);

		if (k < 0 || (size_t)k >= len - used) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			break;
		}
		used += (size_t)k;
	}
	return buf;
}

void
dpdk_port_stats(const struct dpdk_port *p, struct dpdk_port_stats *st)
{
	struct rte_eth_stats s;

	memset(st, 0, sizeof(*st));
	if (rte_eth_stats_get(p->port_id, &s) != 0)
		return;
	st->ipackets = s.ipackets;
	st->opackets = s.opackets;
	st->ibytes = s.ibytes;
	st->obytes = s.obytes;
	st->imissed = s.imissed;
	st->ierrors = s.ierrors;
	st->oerrors = s.oerrors;
	st->rx_nombuf = s.rx_nombuf;
}
