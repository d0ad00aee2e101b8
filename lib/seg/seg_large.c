/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Items larger than a segment, so that -I (memcached's 1 MiB by default)
 * does not set the segment size: a small heap keeps small segments, which
 * keep more objects (fewer bytes idle in open segments, finer eviction),
 * and still stores memcached's largest items (issue 37).
 *
 * A large item starts at offset 0 of a head segment of its own and goes on,
 * byte for byte, in continuation segments the head links (seg_hdr.cont;
 * state SEG_CONT, in no chain). The head is a sealed segment of the item's
 * TTL chain like any other, holding one item: expiry, eviction, merge and
 * flush_all find it there and reclaim it whole (merge never copies it, so
 * it is evicted where a merge meets it), and its life's end (seg_retire)
 * frees the continuations with it. A lock-free reader follows the links
 * and checks the head's gen after the copy: the continuations are freed
 * only after the head's new gen, so a reader that read a reused one fails
 * that check, as it would on a reused head.
 *
 * The item is reserved as a whole (every segment taken, which may evict)
 * before a byte is written, under the worker's append mark on the head:
 * a reclaim of the head waits for the writer, and the head's item parses
 * (header and key written at once) before the mark goes.
 */
#include "seg/seg_append.h"
#include "seg/seg_chunk.h"
#include "seg/seg_evict.h"
#include "seg/seg_expire.h"
#include "seg/seg_large.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

/* The segment that holds byte *pos of the large item headed by seg, *pos
 * made relative to it; SEG_NONE when a link is out of range. */
static int32_t
seek(const struct seg_engine *e, int32_t seg, uint32_t *pos)
{
	while (*pos >= e->seg_size) {
		seg = __atomic_load_n(&e->hdr[seg].cont, __ATOMIC_RELAXED);
		if (seg < 0 || (uint32_t)seg >= e->nseg)
			return SEG_NONE;
		*pos -= e->seg_size;
	}
	return seg;
}

static bool
copy(const struct seg_engine *e, uint32_t head, uint32_t pos, uint8_t *buf, uint32_t len,
     bool out)
{
	int32_t seg = seek(e, (int32_t)head, &pos);

	while (seg != SEG_NONE) {
		const uint32_t n = len < e->seg_size - pos ? len : e->seg_size - pos;
		uint8_t *p = seg_data(e, (uint32_t)seg) + pos;

		if (out)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		buf += n;
		len -= n;
		if (len == 0)
			return true;
		pos = e->seg_size;
		seg = seek(e, seg, &pos);
	}
	return false;
}

bool
seg_large_get(const struct seg_engine *e, uint32_t head, uint32_t pos, void *dst, uint32_t len)
{
	return copy(e, head, pos, dst, len, true);
}

void
seg_large_put(const struct seg_engine *e, uint32_t head, uint32_t pos, const void *src,
	      uint32_t len)
{
	/* the writer's own reservation: its links are whole */
	(void)copy(e, head, pos, (uint8_t *)(uintptr_t)src, len, false);
}

bool
seg_item_copy(const struct seg_engine *e, uint32_t dseg, uint32_t doff, uint32_t dpos,
	      uint32_t sseg, uint32_t soff, uint32_t spos, uint32_t len)
{
	uint8_t bounce[4096];

	if (doff + dpos + len <= e->seg_size && soff + spos + len <= e->seg_size) {
		memmove(seg_data(e, dseg) + doff + dpos, seg_data(e, sseg) + soff + spos, len);
		return true;
	}
	while (len) {
		const uint32_t n = len < sizeof(bounce) ? len : (uint32_t)sizeof(bounce);

		if (!seg_item_get(e, sseg, soff, spos, bounce, n))
			return false;
		seg_item_put(e, dseg, doff, dpos, bounce, n);
		spos += n;
		dpos += n;
		len -= n;
	}
	return true;
}

/* A continuation: a new life (no reader of its earlier one passes its gen
 * check), full, linked to the next. */
static void
init_cont(struct seg_engine *e, int32_t seg, int32_t next)
{
	struct seg_hdr *h = &e->hdr[seg];

	atomic_store_explicit(&h->live, 0, memory_order_relaxed);
	atomic_store_explicit(&h->exp_max, 0, memory_order_relaxed);
	atomic_store_explicit(&h->write_off, e->seg_size | SEG_WOFF_SEALED, memory_order_relaxed);
	h->prev = h->next = SEG_NONE;
	__atomic_store_n(&h->cont, next, __ATOMIC_RELAXED);
	atomic_store_explicit(&h->gen, seg_new_gen(e), memory_order_release);
	atomic_store_explicit(&h->state, SEG_CONT, memory_order_release);
}

int
seg_reserve_large(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
		  struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	const uint32_t n = (size + e->seg_size - 1) / e->seg_size;
	int32_t seg[SEG_LARGE_SEGS_MAX];
	struct seg_hdr *h;

	if (n > SEG_LARGE_SEGS_MAX) /* item_max is bounded below this (seg_engine.c) */
		return ENGINE_TOO_LARGE;
	for (uint32_t i = 0; i < n; i++) {
		/* what expiring its chain frees first, as an opening would */
		seg[i] = SEG_NONE;
		seg_expire_chain(e, w, t->tb, now, 1, &seg[i]);
		if (seg[i] == SEG_NONE)
			seg[i] = seg_acquire(e, w);
		if (seg[i] == SEG_NONE) {
			while (i--)
				seg_pool_push(e, seg[i]);
			return ENGINE_NO_MEMORY;
		}
	}
	for (uint32_t i = n - 1; i > 0; i--)
		init_cont(e, seg[i], i + 1 < n ? seg[i + 1] : SEG_NONE);
	h = &e->hdr[seg[0]];
	seg_init_open(e, seg[0], t->tb, t->base, t->unit, now);
	engine_count_add(&w->base, ENGINE_C_rmw_global, n); /* the gens */
	__atomic_store_n(&h->cont, seg[1], __ATOMIC_RELAXED);
	atomic_store_explicit(&h->write_off, e->seg_size | SEG_WOFF_SEALED, memory_order_relaxed);
	atomic_store_explicit(&h->exp_max, t->exp, memory_order_relaxed);
	/* Marked before it is claimable: a reclaim waits for the item's
	 * bytes and link (or its abandon). */
	seg_chunk_mark(w, seg[0]);
	seg_chain_append(e, w, seg[0]);
	atomic_store(&h->state, SEG_SEALED);
	*out = (struct seg_wloc){
		.seg = seg[0],
		.off = 0,
		.span = item_span(size, e->off_shift),
		.ref = NULL,
		.p = seg_data(e, (uint32_t)seg[0]),
		.delta = t->tb == TTL_NEVER ? 0 : (uint32_t)((t->exp - t->base) >> t->unit),
		.large = true,
	};
	return ENGINE_OK;
}

void
seg_large_drop(struct seg_worker *w, int32_t head, uint64_t gen)
{
	struct seg_engine *e = w->e;

	/* A flush or a restart save waiting for reclaims: the dead head stays
	 * for a later pass. */
	if (!seg_reclaim_begin(e))
		return;
	if (seg_claim(e, head, SEG_SEALED)) {
		if (atomic_load(&e->hdr[head].gen) == gen) {
			seg_reclaim_whole(e, w, head, UNLINK_EVICTED);
			seg_pool_push(e, head);
		} else {
			/* another life of it, sealed by its writer: not ours */
			atomic_store(&e->hdr[head].state, SEG_SEALED);
		}
	}
	seg_reclaim_end(e);
}

void
seg_large_abandon(struct seg_worker *w, const struct seg_wloc *wl)
{
	/* under the mark: still the life reserved */
	const uint64_t gen = atomic_load(&w->e->hdr[wl->seg].gen);

	seg_chunk_unmark(w);
	seg_large_drop(w, wl->seg, gen);
}
