/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * flush_all of the baseline engine (bl_flush.c): the engine op, and the
 * check for a delayed flush whose time has come that every operation
 * makes before it reads or stores.
 */
#ifndef SEGCACHED_BL_FLUSH_H
#define SEGCACHED_BL_FLUSH_H

#include "baseline/bl_private.h"

/* The engine's flush_all (engine_ops.flush_all): now, or from a delay
 * read like an exptime. */
void bl_flush_all(struct engine *base, int64_t delay);

/* Applies a delayed flush_all whose time has come (see bl_flush_fire). */
void bl_flush_fire(struct bl_engine *e, int64_t at);

static inline void
bl_flush_check(struct bl_engine *e, int64_t now)
{
	int64_t at = __atomic_load_n(&e->flush_at, __ATOMIC_RELAXED);

	if (unlikely(at != 0 && now >= at))
		bl_flush_fire(e, at);
}

#endif /* SEGCACHED_BL_FLUSH_H */
