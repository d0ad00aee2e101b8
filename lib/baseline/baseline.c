/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The rte_hash baseline engine: creation, workers, the expiration sweep
 * and stats. The operations are in bl_ops.c, item memory and eviction in
 * bl_alloc.c, deferred freeing in bl_reclaim.c, flush_all in bl_flush.c,
 * the rules they share in bl_private.h.
 *
 * Key choice. rte_hash compares fixed-size keys, and a 250-byte key (plus
 * its length) in every key slot would cost 264 bytes per entry and a
 * 252-byte hash and compare per lookup. The rte_hash key is instead a
 * 64-bit jhash fingerprint of the key (16-byte key slots, rte_hash's own
 * signature and bucket from its low half) and the full key is kept in the
 * item and compared on every lookup. Two keys with the same fingerprint
 * cannot both be cached: storing one replaces the other, as if it had been
 * evicted. That costs a miss with probability about n / 2^64 per store
 * (n items), and never a wrong value.
 *
 * Memory per object (honest account; stats() reports table_bytes,
 * meta_bytes and heap_bytes as measured from the EAL heap, and the storage
 * bench's fill mode measures the result):
 *  - item: 32-byte header + key + value, rounded up to its size class
 *    (classes 1.25x apart: ~11% lost to rounding on average);
 *  - rte_mempool object header: 24 bytes per item;
 *  - mempool ring: 8 bytes per object (exact: 2^k - 1 objects per page);
 *  - rte_hash, per entry: 16-byte key slot (8-byte data pointer +
 *    fingerprint), 8 bytes of primary buckets (64-byte buckets of 8), 8 of
 *    extendable buckets, 4 of free-slot ring, 4 of ext_bkt_to_free, ~1 of
 *    extendable-bucket ring: ~41 bytes, for every entry of capacity
 *    whether used or not (rte_hash cannot grow, so the table is sized from
 *    the budget: entries = memory/96 rounded down to a power of two, less
 *    the ~8000 key slots rte_hash adds for its per-lcore caches);
 *  - fixed: defer queue (24 bytes x entries/16), 1024 stripe locks
 *    (64 KiB), page tables, one rte_mempool and two memzones per page.
 * Measured, fill experiment (64 MB, keys "1".."N", 1-byte values: 40-byte
 * items): table 21.5 MB for 516,285 entries, metadata 0.56 MB, 38.1 MB of
 * pages for 524,286 items (72.7 bytes each: 40 + 24 + 8 + page headers);
 * the table fills first, at 524,286 objects = 128 bytes of budget per
 * object (memcached 1.6 -m 64: 699,008 objects, not counting its hash
 * table; lib/seg: ~3.1 million). With 16-byte keys and 64-byte values an
 * item is 112 bytes in the 120-byte class: ~193 bytes per object with the
 * table.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "baseline/baseline.h"
#include "baseline/bl_flush.h"
#include "baseline/bl_alloc.h"
#include "baseline/bl_private.h"
#include "baseline/bl_reclaim.h"
#include "util/util_err.h"

RTE_LOG_REGISTER(bl_logtype, segcached.baseline, NOTICE);

#define BL_DEFAULT_ITEM_MAX (1u << 20)
#define BL_ITEM_MAX_LIMIT (16u << 20)
#define BL_DEFAULT_WORKERS 64
#define BL_MAX_WORKERS 1024
#define BL_BYTES_PER_ENTRY 96 /* budget per table entry when sizing it */
/* Key slots rte_hash adds in multi-writer mode for its per-lcore caches
 * ((RTE_MAX_LCORE - 1) * (LCORE_CACHE_SIZE - 1) + 1, LCORE_CACHE_SIZE 64). */
#define BL_HASH_LCORE_SLOTS ((RTE_MAX_LCORE - 1) * 63 + 1)
#define BL_SWEEP_MIN 65536 /* entries the sweep looks at per call, at least */

static unsigned bl_next_id;

/* --- threads -------------------------------------------------------- */

static __thread unsigned bl_lcore_refs;

bool
bl_lcore_get(bool *ok)
{
	*ok = true;
	if (bl_lcore_refs > 0) {
		bl_lcore_refs++;
		return true;
	}
	if (rte_lcore_id() != LCORE_ID_ANY)
		return false;
	if (rte_thread_register() != 0) {
		*ok = false;
		return false;
	}
	bl_lcore_refs = 1;
	return true;
}

void
bl_lcore_put(bool registered)
{
	if (registered && --bl_lcore_refs == 0)
		rte_thread_unregister();
}

/* --- expiration sweep ----------------------------------------------- */

static void
bl_defer_all(struct bl_worker *w, struct bl_item **it, const int32_t *pos,
	     unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		BL_ADD(w->expired, 1);
		bl_defer(w, it[i], pos[i], BL_R_EXPIRED);
	}
}

