/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What every keyed operation of seg_ops.c and seg_stream.c starts and
 * ends with: the worker, the key checked and hashed with the clock read
 * (op_start), and the sampled request handed to lib/mrc (seg_sample).
 */
#ifndef SEGCACHED_SEG_OP_H
#define SEGCACHED_SEG_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine_access.h"
#include "seg/seg_flush.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_link.h"
#include "seg/seg_struct.h"

static inline struct seg_worker *
seg_worker_of(struct engine_worker *w)
{
	return (struct seg_worker *)w;
}

static inline bool key_ok(size_t klen) { return klen > 0 && klen <= ENGINE_KEY_MAX; }

/* Every operation starts here: checks the key, hashes it, reads the clock
 * and runs a delayed flush_all that has come due. */
static inline bool
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

/* The bytes an item takes in a segment, for the sampler. */
static inline uint32_t
stored_size(const struct seg_engine *e, uint32_t klen, const struct engine_item *it)
{
	return item_span(item_size(klen, it->vlen, it->flags), e->off_shift);
}

/* A sampled key's request goes to the engine's sampler (lib/mrc, through
 * engine_access.h): an unsampled key pays the one comparison of
 * engine_sampled() (the item's size is worked out only for a sampled key:
 * computed by every caller, it had cost every get and set some 24
 * instructions).
 * it: the item found or stored (its size and expiry), NULL for none. */
static inline void
seg_sample(const struct seg_engine *e, const struct seg_key *k, enum engine_access_op op,
	   bool hit, const struct engine_item *it, int64_t now)
{
	if (SEG_UNLIKELY(engine_sampled(&e->base, k->hash))) {
		const struct engine_access a = {
			.key = k->key, .klen = k->klen,
			.sample_hash = engine_sample_hash(k->hash),
			.size = it ? stored_size(e, k->klen, it) : 0, .hit = hit,
			.op = (uint8_t)op, .expires_at = it ? it->expires_at : 0, .now = now,
		};

		e->base.sample_fn(e->base.sample_arg, &a);
	}
}

/* ---- what every store runs (seg_ops.c, seg_stream.c) ---- */

static inline enum link_mode
seg_link_mode(enum engine_store_mode mode)
{
	return mode == ENGINE_ADD ? LINK_ADD : mode == ENGINE_REPLACE ? LINK_REPLACE
	     : mode == ENGINE_CAS ? LINK_CAS : LINK_SET;
}

/* An item over the size limit is refused, counted, and a set drops the
 * key's old value, as memcached does. */
static inline bool
seg_store_too_large(struct seg_worker *w, const struct seg_key *k, enum engine_store_mode mode,
		    size_t vlen, uint32_t flags, int64_t now)
{
	const struct seg_engine *e = w->e;

	if (vlen <= ITEM_VLEN_MAX && item_size(k->klen, (uint32_t)vlen, flags) <= e->item_max)
		return false;
	W_COUNT(w, set_too_large);
	if (mode == ENGINE_SET) {
		seg_link_item(w, k, NULL, LINK_SET, NULL, 0, now, NULL);
		seg_sample(e, k, ENGINE_ACCESS_DELETE, false, NULL, now);
	}
	return true;
}

/* set/add/replace/cas with a negative or past exptime: memcached stores
 * an item that is expired at once, which removes the key's live item
 * (add on a missing key "stores" an item nobody can see). */
static inline int
seg_store_expired(struct seg_worker *w, const struct seg_key *k, enum link_mode mode,
		  uint64_t cas_in, int64_t now)
{
	int rc = seg_link_item(w, k, NULL, mode, NULL, cas_in, now, NULL);

	if (rc == ENGINE_OK)
		seg_sample(w->e, k, ENGINE_ACCESS_DELETE, true, NULL, now);
	return rc;
}

/* A store that stored: the bytes the sets wrote (lib/mrc scales its FIFO
 * caches by the sample's share of them) and the sampled request. */
static inline void
seg_store_sampled(struct seg_worker *w, const struct seg_key *k, const struct engine_item *it,
		  int64_t now)
{
	engine_count_add(&w->base, ENGINE_C_set_bytes, stored_size(w->e, k->klen, it));
	seg_sample(w->e, k, ENGINE_ACCESS_SET, true, it, now);
}

/* A store's outcome, counted. */
static inline void
seg_store_counted(struct seg_worker *w, enum engine_store_mode mode, int rc)
{
	if (mode == ENGINE_CAS) {
		if (rc == ENGINE_OK)
			W_COUNT(w, cas_hits);
		else if (rc == ENGINE_MISS)
			W_COUNT(w, cas_misses);
		else if (rc == ENGINE_EXISTS)
			W_COUNT(w, cas_badval);
	}
	if (rc == ENGINE_OK) {
		W_COUNT(w, set_stored);
		W_COUNT(w, total_items);
	} else if (rc == ENGINE_NOT_STORED) {
		W_COUNT(w, set_not_stored);
	} else if (rc == ENGINE_NO_MEMORY) {
		W_COUNT(w, set_no_memory);
	}
}

#endif /* SEGCACHED_SEG_OP_H */
