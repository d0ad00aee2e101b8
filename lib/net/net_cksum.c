/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The Internet checksum's one's complement sum (RFC 1071), for the TCP and
 * UDP checksums the stack computes and verifies in software when the port
 * does not offload them. DPDK 22.11's rte_raw_cksum adds one 16-bit word
 * at a time; this adds 32-bit words into 64-bit sums, which the compiler
 * unrolls and vectorises (docs/performance.md has the difference). Since
 * 2^16 = 1 modulo 2^16 - 1, a 32-bit word adds the same to the folded sum
 * as its two 16-bit halves, so the result is rte_raw_cksum's, bit for bit.
 */
#include <string.h>

#include "net/net_cksum.h"

__attribute__((hot)) uint64_t
net_cksum_add(const void *buf, size_t len, uint64_t sum)
{
	const uint8_t *p = buf;
	uint64_t s0 = 0, s1 = 0;
	uint32_t w[8];

	/* 32 bytes a turn into two sums: no overflow below 2^34 bytes */
	for (; len >= sizeof(w); len -= sizeof(w), p += sizeof(w)) {
		memcpy(w, p, sizeof(w));
		s0 += (uint64_t)w[0] + w[1] + w[2] + w[3];
		s1 += (uint64_t)w[4] + w[5] + w[6] + w[7];
	}
	for (; len >= 4; len -= 4, p += 4) {
		memcpy(w, p, 4);
		s0 += w[0];
	}
	if (len >= 2) {
		uint16_t h;

		memcpy(&h, p, 2);
		s1 += h;
		p += 2;
		len -= 2;
	}
	if (len > 0) {
		/* the odd byte is the first of a 16-bit word whose second is 0,
		 * in memory order, as rte_raw_cksum has it */
		uint16_t h = 0;

		memcpy(&h, p, 1);
		s1 += h;
	}
	/* sum may be large too: fold the three before adding */
	return (uint64_t)net_cksum_fold32(sum) + net_cksum_fold32(s0) + net_cksum_fold32(s1);
}
