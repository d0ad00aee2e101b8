/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The hash table (seg_hash.c): a key's hash, tag and chain, the bucket
 * lock, finding, filling and emptying a chain's slots under it, the move
 * count lock-free readers check, overflow buckets, and the walk over a
 * chain's item slots. Its geometry and growth are seg_table.h, its words
 * seg_slot.h.
 */
#ifndef SEGCACHED_SEG_HASH_H
#define SEGCACHED_SEG_HASH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seg/seg_slot.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"

struct seg_key {
	const void *key;
	uint32_t klen;
	uint32_t hash;  /* the table hash, which the sampler reuses (engine.h) */
	uint64_t tag;
	struct seg_bucket *head; /* the stripe: lock and move count (seg_table.h) */
};

void seg_key_init(const struct seg_engine *e, struct seg_key *k, const void *key, size_t klen);
static inline struct seg_bucket *
seg_hash_chain(const struct seg_engine *e, const struct seg_key *k)
{
	return &e->table[seg_geom_index(atomic_load_explicit(&e->geo.geom, memory_order_acquire),
					k->hash)];
}
void seg_bucket_lock(struct seg_bucket *head);
void seg_bucket_unlock(struct seg_bucket *head);
/* Under the bucket lock: the slot holding the key's item, or NULL. */
_Atomic uint64_t *seg_hash_find_locked(struct seg_engine *e, const struct seg_key *k);
/* Under the bucket lock: an empty item slot for k, extending the chain with
 * *spare when it is full (then *spare becomes 0). NULL if none. */
_Atomic uint64_t *seg_hash_empty_slot_locked(struct seg_engine *e, const struct seg_key *k,
					     uint64_t *spare);
/* Under the bucket lock: the slot that points at (seg, off), or NULL. */
_Atomic uint64_t *seg_hash_find_loc_locked(struct seg_engine *e, const struct seg_key *k,
					   uint32_t seg, uint32_t off_units);
/* Under the head bucket's lock: empties `slot`, keeping the chain packed
 * (its last item moves into the hole) and giving an emptied last overflow
 * bucket back to the free list, so the table holds as many buckets as its
 * items need now, not as many as the chain ever needed. */
void seg_hash_remove_locked(struct seg_engine *e, struct seg_bucket *head,
			    _Atomic uint64_t *slot);
/* The chain's move counter, for a lock-free reader (seqlock begin/check). */
static inline uint64_t
seg_hash_moves(const struct seg_bucket *head)
{
	return atomic_load_explicit(&head->slot[0], memory_order_acquire) & ~BUCKET_INFO_LOCK;
}
static inline bool
seg_hash_moved_since(const struct seg_bucket *head, uint64_t moves)
{
	atomic_thread_fence(memory_order_acquire);
	return (moves & BUCKET_INFO_MOVE) ||
	       (atomic_load_explicit(&head->slot[0], memory_order_relaxed) & ~BUCKET_INFO_LOCK) !=
		       moves;
}
/* Lock-free hint: has k's chain room (a slot k may own: its item prefetched)? */
bool seg_hash_has_room(const struct seg_engine *e, const struct seg_key *k);
/* Lock-free, as a reader looks: may a slot point at (seg, off)? False
 * only when k's chain was seen whole and unmoved without one. An item is
 * linked once in its segment's life and its place is never linked again
 * in that life (an overwrite or a merge points the slot elsewhere), so
 * false stays true until the segment is reused: a walk of a claimed
 * segment skips its dead copies, most of what an evicted segment holds,
 * without a lock RMW on their buckets' lines (issue 34). */
bool seg_hash_maybe_linked(struct seg_engine *e, const struct seg_key *k, uint32_t seg,
			   uint32_t off_units);
/* Clears the slot that points at (seg, off) if there is one and the
 * segment is still in the life `gen` (else the slot is a newer item at the
 * same place), and removes the item from the segment's live counts, under
 * the bucket lock, which it takes itself only where seg_hash_maybe_linked
 * (*locked says whether it did). Returns the removed slot value or 0. */
uint64_t seg_hash_unlink_loc(struct seg_engine *e, const struct seg_key *k, uint32_t seg,
			     uint32_t off_units, uint64_t gen, bool *locked);
/* One try at an overflow bucket, under ovf_lock: from the free list, or
 * carved from the current overflow segment, which *fresh (a free segment
 * the caller took, or SEG_NONE) replaces when it is used up (then *fresh
 * becomes SEG_NONE). 0 = none: the caller takes a segment (which may
 * evict, so never here) and tries again. */
uint64_t seg_hash_take_bucket(struct seg_engine *e, struct seg_worker *w, int32_t *fresh);
/* Gives back a bucket reserved and never linked (a worker's spare). */
void seg_hash_unreserve_bucket(struct seg_engine *e, uint64_t link);
/* Clears every item slot (flush_all). */
void seg_hash_clear_all(struct seg_engine *e);
/* A value that changes whenever the key hash or the tag function does
 * (a saved hash table is only valid under the same functions). */
uint64_t seg_hash_fingerprint(void);

/* The overflow bucket a link slot points to. */
static inline struct seg_bucket *
seg_hash_link_target(const struct seg_engine *e, uint64_t link)
{
	return (struct seg_bucket *)(seg_data(e, slot_seg(link)) +
				     (size_t)slot_off(link) * sizeof(struct seg_bucket));
}

/* Walks the item slots of a chain: slots 1..7 of the head bucket, 0..7 of
 * each overflow bucket, following the links in slot 7. Readers and
 * writers alike: loads are acquire, which pairs with the release stores
 * that publish items and links. */
struct seg_chain_iter {
	struct seg_bucket *b; /* after the walk: the chain's last bucket */
	unsigned i;
};

static inline void
seg_iter_init(struct seg_chain_iter *it, struct seg_bucket *head)
{
	it->b = head;
	it->i = 1;
}

/* The next item slot (its value in *v, 0 if empty), or NULL at the end. */
static inline _Atomic uint64_t *
seg_iter_next(const struct seg_engine *e, struct seg_chain_iter *it,
	      uint64_t *v)
{
	while (it->i < BUCKET_SLOTS) {
		_Atomic uint64_t *slot = &it->b->slot[it->i];

		*v = atomic_load_explicit(slot, memory_order_acquire);
		if (it->i == BUCKET_SLOTS - 1 && slot_is_link(*v)) {
			it->b = seg_hash_link_target(e, *v);
			it->i = 0;
			continue;
		}
		it->i++;
		return slot;
	}
	return NULL;
}

#endif /* SEGCACHED_SEG_HASH_H */
