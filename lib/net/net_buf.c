/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The TCP send ring. Its memory is carved out of one block at stack
 * creation; nothing here allocates.
 */
#include <string.h>

#include "net/net_private.h"

uint32_t
net_sndbuf_append(struct net_sndbuf *b, const void *data, uint32_t len)
{
	uint32_t room = b->cap - b->len;
	uint32_t tail, first;

	if (len > room)
		len = room;
	if (len == 0)
		return 0;
	tail = b->head + b->len;
	if (tail >= b->cap)
		tail -= b->cap;
	first = RTE_MIN(len, b->cap - tail);
	memcpy(b->base + tail, data, first);
	if (len > first)
		memcpy(b->base, (const uint8_t *)data + first, len - first);
	b->len += len;
	return len;
}

void
net_sndbuf_copy(const struct net_sndbuf *b, uint32_t off, void *dst, uint32_t len)
{
	uint32_t pos = b->head + off;
	uint32_t first;

	if (pos >= b->cap)
		pos -= b->cap;
	first = RTE_MIN(len, b->cap - pos);
	memcpy(dst, b->base + pos, first);
	if (len > first)
		memcpy((uint8_t *)dst + first, b->base, len - first);
}

void
net_sndbuf_drop(struct net_sndbuf *b, uint32_t len)
{
	if (len > b->len)
		len = b->len;
	b->head += len;
	if (b->head >= b->cap)
		b->head -= b->cap;
	b->len -= len;
	if (b->len == 0)
		b->head = 0;
}
