/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The Internet checksum's one's complement sum (RFC 1071), for the TCP and
 * UDP checksums the stack computes and verifies in software when the port
 * does not offload them. DPDK 22.11's rte_raw_cksum adds one 16-bit word
 * at a time; this adds 64-bit words with the carry added back in (an add
 * and an add-with-carry each). Since 2^16 = 1 modulo 2^16 - 1, a 64-bit
 * word adds the same to the folded sum as its four 16-bit parts, and an
 * end-around carry keeps the sum's value modulo 2^64 - 1, a multiple of
 * 2^16 - 1; a sum of non-zero data never folds to 0, so the result is
 * rte_raw_cksum's, bit for bit (tests/unit/net/test_net_cksum.cc).
 */
#include <string.h>

#include "net/net_cksum.h"

/* s + w with the carry out of bit 63 added back in (GCC: add, adc) */
static inline uint64_t
add_eac(uint64_t s, uint64_t w)
{
	s += w;
	return s + (s < w);
}

__attribute__((hot)) uint64_t
net_cksum_add(const void *buf, size_t len, uint64_t sum)
{
	const uint8_t *p = buf;
	uint64_t s0 = 0, s1 = 0, w0, w1;

	/* two sums, so that the two carry chains run side by side (the
	 * memcpy()s are plain unaligned loads) */
	for (; len >= 16; len -= 16, p += 16) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		s0 = add_eac(s0, w0);
		s1 = add_eac(s1, w1);
	}
	if (len >= 8) {
		memcpy(&w0, p, 8);
		s0 = add_eac(s0, w0);
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		uint32_t h;

		memcpy(&h, p, 4);
		s1 = add_eac(s1, h);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t h;

		memcpy(&h, p, 2);
		s0 = add_eac(s0, h);
		p += 2;
		len -= 2;
	}
	if (len > 0) {
		/* the odd byte is the first of a 16-bit word whose second is 0,
		 * in memory order, as rte_raw_cksum has it */
		uint16_t h = 0;

		memcpy(&h, p, 1);
		s1 = add_eac(s1, h);
	}
	/* below 2^32 like the callers' header values, so that they can add
	 * a few of those and pieces' sums without a carry out of bit 63 */
	return net_cksum_fold32(add_eac(add_eac(s0, s1), sum));
}
