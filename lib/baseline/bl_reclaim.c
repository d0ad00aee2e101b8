/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Safe memory reclamation for the baseline engine: rte_rcu_qsbr plus one
 * rte_rcu_qsbr_dq defer queue for everything readers might still see —
 * items that were replaced or unlinked, and the rte_hash key slots of keys
 * that left the table.
 *
 * We do not attach the queue with rte_hash_rcu_qsbr_add(): that queue
 * would only learn about deleted keys (an item replaced in place by
 * rte_hash_add_key_with_hash_data() is not reported), it is sized to the
 * whole key store (16+ bytes per entry), and when it is full rte_hash
 * drops the entry with an error. Our own queue takes both kinds of entry,
 * is a fraction of the table, and a full queue makes the (offline) writer
 * reclaim until there is room, so nothing is ever lost.
 */
#include <sched.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "baseline/bl_free.h"
#include "baseline/bl_reclaim.h"
#include "util/util_err.h"

/* Defer-queue callback: the grace period of these entries is over. Runs
 * under reclaim_lock. */
static void
bl_dq_free(void *p, void *elem, unsigned int n)
{
	struct bl_engine *e = p;
	struct bl_retire *r = elem;

	for (unsigned int i = 0; i < n; i++) {
		if (r[i].pos >= 0)
			rte_hash_free_key_with_position(e->h, r[i].pos);
		if (r[i].reason == BL_R_DELETED || r[i].reason == BL_R_EXPIRED)
			__atomic_store_n(&e->reclaimed, e->reclaimed + 1, __ATOMIC_RELAXED);
		bl_item_release(e, r[i].it);
	}
	__atomic_fetch_sub(&e->dq_used, n, __ATOMIC_RELEASE);
}

int
bl_reclaim_init(struct bl_engine *e, char *err, size_t errlen)
{
	struct rte_rcu_qsbr_dq_parameters dp = {0};
	char name[RTE_RCU_QSBR_DQ_NAMESIZE];
	unsigned threads = e->max_workers + 1; /* + the sweeper */
	size_t sz = rte_rcu_qsbr_get_memsize(threads);
	uint32_t size;

	e->qsv = rte_zmalloc("bl_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (e->qsv == NULL || rte_rcu_qsbr_init(e->qsv, threads) != 0)
		return util_fail(err, errlen, "cannot allocate the RCU variable for %u threads",
				 threads);
	/* Room for what a few thousand operations unlink between two grace
	 * periods; 2^k - 1 so that the ring (2^k entries) is not doubled. */
	size = rte_align32prevpow2(e->entries / 16);
	size = RTE_MAX(size, 1024u);
	size = RTE_MIN(size, 65536u) - 1;
	snprintf(name, sizeof(name), "bl%u_dq", e->id);
	dp.name = name;
	dp.size = size;
	dp.esize = sizeof(struct bl_retire);
	/* No reclamation inside enqueue: it would call bl_dq_free without
	 * reclaim_lock. We reclaim ourselves (bl_defer). */
	dp.trigger_reclaim_limit = UINT32_MAX;
	dp.max_reclaim_size = BL_RECLAIM_MAX;
	dp.free_fn = bl_dq_free;
	dp.p = e;
	dp.v = e->qsv;
	e->dq_size = size;
	e->dq = rte_rcu_qsbr_dq_create(&dp);
	if (e->dq == NULL)
		return util_fail(err, errlen, "cannot create the RCU defer queue: %s",
				 rte_strerror(rte_errno));
	rte_spinlock_init(&e->reclaim_lock);
	return 0;
}

void
bl_reclaim_fini(struct bl_engine *e)
{
	if (e->dq != NULL) {
		rte_spinlock_lock(&e->reclaim_lock);
		/* All workers are offline now, so this frees everything. */
		if (rte_rcu_qsbr_dq_delete(e->dq) != 0)
			BL_LOG(ERR, "defer queue not empty at destroy; items leak");
		rte_spinlock_unlock(&e->reclaim_lock);
		e->dq = NULL;
	}
	rte_free(e->qsv);
	e->qsv = NULL;
}

void
bl_backoff(unsigned round)
{
	if (round < 8) {
		for (unsigned i = 0; i < (16u << round); i++)
			rte_pause();
	} else {
		/* The reader we wait for may be preempted: let it run. */
		sched_yield();
	}
}

unsigned
bl_reclaim(struct bl_worker *w, bool wait, unsigned *pending)
{
	struct bl_engine *e = w->e;
	unsigned freed = 0, left = 0;

	RTE_ASSERT(!w->online);
	if (wait)
		rte_spinlock_lock(&e->reclaim_lock);
	else if (!rte_spinlock_trylock(&e->reclaim_lock)) {
		if (pending != NULL)
			*pending = 1; /* someone else is reclaiming: not nothing */
		return 0;
	}
	engine_count(&w->base, ENGINE_C_lock_segment);
	rte_rcu_qsbr_dq_reclaim(e->dq, BL_RECLAIM_MAX, &freed, &left, NULL);
	rte_spinlock_unlock(&e->reclaim_lock);
	w->deferred = 0;
	if (pending != NULL)
		*pending = left;
	return freed;
}

void
bl_defer(struct bl_worker *w, struct bl_item *it, int32_t pos,
	 enum bl_retire_reason why)
{
	struct bl_engine *e = w->e;
	struct bl_retire r = { .it = it, .pos = pos, .reason = why };
	unsigned round = 0;

	RTE_ASSERT(!w->online);
	/* Reserve a place first, so the enqueue itself cannot fail (the
	 * library would log an error for every failed attempt). */
	while (__atomic_add_fetch(&e->dq_used, 1, __ATOMIC_ACQUIRE) > e->dq_size) {
		__atomic_fetch_sub(&e->dq_used, 1, __ATOMIC_RELAXED);
		/* Full: free what readers have released, then retry. We are
		 * offline and online threads never wait for us (rules 3, 4),
		 * so this ends once they finish their current operation. */
		bl_reclaim(w, true, NULL);
		bl_backoff(round < 16 ? round++ : round);
	}
	if (rte_rcu_qsbr_dq_enqueue(e->dq, &r) != 0) {
		/* Cannot happen with the reservation above; never free an
		 * item that readers may still hold. */
		BL_LOG(CRIT, "defer queue enqueue failed; item leaked");
		__atomic_fetch_sub(&e->dq_used, 1, __ATOMIC_RELAXED);
		return;
	}
	if (++w->deferred >= BL_RECLAIM_BATCH)
		bl_reclaim(w, false, NULL);
}
