/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * drivers/net/dpdk on virtual ports: net_null (many queues, RSS with a
 * readable key and redirection table) and net_ring (one queue pair), both
 * created afresh for each test by hot-plugging a vdev.
 */
#include <gtest/gtest.h>

#include <string>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "drivers/net/dpdk/dpdk_port.h"

namespace {

int vdev_counter;

/* Creates a new virtual port of the driver and returns its id. */
int
new_vdev(const char *driver, const char *args = "")
{
	std::string name = std::string(driver) + std::to_string(++vdev_counter);
	std::string devargs = name + (args[0] ? std::string(",") + args : std::string());
	uint16_t port;

	/* EAL hot-plug: the vdev bus takes "driverN,args". */
	if (rte_dev_probe(devargs.c_str()) != 0)
		return -1;
	if (rte_eth_dev_get_port_by_name(name.c_str(), &port) != 0)
		return -1;
	return port;
}

struct PortTest : ::testing::Test {
	struct dpdk_port port;
	unsigned lcores[DPDK_PORT_MAX_QUEUES];
	char err[1024];

	void SetUp() override
	{
		memset(&port, 0, sizeof(port));
		for (unsigned &l : lcores)
			l = rte_get_main_lcore();
		err[0] = '\0';
	}

	struct dpdk_port_config config(int port_id, uint16_t queues)
	{
		struct dpdk_port_config c;

		memset(&c, 0, sizeof(c));
		c.port_id = port_id;
		c.nb_queues = queues;
		c.lcores = lcores;
		c.rx_desc = 256;
		c.tx_desc = 256;
		c.extra_mbufs = 512;
		c.link_timeout_ms = 2000;
		return c;
	}
};

TEST_F(PortTest, NullPortWithFourQueuesAndRss)
{
	int id = new_vdev("net_null");
	ASSERT_GE(id, 0);
	struct dpdk_port_config c = config(id, 4);

	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	EXPECT_EQ(port.port_id, id);
	EXPECT_EQ(port.nb_queues, 4);
	EXPECT_TRUE(port.started);
	EXPECT_TRUE(port.link_up);
	EXPECT_EQ(port.mtu, RTE_ETHER_MTU);
	EXPECT_EQ(port.rx_desc, 256);
	for (unsigned q = 0; q < 4; q++) {
		ASSERT_NE(port.pools[q], nullptr);
		/* A full frame fits one mbuf, and the pool covers both rings,
		 * the extra packets and the lcore caches. */
		EXPECT_GE(rte_pktmbuf_data_room_size(port.pools[q]),
			  RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + RTE_ETHER_MTU);
		EXPECT_GE(port.pools[q]->size, 256u + 256u + 512u);
	}
	EXPECT_EQ(port.pools[4], nullptr);
	/* net_null hashes: RSS on, with a random key and the table spread
	 * over the four queues. */
	ASSERT_TRUE(port.rss);
	EXPECT_NE(port.rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_TCP, 0u);
	ASSERT_GT(port.rss_key_len, 0);
	uint8_t first_key[DPDK_PORT_RSS_KEY_MAX];
	unsigned symmetric = 0;
	memcpy(first_key, port.rss_key, port.rss_key_len);
	for (unsigned i = 0; i < port.rss_key_len; i++)
		symmetric += port.rss_key[i] == ((i & 1) ? 0x5a : 0x6d);
	EXPECT_LT(symmetric, port.rss_key_len); /* not the well-known key */
	ASSERT_GT(port.reta_size, 0);
	for (unsigned i = 0; i < port.reta_size; i++)
		EXPECT_EQ(port.reta[i], i % 4) << i;
	char buf[256];
	EXPECT_EQ(std::string(dpdk_port_reta_string(&port, buf, sizeof(buf))).substr(0, 8),
		  "0 1 2 3 ");
	dpdk_port_teardown(&port);
	EXPECT_FALSE(port.started);
	EXPECT_EQ(port.pools[0], nullptr);

	/* Another start, another key. */
	c = config(new_vdev("net_null"), 4);
	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	EXPECT_NE(memcmp(first_key, port.rss_key, port.rss_key_len), 0);
	dpdk_port_teardown(&port);

	/* A given key (for reproducible tests) is repeated to the NIC's
	 * size: 6d5a gives the symmetric key. */
	static const uint8_t sym[2] = { 0x6d, 0x5a };
	c = config(new_vdev("net_null"), 4);
	c.rss_key = sym;
	c.rss_key_len = 2;
	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	for (unsigned i = 0; i < port.rss_key_len; i++)
		EXPECT_EQ(port.rss_key[i], (i & 1) ? 0x5a : 0x6d) << i;
	EXPECT_EQ(std::string(dpdk_port_rss_key_hex(&port, buf, sizeof(buf))).substr(0, 8),
		  "6d5a6d5a");
	dpdk_port_teardown(&port);
}

TEST_F(PortTest, OneQueueHasNoRss)
{
	int id = new_vdev("net_null");
	ASSERT_GE(id, 0);
	struct dpdk_port_config c = config(id, 1);

	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	EXPECT_FALSE(port.rss);
	EXPECT_EQ(port.reta_size, 0);
	/* No checksum offload on net_null: the stack is told to compute. */
	EXPECT_FALSE(port.tx_cksum);
	EXPECT_EQ(std::string(port.tx_offloads), "none");
	dpdk_port_teardown(&port);
}

TEST_F(PortTest, FirstPortWhenNoneNamed)
{
	int id = new_vdev("net_null");
	ASSERT_GE(id, 0);
	struct dpdk_port_config c = config(-1, 1);
	uint16_t first = RTE_MAX_ETHPORTS, p;

	RTE_ETH_FOREACH_DEV(p) {
		first = p;
		break;
	}
	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	EXPECT_EQ(port.port_id, first);
	dpdk_port_teardown(&port);
}

TEST_F(PortTest, MoreQueuesThanThePortHasIsAClearError)
{
	int id = new_vdev("net_ring");
	ASSERT_GE(id, 0);
	struct rte_eth_dev_info info;

	ASSERT_EQ(rte_eth_dev_info_get((uint16_t)id, &info), 0);
	uint16_t want = RTE_MIN(info.max_rx_queues, info.max_tx_queues) + 1;
	if (want > DPDK_PORT_MAX_QUEUES)
		GTEST_SKIP() << "net_ring has " << info.max_rx_queues << " queues";
	struct dpdk_port_config c = config(id, want);
	std::string expect = "but " + std::to_string(want) + " worker lcores need one each";

	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, expect.c_str()), nullptr) << err;
	EXPECT_FALSE(port.started);
	/* The port is untouched and usable with what it has. */
	c.nb_queues = 1;
	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	dpdk_port_teardown(&port);
}

