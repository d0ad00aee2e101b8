/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The operations, with memcached semantics: the engine_ops entries
 * (get, store, delete, arith, touch, batches). Reads go through
 * seg_read.c, appends through seg_append.c, links through seg_link.h; a
 * store whose value arrives in pieces is seg_stream.c's.
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

#include "seg/seg_append.h"
#include "seg/seg_flush.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_large.h"
#include "seg/seg_link.h"
#include "seg/seg_live.h"
#include "seg/seg_op.h"
#include "seg/seg_ops.h"
#include "seg/seg_read.h"
#include "seg/seg_struct.h"

#include "engine/engine_access.h"

static const struct read_dst no_dst;

/* ---- the engine operations ---------------------------------------------- */

static int seg_touch_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
			  int64_t exptime, void *buf, size_t cap, struct engine_item *it);

/* A plain get of k into dst, after op_start(): the status engine_get()
 * returns, with its counters. Inlined into both callers: it is every
 * get's path, and its call cost ~20 instructions a get. */
static inline __attribute__((always_inline)) enum engine_status
get_one(struct seg_worker *w, const struct seg_key *k, int64_t now, const struct read_dst *dst,
	struct engine_item *it)
{
	struct seg_read r;
	bool expired;

	if (seg_read_item_into(w, k, now, dst, it, &r, &expired) != FOUND) {
		W_COUNT(w, cmd_get);
		W_COUNT(w, get_misses);
		if (expired)
			W_COUNT(w, get_expired);
		seg_sample(w->e, k, ENGINE_ACCESS_GET, false, NULL, now);
		return ENGINE_MISS;
	}
	/* a sink's value_buf was handed the item, filled from this very read */
	if (dst->sink == NULL)
		seg_fill_item(w->e, &r, it);
	if (!r.copied) {
		/* A get for the meta data only (mg without v: lib/cmd counts
		 * its hit) is a hit to the sampler too; a buffer too small is
		 * not, its retry is. */
		if (dst->buf == NULL)
			seg_sample(w->e, k, ENGINE_ACCESS_GET, true, it, now);
		return ENGINE_BUF_SMALL;
	}
	W_COUNT(w, cmd_get);
	W_COUNT(w, get_hits);
	seg_bump_freq(w, &r);
	seg_sample(w->e, k, ENGINE_ACCESS_GET, true, it, now);
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

static int
store_plain(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
	    const void *val, uint32_t vlen, uint32_t flags, int64_t expires_at,
	    uint64_t cas_in, int64_t now, uint64_t *cas_out)
{
	struct seg_engine *e = w->e;
	struct ttl_place t;

	seg_ttl_place(expires_at, now, &t);
	/* A new key in a full chain needs a bucket: get it before writing the
	 * item, rather than writing the item twice. */
	if (!seg_hash_has_room(e, k) && seg_refill_spare(w) != ENGINE_OK)
		return ENGINE_NO_MEMORY;
	for (;;) {
		struct seg_wloc wl;
		int rc = seg_reserve(w, &t, now, item_size(k->klen, vlen, flags), &wl);

		if (rc != ENGINE_OK)
			return rc;
		const uint8_t *vp = seg_write_head(&wl, k, vlen, flags);

		seg_item_put(e, (uint32_t)wl.seg, wl.off, (uint32_t)(vp - wl.p), val, vlen);
		rc = seg_link_item(w, k, &wl, mode, NULL, cas_in, now, cas_out);
		if (rc == ENGINE_OK)
			seg_append_done(w, &wl);
		else
			seg_append_abandon(w, &wl);
		if (rc != LINK_NEED_BUCKET)
			return rc;
		if (seg_refill_spare(w) != ENGINE_OK)
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
	bool live = seg_read_item(w, k, now, &no_dst, &r, &expired) == FOUND;

	if (mode == LINK_ADD && live)
		return ENGINE_NOT_STORED;
	if (mode == LINK_REPLACE && !live)
		return ENGINE_NOT_STORED;
	if (mode == LINK_CAS && !live)
		return ENGINE_MISS;
	if (mode == LINK_CAS && seg_cas_of(w->e, r.gen, r.v) != cas_in)
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
		if (seg_read_item(w, k, now, &no_dst, &r, &expired) != FOUND)
			return ENGINE_MISS;
		SEG_TEST_POINT(SEG_TP_RMW_READ);
		old_val = r.item + r.iv.hdr_len + r.iv.klen;
		const uint32_t old_seg = slot_seg(r.v), old_off = slot_off(r.v) << e->off_shift;
		const uint32_t old_pos = r.iv.hdr_len + r.iv.klen;
		vlen = r.iv.vlen;
		if (op->cas_in && seg_cas_of(e, r.gen, r.v) != op->cas_in) {
			if (!seg_read_valid(e, &r))
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
				if (!seg_read_valid(e, &r))
					continue;
				return ENGINE_TOO_LARGE;
			}
			seg_ttl_place(r.expires_at, now, &t);
			break;
		case RMW_ARITH: {
			uint64_t n;
			bool numeric = r.iv.vlen <= 20 + 4 &&
				       engine_parse_u64(old_val, r.iv.vlen, &n);

			if (!seg_read_valid(e, &r))
				continue;
			if (!numeric)
				return ENGINE_NON_NUMERIC;
			if (op->incr)
				n += op->delta; /* wraps at 2^64 like memcached */
			else
				n = n > op->delta ? n - op->delta : 0;
			op->number = n;
			vlen = (uint32_t)engine_format_u64(n, digits);
			seg_ttl_place(r.expires_at, now, &t);
			break;
		}
		case RMW_TOUCH:
			if (op->expires_at < 0) {
				/* Touched into the past: gone, like memcached. */
				if (op->buf && r.iv.vlen <= op->cap &&
				    !seg_item_get(e, old_seg, old_off, old_pos, op->buf, r.iv.vlen))
					continue; /* torn */
				if (!seg_read_valid(e, &r))
					continue;
				struct link_expect x = { seg_loc_of(r.v), r.gen };

				rc = seg_link_item(w, k, NULL, LINK_SAME, &x, 0, now, NULL);
				if (rc == LINK_RETRY)
					continue;
				seg_fill_item(e, &r, it);
				it->expires_at = -1;
				return ENGINE_OK;
			}
			seg_ttl_place(op->expires_at, now, &t);
			break;
		}
		rc = seg_reserve(w, &t, now, item_size(k->klen, vlen, r.iv.flags), &wl);
		if (rc != ENGINE_OK)
			return rc;
		dst = seg_write_head(&wl, k, vlen, r.iv.flags);
		const uint32_t dseg = (uint32_t)wl.seg, dpos = (uint32_t)(dst - wl.p);
		bool whole = true;

		/* The old value is copied optimistically and checked after
		 * (read_valid): if its segment was reclaimed and reopened
		 * meanwhile, the place just reserved can overlap it. The copy is
		 * dropped then, but a memcpy over overlapping ranges is undefined
		 * (ASan's torture run found it): seg_item_copy memmoves. Either
		 * item may be a large one (seg_append.c). */
		switch (op->kind) {
		case RMW_APPEND:
			whole = seg_item_copy(e, dseg, wl.off, dpos, old_seg, old_off, old_pos,
					      r.iv.vlen);
			seg_item_put(e, dseg, wl.off, dpos + r.iv.vlen, op->data, op->dlen);
			break;
		case RMW_PREPEND:
			seg_item_put(e, dseg, wl.off, dpos, op->data, op->dlen);
			whole = seg_item_copy(e, dseg, wl.off, dpos + op->dlen, old_seg, old_off,
					      old_pos, r.iv.vlen);
			break;
		case RMW_ARITH:
			memcpy(dst, digits, vlen);
			break;
		case RMW_TOUCH:
			whole = seg_item_copy(e, dseg, wl.off, dpos, old_seg, old_off, old_pos, vlen);
			break;
		}
		if (!whole || !seg_read_valid(e, &r)) {
			seg_append_abandon(w, &wl); /* the copy may be torn: drop it */
			W_COUNT(w, read_retries);
			continue;
		}
		struct link_expect x = { seg_loc_of(r.v), r.gen };

		rc = seg_link_item(w, k, &wl, LINK_SAME, &x, op->cas_in, now, &it->cas);
		if (rc == ENGINE_OK) {
			if (op->kind == RMW_TOUCH && op->buf && vlen <= op->cap)
				seg_item_get(e, dseg, wl.off, dpos, op->buf, vlen);
			it->flags = r.iv.flags;
			it->vlen = vlen;
			it->expires_at = seg_item_expiry(&e->hdr[wl.seg], wl.delta);
			it->fetched_before = slot_freq(r.v) > 0;
			seg_append_done(w, &wl);
			return ENGINE_OK;
		}
		seg_append_abandon(w, &wl);
		if (rc != LINK_RETRY)
			return rc;
	}
}

