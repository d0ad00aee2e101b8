/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * flush_all: emptying the hash table and giving every item segment back,
 * now or when a delayed flush falls due. Calls seg_expire.c
 * (seg_reclaim_whole) and below.
 */
#include "seg/seg_expire.h"
#include "seg/seg_flush.h"
#include "seg/seg_hash.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

void
seg_flush_now(struct seg_engine *e)
{
	pthread_mutex_lock(&e->evict_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	/* No run half merged, no segment half expired or evicted: every
	 * segment is in its chain or the pool; none starts meanwhile. */
	seg_reclaim_quiesce(e);
	seg_hash_clear_all(e);
	/* With the table empty, every item segment is garbage: give them all
	 * back. Open ones too; their owners open new ones on the next write.
	 * A write racing with the flush may have linked an item meanwhile:
	 * seg_unlink_all catches it (the write happened "after" the flush and
	 * is lost, as in memcached when a set races a flush_all). */
	for (uint32_t i = 0; i < e->nseg; i++) {
		uint8_t st = atomic_load(&e->hdr[i].state);

		if ((st == SEG_SEALED || st == SEG_OPEN) && seg_claim(e, (int32_t)i, st)) {
			seg_reclaim_whole(e, NULL, (int32_t)i, UNLINK_FLUSHED);
			seg_pool_push(e, (int32_t)i);
		}
	}
	atomic_fetch_add_explicit(&e->n_flushes, 1, memory_order_relaxed);
	seg_reclaim_resume(e);
	pthread_mutex_unlock(&e->evict_lock);
}

void
seg_flush_if_due(struct seg_engine *e, int64_t now)
{
	int64_t at = atomic_load_explicit(&e->flush_at, memory_order_relaxed);

	if (SEG_UNLIKELY(at != 0 && now >= at) &&
	    atomic_compare_exchange_strong(&e->flush_at, &at, 0))
		seg_flush_now(e);
}
