/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The operations, with memcached semantics.
 *
 * Reads take no lock: they find the slot, note the segment's gen, read the
 * item and check the gen again (a seqlock on segment reuse). After a few
 * failed tries a read takes the bucket lock, under which a linked item's
 * segment cannot be freed.
 *
 * Writes append the new item to the worker's own open segment of its TTL
 * bucket (no lock), then link it under the head bucket's lock. Conditional
 * writes (add, replace, cas) decide under that lock. Read-modify-writes
 * (append, prepend, incr, decr, touch) read lock-free, build the new item,
 * and link it only if the slot still holds the item they read (same
 * location, same segment gen), else retry: atomic against any writer.
 *
 * cas uniques are derived from an item's location: (segment gen << 20 |
 * offset). Every write creates a new item at a new location, and gens are
 * never reused, so a stale cas can never match. The item moves (and its
 * cas changes) only when touched or merged by eviction: the only false
 * EXISTS there is. See docs/architecture.md.
 */
#include <rte_common.h>
#include <rte_prefetch.h>

#include "seg/seg_private.h"
#include "seg/seg_item.h"

enum { FOUND, NOT_FOUND, RETRY };
#define LOCKLESS_TRIES 3

struct seg_read {
	_Atomic uint64_t *slot;
	uint64_t v;
	uint64_t gen;
	const uint8_t *item;
	struct item_view iv;
	int64_t expires_at;
	bool copied; /* the value is in the read's destination */
};

/* Where a read copies the value: the caller's one buffer (get), or the
 * buffer a batch sink gives once the item's size is known (get_batch);
 * neither: meta data only. */
struct read_dst {
	void *buf;
	size_t cap;
	const struct engine_get_sink *sink;
	unsigned idx;
};

static const struct read_dst no_dst;

struct ttl_place {
	unsigned tb;
	uint8_t unit;
	int64_t lo;
	int64_t base; /* exp_base of a segment opened now for this bucket */
	int64_t exp;  /* expiry to store (capped for very long TTLs) */
};

struct seg_wloc {
	int32_t seg;
	uint32_t off; /* bytes */
	uint32_t span;
	uint8_t *p;
	uint32_t delta;
};

static inline uint64_t loc_of(uint64_t v) { return v & SLOT_LOC_MASK; }

static inline uint64_t
cas_of(const struct seg_engine *e, uint64_t gen, uint64_t v)
{
	return e->cas_enabled ? gen << 20 | slot_off(v) : 0;
}

static inline const uint8_t *
item_at(const struct seg_engine *e, uint64_t v)
{
	return seg_data(e, slot_seg(v)) + ((size_t)slot_off(v) << e->off_shift);
}

/* ---- reading ------------------------------------------------------------ */

static void
fill_item(const struct seg_engine *e, const struct seg_read *r, struct engine_item *it)
{
	it->flags = r->iv.flags;
	it->vlen = r->iv.vlen;
	it->cas = cas_of(e, r->gen, r->v);
	it->expires_at = r->expires_at;
	it->fetched_before = slot_freq(r->v) > 0;
}

/* Where r's value goes, or NULL when it is not wanted or does not fit. */
static void *
dst_for(const struct seg_engine *e, const struct read_dst *d, const struct seg_read *r)
{
	struct engine_item it;

	if (d->sink == NULL)
		return d->buf != NULL && r->iv.vlen <= d->cap ? d->buf : NULL;
	fill_item(e, r, &it);
	return d->sink->value_buf(d->sink->arg, d->idx, &it);
}

static int
read_slot(struct seg_engine *e, const struct seg_key *k, _Atomic uint64_t *slot,
	  uint64_t v, bool locked, struct seg_read *r)
{
	const struct seg_hdr *h = &e->hdr[slot_seg(v)];
	uint32_t off = slot_off(v) << e->off_shift;
	const uint8_t *p = seg_data(e, slot_seg(v)) + off;
	uint64_t gen = atomic_load_explicit(&h->gen, memory_order_acquire);

	/* Still the same item (a reader may have bumped its freq)? */
	if (!locked && (atomic_load_explicit(slot, memory_order_acquire) & SLOT_NO_FREQ) !=
			       (v & SLOT_NO_FREQ))
		return RETRY;
	if (!item_parse(p, e->seg_size - off, &r->iv) || r->iv.klen != k->klen ||
	    memcmp(p + r->iv.hdr_len, k->key, k->klen) != 0) {
		atomic_thread_fence(memory_order_acquire);
		return atomic_load_explicit(&h->gen, memory_order_relaxed) == gen ? NOT_FOUND
										 : RETRY;
	}
	r->slot = slot;
	r->v = v;
	r->gen = gen;
	r->item = p;
	r->expires_at = seg_item_expiry(h, r->iv.exp_delta);
	return FOUND;
}

static int
lookup(struct seg_engine *e, const struct seg_key *k, bool locked, struct seg_read *r)
{
	struct seg_chain_iter it;
	_Atomic uint64_t *slot;
	uint64_t v;

	seg_iter_init(&it, k->head);
	while ((slot = seg_iter_next(e, &it, &v))) {
		int res;

		if (!v || slot_tag(v) != k->tag)
			continue;
		res = read_slot(e, k, slot, v, locked, r);
		if (res != NOT_FOUND)
			return res;
	}
	return NOT_FOUND;
}

