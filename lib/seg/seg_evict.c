/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Reclaiming memory, one whole segment at a time: proactive expiration
 * from the heads of the TTL chains (which are sorted by expiry), eviction
 * (merge-based by default, FIFO or random as options) and flush_all.
 * One thread reclaims at a time (evict_lock); workers that need a segment
 * while another one evicts wait for it and then find the pool refilled.
 */
#include <sys/types.h>

#include "seg_internal.h"
#include "seg_item.h"

/* Segments merged per pass: from each, the most used 1/MERGE_N of its
 * bytes survive into one new segment, so a pass frees MERGE_N - 1. */
#define MERGE_N 4

static void reclaim_whole(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why)
{
	seg_chain_remove(e, seg);
	seg_close_and_drain(e, seg);
	if (atomic_load_explicit(&e->hdr[seg].live_items, memory_order_relaxed) > 0)
		seg_unlink_all(e, seg, why);
	seg_release(e, seg);
}

/* Frees expired segments from the chain heads. Caller holds evict_lock. */
static unsigned expire_locked(struct seg_engine *e, int64_t now)
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

unsigned seg_expire_all(struct seg_engine *e)
{
	int64_t now = seg_now(e);
	unsigned n;

	seg_flush_if_due(e, now);
	pthread_mutex_lock(&e->evict_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	n = expire_locked(e, now);
	pthread_mutex_unlock(&e->evict_lock);
	return n;
}

/* Picks a victim among segments in state `st`: the oldest (FIFO) or a
 * random one. Claims it. */
static int32_t pick_victim(struct seg_engine *e, uint8_t st, bool random)
{
	int32_t best = SEG_NONE;

	if (random) {
		uint32_t start = (uint32_t)(seg_xorshift(&e->evict_rng) % e->nseg);

		for (uint32_t i = 0; i < e->nseg; i++) {
			int32_t seg = (int32_t)((start + i) % e->nseg);

			if (atomic_load(&e->hdr[seg].state) == st && seg_claim(e, seg, st))
				return seg;
		}
		return SEG_NONE;
	}
	for (;;) {
		int64_t oldest = INT64_MAX;

		for (uint32_t i = 0; i < e->nseg; i++) {
			if (atomic_load(&e->hdr[i].state) == st && e->hdr[i].create_at < oldest) {
				oldest = e->hdr[i].create_at;
				best = (int32_t)i;
			}
		}
		if (best == SEG_NONE || seg_claim(e, best, st))
			return best;
		best = SEG_NONE;
	}
}

static bool evict_one(struct seg_engine *e, bool random)
{
	int32_t seg = pick_victim(e, SEG_SEALED, random);

	/* Every segment is open (many workers x TTL buckets in a small heap):
	 * close the oldest open one rather than fail the write. */
	if (seg == SEG_NONE)
		seg = pick_victim(e, SEG_OPEN, false);
	/* (its owner may have sealed it just now) */
	if (seg == SEG_NONE)
		seg = pick_victim(e, SEG_SEALED, random);
	if (seg == SEG_NONE)
		return false;
	reclaim_whole(e, seg, UNLINK_EVICTED);
	atomic_fetch_add_explicit(&e->n_seg_evicted, 1, memory_order_relaxed);
	return true;
}

/* Claims up to MERGE_N consecutive sealed segments of chain c, starting
 * at its merge cursor. Caller holds the chain lock. */
static unsigned claim_run(struct seg_engine *e, struct seg_chain *c, int32_t *run)
{
	int32_t seg = c->head;
	unsigned n = 0;

	if (c->merge_next != SEG_NONE &&
	    atomic_load(&e->hdr[c->merge_next].gen) == c->merge_gen)
		seg = c->merge_next;
	while (seg != SEG_NONE && atomic_load(&e->hdr[seg].state) != SEG_SEALED)
		seg = e->hdr[seg].next;
	while (seg != SEG_NONE && n < MERGE_N && seg_claim(e, seg, SEG_SEALED)) {
		run[n++] = seg;
		seg = e->hdr[seg].next;
	}
	return n;
}

/* Copies the still-used items of the run into dest and unlinks the rest. */
static void merge_run(struct seg_engine *e, struct seg_worker *w, const int32_t *run,
		      unsigned n, int32_t dest, int64_t now)
{
	struct seg_hdr *d = &e->hdr[dest];
	const uint32_t align = (1u << e->off_shift) - 1;
	const uint32_t budget = e->seg_size / n;
	uint8_t *ddata = seg_data(e, dest);
	uint32_t doff = 0;
	int64_t dexp_max = 0;
	unsigned evicted = 0, expired = 0, unfetched = 0;

	for (unsigned r = 0; r < n; r++) {
		const int32_t src = run[r];
		const struct seg_hdr *sh = &e->hdr[src];
		const uint8_t *sdata = seg_data(e, src);
		uint32_t end, used = 0;

		seg_close_and_drain(e, src);
		end = seg_valid_end(e, src);
		for (uint32_t off = 0; off < end;) {
			struct item_view iv;
			struct seg_key k;
			_Atomic uint64_t *slot;
			uint32_t span;
			int64_t exp;

			if (!item_parse(sdata + off, end - off, &iv))
				break;
			span = (iv.total + align) & ~align;
			seg_key_init(e, &k, sdata + off + iv.hdr_len, iv.klen);
			seg_bucket_lock(k.head);
			W_COUNT(w, lock_bucket);
			slot = seg_hash_find_loc_locked(e, &k, (uint32_t)src, off >> e->off_shift);
			if (slot) {
				uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
				unsigned freq = slot_freq(v);

				exp = seg_item_expiry(sh, iv.exp_delta);
				if (!seg_expired(exp, now) && freq > 0 && used + span <= budget &&
				    doff + span <= e->seg_size) {
					uint32_t delta = 0;

					memcpy(ddata + doff, sdata + off, iv.total);
					if (exp) {
						int64_t dd = (exp - d->exp_base) >> d->unit_shift;

						/* Merged items may die early, never late. */
						delta = dd > EXP_DELTA_MAX ? EXP_DELTA_MAX : (uint32_t)dd;
						item_set_exp_delta(ddata + doff, delta);
						exp = seg_item_expiry(d, delta);
						if (exp > dexp_max)
							dexp_max = exp;
					}
					v = slot_make(k.tag, freq >> 1, (uint32_t)dest,
						      doff >> e->off_shift);
					seg_account_remove(e, atomic_load_explicit(slot,
							   memory_order_relaxed));
					atomic_store_explicit(slot, v, memory_order_release);
					seg_account_add(e, v, span);
					doff += span;
					used += span;
				} else {
					atomic_store_explicit(slot, 0, memory_order_release);
					seg_account_remove(e, v);
					if (seg_expired(exp, now)) {
						expired++;
					} else {
						evicted++;
						unfetched += freq == 0;
					}
				}
			}
			seg_bucket_unlock(k.head);
			off += span;
		}
	}
	atomic_store_explicit(&d->exp_max, dexp_max, memory_order_relaxed);
	atomic_store_explicit(&d->write_off, doff | SEG_WOFF_SEALED, memory_order_release);
	atomic_store_explicit(&d->state, SEG_SEALED, memory_order_release);
	atomic_fetch_add_explicit(&e->n_evictions, evicted, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->n_evicted_unfetched, unfetched, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->n_expired, expired, memory_order_relaxed);
}

/* One merge pass over the next chain (round robin) that has at least two
 * sealed segments in a row. Returns false when no chain has. */
static bool merge_pass(struct seg_engine *e, struct seg_worker *w, int64_t now)
{
	int32_t run[MERGE_N];
	int32_t dest = e->merge_reserve;

	if (dest == SEG_NONE)
		return false;
	for (unsigned tries = 0; tries < TTL_CHAINS; tries++) {
		struct seg_chain *c = &e->chain[e->merge_cursor];
		unsigned n;

		e->merge_cursor = (e->merge_cursor + 1) % TTL_CHAINS;
		if (__atomic_load_n(&c->head, __ATOMIC_RELAXED) == SEG_NONE)
			continue;
		seg_spin_lock(&c->lock);
		W_COUNT(w, lock_segment);
		n = claim_run(e, c, run);
		if (n < 2 && c->merge_next != SEG_NONE) {
			/* At the end of the chain: start again at its head. */
			for (unsigned i = 0; i < n; i++)
				atomic_store(&e->hdr[run[i]].state, SEG_SEALED);
			c->merge_next = SEG_NONE;
			n = claim_run(e, c, run);
		}
		if (n < 2) {
			for (unsigned i = 0; i < n; i++)
				atomic_store(&e->hdr[run[i]].state, SEG_SEALED);
			seg_spin_unlock(&c->lock);
			continue;
		}
		seg_spin_unlock(&c->lock);

		seg_init_open(e, dest, e->hdr[run[0]].ttl_bucket, e->hdr[run[0]].exp_base,
			      e->hdr[run[0]].unit_shift, e->hdr[run[0]].create_at);
		atomic_store(&e->hdr[dest].state, SEG_RECLAIM);
		merge_run(e, w, run, n, dest, now);
		seg_chain_replace_run(e, run, n, dest);
		/* The first source becomes the next merge destination. */
		atomic_store_explicit(&e->hdr[run[0]].gen, seg_new_gen(e), memory_order_release);
		atomic_store(&e->hdr[run[0]].state, SEG_FREE);
		e->merge_reserve = run[0];
		for (unsigned i = 1; i < n; i++)
			seg_release(e, run[i]);
		atomic_fetch_add_explicit(&e->n_seg_merged, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_seg_evicted, n - 1, memory_order_relaxed);
		return true;
	}
	return false;
}

int32_t seg_evict_for(struct seg_engine *e, struct seg_worker *w)
{
	int64_t now = seg_now(e);
	int32_t seg;

	pthread_mutex_lock(&e->evict_lock);
	W_COUNT(w, lock_segment);
	/* Somebody may have freed segments while we waited. */
	seg = seg_pool_pop(e, w);
	if (seg == SEG_NONE) {
		/* Expired data goes before live data. */
		expire_locked(e, now);
		seg = seg_pool_pop(e, w);
	}
	while (seg == SEG_NONE && e->eviction != ENGINE_EVICT_NONE) {
		bool freed;

		if (e->eviction == ENGINE_EVICT_MERGE)
			freed = merge_pass(e, w, now) || evict_one(e, false);
		else
			freed = evict_one(e, e->eviction == ENGINE_EVICT_RANDOM);
		if (!freed)
			break;
		seg = seg_pool_pop(e, w);
	}
	pthread_mutex_unlock(&e->evict_lock);
	return seg;
}

void seg_flush_now(struct seg_engine *e)
{
	pthread_mutex_lock(&e->evict_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	seg_hash_clear_all(e);
	/* With the table empty, every item segment is garbage: give them all
	 * back. Open ones too; their owners open new ones on the next write.
	 * A write racing with the flush may have linked an item meanwhile:
	 * seg_unlink_all catches it (the write happened "after" the flush and
	 * is lost, as in memcached when a set races a flush_all). */
	for (uint32_t i = 0; i < e->nseg; i++) {
		uint8_t st = atomic_load(&e->hdr[i].state);

		if ((st == SEG_SEALED || st == SEG_OPEN) && seg_claim(e, (int32_t)i, st))
			reclaim_whole(e, (int32_t)i, UNLINK_FLUSHED);
	}
	atomic_fetch_add_explicit(&e->n_flushes, 1, memory_order_relaxed);
	pthread_mutex_unlock(&e->evict_lock);
}

void seg_flush_if_due(struct seg_engine *e, int64_t now)
{
	int64_t at = atomic_load_explicit(&e->flush_at, memory_order_relaxed);

	if (SEG_UNLIKELY(at != 0 && now >= at) &&
	    atomic_compare_exchange_strong(&e->flush_at, &at, 0))
		seg_flush_now(e);
}
