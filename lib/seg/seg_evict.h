/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Eviction by policy (seg_evict.c): a free segment for a worker, evicting
 * when the pool is empty; reclaiming ahead; and the control thread's
 * second (a due flush, expiry, reclaim ahead).
 */
#ifndef SEGCACHED_SEG_EVICT_H
#define SEGCACHED_SEG_EVICT_H

#include <stdint.h>

struct seg_engine;
struct seg_worker;

/* Gets a free segment, evicting if the pool is empty; SEG_NONE if none. */
int32_t seg_acquire(struct seg_engine *e, struct seg_worker *w);
/* Makes at least one segment free (returns it to the caller) by expiring
 * or evicting; SEG_NONE if nothing can be reclaimed. */
int32_t seg_evict_for(struct seg_engine *e, struct seg_worker *w);
/* Evicts (by the policy) until the free pool holds pool_low segments,
 * unless another thread is reclaiming; returns the evictions done. */
unsigned seg_reclaim_ahead(struct seg_engine *e);
/* The control thread's second: a due flush, expiry, and reclaim ahead. */
unsigned seg_expire_all(struct seg_engine *e);

#endif /* SEGCACHED_SEG_EVICT_H */
