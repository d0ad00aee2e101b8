/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Expiry (seg_expire.c): a claimed segment's items out of the hash table,
 * the whole segment back to the pool, and the sweep that frees the
 * expired segments at the heads of the TTL chains.
 */
#ifndef SEGCACHED_SEG_EXPIRE_H
#define SEGCACHED_SEG_EXPIRE_H

#include <stdint.h>

struct seg_engine;

/* Walks the items of a claimed, drained segment and unlinks those the
 * hash table still points to. Returns how many were live. */
enum seg_unlink_reason { UNLINK_EXPIRED, UNLINK_EVICTED, UNLINK_FLUSHED };
unsigned seg_unlink_all(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why);
/* A claimed segment out of its chain, drained, its items unlinked, and
 * back into the pool. */
void seg_reclaim_whole(struct seg_engine *e, int32_t seg, enum seg_unlink_reason why);
/* Frees expired segments from the chain heads; returns the items that
 * expired. Caller holds evict_lock. */
unsigned seg_expire_locked(struct seg_engine *e, int64_t now);

#endif /* SEGCACHED_SEG_EXPIRE_H */
