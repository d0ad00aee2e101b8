/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Items larger than a segment (seg_large.c), and the byte copies every
 * item's value goes through: in place for an item inside its segment,
 * across the segments a large item's head links for one that is not.
 */
#ifndef SEGCACHED_SEG_LARGE_H
#define SEGCACHED_SEG_LARGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "seg/seg_struct.h"

struct seg_wloc;
struct ttl_place;

/* Reserves a large item of `size` bytes (more than a segment) for t: the
 * segments it needs, its head sealed in t's chain, under w's append mark,
 * as seg_reserve() returns (seg_append.h). */
int seg_reserve_large(struct seg_worker *w, const struct ttl_place *t, int64_t now,
		      uint32_t size, struct seg_wloc *out);
/* A reserved large item that was not linked: its segments back at once
 * (drop: the head of life gen, reserved and unmarked; abandon: under the
 * mark, which it takes off). Not an eviction of anything readable. */
void seg_large_drop(struct seg_worker *w, int32_t head, uint64_t gen);
void seg_large_abandon(struct seg_worker *w, const struct seg_wloc *wl);

/* The copies across a large item's segments; pos counts from the start of
 * its head segment. get is false when a link is out of range: a torn
 * lock-free read, which the caller's gen check throws away. */
bool seg_large_get(const struct seg_engine *e, uint32_t head, uint32_t pos, void *dst,
		   uint32_t len);
void seg_large_put(const struct seg_engine *e, uint32_t head, uint32_t pos, const void *src,
		   uint32_t len);

/* len bytes at pos of the item at byte offset off of seg, out to dst. */
static inline bool
seg_item_get(const struct seg_engine *e, uint32_t seg, uint32_t off, uint32_t pos, void *dst,
	     uint32_t len)
{
	if (SEG_LIKELY(off + pos + len <= e->seg_size)) {
		memcpy(dst, seg_data(e, seg) + off + pos, len);
		return true;
	}
	return seg_large_get(e, seg, off + pos, dst, len);
}

/* len bytes from src into the item at byte offset off of seg, at pos. */
static inline void
seg_item_put(const struct seg_engine *e, uint32_t seg, uint32_t off, uint32_t pos,
	     const void *src, uint32_t len)
{
	if (SEG_LIKELY(off + pos + len <= e->seg_size))
		memcpy(seg_data(e, seg) + off + pos, src, len);
	else
		seg_large_put(e, seg, off + pos, src, len);
}

/* len bytes from one item to another (a read-modify-write's new item):
 * memmove in place (the old item's segment may have been reused under a
 * lock-free reader, so the two may overlap; the copy is dropped then),
 * else through a bounce buffer. false as seg_item_get. */
bool seg_item_copy(const struct seg_engine *e, uint32_t dseg, uint32_t doff, uint32_t dpos,
		   uint32_t sseg, uint32_t soff, uint32_t spos, uint32_t len);

#endif /* SEGCACHED_SEG_LARGE_H */
