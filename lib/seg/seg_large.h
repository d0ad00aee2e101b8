/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The byte copies every item's value goes through: in place for an item
 * inside its segment, across the continuation segments a large item's
 * head links for one that is not (items larger than a segment, which
 * seg_append.c reserves whole; docs/architecture.md, "Items larger than a
 * segment").
 */
#ifndef SEGCACHED_SEG_LARGE_H
#define SEGCACHED_SEG_LARGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "seg/seg_struct.h"

/* The segment that holds byte *pos of the large item headed by seg, *pos
 * made relative to it; SEG_NONE when a link is out of range (a torn
 * lock-free read, which the caller's gen check throws away). */
static inline int32_t
seg_large_seek(const struct seg_engine *e, int32_t seg, uint32_t *pos)
{
	while (*pos >= e->seg_size) {
		seg = __atomic_load_n(&e->hdr[seg].cont, __ATOMIC_RELAXED);
		if (seg < 0 || (uint32_t)seg >= e->nseg)
			return SEG_NONE;
		*pos -= e->seg_size;
	}
	return seg;
}

/* len bytes at pos (from the start of the head segment) of the large item
 * headed by head, out to buf or in from it. false: a link out of range. */
static inline bool
seg_large_copy(const struct seg_engine *e, uint32_t head, uint32_t pos, uint8_t *buf,
	       uint32_t len, bool out)
{
	int32_t seg = seg_large_seek(e, (int32_t)head, &pos);

	while (seg != SEG_NONE) {
		const uint32_t n = len < e->seg_size - pos ? len : e->seg_size - pos;
		uint8_t *p = seg_data(e, (uint32_t)seg) + pos;

		if (out)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		buf += n;
		len -= n;
		if (len == 0)
			return true;
		pos = e->seg_size;
		seg = seg_large_seek(e, seg, &pos);
	}
	return false;
}

/* len bytes at pos of the item at byte offset off of seg, out to dst. */
static inline bool
seg_item_get(const struct seg_engine *e, uint32_t seg, uint32_t off, uint32_t pos, void *dst,
	     uint32_t len)
{
	if (SEG_LIKELY(off + pos + len <= e->seg_size)) {
		memcpy(dst, seg_data(e, seg) + off + pos, len);
		return true;
	}
	return seg_large_copy(e, seg, off + pos, (uint8_t *)dst, len, true);
}

/* len bytes from src into the item at byte offset off of seg, at pos (the
 * writer's own reservation: its links are whole). */
static inline void
seg_item_put(const struct seg_engine *e, uint32_t seg, uint32_t off, uint32_t pos,
	     const void *src, uint32_t len)
{
	if (SEG_LIKELY(off + pos + len <= e->seg_size))
		memcpy(seg_data(e, seg) + off + pos, src, len);
	else
		(void)seg_large_copy(e, seg, off + pos, (uint8_t *)(uintptr_t)src, len, false);
}

/* len bytes from one item to another (a read-modify-write's new item):
 * memmove in place (the old item's segment may have been reused under a
 * lock-free reader, so the two may overlap; the copy is dropped then),
 * else through a bounce buffer. false as seg_item_get. */
static inline bool
seg_item_copy(const struct seg_engine *e, uint32_t dseg, uint32_t doff, uint32_t dpos,
	      uint32_t sseg, uint32_t soff, uint32_t spos, uint32_t len)
{
	uint8_t bounce[4096];

	if (doff + dpos + len <= e->seg_size && soff + spos + len <= e->seg_size) {
		memmove(seg_data(e, dseg) + doff + dpos, seg_data(e, sseg) + soff + spos, len);
		return true;
	}
	while (len) {
		const uint32_t n = len < sizeof(bounce) ? len : (uint32_t)sizeof(bounce);

		if (!seg_item_get(e, sseg, soff, spos, bounce, n))
			return false;
		seg_item_put(e, dseg, doff, dpos, bounce, n);
		spos += n;
		dpos += n;
		len -= n;
	}
	return true;
}

#endif /* SEGCACHED_SEG_LARGE_H */
