/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * flush_all (seg_flush.c): now, or when a delayed one falls due.
 */
#ifndef SEGCACHED_SEG_FLUSH_H
#define SEGCACHED_SEG_FLUSH_H

#include <stdint.h>

struct seg_engine;

void seg_flush_now(struct seg_engine *e);
void seg_flush_if_due(struct seg_engine *e, int64_t now);

#endif /* SEGCACHED_SEG_FLUSH_H */
