// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/net: checksums. The fixture (Net) and the frame
// builders are net_harness.h's.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <rte_ip.h>

#include "net_harness.h"

extern "C" {
#include "net/net_private.h" /* net_cksum_add, tested directly */
}

using namespace nettest;

namespace {

// net_cksum_add sums 32-bit words where rte_raw_cksum sums 16-bit ones:
// the folded result must be the same for every length and alignment, for
// data that makes the sums carry (all ones) and for zeros, and when the
// bytes are summed in pieces of even length.
TEST(NetCksum, SameAsDpdkForEveryLengthAndAlignment)
{
	std::mt19937 rng(7);
	std::vector<uint8_t> buf(4096 + 16);
	for (int fill = 0; fill < 3; fill++) {
		for (auto &b : buf)
			b = fill == 0 ? uint8_t(rng()) : fill == 1 ? 0xff : 0;
		for (size_t len = 0; len <= 1600; len++)
			for (size_t off = 0; off < 8; off++) {
				const uint8_t *p = buf.data() + off;
				ASSERT_EQ(net_cksum_fold(net_cksum_add(p, len, 0)), rte_raw_cksum(p, len))
					<< "fill " << fill << " len " << len << " off " << off;
			}
		size_t len = 4096, cut = 2 * (rng() % 2048);
		uint64_t sum = net_cksum_add(buf.data(), cut, 0);
		sum = net_cksum_add(buf.data() + cut, len - cut, sum);
		EXPECT_EQ(net_cksum_fold(sum), rte_raw_cksum(buf.data(), len)) << "cut " << cut;
	}
	// A large starting sum (a pseudo-header sum, or many pieces) folds in.
	uint8_t two[2] = { 0x12, 0x34 };
	uint16_t word;
	memcpy(&word, two, 2);
	EXPECT_EQ(net_cksum_fold(net_cksum_add(two, 2, 0xfffffffffffull)),
		  net_cksum_fold(uint64_t(net_cksum_fold(0xfffffffffffull)) + word));
}

// The in-line sum of an option-less IPv4 header (net_ipv4_input's check)
// is rte_raw_cksum's for any 20 bytes at any alignment: random bytes, all
// ones (a sum that carries), zeros, and valid headers (which sum to 0xffff).
TEST(NetCksum, TwentyBytesSameAsDpdk)
{
	std::mt19937 rng(11);
	uint8_t buf[20 + 8];
	for (int round = 0; round < 3000; round++) {
		for (auto &b : buf)
			b = round == 0 ? 0xff : round == 1 ? 0 : uint8_t(rng());
		for (size_t off = 0; off < 8; off++) {
			uint8_t *p = buf + off;
			ASSERT_EQ(net_cksum_20(p), rte_raw_cksum(p, 20)) << "round " << round << " off " << off;
			if (round < 2)
				continue;
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
			ip->version_ihl = 0x45; // rte_ipv4_cksum reads the length from it
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			ASSERT_EQ(net_cksum_20(p), 0xffff) << "round " << round << " off " << off;
		}
	}
}

} // namespace
