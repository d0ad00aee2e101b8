/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A log rate limiter for runtime events (a refused connection, a full
 * heap, a link going down): the first occurrence is logged at once, then
 * at most one line per interval, and that line says how many occurrences
 * were not logged since the last one. One limiter per kind of event; any
 * thread may use it at any time (a lock-free check on the event's path:
 * these events come in floods, the log must not).
 */
#ifndef SEGCACHED_UTIL_RATELIMIT_H
#define SEGCACHED_UTIL_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct util_ratelimit {
	uint64_t interval_ns;  /* at most one line per this much time */
	uint64_t next_ns;      /* the earliest time of the next line (atomic) */
	uint64_t suppressed;   /* occurrences not logged since the last line (atomic) */
};

/* The server's runtime events (connections refused, heap full, link
 * changes): one line per kind per this many seconds. */
#define UTIL_RATELIMIT_EVENT_S 10

/* A limiter allowing one line per `seconds`; a static initialiser. */
#define UTIL_RATELIMIT_INIT(seconds) \
	{ .interval_ns = (uint64_t)(seconds) * 1000000000u, .next_ns = 0, .suppressed = 0 }

/* One occurrence at time now_ns (any clock that only goes forward, the
 * same for every call on rl). True: log it, and *suppressed is how many
 * occurrences were not logged since the previous line. False: do not
 * log; it is counted for the next line. */
bool util_ratelimit_at(struct util_ratelimit *rl, uint64_t now_ns, uint64_t *suppressed);

/* util_ratelimit_at() with CLOCK_MONOTONIC_COARSE (cheap: no system call). */
bool util_ratelimit(struct util_ratelimit *rl, uint64_t *suppressed);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_UTIL_RATELIMIT_H */
