/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The single-key operations of the baseline engine, with memcached's
 * semantics (see lib/engine/engine.h); the batched get is in bl_batch.c.
 *
 * Reads (get) are lock-free: RCU-online, rte_hash lookup, copy, offline.
 * Every write holds its key's stripe lock from its lookup to its link, so
 * read-modify-writes (add, cas, append, incr, touch) are atomic against
 * other writers of the key; values are never changed in place — a write
 * links a new item and defers freeing the old one — so lock-free readers
 * always see a whole value. Item memory is allocated before the lock when
 * its size is known (set, add, replace, cas).
 */
#include <errno.h>

#include "baseline/bl_alloc.h"
#include "baseline/bl_free.h"
#include "baseline/bl_op.h"
#include "baseline/bl_reclaim.h"

#define BL_LINK_IDLE_ROUNDS 64
#define BL_LINK_ROUNDS (1u << 20)

static inline uint64_t
bl_next_cas(struct bl_engine *e)
{
	return __atomic_add_fetch(&e->cas_next, 1, __ATOMIC_RELAXED);
}

/* Links it under fp (new key or in-place update), making room in the
 * table when rte_hash has no free key slot. Caller online, holding the
 * stripe held; may go offline meanwhile (rule 2 keeps the caller's own
 * item safe). */
static int
bl_link(struct bl_worker *w, struct bl_item *it, uint64_t fp,
	const struct bl_stripe *held)
{
	struct bl_engine *e = w->e;
	unsigned idle = 0, wait = 0;

	for (unsigned round = 0;; round++) {
		unsigned pending = 0, evicted = 0;
		int r = rte_hash_add_key_with_hash_data(e->h, &fp, (hash_sig_t)fp, it);

		engine_count(&w->base, ENGINE_C_lock_segment);
		if (likely(r == 0))
			return 0;
		if (r != -ENOSPC || round == BL_LINK_ROUNDS)
			return r;
		/* Key slots come back after a grace period: wait offline. */
		bl_offline(w);
		if (bl_reclaim(w, true, &pending) == 0) {
			if (pending < BL_EVICT_BATCH)
				evicted = bl_evict(w, -1, held, BL_EVICT_BATCH);
			if (evicted == 0 && pending == 0)
				evicted = bl_reap_dead(w, -1, BL_EVICT_BATCH);
			if (evicted == 0 && pending == 0 && ++idle > BL_LINK_IDLE_ROUNDS) {
				bl_online(w);
				return -ENOSPC;
			}
			bl_backoff(wait < 16 ? wait++ : wait);
		}
		bl_online(w);
	}
}

void
bl_unlink_dead(struct bl_op *op, struct bl_item *found)
{
	struct bl_worker *w = op->w;
	struct bl_engine *e = op->e;
	int32_t pos = -1;
	bool done = false;

	if (rte_lcore_id() == LCORE_ID_ANY)
		return; /* leave it to the sweep and to eviction */
	/* found may have been freed and reused since we saw it: decide on
	 * what is linked now. */
	if (bl_op_lock(op) == found && bl_item_is(found, op->key, op->klen) &&
	    (bl_item_expired(found, op->now) || bl_item_flushed(e, found))) {
		pos = rte_hash_del_key_with_hash(e->h, &op->fp, (hash_sig_t)op->fp);
		engine_count(&w->base, ENGINE_C_lock_segment);
		if (pos >= 0) {
			__atomic_store_n(&found->state, BL_DEAD, __ATOMIC_RELAXED);
			done = true;
		}
	}
	bl_op_unlock(op);
	if (done) {
		BL_ADD(w->items, -1);
		BL_ADD(w->bytes, -(int64_t)bl_item_size(found));
		BL_ADD(w->expired, 1);
		bl_defer(w, found, pos, BL_R_EXPIRED);
	}
}

/* gat/gats: a get that also sets the expiry, under the stripe lock. */
static enum engine_status
bl_get_touch(struct bl_op *op, int64_t exptime, void *buf, size_t cap,
	     struct engine_item *out)
{
	struct bl_worker *w = op->w;
	struct bl_engine *e = op->e;
	int64_t now = op->now;
	int64_t exp = engine_expiry_from_exptime(exptime, now);
	struct bl_item *found, *cur;
	bool expired = false, flushed = false;
	enum engine_status rc = ENGINE_MISS;

