/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A segment as the rest of lib/seg sees it from outside its bytes: its
 * states, its 64-byte header (struct seg_hdr: gen, expiry base, live
 * counts, write offset), the TTL chain it lies in (struct seg_chain, with
 * its lock and shared open segment), the TTL buckets' and expiry deltas'
 * geometry, and the per-worker append mark. The life cycle that changes
 * them is seg_segment.h; the bytes inside, seg_item.h.
 */
#ifndef SEGCACHED_SEG_HDR_H
#define SEGCACHED_SEG_HDR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "seg/seg_core.h"
#include "seg/seg_slot.h"

enum seg_state {
	SEG_FREE = 0,
	SEG_OPEN,    /* a worker appends to it */
	SEG_SEALED,  /* full or closed; in its TTL chain; evictable */
	SEG_RECLAIM, /* claimed by one thread that is expiring/evicting/merging it */
	SEG_HASH,    /* lent to the hash table as overflow buckets (never returned) */
	SEG_CONT,    /* holds the rest of a large item whose head segment names it
		      * (seg_append.c): in no chain, freed with that head */
};

#define SEG_NONE (-1)
/* Shared open segments: a quarter of the heap, 2 to SEG_OPEN_RING_MAX. */
#define SEG_OPEN_RING_MAX 64
/* write_off bit that closes a segment to appenders. */
#define SEG_WOFF_SEALED (1u << 31)

/* TTL buckets: 4 ranges of 256 buckets, 8 s, 128 s, 2048 s and 32768 s
 * wide (as Pelikan), plus one bucket for items that never expire. */
#define TTL_BUCKETS 1024
#define TTL_NEVER TTL_BUCKETS
#define TTL_CHAINS (TTL_BUCKETS + 1)
/* Items carry a 7-bit expiry delta in units of 1 s, 16 s, 256 s, 4096 s
 * (by range) above their segment's exp_base, so expiry is exact to the
 * second for TTLs under 2048 s and never late. */
#define EXP_DELTA_MAX 127
#define EXP_NEVER INT64_MAX

/* Two cache lines: what every read loads (gen twice, exp_base) changes
 * only per segment event; what appends and removals write per item sits
 * on the second line, so writers do not invalidate readers' copy. */
struct seg_hdr {
	_Atomic uint64_t gen;       /* new value on every open and free; see seg_ops.c */
	int64_t exp_base;           /* items expire at exp_base + (delta << unit_shift) */
	_Atomic uint8_t state;      /* enum seg_state */
	uint8_t unit_shift;         /* expiry delta unit, log2 seconds */
	uint16_t ttl_bucket;        /* chain it belongs to */
	int32_t prev, next;         /* chain links, under the chain's lock */
	int64_t create_at;
	/* An item larger than a segment (seg_append.c) starts at offset 0 of
	 * its head segment and goes on in the segments this links, in order:
	 * the next one, or SEG_NONE (every other segment). Written before the
	 * item is reachable, read lock-free (the head's gen vouches for it). */
	int32_t cont;

	_Atomic uint32_t write_off __attribute__((aligned(64))); /* bytes reserved;
								 * SEG_WOFF_SEALED closes it */
	_Atomic uint32_t writers;   /* live-count changes being applied (seg_live.c) */
	_Atomic int64_t live;       /* live items and bytes, seg_live_pack(); seg_live.c */
	_Atomic int64_t exp_max;    /* latest item expiry in the segment */
	/* another worker's bytes were met in this life: sharers reserve each
	 * item alone from then on (seg_chunk.c) */
	_Atomic bool sharers;
} __attribute__((aligned(64)));

/* A segment's live items and bytes in one word, so that one atomic add
 * moves both: items * 2^32 + bytes. Bytes are signed and always within
 * +-2^31 (a segment is at most 64 MiB), so the low word sign-extended is
 * the bytes and the rest the items, even while a batched delta has made
 * one of them negative for a moment (seg_live.c). */
static inline int64_t
seg_live_pack(int32_t items, int32_t bytes)
{
	return (int64_t)items * (INT64_C(1) << 32) + bytes;
}
static inline int32_t seg_live_bytes_of(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static inline int32_t
seg_live_items_of(int64_t v)
{
	return (int32_t)((v - seg_live_bytes_of(v)) / (INT64_C(1) << 32));
}

struct seg_chain {
	seg_spinlock_t lock;
	/* Under lock; head is stored with __atomic_store_n because the expiry
	 * sweep looks whether a chain is empty before taking the lock. */
	int32_t head, tail;
	int32_t merge_next; /* where the next merge pass starts, or SEG_NONE */
	uint64_t merge_gen; /* gen of merge_next when it was recorded */
	int32_t sparse_next; /* where the search for a sparse run goes on */
	uint64_t sparse_gen; /* gen of sparse_next when it was recorded */
	bool merge_cold; /* its last merge pass kept nothing (relaxed __atomic) */
	/* The open segment that workers without a private one for this TTL
	 * bucket share: seg_open_pack(), 0 = none; replaced under open_lock. */
	seg_spinlock_t open_lock;
	_Atomic uint64_t shared_open;
	/* a worker is taking the segment that replaces shared_open: the
	 * other sharers wait for it instead of each taking one (and all but
	 * one giving it back) */
	_Atomic bool opening;
} __attribute__((aligned(64)));

/* A shared open segment as one word: the low 40 bits of its gen (gens
 * only grow; 2^40 segment events do not happen) and its id. */
#define SEG_OPEN_GEN_BITS 40
static inline uint64_t
seg_open_pack(int32_t seg, uint64_t gen)
{
	return gen << (64 - SEG_OPEN_GEN_BITS) | (uint32_t)seg;
}
static inline int32_t seg_open_seg(uint64_t packed) { return (int32_t)(packed & SLOT_SEG_MASK); }
static inline bool
seg_open_gen_is(uint64_t packed, uint64_t gen)
{
	return packed >> (64 - SEG_OPEN_GEN_BITS) ==
	       (gen & ((1ull << SEG_OPEN_GEN_BITS) - 1));
}

/* The segment a worker appends to now, +1 (0: none); drains wait for it. */
struct seg_append_mark {
	_Atomic uint64_t seg;
} __attribute__((aligned(64)));

/* Absolute expiry of an item with this delta in segment h; 0 = never.
 * Lock-free readers call this on a header that may be reinitialised under
 * them (their generation check discards the result then): exp_base is read
 * once, or a reopening as a never-expiring segment between two reads
 * would add to EXP_NEVER (signed overflow, found by UBSan in the torture
 * test). */
static inline int64_t
seg_item_expiry(const struct seg_hdr *h, uint32_t exp_delta)
{
	int64_t base = __atomic_load_n(&h->exp_base, __ATOMIC_RELAXED);

	return base == EXP_NEVER ? 0
				 : base + ((int64_t)exp_delta
					   << __atomic_load_n(&h->unit_shift, __ATOMIC_RELAXED));
}

static inline bool
seg_expired(int64_t expires_at, int64_t now)
{
	return expires_at != 0 && expires_at <= now;
}

#endif /* SEGCACHED_SEG_HDR_H */
