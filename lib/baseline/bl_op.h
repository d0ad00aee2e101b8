/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * One keyed operation of the baseline engine (struct bl_op: its key, its
 * stripe, its time) and the read helpers that single and batched gets
 * share: bl_ops.c and bl_batch.c include it, nothing else does.
 */
#ifndef SEGCACHED_BL_OP_H
#define SEGCACHED_BL_OP_H

#include "baseline/bl_flush.h"
#include "baseline/bl_private.h"

static inline struct bl_worker *
bl_w(struct engine_worker *w)
{
	return (struct bl_worker *)w;
}

/* Non-EAL threads borrow an lcore id for an operation that changes the
 * table when their worker was created on another thread (rare). */
static inline bool
bl_op_enter(bool *ok)
{
	if (likely(rte_lcore_id() != LCORE_ID_ANY)) {
		*ok = true;
		return false;
	}
	return bl_lcore_get(ok);
}

/* One keyed operation: its key, where the key lives (fingerprint, stripe)
 * and the time it runs at. */
struct bl_op {
	struct bl_worker *w;
	struct bl_engine *e;
	const void *key;
	size_t klen;
	uint64_t fp;
	struct bl_stripe *s;
	int64_t now;
	bool registered; /* by bl_op_begin: bl_op_end gives the lcore id back */
};

/* Fills op for a valid key and applies a flush_all that has come due, so
 * that the operation sees the cache as of op->now. */
static inline void
bl_op_init(struct bl_op *op, struct bl_worker *w,
	   const void *key, size_t klen)
{
	op->w = w;
	op->e = w->e;
	op->key = key;
	op->klen = klen;
	op->fp = bl_fingerprint(key, klen);
	op->s = bl_stripe_of(op->e, op->fp);
	op->now = bl_now(op->e);
	op->registered = false;
	bl_flush_check(op->e, op->now);
}

/* bl_op_init for an operation that changes the table, after making sure
 * the thread has an lcore id (bl_op_enter). ENGINE_NO_MEMORY when none is
 * left: nothing to undo then. Otherwise end with bl_op_end(). */
static inline enum engine_status
bl_op_begin(struct bl_op *op, struct bl_worker *w, const void *key,
	    size_t klen)
{
	bool registered, ok;

	registered = bl_op_enter(&ok);
	if (unlikely(!ok))
		return ENGINE_NO_MEMORY;
	bl_op_init(op, w, key, klen);
	op->registered = registered;
	return ENGINE_OK;
}

static inline void
bl_op_end(struct bl_op *op)
{
	bl_lcore_put(op->registered);
}

/* Takes the key's stripe lock (offline, rule 3), goes online and returns
 * what the table holds under the fingerprint. Undo with bl_op_unlock(). */
static inline struct bl_item *
bl_op_lock(struct bl_op *op)
{
	bl_stripe_lock(op->w, op->s);
	bl_online(op->w);
	return bl_lookup(op->e, op->fp);
}

static inline void
bl_op_unlock(struct bl_op *op)
{
	bl_offline(op->w);
	bl_stripe_unlock(op->s);
}

/* The live item of this key among what the table holds under its
 * fingerprint: not another key, not expired, not flushed. */
static inline struct bl_item *
bl_current(const struct bl_engine *e, struct bl_item *found,
	   const void *key, size_t klen, int64_t now)
{
	if (found == NULL || !bl_item_is(found, key, klen) ||
	    bl_item_expired(found, now) || bl_item_flushed(e, found))
		return NULL;
	return found;
}


/* Fills *out from it. Caller online. */
static inline void
bl_read_meta(const struct bl_engine *e, const struct bl_item *it, struct engine_item *out)
{
	out->flags = it->flags;
	out->vlen = it->vlen;
	out->cas = bl_cas_visible(e, it);
	out->expires_at = __atomic_load_n(&it->expires_at, __ATOMIC_RELAXED);
	out->fetched_before = __atomic_load_n(&it->fetched, __ATOMIC_RELAXED) != 0;
}

/* Copies the value to buf when fits, and only then counts a read
 * (fetched, LRU time); *out is bl_read_meta()'s. Caller online. */
static inline enum engine_status
bl_deliver(struct bl_item *it, int64_t now, void *buf, bool fits,
	   const struct engine_item *out)
{
	uint32_t t = (uint32_t)now;

	if (!fits)
		return ENGINE_BUF_SMALL;
	if (out->vlen > 0)
		memcpy(buf, it->data + it->klen, out->vlen);
	/* Shared cache line: write only on change (once, once a second). */
	if (!out->fetched_before)
		__atomic_store_n(&it->fetched, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&it->atime, __ATOMIC_RELAXED) != t)
		__atomic_store_n(&it->atime, t, __ATOMIC_RELAXED);
	return ENGINE_OK;
}

/* Fills *out and copies the value when it fits cap (no buffer: meta data
 * only, whatever the value's length). Caller online. */
static inline enum engine_status
bl_read(const struct bl_engine *e, struct bl_item *it, int64_t now,
	void *buf, size_t cap, struct engine_item *out)
{
	bl_read_meta(e, it, out);
	return bl_deliver(it, now, buf, buf != NULL && out->vlen <= cap, out);
}

static inline void
bl_count_get(struct bl_worker *w, enum engine_status rc, const struct bl_item *found,
	     bool expired, bool flushed)
{
	struct engine_worker *c = &w->base;

	RTE_SET_USED(found);
	if (rc == ENGINE_BUF_SMALL)
		return; /* the caller retries with a bigger buffer: count that */
	engine_count(c, ENGINE_C_cmd_get);
	if (rc == ENGINE_OK) {
		engine_count(c, ENGINE_C_get_hits);
		return;
	}
	engine_count(c, ENGINE_C_get_misses);
	if (expired)
		engine_count(c, ENGINE_C_get_expired);
	else if (flushed)
		engine_count(c, ENGINE_C_get_flushed);
}

/* Removes a dead (expired or flushed) item found by a lookup that held no
 * lock, if it is still there. Caller offline. (bl_ops.c) */
void bl_unlink_dead(struct bl_op *op, struct bl_item *found);

#endif /* SEGCACHED_BL_OP_H */
