/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Per-worker batched live counts: a worker's changes to segments' live
 * item and byte counts (seg_hdr.live) wait in a few slots of its own,
 * direct-mapped by segment id, and reach the header with one atomic add
 * per segment rather than one per item; and the readers of those counts.
 * Called by seg_ops.c (every linked and unlinked item), seg_evict.c,
 * seg_expire.c, seg_dump.c, seg_engine.c and the restart save; calls
 * nothing but the segment headers.
 *
 * Every store replaces an item: -1 item on the old one's segment, +1 on
 * the new one's (one add each, on a line every writer writes). Hot keys'
 * old copies mostly lie in the segment being appended to, so both land in
 * the same slot and cancel; the appends of a worker to one segment add up
 * in one slot until it leaves that segment.
 *
 * When a change is applied:
 *  - an add, to the segment the worker appends to, takes its slot (a
 *    change of another segment there is applied first), and the slot of the
 *    segment its previous add went to is applied (it left that segment);
 *  - a removal whose slot holds another segment's change is applied at
 *    once (the caller holds the item's bucket lock: its life cannot end);
 *  - every SEG_LIVE_BATCH changes, and before the worker evicts or goes
 *    away, all of its slots are applied.
 *
 * A slot names the segment's life by its id and gen (seg_open_pack).
 * Applying it later must not reach a later life, whose counts start from
 * zero: the worker counts itself in the segment's `writers`, then checks
 * the gen (both seq_cst), as an appender does. seg_retire stores the new
 * gen and then waits for `writers` to drain, so either the worker sees
 * the new gen and drops the change (that life's counts are gone with it),
 * or seg_retire waits until the change is in, before seg_init_open resets
 * the counts.
 *
 * What each reader of the counts gets (docs/architecture.md, "Memory
 * ordering"):
 *  - Whether a segment may hold items (seg_reclaim_whole skips the walk
 *    of one that holds none; the dump skips it): the segment is claimed
 *    and drained, so no append to it is in flight and no add to it can
 *    be noted any more. seg_live_may_hold() looks for any slot naming its
 *    life first (acquire) and reads the header after: a slot is emptied
 *    (release) only after its change is in the header, so an add is either
 *    seen pending or counted in the header. Removals pending elsewhere only
 *    make the header higher than the truth. So "nothing pending and a
 *    count of zero" means no item is linked; anything pending means walk.
 *  - Merge's choice of runs and of how much to keep (seg_merge.c) reads
 *    the header alone: an estimate, off by what the workers hold (at most
 *    SEG_LIVE_BATCH changes each). Which items survive is decided per
 *    item under its bucket lock, and an item that finds no room is evicted,
 *    so an estimate never loses or keeps an item wrongly.
 *  - cache_memlimit (seg_memlimit.c) reads none: it parks free segments,
 *    whose count seg_retire zeroed.
 *  - stats, the restart save and the unit tests' census add the pending
 *    changes of the segment's current life (seg_live_read): exact at rest,
 *    which the save (refused unless at rest) and the census need; a
 *    snapshot while workers run, as the counts always were.
 */
#include "seg/seg_live.h"
#include "seg/seg_struct.h"

/* Applies a change to a segment's count if it is still in that life. */
static void
live_apply(struct seg_worker *w, uint64_t life, int64_t delta)
{
	struct seg_hdr *h = &w->e->hdr[seg_open_seg(life)];

	/* The worker saw this life: any other gen now is a later one. */
	if (!seg_open_gen_is(life, atomic_load_explicit(&h->gen, memory_order_relaxed)))
		return;
	atomic_fetch_add(&h->writers, 1);
	if (seg_open_gen_is(life, atomic_load(&h->gen))) {
		atomic_fetch_add_explicit(&h->live, delta, memory_order_relaxed);
		W_COUNT(w, rmw_segment);
	}
	atomic_fetch_sub_explicit(&h->writers, 1, memory_order_release);
	engine_count_add(&w->base, ENGINE_C_rmw_segment, 2); /* writers up, down */
}

static void
slot_apply(struct seg_worker *w, struct seg_live_slot *s)
{
	const uint64_t life = atomic_load_explicit(&s->life, memory_order_relaxed);
	const int64_t delta = atomic_load_explicit(&s->delta, memory_order_relaxed);

	if (!life)
		return;
	if (delta)
		live_apply(w, life, delta);
	atomic_store_explicit(&s->delta, 0, memory_order_relaxed);
	/* After the change is in the header: seg_live_may_hold(). */
	atomic_store_explicit(&s->life, 0, memory_order_release);
}

static void
slot_take(struct seg_live_slot *s, uint64_t life, int64_t delta)
{
	atomic_store_explicit(&s->delta, delta, memory_order_relaxed);
	atomic_store_explicit(&s->life, life, memory_order_release);
}

static __attribute__((hot)) void
live_note(struct seg_worker *w, int32_t seg, int64_t delta, bool add)
{
	struct seg_engine *e = w->e;
	struct seg_live_slot *s = &w->live[(uint32_t)seg % SEG_LIVE_SLOTS];
	/* Stable: the caller keeps this life from ending. */
	const uint64_t life =
		seg_open_pack(seg, atomic_load_explicit(&e->hdr[seg].gen, memory_order_relaxed));

	w->live_notes++;
	if (add && seg != w->live_add_seg) {
		/* It left the segment of its last add: that count goes in once
		 * the segment is sealed (merge's estimates read sealed ones).
		 * One still open keeps its slot: with items of several TTLs a
		 * worker's adds go to a few open segments in turn, and
		 * applying at every turn was an RMW on a shared header line
		 * for most stores (issue 34: 0.42 a store on a 50/50 TTL mix). */
		if (w->live_add_seg != SEG_NONE) {
			struct seg_live_slot *left =
				&w->live[(uint32_t)w->live_add_seg % SEG_LIVE_SLOTS];

			if (seg_open_seg(atomic_load_explicit(&left->life,
							      memory_order_relaxed)) == w->live_add_seg &&
			    atomic_load_explicit(&e->hdr[w->live_add_seg].state,
						 memory_order_relaxed) != SEG_OPEN)
				slot_apply(w, left);
		}
		w->live_add_seg = seg;
	}
	const uint64_t at = atomic_load_explicit(&s->life, memory_order_relaxed);

	if (at == life) {
		atomic_store_explicit(&s->delta,
				      atomic_load_explicit(&s->delta, memory_order_relaxed) + delta,
				      memory_order_relaxed);
		return;
	}
	if (at && !add && atomic_load_explicit(&s->delta, memory_order_relaxed)) {
		/* Another segment's change holds the slot. */
		atomic_fetch_add_explicit(&e->hdr[seg].live, delta, memory_order_relaxed);
		W_COUNT(w, rmw_segment);
		return;
	}
	slot_apply(w, s);
	slot_take(s, life, delta);
}

__attribute__((hot)) void
seg_live_add(struct seg_worker *w, uint64_t v, uint32_t size)
{
	live_note(w, (int32_t)slot_seg(v), seg_live_pack(1, (int32_t)size), true);
}

__attribute__((hot)) void
seg_live_remove(struct seg_worker *w, uint64_t v, uint32_t span)
{
	live_note(w, (int32_t)slot_seg(v), -seg_live_pack(1, (int32_t)span),
		  false);
}

void
seg_live_flush(struct seg_worker *w)
{
	for (unsigned i = 0; i < SEG_LIVE_SLOTS; i++)
		slot_apply(w, &w->live[i]);
	w->live_notes = 0;
}

int64_t
seg_live_pending(const struct seg_engine *e, int32_t seg, uint64_t gen)
{
	const uint64_t life = seg_open_pack(seg, gen);
	int64_t sum = 0;

	for (unsigned i = 0; i < e->max_workers; i++) {
		const struct seg_live_slot *s =
			&e->live_tab[i * SEG_LIVE_SLOTS + (uint32_t)seg % SEG_LIVE_SLOTS];

		if (atomic_load_explicit(&s->life, memory_order_acquire) == life)
			sum += atomic_load_explicit(&s->delta, memory_order_relaxed);
	}
	return sum;
}

int64_t
seg_live_read(const struct seg_engine *e, int32_t seg)
{
	const uint64_t gen = atomic_load(&e->hdr[seg].gen);
	const int64_t pending = seg_live_pending(e, seg, gen);

	return pending + atomic_load_explicit(&e->hdr[seg].live, memory_order_relaxed);
}

bool
seg_live_may_hold(const struct seg_engine *e, int32_t seg)
{
	const uint64_t life = seg_open_pack(seg, atomic_load(&e->hdr[seg].gen));

	for (unsigned i = 0; i < e->max_workers; i++) {
		const struct seg_live_slot *s =
			&e->live_tab[i * SEG_LIVE_SLOTS + (uint32_t)seg % SEG_LIVE_SLOTS];

		if (atomic_load_explicit(&s->life, memory_order_acquire) == life)
			return true;
	}
	return seg_live_items_of(atomic_load_explicit(&e->hdr[seg].live,
						      memory_order_relaxed)) > 0;
}
