/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The TCP send ring. Its memory belongs to the connection's buffer pair
 * (net_pool.c); nothing here allocates.
 */
#include <string.h>

#include <rte_common.h>

#include "net/net_buf.h"

uint32_t
net_sndbuf_append(struct net_sndbuf *b, uint8_t *base, uint32_t cap, const void *data,
		  uint32_t len)
{
	uint32_t room = cap - b->len;
	uint32_t tail, first;

	if (len > room)
		len = room;
	if (len == 0)
		return 0;
	tail = net_sndbuf_pos(b, cap, b->len);
	first = RTE_MIN(len, cap - tail);
	memcpy(base + tail, data, first);
	if (len > first)
		memcpy(base, (const uint8_t *)data + first, len - first);
	b->len += len;
	return len;
}

void
net_sndbuf_copy(const struct net_sndbuf *b, const uint8_t *base, uint32_t cap, uint32_t off,
		void *dst, uint32_t len)
{
	uint32_t pos = net_sndbuf_pos(b, cap, off);
	uint32_t first;

	first = RTE_MIN(len, cap - pos);
	memcpy(dst, base + pos, first);
	if (len > first)
		memcpy((uint8_t *)dst + first, base, len - first);
}

void
net_sndbuf_drop(struct net_sndbuf *b, uint32_t cap, uint32_t len)
{
	if (len > b->len)
		len = b->len;
	b->head += len;
	if (b->head >= cap)
		b->head -= cap;
	b->len -= len;
	if (b->len == 0)
		b->head = 0;
}
