/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Item memory of the baseline engine: a slab allocator built from
 * rte_mempool, and eviction.
 *
 * Items live in size classes (40 bytes, then x1.25 rounded to 8, up to
 * item_max), like memcached's slabs. A class grows by pages; a page is an
 * rte_mempool of 2^k - 1 objects (so its ring of 2^k pointers is exact)
 * populated from one rte_zmalloc'd block of about heap/128 bytes. A page
 * per mempool, instead of one mempool per class, because a mempool's ring
 * is sized for its capacity when it is created: one pool per class would
 * have to reserve a ring for the whole budget in every class it uses.
 * Pages are charged to the memory budget when they are created and are
 * never given back to another class (rte_mempool cannot release memory),
 * as in memcached without slab rebalancing.
 *
 * When a class has no free object and no page can be added, we evict:
 * sample BL_SAMPLES random objects of the class straight from its pages
 * and unlink the least recently used live one (Redis-style sampled LRU;
 * ENGINE_EVICT_RANDOM takes the first live one). Expired or flushed items
 * are always taken first. Freed objects return to their page after an RCU
 * grace period (bl_free.c), so the allocating thread waits (offline) for it.
 */
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "baseline/bl_alloc.h"
#include "baseline/bl_reclaim.h"
#include "util/util_err.h"

#define BL_CLASS_MIN 40        /* header + a 1-byte key + a few value bytes */
#define BL_PAGE_MIN (64 << 10)
#define BL_PAGES_TARGET 128    /* pages per budget: 2 memzones each */
#define BL_IDLE_ROUNDS 64      /* rounds without progress before NO_MEMORY */
#define BL_REAP_SCAN 65536     /* table entries bl_reap_dead looks at per call */
#define BL_WAIT_ROUNDS (1u << 20)

static size_t
align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

static void
bl_page_free_cb(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	RTE_SET_USED(memhdr);
	rte_free(opaque);
}

int
bl_alloc_init(struct bl_engine *e, char *err, size_t errlen)
{
	size_t heap = e->heap_budget;
	size_t target = RTE_MAX((size_t)BL_PAGE_MIN, heap / BL_PAGES_TARGET);
	size_t top = align8(e->item_max), s = BL_CLASS_MIN, min_len = SIZE_MAX;
	unsigned n = 0;

	/* Class sizes. */
	while (s < top) {
		if (n == BL_CLASS_MAX - 1)
			return util_fail(err, errlen,
					 "item_max %zu needs more than %d size classes",
					 e->item_max, BL_CLASS_MAX);
		e->classes[n++].size = (uint32_t)s;
		s = RTE_MAX(s + 8, align8(s * 5 / 4));
	}
	e->classes[n++].size = (uint32_t)top;
	e->nclasses = n;

	/* Page geometry of each class. */
	for (unsigned i = 0; i < n; i++) {
		struct bl_class *c = &e->classes[i];
		struct rte_mempool_objsz sz;
		uint32_t per = 1;

		c->stride = rte_mempool_calc_obj_size(c->size, BL_MP_FLAGS, &sz);
		while ((size_t)(2 * per + 1) * c->stride <= target)
			per = 2 * per + 1;
		c->per_page = per;
		c->page_len = (size_t)per * c->stride;
		c->page_cost = c->page_len + rte_ring_get_memsize(per + 1) +
			       sizeof(struct rte_mempool) + 4 * RTE_CACHE_LINE_SIZE;
		min_len = RTE_MIN(min_len, c->page_cost);
	}
	if (e->classes[n - 1].page_cost + 4 * target > heap)
		return util_fail(err, errlen,
				 "memory budget too small: %zu bytes left for items after the "
				 "hash table, need at least %zu for item_max %zu",
				 heap, e->classes[n - 1].page_cost + 4 * target, e->item_max);

	/* Size -> class for the common sizes. */
	for (size_t i = 0, c = 0; i <= BL_SMALL_MAX / 8; i++) {
		while (c + 1 < n && e->classes[c].size < i * 8)
			c++;
		e->small_class[i] = (uint8_t)c;
	}

	e->max_pages = (uint32_t)(heap / min_len + 1);
	e->pages = rte_zmalloc("bl_pages", sizeof(*e->pages) * e->max_pages, 0);
	if (e->pages == NULL)
		return util_fail(err, errlen, "cannot allocate the page table");
	for (unsigned i = 0; i < n; i++) {
		e->classes[i].page_ids = rte_zmalloc("bl_class_pages",
						     sizeof(uint32_t) * e->max_pages, 0);
		e->classes[i].free_map = rte_zmalloc("bl_class_free",
						     sizeof(uint64_t) * ((e->max_pages + 63) / 64),
						     0);
		if (e->classes[i].page_ids == NULL || e->classes[i].free_map == NULL)
			return util_fail(err, errlen, "cannot allocate the class page lists");
	}
	rte_spinlock_init(&e->grow_lock);
	return 0;
}

