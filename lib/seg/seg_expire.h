/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Expiry (seg_expire.c): a claimed segment's items out of the hash table,
 * the whole segment's life ended, and proactive expiration of the due
 * segments at the heads of the TTL chains, with no global lock.
 */
#ifndef SEGCACHED_SEG_EXPIRE_H
#define SEGCACHED_SEG_EXPIRE_H

#include <stdint.h>

struct seg_engine;
struct seg_worker;

/* Walks the items of a claimed, drained segment and unlinks those the
 * hash table still points to, counting the locks for w (NULL: the
 * control thread). Returns how many were live. */
enum seg_unlink_reason { UNLINK_EXPIRED, UNLINK_EVICTED, UNLINK_FLUSHED };
unsigned seg_unlink_all(struct seg_engine *e, struct seg_worker *w, int32_t seg,
			enum seg_unlink_reason why);
/* A claimed segment out of its chain, drained, its items unlinked and its
 * life ended (seg_retire): the caller pushes it to the pool or uses it.
 * Returns the items that were live. */
unsigned seg_reclaim_whole(struct seg_engine *e, struct seg_worker *w, int32_t seg,
			   enum seg_unlink_reason why);
/* Frees up to max due segments from the head of TTL chain tb (none for
 * the never-expiring chain, nor while a flush quiesces): the first to
 * *keep when keep is not NULL and *keep is SEG_NONE, the rest to the
 * pool. Returns the items that expired. Takes no global lock. */
unsigned seg_expire_chain(struct seg_engine *e, struct seg_worker *w, unsigned tb, int64_t now,
			  unsigned max, int32_t *keep);
/* seg_expire_chain over every chain that holds segments. */
unsigned seg_expire_due(struct seg_engine *e, struct seg_worker *w, int64_t now,
			unsigned max_per_chain, int32_t *keep);

#endif /* SEGCACHED_SEG_EXPIRE_H */
