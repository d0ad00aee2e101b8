/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The access stream of sampled keys: what an engine hands to an attached
 * sampler (lib/mrc) for each keyed request of a key whose sampling hash
 * falls below the engine's sample_below, and the hash and the one check
 * that decide it. lib/seg's operations report here; lib/mrc reads it.
 */
#ifndef SEGCACHED_ENGINE_ACCESS_H
#define SEGCACHED_ENGINE_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A keyed request of a sampled key, as the engine saw it (lib/mrc's
 * miniature caches replay these): which operation, whether the key was
 * there, the item's bytes in the heap and its expiry. */
enum engine_access_op {
	ENGINE_ACCESS_GET,    /* get/gets/gat/gats and batched gets */
	ENGINE_ACCESS_SET,    /* a stored item (set/add/replace/cas/append/prepend) */
	ENGINE_ACCESS_DELETE, /* the key's item is gone (delete, or a store that
			       * removed it: expired at once, too large) */
};

struct engine_access {
	const void *key;
	uint32_t klen;
	uint32_t sample_hash; /* engine_sample_hash() of the engine's key hash */
	uint32_t size;        /* the item's bytes in the heap (hits and sets) */
	bool hit;             /* GET: found; DELETE: there was an item */
	uint8_t op;           /* enum engine_access_op */
	int64_t expires_at;   /* hits and sets: 0 = never */
	int64_t now;          /* engine clock */
};

/* The sampling hash of a key from the hash the engine computed for its
 * table anyway: a multiplicative remix, so that sampling by the high
 * bits does not follow the table's bucket bits. */
static inline uint32_t
engine_sample_hash(uint32_t key_hash)
{
	return key_hash * 2654435761u;
}

/* Whether a key of this hash is sampled: the one comparison that an
 * unsampled key pays. */
static inline bool
engine_sampled(const struct engine *e, uint32_t key_hash)
{
	return engine_sample_hash(key_hash) < __atomic_load_n(&e->sample_below, __ATOMIC_RELAXED);
}

/* Attaches a sampler (before workers serve requests); fn NULL detaches. */
static inline void
engine_attach_sampler(struct engine *e, engine_sample_fn fn, void *arg, uint64_t below)
{
	e->sample_fn = fn;
	e->sample_arg = arg;
	__atomic_store_n(&e->sample_below, fn ? below : 0, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_ACCESS_H */
