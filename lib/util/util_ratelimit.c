/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The log rate limiter of util_ratelimit.h: an atomic "next allowed time"
 * that one caller wins with a compare-and-swap, and an atomic count of
 * the occurrences the losers did not log.
 */
#include <time.h>

#include "util_ratelimit.h"

bool
util_ratelimit_at(struct util_ratelimit *rl, uint64_t now_ns, uint64_t *suppressed)
{
	uint64_t next = __atomic_load_n(&rl->next_ns, __ATOMIC_RELAXED);

	if (now_ns < next ||
	    !__atomic_compare_exchange_n(&rl->next_ns, &next, now_ns + rl->interval_ns, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		/* within the interval, or another thread logs this one */
		__atomic_fetch_add(&rl->suppressed, 1, __ATOMIC_RELAXED);
		return false;
	}
	*suppressed = __atomic_exchange_n(&rl->suppressed, 0, __ATOMIC_ACQ_REL);
	return true;
}

bool
util_ratelimit(struct util_ratelimit *rl, uint64_t *suppressed)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	/* +1: a clock reading of 0 must not look like "never logged" */
	return util_ratelimit_at(rl, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1,
				 suppressed);
}
