/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Local ports whose replies a NIC's RSS puts on a chosen queue (lg_rss.h).
 */
#include "lg_rss.h"

#include <string.h>

#include <rte_thash.h>

int
lg_rss_init(struct lg_rss *r, const uint8_t *key, unsigned key_len,
	    const uint16_t *reta, unsigned reta_size)
{
	uint32_t words[LG_RSS_KEY_MAX / 4];

	if (key_len < LG_RSS_KEY_MIN || key_len > LG_RSS_KEY_MAX || key_len % 4 != 0 ||
	    reta_size == 0 || reta_size > LG_RSS_RETA_MAX)
		return -1;
	memset(r, 0, sizeof(*r));
	/* rte_convert_rss_key reads whole aligned words */
	memcpy(words, key, key_len);
	rte_convert_rss_key(words, r->key_be, (int)key_len);
	memcpy(r->reta, reta, reta_size * sizeof(*reta));
	r->reta_size = (uint16_t)reta_size;
	return 0;
}

uint32_t
lg_rss_hash(const struct lg_rss *r, uint32_t src_ip, uint32_t dst_ip,
	    uint16_t src_port, uint16_t dst_port)
{
	/* The NIC's input order: source address, destination address,
	 * source port, destination port (struct rte_ipv4_tuple's words,
	 * spelled out so that it does not depend on the host's byte order). */
	uint32_t tuple[RTE_THASH_V4_L4_LEN] = {
		src_ip, dst_ip, (uint32_t)src_port << 16 | dst_port,
	};

	return rte_softrss_be(tuple, RTE_THASH_V4_L4_LEN, (const uint8_t *)r->key_be);
}

uint16_t
lg_rss_reply_queue(const struct lg_rss *r, const struct lg_rss_flow *f,
		   uint16_t local_port)
{
	uint32_t h = lg_rss_hash(r, f->server_ip, f->local_ip, f->server_port, local_port);

	/* NICs index the table with the hash's low bits; sizes are powers
	 * of two, for which this is the same */
	return r->reta[h % r->reta_size];
}

unsigned
lg_rss_pick_ports(const struct lg_rss *r, const struct lg_rss_flow *f, uint16_t q,
		  uint16_t lo, uint16_t hi, uint16_t start, uint16_t *ports, unsigned n)
{
	uint32_t span, got = 0;

	if (lo > hi)
		return 0;
	span = (uint32_t)hi - lo + 1;
	if (start < lo || start > hi)
		start = lo;
	for (uint32_t i = 0; i < span && got < n; i++) {
		uint16_t port = (uint16_t)(lo + (start - lo + i) % span);

		if (port != 0 && lg_rss_reply_queue(r, f, port) == q)
			ports[got++] = port;
	}
	return got;
}
