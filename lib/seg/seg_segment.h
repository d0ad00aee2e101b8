/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A segment's life cycle (seg_segment.c): the free pool, the TTL chains'
 * links, opening, closing and draining, claiming, gens, retiring, and the
 * live counts of the segment an item lies in.
 */
#ifndef SEGCACHED_SEG_SEGMENT_H
#define SEGCACHED_SEG_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

struct seg_engine;
struct seg_worker;

int32_t seg_pool_pop(struct seg_engine *e, struct seg_worker *w);
void seg_pool_push(struct seg_engine *e, int32_t seg);
void seg_init_open(struct seg_engine *e, int32_t seg, unsigned ttl_bucket, int64_t exp_base,
		   uint8_t unit_shift, int64_t now);
void seg_chain_append(struct seg_engine *e, struct seg_worker *w, int32_t seg);
void seg_chain_remove(struct seg_engine *e, int32_t seg);
/* Replaces n consecutive claimed segments of chain ttl_bucket by dest[]
 * (none: removes them); a dest may be a run member but not its last. */
void seg_chain_replace_run(struct seg_engine *e, unsigned ttl_bucket, const int32_t *run,
			   unsigned n, const int32_t *dest, unsigned ndest);
/* Sets chain tb's bit in chain_used from its head (restart load). */
void seg_chain_mark_used(struct seg_engine *e, unsigned tb);
/* The first chain from `from` on that holds segments, or TTL_CHAINS. */
unsigned seg_chain_next_used(const struct seg_engine *e, unsigned from);
/* Reclaims without evict_lock (expiry): begin returns false while a flush
 * or a restart save quiesces (then nothing may be claimed); each begin
 * that returned true has its end. */
bool seg_reclaim_begin(struct seg_engine *e);
void seg_reclaim_end(struct seg_engine *e);
/* Under evict_lock: stops new passes and reclaims and waits for those in
 * flight (flush_all, restart save); resume lets them start again. */
void seg_reclaim_quiesce(struct seg_engine *e);
void seg_reclaim_resume(struct seg_engine *e);
/* Closes a segment to appenders and waits for appends in flight. */
void seg_close_and_drain(struct seg_engine *e, int32_t seg);
/* Ends a segment's life: a new gen first (stale appenders and readers
 * fail their checks), then waits for appenders that counted themselves in
 * `writers` or marked it meanwhile, then marks it FREE. The caller owns the segment
 * (RECLAIM) and no hash slot points into it. */
void seg_retire(struct seg_engine *e, int32_t seg);
void seg_release(struct seg_engine *e, int32_t seg); /* seg_retire, then to the pool */
bool seg_claim(struct seg_engine *e, int32_t seg, uint8_t from);
uint32_t seg_valid_end(const struct seg_engine *e, int32_t seg);
uint64_t seg_new_gen(struct seg_engine *e);
/* Live item accounting of the segment a slot value points into. */
void seg_account_add(struct seg_engine *e, uint64_t v, uint32_t size);
void seg_account_remove(struct seg_engine *e, uint64_t v);
/* Size in the segment of the item a slot points to (its aligned length). */
uint32_t seg_item_span(const struct seg_engine *e, uint64_t v);

#endif /* SEGCACHED_SEG_SEGMENT_H */
