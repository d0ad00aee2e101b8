/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/seg's engine and its workers (struct seg_engine, struct seg_worker)
 * and the accessors every file uses. Layout of the engine's memory:
 *
 *   hash table   2^n + split head buckets of 64 bytes, growing (mmap, DRAM)
 *   seg headers  one 64-byte struct seg_hdr per segment (DRAM)
 *   heap         nseg segments of seg_size bytes (caller region or mmap)
 *
 * Nothing inside the heap holds an absolute pointer: the hash table names
 * items by (segment id, offset), overflow buckets by (segment id, index),
 * so a heap can be mapped at another address after a restart.
 *
 * One file per job, in layers: each file calls only files below it, and
 * its declarations are in the header of its name (restart/'s three share
 * restart/seg_restart_file.h; seg_hash_grow.c's are in seg_table.h):
 *
 *   restart/seg_restart_load.c  warm restart: load and validate a saved state
 *   restart/seg_restart_check.c warm restart: the verdict on its header and images
 *   restart/seg_restart.c       warm restart: the area's layout, and saving
 *   seg_engine.c        create and destroy the engine, workers, stats
 *   seg_memlimit.c      cache_memlimit: the budget at run time
 *   seg_dump.c          the live items, segment by segment (key dumps)
 *   seg_ops.c           the operations, linking items under the bucket lock
 *   seg_append.c        where appends go: TTL buckets, open segments, items
 *                       larger than a segment (across several)
 *   seg_read.c          the lock-free read of an item
 *   seg_evict.c         a free segment by policy (FIFO, random; seg_acquire)
 *   seg_merge.c         merge-based eviction
 *   seg_flush.c         flush_all
 *   seg_expire.c        a segment's items out of the table; expiry
 *   seg_hash_grow.c     the hash table's growth, a chain split at a time
 *   seg_hash.c          the hash table
 *   seg_live.c          per-worker batched live counts, and their readers
 *   seg_chunk.c         per-worker chunks of open segments, append marks
 *   seg_segment.c       segment life cycle: pool, chains, gens, accounting
 *
 * Below them, headers of no file: this one; seg_hdr.h, a segment's header
 * and TTL chain; seg_table.h, the hash table's geometry; seg_slot.h, its
 * slots and buckets; seg_item.h, an item's bytes; seg_core.h, hints, test
 * points, clock and spinlock. seg_merge_cut.h and seg_ttl_bucket.h are the
 * policy rules lib/mrc's model applies too. (seg_test.c and
 * restart/seg_restart_test.c, the unit tests' hooks, stand beside them.)
 *
 * The one place where the hash table needs memory, overflow buckets, is
 * where a circle would close: taking a segment may evict, and evicting
 * unlinks items through the hash table. seg_hash.c therefore never takes
 * a segment itself: seg_hash_take_bucket() is handed one (or says it
 * needs one), and seg_append.c, above seg_evict.c, takes it with
 * seg_acquire().
 */
#ifndef SEGCACHED_SEG_STRUCT_H
#define SEGCACHED_SEG_STRUCT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seg/seg.h"
#include "seg/seg_core.h"
#include "seg/seg_hdr.h"
#include "seg/seg_item.h"
#include "seg/seg_slot.h"
#include "seg/seg_table.h"

struct seg_worker;
struct seg_live_slot; /* seg_live.h */

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
	/* The chains that hold segments, a bit each, changed under the
	 * chain's lock when its head turns SEG_NONE or stops being so: the
	 * sweep and the eviction policies look at these chains only. */
	_Atomic uint64_t chain_used[(TTL_CHAINS + 63) / 64] __attribute__((aligned(64)));

	/* The shared open segments, oldest first from ring_next: opening one
	 * more seals the oldest when it is still open, so a small heap holds
	 * at most open_budget of them however many TTL buckets are written. */
	seg_spinlock_t open_ring_lock __attribute__((aligned(64)));
	uint32_t open_ring_next;
	_Atomic uint64_t open_ring[SEG_OPEN_RING_MAX];

	/* Expiry runs without evict_lock, by any thread, a chain at a time:
	 * counted here so that flush_all and a restart save can wait for it
	 * (seg_reclaim_quiesce); while `quiescing`, none begins and no pass
	 * is started (seg_segment.c). */
	_Atomic unsigned reclaims_out __attribute__((aligned(64)));
	_Atomic bool quiescing;

	pthread_mutex_t evict_lock; /* choosing what to reclaim; fields below */
	pthread_cond_t evict_done;  /* a pass ended, or a quiesce: broadcast */
	/* passes that claimed under evict_lock and reclaim without it: merge
	 * passes copying, FIFO and random evictions unlinking */
	unsigned passes_in_flight;
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
	_Atomic uint64_t n_evict_ns_other; /* evict_lock held outside workers */
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
/* Races lost on a shared segment before a worker reserves chunks in it
 * again where other workers append (seg_chunk.c): below, each item's
 * bytes alone there. */
#define SEG_CHUNK_AFTER_CONTENTION 8
/* Own open segments only with this many segments per possible worker. */
#define SEG_OWN_MIN_SEGS_PER_WORKER 16

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

/* The bytes of the item a slot value points to. */
static inline const uint8_t *
seg_item_at(const struct seg_engine *e, uint64_t v)
{
	return seg_data(e, slot_seg(v)) + ((size_t)slot_off(v) << e->off_shift);
}

/* The most bytes a large item (seg_append.c) may take from the start of its
 * head segment: its parse is bounded by the item limit, not the segment. */
#define SEG_LARGE_ROOM (ITEM_VLEN_MAX + 1u)
/* The most segments one large item takes: bounds -I against the segment
 * size (seg_engine.c). */
#define SEG_LARGE_SEGS_MAX 64u

/* Parses the item at byte offset off of seg, whose valid bytes end at end:
 * within them or, at offset 0 of a large item's head segment, within the
 * item limit (its bytes go on in the segments the head links). Bytes read
 * lock-free are checked against the gen afterwards, as for any parse; the
 * header and key of a large item are always in its head segment. */
static inline int
seg_parse_in(const struct seg_engine *e, uint32_t seg, uint32_t off, uint32_t end,
	     struct item_view *iv)
{
	const uint8_t *p = seg_data(e, seg) + off;

	if (SEG_LIKELY(item_parse(p, end - off, iv)))
		return 1;
	return off == 0 && __atomic_load_n(&e->hdr[seg].cont, __ATOMIC_RELAXED) != SEG_NONE &&
	       item_parse(p, SEG_LARGE_ROOM, iv);
}

/* Parses the item a slot value points to. */
static inline int
seg_parse_slot(const struct seg_engine *e, uint64_t v, struct item_view *iv)
{
	return seg_parse_in(e, slot_seg(v), slot_off(v) << e->off_shift, e->seg_size, iv);
}

#endif /* SEGCACHED_SEG_STRUCT_H */
