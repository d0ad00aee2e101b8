/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The baseline engine's item memory (bl_alloc.c): size classes and their
 * pages, allocation, and eviction by sampling when memory is full.
 */
#ifndef SEGCACHED_BL_ALLOC_H
#define SEGCACHED_BL_ALLOC_H

#include "baseline/bl_private.h"

#define BL_SAMPLES 5           /* items sampled per eviction (Redis-style LRU) */
#define BL_EVICT_BATCH 8       /* victims unlinked per eviction pass */
#define BL_MP_FLAGS (RTE_MEMPOOL_F_NO_CACHE_ALIGN | RTE_MEMPOOL_F_NO_SPREAD | \
		     RTE_MEMPOOL_F_NO_IOVA_CONTIG)


/* xorshift64*: cheap per-worker randomness for sampling. */
static inline uint32_t
bl_rand(struct bl_worker *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* Uniform in [0, n) without a division (Lemire's multiply-shift). */
static inline uint32_t
bl_rand_below(struct bl_worker *w, uint32_t n)
{
	return (uint32_t)(((uint64_t)bl_rand(w) * n) >> 32);
}


/* Sets up the size classes and the page table for heap_budget. */
int bl_alloc_init(struct bl_engine *e, char *err, size_t errlen);
void bl_alloc_fini(struct bl_engine *e);

static inline unsigned
bl_class_of(const struct bl_engine *e, size_t size)
{
	unsigned lo = 0, hi;

	if (likely(size <= BL_SMALL_MAX))
		return e->small_class[(size + 7) >> 3];
	hi = e->nclasses - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (e->classes[mid].size >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* An item of class cls in state BL_FRESH, evicting if memory is full; NULL
 * when nothing can be reclaimed. held: the stripe the caller holds (its
 * key's item must not be evicted), or NULL. Restores the caller's RCU
 * state (it may go offline while waiting). */
struct bl_item *bl_item_alloc(struct bl_worker *w, unsigned cls,
			      const struct bl_stripe *held);

/* Unlinks up to want victims from class cls (or from any class when cls
 * is negative, to free hash table slots) and defers their freeing. With
 * ENGINE_EVICT_NONE only expired or flushed items are taken. Caller
 * offline. Returns how many were unlinked. */
unsigned bl_evict(struct bl_worker *w, int cls, const struct bl_stripe *held,
		  unsigned want);

/* Last resort before NO_MEMORY: walks part of the table for expired or
 * flushed items of class cls (any class when negative), which sampling
 * misses when only a few are left, and unlinks up to want of them. Caller
 * offline. Returns how many were unlinked. */
unsigned bl_reap_dead(struct bl_worker *w, int cls, unsigned want);

/* Unlinks it if it is still the item linked under fp, taking the stripe
 * with a try-lock (caller online). On success *pos is the freed key
 * position and the item is BL_DEAD; the caller defers it. */
bool bl_unlink_if_current(struct bl_worker *w, struct bl_item *it,
			  uint64_t fp, int32_t *pos);

#endif /* SEGCACHED_BL_ALLOC_H */
