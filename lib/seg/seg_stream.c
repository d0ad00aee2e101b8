/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A store whose value arrives in pieces (engine_store_begin, issue 35):
 * its item is reserved at the request line, and each piece is copied
 * straight into it as the client sends it, so that a large value in
 * flight is heap memory -m bounds, not a buffer beside the heap; the item
 * is linked when the value is complete.
 *
 * Between pieces the worker holds no append mark: a drain or a reclaim
 * never waits for a client that trickles its value in. The reserved item
 * has its head and key written at once, so every walker steps over it,
 * and no slot points to it, so it is dead to all of them: an eviction,
 * a merge or a flush may reclaim its segment meanwhile. Each piece, and
 * the link, is done under the mark after checking that the segment is
 * still in the life it was reserved in (seg_chunk.c's Dekker pattern:
 * either the reclaimer sees the mark and waits, or the writer sees the
 * new gen, or the claim, and gives up); a value whose item was taken
 * back is discarded as it comes, and the store completes as one whose item
 * was evicted the moment it was linked (seg_store_expired): the mode's
 * condition decided, the key's old value dropped, the client told STORED
 * (or NOT_STORED, EXISTS, NOT_FOUND) as memcached would tell it, whose
 * item can be evicted as soon as it is linked. A client never sees an
 * error for an eviction or a flush_all that raced its value.
 */
#include "seg/seg_append.h"
#include "engine/engine_stream.h"
#include "seg/seg_chunk.h"
#include "seg/seg_large.h"
#include "seg/seg_link.h"
#include "seg/seg_op.h"
#include "seg/seg_ops.h"
#include "seg/seg_struct.h"

/* engine_stream's engine part. */
struct seg_stream {
	int32_t seg;       /* SEG_NONE: no item (an expired store writes none) */
	uint32_t off;      /* the item's place and span in it */
	uint32_t span;
	uint32_t value_at; /* where the value starts in the item */
	uint64_t gen;      /* the segment's life the item was reserved in */
	int64_t expires_at;
	uint32_t flags;
};

_Static_assert(sizeof(struct seg_stream) <= sizeof(((struct engine_stream *)0)->priv),
	       "struct seg_stream must fit engine_stream's priv");

static inline struct seg_stream *
stream_of(struct engine_stream *st)
{
	return (struct seg_stream *)(void *)st->priv;
}

static void
lose(struct seg_worker *w, struct engine_stream *st)
{
	st->lost = true;
	W_COUNT(w, set_stream_lost);
}

enum engine_status
seg_op_store_begin(struct engine_worker *ew, enum engine_store_mode mode, const void *key,
		   size_t klen, size_t vlen, uint32_t flags, int64_t exptime,
		   struct engine_stream *st)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_stream *ss = stream_of(st);
	struct ttl_place t;
	struct seg_wloc wl;
	struct seg_key k;
	int64_t now;
	int rc;

	if (mode == ENGINE_APPEND || mode == ENGINE_PREPEND || !op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	W_COUNT(w, cmd_set);
	if (seg_store_too_large(w, &k, mode, vlen, flags, now))
		return ENGINE_TOO_LARGE;
	*st = (struct engine_stream){ .vlen = vlen };
	*ss = (struct seg_stream){ .seg = SEG_NONE, .flags = flags,
				   .expires_at = engine_expiry_from_exptime(exptime, now) };
	W_COUNT(w, set_streamed);
	if (ss->expires_at < 0)
		return ENGINE_OK; /* stored expired: only the link happens */
	seg_ttl_place(ss->expires_at, now, &t);
	rc = seg_reserve(w, &t, now, item_size(k.klen, (uint32_t)vlen, flags), &wl);
	if (rc != ENGINE_OK) {
		W_COUNT(w, set_no_memory);
		return rc;
	}
	ss->value_at = (uint32_t)(seg_write_head(&wl, &k, (uint32_t)vlen, flags) - wl.p);
	ss->seg = wl.seg;
	ss->off = wl.off;
	ss->span = wl.span;
	/* under the mark: the life cannot end while we read it */
	ss->gen = atomic_load_explicit(&w->e->hdr[wl.seg].gen, memory_order_relaxed);
	seg_append_done(w, &wl);
	return ENGINE_OK;
}

