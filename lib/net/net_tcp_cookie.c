/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP's keyed hashes: initial sequence numbers (RFC 6528) and SYN cookies,
 * both SipHash-2-4 under the stack's secret.
 */
#include "net/net_tcp.h"

/* SipHash-2-4 over whole 64-bit words: the keyed PRF behind ISNs and SYN
 * cookies. A CRC would be cheaper but is linear, so one observed cookie
 * would let an attacker compute valid ones for spoofed 4-tuples. */
#define SIPROUND                                                             \
	do {                                                                 \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);    \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                       \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                       \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);    \
	} while (0)

static inline uint64_t
rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t
siphash_words(const uint64_t key[2], const uint64_t *m, unsigned n)
{
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
	uint64_t last = (uint64_t)(n * 8) << 56;

	for (unsigned i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND;
		SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static inline uint64_t
key_word(const struct net_conn_key *k)
{
	return (uint64_t)k->raddr << 32 | (uint32_t)k->rport << 16 | k->lport;
}

uint32_t
tcp_gen_isn(struct net_stack *s, const struct net_conn_key *k)
{
	/* RFC 6528: a 4 us clock plus a keyed hash of the 4-tuple. */
	uint64_t m[1] = { key_word(k) };

	return (uint32_t)siphash_words(s->secret, m, 1) + (uint32_t)(s->now >> 2);
}

/* The MSS a cookie connection may use: the largest entry not above the
 * peer's offer and ours. Four entries: the index rides in 2 bits. */
static const uint16_t cookie_mss[4] = { 536, 1220, 1460, 8960 };

/* A 32-bit keyed MAC over the 4-tuple, the peer's ISN and the cookie
 * period (the whole period number, not a few bits of it). */
static uint32_t
cookie_mac(struct net_stack *s, const struct net_conn_key *k, uint32_t peer_isn,
	   uint64_t period)
{
	uint64_t m[3] = { key_word(k), peer_isn, period };

	return (uint32_t)siphash_words(s->secret, m, 3);
}

/* cookie = mac(tuple, peer ISN, period) + MSS index (0..3).
 *
 * As Linux does without TCP timestamps, nothing else is encoded: the
 * cookie SYN-ACK offers no window scaling, so a cookie connection runs
 * unscaled. The check recovers the index by subtraction for the current
 * and the previous period, so a blind guess passes with probability
 * 2 * 4 / 2^32 = 2^-29 (Linux: about the same), against 2^-20 for the
 * 20-bit MAC with attacker-chosen fields this replaces (~14 forged
 * connections a second at 10 GbE minimum-frame rate). */
uint32_t
tcp_syncookie_make(struct net_stack *s, const struct net_conn_key *k,
		   uint32_t peer_isn, uint16_t peer_mss)
{
	uint64_t period = s->now >> COOKIE_PERIOD_SHIFT;
	uint32_t idx = 0;

	for (uint32_t i = 0; i < RTE_DIM(cookie_mss); i++)
		if (cookie_mss[i] <= peer_mss && cookie_mss[i] <= s->mss)
			idx = i;
	return cookie_mac(s, k, peer_isn, period) + idx;
}

bool
tcp_syncookie_check(struct net_stack *s, const struct net_conn_key *k,
		    uint32_t peer_isn, uint32_t cookie, uint16_t *mss)
{
	uint64_t now_period = s->now >> COOKIE_PERIOD_SHIFT;

	/* Valid for the current and the previous period. */
	for (uint64_t age = 0; age < 2 && age <= now_period; age++) {
		uint32_t idx = cookie - cookie_mac(s, k, peer_isn, now_period - age);

		if (idx < RTE_DIM(cookie_mss)) {
			*mss = cookie_mss[idx];
			return true;
		}
	}
	return false;
}
