/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * -vv's trace lines (lib/cmd's cmd_settings.trace) to the log, as memcached
 * prints them ("<28 get foo"), at most LOG_TRACE_PER_S a second: a busy
 * server at -vv must not spend itself on its log. What is left out is
 * counted and said in one line when the next second's lines begin.
 */
#include "log.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define LOG_TRACE_PER_S 1000

static _Atomic uint64_t trace_second; /* the second the count is for */
static _Atomic uint64_t trace_count;  /* lines offered in that second */

void
log_trace(void *arg, const char *line)
{
	struct timespec ts;
	uint64_t now, was, n;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec;
	was = atomic_load_explicit(&trace_second, memory_order_relaxed);
	if (was != now &&
	    atomic_compare_exchange_strong(&trace_second, &was, now)) {
		uint64_t last = atomic_exchange(&trace_count, 0);

		if (last > LOG_TRACE_PER_S)
			rte_log(RTE_LOG_NOTICE, segcached_logtype,
				"segcached: -vv: %lu trace lines of the last second not logged "
				"(at most %d a second)\n", (unsigned long)(last - LOG_TRACE_PER_S),
				LOG_TRACE_PER_S);
	}
	n = atomic_fetch_add_explicit(&trace_count, 1, memory_order_relaxed);
	if (n < LOG_TRACE_PER_S)
		rte_log(RTE_LOG_NOTICE, segcached_logtype, "%s\n", line);
}
