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
#include "seg_internal.h"
#include "seg_item.h"

enum { FOUND, NOT_FOUND, RETRY };
#define LOCKLESS_TRIES 3

struct seg_read {
	_Atomic uint64_t *slot;
	uint64_t v;
	uint64_t gen;
	const uint8_t *item;
	struct item_view iv;
	int64_t expires_at;
};

struct ttl_place {
	unsigned tb;
	uint8_t unit;
	int64_t lo;
	int64_t exp; /* expiry to store (capped for very long TTLs) */
};

struct seg_wloc {
	int32_t seg;
	uint32_t off; /* bytes */
	uint32_t span;
	uint8_t *p;
	uint32_t delta;
};

static inline uint64_t loc_of(uint64_t v) { return v & SLOT_LOC_MASK; }

static inline uint64_t cas_of(const struct seg_engine *e, uint64_t gen, uint64_t v)
{
	return e->cas_enabled ? gen << 20 | slot_off(v) : 0;
}

static inline const uint8_t *item_at(const struct seg_engine *e, uint64_t v)
{
	return seg_data(e, slot_seg(v)) + ((size_t)slot_off(v) << e->off_shift);
}

/* ---- reading ------------------------------------------------------------ */

static int read_slot(struct seg_engine *e, const struct seg_key *k, _Atomic uint64_t *slot,
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

static int lookup(struct seg_engine *e, const struct seg_key *k, bool locked, struct seg_read *r)
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
static inline bool read_valid(const struct seg_engine *e, const struct seg_read *r)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->hdr[slot_seg(r->v)].gen, memory_order_relaxed) == r->gen;
}

static void bump_freq(struct seg_worker *w, const struct seg_read *r)
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
static void unlink_expired(struct seg_worker *w, const struct seg_key *k, uint64_t v)
{
	struct seg_engine *e = w->e;
	uint64_t old;

	W_COUNT(w, lock_bucket);
	old = seg_hash_unlink_loc(e, k, slot_seg(v), slot_off(v));
	if (old) {
		seg_account_remove(e, old);
		atomic_fetch_add_explicit(&e->n_expired, 1, memory_order_relaxed);
	}
}

/* A consistent snapshot of the live item for k, with its value copied to
 * buf when it fits (cap). Returns FOUND or NOT_FOUND (missing or expired;
 * *expired tells which). */
static int read_item(struct seg_worker *w, const struct seg_key *k, int64_t now, void *buf,
		     size_t cap, struct seg_read *r, bool *expired)
{
	struct seg_engine *e = w->e;

	*expired = false;
	for (unsigned attempt = 0;; attempt++) {
		const bool locked = attempt >= LOCKLESS_TRIES;
		int res;

		if (locked) {
			seg_bucket_lock(k->head);
			W_COUNT(w, lock_bucket);
		}
		res = lookup(e, k, locked, r);
		if (res == FOUND && seg_expired(r->expires_at, now)) {
			if (locked)
				seg_bucket_unlock(k->head);
			if (!locked && !read_valid(e, r))
				continue;
			*expired = true;
			unlink_expired(w, k, r->v);
			return NOT_FOUND;
		}
		if (res == FOUND && buf && r->iv.vlen <= cap)
			memcpy(buf, r->item + r->iv.hdr_len + r->iv.klen, r->iv.vlen);
		if (locked) {
			seg_bucket_unlock(k->head);
			return res;
		}
		if (res == NOT_FOUND || (res == FOUND && read_valid(e, r)))
			return res;
		W_COUNT(w, read_retries);
	}
}

/* ---- writing ------------------------------------------------------------ */