/* Was everything read from r's item consistent? */
static inline bool
read_valid(const struct seg_engine *e, const struct seg_read *r)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->hdr[slot_seg(r->v)].gen, memory_order_relaxed) == r->gen;
}

static void
bump_freq(struct seg_worker *w, const struct seg_read *r)
{
	unsigned f = slot_freq(r->v);
	uint64_t expected = r->v;

	if (f >= SLOT_FREQ_MASK)
		return;
	/* Saturating, increasingly unlikely increments (an approximate
	 * logarithmic counter), so hot keys stop writing their cache line. */
	if (f >= 16 && (((seg_xorshift(&w->rng) >> 32) * f) >> 32) != 0)
		return;
	atomic_compare_exchange_strong_explicit(r->slot, &expected,
						r->v + (1ull << SLOT_FREQ_SHIFT),
						memory_order_relaxed, memory_order_relaxed);
}

/* Drops an expired item found by a reader, if it is still linked. */
static void
unlink_expired(struct seg_worker *w, const struct seg_key *k, const struct seg_read *r)
{
	struct seg_engine *e = w->e;

	SEG_TEST_POINT(SEG_TP_UNLINK_EXPIRED);
	W_COUNT(w, lock_bucket);
	/* Only that very item: its segment may have been freed and reused
	 * since, with a new item at the same place. */
	if (seg_hash_unlink_loc(e, k, slot_seg(r->v), slot_off(r->v), r->gen))
		atomic_fetch_add_explicit(&e->n_expired, 1, memory_order_relaxed);
}

/* A consistent snapshot of the live item for k, with its value copied to
 * dst when it is wanted there (r->copied). Returns FOUND or NOT_FOUND
 * (missing or expired; *expired tells which). */
static int
read_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
	  const struct read_dst *dst, struct seg_read *r, bool *expired)
{
	struct seg_engine *e = w->e;

	*expired = false;
	for (unsigned attempt = 0;; attempt++) {
		const bool locked = attempt >= LOCKLESS_TRIES;
		uint64_t moves;
		int res;

		if (locked) {
			seg_bucket_lock(k->head);
			W_COUNT(w, lock_bucket);
		}
		moves = seg_hash_moves(k->head);
		res = lookup(e, k, locked, r);
		if (res == FOUND && seg_expired(r->expires_at, now)) {
			if (locked)
				seg_bucket_unlock(k->head);
			if (!locked && !read_valid(e, r))
				continue;
			*expired = true;
			unlink_expired(w, k, r);
			return NOT_FOUND;
		}
		if (res == FOUND) {
			void *buf = dst_for(e, dst, r);

			r->copied = buf != NULL;
			if (buf != NULL)
				memcpy(buf, r->item + r->iv.hdr_len + r->iv.klen, r->iv.vlen);
		}
		if (locked) {
			seg_bucket_unlock(k->head);
			return res;
		}
		if (res == FOUND && read_valid(e, r))
			return res;
		/* Not found while an item of the chain moved: look again. */
		if (res == NOT_FOUND && !seg_hash_moved_since(k->head, moves))
			return res;
		W_COUNT(w, read_retries);
	}
}

/* ---- writing ------------------------------------------------------------ */

