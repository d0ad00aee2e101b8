/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What every lib/seg file may use and that describes no part of the
 * engine: branch hints, the unit tests' points (seg_test.h), a monotonic
 * clock, a waiting step, the spinlock and the random step of eviction and
 * read counting.
 */
#ifndef SEGCACHED_SEG_CORE_H
#define SEGCACHED_SEG_CORE_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <rte_pause.h>

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

static inline uint64_t
seg_xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif /* SEGCACHED_SEG_CORE_H */