	found = bl_op_lock(op);
	cur = bl_current(e, found, op->key, op->klen, now);
	if (cur != NULL) {
		__atomic_store_n(&cur->expires_at, exp, __ATOMIC_RELAXED);
		rc = bl_read(e, cur, now, buf, cap, out);
	} else if (found != NULL && bl_item_is(found, op->key, op->klen)) {
		expired = bl_item_expired(found, now);
		flushed = !expired;
	}
	bl_op_unlock(op);
	engine_count(&w->base, ENGINE_C_cmd_touch);
	engine_count(&w->base, cur != NULL ? ENGINE_C_touch_hits : ENGINE_C_touch_misses);
	bl_count_get(w, rc, found, expired, flushed);
	return rc;
}

enum engine_status
bl_get(struct engine_worker *wb, const void *key, size_t klen,
       int64_t touch_exptime, void *buf, size_t cap, struct engine_item *out)
{
	struct bl_worker *w = bl_w(wb);
	struct bl_engine *e = w->e;
	struct bl_item *found;
	bool expired = false, flushed = false;
	struct bl_op op;
	enum engine_status rc = ENGINE_MISS;

	if (unlikely(klen == 0 || klen > ENGINE_KEY_MAX))
		return ENGINE_INVALID;
	bl_op_init(&op, w, key, klen);
	if (touch_exptime != ENGINE_NO_TOUCH)
		return bl_get_touch(&op, touch_exptime, buf, cap, out);
	/* Lock-free: online without the stripe lock. */
	bl_online(w);
	found = bl_lookup(e, op.fp);
	if (likely(found != NULL && bl_item_is(found, key, klen))) {
		expired = bl_item_expired(found, op.now);
		flushed = !expired && bl_item_flushed(e, found);
		if (likely(!expired && !flushed))
			rc = bl_read(e, found, op.now, buf, cap, out);
	}
	bl_offline(w);
	bl_count_get(w, rc, found, expired, flushed);
	if (unlikely(expired || flushed))
		bl_unlink_dead(&op, found); /* lazy expiry */
	return rc;
}

/* Decides a store against the key's current item (NULL: none). */
static enum engine_status
bl_store_check(const struct bl_engine *e, enum engine_store_mode mode,
	       const struct bl_item *cur, uint64_t cas_in)
{
	switch (mode) {
	case ENGINE_ADD:
		if (cur != NULL)
			return ENGINE_NOT_STORED;
		break;
	case ENGINE_REPLACE:
	case ENGINE_APPEND:
	case ENGINE_PREPEND:
		if (cur == NULL)
			return ENGINE_NOT_STORED;
		break;
	case ENGINE_CAS:
		if (cur == NULL)
			return ENGINE_MISS;
		return bl_cas_visible(e, cur) == cas_in ? ENGINE_OK : ENGINE_EXISTS;
	default:
		break;
	}
	/* A non-zero cas_in makes any mode a compare-and-set (meta ms C). */
	if (cas_in != 0) {
		if (cur == NULL)
			return ENGINE_MISS;
		if (bl_cas_visible(e, cur) != cas_in)
			return ENGINE_EXISTS;
	}
	return ENGINE_OK;
}

static void
bl_count_store(struct bl_worker *w, enum engine_store_mode mode,
	       uint64_t cas_in, enum engine_status rc)
{
	struct engine_worker *c = &w->base;
	bool cas = mode == ENGINE_CAS || cas_in != 0;

	switch (rc) {
	case ENGINE_OK:
		engine_count(c, ENGINE_C_set_stored);
		engine_count(c, ENGINE_C_total_items);
		if (cas)
			engine_count(c, ENGINE_C_cas_hits);
		break;
	case ENGINE_NOT_STORED:
		engine_count(c, ENGINE_C_set_not_stored);
		break;
	case ENGINE_EXISTS:
		engine_count(c, ENGINE_C_cas_badval);
		break;
	case ENGINE_MISS:
		engine_count(c, ENGINE_C_cas_misses);
		break;
	case ENGINE_TOO_LARGE:
		engine_count(c, ENGINE_C_set_too_large);
		break;
	case ENGINE_NO_MEMORY:
		engine_count(c, ENGINE_C_set_no_memory);
		break;
	default:
		break;
	}
}