void
bl_alloc_fini(struct bl_engine *e)
{
	/* rte_mempool_free() hands each page to bl_page_free_cb. */
	for (uint32_t i = 0; i < e->npages; i++)
		rte_mempool_free(e->pages[i].mp);
	e->npages = 0;
	for (unsigned i = 0; i < e->nclasses; i++) {
		rte_free(e->classes[i].page_ids);
		rte_free(e->classes[i].free_map);
		e->classes[i].page_ids = NULL;
		e->classes[i].free_map = NULL;
	}
	rte_free(e->pages);
	e->pages = NULL;
}

/* Adds a page to class cls if the budget allows. Returns true when the
 * class has more pages than when the caller looked (seen). */
static bool
bl_class_grow(struct bl_worker *w, unsigned cls, uint32_t seen)
{
	struct bl_engine *e = w->e;
	struct bl_class *c = &e->classes[cls];
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp = NULL;
	struct bl_page *pg;
	void *mem = NULL, *obj;
	bool grown = false;
	int n;

	rte_spinlock_lock(&e->grow_lock);
	engine_count(&w->base, ENGINE_C_lock_segment);
	if (c->npages != seen) {
		grown = true; /* another thread grew it meanwhile */
		goto out;
	}
	if (e->heap_used + c->page_cost > e->heap_budget || e->npages == e->max_pages)
		goto out;
	/* Zeroed, so objects never handed out read BL_FREE when sampled. */
	mem = rte_zmalloc_socket("bl_page", c->page_len, RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (mem == NULL)
		goto fail;
	snprintf(name, sizeof(name), "bl%x_%x", e->id, e->npages);
	mp = rte_mempool_create_empty(name, c->per_page, c->size, 0, sizeof(uint32_t),
				      SOCKET_ID_ANY, BL_MP_FLAGS);
	if (mp == NULL)
		goto fail;
	*(uint32_t *)rte_mempool_get_priv(mp) = e->npages;
	n = rte_mempool_populate_iova(mp, mem, RTE_BAD_IOVA, c->page_len,
				      bl_page_free_cb, mem);
	if (n > 0)
		mem = NULL; /* owned by the mempool now */
	if (n != (int)c->per_page)
		goto fail;
	/* Eviction samples objects by address: check the layout it assumes
	 * (objects back to back from the start of the page). */
	if (mp->header_size + mp->elt_size + mp->trailer_size != c->stride ||
	    rte_mempool_get(mp, &obj) != 0)
		goto fail;
	rte_mempool_put(mp, obj);
	if ((uintptr_t)obj < (uintptr_t)mp->mem_list.stqh_first->addr + mp->header_size ||
	    ((uintptr_t)obj - (uintptr_t)mp->mem_list.stqh_first->addr - mp->header_size) %
		    c->stride != 0)
		goto fail;

	pg = &e->pages[e->npages];
	pg->mp = mp;
	pg->first = (char *)mp->mem_list.stqh_first->addr + mp->header_size;
	pg->stride = c->stride;
	pg->count = c->per_page;
	pg->cls = cls;
	pg->cidx = c->npages;
	c->page_ids[c->npages] = e->npages;
	__atomic_fetch_or(&c->free_map[pg->cidx / 64], 1ULL << (pg->cidx % 64), __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->npages, c->npages + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&e->npages, e->npages + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&c->hint, mp, __ATOMIC_RELEASE);
	e->heap_used += c->page_cost;
	grown = true;
	goto out;
fail:
	BL_LOG(WARNING, "cannot add a %zu-byte page to class %u: %s", c->page_len,
	       cls, rte_strerror(rte_errno));
	rte_mempool_free(mp);
	rte_free(mem);
	/* Treat the budget as spent from now on rather than retry each time. */
	e->heap_budget = e->heap_used;
out:
	rte_spinlock_unlock(&e->grow_lock);
	return grown;
}

static inline struct bl_item *
bl_item_init(void *obj, unsigned cls)
{
	struct bl_item *it = obj;

	it->cls = (uint8_t)cls;
	__atomic_store_n(&it->state, BL_FRESH, __ATOMIC_RELAXED);
	return it;
}

/* Takes a free object from any page of the class that has one: the hinted
 * page first, then the pages the free map points at. A page found empty
 * is cleared from the map and checked again, so an object put back
 * meanwhile (its freer, bl_free.c, sets the bit after the put) is never
 * lost. */
static void *
bl_class_scan(struct bl_worker *w, struct bl_class *c)
{
	struct bl_engine *e = w->e;
	uint32_t n = __atomic_load_n(&c->npages, __ATOMIC_ACQUIRE);
	uint32_t words = (n + 63) / 64;
	uint32_t start = words ? bl_rand_below(w, words) : 0;
	struct rte_mempool *hint = __atomic_load_n(&c->hint, __ATOMIC_ACQUIRE);
	void *obj;

	if (hint != NULL && rte_mempool_get(hint, &obj) == 0)
		return obj;
	for (uint32_t i = 0; i < words; i++) {
		uint32_t wi = start + i < words ? start + i : start + i - words;
		uint64_t bits = __atomic_load_n(&c->free_map[wi], __ATOMIC_SEQ_CST);

		while (bits != 0) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			uint32_t cidx = wi * 64 + b;
			struct rte_mempool *mp;

			bits &= bits - 1;
			if (cidx >= n)
				break;
			mp = e->pages[c->page_ids[cidx]].mp;
			if (rte_mempool_get(mp, &obj) == 0) {
				__atomic_store_n(&c->hint, mp, __ATOMIC_RELAXED);
				return obj;
			}
			__atomic_fetch_and(&c->free_map[wi], ~(1ULL << b), __ATOMIC_SEQ_CST);
			if (rte_mempool_avail_count(mp) > 0) {
				__atomic_fetch_or(&c->free_map[wi], 1ULL << b, __ATOMIC_SEQ_CST);
				if (rte_mempool_get(mp, &obj) == 0)
					return obj;
			}
		}
	}
	return NULL;
}

