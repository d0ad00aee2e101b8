/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Workload shapes for segcached-storage-bench (--shape): operation mix,
 * value sizes and TTL classes modelled on Twitter's production caches
 * (Yang et al., OSDI '20), with TTLs compressed onto a run's seconds so
 * that segments expire many times within it, and the per-key tables
 * (value size, TTL) a run draws once from its seed: a key keeps its size
 * class and its TTL, as a keyspace does.
 */
#ifndef SB_SHAPES_H
#define SB_SHAPES_H

#include <stdint.h>
#include <stdio.h>

struct sb_options;

#define SB_TTL_CLASSES_MAX 12

struct sb_ttl_class {
	uint32_t ttl;     /* seconds in the run; 0 = never expires */
	uint32_t permille; /* share of the keys */
};

struct sb_shape {
	const char *name;
	const char *about;
	unsigned pct_get, pct_set, pct_delete;
	/* value sizes: log-normal (median, sigma), clipped to [min, max] */
	double size_median, size_sigma;
	uint32_t size_min, size_max;
	unsigned nttl;
	struct sb_ttl_class ttl[SB_TTL_CLASSES_MAX];
};

/* NULL when there is no shape of that name. */
const struct sb_shape *sb_shape_by_name(const char *name);
void sb_shapes_list(FILE *f);

/* What every key of a run is: its value size and TTL, ids 1..keys (index
 * id - 1). size is NULL when values come from --value-size; ttl is NULL
 * when every set carries --ttl (or none). */
struct sb_objects {
	uint32_t *size;
	uint32_t *ttl;
};

/* Draws the tables for o's shape (nothing without one). 0, or -1 out of
 * memory. */
int sb_objects_init(struct sb_objects *obj, const struct sb_options *o);
void sb_objects_fini(struct sb_objects *obj);

#endif /* SB_SHAPES_H */