/* Chooses the TTL bucket of an item expiring at expires_at (0 = never). */
static void
ttl_place(int64_t expires_at, int64_t now, struct ttl_place *t)
{
	int64_t ttl, idx, cap;
	unsigned range, width_shift;

	if (expires_at == 0) {
		*t = (struct ttl_place){ .tb = TTL_NEVER, .base = EXP_NEVER };
		return;
	}
	ttl = expires_at - now;
	range = ttl < 2048 ? 0 : ttl < 32768 ? 1 : ttl < 524288 ? 2 : 3;
	width_shift = 3 + 4 * range;
	idx = ttl >> width_shift;
	if (idx > 255)
		idx = 255;
	t->tb = range * 256 + (unsigned)idx;
	t->lo = idx << width_shift;
	t->unit = (uint8_t)(4 * range);
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

/* Tries to take span bytes of open segment seg for an item of t, if the
 * segment is still in the life `gen` (compared under gen_mask). Returns
 * with the segment's writers count held on success. A full segment, or
 * one whose expiry window the item is past, is sealed. A shared segment
 * (other workers append too) gives bytes by compare-and-swap, so a failed
 * claim never has to be undone while others claim; *lost counts the
 * races lost. */
enum { RESERVED, NO_ROOM };

static int
try_reserve(struct seg_worker *w, int32_t seg, uint64_t gen, uint64_t gen_mask,
	    const struct ttl_place *t, uint32_t span, bool shared, unsigned *lost,
	    struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	struct seg_hdr *h = &e->hdr[seg];
	/* Another bucket's segment: the item must fit its expiry grid (no
	 * coarser than its own bucket's, delta in range); one that does not
	 * fit is left open for its own items. */
	const bool foreign = h->ttl_bucket != t->tb;

	atomic_fetch_add(&h->writers, 1);
	SEG_TEST_POINT(SEG_TP_RESERVE_HELD);
	if ((atomic_load(&h->gen) & gen_mask) == gen && atomic_load(&h->state) == SEG_OPEN) {
		int64_t dd = t->tb == TTL_NEVER ? 0 : (t->exp - h->exp_base) >> h->unit_shift;
		bool ok = false;
		uint32_t o = 0;

		if (foreign && (h->exp_base == EXP_NEVER || t->tb == TTL_NEVER ||
				h->unit_shift > t->unit || dd < 0 || dd > EXP_DELTA_MAX)) {
			atomic_fetch_sub(&h->writers, 1);
			return NO_ROOM;
		}

		if (dd >= 0 && dd <= EXP_DELTA_MAX) {
			if (!shared) {
				o = atomic_fetch_add(&h->write_off, span);
				ok = !(o & SEG_WOFF_SEALED) && o + span <= e->seg_size;
				if (!ok)
					atomic_fetch_sub(&h->write_off, span);
			} else {
				o = atomic_load(&h->write_off);
				while (!(o & SEG_WOFF_SEALED) && o + span <= e->seg_size) {
					if (atomic_compare_exchange_weak(&h->write_off, &o,
									 o + span)) {
						ok = true;
						break;
					}
					++*lost;
				}
			}
		}
		if (ok) {
			if (t->exp > atomic_load_explicit(&h->exp_max, memory_order_relaxed))
				atomic_store(&h->exp_max, t->exp);
			out->seg = seg;
			out->off = o;
			out->span = span;
			out->p = seg_data(e, seg) + o;
			out->delta = (uint32_t)dd;
			return RESERVED;
		}
		/* Full, or the expiry is outside its window: seal it. */
		uint8_t open = SEG_OPEN;

		atomic_fetch_or(&h->write_off, SEG_WOFF_SEALED);
		atomic_compare_exchange_strong(&h->state, &open, SEG_SEALED);
	}
	atomic_fetch_sub(&h->writers, 1);
	return NO_ROOM;
}

/* Opens a segment for t's bucket and links it into the chain; SEG_NONE
 * when no memory could be had. */
static int32_t
open_segment(struct seg_worker *w, const struct ttl_place *t, int64_t exp_base, int64_t now)
{
	struct seg_engine *e = w->e;
	int32_t seg = seg_acquire(e, w);

	if (seg == SEG_NONE)
		return SEG_NONE;
	seg_init_open(e, seg, t->tb, exp_base, t->unit, now);
	SEG_TEST_POINT(SEG_TP_OPENING);
	seg_chain_append(e, w, seg);
	/* Claimable (and unlinkable) only once linked. */
	atomic_store(&e->hdr[seg].state, SEG_OPEN);
	return seg;
}

/* Reserves span bytes in the worker's own open segment for t's bucket,
 * opening a new one when it is full or the expiry does not fit its window. */
static int
reserve_own(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t span,
	    struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	struct seg_open_ref *ref = &w->open[t->tb];
	unsigned lost = 0;

	for (;;) {
		if (ref->seg != SEG_NONE) {
			if (try_reserve(w, ref->seg, ref->gen, UINT64_MAX, t, span, false, &lost,
					out) == RESERVED)
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
borrow_shared(struct seg_worker *w, const struct ttl_place *t, uint32_t span,
	      struct seg_wloc *out)
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
		    try_reserve(w, seg_open_seg(p), p >> (64 - SEG_OPEN_GEN_BITS), gen_mask, t,
				span, true, &lost, out) == RESERVED)
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
		if (try_reserve(w, seg_open_seg(best), best >> (64 - SEG_OPEN_GEN_BITS), gen_mask,
				&cut, span, true, &lost, out) == RESERVED)
			return true;
	}
	return false;
}

/* Reserves span bytes in the open segment that the workers share for t's
 * bucket, opening it (one worker does, the others use it) when there is
 * none or it is full (a shared segment's exp_base sits one unit below
 * the grid, so that workers whose clocks straddle a second fit). */
static int
reserve_shared(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t span,
	       struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	struct seg_chain *c = &e->chain[t->tb];
	struct seg_open_ref *ref = &w->open[t->tb];
	const uint64_t gen_mask = (1ull << SEG_OPEN_GEN_BITS) - 1;
	/* One unit of slack below the grid: workers' clocks straddle seconds. */
	const int64_t base = t->tb == TTL_NEVER ? t->base : t->base - ((int64_t)1 << t->unit);

	for (;;) {
		uint64_t cur = atomic_load_explicit(&c->shared_open, memory_order_acquire);
		unsigned lost = 0;
		int32_t seg;

		if (cur) {
			int rc = try_reserve(w, seg_open_seg(cur), cur >> (64 - SEG_OPEN_GEN_BITS),
					     gen_mask, t, span, true, &lost, out);

			if (lost && ref->contention < UINT16_MAX)
				ref->contention++;
			if (rc == RESERVED) {
				if (ref->contention >= SEG_OWN_AFTER_CONTENTION && e->own_open_ok)
					ref->own = true;
				return ENGINE_OK;
			}
		}
		if (borrow_shared(w, t, span, out))
			return ENGINE_OK;
		seg = seg_acquire(e, w);
		if (seg == SEG_NONE)
			return ENGINE_NO_MEMORY;
		seg_spin_lock(&c->open_lock);
		W_COUNT(w, lock_segment);
		if (atomic_load_explicit(&c->shared_open, memory_order_relaxed) != cur) {
			/* Another worker opened one meanwhile: use it. */
			seg_spin_unlock(&c->open_lock);
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
		ring_add(w, seg_open_pack(seg, atomic_load(&e->hdr[seg].gen)));
	}
}

/* Reserves span bytes for an item of t: in the segment the workers share
 * for its TTL bucket or, for a bucket this worker keeps busy on a heap
 * with segments to spare, in one of its own. Returns with the segment's
 * writers count held: the caller links the item (or abandons it) and then
 * calls append_done(). */
static int
reserve(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
	struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	const uint32_t align = (1u << e->off_shift) - 1;
	const uint32_t span = (size + align) & ~align;

	if (!w->own_always && (!w->open[t->tb].own || !e->own_open_ok))
		return reserve_shared(w, t, now, span, out);
	return reserve_own(w, t, now, span, out);
}

static inline void
append_done(struct seg_engine *e, const struct seg_wloc *wl)
{
	atomic_fetch_sub_explicit(&e->hdr[wl->seg].writers, 1, memory_order_release);
}

/* An append that was not linked (a failed condition, a lost race of a
 * read-modify-write): gives its bytes back when they are still the last
 * ones of the segment, so retries under contention do not fill segments
 * with dead copies. Appenders to a segment claim bytes in order (its owner
 * alone by fetch-and-add, sharers by compare-and-swap), so write_off still
 * at our end means nobody claimed bytes after ours. Walkers read a segment
 * only once it is closed (which sets the sealed bit, so then the exchange
 * fails and the bytes stay, dead); no slot points there. */
static inline void
append_abandon(struct seg_engine *e, const struct seg_wloc *wl)
{
	uint32_t end = wl->off + wl->span;

	atomic_compare_exchange_strong(&e->hdr[wl->seg].write_off, &end, wl->off);
	append_done(e, wl);
}

/* Writes header and key; returns where the value goes. */
static uint8_t *
write_head(const struct seg_wloc *wl, const struct seg_key *k, uint32_t vlen,
	   uint32_t flags)
{
	uint32_t n = item_write_hdr(wl->p, k->klen, vlen, flags, wl->delta);

	memcpy(wl->p + n, k->key, k->klen);
	return wl->p + n + k->klen;
}

enum link_mode {
	LINK_SET,
	LINK_ADD,     /* only if no live item */
	LINK_REPLACE, /* only if a live item */
	LINK_CAS,     /* only if a live item with cas_in */
	LINK_SAME,    /* only if the slot still holds the item read (loc + gen) */
};
#define LINK_NEED_BUCKET (-1)
#define LINK_RETRY (-2)

struct link_expect {
	uint64_t loc;
	uint64_t gen;
};

static inline uint64_t
slot_cas_locked(const struct seg_engine *e, uint64_t v)
{
	return cas_of(e, atomic_load_explicit(&e->hdr[slot_seg(v)].gen, memory_order_relaxed), v);
}

static int64_t
slot_expiry_locked(const struct seg_engine *e, uint64_t v)
{
	struct item_view iv;
	uint32_t off = slot_off(v) << e->off_shift;

	if (!item_parse(item_at(e, v), e->seg_size - off, &iv))
		return -1;
	return seg_item_expiry(&e->hdr[slot_seg(v)], iv.exp_delta);
}

/* Links the item at wl (or, with wl NULL, removes the key's item) under
 * the bucket lock, if the mode's condition holds. */
static int
link_item(struct seg_worker *w, const struct seg_key *k, const struct seg_wloc *wl,
	  enum link_mode mode, const struct link_expect *expect, uint64_t cas_in,
	  int64_t now, uint64_t *cas_out)
{
	struct seg_engine *e = w->e;
	_Atomic uint64_t *slot;
	uint64_t old = 0, v;
	bool live = false;
	int rc = ENGINE_OK;

	seg_bucket_lock(k->head);
	W_COUNT(w, lock_bucket);
	slot = seg_hash_find_locked(e, k);
	if (slot) {
		old = atomic_load_explicit(slot, memory_order_relaxed);
		live = !seg_expired(slot_expiry_locked(e, old), now);
	}
	switch (mode) {
	case LINK_ADD:
		if (live)
			rc = ENGINE_NOT_STORED;
		break;
	case LINK_REPLACE:
		if (!live)
			rc = ENGINE_NOT_STORED;
		break;
	case LINK_CAS:
		if (!live)
			rc = ENGINE_MISS;
		else if (slot_cas_locked(e, old) != cas_in)
			rc = ENGINE_EXISTS;
		break;
	case LINK_SAME:
		if (!slot || loc_of(old) != expect->loc ||
		    atomic_load(&e->hdr[slot_seg(old)].gen) != expect->gen)
			rc = LINK_RETRY;
		break;
	case LINK_SET:
		break;
	}
	if (rc == ENGINE_OK && cas_in && mode != LINK_CAS) {
		if (!live)
			rc = ENGINE_MISS;
		else if (slot_cas_locked(e, old) != cas_in)
			rc = ENGINE_EXISTS;
	}
	if (rc != ENGINE_OK)
		goto out;

	if (!wl) { /* removal */
		if (slot) {
			seg_hash_remove_locked(e, k->head, slot);
			seg_account_remove(e, old);
		}
		goto out;
	}
	v = slot_make(k->tag, 0, (uint32_t)wl->seg, wl->off >> e->off_shift);
	if (!slot) {
		slot = seg_hash_empty_slot_locked(e, k, &w->spare_bucket);
		if (!slot) {
			rc = LINK_NEED_BUCKET;
			goto out;
		}
	} else {
		seg_account_remove(e, old);
		if (!live)
			atomic_fetch_add_explicit(&e->n_expired, 1, memory_order_relaxed);
	}
	atomic_store_explicit(slot, v, memory_order_release);
	seg_account_add(e, v, wl->span);
	if (cas_out)
		*cas_out = slot_cas_locked(e, v);
out:
	seg_bucket_unlock(k->head);
	return rc;
}

/* Makes sure a chain can grow by one bucket. */
static int
refill_spare(struct seg_worker *w)
{
	if (!w->spare_bucket)
		w->spare_bucket = seg_hash_reserve_bucket(w->e, w);
	return w->spare_bucket ? ENGINE_OK : ENGINE_NO_MEMORY;
}

/* ---- the engine operations ---------------------------------------------- */

static inline struct seg_worker *
seg_worker_of(struct engine_worker *w)
{
	return (struct seg_worker *)w;
}

static bool key_ok(size_t klen) { return klen > 0 && klen <= ENGINE_KEY_MAX; }

/* Every operation starts here: checks the key, hashes it, reads the clock
 * and runs a delayed flush_all that has come due. */
static bool
op_start(struct seg_worker *w, struct seg_key *k, const void *key, size_t klen,
	 int64_t *now)
{
	if (!key_ok(klen))
		return false;
	seg_key_init(w->e, k, key, klen);
	*now = seg_now(w->e);
	seg_flush_if_due(w->e, *now);
	return true;
}

static int seg_touch_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
			  int64_t exptime, void *buf, size_t cap, struct engine_item *it);

/* A plain get of k into dst, after op_start(): the status engine_get()
 * returns, with its counters. */
static enum engine_status
get_one(struct seg_worker *w, const struct seg_key *k, int64_t now, const struct read_dst *dst,
	struct engine_item *it)
{
	struct seg_read r;
	bool expired;

	if (read_item(w, k, now, dst, &r, &expired) != FOUND) {
		W_COUNT(w, cmd_get);
		W_COUNT(w, get_misses);
		if (expired)
			W_COUNT(w, get_expired);
		return ENGINE_MISS;
	}
	fill_item(w->e, &r, it);
	if (!r.copied)
		return ENGINE_BUF_SMALL;
	W_COUNT(w, cmd_get);
	W_COUNT(w, get_hits);
	bump_freq(w, &r);
	return ENGINE_OK;
}

enum engine_status
seg_op_get(struct engine_worker *ew, const void *key, size_t klen,
	   int64_t touch_exptime, void *buf, size_t cap, struct engine_item *it)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct read_dst dst = { 0 };
	struct seg_key k;
	int64_t now;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	if (touch_exptime != ENGINE_NO_TOUCH)
		return seg_touch_item(w, &k, now, touch_exptime, buf, cap, it);
	dst.buf = buf;
	dst.cap = cap;
	return get_one(w, &k, now, &dst, it);
}