static struct bl_item *
bl_item_alloc_slow(struct bl_worker *w, unsigned cls,
		   const struct bl_stripe *held)
{
	struct bl_engine *e = w->e;
	struct bl_class *c = &e->classes[cls];
	bool was_online = w->online;
	unsigned idle = 0, wait = 0;
	void *obj = NULL;

	/* Everything below may wait for readers: never while online. */
	if (was_online)
		bl_offline(w);
	for (unsigned round = 0; round < BL_WAIT_ROUNDS; round++) {
		unsigned pending = 0, evicted = 0;

		obj = bl_class_scan(w, c);
		if (obj != NULL)
			break;
		if (bl_class_grow(w, cls, __atomic_load_n(&c->npages, __ATOMIC_ACQUIRE)))
			continue;
		if (bl_reclaim(w, true, &pending) > 0)
			continue;
		/* Evict only when what is already waiting cannot be enough. */
		if (pending < BL_EVICT_BATCH)
			evicted = bl_evict(w, (int)cls, held, BL_EVICT_BATCH);
		if (evicted == 0 && pending == 0)
			evicted = bl_reap_dead(w, (int)cls, BL_EVICT_BATCH);
		if (evicted == 0 && pending == 0) {
			if (++idle > BL_IDLE_ROUNDS)
				break; /* nothing can be reclaimed */
		} else {
			idle = 0;
		}
		bl_backoff(wait < 16 ? wait++ : wait);
	}
	if (was_online)
		bl_online(w);
	return obj != NULL ? bl_item_init(obj, cls) : NULL;
}

struct bl_item *
bl_item_alloc(struct bl_worker *w, unsigned cls,
	      const struct bl_stripe *held)
{
	struct rte_mempool *mp = __atomic_load_n(&w->e->classes[cls].hint, __ATOMIC_ACQUIRE);
	void *obj;

	if (likely(mp != NULL && rte_mempool_get(mp, &obj) == 0))
		return bl_item_init(obj, cls);
	return bl_item_alloc_slow(w, cls, held);
}

bool
bl_unlink_if_current(struct bl_worker *w, struct bl_item *it,
		     uint64_t fp, int32_t *pos)
{
	struct bl_engine *e = w->e;
	struct bl_stripe *s = bl_stripe_of(e, fp);
	bool done = false;

	RTE_ASSERT(w->online);
	/* Online: try-lock only (rule 3). Fails on the caller's own stripe. */
	if (!rte_spinlock_trylock(&s->lock))
		return false;
	engine_count(&w->base, ENGINE_C_lock_bucket);
	if (bl_lookup(e, fp) == it &&
	    __atomic_load_n(&it->state, __ATOMIC_ACQUIRE) == BL_LIVE) {
		int32_t p = rte_hash_del_key_with_hash(e->h, &fp, (hash_sig_t)fp);

		engine_count(&w->base, ENGINE_C_lock_segment);
		if (p >= 0) {
			__atomic_store_n(&it->state, BL_DEAD, __ATOMIC_RELAXED);
			BL_ADD(w->items, -1);
			BL_ADD(w->bytes, -(int64_t)bl_item_size(it));
			*pos = p;
			done = true;
		}
	}
	bl_stripe_unlock(s);
	return done;
}

/* A random object of class cls (or of any class when cls < 0), and the
 * largest key it can hold; NULL when there are no pages. */
