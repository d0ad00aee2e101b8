// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// lg_rss's port selection against DPDK's rte_softrss: the published RSS
// verification vectors, then for several keys, redirection-table sizes
// and queue counts, every chosen port's reply hashed the way DPDK's
// documentation says a NIC does lands on the worker's queue, the workers'
// ports are disjoint, and the ports a generator took before (consecutive
// ones) do not in general.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include <rte_thash.h>

extern "C" {
#include "lg_rss.h"
}

namespace {

#define IPV4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

// Microsoft's RSS verification key (also the 82599 datasheet's).
const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

// The reference: DPDK's rte_softrss over its struct rte_ipv4_tuple, the
// key as the NIC has it, and the table indexed by the hash's low bits.
uint32_t
ref_hash(const std::vector<uint8_t> &key, uint32_t src, uint32_t dst, uint16_t sport,
	 uint16_t dport)
{
	alignas(8) uint8_t k[LG_RSS_KEY_MAX] = {};
	union rte_thash_tuple t;

	memcpy(k, key.data(), key.size());
	memset(&t, 0, sizeof(t));
	t.v4.src_addr = src;
	t.v4.dst_addr = dst;
	t.v4.sport = sport;
	t.v4.dport = dport;
	return rte_softrss((uint32_t *)&t.v4, RTE_THASH_V4_L4_LEN, k);
}

uint16_t
ref_queue(const std::vector<uint8_t> &key, const std::vector<uint16_t> &reta,
	  const lg_rss_flow &f, uint16_t local_port)
{
	uint32_t h = ref_hash(key, f.server_ip, f.local_ip, f.server_port, local_port);

	return reta[h & (reta.size() - 1)];
}

std::vector<uint8_t>
random_key(size_t len, uint64_t seed)
{
	std::vector<uint8_t> k(len);

	for (auto &b : k) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		b = (uint8_t)(seed >> 56);
	}
	return k;
}

std::vector<uint8_t>
symmetric_key(size_t len)
{
	std::vector<uint8_t> k(len);

	for (size_t i = 0; i < len; i++)
		k[i] = i % 2 ? 0x5a : 0x6d;
	return k;
}

// Round robin (what drivers/net/dpdk programs) or a scrambled table (a
// driver that keeps its own), each queue named at least once.
std::vector<uint16_t>
make_reta(unsigned size, unsigned queues, bool scrambled)
{
	std::vector<uint16_t> r(size);

	for (unsigned i = 0; i < size; i++)
		r[i] = (uint16_t)(scrambled ? (i * 7 + i / 3) % queues : i % queues);
	for (unsigned q = 0; q < queues; q++)
		r[(q * 5) % size] = (uint16_t)q;
	return r;
}

lg_rss
make_rss(const std::vector<uint8_t> &key, const std::vector<uint16_t> &reta)
{
	lg_rss r;

	EXPECT_EQ(lg_rss_init(&r, key.data(), (unsigned)key.size(), reta.data(),
			      (unsigned)reta.size()), 0);
	return r;
}

struct vector4 {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint32_t hash;
};

// Microsoft's "Verifying the RSS Hash Calculation", IPv4 with TCP.
const vector4 ms_vectors[] = {
	{IPV4(66, 9, 149, 187), IPV4(161, 142, 100, 80), 2794, 1766, 0x51ccc178},
	{IPV4(199, 92, 111, 2), IPV4(65, 69, 140, 83), 14230, 4739, 0xc626b0ea},
	{IPV4(24, 19, 198, 95), IPV4(12, 22, 207, 184), 12898, 38024, 0x5c2b394a},
	{IPV4(38, 27, 205, 30), IPV4(209, 142, 163, 6), 48228, 2217, 0xafc7327f},
	{IPV4(153, 39, 163, 191), IPV4(202, 188, 127, 2), 44251, 1303, 0x10e828a2},
};

TEST(LoadgenRss, HashMatchesTheVerificationSuiteAndSoftrss)
{
	std::vector<uint8_t> key(ms_key, ms_key + sizeof(ms_key));
	std::vector<uint16_t> reta(128, 0);
	lg_rss r = make_rss(key, reta);

	for (const auto &v : ms_vectors) {
		EXPECT_EQ(ref_hash(key, v.src, v.dst, v.sport, v.dport), v.hash);
		EXPECT_EQ(lg_rss_hash(&r, v.src, v.dst, v.sport, v.dport), v.hash);
		// source and destination are not interchangeable under this key
		EXPECT_NE(lg_rss_hash(&r, v.src, v.dst, v.dport, v.sport), v.hash);
	}
}

TEST(LoadgenRss, ReplyQueueAgreesWithSoftrssOnEveryPort)
{
	const lg_rss_flow f = {IPV4(198, 18, 0, 1), IPV4(198, 18, 0, 2), 11211};
	const std::vector<std::vector<uint8_t>> keys = {
		std::vector<uint8_t>(ms_key, ms_key + sizeof(ms_key)), symmetric_key(40),
		random_key(40, 1), random_key(52, 2),
	};

	for (const auto &key : keys) {
		std::vector<uint16_t> reta = make_reta(512, 16, true);
		lg_rss r = make_rss(key, reta);

		for (uint32_t port = 1; port <= 65535; port++)
			ASSERT_EQ(lg_rss_reply_queue(&r, &f, (uint16_t)port),
				  ref_queue(key, reta, f, (uint16_t)port))
				<< "key of " << key.size() << " bytes, port " << port;
	}
}

