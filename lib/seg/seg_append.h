/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Where appends go (seg_append.c): an item's TTL bucket and expiry delta,
 * reserving its bytes in an open segment under the worker's append mark,
 * ending the append, writing the item's head, and the spare overflow
 * bucket a chain grows by.
 */
#ifndef SEGCACHED_SEG_APPEND_H
#define SEGCACHED_SEG_APPEND_H

#include <stdbool.h>
#include <stdint.h>

struct seg_key;
struct seg_open_ref;
struct seg_worker;

struct ttl_place {
	unsigned tb;
	uint8_t unit;
	int64_t lo;
	int64_t base; /* exp_base of a segment opened now for this bucket */
	int64_t exp;  /* expiry to store (capped for very long TTLs) */
};

struct seg_wloc {
	int32_t seg;
	uint32_t off, span; /* bytes */
	struct seg_open_ref *ref; /* whose chunk it came from */
	uint8_t *p;
	uint32_t delta;
	bool large; /* a large item: seg is its head (seg_append.c), ref NULL */
};

void seg_ttl_place(int64_t expires_at, int64_t now, struct ttl_place *t); /* 0 = never */
/* span bytes for an item of t (seg_append.c), under w's append mark on
 * their segment until seg_append_done() or seg_append_abandon(). */
int seg_reserve(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
		struct seg_wloc *out);
/* The append is linked (done) or not (abandon: its bytes go back to the
 * worker's chunk, or stay dead); either ends the worker's append mark. */
void seg_append_done(struct seg_worker *w, const struct seg_wloc *wl);
void seg_append_abandon(struct seg_worker *w, const struct seg_wloc *wl);

/* A reserved large item (larger than a segment) that was not linked: its
 * segments back at once. head: of life gen, reserved, unmarked. Not an
 * eviction of anything readable. */
void seg_large_drop(struct seg_worker *w, int32_t head, uint64_t gen);

/* Writes header and key; returns where the value goes. */
uint8_t *seg_write_head(const struct seg_wloc *wl, const struct seg_key *k, uint32_t vlen,
			uint32_t flags);
/* Makes sure a chain can grow by one bucket (w's spare). */
int seg_refill_spare(struct seg_worker *w);

#endif /* SEGCACHED_SEG_APPEND_H */