/* After a successful replace: accounting and deferred freeing of the old
 * item (found: what the table held under the fingerprint, cur: whether it
 * was this key's live item). Caller offline, unlocked. */
static void
bl_retire_replaced(struct bl_worker *w, struct bl_item *found, bool cur,
		   size_t new_size)
{
	BL_ADD(w->bytes, (int64_t)new_size);
	if (found == NULL) {
		BL_ADD(w->items, 1);
		return;
	}
	BL_ADD(w->bytes, -(int64_t)bl_item_size(found));
	if (!cur)
		BL_ADD(w->expired, 1);
	bl_defer(w, found, -1, cur ? BL_R_REPLACED : BL_R_EXPIRED);
}

/* append/prepend: the new item is built from the current one under the
 * stripe lock, keeping its flags and expiry. */
static enum engine_status
bl_concat(struct bl_op *op, bool append, const void *val, size_t vlen,
	  uint64_t cas_in, uint64_t *cas_out)
{
	struct bl_worker *w = op->w;
	struct bl_engine *e = op->e;
	struct bl_stripe *s = op->s;
	const void *key = op->key;
	size_t klen = op->klen;
	int64_t now = op->now;
	struct bl_item *found, *cur, *it = NULL;
	size_t size = 0;
	enum engine_status rc;

	found = bl_op_lock(op);
	cur = bl_current(e, found, key, klen, now);
	rc = bl_store_check(e, append ? ENGINE_APPEND : ENGINE_PREPEND, cur, cas_in);
	if (rc == ENGINE_OK) {
		size = bl_item_size(cur) + vlen;
		if (size > e->item_max)
			rc = ENGINE_TOO_LARGE;
	}
	if (rc == ENGINE_OK) {
		it = bl_item_alloc(w, bl_class_of(e, size), s);
		if (it == NULL)
			rc = ENGINE_NO_MEMORY;
	}
	if (rc == ENGINE_OK) {
		char *v = it->data + klen;

		it->flags = cur->flags;
		it->expires_at = __atomic_load_n(&cur->expires_at, __ATOMIC_RELAXED);
		it->vlen = (uint32_t)(cur->vlen + vlen);
		it->klen = (uint8_t)klen;
		it->fetched = 0;
		it->atime = (uint32_t)now;
		memcpy(it->data, key, klen);
		if (append) {
			memcpy(v, cur->data + klen, cur->vlen);
			if (vlen > 0)
				memcpy(v + cur->vlen, val, vlen);
		} else {
			if (vlen > 0)
				memcpy(v, val, vlen);
			memcpy(v + vlen, cur->data + klen, cur->vlen);
		}
		it->cas = bl_next_cas(e);
		if (bl_link(w, it, op->fp, s) == 0) {
			__atomic_store_n(&it->state, BL_LIVE, __ATOMIC_RELEASE);
			__atomic_store_n(&cur->state, BL_DEAD, __ATOMIC_RELAXED);
		} else {
			rc = ENGINE_NO_MEMORY;
		}
	}
	bl_op_unlock(op);
	if (rc == ENGINE_OK) {
		bl_retire_replaced(w, cur, true, size);
		if (cas_out != NULL)
			*cas_out = bl_cas_visible(e, it);
	} else if (it != NULL) {
		bl_item_free_now(e, it);
	}
	return rc;
}

