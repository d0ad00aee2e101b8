/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The hash table's geometry and its online growth (linear hashing), for
 * seg_hash.c, seg_hash_grow.c and their callers. Included by
 * seg_struct.h (the engine holds a struct seg_table).
 *
 * The head array is reserved up to 2^max_power buckets at start (address
 * space only: pages are touched as buckets come into use) and
 * 2^n + split of them are in use. A key with hash h lives in chain
 * h mod 2^n, or h mod 2^(n+1) when that is below the split pointer. One
 * atomic word holds (n, split), so a reader sees both or neither.
 *
 * Locks and move counts stay with the 2^base_power buckets the table
 * started with (the stripes): bucket i's stripe is i mod 2^base_power, the
 * same for bucket i and the bucket i + 2^n it splits into. A writer holds
 * its key's stripe whatever the geometry does, and a split takes the same
 * stripe, so the chain a writer resolves under its lock stays its chain.
 */
#ifndef SEGCACHED_SEG_TABLE_H
#define SEGCACHED_SEG_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEG_GEOM_POWER_SHIFT 48
#define SEG_GEOM_SPLIT_MASK ((1ull << SEG_GEOM_POWER_SHIFT) - 1)
/* Growth past the starting table: at most 2^4 = 16 times its buckets
 * (engine_config.hash_grow picks 1, 2, 4, 8 or 16 times). */
#define SEG_HASH_GROW_POWERS 4u
#define SEG_HASH_MAX_POWER 32u

struct seg_table {
	_Atomic uint64_t geom;      /* n << SEG_GEOM_POWER_SHIFT | split */
	uint32_t base_power;        /* 2^base_power stripes: locks and move counts */
	uint32_t max_power;         /* buckets reserved: 2^max_power */
	_Atomic uint32_t splitting; /* one splitter at a time (a try-lock) */
	_Atomic uint64_t splits;    /* buckets split since start */
	_Atomic uint64_t sample_at; /* where the next chain-length sample starts */
	/* the last sample (seg_hash_chain_stats) and when it was taken */
	_Atomic uint64_t sampled_ns, sampled_mean_x100, sampled_max;
};

static inline uint64_t
seg_geom_make(uint64_t power, uint64_t split)
{
	return power << SEG_GEOM_POWER_SHIFT | split;
}
static inline uint32_t seg_geom_power(uint64_t g) { return (uint32_t)(g >> SEG_GEOM_POWER_SHIFT); }
static inline uint64_t seg_geom_split(uint64_t g) { return g & SEG_GEOM_SPLIT_MASK; }
/* Head buckets in use. */
static inline uint64_t
seg_geom_buckets(uint64_t g)
{
	return (1ull << seg_geom_power(g)) + seg_geom_split(g);
}
/* The geometry whose buckets in use are `buckets` (2^n <= buckets < 2^(n+1)). */
static inline uint64_t
seg_geom_of_buckets(uint64_t buckets)
{
	uint32_t n = 63u - (uint32_t)__builtin_clzll(buckets);

	return seg_geom_make(n, buckets - (1ull << n));
}
/* The chain of hash h. */
static inline uint64_t
seg_geom_index(uint64_t g, uint32_t h)
{
	const uint32_t n = seg_geom_power(g);
	uint64_t i = h & ((1ull << n) - 1);

	if (i < seg_geom_split(g))
		i = h & ((2ull << n) - 1);
	return i;
}

/* The powers of two engine_config.hash_grow lets the table grow by (it
 * is how many times the starting table the table may reach: 1, 2, 4, 8
 * or 16; 0 = 16), or -1 for any other value. */
static inline int
seg_hash_grow_powers(unsigned grow)
{
	if (grow == 0)
		return (int)SEG_HASH_GROW_POWERS;
	if ((grow & (grow - 1)) != 0 || grow > 1u << SEG_HASH_GROW_POWERS)
		return -1;
	return __builtin_ctz(grow);
}

/* The largest table a starting table of 2^base_power buckets grows to,
 * growing by at most 2^grow_powers (seg_hash_grow_powers()). */
static inline uint32_t
seg_hash_max_power(uint32_t base_power, uint32_t grow_powers)
{
	uint32_t p = base_power + grow_powers;

	return p > SEG_HASH_MAX_POWER ? (base_power > SEG_HASH_MAX_POWER ? base_power
									 : SEG_HASH_MAX_POWER)
				      : p;
}

struct seg_engine;
struct seg_worker;
struct seg_bucket;
struct seg_key;

/* seg_hash_chain(e, k) (seg_hash.h): the chain head k hashes to now
 * (acquire: a reader that loads it after the stripe's move count sees the
 * split that changed it). */
/* The stripe (lock and move count) of head bucket b. */
struct seg_bucket *seg_hash_stripe(const struct seg_engine *e, const struct seg_bucket *b);
/* Head buckets in use now. */
uint64_t seg_hash_buckets(const struct seg_engine *e);
/* The key hash (what seg_key_init puts in k->hash). */
uint32_t seg_hash_of(const void *key, size_t klen);
/* Seqlock write side on a stripe: odd while chains are rearranged. */
void seg_hash_moves_begin(struct seg_bucket *stripe);
void seg_hash_moves_end(struct seg_bucket *stripe);
/* Empties an overflow bucket that left its chain onto the free list. */
void seg_hash_ovf_release(struct seg_engine *e, uint64_t link);

/* ---- seg_hash_grow.c ---- */
/* Reserves the head array (2^max_power buckets of address space, the
 * starting table grown by 2^grow_powers) and sets the starting geometry.
 * 0, or -1 when the address space is not there. */
int seg_hash_table_init(struct seg_engine *e, uint32_t base_power, uint32_t grow_powers);
void seg_hash_table_free(struct seg_engine *e);
/* Bytes of the head array reserved (for munmap) and in use. */
uint64_t seg_hash_bytes(const struct seg_engine *e);
/* Whether the table is over its load (overflow buckets per head bucket)
 * and below its largest size: a split would shorten chains. */
bool seg_hash_wants_growth(const struct seg_engine *e);
/* Splits the chain at the split pointer, moving the items whose next hash
 * bit is set into the new head bucket. `links` are n overflow buckets the
 * caller reserved (taken from it as needed: *used says how many).
 * 1 split, 0 not now (another splitter, no growth wanted), -1 when the
 * split needs more than n reserved buckets (*used then says how many). */
int seg_hash_split(struct seg_engine *e, const uint64_t *links, unsigned n, unsigned *used);
/* Overflow buckets a split of the next chain would need at most (a
 * lock-free estimate: its overflow buckets now). */
unsigned seg_hash_split_estimate(const struct seg_engine *e);
/* Mean and max items per chain, over a sample of at most `sample` chains
 * (the next ones after the last sample); mean in hundredths. A sample is
 * taken at most every `every_ns` (0: now): stats may be read per request. */
void seg_hash_chain_stats(struct seg_engine *e, uint64_t sample, uint64_t every_ns,
			  uint64_t *mean_x100, uint64_t *max);
/* What ovf_used counts, for a split that linked or freed buckets. */
void seg_hash_ovf_used_add(struct seg_engine *e, int64_t n);

#endif /* SEGCACHED_SEG_TABLE_H */
