/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * --verify all's per-key version bookkeeping (see lg_verify.h).
 */
#include "lg_verify.h"

#include <stdlib.h>

static void
key_lock(struct lg_verify_key *k)
{
	while (__atomic_exchange_n(&k->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&k->lock, __ATOMIC_RELAXED))
			;
}

static void
key_unlock(struct lg_verify_key *k)
{
	__atomic_store_n(&k->lock, 0, __ATOMIC_RELEASE);
}

int
lg_verify_init(struct lg_verify *v, uint64_t nkeys, uint64_t epoch_seed)
{
	v->nkeys = nkeys;
	v->epoch = 1 + (uint32_t)(epoch_seed % 255);
	v->keys = calloc(nkeys ? nkeys : 1, sizeof(*v->keys));
	return v->keys ? 0 : -1;
}

void
lg_verify_free(struct lg_verify *v)
{
	free(v->keys);
	v->keys = NULL;
}

uint32_t
lg_verify_set_prepared(struct lg_verify *v, uint64_t key, uint32_t *raise)
{
	struct lg_verify_key *k = &v->keys[key];
	uint32_t c;

	key_lock(k);
	c = (k->next + 1) & LG_VERIFY_COUNTER_MASK;
	if (c == 0) {
		/* A key set 2^24 times: numbers start again, so the floor
		 * does too and the upper bound no longer holds. */
		c = 1;
		__atomic_store_n(&k->floor, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&k->wrapped, true, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&k->next, c, __ATOMIC_RELEASE);
	*raise = k->outstanding == 0 && c > k->floor ? c : 0;
	k->outstanding++;
	key_unlock(k);
	return v->epoch << LG_VERIFY_COUNTER_BITS | c;
}

void
lg_verify_set_acked(struct lg_verify *v, uint64_t key, uint32_t raise)
{
	struct lg_verify_key *k = &v->keys[key];

	key_lock(k);
	if (raise > k->floor && raise <= k->next)
		__atomic_store_n(&k->floor, raise, __ATOMIC_RELEASE);
	k->outstanding--;
	key_unlock(k);
}

void
lg_verify_set_dropped(struct lg_verify *v, uint64_t key)
{
	struct lg_verify_key *k = &v->keys[key];

	key_lock(k);
	k->outstanding--;
	key_unlock(k);
}

uint32_t
lg_verify_floor(struct lg_verify *v, uint64_t key)
{
	return __atomic_load_n(&v->keys[key].floor, __ATOMIC_ACQUIRE);
}

const char *
lg_verify_check(struct lg_verify *v, uint64_t key, uint32_t floor,
		uint32_t version)
{
	uint32_t c = version & LG_VERIFY_COUNTER_MASK;

	if (version >> LG_VERIFY_COUNTER_BITS != v->epoch)
		/* Not this run's: an earlier run's value is current only
		 * until this run's first set of the key is acknowledged. */
		return floor ? "stale value: a version this run never set" : NULL;
	if (c < floor)
		return "stale value: older than a set acknowledged before the get";
	if (c > __atomic_load_n(&v->keys[key].next, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&v->keys[key].wrapped, __ATOMIC_ACQUIRE))
		return "value of a version not yet set";
	return NULL;
}