/* Walks the table from where the last call stopped, at most
 * max(BL_SWEEP_MIN, entries/16) entries, and unlinks expired and flushed
 * items. A whole pass takes at most 16 calls. */
static unsigned
bl_expire(struct engine *base)
{
	struct bl_engine *e = (struct bl_engine *)base;
	struct bl_worker *w = e->sweeper;
	uint32_t limit = RTE_MAX((uint32_t)BL_SWEEP_MIN, e->entries / 16);
	struct bl_item *victim[64];
	int32_t pos[64];
	unsigned n = 0, removed = 0;
	bool registered, ok;
	int64_t now;

	pthread_mutex_lock(&e->sweep_lock);
	registered = bl_lcore_get(&ok);
	if (!ok) {
		pthread_mutex_unlock(&e->sweep_lock);
		BL_LOG(WARNING, "expire: no lcore id left for this thread");
		return 0;
	}
	now = bl_now(e);
	bl_flush_check(e, now);
	bl_online(w);
	for (uint32_t i = 0; i < limit; i++) {
		const void *key;
		void *data;
		struct bl_item *it;
		uint64_t fp;

		if (rte_hash_iterate(e->h, &key, &data, &e->sweep_next) < 0) {
			e->sweep_next = 0; /* end of a pass */
			break;
		}
		it = data;
		if (it == NULL || __atomic_load_n(&it->state, __ATOMIC_ACQUIRE) != BL_LIVE)
			continue;
		if (!bl_item_expired(it, now) && !bl_item_flushed(e, it))
			continue;
		memcpy(&fp, key, sizeof(fp));
		if (bl_unlink_if_current(w, it, fp, &pos[n]))
			victim[n++] = it;
		if (n == RTE_DIM(victim)) {
			bl_offline(w);
			bl_defer_all(w, victim, pos, n);
			removed += n;
			n = 0;
			bl_online(w);
		}
	}
	bl_offline(w);
	bl_defer_all(w, victim, pos, n);
	removed += n;
	bl_reclaim(w, false, NULL);
	bl_lcore_put(registered);
	pthread_mutex_unlock(&e->sweep_lock);
	return removed;
}

/* --- workers -------------------------------------------------------- */

static struct bl_worker *
bl_worker_new(struct bl_engine *e, unsigned tid)
{
	struct bl_worker *w = rte_zmalloc("bl_worker", sizeof(*w), RTE_CACHE_LINE_SIZE);

	if (w == NULL)
		return NULL;
	w->base.engine = &e->base;
	w->e = e;
	w->tid = tid;
	w->rng = rte_rdtsc() ^ ((uint64_t)(tid + 1) * 0x9E3779B97F4A7C15ULL);
	if (w->rng == 0)
		w->rng = 1;
	if (rte_rcu_qsbr_thread_register(e->qsv, tid) != 0) {
		rte_free(w);
		return NULL;
	}
	return w;
}

static void
bl_worker_free(struct bl_worker *w)
{
	if (w->online)
		bl_offline(w);
	rte_rcu_qsbr_thread_unregister(w->e->qsv, w->tid);
	rte_free(w);
}

static void
bl_totals_add(struct bl_totals *t, const struct bl_worker *w)
{
	for (unsigned i = 0; i < ENGINE_C_MAX; i++)
		t->counters[i] += __atomic_load_n(&w->base.counters[i], __ATOMIC_RELAXED);
	t->items += __atomic_load_n(&w->items, __ATOMIC_RELAXED);
	t->bytes += __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
	t->evictions += __atomic_load_n(&w->evictions, __ATOMIC_RELAXED);
	t->evicted_unfetched += __atomic_load_n(&w->evicted_unfetched, __ATOMIC_RELAXED);
	t->expired += __atomic_load_n(&w->expired, __ATOMIC_RELAXED);
}