/* set/add/replace/cas with a negative or past exptime: memcached stores
 * an item that is expired at once, which removes the key's live item. */
static int
store_expired(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
	      uint64_t cas_in, int64_t now)
{
	int rc = link_item(w, k, NULL, mode, NULL, cas_in, now, NULL);

	/* add on a missing key "stores" an item nobody can see. */
	return rc;
}

static int
store_plain(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
	    const void *val, uint32_t vlen, uint32_t flags, int64_t expires_at,
	    uint64_t cas_in, int64_t now, uint64_t *cas_out)
{
	struct seg_engine *e = w->e;
	struct ttl_place t;

	ttl_place(expires_at, now, &t);
	/* A new key in a full chain needs a bucket: get it before writing the
	 * item, rather than writing the item twice. */
	if (!seg_hash_has_room(e, k) && refill_spare(w) != ENGINE_OK)
		return ENGINE_NO_MEMORY;
	for (;;) {
		struct seg_wloc wl;
		int rc = reserve(w, &t, now, item_size(k->klen, vlen, flags), &wl);

		if (rc != ENGINE_OK)
			return rc;
		memcpy(write_head(&wl, k, vlen, flags), val, vlen);
		rc = link_item(w, k, &wl, mode, NULL, cas_in, now, cas_out);
		if (rc == ENGINE_OK)
			append_done(e, &wl);
		else
			append_abandon(e, &wl);
		if (rc != LINK_NEED_BUCKET)
			return rc;
		if (refill_spare(w) != ENGINE_OK)
			return ENGINE_NO_MEMORY;
	}
}

