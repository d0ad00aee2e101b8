/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Internals of the rte_hash baseline engine, shared by its source files:
 * its item, engine and worker, the helpers every operation uses, and the
 * engine_ops rows. Each part's own calls are in its header: bl_alloc.h,
 * bl_free.h, bl_reclaim.h, bl_flush.h, bl_op.h.
 *
 * Concurrency rules (every file relies on them):
 *  1. Readers are lock-free: they go RCU-online (rte_rcu_qsbr), look the key
 *     up in rte_hash and read the item in place, then go offline.
 *  2. Every change of which item a key maps to (link, replace, unlink) is
 *     made under the key's stripe lock. Hence a thread holding a stripe lock
 *     may keep using the item of its key even while RCU-offline: nobody else
 *     can unlink it, so nobody can free it.
 *  3. A stripe lock is only ever waited for while RCU-offline; online code
 *     only try-locks (eviction, sweep). So a thread waiting for a grace
 *     period never waits for a thread that waits for it.
 *  4. Unlinked items (and rte_hash key slots) go to one rte_rcu_qsbr_dq and
 *     are freed after a grace period, always by a thread that is offline,
 *     under reclaim_lock (rte_hash's recycling of extendable buckets in
 *     rte_hash_free_key_with_position is single-producer). Nothing that
 *     waits (for a grace period, the reclaim lock or queue space) ever
 *     runs online.
 *  5. Workers are online only inside an operation, so an idle thread never
 *     holds back reclamation.
 */
#ifndef SEGCACHED_BL_PRIVATE_H
#define SEGCACHED_BL_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>

#include "engine/engine.h"
#include "engine/engine_config.h"

