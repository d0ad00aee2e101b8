/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Expiry: taking a whole segment's items out of the hash table
 * (seg_unlink_all, seg_reclaim_whole) and proactive expiration from the
 * heads of the TTL chains, which are sorted by expiry. Expiry takes no
 * global lock: a due head is claimed under its chain's lock, everything
 * else (the drain, the unlinks, the release) runs with no lock but the
 * bucket locks, so chains expire in parallel, by workers that open or
 * need a segment as well as by the control thread's sweep. seg_flush.c
 * and seg_evict.c reclaim through it; it calls seg_hash.c, seg_walk.c
 * and seg_segment.c only.
 */
#include "seg/seg_expire.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_walk.h"

unsigned
seg_unlink_all(struct seg_engine *e, struct seg_worker *w, int32_t seg,
	       enum seg_unlink_reason why)
{
	const uint64_t gen = atomic_load(&e->hdr[seg].gen); /* claimed: stable */
	const struct seg_walked *wi;
	struct seg_walk it;
	unsigned live = 0, unfetched = 0, locks = 0;

	seg_walk_init(e, &it, seg);
	while ((wi = seg_walk_next(e, &it))) {
		bool locked;
		uint64_t v = seg_hash_unlink_loc(e, &wi->k, (uint32_t)seg,
						 wi->off >> e->off_shift, gen, &locked);

		locks += locked;
		if (v) {
			live++;
			unfetched += slot_freq(v) == 0;
		}
	}
	/* The bucket locks counted once, for the worker or the engine: an
	 * RMW per item on an engine-wide line was a shared write per unlink. */
	if (w)
		engine_count_add(&w->base, ENGINE_C_lock_bucket, locks);
	else
		atomic_fetch_add_explicit(&e->n_locks_other, locks, memory_order_relaxed);
	if (why == UNLINK_EVICTED) {
		atomic_fetch_add_explicit(&e->n_evictions, live, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_evicted_unfetched, unfetched, memory_order_relaxed);
	} else if (why == UNLINK_EXPIRED) {
		atomic_fetch_add_explicit(&e->n_expired, live, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_expired_unfetched, unfetched, memory_order_relaxed);
	}
	return live;
}

unsigned
seg_reclaim_whole(struct seg_engine *e, struct seg_worker *w, int32_t seg,
		  enum seg_unlink_reason why)
{
	unsigned live = 0;

	seg_chain_remove(e, seg);
	seg_close_and_drain(e, seg);
	if (seg_live_may_hold(e, seg))
		live = seg_unlink_all(e, w, seg, why);
	seg_retire(e, seg);
	return live;
}

/* Whether a chain head in state st with this exp_max is due: its items
 * have all expired, or it is sealed and empty (a segment a sharer with a
 * lagging clock sealed before anything was written to it, or the ring
 * sealed unwritten: it holds nothing, and must not hide the chain behind
 * it from expiry). */
static bool
due(uint8_t st, int64_t exp_max, int64_t now)
{
	if (st != SEG_SEALED && st != SEG_OPEN)
		return false;
	return exp_max == 0 ? st == SEG_SEALED : exp_max <= now;
}

/* Heads being reclaimed by others (a merge run, another expirer) or just
 * opened and empty that the look goes past, at most, before it leaves the
 * chain to the next look. */
#define EXPIRE_SKIP_MAX 16

/* Claims the first due segment of chain c, from its head, past the ones
 * others are reclaiming; SEG_NONE when the first one it may take is not
 * due. Under the chain lock. */
static int32_t
claim_due(struct seg_engine *e, struct seg_chain *c, int64_t now)
{
	int32_t seg = c->head;
	unsigned skipped = 0;

	while (seg != SEG_NONE) {
		struct seg_hdr *h = &e->hdr[seg];
		const uint8_t st = atomic_load(&h->state);
		const int64_t exp_max = atomic_load(&h->exp_max);

		if (st == SEG_RECLAIM || (st == SEG_OPEN && exp_max == 0)) {
			if (++skipped > EXPIRE_SKIP_MAX)
				return SEG_NONE;
			seg = h->next;
			continue;
		}
		if (!due(st, exp_max, now))
			return SEG_NONE;
		if (seg_claim(e, seg, st))
			return seg;
		/* sealed by its appender meanwhile: look again */
	}
	return SEG_NONE;
}

/* Whether chain c may have a due head, looked at without its lock. */
static bool
head_due(const struct seg_engine *e, const struct seg_chain *c, int64_t now)
{
	const int32_t seg = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	const struct seg_hdr *h;
	uint8_t st;

	if (seg == SEG_NONE)
		return false;
	h = &e->hdr[seg];
	st = atomic_load_explicit(&h->state, memory_order_relaxed);
	return st == SEG_RECLAIM || due(st, atomic_load_explicit(&h->exp_max, memory_order_relaxed),
					now);
}

unsigned
seg_expire_chain(struct seg_engine *e, struct seg_worker *w, unsigned tb, int64_t now,
		 unsigned max, int32_t *keep)
{
	struct seg_chain *c = &e->chain[tb];
	unsigned items = 0;

	if (tb >= TTL_BUCKETS || !head_due(e, c, now) || !seg_reclaim_begin(e))
		return 0;
	for (unsigned n = 0; n < max; n++) {
		int32_t seg;
		struct seg_hdr *h;

		seg_spin_lock(&c->lock);
		seg_count_lock(e, w, ENGINE_C_lock_segment);
		seg = claim_due(e, c, now);
		seg_spin_unlock(&c->lock);
		if (seg == SEG_NONE)
			break;
		h = &e->hdr[seg];
		/* An open segment is closed first; an append in flight may
		 * have raised exp_max, then it stays, sealed. */
		seg_close_and_drain(e, seg);
		if (atomic_load(&h->exp_max) > now) {
			atomic_store(&h->state, SEG_SEALED);
			break;
		}
		items += seg_reclaim_whole(e, w, seg, UNLINK_EXPIRED);
		atomic_fetch_add_explicit(&e->n_seg_expired, 1, memory_order_relaxed);
		if (keep && *keep == SEG_NONE)
			*keep = seg; /* the caller needs one: not through the pool */
		else
			seg_pool_push(e, seg);
	}
	seg_reclaim_end(e);
	return items;
}

unsigned
seg_expire_due(struct seg_engine *e, struct seg_worker *w, int64_t now, unsigned max_per_chain,
	       int32_t *keep)
{
	unsigned items = 0;

	for (unsigned tb = seg_chain_next_used(e, 0); tb < TTL_BUCKETS;
	     tb = seg_chain_next_used(e, tb + 1))
		items += seg_expire_chain(e, w, tb, now, max_per_chain, keep);
	return items;
}