/* Marks the item's segment and says whether it is still the life the item
 * was reserved in; to link, also that no reclaim has claimed it (a claim
 * walks the segment's items after its drain: an item linked after the
 * walk passed would outlive the segment). The caller unmarks. */
static bool
mark_if_ours(struct seg_worker *w, const struct seg_stream *ss, bool to_link)
{
	const struct seg_hdr *h = &w->e->hdr[ss->seg];
	uint8_t state;

	seg_chunk_mark(w, ss->seg);
	if (atomic_load(&h->gen) != ss->gen)
		return false;
	state = atomic_load(&h->state);
	return !to_link || state == SEG_OPEN || state == SEG_SEALED;
}

void
seg_op_store_write(struct engine_worker *ew, struct engine_stream *st, const void *data,
		   size_t len)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_stream *ss = stream_of(st);

	if (!st->lost && ss->seg != SEG_NONE) {
		if (mark_if_ours(w, ss, false))
			seg_item_put(w->e, (uint32_t)ss->seg, ss->off,
				     ss->value_at + (uint32_t)st->written, data, (uint32_t)len);
		else
			lose(w, st);
		seg_chunk_unmark(w);
	}
	st->written += len;
}

/* link_streamed: the reserved item was taken back */
#define STREAM_LOST (-2)

static int
link_streamed(struct seg_worker *w, struct engine_stream *st, const struct seg_key *k,
	      enum link_mode lm, uint64_t cas_in, int64_t now, uint64_t *cas_out)
{
	struct seg_stream *ss = stream_of(st);
	const struct seg_wloc wl = { .seg = ss->seg, .off = ss->off, .span = ss->span };

	for (;;) {
		int rc;

		if (st->lost)
			return STREAM_LOST;
		if (!mark_if_ours(w, ss, true)) {
			seg_chunk_unmark(w);
			lose(w, st);
			return STREAM_LOST;
		}
		rc = seg_link_item(w, k, &wl, lm, NULL, cas_in, now, cas_out);
		seg_chunk_unmark(w);
		if (rc != LINK_NEED_BUCKET)
			return rc;
		/* a new key in a full chain: a bucket (which may evict), then
		 * the same item again */
		if (seg_refill_spare(w) != ENGINE_OK)
			return ENGINE_NO_MEMORY;
	}
}

enum engine_status
seg_op_store_finish(struct engine_worker *ew, struct engine_stream *st,
		    enum engine_store_mode mode, const void *key, size_t klen, uint64_t cas_in,
		    uint64_t *cas_out)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_stream *ss = stream_of(st);
	const enum link_mode lm = seg_link_mode(mode);
	struct seg_key k;
	int64_t now;
	int rc;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	if (ss->seg == SEG_NONE) {
		rc = seg_store_expired(w, &k, lm, cas_in, now);
	} else {
		const struct engine_item stored = { .vlen = (uint32_t)st->vlen,
						    .flags = ss->flags,
						    .expires_at = ss->expires_at };

		rc = link_streamed(w, st, &k, lm, cas_in, now, cas_out);
		/* a large item not linked: its segments back now, not when a
		 * pass comes to them (a lost one is gone already: its gen) */
		if (rc != ENGINE_OK && ss->span > w->e->seg_size)
			seg_large_drop(w, ss->seg, ss->gen);
		if (rc == STREAM_LOST)
			rc = seg_store_expired(w, &k, lm, cas_in, now); /* stored, evicted at once */
		else if (rc == ENGINE_OK)
			seg_store_sampled(w, &k, &stored, now);
	}
	seg_store_counted(w, mode, rc);
	return rc;
}
