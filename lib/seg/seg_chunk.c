/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A worker's chunks of open segments: the bytes it reserves ahead, several
 * items' worth at once, in the segment its appends for a TTL bucket go to
 * (one compare-and-swap of write_off for a chunk, not one per item), the
 * fillers that keep a chunk's unused bytes walkable, giving an unused tail
 * back, and the append mark that drains wait for (in place of a `writers`
 * count up and down on the segment's header per append). Called by
 * seg_append.c (every append), seg_evict.c and seg_engine.c; calls nothing
 * but the segment headers.
 *
 * The append mark. A worker appending to a segment names it in a line of
 * its own (seq_cst store), then checks the segment's gen, state and sealed
 * bit (seq_cst loads). A drain (seg_close_and_drain: sealed bit, then wait;
 * seg_retire: new gen, then wait) waits until no worker's mark names the
 * segment: either the appender sees the seal or the new gen and leaves, or
 * the drain sees its mark and waits for it (Dekker's pattern, the same as
 * `writers`, without the shared line). The mark is cleared with a release
 * store once the item is linked (or abandoned), so a walker that saw it
 * cleared sees the item's bytes and the filler after them.
 *
 * A chunk is walkable at every clear of the mark: [items][filler]. Its
 * filler's head moves past each item as it is placed (seg_chunk.h: nine
 * bytes, whatever the tail's length up to SEG_FILLER_HEAD_MAX; the body
 * under it is never read), so no byte inside write_off is ever left as an
 * earlier life's garbage, which would stop (or derail) the walk of a
 * segment sealed by another worker while this one holds a chunk in it.
 * A filler needs SEG_FILLER_MIN bytes; an item that would leave fewer in
 * its chunk does not fit it, except at the segment's end (a walk stops at
 * the bytes there, zeroed: they cannot parse).
 *
 * A worker's chunks and own open segments are kept per TTL bucket in
 * SEG_WORKER_REFS tagged slots, not one for each bucket; a bucket that
 * finds its slot held by another takes it over (seg_ref_retag).
 *
 * One worker appending alone places every item exactly where an append of
 * its own bytes would (the chunk grows in place while write_off is still its
 * end, and its tail is given back before the segment is sealed), so lib/mrc's
 * miniature cache still follows lib/seg item by item.
 */
#include "seg/seg_chunk.h"
#include "seg/seg_item.h"
#include "seg/seg_struct.h"

/* Bytes a chunk reserves: a 64th of a segment, at most 2 KiB (~25 items of
 * 80 bytes: a 25th of the compare-and-swaps), at least 64. It is also what
 * each worker may leave dead in a segment that another one seals under it
 * (half of it on average: 24 workers sharing a 1 MiB segment, ~2%). */
static uint32_t
chunk_bytes(const struct seg_engine *e)
{
	uint32_t k = e->seg_size / 64;

	k = k > 2048 ? 2048 : k < 64 ? 64 : k;
	return k & ~((1u << e->off_shift) - 1);
}

void
seg_chunk_fill(const struct seg_engine *e, int32_t seg, uint32_t from, uint32_t to)
{
	uint8_t *data = seg_data(e, seg);

	while (to - from >= SEG_FILLER_MIN) {
		uint32_t n = to - from > SEG_FILLER_MAX ? SEG_FILLER_MAX : to - from;

		if (to - from - n != 0 && to - from - n < SEG_FILLER_MIN)
			n -= SEG_FILLER_MIN; /* keeps the alignment: items align to <= 8 or to >= 16 */
		item_write_filler(data + from, n);
		from += n;
	}
	/* Only at the segment's end: zero bytes end the walk there. */
	if (from < to)
		memset(data + from, 0, to - from < 2 ? 1 : 2);
}

/* Does span fit at pos in a chunk ending at end, leaving room for its filler? */
static bool
fits(const struct seg_engine *e, uint32_t pos, uint32_t span, uint32_t end)
{
	uint32_t rest = end - pos - span;

	return pos + span <= end && (rest == 0 || rest >= SEG_FILLER_MIN || end == e->seg_size);
}