static struct engine_worker *
bl_worker_create(struct engine *base)
{
	struct bl_engine *e = (struct bl_engine *)base;
	struct bl_worker *w = NULL;
	bool registered, ok;
	unsigned tid;

	registered = bl_lcore_get(&ok);
	if (!ok) {
		BL_LOG(ERR, "no lcore id left for another worker thread (RTE_MAX_LCORE %d)",
		       RTE_MAX_LCORE);
		return NULL;
	}
	pthread_mutex_lock(&e->workers_lock);
	for (tid = 0; tid < e->max_workers && e->tid_used[tid]; tid++)
		;
	if (tid < e->max_workers)
		w = bl_worker_new(e, tid);
	if (w != NULL) {
		e->tid_used[tid] = true;
		TAILQ_INSERT_TAIL(&e->workers, w, next);
	}
	pthread_mutex_unlock(&e->workers_lock);
	if (w == NULL) {
		BL_LOG(ERR, "cannot create a worker: %u of %u in use", tid, e->max_workers);
		bl_lcore_put(registered);
		return NULL;
	}
	w->lcore_registered = registered;
	w->thread = pthread_self();
	return &w->base;
}

static void
bl_worker_destroy(struct engine_worker *wb)
{
	struct bl_worker *w = (struct bl_worker *)wb;
	struct bl_engine *e = w->e;
	bool registered = w->lcore_registered;
	bool same_thread = pthread_equal(w->thread, pthread_self());

	pthread_mutex_lock(&e->workers_lock);
	bl_totals_add(&e->retired, w);
	TAILQ_REMOVE(&e->workers, w, next);
	e->tid_used[w->tid] = false;
	bl_worker_free(w);
	pthread_mutex_unlock(&e->workers_lock);
	if (registered) {
		if (same_thread)
			bl_lcore_put(true);
		else
			BL_LOG(WARNING, "worker destroyed by another thread than its own; "
			       "that thread keeps its lcore id");
	}
}

/* --- stats ---------------------------------------------------------- */

static void
bl_stats(struct engine *base, struct engine_stats *st)
{
	struct bl_engine *e = (struct bl_engine *)base;
	struct bl_totals t;
	struct bl_totals sweep = {0};
	const struct bl_worker *w;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&e->workers_lock);
	t = e->retired;
	TAILQ_FOREACH(w, &e->workers, next)
		bl_totals_add(&t, w);
	bl_totals_add(&sweep, e->sweeper);
	pthread_mutex_unlock(&e->workers_lock);

	memcpy(st->counters, t.counters, sizeof(st->counters));
	st->curr_items = (uint64_t)RTE_MAX(t.items + sweep.items, (int64_t)0);
	st->bytes = (uint64_t)RTE_MAX(t.bytes + sweep.bytes, (int64_t)0);
	st->limit_maxbytes = e->memory;
	st->evictions = t.evictions;
	st->evicted_unfetched = t.evicted_unfetched;
	st->expired = t.expired + sweep.expired;
	st->reclaimed = __atomic_load_n(&e->reclaimed, __ATOMIC_RELAXED);
	st->flushes = __atomic_load_n(&e->flushes, __ATOMIC_RELAXED);
	st->locks_other = sweep.counters[ENGINE_C_lock_bucket] +
			  sweep.counters[ENGINE_C_lock_segment];
	st->hash_buckets = e->hash_buckets;
	st->heap_bytes = __atomic_load_n(&e->heap_used, __ATOMIC_RELAXED);
	st->table_bytes = e->table_bytes;
	st->meta_bytes = e->meta_bytes;
}

/* --- lifecycle ------------------------------------------------------ */

static void
bl_destroy(struct engine *base)
{
	struct bl_engine *e = (struct bl_engine *)base;
	struct bl_worker *w;
	bool registered, ok;

	/* Freeing key slots uses the calling lcore's slot cache. */
	registered = bl_lcore_get(&ok);
	while ((w = TAILQ_FIRST(&e->workers)) != NULL) {
		BL_LOG(WARNING, "destroy: worker %u still exists; freeing it", w->tid);
		TAILQ_REMOVE(&e->workers, w, next);
		bl_worker_free(w);
	}
	if (e->sweeper != NULL)
		bl_worker_free(e->sweeper);
	if (ok)
		bl_reclaim_fini(e);
	else
		BL_LOG(ERR, "destroy: no lcore id for this thread; deferred items leak");
	rte_hash_free(e->h);
	bl_alloc_fini(e);
	rte_free(e->stripes);
	rte_free(e->tid_used);
	pthread_mutex_destroy(&e->workers_lock);
	pthread_mutex_destroy(&e->sweep_lock);
	rte_free(e);
	bl_lcore_put(registered);
}

