/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Eviction: getting a free segment (seg_acquire) from the pool or, when
 * it is empty, by expiring (seg_expire.c, no global lock) and then
 * evicting by the engine's policy (merge in seg_merge.c, FIFO or random
 * here), and keeping the pool above its low watermark ahead of the
 * writers. evict_lock serializes only choosing what to evict: every
 * policy claims under it and reclaims without it (a merge pass copies, a
 * FIFO or random eviction unlinks), so several threads reclaim at once,
 * and the first segment a pass frees goes to the thread that asked, not
 * through the pool where another could take it first. Workers that need
 * a segment while every claimable run is taken wait on evict_done for a
 * pass to end. Calls seg_merge.c, seg_flush.c, seg_expire.c and below.
 */
#include "seg/seg_chunk.h"
#include "seg/seg_evict.h"
#include "seg/seg_expire.h"
#include "seg/seg_flush.h"
#include "seg/seg_live.h"
#include "seg/seg_merge.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

/* Takes evict_lock for w (NULL: the control thread), counting the wait
 * for a worker; returns the time it was taken, for evict_unlock(). The
 * time it is held is the serial part of write scaling (the contention
 * model, docs/bench/journal/contention-model.md): counted per worker, and
 * engine-wide for the control thread. Rare enough (a segment event) that
 * the clock reads cost nothing measurable. */
static uint64_t
evict_lock(struct seg_engine *e, struct seg_worker *w)
{
	if (pthread_mutex_trylock(&e->evict_lock) != 0) {
		/* Another thread evicts: wait for it (and count the wait). */
		const uint64_t from = seg_clock_ns(CLOCK_MONOTONIC);

		pthread_mutex_lock(&e->evict_lock);
		if (w) {
			W_COUNT(w, evict_waits);
			engine_count_add(&w->base, ENGINE_C_evict_wait_ns,
					 seg_clock_ns(CLOCK_MONOTONIC) - from);
		}
	}
	seg_count_lock(e, w, ENGINE_C_lock_segment);
	return seg_clock_ns(CLOCK_MONOTONIC);
}

static void
count_held(struct seg_engine *e, struct seg_worker *w, uint64_t ns)
{
	if (w)
		engine_count_add(&w->base, ENGINE_C_evict_ns, ns);
	else
		atomic_fetch_add_explicit(&e->n_evict_ns_other, ns, memory_order_relaxed);
}

/* Drops evict_lock taken at `from` (not_held_ns: time within that the
 * lock was not held, a pass's reclaim or a wait, subtracted). */
static void
evict_unlock(struct seg_engine *e, struct seg_worker *w, uint64_t from, uint64_t not_held_ns)
{
	count_held(e, w, seg_clock_ns(CLOCK_MONOTONIC) - from - not_held_ns);
	pthread_mutex_unlock(&e->evict_lock);
}

unsigned
seg_expire_all(struct seg_engine *e)
{
	int64_t now = seg_now(e);
	unsigned n;

	seg_flush_if_due(e, now);
	/* Every due segment, chain by chain, without evict_lock: writers
	 * that need a segment meanwhile are not held up. */
	n = seg_expire_due(e, NULL, now, UINT32_MAX, NULL);
	/* The control thread calls this every second: also keep the free
	 * pool above its low watermark, so writers seldom evict themselves. */
	seg_reclaim_ahead(e);
	return n;
}

#define RANDOM_PROBES 16

/* The oldest sealed segment, from the chains: each chain is in creation
 * order, so its first sealed segment is its oldest. Caller holds
 * evict_lock; merge passes in flight relink runs meanwhile, so each chain
 * is walked under its lock. Claims it. */
static int32_t
oldest_sealed_in_chains(struct seg_engine *e)
{
	for (;;) {
		int32_t best = SEG_NONE;
		uint64_t oldest = UINT64_MAX;

		for (unsigned c = seg_chain_next_used(e, 0); c < TTL_CHAINS;
		     c = seg_chain_next_used(e, c + 1)) {
			struct seg_chain *ch = &e->chain[c];
			int32_t seg;

			seg_spin_lock(&ch->lock);
			atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
			seg = ch->head;
			while (seg != SEG_NONE &&
			       atomic_load(&e->hdr[seg].state) != SEG_SEALED)
				seg = e->hdr[seg].next;
			if (seg != SEG_NONE && atomic_load(&e->hdr[seg].gen) < oldest) {
				oldest = atomic_load(&e->hdr[seg].gen);
				best = seg;
			}
			seg_spin_unlock(&ch->lock);
		}
		if (best == SEG_NONE || seg_claim(e, best, SEG_SEALED))
			return best;
	}
}