/* Quick lock-free check that spares a doomed write for add/replace/cas. */
static int
precheck(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
	 uint64_t cas_in, int64_t now)
{
	struct seg_read r;
	bool expired;
	bool live = read_item(w, k, now, &no_dst, &r, &expired) == FOUND;

	if (mode == LINK_ADD && live)
		return ENGINE_NOT_STORED;
	if (mode == LINK_REPLACE && !live)
		return ENGINE_NOT_STORED;
	if (mode == LINK_CAS && !live)
		return ENGINE_MISS;
	if (mode == LINK_CAS && cas_of(w->e, r.gen, r.v) != cas_in)
		return ENGINE_EXISTS;
	return ENGINE_OK;
}

/* append/prepend, incr/decr and touch: builds a new item from the one
 * read and links it only if that one is still current. */
struct rmw {
	enum { RMW_APPEND, RMW_PREPEND, RMW_ARITH, RMW_TOUCH } kind;
	const void *data; /* append/prepend: the bytes to add */
	uint32_t dlen;
	uint64_t cas_in;  /* append/prepend: only onto the item with this cas */
	bool incr;
	uint64_t delta;
	int64_t expires_at; /* touch */
	void *buf;          /* touch (gat): where the value goes */
	size_t cap;
	uint64_t number;    /* arith result */
};

