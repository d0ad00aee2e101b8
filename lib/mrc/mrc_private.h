/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/mrc internals: the sampled keys (mrc_sampler.c) and the miniature
 * segment caches (mrc_mini.c, mrc_evict.c), which mrc.c ties together
 * under one lock. Everything is indexed by 32-bit ids into arrays
 * allocated once, so the memory is fixed at creation.
 */
#ifndef SEGCACHED_MRC_PRIVATE_H
#define SEGCACHED_MRC_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_spinlock.h>

#include "mrc/mrc.h"

#define MRC_NONE UINT32_MAX
#define MRC_TTL_UNKNOWN UINT32_MAX
/* The sampling hash space: engine_sample_hash() is 32 bits. */
#define MRC_HASH_SPACE (1ull << 32)

/* ---- sampled keys (mrc_sampler.c) ------------------------------------- */
struct mrc_key {
	uint32_t hash;       /* engine_sample_hash, < the threshold */
	uint32_t next;       /* index chain, or free list */
	uint32_t size;       /* the item's bytes when last seen */
	uint32_t klen;
	/* The TTL of its last set, seconds (0 = never expires), or
	 * MRC_TTL_UNKNOWN before the sample saw one: a miniature cache that
	 * refills the key (a get the server hit, it missed) stores it as the
	 * client would, with that TTL, not with what is left of the
	 * server's copy's (mrc_mini.c). */
	uint32_t ttl;
	uint64_t requests;
	int64_t first_seen;
	uint32_t loc[MRC_SIZES]; /* its item in each miniature cache, or MRC_NONE */
	char key[MRC_KEY_PREFIX];
};

struct mrc_sampler {
	uint64_t threshold;  /* keys whose hash is below are sampled */
	uint64_t start_threshold; /* where it started (the highest rate) */
	uint32_t max_keys, nkeys;
	/* Key records ever handed out, from the bottom: the ones above
	 * were never touched (mrc_sampler_init); loops over the keys stop
	 * here. */
	uint32_t used;
	uint32_t free;       /* free list of keys (below used) */
	uint32_t index_mask;
	uint32_t *index;     /* heads of chains by hash, as id + 1 (0: none) */
	struct mrc_key *keys;
};

int mrc_sampler_init(struct mrc_sampler *s, uint32_t max_keys, double max_rate);
void mrc_sampler_fini(struct mrc_sampler *s);
/* The key of a, or MRC_NONE. */
uint32_t mrc_sampler_find(const struct mrc_sampler *s, const struct engine_access *a);
/* Adds a's key (not in the sample, hash below the threshold) when there
 * is room; MRC_NONE when the sample is full (lower the threshold first). */
uint32_t mrc_sampler_add(struct mrc_sampler *s, const struct engine_access *a);
/* The threshold that drops about 1/64 of the keys (at least one): the
 * fixed-size variant's step. */
uint64_t mrc_sampler_next_threshold(const struct mrc_sampler *s);
/* Removes key id from the index and frees it (the caller has dropped it
 * from the caches). */
void mrc_sampler_remove(struct mrc_sampler *s, uint32_t id);

/* ---- miniature caches (mrc_mini.c, mrc_evict.c) ------------------------ */
/* TTL buckets as lib/seg's (seg/seg_hdr.h): 4 ranges of 256, 8 s to
 * 32768 s wide, and one for items that never expire. */
#define MINI_TTL_BUCKETS 1024
#define MINI_TTL_NEVER MINI_TTL_BUCKETS
#define MINI_TTL_CHAINS (MINI_TTL_BUCKETS + 1)

#define MINI_EXP_NEVER INT64_MAX
#define MINI_EXP_DELTA_MAX 127
#define MINI_OPEN_RING_MAX 64

/* An item record: 20 bytes, as a sample of N keys needs some 5N of them
 * (one per key in each cache that holds it, and dead ones between
 * collections): the smaller, the more keys 1% of -m samples. */
struct mini_item {
	uint32_t key;        /* sampled key id */
	uint32_t next;       /* next item of its segment, or free list */
	uint32_t seg : 24;   /* (a cache has at most 1 << 24 segments) */
	uint32_t freq : 8;
	uint32_t size : 31;
	uint32_t live : 1;
	uint32_t exp;        /* engine clock seconds, 0 = never (until 2106) */
};

/* The item records, one pool for all the caches: how many each needs
 * depends on the workload (a cache 1/8 of -m holds a fraction of the
 * sampled keys, one of 4x nearly all), so they share, and when the pool
 * runs out of free records after collection the sample sheds keys
 * (mrc.c), as it does when its key slots run out. */
struct mini_pool {
	struct mini_item *item;
	/* nfree counts the records never handed out (used..n, untouched
	 * zero pages until then, as the sampler's keys) and the free list's. */
	uint32_t n, nfree, free, used;
};

/* A free record (MRC_NONE when none is) and one given back
 * (mrc_mini_seg.c). */
uint32_t mini_pool_take(struct mini_pool *p);
void mini_pool_put(struct mini_pool *p, uint32_t i);

enum { MINI_FREE, MINI_OPEN, MINI_SEALED };

