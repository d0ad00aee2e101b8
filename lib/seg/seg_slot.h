/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The hash table's words: an item slot (tag, read frequency and the
 * item's place: segment id and offset), a link slot, and the 64-byte
 * bucket of eight of them whose first slot in a head bucket is its lock.
 * The table itself is seg_hash.h and seg_table.h.
 */
#ifndef SEGCACHED_SEG_SLOT_H
#define SEGCACHED_SEG_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* An item slot packs | tag:12 | freq:8 | seg:24 | off:20 | (64 bits).
 * The tag is never 0, so a non-zero slot with tag 0 is a link to the next
 * bucket of the chain (overflow buckets chain through slot 7). Slot 0 of a
 * head bucket is the bucket info word (its lock). */
#define SLOT_TAG_SHIFT 52
#define SLOT_FREQ_SHIFT 44
#define SLOT_SEG_SHIFT 20
#define SLOT_OFF_MASK ((1ull << 20) - 1)
#define SLOT_SEG_MASK ((1ull << 24) - 1)
#define SLOT_FREQ_MASK 0xffull
#define SLOT_TAG_MASK 0xfffull
#define SLOT_LOC_MASK ((1ull << SLOT_FREQ_SHIFT) - 1) /* seg + off */
#define SLOT_NO_FREQ (~(SLOT_FREQ_MASK << SLOT_FREQ_SHIFT))

#define BUCKET_SLOTS 8
#define BUCKET_INFO_LOCK 1ull
/* The rest of the info word counts moves of items inside the chain (and
 * buckets leaving it), seqlock style: odd while a move is under way. A
 * lock-free reader that found nothing retries when it changed. */
#define BUCKET_INFO_MOVE 2ull

#define SEG_MAX_SEGMENTS (1u << 24)
#define SEG_OFF_UNITS (1u << 20)

static inline uint64_t
slot_make(uint64_t tag, uint64_t freq, uint32_t seg, uint32_t off_units)
{
	return tag << SLOT_TAG_SHIFT | freq << SLOT_FREQ_SHIFT |
	       (uint64_t)seg << SLOT_SEG_SHIFT | off_units;
}
static inline uint64_t slot_tag(uint64_t v) { return v >> SLOT_TAG_SHIFT; }
static inline unsigned slot_freq(uint64_t v) { return (v >> SLOT_FREQ_SHIFT) & SLOT_FREQ_MASK; }
static inline uint32_t slot_seg(uint64_t v) { return (v >> SLOT_SEG_SHIFT) & SLOT_SEG_MASK; }
static inline uint32_t slot_off(uint64_t v) { return v & SLOT_OFF_MASK; }
static inline bool slot_is_link(uint64_t v) { return v != 0 && slot_tag(v) == 0; }

/* The place bits of a slot value: its segment and offset. */
static inline uint64_t
seg_loc_of(uint64_t v)
{
	return v & SLOT_LOC_MASK;
}

struct seg_bucket {
	_Atomic uint64_t slot[BUCKET_SLOTS];
} __attribute__((aligned(64)));

#endif /* SEGCACHED_SEG_SLOT_H */
