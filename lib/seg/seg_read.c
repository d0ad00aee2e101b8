/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The read path: finding a key's live item lock-free and taking a
 * consistent snapshot of it (seg_read_item). Reads take no lock: they find
 * the slot, note the segment's gen, read the item and check the gen again
 * (a seqlock on segment reuse). After a few failed tries a read takes the
 * bucket lock, under which a linked item's segment cannot be freed. An
 * expired item found is unlinked. Called by seg_ops.c; calls seg_hash.c.
 */
#include <string.h>

#include <rte_common.h>

#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_large.h"
#include "seg/seg_read.h"
#include "seg/seg_struct.h"
#include "seg/seg_merge_cut.h"

#define LOCKLESS_TRIES 3

__attribute__((hot)) void
seg_fill_item(const struct seg_engine *e, const struct seg_read *r, struct engine_item *it)
{
	it->flags = r->iv.flags;
	it->vlen = r->iv.vlen;
	it->cas = seg_cas_of(e, r->gen, r->v);
	it->expires_at = r->expires_at;
	it->fetched_before = slot_freq(r->v) > 0;
}

/* Where r's value goes, or NULL when it is not wanted or does not fit. */
static void *
dst_for(const struct seg_engine *e, const struct read_dst *d, const struct seg_read *r,
	struct engine_item *it)
{
	if (d->sink == NULL)
		return d->buf != NULL && r->iv.vlen <= d->cap ? d->buf : NULL;
	seg_fill_item(e, r, it);
	return d->sink->value_buf(d->sink->arg, d->idx, it);
}

static inline __attribute__((always_inline)) int
read_slot(struct seg_engine *e, const struct seg_key *k, _Atomic uint64_t *slot,
	  uint64_t v, bool locked, struct seg_read *r)
{
	const struct seg_hdr *h = &e->hdr[slot_seg(v)];
	uint32_t off = slot_off(v) << e->off_shift;
	const uint8_t *p = seg_data(e, slot_seg(v)) + off;
	uint64_t gen = atomic_load_explicit(&h->gen, memory_order_acquire);

	/* Still the same item (a reader may have bumped its freq)? */
	if (!locked && (atomic_load_explicit(slot, memory_order_acquire) & SLOT_NO_FREQ) !=
			       (v & SLOT_NO_FREQ))
		return RETRY;
	if (!seg_parse_in(e, slot_seg(v), off, e->seg_size, &r->iv) || r->iv.klen != k->klen ||
	    seg_key_differs(p + r->iv.hdr_len, k->key, k->klen)) {
		atomic_thread_fence(memory_order_acquire);
		return atomic_load_explicit(&h->gen, memory_order_relaxed) == gen ? NOT_FOUND
										 : RETRY;
	}
	r->slot = slot;
	r->v = v;
	r->gen = gen;
	r->item = p;
	r->expires_at = seg_item_expiry(h, r->iv.exp_delta);
	return FOUND;
}

/* seg_lookup's walk, inlined into seg_read_item_into (every get's path: a call
 * there cost ~25 instructions a get, its saves and restores) */
static inline __attribute__((always_inline)) int
lookup(struct seg_engine *e, const struct seg_key *k, bool locked, struct seg_read *r)
{
	struct seg_chain_iter it;
	_Atomic uint64_t *slot;
	uint64_t v;

	/* The chain is resolved after the caller read the stripe's move
	 * count: a split that moved k's items since makes that count change. */
	seg_iter_init(&it, seg_hash_chain(e, k));
	while ((slot = seg_iter_next(e, &it, &v))) {
		int res;

		if (!v || slot_tag(v) != k->tag)
			continue;
		res = read_slot(e, k, slot, v, locked, r);
		if (res != NOT_FOUND)
			return res;
	}
	return NOT_FOUND;
}

int
seg_lookup(struct seg_engine *e, const struct seg_key *k, bool locked, struct seg_read *r)
{
	return lookup(e, k, locked, r);
}

