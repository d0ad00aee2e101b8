/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Where appends go: the TTL bucket of an item (seg_ttl_place) and the
 * bytes it is appended to (seg_reserve), in the open segment the workers
 * share for that bucket or in one of a worker's own; opening, sealing and
 * sharing open segments; the end of an append (done, abandoned); the
 * overflow buckets a chain grows by (seg_refill_spare). Taking a segment may
 * evict: this file sits above seg_evict.c. Called by seg_ops.c.
 */
#include <rte_common.h>
#include <rte_prefetch.h>

#include "seg/seg_append.h"
#include "seg/seg_chunk.h"
#include "seg/seg_evict.h"
#include "seg/seg_expire.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"
#include "seg/seg_ttl_bucket.h"

_Static_assert(TTL_BUCKETS == SEG_TTL_BUCKETS, "lib/seg's TTL chains are seg_ttl_bucket()'s");

/* Chooses the TTL bucket of an item expiring at expires_at (0 = never). */
void
seg_ttl_place(int64_t expires_at, int64_t now, struct ttl_place *t)
{
	struct seg_ttl_bucket b;
	int64_t cap;

	if (expires_at == 0) {
		*t = (struct ttl_place){ .tb = TTL_NEVER, .base = EXP_NEVER };
		return;
	}
	b = seg_ttl_bucket(expires_at - now);
	t->tb = b.tb;
	t->lo = b.lo;
	t->unit = b.unit;
	/* Segment exp_bases sit on the unit's grid, so every stored expiry
	 * does too, and rewriting an item (append, incr, merge) into another
	 * segment keeps its expiry exactly: it is rounded down once, when
	 * first stored, never again. */
	t->base = (now + t->lo) & ~(((int64_t)1 << t->unit) - 1);
	/* TTLs beyond ~97 days are capped (items die early, never late),
	 * one unit short of the largest delta: a shared segment's exp_base
	 * sits one unit below the grid (reserve_shared), and a segment just
	 * opened for t must take t, or its writer would open segments (and
	 * evict the heap for them) forever. */
	cap = t->base + ((int64_t)(EXP_DELTA_MAX - 1) << t->unit);
	t->exp = expires_at > cap ? cap : expires_at;
}

/* Raises h's exp_max to exp unless it is that late already: an atomic
 * max, as appenders to a shared segment raise it at once (a plain store
 * after the compare let an earlier expiry overwrite a later one, and the
 * segment expire under a live item: issue 21). */
static unsigned
raise_exp_max(struct seg_hdr *h, int64_t exp)
{
	int64_t cur = atomic_load_explicit(&h->exp_max, memory_order_relaxed);
	unsigned tries = 0;

	while (exp > cur) {
		SEG_TEST_POINT(SEG_TP_EXP_MAX_RAISE);
		tries++;
		if (atomic_compare_exchange_weak(&h->exp_max, &cur, exp))
			break;
	}
	return tries; /* compare-and-swaps issued, for the contention count */
}

/* Tries to take span bytes of open segment seg for an item of t, if the
 * segment is still in the life `gen` (compared under gen_mask): from the
 * worker's chunk there, reserving one (or more of it) when it has no room
 * (seg_chunk.c). Returns with the worker's append mark on the segment on
 * success. A full segment, or one whose expiry window the item is past, is
 * sealed. *lost counts the chunk reservations that lost a race. */
enum { RESERVED, NO_ROOM };

