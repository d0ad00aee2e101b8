/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Creating and destroying the engine, its workers, and stats. The memory
 * budget covers the hash table, segment headers, pool, worker state and
 * the heap; whatever the table and metadata do not take becomes segments.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "seg/seg_chunk.h"
#include "seg/seg_dump.h"
#include "seg/seg_engine.h"
#include "seg/seg_evict.h"
#include "seg/seg_flush.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_memlimit.h"
#include "seg/seg_ops.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"
#include "util/util_err.h"

#define DEFAULT_ITEM_MAX (1u << 20)
#define DEFAULT_SEG_SIZE (1u << 20)
#define MIN_SEG_SIZE (1u << 12)
#define MAX_SEG_SIZE (1u << 26)
#define DEFAULT_WORKERS 16
#define MIN_SEGMENTS 4
/* One head bucket (7 item slots) per KiB of budget: enough slots for
 * 146-byte objects without chaining; smaller objects chain overflow
 * buckets taken from the heap as they need them. One per 4 KiB would
 * leave fewer slots empty for objects of a few hundred bytes (1.2% of the
 * budget instead of 6%), but then tiny objects walk chains four times as
 * long: the steady state's 3.2 M 10-byte items, ~200 a chain, made every
 * lookup and every eviction so slow that a loaded host stalled clients for
 * a minute. -o hashpower=N sizes it by hand. */
#define BYTES_PER_BUCKET 1024
/* Chains `stats` walks for the mean and max chain length (all of them
 * in a table this size or smaller), at most once a second (a few ms). */
#define HASH_STATS_SAMPLE 65536
#define HASH_STATS_EVERY_NS 1000000000ull

/* Anonymous memory for the table and the heap, on transparent huge pages
 * where the kernel gives them on request ("madvise" mode): random access
 * over gigabytes misses the TLB on 4 KiB pages. */