struct mini_seg {
	uint32_t head, tail;   /* items, in append order */
	uint32_t prev, next;   /* chain links; free list through next */
	uint64_t seq;          /* opening order (FIFO) */
	uint64_t touched;      /* when written: opened, or made a merge
				* destination (lib/seg's gen: merge's age) */
	int64_t exp_max;       /* latest expiry of an item in it; 0 = never */
	int64_t exp_base;      /* its expiry grid (seg_append.c), MINI_EXP_NEVER */
	uint8_t unit;          /* log2 of the grid's unit, seconds */
	uint64_t used, cap;    /* bytes appended / that it holds */
	uint64_t live;         /* bytes of live items */
	/* The segments' worth of memory it takes: 1, or more where an item
	 * larger than a whole segment grew it (only at a small rate, where a
	 * segment holds seg_size x rate bytes: mini_settle). cap is units
	 * times the size of one. */
	uint32_t units;
	/* Bytes its last item took past cap (an item lies whole in the
	 * segment it starts in): memory the cache owes (mini_settle). */
	uint64_t over;
	uint16_t chain;
	uint8_t state;
};

/* A TTL bucket's chain of segments, oldest first. Chains are taken from
 * a pool as TTL buckets get items (a chain holds a segment or more, so
 * the pool needs no more than there are segments). */
struct mini_chain {
	uint32_t head, tail, open;
	uint32_t merge_next;   /* where the next merge pass starts (seg_merge.c) */
	uint32_t sparse_next;  /* where the search for a sparse segment goes on */
	uint16_t tb;           /* its TTL bucket; free list through head */
	bool cold;             /* its last merge pass kept nothing */
	/* Bytes of its runs merged in a row with nothing read (mrc_evict.c
	 * merge_pass: how cold a chain is, at full scale). */
	uint64_t unread;
	/* Its next run as the last search for the sparsest chain saw it:
	 * live bytes per 1024 of memory held, and its oldest segment's
	 * `touched` (mrc_evict.c sparsest_chain). */
	uint64_t look_density, look_touched;
};
#define MINI_NO_CHAIN UINT16_MAX

struct mini {
	unsigned idx;          /* which size: loc[idx] of the keys */
	uint64_t bytes;        /* memory modelled, full scale */
	uint32_t nseg;         /* segments (as many as the server's at this size) */
	uint32_t usable;       /* less the merge reserve */
	uint32_t pool_low;     /* kept free ahead, as lib/seg's reclaim_ahead */
	/* Segments' worth of memory free (units, struct mini_seg), less the
	 * bytes sealed segments hold past their ends (owed: what is under
	 * a segment's worth); below 0 while eviction has yet to free what a
	 * segment took. The free list and the fresh segments (below) hold at
	 * least as many. */
	int64_t nfree;
	double owed;
	uint32_t free_seg;
	/* segments below it were handed out once; the rest, never touched,
	 * are free without being in the list (their calloc'd pages stay
	 * unresident until used: 256 segments a size at -m 16) */
	uint32_t fresh;
	uint64_t seq;
	uint32_t seg_bytes_full; /* the server's segment size */
	struct mini_seg *seg;
	struct mini_item *item;  /* = pool->item */
	struct mini_pool *pool;
	uint16_t chain_of[MINI_TTL_CHAINS]; /* TTL bucket -> chain, or MINI_NO_CHAIN */
	/* lib/seg's shared open segments: at most open_budget at once (a
	 * quarter of the segments, 2 to 64), the oldest sealed when one more
	 * opens; with all of them in use an item borrows another bucket's
	 * whose expiry grid holds it (seg_append.c). */
	uint32_t open_budget, ring_next;
	uint32_t ring[MINI_OPEN_RING_MAX];
	uint64_t ring_seq[MINI_OPEN_RING_MAX];
	struct mini_chain *chains;
	uint32_t nchains, free_chain;
	/* Where the next search for the sparsest chain starts: after the
	 * last chain chosen, so that equal chains take turns (seg_merge.c's
	 * merge_cursor). */
	uint32_t merge_cursor;
	enum engine_eviction eviction;
	uint64_t rng;
	/* Sampled gets and misses, scaled to the rate now: counts taken at
	 * a higher rate shrink with it (SHARDS' rescaling), or the keys that
	 * left the sample would weigh more than the ones in it. */
	double gets, misses;
	/* The same in each of the two epochs of the recent window (struct
	 * mrc's epoch: [epoch & 1] is the one under way), rescaled alike. */
	double win_gets[2], win_misses[2];
};

