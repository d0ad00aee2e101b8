/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Test-only access to lib/seg (see seg_test.h).
 */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seg/seg_chunk.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_read.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"
#include "seg/seg_test.h"

seg_test_hook_fn seg_test_hook;
void *seg_test_hook_arg;

void
seg_test_set_hook(seg_test_hook_fn fn, void *arg)
{
	seg_test_hook_arg = arg;
	seg_test_hook = fn;
}

void
seg_test_own_open(struct engine_worker *w)
{
	((struct seg_worker *)w)->own_always = true;
}

unsigned
seg_test_ref_slot(unsigned tb)
{
	return seg_ref_slot(tb);
}

int
seg_test_check(struct engine *eng, struct seg_census *c, char *err, size_t errlen)
{
	struct seg_engine *e = seg_engine_of(eng);
	uint32_t *linked = calloc(e->nseg, sizeof(*linked));
	uint8_t *in_pool = calloc(e->nseg, 1);
	int rc = -1;

	memset(c, 0, sizeof(*c));
	c->merges_at_once = e->n_merge_at_once;
	c->merge_spares = e->merge_spares;
	if (!linked || !in_pool) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < e->pool_count; i++) {
		int32_t s = e->pool[i];

		if (s < 0 || (uint32_t)s >= e->nseg || in_pool[s]++) {
			snprintf(err, errlen, "pool entry %u: segment %d twice or out of range",
				 i, s);
			goto out;
		}
	}
	for (unsigned ci = 0; ci < TTL_CHAINS; ci++) {
		const struct seg_chain *ch = &e->chain[ci];
		int32_t prev = SEG_NONE;
		uint32_t len = 0;

		for (int32_t s = ch->head; s != SEG_NONE; prev = s, s = e->hdr[s].next) {
			uint8_t st = atomic_load(&e->hdr[s].state);

			if (++len > e->nseg || e->hdr[s].prev != prev ||
			    e->hdr[s].ttl_bucket != ci || (st != SEG_OPEN && st != SEG_SEALED)) {
				snprintf(err, errlen, "chain %u broken at segment %d (state %u)",
					 ci, s, st);
				goto out;
			}
		}
		if (ch->tail != prev) {
			snprintf(err, errlen, "chain %u: tail %d, last segment %d",
				 ci, ch->tail, prev);
			goto out;
		}
	}
	for (uint64_t b = 0; b < seg_hash_buckets(e); b++) {
		struct seg_chain_iter it;
		uint64_t v;

		seg_iter_init(&it, &e->table[b]);
		while (seg_iter_next(e, &it, &v)) {
			uint32_t s = slot_seg(v);
			uint8_t st;

			if (!v)
				continue;
			st = atomic_load(&e->hdr[s].state);
			if (s >= e->nseg || (st != SEG_OPEN && st != SEG_SEALED)) {
				snprintf(err, errlen, "a slot points into segment %u in state %u",
					 s, st);
				goto out;
			}
			if ((slot_off(v) << e->off_shift) >= seg_valid_end(e, (int32_t)s)) {
				snprintf(err, errlen, "a slot points past the end of segment %u",
					 s);
				goto out;
			}
			linked[s]++;
		}
	}
	for (uint32_t s = 0; s < e->nseg; s++) {
		const struct seg_hdr *h = &e->hdr[s];
		uint32_t writers = atomic_load(&h->writers);
		const int64_t live = seg_live_read(e, (int32_t)s);
		int32_t items = seg_live_items_of(live), bytes = seg_live_bytes_of(live);
		uint8_t st = atomic_load(&h->state);

		for (unsigned i = 0; i < e->max_workers && !writers; i++)
			if (atomic_load(&e->append_marks[i].seg) == (uint64_t)s + 1)
				writers = UINT32_MAX; /* an append mark on it */
		if (writers != 0) {
			snprintf(err, errlen, "segment %u (state %u): writers %u at rest%s", s, st,
				 writers, writers == UINT32_MAX ? " (an append mark)" : "");
			goto out;
		}
		if (st == SEG_HASH) {
			c->hash++;
			continue;
		}
		if (items < 0 || bytes < 0 || (uint32_t)items != linked[s]) {
			snprintf(err, errlen,
				 "segment %u (state %u): live_items %d, live_bytes %d, "
				 "%u slots point into it",
				 s, st, items, bytes, linked[s]);
			goto out;
		}
		c->live_items += (uint32_t)items;
		if (st == SEG_OPEN || st == SEG_SEALED) {
			const uint32_t end = seg_valid_end(e, (int32_t)s);
			struct item_view iv;
			uint32_t off = 0;

			for (; off < end && seg_parse_in(e, s, off, end, &iv);
			     off += item_span(iv.total, e->off_shift))
				c->items_written += !item_is_filler(seg_data(e, s) + off, &iv);
			/* Bytes that do not parse before the end: a gap no
			 * filler covers, where every walk (expiry, merge,
			 * dump, the restart save) stops short of the items
			 * after it. Only a chunk that ends the segment may
			 * leave fewer bytes than a filler there. */
			if (off < end && !(end == e->seg_size && end - off < SEG_FILLER_MIN)) {
				snprintf(err, errlen,
					 "segment %u (state %u): its walk stops at %u of %u "
					 "(bytes no item or filler covers)",
					 s, st, off, end);
				goto out;
			}
		}
		switch (st) {
		case SEG_FREE:
			c->free++;
			bool spare = false;

			for (unsigned i = 0; i < e->merge_spares; i++)
				spare |= e->merge_spare[i] == (int32_t)s;
			if (!in_pool[s] && (int32_t)s != e->merge_reserve && !spare) {
				snprintf(err, errlen, "free segment %u is not in the pool", s);
				goto out;
			}
			break;
		case SEG_OPEN:
			c->open++;
			break;
		case SEG_CONT:
			c->cont++;
			break;
		case SEG_SEALED:
			c->sealed++;
			c->sealed_empty += items == 0;
			break;
		default:
			c->reclaim++;
			break;
		}
		if (st != SEG_FREE && in_pool[s]) {
			snprintf(err, errlen, "segment %u in state %u is in the pool", s, st);
			goto out;
		}
	}
	/* Every continuation is named by one head's links, and only by one:
	 * none leaked, none shared. (in_pool is done with: reused to mark.) */
	uint32_t named = 0;

	memset(in_pool, 0, e->nseg * sizeof(*in_pool));
	for (uint32_t s = 0; s < e->nseg; s++) {
		uint8_t st = atomic_load(&e->hdr[s].state);

		if (st == SEG_CONT || st == SEG_FREE)
			continue;
		for (int32_t n = e->hdr[s].cont; n != SEG_NONE; n = e->hdr[n].cont, named++) {
			if (n < 0 || (uint32_t)n >= e->nseg ||
			    atomic_load(&e->hdr[n].state) != SEG_CONT || in_pool[n]++) {
				snprintf(err, errlen,
					 "segment %u (state %u) links continuation %d, which is "
					 "not one (or is named twice)", s, st, n);
				goto out;
			}
		}
	}
	if (named != c->cont) {
		snprintf(err, errlen, "%u continuation segments, %u named by a head", c->cont,
			 named);
		goto out;
	}
	rc = 0;
