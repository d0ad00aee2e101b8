/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * epoll_pwait2 with a fallback to epoll_wait where the kernel lacks it.
 */
#include "lg_epoll.h"

#include <errno.h>
#include <stdbool.h>
#include <time.h>

/* Set once any thread sees ENOSYS: the kernel will not grow the call. */
static bool lg_no_pwait2;

int
lg_epoll_wait_ns(int ep, struct epoll_event *evs, int max, uint64_t wait_ns)
{
	int n;

	if (!__atomic_load_n(&lg_no_pwait2, __ATOMIC_RELAXED)) {
		struct timespec ts = {
			.tv_sec = (time_t)(wait_ns / 1000000000ULL),
			.tv_nsec = (long)(wait_ns % 1000000000ULL),
		};

		n = epoll_pwait2(ep, evs, max, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n < 0 && errno == EINTR ? 0 : n;
		__atomic_store_n(&lg_no_pwait2, true, __ATOMIC_RELAXED);
	}
	n = epoll_wait(ep, evs, max, (int)(wait_ns / 1000000ULL));
	return n < 0 && errno == EINTR ? 0 : n;
}