TEST_F(PortTest, UnknownPortIdIsAClearError)
{
	ASSERT_GE(new_vdev("net_null"), 0);
	struct dpdk_port_config c = config(RTE_MAX_ETHPORTS - 1, 1);

	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, "no such port"), nullptr) << err;
}

TEST_F(PortTest, JumboMtuSizesTheMbufs)
{
	int id = new_vdev("net_null");
	ASSERT_GE(id, 0);
	struct dpdk_port_config c = config(id, 1);

	c.mtu = 9000;
	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), 0) << err;
	EXPECT_EQ(port.mtu, 9000);
	uint16_t mtu = 0;
	ASSERT_EQ(rte_eth_dev_get_mtu(port.port_id, &mtu), 0);
	EXPECT_EQ(mtu, 9000);
	/* A whole jumbo frame fits one mbuf: lib/net never sees chains. */
	EXPECT_GE(rte_pktmbuf_data_room_size(port.pools[0]),
		  RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + 9000);
	dpdk_port_teardown(&port);
}

TEST_F(PortTest, ZeroQueuesRefused)
{
	struct dpdk_port_config c = config(-1, 0);

	ASSERT_EQ(dpdk_port_setup(&port, &c, err, sizeof(err)), -1);
	EXPECT_NE(strstr(err, "queues must be"), nullptr) << err;
}

} // namespace

int
main(int argc, char **argv)
{
	::testing::InitGoogleTest(&argc, argv);
	const char *eal[] = { "test_dpdk_port", "--no-huge", "--no-pci", "--no-shconf",
			      "-l", "0", "-m", "256", "--log-level", "*:warning" };
	if (rte_eal_init((int)RTE_DIM(eal), (char **)(uintptr_t)eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	int rc = RUN_ALL_TESTS();
	rte_eal_cleanup();
	return rc;
}