static int
rmw_item(struct seg_worker *w, const struct seg_key *k, struct rmw *op, int64_t now,
	 struct engine_item *it)
{
	struct seg_engine *e = w->e;

	for (;;) {
		struct seg_read r;
		struct seg_wloc wl;
		struct ttl_place t;
		char digits[24];
		const uint8_t *old_val;
		uint32_t vlen;
		uint8_t *dst;
		bool expired;
		int rc;

		/* The new item takes the old one's slot: no spare bucket needed. */
		if (read_item(w, k, now, &no_dst, &r, &expired) != FOUND)
			return ENGINE_MISS;
		SEG_TEST_POINT(SEG_TP_RMW_READ);
		old_val = r.item + r.iv.hdr_len + r.iv.klen;
		vlen = r.iv.vlen;
		if (op->cas_in && cas_of(e, r.gen, r.v) != op->cas_in) {
			if (!read_valid(e, &r))
				continue;
			return ENGINE_EXISTS;
		}
		switch (op->kind) {
		case RMW_APPEND:
		case RMW_PREPEND:
			vlen += op->dlen;
			if (item_size(k->klen, vlen, r.iv.flags) > e->item_max) {
				/* A length read from a segment being reused is
				 * garbage: read again. */
				if (!read_valid(e, &r))
					continue;
				return ENGINE_TOO_LARGE;
			}
			ttl_place(r.expires_at, now, &t);
			break;
		case RMW_ARITH: {
			uint64_t n;
			bool numeric = r.iv.vlen <= 20 + 4 &&
				       engine_parse_u64(old_val, r.iv.vlen, &n);

			if (!read_valid(e, &r))
				continue;
			if (!numeric)
				return ENGINE_NON_NUMERIC;
			if (op->incr)
				n += op->delta; /* wraps at 2^64 like memcached */
			else
				n = n > op->delta ? n - op->delta : 0;
			op->number = n;
			vlen = (uint32_t)engine_format_u64(n, digits);
			ttl_place(r.expires_at, now, &t);
			break;
		}
		case RMW_TOUCH:
			if (op->expires_at < 0) {
				/* Touched into the past: gone, like memcached. */
				if (op->buf && r.iv.vlen <= op->cap)
					memcpy(op->buf, old_val, r.iv.vlen);
				if (!read_valid(e, &r))
					continue;
				struct link_expect x = { loc_of(r.v), r.gen };

				rc = link_item(w, k, NULL, LINK_SAME, &x, 0, now, NULL);
				if (rc == LINK_RETRY)
					continue;
				fill_item(e, &r, it);
				it->expires_at = -1;
				return ENGINE_OK;
			}
			ttl_place(op->expires_at, now, &t);
			break;
		}
		rc = reserve(w, &t, now, item_size(k->klen, vlen, r.iv.flags), &wl);
		if (rc != ENGINE_OK)
			return rc;
		dst = write_head(&wl, k, vlen, r.iv.flags);
		/* The old value is copied optimistically and checked after
		 * (read_valid): if its segment was reclaimed and reopened
		 * meanwhile, the place just reserved can overlap it. The copy is
		 * dropped then, but a memcpy over overlapping ranges is undefined
		 * (ASan's torture run found it): memmove. */
		switch (op->kind) {
		case RMW_APPEND:
			memmove(dst, old_val, r.iv.vlen);
			memcpy(dst + r.iv.vlen, op->data, op->dlen);
			break;
		case RMW_PREPEND:
			memcpy(dst, op->data, op->dlen);
			memmove(dst + op->dlen, old_val, r.iv.vlen);
			break;
		case RMW_ARITH:
			memcpy(dst, digits, vlen);
			break;
		case RMW_TOUCH:
			memmove(dst, old_val, vlen);
			break;
		}
		if (!read_valid(e, &r)) {
			append_abandon(e, &wl); /* the copy may be torn: drop it */
			W_COUNT(w, read_retries);
			continue;
		}
		struct link_expect x = { loc_of(r.v), r.gen };

		rc = link_item(w, k, &wl, LINK_SAME, &x, op->cas_in, now, &it->cas);
		if (rc == ENGINE_OK) {
			if (op->kind == RMW_TOUCH && op->buf && vlen <= op->cap)
				memcpy(op->buf, dst, vlen);
			it->flags = r.iv.flags;
			it->vlen = vlen;
			it->expires_at = seg_item_expiry(&e->hdr[wl.seg], wl.delta);
			it->fetched_before = slot_freq(r.v) > 0;
			append_done(e, &wl);
			return ENGINE_OK;
		}
		append_abandon(e, &wl);
		if (rc != LINK_RETRY)
			return rc;
	}
}

