/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Helpers shared by both storage engines: the clock, memcached's exptime
 * rules and the decimal form of incr/decr values; the optional operations'
 * wrappers.
 */
#include "engine/engine.h"
#include "engine/engine_config.h"
#include "engine/engine_dump.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int64_t
engine_clock_default(void *arg)
{
	/* Anchor a monotonic clock to the wall clock once, so that a wall
	 * clock step (NTP, operator) neither expires nor resurrects items. */
	static int64_t offset;
	static int anchored;
	struct timespec mono;

	(void)arg;
	/* The coarse clock is a few ns (no syscall, no TSC read) and ticks
	 * every few ms: plenty for second-granular expiry on every request. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &mono);
	if (!__atomic_load_n(&anchored, __ATOMIC_ACQUIRE)) {
		struct timespec wall;

		clock_gettime(CLOCK_REALTIME, &wall);
		__atomic_store_n(&offset, (int64_t)wall.tv_sec - (int64_t)mono.tv_sec,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&anchored, 1, __ATOMIC_RELEASE);
	}
	return (int64_t)mono.tv_sec + __atomic_load_n(&offset, __ATOMIC_RELAXED);
}

int64_t
engine_expiry_from_exptime(int64_t exptime, int64_t now)
{
	if (exptime == 0)
		return 0;
	if (exptime < 0)
		return -1;
	if (exptime <= ENGINE_RELATIVE_EXPTIME_MAX)
		return now + exptime;
	/* Absolute unix time; one in the past means expired at once. */
	return exptime <= now ? -1 : exptime;
}

bool
engine_parse_u64(const void *buf, size_t len, uint64_t *out)
{
	const unsigned char *p = buf;
	uint64_t v = 0;
	size_t i = 0;

	while (len > 0 && p[len - 1] == ' ')
		len--;
	if (len == 0 || len > 20)
		return false;
	for (; i < len; i++) {
		unsigned d = p[i] - '0';

		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

size_t
engine_format_u64(uint64_t v, char *buf)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

const char *
engine_status_name(enum engine_status status)
{
	static const char *const names[] = {
		[ENGINE_OK] = "OK",
		[ENGINE_MISS] = "MISS",
		[ENGINE_NOT_STORED] = "NOT_STORED",
		[ENGINE_EXISTS] = "EXISTS",
		[ENGINE_TOO_LARGE] = "TOO_LARGE",
		[ENGINE_NO_MEMORY] = "NO_MEMORY",
		[ENGINE_NON_NUMERIC] = "NON_NUMERIC",
		[ENGINE_BUF_SMALL] = "BUF_SMALL",
		[ENGINE_INVALID] = "INVALID",
	};

	if ((unsigned)status >= sizeof(names) / sizeof(names[0]))
		return "UNKNOWN";
	return names[status];
}

int
engine_set_memory(struct engine *e, size_t bytes)
{
	return e->ops->set_memory ? e->ops->set_memory(e, bytes) : -ENOTSUP;
}

void
engine_dump(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg)
{
	if (e->ops->dump)
		e->ops->dump(e, cur, fn, arg);
	else
		cur->done = true;
}