static __attribute__((hot)) int
try_reserve(struct seg_worker *w, struct seg_open_ref *tref, int32_t seg, uint64_t gen,
	    uint64_t gen_mask, const struct ttl_place *t, uint32_t span, bool shared,
	    unsigned *lost, struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	struct seg_hdr *h = &e->hdr[seg];
	/* The chunk is that of the segment's own bucket, so that items a worker
	 * borrows the segment for (another bucket's) go into the same chunk, in
	 * order. Read before the mark: the gen check below says whether it was
	 * this life's (the caller had the gen from a release store after
	 * seg_init_open set the bucket). tref is the ref of t's bucket. */
	const unsigned tb = __atomic_load_n(&h->ttl_bucket, __ATOMIC_RELAXED);
	struct seg_open_ref *ref = tb == tref->tb ? tref : seg_ref_find(w, tb);
	/* a shared segment's header line is written by every sharer; the
	 * mark is on the worker's own line and not counted */
	uint64_t rmw = 0;
	const enum engine_worker_counter rmw_counter =
		shared ? ENGINE_C_rmw_open_shared : ENGINE_C_rmw_segment;

	/* It leaves the segment its chunk is in: the tail goes back. */
	if (ref->chunk_life && seg_open_seg(ref->chunk_life) != seg)
		seg_chunk_give_back(w, ref, false);
	seg_chunk_mark(w, seg);
	SEG_TEST_POINT(SEG_TP_RESERVE_HELD);
	/* The header's plain fields are read only once the gen says this is
	 * still the life we were given: our mark keeps the segment from being
	 * reopened (seg_init_open) while we look. */
	const uint64_t hgen = atomic_load(&h->gen);

	if ((hgen & gen_mask) == gen && atomic_load(&h->state) == SEG_OPEN && h->ttl_bucket == tb) {
		/* Another bucket's segment: the item must fit its expiry grid
		 * (no coarser than its own bucket's, delta in range); one that
		 * does not fit is left open for its own items. */
		const bool foreign = h->ttl_bucket != t->tb;
		int64_t dd = t->tb == TTL_NEVER ? 0 : (t->exp - h->exp_base) >> h->unit_shift;
		bool ok = false;
		uint32_t o = 0;

		if (foreign && (h->exp_base == EXP_NEVER || t->tb == TTL_NEVER ||
				h->unit_shift > t->unit || dd < 0 || dd > EXP_DELTA_MAX)) {
			seg_chunk_unmark(w);
			return NO_ROOM;
		}
		if (dd >= 0 && dd <= EXP_DELTA_MAX)
			ok = seg_chunk_take(w, ref, seg, seg_open_pack(seg, hgen), span, &o, &rmw,
					    lost);
		if (ok) {
			rmw += raise_exp_max(h, t->exp);
			engine_count_add(&w->base, rmw_counter, rmw);
			out->seg = seg;
			out->off = o;
			out->span = span;
			out->ref = ref;
			out->p = seg_data(e, seg) + o;
			out->delta = (uint32_t)dd;
			out->large = false;
			return RESERVED;
		}
		/* Full, or the expiry is outside its window: our tail back (so
		 * the segment ends where its last item does), and seal it. */
		if (ref->chunk_life == seg_open_pack(seg, hgen))
			seg_chunk_give_back(w, ref, true);
		uint8_t open = SEG_OPEN;

		atomic_fetch_or(&h->write_off, SEG_WOFF_SEALED);
		atomic_compare_exchange_strong(&h->state, &open, SEG_SEALED);
		rmw += 2;
		SEG_TEST_POINT(SEG_TP_SEALING);
	}
	seg_chunk_unmark(w);
	engine_count_add(&w->base, rmw_counter, rmw);
	return NO_ROOM;
}

/* Due segments of its own chain that a worker opening a segment there
 * frees first, at most: each segment opened on a chain expires up to this
 * many, so expiry keeps pace with the writers of every chain, in
 * parallel, whatever the control thread's sweep does once a second. */
#define EXPIRE_ON_OPEN 2

/* A free segment for an item of t: the first one that expiring t's chain
 * frees (no global lock, seg_expire.c), else one from the pool or an
 * eviction. */
static int32_t
take_segment(struct seg_worker *w, const struct ttl_place *t, int64_t now)
{
	int32_t seg = SEG_NONE;

	seg_expire_chain(w->e, w, t->tb, now, EXPIRE_ON_OPEN, &seg);
	return seg != SEG_NONE ? seg : seg_acquire(w->e, w);
}