enum engine_status
seg_op_store(struct engine_worker *ew, enum engine_store_mode mode,
	     const void *key, size_t klen, const void *val, size_t vlen,
	     uint32_t flags, int64_t exptime, uint64_t cas_in, uint64_t *cas_out)
{
	static const enum link_mode link_of[] = {
		[ENGINE_SET] = LINK_SET, [ENGINE_ADD] = LINK_ADD,
		[ENGINE_REPLACE] = LINK_REPLACE, [ENGINE_CAS] = LINK_CAS,
	};
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_engine *e = w->e;
	struct seg_key k;
	int64_t now, expires_at;
	int rc;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	W_COUNT(w, cmd_set);
	if (item_size((uint32_t)klen, vlen > ITEM_VLEN_MAX ? ITEM_VLEN_MAX : (uint32_t)vlen,
		      flags) > e->item_max ||
	    vlen > ITEM_VLEN_MAX) {
		W_COUNT(w, set_too_large);
		/* memcached drops the old value when a set is too large. */
		if (mode == ENGINE_SET)
			link_item(w, &k, NULL, LINK_SET, NULL, 0, now, NULL);
		return ENGINE_TOO_LARGE;
	}
	if (mode == ENGINE_APPEND || mode == ENGINE_PREPEND) {
		struct rmw op = { .kind = mode == ENGINE_APPEND ? RMW_APPEND : RMW_PREPEND,
				  .data = val, .dlen = (uint32_t)vlen, .cas_in = cas_in };
		struct engine_item it;

		rc = rmw_item(w, &k, &op, now, &it);
		if (rc == ENGINE_MISS)
			rc = ENGINE_NOT_STORED;
		else if (rc == ENGINE_OK && cas_out)
			*cas_out = it.cas;
	} else {
		enum link_mode lm = link_of[mode];

		expires_at = engine_expiry_from_exptime(exptime, now);
		rc = lm == LINK_SET && !cas_in ? ENGINE_OK : precheck(w, &k, lm, cas_in, now);
		if (rc == ENGINE_OK && expires_at < 0)
			rc = store_expired(w, &k, lm, cas_in, now);
		else if (rc == ENGINE_OK)
			rc = store_plain(w, &k, lm, val, (uint32_t)vlen, flags, expires_at, cas_in,
					 now, cas_out);
		if (mode == ENGINE_CAS) {
			if (rc == ENGINE_OK)
				W_COUNT(w, cas_hits);
			else if (rc == ENGINE_MISS)
				W_COUNT(w, cas_misses);
			else if (rc == ENGINE_EXISTS)
				W_COUNT(w, cas_badval);
		}
	}
	if (rc == ENGINE_OK) {
		W_COUNT(w, set_stored);
		W_COUNT(w, total_items);
	} else if (rc == ENGINE_NOT_STORED) {
		W_COUNT(w, set_not_stored);
	} else if (rc == ENGINE_NO_MEMORY) {
		W_COUNT(w, set_no_memory);
	}
	return rc;
}

enum engine_status
seg_op_delete(struct engine_worker *ew, const void *key, size_t klen,
	      uint64_t cas_in)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_key k;
	int64_t now;
	int rc;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	rc = link_item(w, &k, NULL, cas_in ? LINK_CAS : LINK_REPLACE, NULL, cas_in, now, NULL);
	if (rc == ENGINE_NOT_STORED)
		rc = ENGINE_MISS;
	if (rc == ENGINE_OK)
		W_COUNT(w, delete_hits);
	else
		W_COUNT(w, delete_misses);
	return rc;
}

