/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A claimed segment's items, parsed and hashed ahead, their hash buckets
 * prefetched (seg_walk.h). Calls seg_hash.h's key hashing and seg_item.h's
 * parsing only.
 */
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_walk.h"

void
seg_walk_init(struct seg_engine *e, struct seg_walk *it, int32_t seg)
{
	it->seg = (uint32_t)seg;
	it->data = seg_data(e, seg);
	it->end = seg_valid_end(e, seg);
	it->next_off = 0;
	it->head = it->count = 0;
	it->done = false;
}

const struct seg_walked *
seg_walk_next(struct seg_engine *e, struct seg_walk *it)
{
	const struct seg_walked *wi;

	while (!it->done && it->count < SEG_WALK_AHEAD) {
		struct seg_walked *n = &it->q[(it->head + it->count) % SEG_WALK_AHEAD];
		const uint32_t off = it->next_off;

		if (off >= it->end || !seg_parse_in(e, it->seg, off, it->end, &n->iv)) {
			it->done = true;
			break;
		}
		n->off = off;
		n->span = item_span(n->iv.total, e->off_shift);
		if (item_is_filler(it->data + off, &n->iv)) { /* no item: seg_chunk.c */
			it->next_off = off + n->span;
			continue;
		}
		seg_key_init(e, &n->k, it->data + off + n->iv.hdr_len, n->iv.klen);
		/* The chain it hashes to now, and its lock's stripe (most
		 * often the same bucket). */
		__builtin_prefetch(seg_hash_chain(e, &n->k));
		__builtin_prefetch(n->k.head);
		it->next_off = off + n->span;
		it->count++;
	}
	if (it->count == 0)
		return NULL;
	wi = &it->q[it->head];
	it->head = (it->head + 1) % SEG_WALK_AHEAD;
	it->count--;
	return wi;
}
