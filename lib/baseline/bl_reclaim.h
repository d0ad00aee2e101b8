/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Deferred freeing in the baseline engine (bl_reclaim.c): what an unlinked
 * item becomes on the defer queue (struct bl_retire, and why it left), and
 * the queue's calls (rules 4 and 5 of bl_private.h).
 */
#ifndef SEGCACHED_BL_RECLAIM_H
#define SEGCACHED_BL_RECLAIM_H

#include "baseline/bl_private.h"

#define BL_RECLAIM_BATCH 32    /* deferred frees between opportunistic reclaims */
#define BL_RECLAIM_MAX 256     /* entries freed per reclaim call */

/* Why an item was unlinked; decides the counters it feeds when freed. */
enum bl_retire_reason {
	BL_R_REPLACED,
	BL_R_DELETED,
	BL_R_EXPIRED, /* expired or flushed */
	BL_R_EVICTED,
};

/* One defer-queue entry: the item and, when the key left the table, the
 * rte_hash key position to free with it (-1 when the key was updated in
 * place and keeps its slot). */
struct bl_retire {
	struct bl_item *it;
	int32_t pos;
	uint32_t reason;
};

int bl_reclaim_init(struct bl_engine *e, char *err, size_t errlen);
void bl_reclaim_fini(struct bl_engine *e);
/* Defers freeing it (and key position pos >= 0) past a grace period.
 * Caller offline; it may hold a stripe lock, since nobody online waits for
 * one (rule 3), but waits here when the queue is full. */
void bl_defer(struct bl_worker *w, struct bl_item *it, int32_t pos,
	      enum bl_retire_reason why);
/* Frees what readers have released. wait: wait for reclaim_lock rather
 * than give up. Returns the number freed; *pending (may be NULL) gets what
 * is still waiting. Caller offline. */
unsigned bl_reclaim(struct bl_worker *w, bool wait, unsigned *pending);
/* Short pause that turns into sched_yield() as round grows: used while
 * waiting for other threads to leave their read-side sections. */
void bl_backoff(unsigned round);

#endif /* SEGCACHED_BL_RECLAIM_H */
