/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The engine's geometry (seg_engine.c): the segments, their size and the
 * head buckets that seg_create() lays a configuration out in, which the
 * restart code compares a saved state with.
 */
#ifndef SEGCACHED_SEG_ENGINE_H
#define SEGCACHED_SEG_ENGINE_H

#include <stdint.h>

#include "engine/engine_config.h"

/* The segments, their size and the head buckets seg_create() lays cfg out
 * in (before a caller's heap region caps the segments). 0, or -1. */
int seg_geometry(const struct engine_config *cfg, uint32_t *nseg, uint32_t *seg_size,
		 uint64_t *buckets);

#endif /* SEGCACHED_SEG_ENGINE_H */
