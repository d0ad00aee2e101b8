/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Walking a claimed segment's items (seg_walk.c) with each one parsed and
 * hashed ITEMS_AHEAD ahead of the one handed out and its hash bucket
 * prefetched: a reclaimer (a merge pass, expiry, eviction) looks up every
 * item of a segment in a table far larger than the caches, and those
 * misses, not the copies, were most of its time.
 */
#ifndef SEGCACHED_SEG_WALK_H
#define SEGCACHED_SEG_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "seg/seg_hash.h"
#include "seg/seg_item.h"

struct seg_engine;

#define SEG_WALK_AHEAD 8

struct seg_walked {
	uint32_t off, span;
	struct item_view iv;
	struct seg_key k;
};

struct seg_walk {
	uint32_t seg;
	const uint8_t *data;
	uint32_t end, next_off;
	unsigned head, count;
	bool done;
	struct seg_walked q[SEG_WALK_AHEAD];
};

/* A walk over seg's items up to its valid end (the segment is claimed and
 * drained: its bytes do not change under the walk). */
void seg_walk_init(struct seg_engine *e, struct seg_walk *it, int32_t seg);
/* The next item (fillers skipped), valid until the call after; NULL at the
 * end or at an item that does not parse. */
const struct seg_walked *seg_walk_next(struct seg_engine *e, struct seg_walk *it);

#endif /* SEGCACHED_SEG_WALK_H */
