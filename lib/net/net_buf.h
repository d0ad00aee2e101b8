/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A TCP connection's byte buffers: the send ring (net_buf.c) and the
 * receive buffer, as the offsets the connection keeps into the buffer
 * pair it holds (net_conn.h).
 */
#ifndef SEGCACHED_NET_BUF_H
#define SEGCACHED_NET_BUF_H

#include <stdint.h>

/* Send buffer: a ring of `cap` bytes at `base` holding bytes from snd_una
 * onwards (sent and not yet acknowledged, then not yet sent). Base and
 * capacity live elsewhere (struct net_conn.bufs, the stack's sndbuf): the
 * connection keeps only the two offsets in its hot lines. */
struct net_sndbuf {
	uint32_t head; /* ring offset of the byte at snd_una */
	uint32_t len;  /* bytes held */
};

/* Ring offset of the byte `off` bytes after the head (off <= cap). */
static inline uint32_t
net_sndbuf_pos(const struct net_sndbuf *b, uint32_t cap, uint32_t off)
{
	uint32_t pos = b->head + off;

	return pos >= cap ? pos - cap : pos;
}

uint32_t net_sndbuf_append(struct net_sndbuf *b, uint8_t *base, uint32_t cap,
			   const void *data, uint32_t len);
/* Copy len bytes starting off bytes after the head into dst. */
void net_sndbuf_copy(const struct net_sndbuf *b, const uint8_t *base, uint32_t cap,
		     uint32_t off, void *dst, uint32_t len);
void net_sndbuf_drop(struct net_sndbuf *b, uint32_t cap, uint32_t len);

/* Receive buffer: linear, so the application always sees its unconsumed
 * bytes contiguously. [head, tail) are in-order bytes not yet consumed;
 * out-of-order bytes are written in place beyond tail (at tail + their
 * distance from rcv_nxt) and tracked as ranges until the gap fills. */
struct net_rcvbuf {
	uint32_t head;
	uint32_t tail;
};


#endif /* SEGCACHED_NET_BUF_H */
