/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The bulk-chaining hash table: 64-byte buckets of eight 8-byte slots.
 * Slot 0 of a head bucket is its info word (the writers' lock); item slots
 * are 1..7 of the head and 0..7 of each overflow bucket; slot 7 of a full
 * bucket becomes the link to the next one. Overflow buckets are carved
 * from heap segments, so long chains grow into the same memory budget as
 * the items: memory goes where the workload needs it (tiny objects need
 * many slots, large ones few); the head array itself grows with the
 * objects, outside -m (below, seg_hash_grow.c). The segment is
 * handed in by the caller (seg_hash_take_bucket): taking one may evict,
 * which unlinks through this file, so that is done above it.
 *
 * Readers never lock: they load slots atomically and validate what they
 * read (seg_read.c). Writers hold the head bucket's lock for a few slot
 * stores. When a chain grows, the item in the last slot moves into the
 * new bucket before the link replaces it, so a concurrent reader sees it
 * in one place or the other. When an item leaves, the chain's last item
 * moves into the hole and an emptied last bucket goes back to a free list
 * (chains stay packed; the table holds what its items need now, not the
 * most a chain ever held: that was a fifth of a small-object heap). A
 * reader can miss an item that moves behind its back, so moves count in
 * the info word (a seqlock) and a reader that found nothing while it
 * changed looks again.
 *
 * The table grows online by linear hashing (seg_table.h, seg_hash_grow.c):
 * the info word that locks and counts moves is the stripe's, the head
 * bucket of the starting table that a key's chain descends from (slot 0
 * of a head bucket added by growth is unused). A writer locks k->head, the
 * stripe, and resolves its chain under that lock.
 */
#include <rte_hash_crc.h>
#include <rte_prefetch.h>

#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"

#define HASH_SEED 0x5e6cac3du
#define TAG_SEED 0x9e3779b9u

/* rte_hash_crc() over the key, with loads that do not assume alignment
 * (keys sit at any byte offset in a segment or a request buffer). */
static inline __attribute__((hot)) uint32_t
key_crc(const uint8_t *p, uint32_t len, uint32_t h)
{
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		h = rte_hash_crc_8byte(v, h);
	}
	if (len >= 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		h = rte_hash_crc_4byte(v, h);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t v;

		memcpy(&v, p, 2);
		h = rte_hash_crc_2byte(v, h);
		p += 2;
		len -= 2;
	}
	if (len)
		h = rte_hash_crc_1byte(*p, h);
	return h;
}

__attribute__((hot)) void
seg_key_init(const struct seg_engine *e, struct seg_key *k, const void *key, size_t klen)
{
	uint32_t h = key_crc(key, (uint32_t)klen, HASH_SEED);
	/* The tag comes from a remix of the same hash, so two keys sharing a
	 * bucket share a tag with probability 1/4095 only. */
	uint64_t tag = rte_hash_crc_4byte(h, TAG_SEED) & SLOT_TAG_MASK;

	k->key = key;
	k->klen = (uint32_t)klen;
	k->hash = h;
	k->tag = tag ? tag : 1;
	k->head = &e->table[h & e->table_mask];
}

uint32_t
seg_hash_of(const void *key, size_t klen)
{
	return key_crc(key, (uint32_t)klen, HASH_SEED);
}

struct seg_bucket *
seg_hash_stripe(const struct seg_engine *e, const struct seg_bucket *b)
{
	return &e->table[(uint64_t)(b - e->table) & e->table_mask];
}

uint64_t
seg_hash_buckets(const struct seg_engine *e)
{
	return seg_geom_buckets(atomic_load_explicit(&e->geo.geom, memory_order_acquire));
}

uint64_t
seg_hash_fingerprint(void)
{
	static const char probe[] = "segcached hash fingerprint";
	uint32_t h = key_crc((const uint8_t *)probe, sizeof(probe) - 1, HASH_SEED);

	return (uint64_t)h << 32 | rte_hash_crc_4byte(h, TAG_SEED);
}

void
seg_bucket_lock(struct seg_bucket *head)
{
	_Atomic uint64_t *info = &head->slot[0];
	unsigned spins = 0;

	for (;;) {
		uint64_t old = atomic_fetch_or_explicit(info, BUCKET_INFO_LOCK,
							memory_order_acquire);

		if (!(old & BUCKET_INFO_LOCK))
			return;
		while (atomic_load_explicit(info, memory_order_relaxed) & BUCKET_INFO_LOCK)
			seg_relax(&spins);
	}
}

