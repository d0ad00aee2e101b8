/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The live items of the heap, segment by segment, for memcached's key
 * dumps (`lru_crawler metadump`, `stats cachedump`): walks the segments'
 * logs in id order, not the hash table, and takes no lock: each item is
 * read as a lock-free reader reads it (its segment's gen before and after)
 * and offered only when the hash table still points at that very place
 * (an overwritten, deleted or moved copy is dead). A cursor (segment,
 * offset, gen) lets the caller stop whenever its output is full and go on
 * later; a segment reused meanwhile is skipped. Calls seg_read.c and
 * seg_hash.c.
 */
#include "seg/seg_dump.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_read.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

#include "engine/engine_dump.h"

#define LOOKUP_TRIES 3

/* The class a dump reports: the TTL range of the item's segment
 * (docs/protocol.md): 1 never expires, 2..5 the four bucket ranges. */
unsigned
seg_dump_class(unsigned ttl_bucket)
{
	return ttl_bucket >= TTL_BUCKETS ? 1 : 2 + ttl_bucket / (TTL_BUCKETS / 4);
}

/* Is the item at (seg, off) of gen the one the table holds for its key?
 * On yes, *slot_v is the slot's value (its freq says fetched). */
static bool
item_is_live(struct seg_engine *e, const uint8_t *key, uint32_t klen, int32_t seg,
	     uint32_t off, uint64_t gen, uint64_t *slot_v)
{
	struct seg_key k;

	seg_key_init(e, &k, key, klen);
	for (unsigned t = 0; t < LOOKUP_TRIES; t++) {
		struct seg_read r;
		int res = seg_lookup(e, &k, false, &r);

		if (res == NOT_FOUND)
			return false;
		if (res == RETRY)
			continue;
		if (slot_seg(r.v) != (uint32_t)seg || slot_off(r.v) != off >> e->off_shift ||
		    r.gen != gen)
			return false;
		*slot_v = r.v;
		return true;
	}
	return false;
}

/* Offers the items of one segment from *off on. Returns false when fn
 * declined one (*off is then that item's offset). */
static bool
dump_segment(struct seg_engine *e, int32_t seg, uint64_t gen, uint32_t *off,
	     engine_dump_fn fn, void *arg, int64_t now)
{
	const struct seg_hdr *h = &e->hdr[seg];
	const uint8_t *data = seg_data(e, seg);
	const uint32_t end = seg_valid_end(e, seg);
	const unsigned cls = seg_dump_class(__atomic_load_n(&h->ttl_bucket, __ATOMIC_RELAXED));
	const int64_t created = __atomic_load_n(&h->create_at, __ATOMIC_RELAXED);

	while (*off < end) {
		uint8_t key[ENGINE_KEY_MAX];
		struct engine_dump_item d;
		struct item_view iv;
		uint64_t v;

		/* parsed in place, as lock-free readers do; the key is copied
		 * out, since the bytes may change under us until the checks
		 * below say they were the item's */
		if (!seg_parse_in(e, (uint32_t)seg, *off, end, &iv) || iv.klen == 0 ||
		    iv.klen > ENGINE_KEY_MAX)
			return true; /* the end of what appenders finished */
		memcpy(key, data + *off + iv.hdr_len, iv.klen);
		if (!item_is_filler(data + *off, &iv) && item_is_live(e, key, iv.klen, seg, *off, gen, &v)) {
			d.key = key;
			d.klen = iv.klen;
			d.vlen = iv.vlen;
			d.size = iv.total;
			d.expires_at = seg_item_expiry(h, iv.exp_delta);
			d.written_at = created;
			d.cas = seg_cas_of(e, gen, v);
			d.fetched = slot_freq(v) > 0;
			d.cls = cls;
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&h->gen, memory_order_relaxed) != gen)
				return true; /* reused: nothing more of it is ours */
			if (!seg_expired(d.expires_at, now) && !fn(arg, &d))
				return false;
		}
		*off += item_span(iv.total, e->off_shift);
	}
	return true;
}

void
seg_dump(struct engine *eng, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg)
{
	struct seg_engine *e = seg_engine_of(eng);
	int64_t now = seg_now(e);
	uint32_t seg = (uint32_t)(cur->pos >> 32);
	uint32_t off = (uint32_t)cur->pos;

	for (; !cur->done; seg++, off = 0) {
		const struct seg_hdr *h;
		uint64_t gen;
		uint8_t st;

		if (seg >= e->nseg) {
			cur->done = true;
			break;
		}
		h = &e->hdr[seg];
		gen = atomic_load_explicit(&h->gen, memory_order_acquire);
		/* a segment resumed in a later life: its earlier items are gone */
		if (off != 0 && gen != cur->gen)
			continue;
		st = atomic_load_explicit(&h->state, memory_order_acquire);
		if ((st != SEG_SEALED && st != SEG_OPEN) || !seg_live_may_hold(e, (int32_t)seg))
			continue;
		if (!dump_segment(e, (int32_t)seg, gen, &off, fn, arg, now)) {
			cur->pos = (uint64_t)seg << 32 | off;
			cur->gen = gen;
			return;
		}
	}
	cur->pos = (uint64_t)seg << 32;
}
