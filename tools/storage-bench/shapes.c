/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The shapes table of segcached-storage-bench and the per-key tables a run
 * draws from it (shapes.h).
 *
 * What the shapes take from the OSDI '20 analysis of 153 Twemcache
 * clusters: TTLs are everywhere, from seconds to days, and a keyspace
 * keeps its TTL; values are small (median 230 bytes, log-normal, a long
 * tail to KBs); more than a third of the clusters are write-heavy (over
 * 30% writes). tw-storage's TTL shares are those of tools/protocol-bench/
 * workload.py's TWITTER_TTLS (tests/tools/storage-bench checks that they
 * agree), its TTLs compressed onto a run: 10 s..7 days become 1..128 s,
 * so that the short classes expire several times in a few seconds' run.
 * They are shapes, not any one cluster's figures.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rng.h"
#include "shapes.h"

static const struct sb_shape shapes[] = {
	{ "tw-storage",
	  "caching for storage: 90:9:1, values median 230 B, TTLs 1..128 s (10 s..7 d)",
	  90, 9, 1, 230, 1.3, 1, 64 * 1024, 11,
	  { { 1, 30 }, { 1, 50 }, { 2, 70 }, { 3, 100 }, { 4, 100 }, { 6, 100 },
	    { 8, 150 }, { 16, 100 }, { 32, 150 }, { 64, 100 }, { 128, 50 } } },
	{ "tw-compute",
	  "caching for computation, write-heavy: 50:50, values median 60 B, TTLs 1..8 s",
	  50, 50, 0, 60, 0.8, 1, 4096, 4,
	  { { 1, 200 }, { 2, 300 }, { 4, 300 }, { 8, 200 } } },
	{ "tw-transient",
	  "transient data: 70:30, values median 100 B, every TTL 1 or 2 s",
	  70, 30, 0, 100, 1.0, 1, 8192, 2,
	  { { 1, 500 }, { 2, 500 } } },
	{ "tw-counter",
	  "rate limiters and counters: 30:70, 8..32 B values, TTLs 1..4 s",
	  30, 70, 0, 12, 0.4, 8, 32, 3,
	  { { 1, 400 }, { 2, 400 }, { 4, 200 } } },
};

const struct sb_shape *
sb_shape_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (strcmp(shapes[i].name, name) == 0)
			return &shapes[i];
	return NULL;
}

void
sb_shapes_list(FILE *f)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		fprintf(f, "  %-13s %s\n", shapes[i].name, shapes[i].about);
}

static uint32_t
draw_size(const struct sb_shape *s, uint64_t *rng)
{
	/* Box-Muller: one standard normal from two uniforms */
	const double u1 = 1.0 - rng_unit(rng_next(rng)), u2 = rng_unit(rng_next(rng));
	const double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	double v = s->size_median * exp(s->size_sigma * z);

	if (v < s->size_min)
		v = s->size_min;
	if (v > s->size_max)
		v = s->size_max;
	return (uint32_t)v;
}

static uint32_t
draw_ttl(const struct sb_shape *s, uint64_t *rng)
{
	uint32_t r = (uint32_t)rng_below32((uint32_t)rng_next(rng), 1000), acc = 0;

	for (unsigned i = 0; i < s->nttl; i++) {
		acc += s->ttl[i].permille;
		if (r < acc)
			return s->ttl[i].ttl;
	}
	return s->ttl[s->nttl - 1].ttl;
}

int
sb_objects_init(struct sb_objects *obj, const struct sb_options *o)
{
	uint64_t rng = rng_seed(o->seed, 0x5a9e);

	obj->size = obj->ttl = NULL;
	if (!o->shape)
		return 0;
	obj->size = malloc(o->keys * sizeof(*obj->size));
	obj->ttl = malloc(o->keys * sizeof(*obj->ttl));
	if (!obj->size || !obj->ttl) {
		sb_objects_fini(obj);
		return -1;
	}
	for (uint64_t i = 0; i < o->keys; i++) {
		obj->size[i] = draw_size(o->shape, &rng);
		obj->ttl[i] = draw_ttl(o->shape, &rng);
	}
	return 0;
}

void
sb_objects_fini(struct sb_objects *obj)
{
	free(obj->size);
	free(obj->ttl);
	obj->size = obj->ttl = NULL;
}
