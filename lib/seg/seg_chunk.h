/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A worker's chunks of open segments, the part every append runs: its
 * append mark, and taking an item's bytes from the chunk it already has
 * (inline, for seg_append.c: the one-chunk-per-many-items path costs a
 * bounds check and the nine bytes of the filler that moves past the item).
 * The rest, reserving a chunk and giving its tail back, is in seg_chunk.c,
 * as are a worker's refs set up and closed and its chunks all given back.
 */
#ifndef SEG_CHUNK_H
#define SEG_CHUNK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "seg/seg_hdr.h"
#include "seg/seg_item.h"
#include "seg/seg_struct.h"

static inline void
seg_chunk_mark(struct seg_worker *w, int32_t seg)
{
	atomic_store(&w->mark->seg, (uint64_t)seg + 1); /* seq_cst */
}

static inline void
seg_chunk_unmark(struct seg_worker *w)
{
	atomic_store_explicit(&w->mark->seg, 0, memory_order_release);
}

/* The slot of bucket tb among a worker's refs: Fibonacci hashing, which
 * spreads any run of neighbouring buckets over distinct slots. */
static inline unsigned
seg_ref_slot(unsigned tb)
{
	_Static_assert(SEG_WORKER_REFS == 128, "the shift below takes 7 bits");
	return (tb * 0x9e3779b1u) >> 25;
}

/* The slot passes to tb: what it held for another bucket ends (seg_chunk.c). */
void seg_ref_retag(struct seg_worker *w, struct seg_open_ref *ref, unsigned tb);

/* w's ref for bucket tb, taken over from the bucket that had its slot if
 * need be. Nothing may be marked: a ref's chunk given back marks its own
 * segment. */
static inline struct seg_open_ref *
seg_ref_of(struct seg_worker *w, unsigned tb)
{
	struct seg_open_ref *ref = &w->open[seg_ref_slot(tb)];

	if (__builtin_expect(ref->tb != tb, 0))
		seg_ref_retag(w, ref, tb);
	return ref;
}

/* w's ref for bucket tb if it has one, else the one for borrowed chunks:
 * taking a slot over is for seg_ref_of, before anything is marked. */
static inline struct seg_open_ref *
seg_ref_find(struct seg_worker *w, unsigned tb)
{
	struct seg_open_ref *ref = &w->open[seg_ref_slot(tb)];

	return ref->tb == tb ? ref : &w->borrowed;
}

/* seg_chunk_take's other cases: a chunk to reserve (none here yet, or the
 * item does not fit it), or a filler too long for one head (seg_chunk.c). */
bool seg_chunk_take_more(struct seg_worker *w, struct seg_open_ref *ref, int32_t seg,
			 uint64_t life, uint32_t span, uint32_t cur, uint32_t *off, uint64_t *rmw,
			 unsigned *lost);

/* Under w's mark on seg (life checked): span bytes of ref's chunk there,
 * reserving one or more of it by a CAS of write_off; false when the
 * segment is sealed or full. The chunk's unused bytes stay under a filler
 * at every moment the mark is off (seg_chunk.c). */
static inline bool
seg_chunk_take(struct seg_worker *w, struct seg_open_ref *ref, int32_t seg, uint64_t life,
	       uint32_t span, uint32_t *off, uint64_t *rmw, unsigned *lost)
{
	struct seg_engine *e = w->e;
	/* seq_cst: the appender's half of the mark's Dekker pattern */
	const uint32_t cur = atomic_load(&e->hdr[seg].write_off);
	const uint32_t pos = ref->chunk_pos, end = ref->chunk_end;
	const uint32_t rest = end - pos - span;

	if (cur & SEG_WOFF_SEALED)
		return false;
	if (__builtin_expect(ref->chunk_life == life && pos + span <= end &&
				     (rest == 0 || (rest >= SEG_FILLER_MIN &&
						    rest <= SEG_FILLER_HEAD_MAX)),
			     1)) {
		*off = pos;
		ref->chunk_pos = pos + span;
		if (rest)
			item_write_filler_head(seg_data(e, seg) + pos + span, rest);
		return true;
	}
	return seg_chunk_take_more(w, ref, seg, life, span, cur, off, rmw, lost);
}

/* ref's chunk ends: its unused tail back to the segment if still its last
 * bytes, else dead under a filler (marked: w's mark is on that segment). */
void seg_chunk_give_back(struct seg_worker *w, struct seg_open_ref *ref, bool marked);
/* Fillers over [from, to): walkers step over them (seg_item.h). */
void seg_chunk_fill(const struct seg_engine *e, int32_t seg, uint32_t from, uint32_t to);

void seg_chunks_give_back_all(struct seg_worker *w); /* before evicting, leaving */
void seg_refs_init(struct seg_worker *w);
/* Leaving: chunks given back, its own open segments sealed. */
void seg_refs_close(struct seg_worker *w);

#endif
