/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Freeing in the baseline engine (bl_free.c): an item's object back into
 * its page, at once or after its grace period.
 */
#ifndef SEGCACHED_BL_FREE_H
#define SEGCACHED_BL_FREE_H

#include "baseline/bl_private.h"

/* Returns an item that was never linked. */
void bl_item_free_now(struct bl_engine *e, struct bl_item *it);
/* Returns an item after its grace period (defer-queue callback). */
void bl_item_release(struct bl_engine *e, struct bl_item *it);

#endif /* SEGCACHED_BL_FREE_H */