/* Chooses the TTL bucket of an item expiring at expires_at (0 = never). */
static void ttl_place(int64_t expires_at, int64_t now, struct ttl_place *t)
{
	int64_t ttl, idx, cap;
	unsigned range, width_shift;

	if (expires_at == 0) {
		*t = (struct ttl_place){ .tb = TTL_NEVER, .unit = 0, .lo = 0, .exp = 0 };
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
	/* TTLs beyond ~97 days are capped (items die early, never late). */
	cap = now + t->lo + ((int64_t)EXP_DELTA_MAX << t->unit);
	t->exp = expires_at > cap ? cap : expires_at;
}

/* Reserves span bytes in the worker's open segment for t's TTL bucket,
 * opening a new one when it is full or the expiry does not fit its window.
 * Returns with the segment's writers count held: the caller links the item
 * (or abandons it) and then calls append_done(). */
static int reserve(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
		   struct seg_wloc *out)
{
	struct seg_engine *e = w->e;
	const uint32_t align = (1u << e->off_shift) - 1;
	const uint32_t span = (size + align) & ~align;
	struct seg_open_ref *ref = &w->open[t->tb];

	for (;;) {
		if (ref->seg != SEG_NONE) {
			struct seg_hdr *h = &e->hdr[ref->seg];

			atomic_fetch_add(&h->writers, 1);
			if (atomic_load(&h->gen) == ref->gen && atomic_load(&h->state) == SEG_OPEN) {
				int64_t dd = t->tb == TTL_NEVER ? 0
							       : (t->exp - h->exp_base) >> h->unit_shift;

				if (dd >= 0 && dd <= EXP_DELTA_MAX) {
					uint32_t o = atomic_fetch_add(&h->write_off, span);

					if (!(o & SEG_WOFF_SEALED) && o + span <= e->seg_size) {
						if (t->exp > atomic_load_explicit(&h->exp_max,
										  memory_order_relaxed))
							atomic_store(&h->exp_max, t->exp);
						out->seg = ref->seg;
						out->off = o;
						out->span = span;
						out->p = seg_data(e, ref->seg) + o;
						out->delta = (uint32_t)dd;
						return ENGINE_OK;
					}
					atomic_fetch_sub(&h->write_off, span);
				}
				/* Full, or the expiry is outside its window: seal it. */
				uint8_t open = SEG_OPEN;

				atomic_fetch_or(&h->write_off, SEG_WOFF_SEALED);
				atomic_compare_exchange_strong(&h->state, &open, SEG_SEALED);
			}
			atomic_fetch_sub(&h->writers, 1);
			ref->seg = SEG_NONE;
		}
		int32_t seg = seg_acquire(e, w);

		if (seg == SEG_NONE)
			return ENGINE_NO_MEMORY;
		seg_init_open(e, seg, t->tb, t->tb == TTL_NEVER ? EXP_NEVER : now + t->lo, t->unit,
			      now);
		seg_chain_append(e, w, seg);
		ref->seg = seg;
		ref->gen = atomic_load(&e->hdr[seg].gen);
	}
}

static inline void append_done(struct seg_engine *e, const struct seg_wloc *wl)
{
	atomic_fetch_sub_explicit(&e->hdr[wl->seg].writers, 1, memory_order_release);
}

/* Writes header and key; returns where the value goes. */
static uint8_t *write_head(const struct seg_wloc *wl, const struct seg_key *k, uint32_t vlen,
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

static inline uint64_t slot_cas_locked(const struct seg_engine *e, uint64_t v)
{
	return cas_of(e, atomic_load_explicit(&e->hdr[slot_seg(v)].gen, memory_order_relaxed), v);
}

static int64_t slot_expiry_locked(const struct seg_engine *e, uint64_t v)
{
	struct item_view iv;
	uint32_t off = slot_off(v) << e->off_shift;

	if (!item_parse(item_at(e, v), e->seg_size - off, &iv))
		return -1;
	return seg_item_expiry(&e->hdr[slot_seg(v)], iv.exp_delta);
}

/* Links the item at wl (or, with wl NULL, removes the key's item) under
 * the bucket lock, if the mode's condition holds. */
static int link_item(struct seg_worker *w, const struct seg_key *k, const struct seg_wloc *wl,
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
			atomic_store_explicit(slot, 0, memory_order_release);
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
static int refill_spare(struct seg_worker *w)
{
	if (!w->spare_bucket)
		w->spare_bucket = seg_hash_reserve_bucket(w->e, w);
	return w->spare_bucket ? ENGINE_OK : ENGINE_NO_MEMORY;
}

/* ---- the engine operations ---------------------------------------------- */

static inline struct seg_worker *seg_worker_of(struct engine_worker *w)
{
	return (struct seg_worker *)w;
}

static bool key_ok(size_t klen) { return klen > 0 && klen <= ENGINE_KEY_MAX; }

/* Every operation starts here: checks the key, hashes it, reads the clock
 * and runs a delayed flush_all that has come due. */
static bool op_start(struct seg_worker *w, struct seg_key *k, const void *key, size_t klen,
		     int64_t *now)
{
	if (!key_ok(klen))
		return false;
	seg_key_init(w->e, k, key, klen);
	*now = seg_now(w->e);
	seg_flush_if_due(w->e, *now);
	return true;
}

static void fill_item(const struct seg_engine *e, const struct seg_read *r, struct engine_item *it)
{
	it->flags = r->iv.flags;
	it->vlen = r->iv.vlen;
	it->cas = cas_of(e, r->gen, r->v);
	it->expires_at = r->expires_at;
	it->fetched_before = slot_freq(r->v) > 0;
}

static int seg_touch_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
			  int64_t exptime, void *buf, size_t cap, struct engine_item *it);

int seg_op_get(struct engine_worker *ew, const void *key, size_t klen, int64_t touch_exptime,
	       void *buf, size_t cap, struct engine_item *it)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_engine *e = w->e;
	struct seg_read r;
	struct seg_key k;
	bool expired;
	int64_t now;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	if (touch_exptime != ENGINE_NO_TOUCH)
		return seg_touch_item(w, &k, now, touch_exptime, buf, cap, it);
	if (read_item(w, &k, now, buf, cap, &r, &expired) != FOUND) {
		W_COUNT(w, cmd_get);
		W_COUNT(w, get_misses);
		if (expired)
			W_COUNT(w, get_expired);
		return ENGINE_MISS;
	}
	fill_item(e, &r, it);
	if (!buf || r.iv.vlen > cap)
		return ENGINE_BUF_SMALL;
	W_COUNT(w, cmd_get);
	W_COUNT(w, get_hits);
	bump_freq(w, &r);
	return ENGINE_OK;
}

/* set/add/replace/cas with a negative or past exptime: memcached stores
 * an item that is expired at once, which removes the key's live item. */
static int store_expired(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
			 uint64_t cas_in, int64_t now)
{
	int rc = link_item(w, k, NULL, mode, NULL, cas_in, now, NULL);

	/* add on a missing key "stores" an item nobody can see. */
	return rc;
}

static int store_plain(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
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
		append_done(e, &wl);
		if (rc != LINK_NEED_BUCKET)
			return rc;
		if (refill_spare(w) != ENGINE_OK)
			return ENGINE_NO_MEMORY;
	}
}