static void *
map_anonymous(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

struct seg_layout {
	uint32_t seg_size, seg_shift, off_shift, item_max, nseg, workers;
	uint64_t buckets;
	size_t fixed_bytes; /* engine, table, workers */
};

/* What each possible worker takes of -m: its struct and table entry, its
 * live-count slots and append mark (`stats` counts them as segment
 * headers, the layout inside -m). */
static size_t
worker_bytes(void)
{
	return sizeof(struct seg_worker) + sizeof(void *) +
	       SEG_LIVE_SLOTS * sizeof(struct seg_live_slot) + sizeof(struct seg_append_mark);
}

static unsigned log2_floor(uint64_t v) { return 63 - (unsigned)__builtin_clzll(v); }
static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static int
layout(const struct engine_config *cfg, struct seg_layout *l, char *err, size_t errlen)
{
	uint64_t item_max = cfg->item_max ? cfg->item_max : DEFAULT_ITEM_MAX;
	uint64_t seg_size = cfg->segment_size;
	size_t per_seg, fixed;

	/* Zeroed on every path: GCC's -O3 (the release build) cannot see that
	 * callers read *l only after a 0 return, and warns. */
	memset(l, 0, sizeof(*l));
	/* Items (header, key, value) up to 4 MiB: -I 4m works; values are
	 * further bounded by the 22-bit value length. */
	if (item_max > ITEM_VLEN_MAX + 1) {
		return util_fail(err, errlen,
				 "item size limit %llu is above the largest supported (%u, 4m)",
				 (unsigned long long)item_max, ITEM_VLEN_MAX + 1);
	}
	if (seg_size) {
		if (!is_pow2(seg_size) || seg_size < MIN_SEG_SIZE || seg_size > MAX_SEG_SIZE) {
			return util_fail(err, errlen,
					 "segment size %llu must be a power of two from %u to %u",
					 (unsigned long long)seg_size, MIN_SEG_SIZE, MAX_SEG_SIZE);
		}
		/* An item larger than a segment spans several (seg_append.c),
		 * up to SEG_LARGE_SEGS_MAX of them. */
		const uint64_t spans = seg_size * SEG_LARGE_SEGS_MAX;

		if (!cfg->item_max && item_max > spans)
			item_max = spans;
		if (item_max > spans) {
			return util_fail(err, errlen,
					 "item size limit %llu is more than %u segments of %llu "
					 "bytes",
					 (unsigned long long)item_max, SEG_LARGE_SEGS_MAX,
					 (unsigned long long)seg_size);
		}
	} else {
		seg_size = DEFAULT_SEG_SIZE;
		while (seg_size < item_max)
			seg_size <<= 1;
	}
	l->seg_size = (uint32_t)seg_size;
	l->seg_shift = log2_floor(seg_size);
	l->off_shift = l->seg_shift > 20 ? l->seg_shift - 20 : 0;
	l->item_max = (uint32_t)item_max;
	l->workers = cfg->max_workers ? cfg->max_workers : DEFAULT_WORKERS;
	if (cfg->hash_power) {
		if (cfg->hash_power < 6 || cfg->hash_power > 32) {
			return util_fail(err, errlen, "hash power %u out of range 6..32",
					 cfg->hash_power);
		}
		l->buckets = 1ull << cfg->hash_power;
	} else {
		uint64_t want = cfg->memory / BYTES_PER_BUCKET;

		l->buckets = want < 64 ? 64 : 1ull << log2_floor(want);
	}
	if (seg_hash_grow_powers(cfg->hash_grow) < 0) {
		return util_fail(err, errlen, "hash table growth %u is not 1, 2, 4, 8 or 16",
				 cfg->hash_grow);
	}
	/* What `stats` counts as segment headers and the table (meta_bytes,
	 * table_bytes) besides the per-segment part: all of it within -m. */
	fixed = sizeof(struct seg_engine) + l->buckets * sizeof(struct seg_bucket) +
		l->workers * worker_bytes();
	per_seg = seg_size + sizeof(struct seg_hdr) + sizeof(int32_t);
	if (cfg->memory < fixed + MIN_SEGMENTS * per_seg) {
		return util_fail(err, errlen,
				 "memory budget %zu is too small: at least %zu bytes for "
				 "%u segments of %llu bytes, the hash table and %u workers",
				 cfg->memory, fixed + MIN_SEGMENTS * per_seg, MIN_SEGMENTS,
				 (unsigned long long)seg_size, l->workers);
	}
	l->fixed_bytes = fixed;
	l->nseg = (uint32_t)((cfg->memory - fixed) / per_seg > SEG_MAX_SEGMENTS
				     ? SEG_MAX_SEGMENTS
				     : (cfg->memory - fixed) / per_seg);
	return 0;
}

int
seg_geometry(const struct engine_config *cfg, uint32_t *nseg, uint32_t *seg_size,
	     uint64_t *buckets)
{
	struct seg_layout l;
	char err[256];

	if (layout(cfg, &l, err, sizeof(err)) < 0)
		return -1;
	*nseg = l.nseg;
	*seg_size = l.seg_size;
	*buckets = l.buckets;
	return 0;
}

size_t
seg_segment_size_for(size_t memory)
{
	size_t seg_size = DEFAULT_SEG_SIZE;

	while (seg_size > SEG_SMALL_HEAP_MIN_SIZE && memory / seg_size < SEG_SMALL_HEAP_SEGMENTS)
		seg_size >>= 1;
	return seg_size;
}

size_t
seg_heap_bytes(const struct engine_config *cfg)
{
	struct seg_layout l;
	char err[256];

	if (layout(cfg, &l, err, sizeof(err)) < 0)
		return 0;
	return (size_t)l.nseg * l.seg_size;
}

static void
seg_destroy(struct engine *eng)
{
	struct seg_engine *e = seg_engine_of(eng);

	/* (workers is NULL when its allocation failed in seg_create) */
	for (unsigned i = 0; e->workers && i < e->max_workers; i++)
		free(e->workers[i]);
	if (e->heap_owned && e->heap)
		munmap(e->heap, e->heap_map_len);
	pthread_mutex_destroy(&e->evict_lock);
	pthread_cond_destroy(&e->evict_done);
	pthread_mutex_destroy(&e->workers_lock);
	free(e->workers);
	free(e->live_tab);
	free(e->append_marks);
	free(e->pool);
	free(e->hdr);
	seg_hash_table_free(e);
	free(e);
}

static struct engine_worker *
seg_worker_create(struct engine *eng)
{
	struct seg_engine *e = seg_engine_of(eng);
	struct seg_worker *w = NULL;

	pthread_mutex_lock(&e->workers_lock);
	for (unsigned i = 0; i < e->max_workers; i++) {
		if (e->workers[i])
			continue;
		w = aligned_alloc(64, (sizeof(*w) + 63) & ~(size_t)63);
		if (!w)
			break;
		memset(w, 0, sizeof(*w));
		w->base.engine = eng;
		w->e = e;
		w->id = i;
		/* empty: the last worker here applied its changes and left */
		w->live = &e->live_tab[(size_t)i * SEG_LIVE_SLOTS];
		w->mark = &e->append_marks[i];
		w->live_add_seg = SEG_NONE;
		w->rng = 0x9e3779b97f4a7c15ull * (i + 1) ^ (uint64_t)time(NULL);
		seg_refs_init(w);
		e->workers[i] = w;
		break;
	}
	pthread_mutex_unlock(&e->workers_lock);
	return w ? &w->base : NULL;
}

static void
seg_worker_destroy(struct engine_worker *ew)
{
	struct seg_worker *w = (struct seg_worker *)ew;
	struct seg_engine *e = w->e;

	seg_live_flush(w);
	/* The tails of its chunks go back (those still last in their
	 * segments), then its open segments become ordinary sealed ones. */
	seg_refs_close(w);
	/* Its spare overflow bucket goes back to the free list (it leaked,
	 * 64 bytes of heap per worker destroyed). */
	if (w->spare_bucket)
		seg_hash_unreserve_bucket(e, w->spare_bucket);
	pthread_mutex_lock(&e->workers_lock);
	for (unsigned c = 0; c < ENGINE_C_MAX; c++)
		e->retired[c] += w->base.counters[c];
	e->workers[w->id] = NULL;
	pthread_mutex_unlock(&e->workers_lock);
	free(w);
}

static void
seg_flush_all(struct engine *eng, int64_t delay)
{
	struct seg_engine *e = seg_engine_of(eng);

	if (delay <= 0) {
		/* An immediate flush replaces a pending delayed one (memcached). */
		atomic_store(&e->flush_at, 0);
		seg_flush_now(e);
	} else {
		atomic_store(&e->flush_at, seg_now(e) + delay);
	}
}

/* The control thread's second: expiry, reclaim ahead, and the steps of a
 * cache_memlimit cut. */
static unsigned
seg_expire(struct engine *eng)
{
	unsigned n = seg_expire_all(seg_engine_of(eng));

	seg_memlimit_step(seg_engine_of(eng));
	return n;
}

unsigned seg_reclaim(struct engine *eng) { return seg_reclaim_ahead(seg_engine_of(eng)); }

/* The changes to live counts that workers hold, per segment (in its
 * current life), or NULL when memory is short (the headers alone then):
 * one pass over the workers' slots rather than one per segment. */
static int64_t *
seg_stats_pending(const struct seg_engine *e)
{
	int64_t *pending = calloc(e->nseg, sizeof(*pending));

	for (unsigned i = 0; pending && i < e->max_workers * SEG_LIVE_SLOTS; i++) {
		const struct seg_live_slot *s = &e->live_tab[i];
		const uint64_t life = atomic_load_explicit(&s->life, memory_order_acquire);
		const int32_t seg = seg_open_seg(life);

		if (life && (uint32_t)seg < e->nseg &&
		    seg_open_gen_is(life, atomic_load(&e->hdr[seg].gen)))
			pending[seg] += atomic_load_explicit(&s->delta, memory_order_relaxed);
	}
	return pending;
}

/* A sealed or open segment's share of its class's figures. */
static void
seg_stats_class(struct engine_stats *st, const struct seg_hdr *h, int64_t live)
{
	unsigned c = seg_dump_class(__atomic_load_n(&h->ttl_bucket, __ATOMIC_RELAXED));
	int64_t created = __atomic_load_n(&h->create_at, __ATOMIC_RELAXED);

	st->classes[c].items += seg_live_items_of(live);
	st->classes[c].bytes += seg_live_bytes_of(live);
	st->classes[c].segments++;
	if (st->classes[c].oldest == 0 || created < st->classes[c].oldest)
		st->classes[c].oldest = created;
}

static void
seg_stats(struct engine *eng, struct engine_stats *st)
{
	struct seg_engine *e = seg_engine_of(eng);

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&e->workers_lock);
	for (unsigned c = 0; c < ENGINE_C_MAX; c++) {
		st->counters[c] = e->retired[c];
		for (unsigned i = 0; i < e->max_workers; i++)
			if (e->workers[i])
				st->counters[c] +=
					__atomic_load_n(&e->workers[i]->base.counters[c],
							__ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&e->workers_lock);
	int64_t *pending = seg_stats_pending(e);

	for (uint32_t i = 0; i < e->nseg; i++) {
		const struct seg_hdr *h = &e->hdr[i];
		uint8_t state = atomic_load_explicit(&h->state, memory_order_relaxed);

		switch (state) {
		case SEG_FREE:
			st->seg_free++;
			continue;
		case SEG_HASH:
			st->seg_hash++;
			continue;
		case SEG_CONT: /* the rest of a large item: sealed bytes */
			st->seg_sealed++;
			continue;
		case SEG_OPEN:
			st->seg_open++;
			st->seg_open_bytes += atomic_load_explicit(&h->write_off,
								   memory_order_relaxed) &
					      ~SEG_WOFF_SEALED;
			break;
		default:
			st->seg_sealed++;
			break;
		}
		/* with the changes workers hold for it (seg_live.c) */
		const int64_t live = atomic_load_explicit(&h->live, memory_order_relaxed) +
				     (pending ? pending[i] : 0);

		st->curr_items += seg_live_items_of(live);
		st->bytes += seg_live_bytes_of(live);
		seg_stats_class(st, h, live);
	}
	free(pending);
	st->limit_maxbytes = atomic_load(&e->limit_bytes);
	st->expired_unfetched = atomic_load(&e->n_expired_unfetched);
	seg_spin_lock(&e->pool_lock);
	st->seg_parked = e->parked;
	seg_spin_unlock(&e->pool_lock);
	st->evictions = atomic_load(&e->n_evictions);
	st->expired = atomic_load(&e->n_expired) + st->counters[ENGINE_C_expired_unlinked];
	st->reclaimed = st->expired;
	st->evicted_unfetched = atomic_load(&e->n_evicted_unfetched);
	st->flushes = atomic_load(&e->n_flushes);
	st->locks_other = atomic_load(&e->n_locks_other);
	st->evict_ns_other = atomic_load(&e->n_evict_ns_other);
	st->seg_size = e->seg_size;
	st->seg_total = e->nseg;
	st->seg_expired = atomic_load(&e->n_seg_expired);
	st->seg_evicted = atomic_load(&e->n_seg_evicted);
	st->seg_merged = atomic_load(&e->n_seg_merged);
	st->seg_merge_reused = atomic_load(&e->n_merge_reused);
	st->hash_buckets = seg_hash_buckets(e);
	st->hash_power = log2_floor(st->hash_buckets);
	st->hash_power_init = e->geo.base_power;
	st->hash_grow_max = 1ull << (e->geo.max_power - e->geo.base_power);
	st->hash_is_expanding = seg_hash_wants_growth(e);
	seg_hash_chain_stats(e, HASH_STATS_SAMPLE, HASH_STATS_EVERY_NS,
			     &st->hash_chain_mean_x100, &st->hash_chain_max);
	st->hash_overflow = atomic_load(&e->ovf_used);
	st->hash_overflow_free = atomic_load(&e->ovf_free_count);
	for (unsigned t = 0; t < TTL_CHAINS; t++) {
		uint64_t cur = atomic_load(&e->chain[t].shared_open);

		if (cur && seg_open_gen_is(cur, atomic_load(&e->hdr[seg_open_seg(cur)].gen)) &&
		    atomic_load(&e->hdr[seg_open_seg(cur)].state) == SEG_OPEN)
			st->seg_open_shared++;
	}
	st->heap_bytes = (uint64_t)e->nseg * e->seg_size;
	st->table_bytes = seg_hash_bytes(e);
	/* Growth is outside -m (docs/operations.md, Sizing): the head
	 * buckets the table started with are inside it. */
	st->table_grown_bytes = st->table_bytes - (e->table_mask + 1) * sizeof(struct seg_bucket);
	st->meta_bytes = (uint64_t)e->nseg * (sizeof(struct seg_hdr) + sizeof(int32_t)) +
			 sizeof(struct seg_engine) +
			 e->max_workers * worker_bytes();
}

static const struct engine_ops seg_ops = {
	.name = "seg",
	.destroy = seg_destroy,
	.worker_create = seg_worker_create,
	.worker_destroy = seg_worker_destroy,
	.get = seg_op_get,
	.get_batch = seg_op_get_batch,
	.prefetch = seg_op_prefetch,
	.store = seg_op_store,
	.store_begin = seg_op_store_begin,
	.store_write = seg_op_store_write,
	.store_finish = seg_op_store_finish,
	.remove = seg_op_delete,
	.arith = seg_op_arith,
	.touch = seg_op_touch,
	.flush_all = seg_flush_all,
	.expire = seg_expire,
	.stats = seg_stats,
	.set_memory = seg_set_memory,
	.dump = seg_dump,
};

struct engine *
seg_create(const struct engine_config *cfg, char *err, size_t errlen)
{
	struct seg_engine *e;
	struct seg_layout l;
	size_t heap_len;

	if (!engine_eviction_supported(cfg->eviction, ENGINE_KIND_SEG)) {
		util_fail(err, errlen, "unknown eviction mode %d", (int)cfg->eviction);
		return NULL;
	}
	if (layout(cfg, &l, err, errlen) < 0)
		return NULL;
	if (cfg->heap) {
		if (cfg->heap_len / l.seg_size < l.nseg)
			l.nseg = (uint32_t)(cfg->heap_len / l.seg_size);
		if (l.nseg < MIN_SEGMENTS) {
			util_fail(err, errlen,
				  "heap region of %zu bytes holds fewer than %u segments",
				  cfg->heap_len, MIN_SEGMENTS);
			return NULL;
		}
	}
	e = aligned_alloc(64, (sizeof(*e) + 63) & ~(size_t)63);
	if (!e) {
		util_fail(err, errlen, "out of memory");
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->base.ops = &seg_ops;
	e->clock = cfg->clock ? cfg->clock : engine_clock_default;
	e->clock_arg = cfg->clock_arg;
	e->seg_size = l.seg_size;
	e->seg_shift = l.seg_shift;
	e->off_shift = l.off_shift;
	e->item_max = l.item_max;
	e->nseg = l.nseg;
	e->eviction = cfg->eviction;
	e->cas_enabled = !cfg->cas_disabled;
	e->max_workers = l.workers;
	e->own_open_ok = l.nseg >= SEG_OWN_MIN_SEGS_PER_WORKER * l.workers;
	/* A quarter of the heap may be shared open segments, 2 to 64. */
	e->open_budget = l.nseg / 4 < 2 ? 2 : l.nseg / 4 > SEG_OPEN_RING_MAX ? SEG_OPEN_RING_MAX
									      : l.nseg / 4;
	e->memory = cfg->memory;
	atomic_store(&e->limit_bytes, cfg->memory);
	e->ovf_seg = SEG_NONE;
	e->merge_reserve = SEG_NONE;
	e->evict_rng = 0x2545f4914f6cdd1dull;
	/* 1/64 of the heap, at most 64 segments, is reclaimed ahead of need;
	 * none below 64 segments, where one free segment is a sixtieth of the
	 * cache (a tenth of a million tiny objects in 64 MB) kept empty. */
	e->pool_low = l.nseg / 64 > 64 ? 64 : l.nseg / 64;
	pthread_mutex_init(&e->evict_lock, NULL);
	pthread_cond_init(&e->evict_done, NULL);
	e->passes_in_flight = 0;
	e->merge_spares = 0;
	e->merge_want_spare = false;
	pthread_mutex_init(&e->workers_lock, NULL);

	if (seg_hash_table_init(e, log2_floor(l.buckets),
				(uint32_t)seg_hash_grow_powers(cfg->hash_grow)) < 0)
		e->table = NULL;
	e->hdr = aligned_alloc(64, (size_t)l.nseg * sizeof(struct seg_hdr));
	e->pool = malloc((size_t)l.nseg * sizeof(int32_t));
	e->workers = calloc(l.workers, sizeof(*e->workers));
	e->live_tab = calloc((size_t)l.workers * SEG_LIVE_SLOTS, sizeof(*e->live_tab));
	e->append_marks = aligned_alloc(64, (size_t)l.workers * sizeof(*e->append_marks));
	if (e->append_marks)
		memset(e->append_marks, 0, (size_t)l.workers * sizeof(*e->append_marks));
	heap_len = (size_t)l.nseg * l.seg_size;
	if (cfg->heap) {
		e->heap = cfg->heap;
	} else {
		e->heap = map_anonymous(heap_len);
		e->heap_owned = true;
		e->heap_map_len = heap_len;
	}
	if (!e->table || !e->hdr || !e->pool || !e->workers || !e->live_tab || !e->append_marks ||
	    !e->heap) {
		util_fail(err, errlen, "cannot allocate %zu bytes of cache memory: %s", cfg->memory,
			  strerror(errno ? errno : ENOMEM));
		seg_destroy(&e->base);
		return NULL;
	}
	memset(e->hdr, 0, (size_t)l.nseg * sizeof(struct seg_hdr));
	for (unsigned i = 0; i < TTL_CHAINS; i++) {
		e->chain[i].head = e->chain[i].tail = SEG_NONE;
		e->chain[i].merge_next = SEG_NONE;
		e->chain[i].sparse_next = SEG_NONE;
	}
	for (uint32_t i = 0; i < l.nseg; i++) {
		e->hdr[i].prev = e->hdr[i].next = e->hdr[i].cont = SEG_NONE;
		atomic_store(&e->hdr[i].gen, seg_new_gen(e));
	}
	/* Pop order = ascending ids; the last segment is the merge reserve. */
	e->merge_reserve = cfg->eviction == ENGINE_EVICT_MERGE ? (int32_t)l.nseg - 1 : SEG_NONE;
	for (uint32_t i = l.nseg - (e->merge_reserve != SEG_NONE); i-- > 0;)
		e->pool[e->pool_count++] = (int32_t)i;
	return &e->base;
}
