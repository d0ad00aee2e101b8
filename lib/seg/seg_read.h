/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The lock-free read of an item (seg_read.c): a read's snapshot of the
 * item (struct seg_read) and where its value goes, the cas unique, the
 * check that everything read was consistent, the lookup in a chain, read
 * counting, and the get's read with the get's own item:
 * seg_read_item_into() fills the caller's engine_item where a batch
 * sink's value_buf is handed it, so that a batched get fills the item
 * once, not twice (once for value_buf, once for done: ~20 instructions a
 * get).
 */
#ifndef SEGCACHED_SEG_READ_H
#define SEGCACHED_SEG_READ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "seg/seg_item.h"
#include "seg/seg_slot.h"
#include "seg/seg_struct.h"

struct seg_key;

/* An item's place (segment and offset) in its slot value; its cas unique
 * (segment gen << 20 | offset); its bytes. */
struct seg_read {
	_Atomic uint64_t *slot;
	uint64_t v;
	uint64_t gen;
	const uint8_t *item;
	struct item_view iv;
	int64_t expires_at;
	bool copied; /* the value is in the read's destination */
};

/* Where a read copies the value: the caller's one buffer (get), or the
 * buffer a batch sink gives once the item's size is known (get_batch);
 * neither: meta data only. */
struct read_dst {
	void *buf;
	size_t cap;
	const struct engine_get_sink *sink;
	unsigned idx;
};

/* A cas unique keeps the offset's bits and the low SEG_CAS_GEN_BITS of
 * the gen: gens from 2^SEG_CAS_GEN_BITS on would repeat cas values. */
#define SEG_CAS_OFF_BITS 20
#define SEG_CAS_GEN_BITS (64 - SEG_CAS_OFF_BITS)
_Static_assert(SEG_OFF_UNITS == 1u << SEG_CAS_OFF_BITS, "a cas holds every offset");

static inline uint64_t
seg_cas_of(const struct seg_engine *e, uint64_t gen, uint64_t v)
{
	return e->cas_enabled ? gen << SEG_CAS_OFF_BITS | slot_off(v) : 0;
}

enum seg_read_res { FOUND, NOT_FOUND, RETRY };

/* Was everything read from r's item consistent? */
static inline bool
seg_read_valid(const struct seg_engine *e, const struct seg_read *r)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->hdr[slot_seg(r->v)].gen, memory_order_relaxed) == r->gen;
}

void seg_fill_item(const struct seg_engine *e, const struct seg_read *r, struct engine_item *it);
/* The item of k in its chain, read lock-free (or under the bucket lock):
 * FOUND, NOT_FOUND, or RETRY when it changed under the reader. */
int seg_lookup(struct seg_engine *e, const struct seg_key *k, bool locked, struct seg_read *r);
void seg_bump_freq(struct seg_worker *w, const struct seg_read *r);
/* A consistent snapshot of the live item for k, with its value copied to
 * dst when it is wanted there (r->copied). Returns FOUND or NOT_FOUND
 * (missing or expired; *expired tells which). */
int seg_read_item(struct seg_worker *w, const struct seg_key *k, int64_t now,
		  const struct read_dst *dst, struct seg_read *r, bool *expired);

/* seg_read_item(), and with a sink in dst: *it is the item its value_buf
 * was handed, filled from the read returned (when FOUND). */
int seg_read_item_into(struct seg_worker *w, const struct seg_key *k, int64_t now,
		       const struct read_dst *dst, struct engine_item *it, struct seg_read *r,
		       bool *expired);

#endif /* SEGCACHED_SEG_READ_H */
