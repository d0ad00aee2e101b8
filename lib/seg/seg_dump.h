/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Key dumps (seg_dump.c): the engine_ops entry that hands the live items
 * to a callback, segment by segment, and the dump class of a TTL bucket.
 */
#ifndef SEGCACHED_SEG_DUMP_H
#define SEGCACHED_SEG_DUMP_H

#include "engine/engine.h"

void seg_dump(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg);
unsigned seg_dump_class(unsigned ttl_bucket); /* 1: never expires, 2..5: TTL ranges */

#endif /* SEGCACHED_SEG_DUMP_H */
