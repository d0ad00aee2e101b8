/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Local ports whose replies a NIC's RSS puts on a chosen receive queue.
 *
 * A generator worker owns one RX/TX queue pair; the server's replies to
 * its TCP connections and UDP flows must come back to that queue, or
 * another worker's stack receives them (and resets or drops them). The
 * NIC picks the queue as reta[toeplitz(key, reply 4-tuple) % reta_size];
 * the reply's 4-tuple is (server address, our address, server port, our
 * port), and only our port is ours to choose. So each worker keeps the
 * ports for which that lookup names its own queue: the workers' port sets
 * are disjoint by construction. The hash is DPDK's rte_softrss_be.
 */
#ifndef LG_RSS_H
#define LG_RSS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LG_RSS_KEY_MAX 64
#define LG_RSS_RETA_MAX 512
/* The IPv4 4-tuple is three 32-bit words; Toeplitz reads one more key
 * word than input words. */
#define LG_RSS_KEY_MIN 16

/* The port's RSS state, as the device reported it. */
struct lg_rss {
	uint32_t key_be[LG_RSS_KEY_MAX / 4]; /* rte_convert_rss_key's form */
	uint16_t reta[LG_RSS_RETA_MAX];
	uint16_t reta_size;
};

/* A reply from server_ip:server_port to local_ip:(the port chosen). */
struct lg_rss_flow {
	uint32_t server_ip; /* host byte order */
	uint32_t local_ip;  /* host byte order */
	uint16_t server_port;
};

/* The key (key_len bytes, as programmed into the NIC) and redirection
 * table. Returns 0, or -1 when they cannot be used: a key shorter than
 * LG_RSS_KEY_MIN, longer than LG_RSS_KEY_MAX or not whole 32-bit words;
 * a table of 0 or more than LG_RSS_RETA_MAX entries. */
int lg_rss_init(struct lg_rss *r, const uint8_t *key, unsigned key_len,
		const uint16_t *reta, unsigned reta_size);

/* Toeplitz hash of an IPv4 TCP/UDP packet from src to dst (host byte
 * order), as the NIC computes it. */
uint32_t lg_rss_hash(const struct lg_rss *r, uint32_t src_ip, uint32_t dst_ip,
		     uint16_t src_port, uint16_t dst_port);

/* The receive queue of the reply to local port `local_port` of flow f. */
uint16_t lg_rss_reply_queue(const struct lg_rss *r, const struct lg_rss_flow *f,
			    uint16_t local_port);

/* Up to n distinct local ports in [lo, hi] whose replies land on queue q,
 * scanning from `start` (clamped into the range) upwards and wrapping
 * round once. Returns how many were found: fewer than n when the range
 * holds no more (none when the table never names q). */
unsigned lg_rss_pick_ports(const struct lg_rss *r, const struct lg_rss_flow *f,
			   uint16_t q, uint16_t lo, uint16_t hi, uint16_t start,
			   uint16_t *ports, unsigned n);

#ifdef __cplusplus
}
#endif

#endif /* LG_RSS_H */
