/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Expiry: taking a whole segment's items out of the hash table
 * (seg_unlink_all, seg_reclaim_whole) and proactive expiration from the
 * heads of the TTL chains, which are sorted by expiry. seg_flush.c and
 * seg_evict.c reclaim through it; it calls seg_hash.c and seg_segment.c
 * only.
 */
#include "seg/seg_expire.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

unsigned
seg_unlink_all(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why)
{
	const uint32_t end = seg_valid_end(e, seg);
	const uint8_t *data = seg_data(e, seg);
	const uint64_t gen = atomic_load(&e->hdr[seg].gen); /* claimed: stable */
	unsigned live = 0, unfetched = 0;

	for (uint32_t off = 0; off < end;) {
		struct item_view iv;
		struct seg_key k;
		uint64_t v;

		if (!item_parse(data + off, end - off, &iv))
			break;
		if (item_is_filler(data + off, &iv)) {
			off += item_span(iv.total, e->off_shift);
			continue;
		}
		seg_key_init(e, &k, data + off + iv.hdr_len, iv.klen);
		atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
		v = seg_hash_unlink_loc(e, &k, (uint32_t)seg, off >> e->off_shift, gen);
		if (v) {
			live++;
			unfetched += slot_freq(v) == 0;
		}
		off += item_span(iv.total, e->off_shift);
	}
	if (why == UNLINK_EVICTED) {
		atomic_fetch_add_explicit(&e->n_evictions, live, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_evicted_unfetched, unfetched, memory_order_relaxed);
	} else if (why == UNLINK_EXPIRED) {
		atomic_fetch_add_explicit(&e->n_expired, live, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_expired_unfetched, unfetched, memory_order_relaxed);
	}
	return live;
}

void
seg_reclaim_whole(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why)
{
	seg_chain_remove(e, seg);
	seg_close_and_drain(e, seg);
	if (seg_live_may_hold(e, seg))
		seg_unlink_all(e, seg, why);
	seg_release(e, seg);
}

/* Frees expired segments from the chain heads. Caller holds evict_lock. */
unsigned
seg_expire_locked(struct seg_engine *e, int64_t now)
{
	unsigned items = 0;

	for (unsigned tb = 0; tb < TTL_BUCKETS; tb++) {
		struct seg_chain *c = &e->chain[tb];

		while (__atomic_load_n(&c->head, __ATOMIC_RELAXED) != SEG_NONE) {
			int32_t seg;
			struct seg_hdr *h;
			uint8_t st;
			int64_t exp_max;

			seg_spin_lock(&c->lock);
			atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
			seg = c->head;
			if (seg == SEG_NONE) {
				seg_spin_unlock(&c->lock);
				break;
			}
			h = &e->hdr[seg];
			st = atomic_load(&h->state);
			exp_max = atomic_load(&h->exp_max);
			if (exp_max == 0 || exp_max > now ||
			    (st != SEG_SEALED && st != SEG_OPEN) || !seg_claim(e, seg, st)) {
				seg_spin_unlock(&c->lock);
				break;
			}
			seg_spin_unlock(&c->lock);
			/* An open segment is closed first; an append in flight may
			 * have raised exp_max, then it stays, sealed. */
			seg_close_and_drain(e, seg);
			if (atomic_load(&h->exp_max) > now) {
				atomic_store(&h->state, SEG_SEALED);
				break;
			}
			seg_chain_remove(e, seg);
			items += seg_unlink_all(e, seg, UNLINK_EXPIRED);
			seg_release(e, seg);
			atomic_fetch_add_explicit(&e->n_seg_expired, 1, memory_order_relaxed);
		}
	}
	return items;
}
