/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The get's read with the get's own item (seg_read.c): seg_read_item()
 * that fills the caller's engine_item where a batch sink's value_buf is
 * handed it, so that a batched get fills the item once, not twice (once
 * for value_buf, once for done: ~20 instructions a get).
 */
#ifndef SEGCACHED_SEG_READ_H
#define SEGCACHED_SEG_READ_H

#include "seg/seg_private.h"

/* seg_read_item(), and with a sink in dst: *it is the item its value_buf
 * was handed, filled from the read returned (when FOUND). */
int seg_read_item_into(struct seg_worker *w, const struct seg_key *k, int64_t now,
		       const struct read_dst *dst, struct engine_item *it, struct seg_read *r,
		       bool *expired);

#endif