out:
	free(linked);
	free(in_pool);
	return rc;
}

int
seg_test_chain_stats(struct engine *eng, uint64_t *mean_x100, uint64_t *max)
{
	if (eng == NULL)
		return -1;
	seg_hash_chain_stats(seg_engine_of(eng), UINT64_MAX, 0, mean_x100, max);
	return 0;
}

int
seg_test_locate(struct engine *eng, const void *key, size_t klen, struct seg_test_place *p)
{
	struct seg_engine *e = seg_engine_of(eng);
	struct seg_key k;
	struct seg_read r;
	uint32_t wo;

	seg_key_init(e, &k, key, klen);
	if (seg_lookup(e, &k, true, &r) != FOUND)
		return -1;
	p->seg = slot_seg(r.v);
	p->off = slot_off(r.v) << e->off_shift;
	p->span = seg_item_span(e, r.v);
	wo = atomic_load(&e->hdr[p->seg].write_off);
	p->write_off = wo & ~SEG_WOFF_SEALED;
	p->sealed = !!(wo & SEG_WOFF_SEALED);
	return 0;
}

unsigned
seg_test_merge_spares(struct engine *eng, unsigned n)
{
	struct seg_engine *e = seg_engine_of(eng);
	unsigned moved = 0;

	pthread_mutex_lock(&e->evict_lock);
	while (moved < n &&
	       e->merge_spares < sizeof(e->merge_spare) / sizeof(e->merge_spare[0])) {
		int32_t seg = seg_pool_pop(e, NULL);

		if (seg == SEG_NONE)
			break;
		e->merge_spare[e->merge_spares++] = seg;
		moved++;
	}
	pthread_mutex_unlock(&e->evict_lock);
	return moved;
}
