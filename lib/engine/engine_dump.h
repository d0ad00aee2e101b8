/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Dumping an engine's live items (lru_crawler metadump, stats cachedump,
 * the tests): one item as a dump reports it, the cursor a dump goes on
 * from, and engine_dump() over the engine's optional dump op.
 */
#ifndef SEGCACHED_ENGINE_DUMP_H
#define SEGCACHED_ENGINE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One live item, as a dump reports it (engine_dump). */
struct engine_dump_item {
	const void *key;     /* valid only during the callback */
	size_t klen;
	uint32_t vlen;
	uint32_t size;       /* bytes it takes in the engine: header, key, value */
	int64_t expires_at;  /* engine clock seconds; 0 = never */
	int64_t written_at;  /* engine clock seconds; lib/seg: its segment's creation */
	uint64_t cas;
	bool fetched;        /* read since it was written */
	unsigned cls;        /* the engine's class (lib/seg: the TTL range, 1..5) */
};

/* Where a dump goes on; zero it to start at the beginning. */
struct engine_dump_cursor {
	uint64_t pos;        /* engine's own: lib/seg, segment << 32 | offset */
	uint64_t gen;        /* lib/seg: the segment's gen when pos was recorded */
	bool done;           /* every item has been offered */
};

/* Offers the live items from *cur on to fn, without locks held across
 * items (lib/seg reads segments lock-free, checking each item's generation,
 * so writers are never held up), until fn declines one or the items run
 * out (cur->done). Items written, deleted or moved during a dump may be
 * offered or not, and an item moved by merge eviction may be offered
 * twice. Does nothing where the engine has no dump (engine_can_dump). */
void engine_dump(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg);
static inline bool engine_can_dump(const struct engine *e) { return e->ops->dump != NULL; }

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_DUMP_H */