enum engine_status
bl_store(struct engine_worker *wb, enum engine_store_mode mode, const void *key,
	 size_t klen, const void *val, size_t vlen, uint32_t flags,
	 int64_t exptime, uint64_t cas_in, uint64_t *cas_out)
{
	struct bl_worker *w = bl_w(wb);
	struct bl_engine *e = w->e;
	size_t size = BL_ITEM_HDR + klen + vlen;
	struct bl_item *it, *found, *cur = NULL;
	struct bl_op op;
	int64_t now;
	enum engine_status rc;

	if (unlikely(klen == 0 || klen > ENGINE_KEY_MAX))
		return ENGINE_INVALID;
	engine_count(&w->base, ENGINE_C_cmd_set);
	if (unlikely(vlen > e->item_max || size > e->item_max)) {
		rc = ENGINE_TOO_LARGE;
		goto count;
	}
	rc = bl_op_begin(&op, w, key, klen);
	if (unlikely(rc != ENGINE_OK))
		goto count;
	if (mode == ENGINE_APPEND || mode == ENGINE_PREPEND) {
		rc = bl_concat(&op, mode == ENGINE_APPEND, val, vlen, cas_in, cas_out);
		goto leave;
	}
	now = op.now;
	it = bl_item_alloc(w, bl_class_of(e, size), NULL);
	if (unlikely(it == NULL)) {
		rc = ENGINE_NO_MEMORY;
		goto leave;
	}
	it->expires_at = engine_expiry_from_exptime(exptime, now);
	it->flags = flags;
	it->vlen = (uint32_t)vlen;
	it->klen = (uint8_t)klen;
	it->fetched = 0;
	it->atime = (uint32_t)now;
	memcpy(it->data, key, klen);
	if (vlen > 0)
		memcpy(it->data + klen, val, vlen);

	found = bl_op_lock(&op);
	cur = bl_current(e, found, key, klen, now);
	rc = bl_store_check(e, mode, cur, cas_in);
	if (rc == ENGINE_OK) {
		it->cas = bl_next_cas(e);
		if (likely(bl_link(w, it, op.fp, op.s) == 0)) {
			__atomic_store_n(&it->state, BL_LIVE, __ATOMIC_RELEASE);
			if (found != NULL)
				__atomic_store_n(&found->state, BL_DEAD, __ATOMIC_RELAXED);
		} else {
			rc = ENGINE_NO_MEMORY;
		}
	}
	bl_op_unlock(&op);
	if (rc == ENGINE_OK) {
		/* found (if any) was replaced in place: its key slot stays. */
		bl_retire_replaced(w, found, cur != NULL, size);
		if (cas_out != NULL)
			*cas_out = bl_cas_visible(e, it);
	} else {
		bl_item_free_now(e, it);
	}
leave:
	bl_op_end(&op);
count:
	bl_count_store(w, mode, cas_in, rc);
	return rc;
}

enum engine_status
bl_remove(struct engine_worker *wb, const void *key, size_t klen,
	  uint64_t cas_in)
{
	struct bl_worker *w = bl_w(wb);
	struct bl_engine *e = w->e;
	struct bl_item *found, *cur;
	struct bl_op op;
	int32_t pos = -1;
	bool ours;
	enum engine_status rc;

	if (unlikely(klen == 0 || klen > ENGINE_KEY_MAX))
		return ENGINE_INVALID;
	rc = bl_op_begin(&op, w, key, klen);
	if (unlikely(rc != ENGINE_OK))
		return rc;
	rc = ENGINE_MISS;
	found = bl_op_lock(&op);
	ours = found != NULL && bl_item_is(found, key, klen);
	cur = bl_current(e, found, key, klen, op.now);
	if (cur != NULL)
		rc = (cas_in == 0 || bl_cas_visible(e, cur) == cas_in) ? ENGINE_OK : ENGINE_EXISTS;
	/* Unlink on a hit, and also a dead item of this key (lazy expiry). */
	if (ours && rc != ENGINE_EXISTS) {
		pos = rte_hash_del_key_with_hash(e->h, &op.fp, (hash_sig_t)op.fp);
		engine_count(&w->base, ENGINE_C_lock_segment);
		if (pos >= 0)
			__atomic_store_n(&found->state, BL_DEAD, __ATOMIC_RELAXED);
	}
	bl_op_unlock(&op);
	if (pos >= 0) {
		BL_ADD(w->items, -1);
		BL_ADD(w->bytes, -(int64_t)bl_item_size(found));
		if (cur == NULL)
			BL_ADD(w->expired, 1);
		bl_defer(w, found, pos, cur != NULL ? BL_R_DELETED : BL_R_EXPIRED);
	}
	bl_op_end(&op);
	if (rc == ENGINE_OK)
		engine_count(&w->base, ENGINE_C_delete_hits);
	else if (rc == ENGINE_MISS)
		engine_count(&w->base, ENGINE_C_delete_misses);
	return rc;
}