/* Opens a segment for t's bucket and links it into the chain; SEG_NONE
 * when no memory could be had. */
static int32_t
open_segment(struct seg_worker *w, const struct ttl_place *t, int64_t exp_base, int64_t now)
{
	struct seg_engine *e = w->e;
	int32_t seg = take_segment(w, t, now);

	if (seg == SEG_NONE)
		return SEG_NONE;
	seg_init_open(e, seg, t->tb, exp_base, t->unit, now);
	W_COUNT(w, rmw_global); /* seg_init_open's gen_counter increment */
	SEG_TEST_POINT(SEG_TP_OPENING);
	seg_chain_append(e, w, seg);
	/* Claimable (and unlinkable) only once linked. */
	atomic_store(&e->hdr[seg].state, SEG_OPEN);
	return seg;
}

/* Reserves span bytes in the worker's own open segment for t's bucket,
 * opening a new one when it is full or the expiry does not fit its window. */
static int
reserve_own(struct seg_worker *w, struct seg_open_ref *ref, const struct ttl_place *t,
	    int64_t now, uint32_t span, struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	unsigned lost = 0;

	for (;;) {
		if (ref->seg != SEG_NONE) {
			if (try_reserve(w, ref, ref->seg, ref->gen, UINT64_MAX, t, span, false,
					&lost, out) == RESERVED)
				return ENGINE_OK;
			/* Sealed less than half full: the bucket is not busy
			 * enough for a segment of this worker's own. */
			if ((atomic_load(&e->hdr[ref->seg].write_off) & ~SEG_WOFF_SEALED) <
			    e->seg_size / 2) {
				ref->own = false;
				ref->contention = 0;
			}
			ref->seg = SEG_NONE;
		}
		int32_t seg = open_segment(w, t, t->base, now);

		if (seg == SEG_NONE)
			return ENGINE_NO_MEMORY;
		ref->seg = seg;
		ref->gen = atomic_load(&e->hdr[seg].gen);
	}
}

/* Is the shared open segment `packed` still open in the life it names? */
static bool
shared_live(const struct seg_engine *e, uint64_t packed)
{
	const struct seg_hdr *h = &e->hdr[seg_open_seg(packed)];

	return packed && seg_open_gen_is(packed, atomic_load(&h->gen)) &&
	       atomic_load(&h->state) == SEG_OPEN;
}

/* A newly opened shared segment joins the ring in place of one that is no
 * longer open or else of the oldest, which is sealed: at most open_budget
 * stay open. */
static void
ring_add(struct seg_worker *w, uint64_t packed)
{
	struct seg_engine *e = w->e;
	uint64_t old;

	unsigned at = UINT32_MAX;

	seg_spin_lock(&e->open_ring_lock);
	W_COUNT(w, lock_segment);
	/* The place of one no longer open (sealed when full), else the oldest. */
	for (unsigned i = 0; i < e->open_budget && at == UINT32_MAX; i++)
		if (!shared_live(e, atomic_load(&e->open_ring[i])))
			at = i;
	if (at == UINT32_MAX) {
		at = e->open_ring_next;
		e->open_ring_next = (e->open_ring_next + 1) % e->open_budget;
	}
	old = atomic_load(&e->open_ring[at]);
	atomic_store(&e->open_ring[at], packed);
	seg_spin_unlock(&e->open_ring_lock);
	if (shared_live(e, old)) {
		struct seg_hdr *h = &e->hdr[seg_open_seg(old)];
		uint8_t open = SEG_OPEN;

		atomic_fetch_or(&h->write_off, SEG_WOFF_SEALED);
		atomic_compare_exchange_strong(&h->state, &open, SEG_SEALED);
	}
}

