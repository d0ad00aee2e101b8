/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Linking an item under its bucket lock, with the condition of its
 * store's mode (seg_link_item): what every store, delete and
 * read-modify-write of seg_ops.c and every streamed store of
 * seg_stream.c ends in. Inline: a call would be paid by every set.
 */
#ifndef SEGCACHED_SEG_LINK_H
#define SEGCACHED_SEG_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "seg/seg_append.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_read.h"
#include "seg/seg_struct.h"

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
	return seg_cas_of(e, atomic_load_explicit(&e->hdr[slot_seg(v)].gen, memory_order_relaxed), v);
}

/* The expiry of the item slot value v points to, and its span (what
 * seg_item_span() says: 0 for an item that does not parse), from one
 * parse: the set that replaces it needs both (a second parse for the
 * span cost ~60 instructions a set). */
static inline int64_t
slot_expiry_locked(const struct seg_engine *e, uint64_t v, uint32_t *span)
{
	struct item_view iv;

	*span = 0;
	if (!seg_parse_slot(e, v, &iv))
		return -1;
	*span = item_span(iv.total, e->off_shift);
	return seg_item_expiry(&e->hdr[slot_seg(v)], iv.exp_delta);
}

/* Links the item at wl (or, with wl NULL, removes the key's item) under
 * the bucket lock, if the mode's condition holds. */
static inline __attribute__((hot, always_inline)) int
seg_link_item(struct seg_worker *w, const struct seg_key *k, const struct seg_wloc *wl,
	  enum link_mode mode, const struct link_expect *expect, uint64_t cas_in,
	  int64_t now, uint64_t *cas_out)
{
	struct seg_engine *e = w->e;
	_Atomic uint64_t *slot;
	uint64_t old = 0, v;
	uint32_t old_span = 0;
	bool live = false;
	int rc = ENGINE_OK;

	seg_bucket_lock(k->head);
	W_COUNT(w, lock_bucket);
	slot = seg_hash_find_locked(e, k);
	if (slot) {
		old = atomic_load_explicit(slot, memory_order_relaxed);
		live = !seg_expired(slot_expiry_locked(e, old, &old_span), now);
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
		if (!slot || seg_loc_of(old) != expect->loc ||
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
			seg_live_remove(w, old, old_span);
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
		seg_live_remove(w, old, old_span);
		if (!live)
			W_COUNT(w, expired_unlinked); /* per worker: no shared RMW */
	}
	atomic_store_explicit(slot, v, memory_order_release);
	seg_live_add(w, v, wl->span);
	if (cas_out)
		*cas_out = slot_cas_locked(e, v);
out:
	seg_bucket_unlock(k->head);
	if (w->live_notes >= SEG_LIVE_BATCH)
		seg_live_flush(w);
	return rc;
}

#endif /* SEGCACHED_SEG_LINK_H */
