/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * cache_memlimit (seg_memlimit.c): the engine_ops entry that sets the
 * budget at run time, and the control thread's bounded step toward it.
 */
#ifndef SEGCACHED_SEG_MEMLIMIT_H
#define SEGCACHED_SEG_MEMLIMIT_H

#include <stddef.h>

#include "engine/engine.h"

struct seg_engine;

int seg_set_memory(struct engine *e, size_t bytes);
/* Parks (or unparks) segments toward park_target, boundedly; returns moves. */
unsigned seg_memlimit_step(struct seg_engine *e);

#endif /* SEGCACHED_SEG_MEMLIMIT_H */