/* With every shared open segment of the budget in use, an item whose own
 * bucket has none goes into one of another bucket whose expiry grid
 * holds it, rather than seal one of them nearly empty. */
static bool
borrow_shared(struct seg_worker *w, struct seg_open_ref *tref, const struct ttl_place *t,
	      uint32_t span, struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	const uint64_t gen_mask = (1ull << SEG_OPEN_GEN_BITS) - 1;
	unsigned live = 0, lost = 0;

	for (unsigned i = 0; i < e->open_budget; i++)
		live += shared_live(e, atomic_load(&e->open_ring[i]));
	if (live < e->open_budget)
		return false;
	for (unsigned i = 0; i < e->open_budget; i++) {
		uint64_t p = atomic_load(&e->open_ring[i]);

		if (shared_live(e, p) &&
		    try_reserve(w, tref, seg_open_seg(p), p >> (64 - SEG_OPEN_GEN_BITS), gen_mask,
				t, span, true, &lost, out) == RESERVED)
			return true;
	}
	if (t->tb == TTL_NEVER)
		return false;
	/* None holds its expiry exactly: the one whose grid reaches furthest
	 * towards it, the item's life cut at the grid's end (early, never
	 * late; on a heap this small it is evicted long before). */
	for (unsigned tries = 0; tries < 2; tries++) {
		uint64_t best = 0;
		int64_t best_end = 0;

		for (unsigned i = 0; i < e->open_budget; i++) {
			uint64_t p = atomic_load(&e->open_ring[i]);
			const struct seg_hdr *h = &e->hdr[seg_open_seg(p)];
			/* read once: the segment may be reopened under this scan */
			int64_t base = __atomic_load_n(&h->exp_base, __ATOMIC_RELAXED);
			int64_t end;

			if (!shared_live(e, p) || base == EXP_NEVER ||
			    h->unit_shift > t->unit || base > t->exp)
				continue;
			end = base + ((int64_t)EXP_DELTA_MAX << h->unit_shift);
			if (end > best_end) {
				best_end = end;
				best = p;
			}
		}
		if (!best)
			return false;
		struct ttl_place cut = *t;

		cut.exp = best_end < t->exp ? best_end : t->exp;
		if (try_reserve(w, tref, seg_open_seg(best), best >> (64 - SEG_OPEN_GEN_BITS),
				gen_mask, &cut, span, true, &lost, out) == RESERVED)
			return true;
	}
	return false;
}

/* Reserves span bytes in the open segment that the workers share for t's
 * bucket, opening it (one worker does, the others use it) when there is
 * none or it is full (a shared segment's exp_base sits one unit below
 * the grid, so that workers whose clocks straddle a second fit). */
