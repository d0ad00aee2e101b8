/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * flush_all of the baseline engine: at once, or at a time that the first
 * operation after it applies (bl_flush_check, bl_flush.h). Every
 * operation checks for a delayed flush, and baseline.c's expiration sweep
 * too, so the check and what it fires stand below all of them.
 */
#include "baseline/bl_flush.h"

/* Everything stored so far is flushed: cas numbers order stores exactly,
 * so an item stored in the same second after the flush survives. */
static void
bl_flush_apply(struct bl_engine *e)
{
	uint64_t c = __atomic_load_n(&e->cas_next, __ATOMIC_ACQUIRE);
	uint64_t old = __atomic_load_n(&e->flush_cas, __ATOMIC_RELAXED);

	while (old < c && !__atomic_compare_exchange_n(&e->flush_cas, &old, c, false,
						      __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	__atomic_fetch_add(&e->flushes, 1, __ATOMIC_RELAXED);
}

void
bl_flush_fire(struct bl_engine *e, int64_t at)
{
	/* The first operation at or after the flush time applies it, before
	 * it stores anything itself. */
	if (__atomic_compare_exchange_n(&e->flush_at, &at, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		bl_flush_apply(e);
}

void
bl_flush_all(struct engine *base, int64_t delay)
{
	struct bl_engine *e = (struct bl_engine *)base;
	int64_t now = bl_now(e);
	/* memcached reads the delay like an exptime (over 30 days: absolute). */
	int64_t at = delay > 0 ? engine_expiry_from_exptime(delay, now) : -1;

	if (at < 0 || at <= now) {
		/* A flush now also replaces a pending delayed one (memcached). */
		__atomic_store_n(&e->flush_at, 0, __ATOMIC_RELAXED);
		bl_flush_apply(e);
	} else {
		__atomic_store_n(&e->flush_at, at, __ATOMIC_RELEASE);
	}
}
