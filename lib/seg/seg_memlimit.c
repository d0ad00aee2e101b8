/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's cache_memlimit for the Segcache engine: a smaller budget at
 * run time holds whole segments out of use ("parks" them, at the top of
 * the free pool's array) until the segments in use fit it; a larger one,
 * up to the budget at start, gives them back. The heap itself keeps its
 * size (it may be a file or hugepages laid out at start): what shrinks is
 * what the cache may hold. Parking happens in bounded steps on the control
 * thread's second (seg_memlimit_step from engine_expire): a free segment
 * when the pool has one, else one eviction by the engine's policy, each
 * under its own evict_lock, so writers wait at most one eviction, as they
 * do for any other. Calls seg_evict.c and seg_segment.c.
 */
#include <errno.h>

#include "seg/seg_evict.h"
#include "seg/seg_memlimit.h"
#include "seg/seg_struct.h"

/* Segments parked per control-thread second at most: 1 GiB of 1 MiB
 * segments; a larger cut takes more seconds. */
#define SEG_PARK_STEPS_MAX 1024u

/* The fewest segments a budget may leave in use: the free pool's low
 * watermark, the merge destination, the hash table's overflow segments
 * and a few to write into (open segments beyond them are closed and
 * evicted as on any full heap). */
static uint32_t
min_segments(struct seg_engine *e)
{
	return e->pool_low + atomic_load(&e->ovf_segs) + 8;
}

int
seg_set_memory(struct engine *eng, size_t bytes)
{
	struct seg_engine *e = seg_engine_of(eng);
	size_t cut;
	uint64_t park;

	if (bytes > e->memory)
		return -ERANGE;
	/* the hash table and segment headers stay as they are: the cut is
	 * taken from the segments, in whole segments */
	cut = e->memory - bytes;
	park = (cut + e->seg_size - 1) / e->seg_size;
	if (park >= e->nseg || e->nseg - park < min_segments(e))
		return -ERANGE;
	atomic_store(&e->park_target, (uint32_t)park);
	atomic_store(&e->limit_bytes, bytes);
	return 0;
}

/* Moves one segment between the pool and the parked area, toward target.
 * Returns +1 (parked), -1 (unparked) or 0 (nothing to move: at the target,
 * or parking and the pool is empty). */
static int
move_one(struct seg_engine *e, uint32_t target)
{
	int r = 0;

	seg_spin_lock(&e->pool_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	if (e->parked > target) {
		e->pool[e->pool_count] = e->pool[e->nseg - e->parked];
		e->parked--;
		__atomic_store_n(&e->pool_count, e->pool_count + 1, __ATOMIC_RELAXED);
		r = -1;
	} else if (e->parked < target && e->pool_count > 0) {
		int32_t seg = e->pool[e->pool_count - 1];

		__atomic_store_n(&e->pool_count, e->pool_count - 1, __ATOMIC_RELAXED);
		e->parked++;
		e->pool[e->nseg - e->parked] = seg;
		r = 1;
	}
	seg_spin_unlock(&e->pool_lock);
	return r;
}

/* Parks a segment the caller holds free (out of the pool). */
static void
park_held(struct seg_engine *e, int32_t seg)
{
	seg_spin_lock(&e->pool_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	e->parked++;
	e->pool[e->nseg - e->parked] = seg;
	seg_spin_unlock(&e->pool_lock);
}

static uint32_t
parked_now(struct seg_engine *e)
{
	uint32_t n;

	seg_spin_lock(&e->pool_lock);
	n = e->parked;
	seg_spin_unlock(&e->pool_lock);
	return n;
}

unsigned
seg_memlimit_step(struct seg_engine *e)
{
	unsigned moves = 0;

	while (moves < SEG_PARK_STEPS_MAX) {
		uint32_t target = atomic_load(&e->park_target);
		int32_t seg;
		int r = move_one(e, target);

		if (r != 0) {
			moves++;
			continue;
		}
		if (parked_now(e) >= target)
			break;
		/* The pool is empty: free one segment by expiry or the
		 * policy (one evict_lock hold) and park it. */
		seg = seg_evict_for(e, NULL);
		if (seg == SEG_NONE)
			break; /* nothing evictable (eviction off): next second */
		park_held(e, seg);
		moves++;
	}
	return moves;
}
