/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Freeing in the baseline engine: an item's object goes back into its page
 * (its rte_mempool), and the page is marked in its class's free map, where
 * bl_alloc.c's bl_class_scan() looks for free objects. Two kinds of caller:
 * an operation whose item was never linked frees it at once
 * (bl_item_free_now, bl_ops.c), and the defer queue frees what readers
 * have released after its grace period (bl_item_release, bl_reclaim.c).
 * Allocation evicts through the defer queue and the defer queue frees
 * through here, so this stands below both bl_alloc.c and bl_reclaim.c.
 */
#include "baseline/bl_free.h"

/* Marks a page as having free objects, after the object went back. An
 * unconditional read-modify-write: it orders the put before it (a plain
 * load could pass the ring's tail store). */
static inline void
bl_page_mark_free(struct bl_class *c, const struct bl_page *pg)
{
	__atomic_fetch_or(&c->free_map[pg->cidx / 64], 1ULL << (pg->cidx % 64),
			  __ATOMIC_SEQ_CST);
}

/* Puts an object back into its page and tells the allocator. */
static void
bl_item_put(struct bl_engine *e, struct bl_item *it)
{
	struct rte_mempool *mp = rte_mempool_from_obj(it);
	const struct bl_page *pg = &e->pages[*(uint32_t *)rte_mempool_get_priv(mp)];
	struct bl_class *c = &e->classes[pg->cls];

	__atomic_store_n(&it->state, BL_FREE, __ATOMIC_RELAXED);
	rte_mempool_put(mp, it);
	bl_page_mark_free(c, pg);
	/* Point allocation at the page that just got an object back. */
	__atomic_store_n(&c->hint, mp, __ATOMIC_RELAXED);
}

void
bl_item_free_now(struct bl_engine *e, struct bl_item *it)
{
	bl_item_put(e, it);
}

void
bl_item_release(struct bl_engine *e, struct bl_item *it)
{
	bl_item_put(e, it);
}
