/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Per-worker batched live counts (seg_live.c): a worker's changes to the
 * live items and bytes of the segments it links items into or unlinks
 * them from, held in its slots and added up, and the readers that count
 * them in.
 */
#ifndef SEGCACHED_SEG_LIVE_H
#define SEGCACHED_SEG_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct seg_engine;
struct seg_worker;

/* A worker's pending change to one segment's live counts (seg_live.c):
 * the life it belongs to, seg_open_pack(segment, its gen then) (0 = an
 * empty slot), and the packed delta. Only the owner writes it; readers of
 * the counts (stats, the restart save, whether a segment may still hold
 * items) read it too: atomics, stored and loaded, never read-modify-written. */
struct seg_live_slot {
	_Atomic uint64_t life;
	_Atomic int64_t delta;
};
/* Slots per worker (2 KiB), direct-mapped by segment id: enough for the
 * segments that removals of recently written keys go to. */
#define SEG_LIVE_SLOTS 128
/* Changes between two flushes of all of a worker's slots: bounds how many
 * a busy worker holds back (rarer flushes find more to add up). */
#define SEG_LIVE_BATCH 4096

/* Worker w's change to the live counts of the segment slot value v points
 * into (an item linked there, of `size` bytes; or unlinked): kept in w's
 * slots or applied at once. The caller keeps that segment's life from
 * ending: it holds the item's bucket lock or its append mark there. */
void seg_live_add(struct seg_worker *w, uint64_t v, uint32_t size);
void seg_live_remove(struct seg_worker *w, uint64_t v, uint32_t span); /* span: seg_item_span */
void seg_live_flush(struct seg_worker *w); /* all of w's (the owner only) */
/* What all workers hold for seg in its life gen: exact at rest; and seg's
 * live count with those changes. */
int64_t seg_live_pending(const struct seg_engine *e, int32_t seg, uint64_t gen);
int64_t seg_live_read(const struct seg_engine *e, int32_t seg);
/* Whether a claimed, drained segment may still hold linked items (must be
 * walked): false only when nothing is pending and its count is not > 0. */
bool seg_live_may_hold(const struct seg_engine *e, int32_t seg);

#endif /* SEGCACHED_SEG_LIVE_H */