enum engine_status
bl_arith(struct engine_worker *wb, const void *key, size_t klen, bool incr,
	 uint64_t delta, uint64_t *value_out, uint64_t *cas_out)
{
	struct bl_worker *w = bl_w(wb);
	struct bl_engine *e = w->e;
	struct bl_item *cur, *it = NULL;
	struct bl_op op;
	size_t size = 0;
	uint64_t v = 0;
	int64_t now;
	enum engine_status rc;

	if (unlikely(klen == 0 || klen > ENGINE_KEY_MAX))
		return ENGINE_INVALID;
	rc = bl_op_begin(&op, w, key, klen);
	if (unlikely(rc != ENGINE_OK))
		return rc;
	rc = ENGINE_MISS;
	now = op.now;
	cur = bl_current(e, bl_op_lock(&op), key, klen, now);
	if (cur != NULL) {
		if (!engine_parse_u64(cur->data + klen, cur->vlen, &v)) {
			rc = ENGINE_NON_NUMERIC;
		} else {
			char num[20];
			size_t len;

			/* memcached: incr wraps at 2^64, decr stops at 0. */
			v = incr ? v + delta : (v < delta ? 0 : v - delta);
			len = engine_format_u64(v, num);
			size = BL_ITEM_HDR + klen + len;
			rc = size > e->item_max ? ENGINE_TOO_LARGE : ENGINE_OK;
			if (rc == ENGINE_OK) {
				it = bl_item_alloc(w, bl_class_of(e, size), op.s);
				if (it == NULL)
					rc = ENGINE_NO_MEMORY;
			}
			if (rc == ENGINE_OK) {
				it->flags = cur->flags;
				it->expires_at = __atomic_load_n(&cur->expires_at,
								 __ATOMIC_RELAXED);
				it->vlen = (uint32_t)len;
				it->klen = (uint8_t)klen;
				it->fetched = 0;
				it->atime = (uint32_t)now;
				memcpy(it->data, key, klen);
				memcpy(it->data + klen, num, len);
				it->cas = bl_next_cas(e);
				if (bl_link(w, it, op.fp, op.s) == 0) {
					__atomic_store_n(&it->state, BL_LIVE, __ATOMIC_RELEASE);
					__atomic_store_n(&cur->state, BL_DEAD, __ATOMIC_RELAXED);
				} else {
					rc = ENGINE_NO_MEMORY;
				}
			}
		}
	}
	bl_op_unlock(&op);
	if (rc == ENGINE_OK) {
		bl_retire_replaced(w, cur, true, size);
		engine_count(&w->base, ENGINE_C_total_items);
		if (value_out != NULL)
			*value_out = v;
		if (cas_out != NULL)
			*cas_out = bl_cas_visible(e, it);
	} else if (it != NULL) {
		bl_item_free_now(e, it);
	}
	bl_op_end(&op);
	if (rc == ENGINE_OK)
		engine_count(&w->base, incr ? ENGINE_C_incr_hits : ENGINE_C_decr_hits);
	else if (rc == ENGINE_MISS)
		engine_count(&w->base, incr ? ENGINE_C_incr_misses : ENGINE_C_decr_misses);
	return rc;
}

enum engine_status
bl_touch(struct engine_worker *wb, const void *key, size_t klen, int64_t exptime)
{
	struct bl_worker *w = bl_w(wb);
	struct bl_engine *e = w->e;
	struct bl_item *cur;
	struct bl_op op;

	if (unlikely(klen == 0 || klen > ENGINE_KEY_MAX))
		return ENGINE_INVALID;
	bl_op_init(&op, w, key, klen);
	/* Under the stripe lock, so append/incr cannot copy a stale expiry. */
	cur = bl_current(e, bl_op_lock(&op), key, klen, op.now);
	if (cur != NULL)
		__atomic_store_n(&cur->expires_at,
				 engine_expiry_from_exptime(exptime, op.now), __ATOMIC_RELAXED);
	bl_op_unlock(&op);
	engine_count(&w->base, ENGINE_C_cmd_touch);
	engine_count(&w->base, cur != NULL ? ENGINE_C_touch_hits : ENGINE_C_touch_misses);
	return cur != NULL ? ENGINE_OK : ENGINE_MISS;
}
