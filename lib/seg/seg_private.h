/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/seg internals shared by its files. Layout of the engine's memory:
 *
 *   hash table   2^n + split head buckets of 64 bytes, growing (mmap, DRAM)
 *   seg headers  one 64-byte struct seg_hdr per segment (DRAM)
 *   heap         nseg segments of seg_size bytes (caller region or mmap)
 *
 * Nothing inside the heap holds an absolute pointer: the hash table names
 * items by (segment id, offset), overflow buckets by (segment id, index),
 * so a heap can be mapped at another address after a restart.
 *
 * One file per job, in layers: each file calls only files below it (its
 * declarations are in the section below that names it, in this order):
 *
 *   seg_restart_load.c  warm restart: load and validate a saved state
 *   seg_restart_check.c warm restart: the verdict on its header and images
 *   seg_restart.c       warm restart: the area's layout, and saving
 *   seg_engine.c        create and destroy the engine, workers, stats
 *   seg_memlimit.c      cache_memlimit: the budget at run time
 *   seg_dump.c          the live items, segment by segment (key dumps)
 *   seg_ops.c           the operations, linking items under the bucket lock
 *   seg_append.c        where appends go: TTL buckets, open segments
 *   seg_read.c          the lock-free read of an item
 *   seg_evict.c         a free segment by policy (FIFO, random; seg_acquire)
 *   seg_merge.c         merge-based eviction
 *   seg_flush.c         flush_all
 *   seg_expire.c        a segment's items out of the table; expiry
 *   seg_hash.c          the hash table
 *   seg_live.c          per-worker batched live counts, and their readers
 *   seg_chunk.c         per-worker chunks of open segments, append marks
 *   seg_segment.c       segment life cycle: pool, chains, gens, accounting
 *
 * (seg_test.c, the unit tests' hooks, stands beside them.) The one place
 * where the hash table needs memory, overflow buckets, is where a circle
 * would close: taking a segment may evict, and evicting unlinks items
 * through the hash table. seg_hash.c therefore never takes a segment
 * itself: seg_hash_take_bucket() is handed one (or says it needs one), and
 * seg_append.c, above seg_evict.c, takes it with seg_acquire().
 */
#ifndef SEGCACHED_SEG_PRIVATE_H
#define SEGCACHED_SEG_PRIVATE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_pause.h>
#include <time.h>

#include "seg/seg.h"
#include "seg/seg_table.h"
#include "seg/seg_item.h"
#include "seg/seg_test.h"

#define SEG_LIKELY(x) __builtin_expect(!!(x), 1)
#define SEG_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Test hook (seg_test.h): NULL except in unit tests that force an
 * interleaving. */
extern seg_test_hook_fn seg_test_hook;
extern void *seg_test_hook_arg;
#define SEG_TEST_POINT(at)                                            \
	do {                                                          \
		if (SEG_UNLIKELY(seg_test_hook != NULL))              \
			seg_test_hook((at), seg_test_hook_arg);       \
	} while (0)

/* ---- hash table slots --------------------------------------------------
 * An item slot packs | tag:12 | freq:8 | seg:24 | off:20 | (64 bits).
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

struct seg_bucket {
	_Atomic uint64_t slot[BUCKET_SLOTS];
} __attribute__((aligned(64)));

/* A monotonic clock in ns (lib/seg runs without the EAL, so
 * rte_get_tsc_hz() is not available here): CLOCK_MONOTONIC for timing
 * evict_lock passes, CLOCK_MONOTONIC_COARSE where ticks of a few ms do. */
static inline uint64_t
seg_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- segments ---------------------------------------------------------- */
enum seg_state {
	SEG_FREE = 0,
	SEG_OPEN,    /* a worker appends to it */
	SEG_SEALED,  /* full or closed; in its TTL chain; evictable */
	SEG_RECLAIM, /* claimed by one thread that is expiring/evicting/merging it */
	SEG_HASH,    /* lent to the hash table as overflow buckets (never returned) */
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

	_Atomic uint32_t write_off __attribute__((aligned(64))); /* bytes reserved;
								 * SEG_WOFF_SEALED closes it */
	_Atomic uint32_t writers;   /* live-count changes being applied (seg_live.c) */
	_Atomic int64_t live;       /* live items and bytes, seg_live_pack(); seg_live.c */
	_Atomic int64_t exp_max;    /* latest item expiry in the segment */
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

/* One step of a wait for another thread (a lock holder, appends to
 * drain): pause, and after a while give up the CPU, so that a waiter never
 * starves the very thread it waits for when threads outnumber cores. */
#define SEG_SPINS_BEFORE_YIELD 256
static inline void
seg_relax(unsigned *spins)
{
	if (++*spins < SEG_SPINS_BEFORE_YIELD)
		rte_pause();
	else
		sched_yield();
}

/* A spinlock word; acquisitions are counted by the callers. */
typedef _Atomic uint32_t seg_spinlock_t;

static inline void
seg_spin_lock(seg_spinlock_t *l)
{
	unsigned spins = 0;

	for (;;) {
		if (!atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		while (atomic_load_explicit(l, memory_order_relaxed))
			seg_relax(&spins);
	}
}
static inline void
seg_spin_unlock(seg_spinlock_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
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

struct seg_worker;

/* The segment a worker appends to now, +1 (0: none); drains wait for it. */
struct seg_append_mark {
	_Atomic uint64_t seg;
} __attribute__((aligned(64)));

struct seg_engine {
	struct engine base;

	/* configuration */
	engine_clock_fn clock;
	void *clock_arg;
	uint32_t seg_size;
	uint32_t seg_shift;    /* log2(seg_size) */
	uint32_t off_shift;    /* items are aligned to 1 << off_shift bytes */
	uint32_t item_max;
	uint32_t nseg;
	enum engine_eviction eviction;
	bool cas_enabled;
	bool own_open_ok;      /* workers may hold open segments of their own */
	uint32_t open_budget;  /* most shared open segments at once */
	unsigned max_workers;
	size_t memory;

	/* memory */
	uint8_t *heap;
	bool heap_owned;
	size_t heap_map_len;
	struct seg_hdr *hdr;
	struct seg_bucket *table;
	uint64_t table_mask;   /* stripes - 1: the head buckets at start (seg_table.h) */
	struct seg_table geo;  /* buckets in use, growth (seg_table.h) */

	_Atomic int64_t flush_at;    /* pending delayed flush_all, 0 = none */

	/* Everything above is read on every request and written (almost)
	 * never; what follows is written per segment event, on other lines. */

	/* free segment pool (a stack) */
	seg_spinlock_t pool_lock __attribute__((aligned(64)));
	uint32_t pool_count;
	uint32_t pool_low;     /* low watermark that seg_reclaim_ahead keeps */
	int32_t *pool;
	/* cache_memlimit: free segments held out of use at pool[nseg - parked..) */
	uint32_t parked;
	_Atomic uint32_t park_target;
	_Atomic uint64_t limit_bytes; /* the budget now; `memory` at start */

	/* hash overflow buckets, carved from segments */
	seg_spinlock_t ovf_lock __attribute__((aligned(64)));
	int32_t ovf_seg;       /* segment being carved, or SEG_NONE */
	uint32_t ovf_next;     /* next free bucket index in it */
	uint64_t ovf_free;      /* link value of the first free bucket, 0 = none */
	_Atomic uint64_t ovf_free_count;
	_Atomic uint64_t ovf_used;
	_Atomic uint32_t ovf_segs;

	struct seg_chain chain[TTL_CHAINS];

	/* The shared open segments, oldest first from ring_next: opening one
	 * more seals the oldest when it is still open, so a small heap holds
	 * at most open_budget of them however many TTL buckets are written. */
	seg_spinlock_t open_ring_lock __attribute__((aligned(64)));
	uint32_t open_ring_next;
	_Atomic uint64_t open_ring[SEG_OPEN_RING_MAX];

	pthread_mutex_t evict_lock; /* choosing what to reclaim; fields below */
	pthread_cond_t evict_done;  /* a merge pass ended: broadcast */
	unsigned merges_in_flight;  /* passes copying without evict_lock */
	int32_t merge_reserve; /* a free segment kept as a merge destination */
	bool merge_want_spare; /* a pass found every reserve taken */
	unsigned merge_spares;
	int32_t merge_spare[15]; /* reserves beyond the first */
	uint32_t merge_cursor; /* round robin over TTL chains */
	uint64_t evict_rng;

	_Atomic uint64_t gen_counter __attribute__((aligned(64)));

	/* workers */
	pthread_mutex_t workers_lock;
	struct seg_worker **workers;
	/* SEG_LIVE_SLOTS per possible worker, for the life of the engine, so
	 * that readers look at them without workers_lock (seg_live.c). */
	struct seg_live_slot *live_tab;
	struct seg_append_mark *append_marks; /* one per possible worker (seg_chunk.c) */
	uint64_t retired[ENGINE_C_MAX];

	/* engine-wide counters (not per request, so atomics are fine) */
	_Atomic uint64_t n_evictions, n_expired, n_evicted_unfetched, n_flushes;
	_Atomic uint64_t n_expired_unfetched;
	_Atomic uint64_t n_seg_expired, n_seg_evicted, n_seg_merged;
	_Atomic uint64_t n_merge_reused; /* run members reopened as merge destinations */
	uint64_t n_merge_at_once; /* passes begun with another in flight (evict_lock) */
	_Atomic uint64_t n_locks_other;
};

/* Where a worker appends for one TTL bucket. Its own open segment only for
 * a bucket it writes to a lot (it met other workers appending to the shared
 * one) on a heap with segments to spare: one per worker per bucket is more
 * than a small heap has. A worker keeps SEG_WORKER_REFS, tagged with their
 * bucket (seg_chunk.h): 1,025 of them made a worker 33 KB. */
struct seg_open_ref {
	uint64_t gen;        /* the segment's gen when this worker opened it */
	int32_t seg;
	uint16_t tb;         /* the TTL bucket it is for */
	uint8_t contention;  /* appends to the shared segment that lost a race */
	bool own;            /* use a segment of its own for this bucket */
	/* [chunk_pos, chunk_end) reserved ahead where its appends for this
	 * bucket go, in life seg_open_pack(seg, gen) (0 = none): seg_chunk.c */
	uint64_t chunk_life;
	uint32_t chunk_pos, chunk_end;
}; /* 32 bytes */
/* A worker's refs, direct-mapped by a hash of the bucket: a run of
 * neighbouring buckets (TTLs with jitter) lands in distinct ones. */
#define SEG_WORKER_REFS 128
/* Races lost on a shared segment before a worker opens its own. */
#define SEG_OWN_AFTER_CONTENTION 64
/* Own open segments only with this many segments per possible worker. */
#define SEG_OWN_MIN_SEGS_PER_WORKER 16

/* A worker's pending change to one segment's live counts (seg_live.c):
 * the life it belongs to, seg_open_pack(segment, its gen then) (0 = an
 * empty slot), and the packed delta. Only the owner writes it; readers of
 * the counts (stats, the restart save, whether a segment may still hold
 * items) read it too: atomics, stored and loaded, never read-modify-written. */
struct seg_live_slot {
	_Atomic uint64_t life;
	_Atomic int64_t delta;
};
/* Slots per worker (2 KiB), direct-mapped by segment id: enough for the
 * segments that removals of recently written keys go to. */
#define SEG_LIVE_SLOTS 128
/* Changes between two flushes of all of a worker's slots: bounds how many
 * a busy worker holds back (rarer flushes find more to add up). */
#define SEG_LIVE_BATCH 4096

struct seg_worker {
	struct engine_worker base;
	struct seg_engine *e;
	unsigned id;
	struct seg_live_slot *live; /* its SEG_LIVE_SLOTS in e->live_tab */
	struct seg_append_mark *mark; /* its line in e->append_marks */
	int32_t live_add_seg;       /* the segment its last add went to */
	unsigned live_notes;        /* since the last flush of every slot */
	uint64_t rng;
	uint64_t spare_bucket; /* link value of a reserved overflow bucket, or 0 */
	bool own_always;       /* tests: never a shared open segment */
	struct seg_open_ref open[SEG_WORKER_REFS];
	/* the chunk in another bucket's segment, borrowed, when that bucket
	 * has no ref here (seg_chunk.h) */
	struct seg_open_ref borrowed;
};

#define W_COUNT(w, name) engine_count(&(w)->base, ENGINE_C_##name)

/* A lock taken for a segment event, counted for the worker that takes it
 * or, from the control thread (w NULL), as "other". */
static inline void
seg_count_lock(struct seg_engine *e, struct seg_worker *w, enum engine_worker_counter c)
{
	if (w)
		engine_count(&w->base, c);
	else
		atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
}

static inline struct seg_engine *
seg_engine_of(struct engine *e)
{
	return (struct seg_engine *)e;
}

static inline int64_t seg_now(const struct seg_engine *e) { return e->clock(e->clock_arg); }

static inline uint8_t *
seg_data(const struct seg_engine *e, uint32_t seg)
{
	return e->heap + ((size_t)seg << e->seg_shift);
}

static inline uint64_t
seg_xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

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

/* ---- seg_chunk.c (the rest in seg_chunk.h, for seg_append.c) ---- */
void seg_chunks_give_back_all(struct seg_worker *w); /* before evicting, leaving */
void seg_refs_init(struct seg_worker *w);
/* Leaving: chunks given back, its own open segments sealed. */
void seg_refs_close(struct seg_worker *w);

/* ---- seg_segment.c ---- */
int32_t seg_pool_pop(struct seg_engine *e, struct seg_worker *w);
void seg_pool_push(struct seg_engine *e, int32_t seg);
void seg_init_open(struct seg_engine *e, int32_t seg, unsigned ttl_bucket, int64_t exp_base,
		   uint8_t unit_shift, int64_t now);
void seg_chain_append(struct seg_engine *e, struct seg_worker *w, int32_t seg);
void seg_chain_remove(struct seg_engine *e, int32_t seg);
/* Replaces n consecutive claimed segments of chain ttl_bucket by dest[]
 * (none: removes them); a dest may be a run member but not its last. */
void seg_chain_replace_run(struct seg_engine *e, unsigned ttl_bucket, const int32_t *run,
			   unsigned n, const int32_t *dest, unsigned ndest);
/* Closes a segment to appenders and waits for appends in flight. */
void seg_close_and_drain(struct seg_engine *e, int32_t seg);
/* Ends a segment's life: a new gen first (stale appenders and readers
 * fail their checks), then waits for appenders that counted themselves in
 * `writers` or marked it meanwhile, then marks it FREE. The caller owns the segment
 * (RECLAIM) and no hash slot points into it. */
void seg_retire(struct seg_engine *e, int32_t seg);
void seg_release(struct seg_engine *e, int32_t seg); /* seg_retire, then to the pool */
bool seg_claim(struct seg_engine *e, int32_t seg, uint8_t from);
uint32_t seg_valid_end(const struct seg_engine *e, int32_t seg);
uint64_t seg_new_gen(struct seg_engine *e);
/* Live item accounting of the segment a slot value points into. */
void seg_account_add(struct seg_engine *e, uint64_t v, uint32_t size);
void seg_account_remove(struct seg_engine *e, uint64_t v);
/* Size in the segment of the item a slot points to (its aligned length). */
uint32_t seg_item_span(const struct seg_engine *e, uint64_t v);

/* ---- seg_live.c ---- */
/* Worker w's change to the live counts of the segment slot value v points
 * into (an item linked there, of `size` bytes; or unlinked): kept in w's
 * slots or applied at once. The caller keeps that segment's life from
 * ending: it holds the item's bucket lock or its append mark there. */
void seg_live_add(struct seg_worker *w, uint64_t v, uint32_t size);
void seg_live_remove(struct seg_worker *w, uint64_t v, uint32_t span); /* span: seg_item_span */
void seg_live_flush(struct seg_worker *w); /* all of w's (the owner only) */
/* What all workers hold for seg in its life gen: exact at rest; and seg's
 * live count with those changes. */
int64_t seg_live_pending(const struct seg_engine *e, int32_t seg, uint64_t gen);
int64_t seg_live_read(const struct seg_engine *e, int32_t seg);
/* Whether a claimed, drained segment may still hold linked items (must be
 * walked): false only when nothing is pending and its count is not > 0. */
bool seg_live_may_hold(const struct seg_engine *e, int32_t seg);

/* ---- seg_hash.c ---- */
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
/* Takes the bucket lock itself: clears the slot that points at (seg, off)
 * if there is one and the segment is still in the life `gen` (else the
 * slot is a newer item at the same place), and removes the item from the
 * segment's live counts under that lock. Returns the removed slot value
 * or 0. */
uint64_t seg_hash_unlink_loc(struct seg_engine *e, const struct seg_key *k, uint32_t seg,
			     uint32_t off_units, uint64_t gen);
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

/* ---- seg_expire.c ---- */
/* Walks the items of a claimed, drained segment and unlinks those the
 * hash table still points to. Returns how many were live. */
enum seg_unlink_reason { UNLINK_EXPIRED, UNLINK_EVICTED, UNLINK_FLUSHED };
unsigned seg_unlink_all(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why);
/* A claimed segment out of its chain, drained, its items unlinked, and
 * back into the pool. */
void seg_reclaim_whole(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why);
/* Frees expired segments from the chain heads; returns the items that
 * expired. Caller holds evict_lock. */
unsigned seg_expire_locked(struct seg_engine *e, int64_t now);

/* ---- seg_flush.c ---- */
void seg_flush_now(struct seg_engine *e);
void seg_flush_if_due(struct seg_engine *e, int64_t now);

/* ---- seg_merge.c ---- */
/* One merge pass; caller holds evict_lock, dropped while it copies (for
 * *copy_ns ns). BUSY: nothing to claim while passes are in flight. */
enum seg_merge_result { SEG_MERGE_NONE, SEG_MERGE_DONE, SEG_MERGE_BUSY };
enum seg_merge_result seg_merge_pass(struct seg_engine *e, struct seg_worker *w, int64_t now,
				     uint64_t *copy_ns);
void seg_merge_quiesce(struct seg_engine *e); /* under evict_lock: no pass in flight */

/* ---- seg_evict.c ---- */
/* Gets a free segment, evicting if the pool is empty; SEG_NONE if none. */
int32_t seg_acquire(struct seg_engine *e, struct seg_worker *w);
/* Makes at least one segment free (returns it to the caller) by expiring
 * or evicting; SEG_NONE if nothing can be reclaimed. */
int32_t seg_evict_for(struct seg_engine *e, struct seg_worker *w);
/* Evicts (by the policy) until the free pool holds pool_low segments,
 * unless another thread is reclaiming; returns the evictions done. */
unsigned seg_reclaim_ahead(struct seg_engine *e);
/* The control thread's second: a due flush, expiry, and reclaim ahead. */
unsigned seg_expire_all(struct seg_engine *e);

/* ---- seg_read.c ---- */
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

static inline uint64_t
seg_loc_of(uint64_t v)
{
	return v & SLOT_LOC_MASK;
}

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

static inline const uint8_t *
seg_item_at(const struct seg_engine *e, uint64_t v)
{
	return seg_data(e, slot_seg(v)) + ((size_t)slot_off(v) << e->off_shift);
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

/* ---- seg_append.c ---- */
struct ttl_place {
	unsigned tb;
	uint8_t unit;
	int64_t lo;
	int64_t base; /* exp_base of a segment opened now for this bucket */
	int64_t exp;  /* expiry to store (capped for very long TTLs) */
};

struct seg_wloc {
	int32_t seg;
	uint32_t off, span; /* bytes */
	struct seg_open_ref *ref; /* whose chunk it came from */
	uint8_t *p;
	uint32_t delta;
};

void seg_ttl_place(int64_t expires_at, int64_t now, struct ttl_place *t); /* 0 = never */
/* span bytes for an item of t (seg_append.c), under w's append mark on
 * their segment until seg_append_done() or seg_append_abandon(). */
int seg_reserve(struct seg_worker *w, const struct ttl_place *t, int64_t now, uint32_t size,
		struct seg_wloc *out);
/* The append is linked (done) or not (abandon: its bytes go back to the
 * worker's chunk, or stay dead); either ends the worker's append mark. */
void seg_append_done(struct seg_worker *w, const struct seg_wloc *wl);
void seg_append_abandon(struct seg_worker *w, const struct seg_wloc *wl);

/* Writes header and key; returns where the value goes. */
uint8_t *seg_write_head(const struct seg_wloc *wl, const struct seg_key *k, uint32_t vlen,
			uint32_t flags);
/* Makes sure a chain can grow by one bucket (w's spare). */
int seg_refill_spare(struct seg_worker *w);

/* ---- seg_ops.c: the engine_ops entries seg_engine.c installs ---- */
enum engine_status seg_op_get(struct engine_worker *ew, const void *key, size_t klen,
			      int64_t touch, void *buf, size_t buflen, struct engine_item *it);
void seg_op_get_batch(struct engine_worker *ew, const struct engine_key *keys, unsigned n,
		      const struct engine_get_sink *sink);
void seg_op_prefetch(struct engine_worker *ew, const struct engine_key *keys, unsigned n);
enum engine_status seg_op_store(struct engine_worker *ew, enum engine_store_mode mode,
				const void *key, size_t klen, const void *val, size_t vlen,
				uint32_t flags, int64_t exptime, uint64_t cas, uint64_t *cas_out);
enum engine_status seg_op_delete(struct engine_worker *ew, const void *key, size_t klen,
				 uint64_t cas);
enum engine_status seg_op_arith(struct engine_worker *ew, const void *key, size_t klen,
				bool incr, uint64_t delta, uint64_t *result, uint64_t *cas_out);
enum engine_status seg_op_touch(struct engine_worker *ew, const void *key, size_t klen,
				int64_t exptime);

/* ---- seg_engine.c ---- */
/* The segments, their size and the head buckets seg_create() lays cfg out
 * in (before a caller's heap region caps the segments). 0, or -1. */
int seg_geometry(const struct engine_config *cfg, uint32_t *nseg, uint32_t *seg_size,
		 uint64_t *buckets);

/* ---- seg_memlimit.c, seg_dump.c: the engine_ops entries ---- */
int seg_set_memory(struct engine *e, size_t bytes);
/* Parks (or unparks) segments toward park_target, boundedly; returns moves. */
unsigned seg_memlimit_step(struct seg_engine *e);
void seg_dump(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg);
unsigned seg_dump_class(unsigned ttl_bucket); /* 1: never expires, 2..5: TTL ranges */

/* ---- seg_restart*.c: the restart area's layout is in seg_restart_file.h ---- */

#endif /* SEGCACHED_SEG_PRIVATE_H */