struct mrc {
	rte_spinlock_t lock;
	struct engine *engine;
	struct mrc_sampler s;
	struct mini_pool pool;
	struct mini mini[MRC_SIZES];
	int64_t last_sweep;
	uint64_t requests;
	/* The sampled gets the server itself missed, rescaled with the rate
	 * like the caches' counts: against the sample's share of the
	 * server's get_misses, what the keys outside the sample missed. */
	double server_misses;
	/* The bytes the sampled keys' sets wrote, rescaled with the rate,
	 * and the server's bytes of all sets (mrc_note_set_bytes): their
	 * ratio is the sample's share of the writes (mrc_seg_scale), taken
	 * with the sample's bytes when the total was given (noted_set_bytes). */
	double set_bytes, noted_set_bytes;
	uint64_t total_set_bytes;
	/* The recent window: two epochs, the one under way ([epoch & 1])
	 * and the last completed; an epoch is due to end once it has seen
	 * MRC_EPOCH_GETS sampled gets (rescaled with the rate), and ends at
	 * the next mrc_note_gets, which takes the server's counts there.
	 * win_server_misses: server_misses by epoch; start_gets/misses: the
	 * server's totals when each epoch began (0: at start). */
	uint32_t epoch;
	double epoch_gets;
	double win_server_misses[2];
	uint64_t start_gets[2], start_misses[2];
	uint64_t noted_gets, noted_misses;
	enum engine_eviction eviction;
	size_t memory;
	size_t server_memory;
	uint32_t floor_keys;   /* the floor it was sized with (mrc.c) */
};

/* Scale of the caches now: the sampling rate. */
static inline double
mrc_rate(const struct mrc *m)
{
	return (double)m->s.threshold / (double)MRC_HASH_SPACE;
}

/* The sample's share of the bytes written, clamped to within 8x of the
 * rate either way; the rate until the server's total is known. */
static inline double
mrc_write_share(const struct mrc *m)
{
	const double r = mrc_rate(m);
	double b;

	if (m->total_set_bytes == 0 || m->noted_set_bytes <= 0)
		return r;
	b = m->noted_set_bytes / (double)m->total_set_bytes;
	return b < r / 8 ? r / 8 : b > r * 8 ? r * 8 : b;
}

/* The scale of the segments a cache opens now. A cache that evicts
 * whole segments unmerged (FIFO, random) holds a window of the writes,
 * dead copies of rewritten keys and all: its segments scale with the
 * sample's share of the bytes written, which a few sampled keys with
 * large values rewritten often can put far above the rate. Merge keeps
 * the live items of the segments it passes, so what it holds is the
 * live items: its segments scale with the rate, the sample's share of
 * the keys. */
static inline double
mrc_seg_scale(const struct mrc *m)
{
	return m->eviction == ENGINE_EVICT_MERGE ? mrc_rate(m) : mrc_write_share(m);
}

int mini_init(struct mini *c, unsigned idx, uint64_t bytes, uint32_t nseg,
	      uint32_t seg_size, struct mini_pool *pool, enum engine_eviction ev);
/* Gives the records of the cache's dead items back to the pool (the
 * segments keep their bytes); returns how many. */
uint32_t mini_collect_dead(struct mini *c);
void mini_fini(struct mini *c);
/* A request of key id (keys: the sampler's array), at rate `rate`. */
void mini_access(struct mini *c, struct mrc_key *keys, uint32_t id,
		 const struct engine_access *a, double rate);
/* The rate dropped by `factor` (< 1): every segment's size and its dead
 * bytes shrink with it, as its live bytes do when keys leave the sample
 * (mini_drop), so that segments opened at a higher rate hold their share. */
void mini_rescale(struct mini *c, double factor);
/* Drops key id's item (the key left the sample). */
void mini_drop(struct mini *c, struct mrc_key *keys, uint32_t id);
/* Proactive expiry: frees the segments at chain heads that have expired. */
void mini_expire(struct mini *c, struct mrc_key *keys, int64_t now);
/* Frees the segment (its items leave the cache). */
void mini_free_seg(struct mini *c, struct mrc_key *keys, uint32_t seg);
/* One eviction by the policy (mrc_evict.c); false when nothing could be. */
bool mini_evict(struct mini *c, struct mrc_key *keys, int64_t now);
/* The TTL bucket of an item expiring at exp (0 = never). */
unsigned mini_ttl_bucket(int64_t exp, int64_t now);
/* Unlinks segment seg from its chain. */
void mini_chain_remove(struct mini *c, uint32_t seg);
/* A free segment of one unit, or MRC_NONE (none free, or a debt). */
uint32_t mini_pop_free(struct mini *c);
/* A segment filled past its end (used > cap: its last item lies whole
 * in it) takes the memory it holds: it grows by the units its bytes fill
 * (an item larger than a segment, at a small rate), and what is past
 * those, under a unit, is owed (a unit taken from the free ones for each
 * unit's worth owed). Carried over into the next segment instead, the
 * bytes were dead there to merge, which freed them for nothing, as it
 * did whole segments of a large item's bytes. Units are taken when none
 * is free (nfree < 0). Returns the units it grew by. */
uint32_t mini_settle(struct mini *c, uint32_t seg);
/* Gives back what freeing segment seg frees: its units and its debt. */
void mini_repay(struct mini *c, uint32_t seg);

/* The size of one of segment h's units (mrc_mini_seg.c, as the
 * functions below: called by the cache and its eviction alike). */
uint64_t mini_unit(const struct mini_seg *h);

/* The cache's random numbers (xorshift64): the random policy's victims,
 * the frequency counter's probabilistic bumps, merge's cut at an item
 * that straddles the bytes it may keep. */
uint64_t mini_rand(struct mini *c);

#endif