static const struct engine_ops bl_ops = {
	.name = "baseline",
	.destroy = bl_destroy,
	.worker_create = bl_worker_create,
	.worker_destroy = bl_worker_destroy,
	.get = bl_get,
	.get_batch = bl_get_batch,
	.prefetch = bl_prefetch,
	.store = bl_store,
	.remove = bl_remove,
	.arith = bl_arith,
	.touch = bl_touch,
	.flush_all = bl_flush_all,
	.expire = bl_expire,
	.stats = bl_stats,
};

/* Bytes the EAL malloc heaps have handed out, over all sockets. */
static size_t
bl_heap_allocated(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;

	for (unsigned i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

/* The key given to rte_hash is the 8-byte fingerprint, whose low half is
 * already a good hash. Lookups pass it precomputed (the *_with_hash
 * calls); rte_hash only calls this for its own iteration helpers. */
static uint32_t
bl_fp_hash(const void *key, uint32_t len, uint32_t init)
{
	uint64_t fp;

	RTE_SET_USED(len);
	RTE_SET_USED(init);
	memcpy(&fp, key, sizeof(fp));
	return (uint32_t)fp;
}

/* rte_hash compares keys of sizes other than multiples of 16 with a
 * generic memcmp call; ours are exactly one 64-bit word. */
static int
bl_fp_cmp(const void *a, const void *b, size_t len)
{
	uint64_t x, y;

	RTE_SET_USED(len);
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x != y;
}

static uint32_t
bl_table_entries(size_t memory, unsigned hash_power)
{
	uint64_t want = memory / BL_BYTES_PER_ENTRY;
	unsigned k = 0;

	if (hash_power != 0)
		return 1u << hash_power;
	while (k < 30 && (2ULL << k) <= want)
		k++;
	k = RTE_MAX(k, 14u);
	/* Keep the key store (entries + per-lcore slots) within 2^k so its
	 * rings are not doubled. */
	return (1u << k) - BL_HASH_LCORE_SLOTS - 1;
}

static int
bl_check_config(const struct engine_config *cfg, char *err, size_t errlen)
{
	if (rte_lcore_count() == 0)
		return util_fail(err, errlen,
				 "the DPDK EAL is not initialised (call rte_eal_init first)");
	if (cfg->memory < (1u << 20))
		return util_fail(err, errlen, "memory budget %zu is below 1 MiB", cfg->memory);
	if (cfg->item_max != 0 && (cfg->item_max < 1024 || cfg->item_max > BL_ITEM_MAX_LIMIT))
		return util_fail(err, errlen, "item_max %zu outside 1024..%u", cfg->item_max,
				 BL_ITEM_MAX_LIMIT);
	if (cfg->max_workers > BL_MAX_WORKERS)
		return util_fail(err, errlen, "max_workers %u above %u", cfg->max_workers,
				 BL_MAX_WORKERS);
	if (cfg->hash_power != 0 && (cfg->hash_power < 10 || cfg->hash_power > 30))
		return util_fail(err, errlen, "hash_power %u outside 10..30", cfg->hash_power);
	if (!engine_eviction_supported(cfg->eviction, ENGINE_KIND_BASELINE))
		return util_fail(err, errlen, "unknown eviction mode %d", (int)cfg->eviction);
	return 0;
}

/* Items live in rte_mempool pages, which need a mempool driver (DPDK's
 * ring driver, a plugin). EAL loads plugins from its driver directory only
 * when librte_eal itself comes from the system path, so a deployment that
 * copies the libraries elsewhere and forgets `-d` has none: say so at
 * creation instead of failing every allocation later. */
static int
bl_check_mempool_driver(unsigned id, char *err, size_t errlen)
{
	struct rte_mempool *mp = NULL;
	char name[RTE_MEMPOOL_NAMESIZE];

	if (rte_mempool_ops_table.num_ops > 0) {
		snprintf(name, sizeof(name), "bl%x_probe", id);
		mp = rte_mempool_create_empty(name, 1, 64, 0, 0, SOCKET_ID_ANY, BL_MP_FLAGS);
	}
	if (mp == NULL)
		return util_fail(err, errlen,
				 "no DPDK mempool driver loaded: the baseline engine needs "
				 "librte_mempool_ring.so; pass the EAL option -d DIR "
				 "with its directory (EAL loads " RTE_EAL_PMD_PATH " itself "
				 "only with the system's librte_eal)");
	rte_mempool_free(mp);
	return 0;
}

struct engine *
baseline_create(const struct engine_config *cfg, char *err, size_t errlen)
{
	struct rte_hash_parameters hp = {0};
	char name[RTE_HASH_NAMESIZE], scratch[1];
	struct bl_engine *e;
	size_t before, mark, fixed;

	if (err == NULL || errlen == 0) {
		err = scratch;
		errlen = sizeof(scratch);
	}
	err[0] = '\0';
	if (cfg == NULL) {
		util_fail(err, errlen, "no configuration");
		return NULL;
	}
	if (bl_check_config(cfg, err, errlen) != 0 ||
	    bl_check_mempool_driver(__atomic_load_n(&bl_next_id, __ATOMIC_RELAXED),
				    err, errlen) != 0)
		return NULL;

	before = bl_heap_allocated();
	e = rte_zmalloc("bl_engine", sizeof(*e), RTE_CACHE_LINE_SIZE);
	if (e == NULL) {
		util_fail(err, errlen, "cannot allocate the engine");
		return NULL;
	}
	e->base.ops = &bl_ops;
	e->id = __atomic_fetch_add(&bl_next_id, 1, __ATOMIC_RELAXED);
	e->clock = cfg->clock != NULL ? cfg->clock : engine_clock_default;
	e->clock_arg = cfg->clock_arg;
	e->memory = cfg->memory;
	e->item_max = cfg->item_max != 0 ? cfg->item_max : BL_DEFAULT_ITEM_MAX;
	e->eviction = cfg->eviction;
	e->cas_disabled = cfg->cas_disabled;
	e->max_workers = cfg->max_workers != 0 ? cfg->max_workers : BL_DEFAULT_WORKERS;
	pthread_mutex_init(&e->workers_lock, NULL);
	pthread_mutex_init(&e->sweep_lock, NULL);
	TAILQ_INIT(&e->workers);

	e->entries = bl_table_entries(cfg->memory, cfg->hash_power);
	e->hash_buckets = rte_align32pow2(e->entries) / 8;
	snprintf(name, sizeof(name), "bl%u", e->id);
	hp.name = name;
	hp.entries = e->entries;
	hp.key_len = sizeof(uint64_t);
	hp.hash_func = bl_fp_hash;
	hp.socket_id = SOCKET_ID_ANY;
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD |
			RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	mark = bl_heap_allocated();
	e->h = rte_hash_create(&hp);
	if (e->h == NULL) {
		util_fail(err, errlen, "rte_hash_create(%u entries): %s", e->entries,
			  rte_strerror(rte_errno));
		goto fail;
	}
	e->table_bytes = bl_heap_allocated() - mark;
	rte_hash_set_cmp_func(e->h, bl_fp_cmp);

	if (bl_reclaim_init(e, err, errlen) != 0)
		goto fail;
	e->stripes = rte_zmalloc("bl_stripes", sizeof(*e->stripes) * BL_STRIPES,
				 RTE_CACHE_LINE_SIZE);
	e->tid_used = rte_zmalloc("bl_tids", e->max_workers + 1, 0);
	if (e->stripes == NULL || e->tid_used == NULL) {
		util_fail(err, errlen, "cannot allocate locks");
		goto fail;
	}
	for (unsigned i = 0; i < BL_STRIPES; i++)
		rte_spinlock_init(&e->stripes[i].lock);
	e->sweeper = bl_worker_new(e, e->max_workers);
	if (e->sweeper == NULL) {
		util_fail(err, errlen, "cannot create the sweeper");
		goto fail;
	}

	fixed = bl_heap_allocated() - before;
	if (fixed >= cfg->memory) {
		util_fail(err, errlen, "memory budget %zu too small: the hash table of %u "
			  "entries and its metadata take %zu", cfg->memory, e->entries, fixed);
		goto fail;
	}
	e->heap_budget = cfg->memory - fixed;
	if (bl_alloc_init(e, err, errlen) != 0)
		goto fail;
	/* The page tables were sized for the budget before they existed:
	 * charge them too. */
	fixed = bl_heap_allocated() - before;
	if (fixed >= cfg->memory) {
		util_fail(err, errlen, "memory budget %zu too small for the metadata (%zu)",
			  cfg->memory, fixed);
		goto fail;
	}
	e->heap_budget = cfg->memory - fixed;
	e->meta_bytes = fixed - e->table_bytes;
	BL_LOG(INFO, "engine %u: %zu bytes: table %u entries (%zu bytes), metadata %zu, "
	       "item heap %zu, %u classes up to %zu", e->id, e->memory, e->entries,
	       e->table_bytes, e->meta_bytes, e->heap_budget, e->nclasses, e->item_max);
	return &e->base;
fail:
	bl_destroy(&e->base);
	return NULL;
}