extern int bl_logtype;
#define BL_LOG(level, fmt, ...)                                                \
	rte_log(RTE_LOG_##level, bl_logtype, "baseline: " fmt "\n", ##__VA_ARGS__)

/* An item: header, key, value, in one mempool object. 32-byte header. */
struct bl_item {
	uint64_t cas;        /* unique per store; also orders items against flush_all */
	int64_t expires_at;  /* engine clock seconds, 0 = never; atomic (touch) */
	uint32_t flags;      /* client flags */
	uint32_t vlen;
	uint32_t atime;      /* low 32 bits of the last access second (sampled LRU) */
	uint8_t klen;
	uint8_t cls;         /* size class */
	uint8_t state;       /* enum bl_item_state; atomic */
	uint8_t fetched;     /* read since stored (meta 'h', evicted_unfetched) */
	char data[];         /* key, then value */
};
#define BL_ITEM_HDR offsetof(struct bl_item, data)

enum bl_item_state {
	BL_FREE = 0, /* in its mempool (pages are zeroed, so never-used objects read FREE) */
	BL_FRESH,    /* allocated, not (yet) linked */
	BL_LIVE,     /* linked in the hash table */
	BL_DEAD,     /* unlinked, waiting for a grace period */
};

#define BL_CLASS_MAX 64
#define BL_SMALL_MAX 16384     /* sizes up to this map through a table */
#define BL_STRIPES 1024        /* striped writer locks, one cache line each */

/* A page: one rte_mempool holding per_page objects of one class. The
 * mempool's private data holds the page's index in bl_engine.pages. */
struct bl_page {
	struct rte_mempool *mp;
	char *first;      /* first object */
	uint32_t stride;  /* object header + element + trailer */
	uint32_t count;   /* objects */
	uint32_t cls;
	uint32_t cidx;    /* index among its class's pages */
};

struct bl_class {
	uint32_t size;       /* mempool element size: largest item of the class */
	uint32_t stride;     /* bytes per object in a page */
	uint32_t per_page;   /* 2^k - 1 objects, so the mempool ring is exact */
	size_t page_len;
	size_t page_cost;    /* page + mempool ring + headers, charged to the budget */
	uint32_t npages;     /* pages of this class (atomic, published after page_ids) */
	uint32_t *page_ids;  /* indices into bl_engine.pages */
	uint64_t *free_map;  /* bit per class page: may have free objects (atomic) */
	struct rte_mempool *hint; /* a page that likely has free objects (atomic) */
};

struct bl_stripe {
	rte_spinlock_t lock;
} __rte_cache_aligned;

struct bl_engine;

struct bl_worker {
	struct engine_worker base; /* must be first */
	struct bl_engine *e;
	unsigned tid;              /* rte_rcu_qsbr thread id */
	bool online;
	bool lcore_registered;     /* registered this thread with the EAL */
	pthread_t thread;          /* the thread that registered */
	uint64_t rng;
	unsigned deferred;         /* defer-queue entries since the last reclaim */
	uint32_t reap_next;        /* rte_hash_iterate cursor of bl_reap_dead */
	/* Engine-wide quantities this worker changed; written with relaxed
	 * atomics by the owner, summed by stats(). */
	int64_t items;
	int64_t bytes;
	uint64_t evictions;
	uint64_t evicted_unfetched;
	uint64_t expired;
	TAILQ_ENTRY(bl_worker) next;
};

struct bl_totals {
	uint64_t counters[ENGINE_C_MAX];
	int64_t items;
	int64_t bytes;
	uint64_t evictions;
	uint64_t evicted_unfetched;
	uint64_t expired;
};

struct bl_engine {
	struct engine base; /* must be first */
	unsigned id;
	engine_clock_fn clock;
	void *clock_arg;
	size_t memory;
	size_t item_max;
	enum engine_eviction eviction;
	bool cas_disabled;
	unsigned max_workers;

	/* index */
	struct rte_hash *h;
	uint32_t entries;
	uint32_t hash_buckets;
	struct bl_stripe *stripes;

	/* reclamation */
	struct rte_rcu_qsbr *qsv;
	struct rte_rcu_qsbr_dq *dq;
	uint32_t dq_size;          /* entries the defer queue holds */
	uint32_t dq_used;          /* entries reserved or queued (atomic) */
	rte_spinlock_t reclaim_lock;
	uint64_t reclaimed;        /* items freed after delete/expiry (under reclaim_lock) */

	/* allocator */
	unsigned nclasses;
	struct bl_class classes[BL_CLASS_MAX];
	uint8_t small_class[BL_SMALL_MAX / 8 + 1];
	struct bl_page *pages;
	uint32_t max_pages;
	uint32_t npages;           /* atomic, published after pages[] */
	rte_spinlock_t grow_lock;
	size_t heap_budget;        /* what pages may cost in all */
	size_t heap_used;          /* what they cost so far (under grow_lock) */
	size_t table_bytes;        /* rte_hash, measured */
	size_t meta_bytes;         /* everything else allocated at creation, measured */

	/* cas and flush_all */
	uint64_t cas_next;         /* last cas handed out (atomic) */
	uint64_t flush_cas;        /* items with cas <= this are flushed (atomic) */
	int64_t flush_at;          /* pending delayed flush, 0 = none (atomic) */
	uint64_t flushes;          /* atomic */

	/* workers */
	pthread_mutex_t workers_lock;
	TAILQ_HEAD(, bl_worker) workers;
	bool *tid_used;
	struct bl_totals retired;  /* counters of destroyed workers */

	/* expiration sweep, one caller at a time */
	pthread_mutex_t sweep_lock;
	struct bl_worker *sweeper;
	uint32_t sweep_next;
};

/* --- small helpers --------------------------------------------------- */

/* The 64-bit fingerprint that is the rte_hash key. Its low 32 bits are the
 * rte_hash signature (bucket and tag), its high bits pick the stripe. */
static inline uint64_t
bl_fingerprint(const void *key, size_t klen)
{
	/* rte_jhash reads whole 32-bit words, up to 3 bytes past the end of
	 * the key (then masks them): hash a padded copy, never the caller's
	 * buffer, which may end at the end of a page. */
	uint32_t words[(ENGINE_KEY_MAX + 3) / 4];
	uint32_t pc = 0x9e3779b9, pb = 0x7f4a7c15;

	memcpy(words, key, klen);
	rte_jhash_2hashes(words, (uint32_t)klen, &pc, &pb);
	return ((uint64_t)pb << 32) | pc;
}

static inline struct bl_stripe *
bl_stripe_of(const struct bl_engine *e, uint64_t fp)
{
	return &e->stripes[(fp >> 32) & (BL_STRIPES - 1)];
}

static inline int64_t
bl_now(const struct bl_engine *e)
{
	return e->clock(e->clock_arg);
}

static inline void
bl_online(struct bl_worker *w)
{
	rte_rcu_qsbr_thread_online(w->e->qsv, w->tid);
	w->online = true;
}

static inline void
bl_offline(struct bl_worker *w)
{
	rte_rcu_qsbr_thread_offline(w->e->qsv, w->tid);
	w->online = false;
}

/* Waits for a stripe lock; only while offline (rule 3). */
static inline void
bl_stripe_lock(struct bl_worker *w, struct bl_stripe *s)
{
	RTE_ASSERT(!w->online);
	rte_spinlock_lock(&s->lock);
	engine_count(&w->base, ENGINE_C_lock_bucket);
}

static inline void
bl_stripe_unlock(struct bl_stripe *s)
{
	rte_spinlock_unlock(&s->lock);
}

/* The item linked under fp, or NULL; caller online. It may hold another
 * key with the same fingerprint: check with bl_item_is(). */
static inline struct bl_item *
bl_lookup(const struct bl_engine *e, uint64_t fp)
{
	void *data;

	if (rte_hash_lookup_with_hash_data(e->h, &fp, (hash_sig_t)fp, &data) < 0)
		return NULL;
	return data;
}

static inline bool
bl_item_is(const struct bl_item *it, const void *key, size_t klen)
{
	return it->klen == klen && memcmp(it->data, key, klen) == 0;
}

static inline bool
bl_item_expired(const struct bl_item *it, int64_t now)
{
	int64_t at = __atomic_load_n(&it->expires_at, __ATOMIC_RELAXED);

	return at != 0 && now >= at;
}

static inline bool
bl_item_flushed(const struct bl_engine *e, const struct bl_item *it)
{
	return it->cas <= __atomic_load_n(&e->flush_cas, __ATOMIC_ACQUIRE);
}

static inline size_t
bl_item_size(const struct bl_item *it)
{
	return BL_ITEM_HDR + it->klen + it->vlen;
}

static inline uint64_t
bl_cas_visible(const struct bl_engine *e, const struct bl_item *it)
{
	return e->cas_disabled ? 0 : it->cas;
}

/* Relaxed add to a counter that stats() reads from another thread. */
#define BL_ADD(field, v) __atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)

/* --- bl_ops.c, bl_batch.c: the operations, engine_ops's rows ------------ */

enum engine_status bl_get(struct engine_worker *w, const void *key, size_t klen,
			  int64_t touch_exptime, void *buf, size_t cap, struct engine_item *it);
void bl_get_batch(struct engine_worker *w, const struct engine_key *keys, unsigned n,
		  const struct engine_get_sink *sink);
void bl_prefetch(struct engine_worker *w, const struct engine_key *keys, unsigned n);
enum engine_status bl_store(struct engine_worker *w, enum engine_store_mode mode, const void *key,
			    size_t klen, const void *val, size_t vlen, uint32_t flags,
			    int64_t exptime, uint64_t cas_in, uint64_t *cas_out);
enum engine_status bl_remove(struct engine_worker *w, const void *key, size_t klen,
			     uint64_t cas_in);
enum engine_status bl_arith(struct engine_worker *w, const void *key, size_t klen, bool incr,
			    uint64_t delta, uint64_t *value_out, uint64_t *cas_out);
enum engine_status bl_touch(struct engine_worker *w, const void *key, size_t klen, int64_t exptime);

/* --- baseline.c: threads ------------------------------------------------ */

/* rte_hash's multi-writer mode keeps a free-slot cache per lcore, so a
 * thread that changes the table needs an lcore id. Returns true when it
 * registered the calling thread (undo with bl_lcore_put), false when the
 * thread already had one; *ok is false when no lcore id was left. */
bool bl_lcore_get(bool *ok);
void bl_lcore_put(bool registered);

#endif /* SEGCACHED_BL_PRIVATE_H */
