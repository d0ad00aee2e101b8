/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The eviction policies, one table: name, help, the engines that have
 * each, looked up by name or by value. The server's options and stats,
 * the storage benchmark and the engines' config checks all read it, so a
 * policy added here is known everywhere at once.
 */
#include "engine/engine_config.h"

#include <stdio.h>
#include <string.h>

/* The help lines fit an 80-column --help (after an 18-column indent).
 * lib/baseline has no segments: merge and fifo are its sampled LRU there,
 * random a random item of the size class (baseline.h). */
const struct engine_eviction_policy engine_eviction_policies[ENGINE_EVICT_COUNT] = {
	[ENGINE_EVICT_MERGE] = { ENGINE_EVICT_MERGE, "merge",
				 "merge sparse segments, keeping the most read items",
				 ENGINE_KIND_SEG | ENGINE_KIND_BASELINE },
	[ENGINE_EVICT_FIFO] = { ENGINE_EVICT_FIFO, "fifo", "evict the oldest segment",
				ENGINE_KIND_SEG | ENGINE_KIND_BASELINE },
	[ENGINE_EVICT_RANDOM] = { ENGINE_EVICT_RANDOM, "random", "evict a random segment",
				  ENGINE_KIND_SEG | ENGINE_KIND_BASELINE },
	[ENGINE_EVICT_NONE] = { ENGINE_EVICT_NONE, "none",
				"refuse writes when memory is full (as -M)",
				ENGINE_KIND_SEG | ENGINE_KIND_BASELINE },
};

const struct engine_eviction_policy *
engine_eviction_by_name(const char *name)
{
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++)
		if (strcmp(engine_eviction_policies[i].name, name) == 0)
			return &engine_eviction_policies[i];
	return NULL;
}

const struct engine_eviction_policy *
engine_eviction_of(enum engine_eviction ev)
{
	return (unsigned)ev < ENGINE_EVICT_COUNT ? &engine_eviction_policies[ev] : NULL;
}

const char *
engine_eviction_name(enum engine_eviction ev)
{
	const struct engine_eviction_policy *p = engine_eviction_of(ev);

	return p ? p->name : "unknown";
}

bool
engine_eviction_supported(enum engine_eviction ev, unsigned kind)
{
	const struct engine_eviction_policy *p = engine_eviction_of(ev);

	return p != NULL && (p->engines & kind) != 0;
}

char *
engine_eviction_names(char *buf, size_t len)
{
	size_t n = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; i < ENGINE_EVICT_COUNT; i++) {
		int w = snprintf(buf + n, len - n, "%s%s", i ? "|" : "",
				 engine_eviction_policies[i].name);

		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0'; /* whole names only */
			break;
		}
		n += (size_t)w;
	}
	return buf;
}
