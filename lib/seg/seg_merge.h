/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Merge-based eviction (seg_merge.c): one pass over a run of a TTL
 * chain's segments, its survivors copied into fewer, and waiting for the
 * passes in flight (seg_segment.c's seg_reclaim_quiesce waits for them).
 */
#ifndef SEGCACHED_SEG_MERGE_H
#define SEGCACHED_SEG_MERGE_H

#include <stdint.h>

struct seg_engine;
struct seg_worker;

/* One merge pass; caller holds evict_lock, dropped while it copies (for
 * *copy_ns ns, added). BUSY: nothing to claim while passes are in
 * flight. The first segment it frees beyond the reserves goes to *got
 * when got is not NULL and *got is SEG_NONE, the rest to the pool. */
enum seg_merge_result { SEG_MERGE_NONE, SEG_MERGE_DONE, SEG_MERGE_BUSY };
enum seg_merge_result seg_merge_pass(struct seg_engine *e, struct seg_worker *w, int64_t now,
				     uint64_t *copy_ns, int32_t *got);
/* The end of a pass that reclaimed without evict_lock (a merge pass, a
 * FIFO or random eviction): takes the lock again, adds the time since
 * `from` to *not_held_ns (when not NULL), and wakes those waiting for a
 * pass to end. Returns holding evict_lock. */
void seg_pass_end(struct seg_engine *e, struct seg_worker *w, uint64_t *not_held_ns,
		  uint64_t from);

#endif /* SEGCACHED_SEG_MERGE_H */