/* Picks a victim among segments in state `st`: the oldest (FIFO: the
 * lowest gen, which a segment gets when it is opened, so creation order
 * to the segment, not to the second) or a random one. Claims it. Neither
 * looks at every segment header when the heap has many: random probes a
 * few first, FIFO looks at the chains. */
static int32_t
pick_victim(struct seg_engine *e, uint8_t st, bool random)
{
	int32_t best = SEG_NONE;

	if (random) {
		uint32_t start;

		for (unsigned i = 0; i < RANDOM_PROBES; i++) {
			int32_t seg = (int32_t)(seg_xorshift(&e->evict_rng) % e->nseg);

			if (atomic_load(&e->hdr[seg].state) == st && seg_claim(e, seg, st))
				return seg;
		}
		start = (uint32_t)(seg_xorshift(&e->evict_rng) % e->nseg);

		for (uint32_t i = 0; i < e->nseg; i++) {
			int32_t seg = (int32_t)((start + i) % e->nseg);

			if (atomic_load(&e->hdr[seg].state) == st && seg_claim(e, seg, st))
				return seg;
		}
		return SEG_NONE;
	}
	if (st == SEG_SEALED && e->nseg > TTL_CHAINS)
		return oldest_sealed_in_chains(e);
	for (;;) {
		uint64_t oldest = UINT64_MAX;

		for (uint32_t i = 0; i < e->nseg; i++) {
			if (atomic_load(&e->hdr[i].state) == st &&
			    atomic_load(&e->hdr[i].gen) < oldest) {
				oldest = atomic_load(&e->hdr[i].gen);
				best = (int32_t)i;
			}
		}
		if (best == SEG_NONE || seg_claim(e, best, st))
			return best;
		best = SEG_NONE;
	}
}

/* Claims a victim by FIFO or random under evict_lock (held by the
 * caller) and reclaims it without: the lock is dropped for the unlinks
 * (*not_held_ns of them) and taken again. The segment goes to *got when
 * got is not NULL and *got is SEG_NONE, else to the pool. */
static enum seg_merge_result
evict_one(struct seg_engine *e, struct seg_worker *w, bool random, uint64_t *not_held_ns,
	  int32_t *got)
{
	int32_t seg = pick_victim(e, SEG_SEALED, random);
	uint64_t from;

	/* Every segment is open (many workers x TTL buckets in a small heap):
	 * close the oldest open one rather than fail the write. */
	if (seg == SEG_NONE)
		seg = pick_victim(e, SEG_OPEN, false);
	/* (its owner may have sealed it just now) */
	if (seg == SEG_NONE)
		seg = pick_victim(e, SEG_SEALED, random);
	if (seg == SEG_NONE)
		return e->passes_in_flight > 0 ? SEG_MERGE_BUSY : SEG_MERGE_NONE;
	e->passes_in_flight++;
	from = seg_clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_unlock(&e->evict_lock);
	seg_reclaim_whole(e, w, seg, UNLINK_EVICTED);
	atomic_fetch_add_explicit(&e->n_seg_evicted, 1, memory_order_relaxed);
	seg_pass_end(e, w, not_held_ns, from);
	if (got && *got == SEG_NONE)
		*got = seg;
	else
		seg_pool_push(e, seg);
	return SEG_MERGE_DONE;
}

/* One eviction by the engine's policy: SEG_MERGE_DONE when it freed
 * something (the first segment to *got, as evict_one), SEG_MERGE_BUSY
 * when passes in flight hold every run (or reserve) it could take, or a
 * flush quiesces, SEG_MERGE_NONE when nothing can be evicted. Caller
 * holds evict_lock; a pass drops it while it reclaims, for *not_held_ns
 * nanoseconds. */