void
seg_bucket_unlock(struct seg_bucket *head)
{
	atomic_fetch_and_explicit(&head->slot[0], ~BUCKET_INFO_LOCK, memory_order_release);
}

static bool
key_at(struct seg_engine *e, uint64_t v, const struct seg_key *k)
{
	const uint8_t *p = seg_item_at(e, v);
	struct item_view iv;

	if (!seg_parse_slot(e, v, &iv))
		return false;
	return iv.klen == k->klen && !seg_key_differs(p + iv.hdr_len, k->key, k->klen);
}

_Atomic uint64_t *
seg_hash_find_locked(struct seg_engine *e, const struct seg_key *k)
{
	struct seg_chain_iter it;
	_Atomic uint64_t *slot;
	uint64_t v;

	seg_iter_init(&it, seg_hash_chain(e, k));
	while ((slot = seg_iter_next(e, &it, &v)))
		if (v && slot_tag(v) == k->tag && key_at(e, v, k))
			return slot;
	return NULL;
}

_Atomic uint64_t *
seg_hash_empty_slot_locked(struct seg_engine *e, const struct seg_key *k,
			   uint64_t *spare)
{
	struct seg_chain_iter it;
	_Atomic uint64_t *slot;
	struct seg_bucket *nb;
	uint64_t v;

	seg_iter_init(&it, seg_hash_chain(e, k));
	while ((slot = seg_iter_next(e, &it, &v)))
		if (v == 0)
			return slot;
	if (*spare == 0)
		return NULL;
	/* Extend the chain after its last bucket (it.b): the last slot's item
	 * moves first, then the link replaces it (release), so readers find
	 * the item either way. */
	nb = seg_hash_link_target(e, *spare);
	atomic_store_explicit(&nb->slot[0],
			      atomic_load_explicit(&it.b->slot[BUCKET_SLOTS - 1],
						   memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&it.b->slot[BUCKET_SLOTS - 1], *spare, memory_order_release);
	*spare = 0;
	atomic_fetch_add_explicit(&e->ovf_used, 1, memory_order_relaxed);
	return &nb->slot[1];
}

_Atomic uint64_t *
seg_hash_find_loc_locked(struct seg_engine *e, const struct seg_key *k,
			 uint32_t seg, uint32_t off_units)
{
	const uint64_t loc = (uint64_t)seg << SLOT_SEG_SHIFT | off_units;
	struct seg_chain_iter it;
	_Atomic uint64_t *slot;
	uint64_t v;

	seg_iter_init(&it, seg_hash_chain(e, k));
	while ((slot = seg_iter_next(e, &it, &v)))
		if (v && slot_tag(v) == k->tag && (v & SLOT_LOC_MASK) == loc)
			return slot;
	return NULL;
}

__attribute__((hot)) bool
seg_hash_has_room(const struct seg_engine *e, const struct seg_key *k)
{
	struct seg_chain_iter it;
	uint64_t v;

	bool room = false;

	seg_iter_init(&it, seg_hash_chain(e, k));
	while (seg_iter_next(e, &it, &v)) {
		if (v != 0 && slot_tag(v) == k->tag) { /* maybe our key */
			/* The set's link_item compares this item's key under the
			 * lock: a miss there comes after the item is written, one
			 * dependent miss after the bucket's. Prefetched now, it
			 * loads while the item is reserved and written. A stale
			 * slot only costs the prefetch: the heap stays mapped. */
			rte_prefetch0(seg_item_at(e, v));
			return true;
		}
		/* An empty slot is room, but the key's item may be further on
		 * (a hole left by a removal): walk on to prefetch it. Not an
		 * extra miss: link_item walks the same buckets for the key. */
		room |= v == 0;
	}
	return room;
}

/* Seqlock write side: odd while a chain is rearranged. The release fence
 * orders the odd count before the slot stores that follow. */
void
seg_hash_moves_begin(struct seg_bucket *head)
{
	atomic_fetch_add_explicit(&head->slot[0], BUCKET_INFO_MOVE, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

void
seg_hash_moves_end(struct seg_bucket *head)
{
	atomic_fetch_add_explicit(&head->slot[0], BUCKET_INFO_MOVE, memory_order_release);
}

/* Puts an empty overflow bucket (named by its link value) on the free
 * list. A reader still inside it sees empty slots (or, once reused,
 * another chain's items, which never match its key). */
static void
ovf_push(struct seg_engine *e, uint64_t link)
{
	struct seg_bucket *b = seg_hash_link_target(e, link);

	seg_spin_lock(&e->ovf_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	atomic_store_explicit(&b->slot[BUCKET_SLOTS - 1], 0, memory_order_relaxed);
	atomic_store_explicit(&b->slot[0], e->ovf_free, memory_order_relaxed);
	e->ovf_free = link;
	seg_spin_unlock(&e->ovf_lock);
	atomic_fetch_add_explicit(&e->ovf_free_count, 1, memory_order_relaxed);
}

/* An overflow bucket leaves its chain. */
static void
ovf_free(struct seg_engine *e, uint64_t link)
{
	ovf_push(e, link);
	atomic_fetch_sub_explicit(&e->ovf_used, 1, memory_order_relaxed);
}

void
seg_hash_unreserve_bucket(struct seg_engine *e, uint64_t link)
{
	ovf_push(e, link);
}

void
seg_hash_ovf_release(struct seg_engine *e, uint64_t link)
{
	ovf_free(e, link);
}

static bool
bucket_empty(const struct seg_bucket *b)
{
	for (unsigned i = 0; i < BUCKET_SLOTS; i++)
		if (atomic_load_explicit(&b->slot[i], memory_order_relaxed))
			return false;
	return true;
}

/* The chain holding slot, under its stripe's lock. Before any growth
 * every chain is its stripe's; after, the item's key says. */
static struct seg_bucket *
chain_of_slot(struct seg_engine *e, struct seg_bucket *stripe, _Atomic uint64_t *slot)
{
	const uint64_t g = atomic_load_explicit(&e->geo.geom, memory_order_acquire);
	uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
	const uint8_t *p = seg_item_at(e, v);
	struct item_view iv;

	if (seg_geom_buckets(g) == e->table_mask + 1 || !seg_parse_slot(e, v, &iv))
		return stripe;
	return &e->table[seg_geom_index(g, key_crc(p + iv.hdr_len, iv.klen, HASH_SEED))];
}

static void remove_in_chain(struct seg_engine *e, struct seg_bucket *stripe,
			    struct seg_bucket *head, _Atomic uint64_t *slot);

void
seg_hash_remove_locked(struct seg_engine *e, struct seg_bucket *head, _Atomic uint64_t *slot)
{
	struct seg_bucket *stripe = seg_hash_stripe(e, head);

	remove_in_chain(e, stripe, chain_of_slot(e, stripe, slot), slot);
}

static void
remove_in_chain(struct seg_engine *e, struct seg_bucket *stripe, struct seg_bucket *head,
		_Atomic uint64_t *slot)
{
	struct seg_chain_iter it;
	struct seg_bucket *tail = head, *before_tail = NULL;
	_Atomic uint64_t *s, *last = NULL;
	uint64_t v;
	bool past = false, last_after = false, moving = false;

	/* The chain's last item other than slot's, and its last bucket. */
	seg_iter_init(&it, head);
	while ((s = seg_iter_next(e, &it, &v))) {
		if (it.b != tail) {
			before_tail = tail;
			tail = it.b;
		}
		if (s == slot) {
			past = true;
		} else if (v) {
			last = s;
			last_after = past;
		}
	}
	if (last && last_after) {
		/* The copy first, then the clear: a reader sees the item twice
		 * or, having passed the hole, not at all (and then retries). */
		seg_hash_moves_begin(stripe);
		moving = true;
		atomic_store_explicit(slot, atomic_load_explicit(last, memory_order_relaxed),
				      memory_order_release);
		atomic_store_explicit(last, 0, memory_order_release);
	} else {
		atomic_store_explicit(slot, 0, memory_order_release);
	}
	if (tail != head && bucket_empty(tail)) {
		uint64_t link = atomic_load_explicit(&before_tail->slot[BUCKET_SLOTS - 1],
						     memory_order_relaxed);

		if (!moving)
			seg_hash_moves_begin(stripe);
		moving = true;
		atomic_store_explicit(&before_tail->slot[BUCKET_SLOTS - 1], 0,
				      memory_order_release);
		ovf_free(e, link);
	}
	if (moving)
		seg_hash_moves_end(stripe);
}

bool
seg_hash_maybe_linked(struct seg_engine *e, const struct seg_key *k, uint32_t seg,
		      uint32_t off_units)
{
	const uint64_t moves = seg_hash_moves(k->head);

	/* the locked lookup's walk reads each slot once (acquire), as a
	 * reader's does; the move count says whether it saw the chain whole */
	return seg_hash_find_loc_locked(e, k, seg, off_units) != NULL ||
	       seg_hash_moved_since(k->head, moves);
}

uint64_t
seg_hash_unlink_loc(struct seg_engine *e, const struct seg_key *k, uint32_t seg,
		    uint32_t off_units, uint64_t gen, bool *locked)
{
	_Atomic uint64_t *slot;
	uint64_t v = 0;

	*locked = seg_hash_maybe_linked(e, k, seg, off_units);
	if (!*locked)
		return 0;
	seg_bucket_lock(k->head);
	slot = seg_hash_find_loc_locked(e, k, seg, off_units);
	/* Under the bucket lock a linked item's segment cannot be freed, so
	 * its gen is stable here: equal means the very item the caller saw. */
	if (slot && atomic_load_explicit(&e->hdr[seg].gen, memory_order_relaxed) == gen) {
		v = atomic_load_explicit(slot, memory_order_relaxed);
		remove_in_chain(e, k->head, seg_hash_chain(e, k), slot);
		seg_account_remove(e, v);
	}
	seg_bucket_unlock(k->head);
	return v;
}

uint64_t
seg_hash_take_bucket(struct seg_engine *e, struct seg_worker *w, int32_t *fresh)
{
	const uint32_t per_seg = e->seg_size / sizeof(struct seg_bucket);
	uint64_t link = 0;

	seg_spin_lock(&e->ovf_lock);
	W_COUNT(w, lock_segment);
	if (e->ovf_free) {
		link = e->ovf_free;
		e->ovf_free = atomic_load_explicit(&seg_hash_link_target(e, link)->slot[0],
						   memory_order_relaxed);
		seg_spin_unlock(&e->ovf_lock);
		atomic_fetch_sub_explicit(&e->ovf_free_count, 1, memory_order_relaxed);
		return link;
	}
	if (e->ovf_seg == SEG_NONE || e->ovf_next == per_seg) {
		if (*fresh != SEG_NONE) {
			atomic_store_explicit(&e->hdr[*fresh].state, SEG_HASH,
					      memory_order_release);
			atomic_fetch_add_explicit(&e->ovf_segs, 1, memory_order_relaxed);
			e->ovf_seg = *fresh;
			e->ovf_next = 0;
			*fresh = SEG_NONE;
		}
	}
	if (e->ovf_seg != SEG_NONE && e->ovf_next < per_seg)
		link = slot_make(0, 1, (uint32_t)e->ovf_seg, e->ovf_next++);
	seg_spin_unlock(&e->ovf_lock);
	return link;
}

void
seg_hash_clear_all(struct seg_engine *e)
{
	/* Buckets in use grow meanwhile (a split moves items from a chain
	 * cleared already to a new one, never from one not cleared yet into a
	 * bucket below h): re-read the count each turn. */
	for (uint64_t h = 0; h < seg_hash_buckets(e); h++) {
		struct seg_bucket *head = &e->table[h];
		struct seg_bucket *stripe = seg_hash_stripe(e, head);
		struct seg_chain_iter it;
		_Atomic uint64_t *slot;
		uint64_t v, link;

		seg_bucket_lock(stripe);
		atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
		seg_iter_init(&it, head);
		while ((slot = seg_iter_next(e, &it, &v))) {
			if (v) {
				atomic_store_explicit(slot, 0, memory_order_release);
				seg_account_remove(e, v);
			}
		}
		/* The emptied overflow buckets go back to the free list. */
		link = atomic_load_explicit(&head->slot[BUCKET_SLOTS - 1], memory_order_relaxed);
		if (slot_is_link(link)) {
			seg_hash_moves_begin(stripe);
			atomic_store_explicit(&head->slot[BUCKET_SLOTS - 1], 0,
					      memory_order_release);
			while (slot_is_link(link)) {
				uint64_t next = atomic_load_explicit(
					&seg_hash_link_target(e, link)->slot[BUCKET_SLOTS - 1],
					memory_order_relaxed);

				ovf_free(e, link);
				link = next;
			}
			seg_hash_moves_end(stripe);
		}
		seg_bucket_unlock(stripe);
	}
}
