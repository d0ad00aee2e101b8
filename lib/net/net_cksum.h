/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The Internet checksum's one's complement sum (net_cksum.c) and its
 * folding; net_private.h's net_l4_cksum_ok and net_tx.c's net_l4_cksum use
 * them.
 */
#ifndef SEGCACHED_NET_CKSUM_H
#define SEGCACHED_NET_CKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* net_cksum.c: sum plus the one's complement sum of buf[0..len) (RFC
 * 1071), unfolded. Pieces summed one after another must each have an even
 * length but the last. */
uint64_t net_cksum_add(const void *buf, size_t len, uint64_t sum);

/* A 64-bit sum folded to 32 bits, its value modulo 2^16 - 1 kept. */
static inline uint32_t
net_cksum_fold32(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/* Folded to 16 bits: what rte_raw_cksum returns for the same bytes. */
static inline uint16_t
net_cksum_fold(uint64_t s)
{
	uint32_t x = net_cksum_fold32(s);

	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (uint16_t)x;
}

/* rte_raw_cksum() of an IPv4 header without options (20 bytes), in
 * line: five 32-bit words, a sum that cannot carry out of 64 bits (the
 * same fold as net_cksum_add's); rte_raw_cksum's generic loop was a third
 * of net_ipv4_input's instructions. */
static inline uint16_t
net_cksum_20(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;
	uint32_t w0, w1, w2, w3, w4;

	memcpy(&w0, b, 4);
	memcpy(&w1, b + 4, 4);
	memcpy(&w2, b + 8, 4);
	memcpy(&w3, b + 12, 4);
	memcpy(&w4, b + 16, 4);
	return net_cksum_fold((uint64_t)w0 + w1 + w2 + w3 + w4);
}

#endif /* SEGCACHED_NET_CKSUM_H */