static struct bl_item *
bl_sample(struct bl_worker *w, int cls, uint32_t *kmax)
{
	struct bl_engine *e = w->e;
	const struct bl_page *pg;
	uint32_t n;

	if (cls >= 0) {
		const struct bl_class *c = &e->classes[cls];

		n = __atomic_load_n(&c->npages, __ATOMIC_ACQUIRE);
		if (n == 0)
			return NULL;
		pg = &e->pages[c->page_ids[bl_rand_below(w, n)]];
	} else {
		n = __atomic_load_n(&e->npages, __ATOMIC_ACQUIRE);
		if (n == 0)
			return NULL;
		pg = &e->pages[bl_rand_below(w, n)];
	}
	*kmax = e->classes[pg->cls].size - (uint32_t)BL_ITEM_HDR;
	return (struct bl_item *)(pg->first + (size_t)bl_rand_below(w, pg->count) * pg->stride);
}

unsigned
bl_evict(struct bl_worker *w, int cls, const struct bl_stripe *held,
	 unsigned want)
{
	struct bl_engine *e = w->e;
	struct bl_item *victim[BL_EVICT_BATCH];
	int32_t pos[BL_EVICT_BATCH];
	bool dead[BL_EVICT_BATCH];
	int64_t now = bl_now(e);
	unsigned n = 0;

	RTE_SET_USED(held); /* its items fail the try-lock in bl_unlink_if_current */
	want = RTE_MIN(want, (unsigned)BL_EVICT_BATCH);
	bl_online(w);
	for (unsigned attempt = 0; attempt < want * 8 && n < want; attempt++) {
		struct bl_item *best = NULL;
		uint64_t best_fp = 0;
		bool best_dead = false;

		for (unsigned k = 0; k < BL_SAMPLES; k++) {
			uint32_t kmax, klen;
			struct bl_item *it = bl_sample(w, cls, &kmax);
			bool is_dead;

			if (it == NULL)
				break;
			if (__atomic_load_n(&it->state, __ATOMIC_ACQUIRE) != BL_LIVE)
				continue;
			/* A live item cannot be freed while we are online,
			 * so its key is stable; still bound what we read. */
			klen = it->klen;
			if (klen == 0 || klen > kmax || klen > ENGINE_KEY_MAX)
				continue;
			is_dead = bl_item_expired(it, now) || bl_item_flushed(e, it);
			if (!is_dead && e->eviction == ENGINE_EVICT_NONE)
				continue;
			if (best == NULL || is_dead ||
			    (int32_t)(it->atime - best->atime) < 0) {
				best = it;
				best_dead = is_dead;
				best_fp = bl_fingerprint(it->data, klen);
			}
			if (is_dead || e->eviction == ENGINE_EVICT_RANDOM)
				break;
		}
		if (best != NULL && bl_unlink_if_current(w, best, best_fp, &pos[n])) {
			victim[n] = best;
			dead[n] = best_dead;
			n++;
		}
	}
	bl_offline(w);
	for (unsigned i = 0; i < n; i++) {
		if (dead[i]) {
			BL_ADD(w->expired, 1);
		} else {
			BL_ADD(w->evictions, 1);
			if (!victim[i]->fetched)
				BL_ADD(w->evicted_unfetched, 1);
		}
		bl_defer(w, victim[i], pos[i], dead[i] ? BL_R_EXPIRED : BL_R_EVICTED);
	}
	return n;
}

unsigned
bl_reap_dead(struct bl_worker *w, int cls, unsigned want)
{
	struct bl_engine *e = w->e;
	struct bl_item *victim[BL_EVICT_BATCH];
	int32_t pos[BL_EVICT_BATCH];
	int64_t now = bl_now(e);
	bool wrapped = false;
	unsigned n = 0;

	want = RTE_MIN(want, (unsigned)BL_EVICT_BATCH);
	bl_online(w);
	for (uint32_t i = 0; i < BL_REAP_SCAN && n < want; i++) {
		const void *key;
		void *data;
		struct bl_item *it;
		uint64_t fp;

		if (rte_hash_iterate(e->h, &key, &data, &w->reap_next) < 0) {
			w->reap_next = 0;
			if (wrapped)
				break;
			wrapped = true;
			continue;
		}
		it = data;
		if (it == NULL || __atomic_load_n(&it->state, __ATOMIC_ACQUIRE) != BL_LIVE ||
		    (cls >= 0 && it->cls != cls) ||
		    (!bl_item_expired(it, now) && !bl_item_flushed(e, it)))
			continue;
		memcpy(&fp, key, sizeof(fp));
		if (bl_unlink_if_current(w, it, fp, &pos[n]))
			victim[n++] = it;
	}
	bl_offline(w);
	for (unsigned i = 0; i < n; i++) {
		BL_ADD(w->expired, 1);
		bl_defer(w, victim[i], pos[i], BL_R_EXPIRED);
	}
	return n;
}