__attribute__((hot)) enum engine_status
seg_op_store(struct engine_worker *ew, enum engine_store_mode mode,
	     const void *key, size_t klen, const void *val, size_t vlen,
	     uint32_t flags, int64_t exptime, uint64_t cas_in, uint64_t *cas_out)
{
	struct seg_worker *w = seg_worker_of(ew);
	struct seg_key k;
	int64_t now, expires_at;
	int rc;

	if (!op_start(w, &k, key, klen, &now))
		return ENGINE_INVALID;
	W_COUNT(w, cmd_set);
	if (seg_store_too_large(w, &k, mode, vlen, flags, now))
		return ENGINE_TOO_LARGE;
	if (mode == ENGINE_APPEND || mode == ENGINE_PREPEND) {
		struct rmw op = { .kind = mode == ENGINE_APPEND ? RMW_APPEND : RMW_PREPEND,
				  .data = val, .dlen = (uint32_t)vlen, .cas_in = cas_in };
		struct engine_item it;

		rc = rmw_item(w, &k, &op, now, &it);
		if (rc == ENGINE_MISS)
			rc = ENGINE_NOT_STORED;
		else if (rc == ENGINE_OK && cas_out)
			*cas_out = it.cas;
		if (rc == ENGINE_OK)
			seg_store_sampled(w, &k, &it, now);
	} else {
		enum link_mode lm = seg_link_mode(mode);

		expires_at = engine_expiry_from_exptime(exptime, now);
		rc = lm == LINK_SET && !cas_in ? ENGINE_OK : precheck(w, &k, lm, cas_in, now);
		if (rc == ENGINE_OK && expires_at < 0) {
			rc = seg_store_expired(w, &k, lm, cas_in, now);
		} else if (rc == ENGINE_OK) {
			const struct engine_item stored = { .vlen = (uint32_t)vlen, .flags = flags,
							    .expires_at = expires_at };

			rc = store_plain(w, &k, lm, val, (uint32_t)vlen, flags, expires_at, cas_in,
					 now, cas_out);
			if (rc == ENGINE_OK)
				seg_store_sampled(w, &k, &stored, now);
		}
	}
	seg_store_counted(w, mode, rc);
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
	rc = seg_link_item(w, &k, NULL, cas_in ? LINK_CAS : LINK_REPLACE, NULL, cas_in, now, NULL);
	if (rc == ENGINE_NOT_STORED)
		rc = ENGINE_MISS;
	if (rc == ENGINE_OK || rc == ENGINE_MISS)
		seg_sample(w->e, &k, ENGINE_ACCESS_DELETE, rc == ENGINE_OK, NULL, now);
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
		engine_count_add(&w->base, ENGINE_C_set_bytes, stored_size(w->e, k.klen, &it));
		seg_sample(w->e, &k, ENGINE_ACCESS_SET, true, &it, now);
	}
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
			seg_sample(w->e, k, ENGINE_ACCESS_GET, false, NULL, now);
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
		seg_sample(w->e, k, ENGINE_ACCESS_GET, true, it, now);
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
	const struct seg_bucket *b = seg_hash_chain(e, k);

	for (unsigned i = 1; i < BUCKET_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&b->slot[i], memory_order_relaxed);
		const uint8_t *p;

		if (i == BUCKET_SLOTS - 1 && slot_is_link(v)) {
			rte_prefetch0(seg_hash_link_target(e, v));
			continue;
		}
		if (v == 0 || slot_tag(v) != k->tag)
			continue;
		p = seg_item_at(e, v);
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
	if (m == 1) {
		/* one key has nothing to overlap its misses with: its get
		 * reads the bucket right after (a single get over UDP or TCP) */
		if (key_ok(kb[0].klen))
			seg_key_init(e, &k[0], kb[0].key, kb[0].klen);
		return;
	}
	for (unsigned i = 0; i < m; i++) {
		if (!key_ok(kb[i].klen))
			continue;
		seg_key_init(e, &k[i], kb[i].key, kb[i].klen);
		rte_prefetch0(seg_hash_chain(e, &k[i]));
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
__attribute__((hot)) void
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