enum engine_status
seg_op_arith(struct engine_worker *ew, const void *key, size_t klen, bool incr,
	     uint64_t delta, uint64_t *value_out, uint64_t *cas_out)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct rmw op = { .kind = RMW_ARITH, .incr = incr, .delta = delta };
	struct engine_item it;
	struct seg_key k;
	int64_t now;
	int rc;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	rc = rmw_item(w, &k, &op, now, &it);
	if (rc == ENGINE_OK) {
		if (value_out)
			*value_out = op.number;
		if (cas_out)
			*cas_out = it.cas;
	}
	if (rc == ENGINE_MISS)
		incr ? W_COUNT(w, incr_misses) : W_COUNT(w, decr_misses);
	else if (rc == ENGINE_OK)
		incr ? W_COUNT(w, incr_hits) : W_COUNT(w, decr_hits);
	return rc;
}

static int
seg_touch_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
	       int64_t exptime, void *buf, size_t cap, struct engine_item *it)
{
	struct rmw op = { .kind = RMW_TOUCH, .buf = buf, .cap = cap };
	struct engine_item tmp;
	int rc;

	op.expires_at = engine_expiry_from_exptime(exptime, now);
	rc = rmw_item(w, k, &op, now, it ? it : &tmp);
	W_COUNT(w, cmd_touch);
	if (rc == ENGINE_MISS) {
		W_COUNT(w, touch_misses);
		if (buf || it) {
			W_COUNT(w, cmd_get);
			W_COUNT(w, get_misses);
		}
		return rc;
	}
	if (rc != ENGINE_OK)
		return rc;
	W_COUNT(w, touch_hits);
	if (it && (!buf || it->vlen > cap))
		return ENGINE_BUF_SMALL;
	if (it) {
		W_COUNT(w, cmd_get);
		W_COUNT(w, get_hits);
	}
	return ENGINE_OK;
}

enum engine_status
seg_op_touch(struct engine_worker *ew, const void *key, size_t klen,
	     int64_t exptime)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_key k;
	int64_t now;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	return seg_touch_item(w, &k, now, exptime, NULL, 0, NULL);
}

/* ---- batched get -------------------------------------------------------- */

/* Prefetches what k's lookup loads after its head bucket: the overflow
 * bucket after it, and for each slot with k's tag the item (its first two
 * lines: header, key, the start of the value) and the segment header (gen,
 * exp_base). Loads the head bucket, which the caller prefetched earlier.
 * Only a hint: the lookup that follows validates everything it reads. */
static inline void
prefetch_items(const struct seg_engine *e, const struct seg_key *k)
{
	const struct seg_bucket *b = k->head;

	for (unsigned i = 1; i < BUCKET_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&b->slot[i], memory_order_relaxed);
		const uint8_t *p;

		if (i == BUCKET_SLOTS - 1 && slot_is_link(v)) {
			rte_prefetch0(seg_hash_link_target(e, v));
			continue;
		}
		if (v == 0 || slot_tag(v) != k->tag)
			continue;
		p = item_at(e, v);
		rte_prefetch0(p);
		rte_prefetch0(p + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(&e->hdr[slot_seg(v)]);
	}
}

/* The first two passes over a group of m keys: hash every key into k[]
 * and prefetch its head bucket; then find its tag in the bucket and
 * prefetch the items. By the time the group is read, the misses of all
 * its keys are under way or done. */
static void
prefetch_group(const struct seg_engine *e, const struct engine_key *kb, unsigned m,
	       struct seg_key *k)
{
	for (unsigned i = 0; i < m; i++) {
		if (!key_ok(kb[i].klen))
			continue;
		seg_key_init(e, &k[i], kb[i].key, kb[i].klen);
		rte_prefetch0(k[i].head);
	}
	for (unsigned i = 0; i < m; i++)
		if (key_ok(kb[i].klen))
			prefetch_items(e, &k[i]);
}

void
seg_op_prefetch(struct engine_worker *ew, const struct engine_key *keys, unsigned n)
{
	struct seg_key k[ENGINE_BATCH_GROUP];

	prefetch_group(seg_worker_of(ew)->e, keys, RTE_MIN(n, (unsigned)ENGINE_BATCH_GROUP), k);
}

/* Groups of keys: prefetch_group, then the gets themselves, each exactly
 * a single get's (get_one: lock-free read, copy, gen check after the
 * copy, retries, counters), in order. */
void
seg_op_get_batch(struct engine_worker *ew, const struct engine_key *keys, unsigned n,
		 const struct engine_get_sink *sink)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_engine *e = w->e;
	struct seg_key k[ENGINE_BATCH_GROUP];
	struct engine_item it = { 0 };

	for (unsigned base = 0; base < n; base += ENGINE_BATCH_GROUP) {
		const struct engine_key *kb = keys + base;
		unsigned m = RTE_MIN(n - base, (unsigned)ENGINE_BATCH_GROUP);
		int64_t now = seg_now(e);

		seg_flush_if_due(e, now);
		prefetch_group(e, kb, m, k);
		for (unsigned i = 0; i < m; i++) {
			struct read_dst dst = { .sink = sink, .idx = base + i };
			enum engine_status st = ENGINE_INVALID;

			if (key_ok(kb[i].klen))
				st = get_one(w, &k[i], now, &dst, &it);
			if (!sink->done(sink->arg, base + i, st, &it))
				return;
		}
	}
}