static int
reserve_shared(struct seg_worker *w, struct seg_open_ref *ref, const struct ttl_place *t,
	       int64_t now, uint32_t span, struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	struct seg_chain *c = &e->chain[t->tb];
	const uint64_t gen_mask = (1ull << SEG_OPEN_GEN_BITS) - 1;
	/* One unit of slack below the grid: workers' clocks straddle seconds. */
	const int64_t base = t->tb == TTL_NEVER ? t->base : t->base - ((int64_t)1 << t->unit);

	for (;;) {
		uint64_t cur = atomic_load_explicit(&c->shared_open, memory_order_acquire);
		unsigned lost = 0;
		int32_t seg;

		if (cur) {
			int rc = try_reserve(w, ref, seg_open_seg(cur),
					     cur >> (64 - SEG_OPEN_GEN_BITS), gen_mask, t, span,
					     true, &lost, out);

			if (lost && ref->contention < UINT8_MAX)
				ref->contention++;
			if (rc == RESERVED) {
				if (ref->contention >= SEG_OWN_AFTER_CONTENTION && e->own_open_ok)
					ref->own = true;
				return ENGINE_OK;
			}
		}
		if (borrow_shared(w, ref, t, span, out))
			return ENGINE_OK;
		/* One opener per shared segment: at a rollover every sharer
		 * finds it full at once, and each taking a segment (evicting
		 * for it) to give all but one back did the work N times. */
		if (atomic_exchange_explicit(&c->opening, true, memory_order_acquire)) {
			unsigned spins = 0;

			W_COUNT(w, rmw_open_shared);
			while (atomic_load_explicit(&c->opening, memory_order_acquire) &&
			       atomic_load_explicit(&c->shared_open, memory_order_acquire) == cur)
				seg_relax(&spins);
			continue;
		}
		W_COUNT(w, rmw_open_shared);
		seg = take_segment(w, t, now);
		if (seg == SEG_NONE) {
			atomic_store_explicit(&c->opening, false, memory_order_release);
			return ENGINE_NO_MEMORY;
		}
		seg_spin_lock(&c->open_lock);
		W_COUNT(w, lock_segment);
		if (atomic_load_explicit(&c->shared_open, memory_order_relaxed) != cur) {
			/* Another worker opened one meanwhile (it took the
			 * segment before this one asked): use it. */
			seg_spin_unlock(&c->open_lock);
			atomic_store_explicit(&c->opening, false, memory_order_release);
			seg_pool_push(e, seg);
			continue;
		}
		seg_init_open(e, seg, t->tb, base, t->unit, now);
		SEG_TEST_POINT(SEG_TP_OPENING);
		seg_chain_append(e, w, seg);
		atomic_store(&e->hdr[seg].state, SEG_OPEN);
		atomic_store_explicit(&c->shared_open,
				      seg_open_pack(seg, atomic_load(&e->hdr[seg].gen)),
				      memory_order_release);
		seg_spin_unlock(&c->open_lock);
		atomic_store_explicit(&c->opening, false, memory_order_release);
		ring_add(w, seg_open_pack(seg, atomic_load(&e->hdr[seg].gen)));
	}
}

/* ---- items larger than a segment -------------------------------------
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

static int
reserve_large(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
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
		seg[i] = take_segment(w, t, now);
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

static void
large_abandon(struct seg_worker *w, const struct seg_wloc *wl)
{
	/* under the mark: still the life reserved */
	const uint64_t gen = atomic_load(&w->e->hdr[wl->seg].gen);

	seg_chunk_unmark(w);
	seg_large_drop(w, wl->seg, gen);
}

/* Reserves span bytes for an item of t: in the segment the workers share
 * for its TTL bucket or, for a bucket this worker keeps busy on a heap
 * with segments to spare, in one of its own, from the worker's chunk there
 * (seg_chunk.c). Returns with the worker's append mark on the segment: the
 * caller links the item (or abandons it) and then calls seg_append_done(). */
__attribute__((hot)) int
seg_reserve(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
	    struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	const uint32_t span = item_span(size, e->off_shift);

	if (SEG_UNLIKELY(size > e->seg_size))
		return reserve_large(w, t, now, size, out);
	/* before anything is marked: taking a slot over may give a chunk back */
	struct seg_open_ref *ref = seg_ref_of(w, t->tb);

	if (!w->own_always && (!ref->own || !e->own_open_ok))
		return reserve_shared(w, ref, t, now, span, out);
	return reserve_own(w, ref, t, now, span, out);
}

__attribute__((hot)) void
seg_append_done(struct seg_worker *w, const struct seg_wloc *wl)
{
	(void)wl;
	seg_chunk_unmark(w);
}

/* An append that was not linked (a failed condition, a lost race of a
 * read-modify-write): its bytes go back to the worker's chunk (still
 * marked, so no walker has seen them), which the next append reuses, so
 * retries under contention do not fill segments with dead copies; the
 * filler is rewritten over them. When that would leave a gap too small
 * for a filler, the item stays, dead: no slot points there. */
