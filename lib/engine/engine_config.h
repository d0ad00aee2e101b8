/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * An engine's configuration: what creating one takes (struct
 * engine_config), the clock it runs on, and the eviction policies with
 * their one table (engine_eviction.c). The engines' create functions,
 * the server's options and the tools read it; the keyed operations do
 * not.
 */
#ifndef SEGCACHED_ENGINE_CONFIG_H
#define SEGCACHED_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Eviction policies. Their names, help text and the engines that have
 * each are one table, engine_eviction_policies (engine_eviction.c): adding
 * a policy is a value here, its row there, and its code in the engines
 * that list it. */
enum engine_eviction {
	ENGINE_EVICT_MERGE,  /* default for lib/seg: merge-based (Segcache paper) */
	ENGINE_EVICT_FIFO,   /* oldest segment first */
	ENGINE_EVICT_RANDOM, /* a random segment */
	ENGINE_EVICT_NONE,   /* memcached -M: refuse writes when memory is full */
	ENGINE_EVICT_COUNT,  /* not a policy: how many there are */
};

/* The engines, as bits of a policy's `engines`. */
#define ENGINE_KIND_SEG (1u << 0)      /* lib/seg */
#define ENGINE_KIND_BASELINE (1u << 1) /* lib/baseline */

struct engine_eviction_policy {
	enum engine_eviction id;
	const char *name;  /* on the command line, in config files and stats */
	const char *help;  /* one line for --help */
	unsigned engines;  /* ENGINE_KIND_* bits of the engines that have it */
};

/* The table, ENGINE_EVICT_COUNT rows, in enum order. */
extern const struct engine_eviction_policy engine_eviction_policies[ENGINE_EVICT_COUNT];
/* The policy called `name`, or NULL. */
const struct engine_eviction_policy *engine_eviction_by_name(const char *name);
/* The row of `ev`, or NULL for a value that is no policy. */
const struct engine_eviction_policy *engine_eviction_of(enum engine_eviction ev);
/* The name of `ev`, or "unknown". */
const char *engine_eviction_name(enum engine_eviction ev);
/* Whether `ev` is a policy that an engine of `kind` (ENGINE_KIND_*) has. */
bool engine_eviction_supported(enum engine_eviction ev, unsigned kind);
/* The names joined by '|' ("merge|fifo|random|none") into buf, as many
 * whole names as fit; returns buf. */
char *engine_eviction_names(char *buf, size_t len);

/* Engine clock: seconds on the unix time scale. NULL in the config selects
 * a monotonic clock anchored to the wall clock at creation (like memcached,
 * so wall-clock steps do not mass-expire the cache). Tests pass their own. */
typedef int64_t (*engine_clock_fn)(void *arg);

/* The default clock: monotonic seconds on the unix time scale. */
int64_t engine_clock_default(void *arg);

struct engine_config {
	size_t memory;       /* total budget: heap + hash table + metadata, bytes */
	size_t segment_size; /* lib/seg segment size; 0 = 1 MiB */
	size_t item_max;     /* largest item (key + value + header); 0 = 1 MiB */
	enum engine_eviction eviction;
	unsigned max_workers; /* most engine_worker objects alive at once; 0 = 16 */
	bool cas_disabled;    /* memcached -C */
	unsigned hash_power;  /* log2 of hash buckets; 0 = sized from memory */
	/* lib/seg: how many times its starting buckets the hash table may grow
	 * to online: 1 (no growth), 2, 4, 8 or 16; 0 = 16. It sizes the restart
	 * area of a file-backed heap (seg_restart_area_bytes()). */
	unsigned hash_grow;
	engine_clock_fn clock;
	void *clock_arg;
	/* Optional caller-provided heap region (hugepages, PMEM). NULL: the
	 * engine maps anonymous memory itself. See seg_heap_bytes(). */
	void *heap;
	size_t heap_len;
};

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_CONFIG_H */