static enum seg_merge_result
evict_step(struct seg_engine *e, struct seg_worker *w, int64_t now, uint64_t *not_held_ns,
	   int32_t *got)
{
	enum seg_merge_result r;

	/* flush_all waits for the passes in flight: start none meanwhile,
	 * or it may never see them all end. */
	if (atomic_load_explicit(&e->quiescing, memory_order_relaxed))
		return SEG_MERGE_BUSY;
	switch (e->eviction) {
	case ENGINE_EVICT_MERGE:
		r = seg_merge_pass(e, w, now, not_held_ns, got);
		/* NONE only with no pass in flight: FIFO then is as before. */
		if (r == SEG_MERGE_NONE)
			r = evict_one(e, w, false, not_held_ns, got);
		return r;
	case ENGINE_EVICT_FIFO:
	case ENGINE_EVICT_RANDOM:
		return evict_one(e, w, e->eviction == ENGINE_EVICT_RANDOM, not_held_ns, got);
	default:
		return SEG_MERGE_NONE;
	}
}

/* Due segments a thread that needs one frees from a chain, at most, before
 * it evicts: enough that expiry keeps up with the writers (each segment
 * taken frees up to this many), few enough that no writer spends long. */
#define EXPIRE_PER_NEED 2

int32_t
seg_evict_for(struct seg_engine *e, struct seg_worker *w)
{
	int64_t now = seg_now(e);
	uint64_t not_held_ns = 0, from;
	int32_t seg;

	/* What the merge estimates live from includes this worker's changes,
	 * and the segments it would walk end where their items do. */
	if (w) {
		seg_live_flush(w);
		seg_chunks_give_back_all(w);
	}
	/* Expired data goes before live data, and takes no evict_lock. */
	seg = SEG_NONE;
	seg_expire_due(e, w, now, EXPIRE_PER_NEED, &seg);
	if (seg != SEG_NONE)
		return seg;
	from = evict_lock(e, w);
	/* Somebody may have freed segments while we waited. */
	seg = seg_pool_pop(e, w);
	while (seg == SEG_NONE) {
		/* a pass's reclaim, done without the lock, is not counted */
		enum seg_merge_result r = evict_step(e, w, now, &not_held_ns, &seg);

		if (r == SEG_MERGE_NONE)
			break;
		if (r == SEG_MERGE_BUSY && seg == SEG_NONE) {
			/* Every run (or reserve) is taken by passes in flight:
			 * one of them ends with segments in the pool. Waiting
			 * for it is not holding the lock. */
			const uint64_t wait_from = seg_clock_ns(CLOCK_MONOTONIC);

			if (w)
				W_COUNT(w, evict_waits);
			SEG_TEST_POINT(SEG_TP_EVICT_WAIT);
			pthread_cond_wait(&e->evict_done, &e->evict_lock);
			const uint64_t waited = seg_clock_ns(CLOCK_MONOTONIC) - wait_from;

			not_held_ns += waited;
			if (w)
				engine_count_add(&w->base, ENGINE_C_evict_wait_ns, waited);
		}
		if (seg == SEG_NONE)
			seg = seg_pool_pop(e, w);
	}
	if (w)
		W_COUNT(w, evict_passes);
	evict_unlock(e, w, from, not_held_ns);
	return seg;
}

unsigned
seg_reclaim_ahead(struct seg_engine *e)
{
	unsigned steps = 0;
	uint64_t from, not_held_ns = 0;

	if (e->eviction == ENGINE_EVICT_NONE ||
	    __atomic_load_n(&e->pool_count, __ATOMIC_RELAXED) >= e->pool_low)
		return 0;
	/* Whoever holds evict_lock is reclaiming already. */
	if (pthread_mutex_trylock(&e->evict_lock) != 0)
		return 0;
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	from = seg_clock_ns(CLOCK_MONOTONIC);
	/* Passes in flight (BUSY) refill the pool themselves. */
	while (steps < 2 * e->pool_low &&
	       __atomic_load_n(&e->pool_count, __ATOMIC_RELAXED) < e->pool_low &&
	       evict_step(e, NULL, seg_now(e), &not_held_ns, NULL) == SEG_MERGE_DONE)
		steps++;
	evict_unlock(e, NULL, from, not_held_ns);
	return steps;
}

int32_t
seg_acquire(struct seg_engine *e, struct seg_worker *w)
{
	int32_t seg = seg_pool_pop(e, w);

	return seg != SEG_NONE ? seg : seg_evict_for(e, w);
}