bool
seg_chunk_take_more(struct seg_worker *w, struct seg_open_ref *ref, int32_t seg, uint64_t life,
		    uint32_t span, uint32_t cur, uint32_t *off, uint64_t *rmw, unsigned *lost)
{
	struct seg_engine *e = w->e;
	struct seg_hdr *h = &e->hdr[seg];
	bool mine = ref->chunk_life == life;
	/* Bytes ahead only where no other worker's appends leave them dead: in
	 * a segment of the worker's own, in a shared one where no other
	 * worker's bytes were met in this life, or once it has lost races for
	 * it (there a compare-and-swap per item would contend). Else each
	 * item's bytes alone: a sharer's chunk leaves its tail dead when
	 * another seals the segment under it, and with 4 workers at an easy
	 * pace exact reservations cut Twitter-shaped B's misses at -m 32 from
	 * 0.0663 to 0.0600, about what one worker misses (docs/bench/journal/
	 * protocol-replay.md, "Chunks only where no one else appends"). */
	bool shared = atomic_load_explicit(&h->sharers, memory_order_relaxed);

	if (!shared && (mine ? cur != ref->chunk_end : cur != 0)) {
		atomic_store_explicit(&h->sharers, true, memory_order_relaxed);
		shared = true;
	}
	const uint32_t chunk = ref->own || w->own_always || !shared ||
					       ref->contention >= SEG_CHUNK_AFTER_CONTENTION
				       ? chunk_bytes(e)
				       : 0;

	if (!mine || !fits(e, ref->chunk_pos, span, ref->chunk_end)) {
		uint32_t base, end;

		for (;;) {
			/* In place while write_off is still the chunk's end. */
			const bool grow = mine && cur == ref->chunk_end;
			uint64_t want;

			base = grow ? ref->chunk_pos : cur;
			if (base + span > e->seg_size)
				return false;
			want = cur + chunk;
			/* An item of a quarter chunk or more gets its bytes alone:
			 * a chunk of a few such items left a tail of about half
			 * an item dead whenever another worker reserved after it
			 * (8% of 2 KiB chunks of 940-byte items; 4 threads then
			 * sealed 17% more segments than one for the same items,
			 * issue 36), for a compare-and-swap saved per item or two. */
			if (want < base + span || span * 4 > chunk)
				want = base + span;
			if (want - base - span != 0 && want - base - span < SEG_FILLER_MIN)
				want = base + span + SEG_FILLER_MIN;
			end = want > e->seg_size ? e->seg_size : (uint32_t)want;
			++*rmw;
			if (atomic_compare_exchange_weak(&h->write_off, &cur, end))
				break;
			if (cur & SEG_WOFF_SEALED)
				return false;
			++*lost;
		}
		/* An old chunk here that others reserved after: its tail stays
		 * dead under its filler. */
		ref->chunk_life = life;
		ref->chunk_pos = base;
		ref->chunk_end = end;
	}
	*off = ref->chunk_pos;
	ref->chunk_pos += span;
	seg_chunk_fill(e, seg, ref->chunk_pos, ref->chunk_end);
	return true;
}

void
seg_chunk_give_back(struct seg_worker *w, struct seg_open_ref *ref, bool marked)
{
	struct seg_engine *e = w->e;
	const uint64_t life = ref->chunk_life;
	const int32_t seg = seg_open_seg(life);
	struct seg_hdr *h = &e->hdr[seg];
	uint32_t end = ref->chunk_end;

	ref->chunk_life = 0;
	if (!life || ref->chunk_pos == end ||
	    !seg_open_gen_is(life, atomic_load_explicit(&h->gen, memory_order_relaxed)))
		return;
	/* Marked, the life seen cannot end under the exchange (a write_off
	 * equal to our end in a later life is someone else's bytes). */
	if (!marked)
		seg_chunk_mark(w, seg);
	if (seg_open_gen_is(life, atomic_load(&h->gen))) {
		/* fails when sealed, or when others reserved after us */
		atomic_compare_exchange_strong(&h->write_off, &end, ref->chunk_pos);
		engine_count(&w->base, ref->own ? ENGINE_C_rmw_segment : ENGINE_C_rmw_open_shared);
	}
	if (!marked)
		seg_chunk_unmark(w);
}

void
seg_chunks_give_back_all(struct seg_worker *w)
{
	for (unsigned i = 0; i < SEG_WORKER_REFS; i++)
		if (w->open[i].chunk_life)
			seg_chunk_give_back(w, &w->open[i], false);
	if (w->borrowed.chunk_life)
		seg_chunk_give_back(w, &w->borrowed, false);
}

/* A segment of w's own that it opened for ref's bucket, still in that life,
 * becomes an ordinary sealed one: no one else appends to it. */
static void
seal_own(struct seg_worker *w, const struct seg_open_ref *ref)
{
	struct seg_hdr *h;
	uint8_t open = SEG_OPEN;

	if (ref->seg == SEG_NONE)
		return;
	h = &w->e->hdr[ref->seg];
	if (atomic_load(&h->gen) == ref->gen) {
		atomic_fetch_or(&h->write_off, SEG_WOFF_SEALED);
		atomic_compare_exchange_strong(&h->state, &open, SEG_SEALED);
	}
}

/* No bucket's tag: the first use of a slot retags it. */
#define NO_BUCKET UINT16_MAX

void
seg_refs_init(struct seg_worker *w)
{
	for (unsigned i = 0; i < SEG_WORKER_REFS; i++)
		w->open[i] = (struct seg_open_ref){ .seg = SEG_NONE, .tb = NO_BUCKET };
	w->borrowed = (struct seg_open_ref){ .seg = SEG_NONE, .tb = NO_BUCKET };
}

/* Two buckets in one slot, written in turn, take it over from each other:
 * the chunk's tail goes back (when still last in its segment), a segment of
 * the worker's own is sealed and the bucket writes to the shared one again
 * (it has to lose races there to have one of its own again). */
void
seg_ref_retag(struct seg_worker *w, struct seg_open_ref *ref, unsigned tb)
{
	if (ref->chunk_life)
		seg_chunk_give_back(w, ref, false);
	seal_own(w, ref);
	*ref = (struct seg_open_ref){ .seg = SEG_NONE, .tb = (uint16_t)tb };
	/* A chunk borrowed in tb's segment before tb had a slot would lie
	 * (its tail dead) before the chunk the slot takes there next. */
	if (w->borrowed.chunk_life)
		seg_chunk_give_back(w, &w->borrowed, false);
}

void
seg_refs_close(struct seg_worker *w)
{
	seg_chunks_give_back_all(w);
	for (unsigned i = 0; i < SEG_WORKER_REFS; i++)
		seal_own(w, &w->open[i]);
}