void
seg_append_abandon(struct seg_worker *w, const struct seg_wloc *wl)
{
	struct seg_open_ref *ref = wl->ref;

	if (wl->large) {
		large_abandon(w, wl);
		return;
	}
	if (ref->chunk_life == seg_open_pack(wl->seg, atomic_load(&w->e->hdr[wl->seg].gen)) &&
	    ref->chunk_pos == wl->off + wl->span) {
		const uint32_t rest = ref->chunk_end - wl->off;

		if (rest >= SEG_FILLER_MIN || ref->chunk_end == w->e->seg_size) {
			ref->chunk_pos = wl->off;
			seg_chunk_fill(w->e, wl->seg, wl->off, ref->chunk_end);
		}
	}
	seg_append_done(w, wl);
}

/* Writes header and key; returns where the value goes. */
__attribute__((hot)) uint8_t *
seg_write_head(const struct seg_wloc *wl, const struct seg_key *k, uint32_t vlen,
	       uint32_t flags)
{
	uint32_t n = item_write_hdr(wl->p, k->klen, vlen, flags, wl->delta);

	memcpy(wl->p + n, k->key, k->klen);
	return wl->p + n + k->klen;
}

/* Reserves one overflow bucket for w: from the hash table's free list or
 * the segment it carves buckets from, else carving a fresh segment (which
 * may evict: so it is taken here, above seg_evict.c, never while
 * seg_hash.c holds ovf_lock). 0 if none. */
static uint64_t
reserve_bucket(struct seg_engine *e, struct seg_worker *w)
{
	int32_t fresh = SEG_NONE;
	uint64_t link;

	while (!(link = seg_hash_take_bucket(e, w, &fresh))) {
		fresh = seg_acquire(e, w);
		if (fresh == SEG_NONE)
			return 0;
	}
	if (fresh != SEG_NONE) /* another thread carved a segment first */
		seg_pool_push(e, fresh);
	memset(seg_hash_link_target(e, link), 0, sizeof(struct seg_bucket));
	return link;
}

/* Splits a few chains while the table is over its load (seg_hash_grow.c),
 * with overflow buckets reserved here, where taking one may evict: so
 * growth is amortized over the inserts that meet a full chain. */
#define SPLITS_PER_GROW 4
#define SPLIT_RESERVE_MAX 64

static void
grow_table(struct seg_engine *e, struct seg_worker *w)
{
	uint64_t links[SPLIT_RESERVE_MAX];
	unsigned n = 0, tries = 0;

	for (unsigned done = 0; done < SPLITS_PER_GROW && tries < 2 * SPLITS_PER_GROW &&
				seg_hash_wants_growth(e); tries++) {
		unsigned want = seg_hash_split_estimate(e), used;
		int rc;

		for (want = want > SPLIT_RESERVE_MAX ? SPLIT_RESERVE_MAX : want; n < want; n++)
			if (!(links[n] = reserve_bucket(e, w)))
				break;
		rc = seg_hash_split(e, links, n, &used);
		if (rc == 0)
			break;
		if (rc < 0) {
			/* The chain needs more than estimated: reserve that
			 * many next time round, if they can be had. */
			if (used > SPLIT_RESERVE_MAX || used <= n)
				break;
			while (n < used && (links[n] = reserve_bucket(e, w)))
				n++;
			continue;
		}
		memmove(links, links + used, (n - used) * sizeof(links[0]));
		n -= used;
		done++;
	}
	while (n > 0)
		seg_hash_unreserve_bucket(e, links[--n]);
}

/* Makes sure a chain can grow by one bucket (and grows the table when
 * chains are long). */
int
seg_refill_spare(struct seg_worker *w)
{
	if (seg_hash_wants_growth(w->e))
		grow_table(w->e, w);
	if (!w->spare_bucket)
		w->spare_bucket = reserve_bucket(w->e, w);
	return w->spare_bucket ? ENGINE_OK : ENGINE_NO_MEMORY;
}