TEST(LoadgenRss, ChosenPortsComeBackToTheirQueueAndConsecutiveOnesDoNot)
{
	const std::vector<std::vector<uint8_t>> keys = {
		std::vector<uint8_t>(ms_key, ms_key + sizeof(ms_key)), symmetric_key(40),
		random_key(40, 3), random_key(52, 4), random_key(40, 5),
	};
	const lg_rss_flow flows[] = {
		{IPV4(198, 18, 0, 1), IPV4(198, 18, 0, 2), 11211},
		{IPV4(198, 19, 7, 200), IPV4(198, 18, 3, 9), 5000},
	};
	const unsigned reta_sizes[] = {64, 128, 512};
	const unsigned queue_counts[] = {2, 3, 4, 8, 16};
	const unsigned want = 64; // connections per worker

	for (const auto &key : keys)
		for (const auto &f : flows)
			for (unsigned size : reta_sizes)
				for (unsigned nq : queue_counts)
					for (bool scrambled : {false, true}) {
		std::vector<uint16_t> reta = make_reta(size, nq, scrambled);
		lg_rss r = make_rss(key, reta);
		std::set<uint16_t> all;

		for (uint16_t q = 0; q < nq; q++) {
			uint16_t ports[want];
			unsigned got = lg_rss_pick_ports(&r, &f, q, 1024, 65535, 30000, ports, want);
			unsigned naive_here = 0;

			ASSERT_EQ(got, want);
			for (unsigned i = 0; i < got; i++) {
				ASSERT_GE(ports[i], 1024);
				ASSERT_EQ(ref_queue(key, reta, f, ports[i]), q)
					<< "port " << ports[i] << " queue " << q << " of " << nq
					<< ", table of " << size;
				ASSERT_TRUE(all.insert(ports[i]).second)
					<< "port " << ports[i] << " taken twice";
			}
			// the generator's former choice: consecutive ports
			for (unsigned i = 0; i < want; i++)
				naive_here += ref_queue(key, reta, f, (uint16_t)(40000 + i)) == q;
			EXPECT_LT(naive_here, want);
		}
	}
}

TEST(LoadgenRss, RangeRunsOutOrNeverNamesTheQueue)
{
	std::vector<uint8_t> key = random_key(40, 6);
	std::vector<uint16_t> reta = make_reta(128, 4, false);
	const lg_rss_flow f = {IPV4(198, 18, 0, 1), IPV4(198, 18, 0, 2), 11211};
	lg_rss r = make_rss(key, reta);
	uint16_t ports[256];
	unsigned expect = 0, got;

	// a 100-port range holds about 25 for each of 4 queues, and the scan
	// wraps round from a start in its middle
	for (uint32_t p = 20000; p < 20100; p++)
		expect += ref_queue(key, reta, f, (uint16_t)p) == 1;
	got = lg_rss_pick_ports(&r, &f, 1, 20000, 20099, 20050, ports, 256);
	EXPECT_EQ(got, expect);
	EXPECT_GT(got, 0u);
	EXPECT_LT(got, 100u);
	for (unsigned i = 0; i < got; i++) {
		EXPECT_GE(ports[i], 20000);
		EXPECT_LE(ports[i], 20099);
		EXPECT_EQ(ref_queue(key, reta, f, ports[i]), 1);
	}
	EXPECT_GE(ports[0], 20050); // from the start, not the range's bottom
	EXPECT_EQ(lg_rss_pick_ports(&r, &f, 4, 1024, 65535, 1024, ports, 8), 0u);
	EXPECT_EQ(lg_rss_pick_ports(&r, &f, 0, 2000, 1999, 2000, ports, 8), 0u);
	// a start outside the range counts from its bottom
	EXPECT_EQ(lg_rss_pick_ports(&r, &f, 1, 20000, 20099, 7, ports, 256), expect);
	EXPECT_EQ(ports[0] >= 20000 && ports[0] < 20050, true);
}

TEST(LoadgenRss, UnusableKeysAndTablesAreRefused)
{
	std::vector<uint8_t> key = random_key(68, 7);
	std::vector<uint16_t> reta(LG_RSS_RETA_MAX + 1, 0);
	lg_rss r;

	EXPECT_EQ(lg_rss_init(&r, key.data(), 12, reta.data(), 128), -1);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 42, reta.data(), 128), -1);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 68, reta.data(), 128), -1);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 40, reta.data(), 0), -1);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 40, reta.data(), LG_RSS_RETA_MAX + 1), -1);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 16, reta.data(), LG_RSS_RETA_MAX), 0);
	EXPECT_EQ(lg_rss_init(&r, key.data(), 64, reta.data(), 1), 0);
}

} // namespace