/* Quick lock-free check that spares a doomed write for add/replace/cas. */
static int precheck(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
		    uint64_t cas_in, int64_t now)
{
	struct seg_read r;
	bool expired;
	bool live = read_item(w, k, now, NULL, 0, &r, &expired) == FOUND;

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

static int rmw_item(struct seg_worker *w, const struct seg_key *k, struct rmw *op, int64_t now,
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
		if (read_item(w, k, now, NULL, 0, &r, &expired) != FOUND)
			return ENGINE_MISS;
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
			if (item_size(k->klen, vlen, r.iv.flags) > e->item_max)
				return read_valid(e, &r) ? ENGINE_TOO_LARGE : ENGINE_MISS;
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
		switch (op->kind) {
		case RMW_APPEND:
			memcpy(dst, old_val, r.iv.vlen);
			memcpy(dst + r.iv.vlen, op->data, op->dlen);
			break;
		case RMW_PREPEND:
			memcpy(dst, op->data, op->dlen);
			memcpy(dst + op->dlen, old_val, r.iv.vlen);
			break;
		case RMW_ARITH:
			memcpy(dst, digits, vlen);
			break;
		case RMW_TOUCH:
			memcpy(dst, old_val, vlen);
			break;
		}
		if (!read_valid(e, &r)) {
			append_done(e, &wl); /* the copy may be torn: drop it */
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
		}
		append_done(e, &wl);
		if (rc == ENGINE_OK)
			return ENGINE_OK;
	}
}

int seg_op_store(struct engine_worker *ew, enum engine_store_mode mode, const void *key,
		 size_t klen, const void *val, size_t vlen, uint32_t flags, int64_t exptime,
		 uint64_t cas_in, uint64_t *cas_out)
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

int seg_op_delete(struct engine_worker *ew, const void *key, size_t klen, uint64_t cas_in)
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

int seg_op_arith(struct engine_worker *ew, const void *key, size_t klen, bool incr,
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

static int seg_touch_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
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

int seg_op_touch(struct engine_worker *ew, const void *key, size_t klen, int64_t exptime)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_key k;
	int64_t now;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	return seg_touch_item(w, &k, now, exptime, NULL, 0, NULL);
}