__attribute__((hot)) void
seg_bump_freq(struct seg_worker *w, const struct seg_read *r)
{
	unsigned f = slot_freq(r->v);
	uint64_t expected = r->v;

	if (f >= SLOT_FREQ_MASK)
		return;
	/* Saturating, increasingly unlikely increments (an approximate
	 * logarithmic counter), so hot keys stop writing their cache line. */
	if (f >= SEG_FREQ_EXACT && (((seg_xorshift(&w->rng) >> 32) * f) >> 32) != 0)
		return;
	W_COUNT(w, rmw_bucket);
	atomic_compare_exchange_strong_explicit(r->slot, &expected,
						r->v + (1ull << SLOT_FREQ_SHIFT),
						memory_order_relaxed, memory_order_relaxed);
}

/* Drops an expired item found by a reader, if it is still linked. */
static void
unlink_expired(struct seg_worker *w, const struct seg_key *k, const struct seg_read *r)
{
	struct seg_engine *e = w->e;
	bool locked;

	SEG_TEST_POINT(SEG_TP_UNLINK_EXPIRED);
	/* Only that very item: its segment may have been freed and reused
	 * since, with a new item at the same place. */
	/* counted per worker (stats add them up): an engine-wide RMW per
	 * expired hit was a shared write on a read */
	if (seg_hash_unlink_loc(e, k, slot_seg(r->v), slot_off(r->v), r->gen, &locked))
		W_COUNT(w, expired_unlinked);
	if (locked)
		W_COUNT(w, lock_bucket);
}

/* A consistent snapshot of the live item for k, with its value copied to
 * dst when it is wanted there (r->copied). Returns FOUND or NOT_FOUND
 * (missing or expired; *expired tells which). */
__attribute__((hot)) int
seg_read_item_into(struct seg_worker *w, const struct seg_key *k, int64_t now,
		   const struct read_dst *dst, struct engine_item *it, struct seg_read *r,
		   bool *expired)
{
	struct seg_engine *e = w->e;

	*expired = false;
	for (unsigned attempt = 0;; attempt++) {
		const bool locked = attempt >= LOCKLESS_TRIES;
		uint64_t moves;
		int res;

		if (locked) {
			seg_bucket_lock(k->head);
			W_COUNT(w, lock_bucket);
		}
		moves = seg_hash_moves(k->head);
		res = lookup(e, k, locked, r);
		if (res == FOUND && seg_expired(r->expires_at, now)) {
			if (locked)
				seg_bucket_unlock(k->head);
			if (!locked && !seg_read_valid(e, r))
				continue;
			*expired = true;
			unlink_expired(w, k, r);
			return NOT_FOUND;
		}
		if (res == FOUND) {
			void *buf = dst_for(e, dst, r, it);

			r->copied = buf != NULL;
			if (buf != NULL &&
			    !seg_item_get(e, slot_seg(r->v), slot_off(r->v) << e->off_shift,
					  r->iv.hdr_len + r->iv.klen, buf, r->iv.vlen)) {
				/* a large item's link out of range: torn, or (under
				 * the lock, where nothing is torn) never so */
				if (locked) {
					seg_bucket_unlock(k->head);
					return NOT_FOUND;
				}
				W_COUNT(w, read_retries);
				continue;
			}
		}
		if (locked) {
			seg_bucket_unlock(k->head);
			return res;
		}
		if (res == FOUND && seg_read_valid(e, r))
			return res;
		/* Not found while an item of the chain moved: look again. */
		if (res == NOT_FOUND && !seg_hash_moved_since(k->head, moves))
			return res;
		W_COUNT(w, read_retries);
	}
}

int
seg_read_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
	      const struct read_dst *dst, struct seg_read *r, bool *expired)
{
	struct engine_item it;

	return seg_read_item_into(w, k, now, dst, &it, r, expired);
}
