/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/seg: the Segcache storage engine (segment-structured storage with TTL
 * buckets, tiny per-object metadata, proactive expiration and merge-based
 * eviction) behind the engine interface of lib/engine/engine.h.
 * See docs/architecture.md for the memory layout and the concurrency rules.
 */
#ifndef SEGCACHED_SEG_H
#define SEGCACHED_SEG_H

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates an engine from cfg. On failure returns NULL with a message in
 * err. Needs no DPDK EAL. */
struct engine *seg_create(const struct engine_config *cfg, char *err, size_t errlen);

/* Size of the heap region seg_create() wants for cfg (what a caller that
 * hands in hugepage or PMEM memory through cfg->heap must provide), or 0
 * when cfg->memory is too small for the smallest usable cache. */
size_t seg_heap_bytes(const struct engine_config *cfg);

/* The segment size for a heap of `memory` bytes when none is asked for:
 * 1 MiB, halved (down to SEG_SMALL_HEAP_MIN_SIZE) while the heap would
 * hold fewer than SEG_SMALL_HEAP_SEGMENTS segments. A small heap of 1 MiB
 * segments has too few of them for its TTL buckets' open segments and for
 * merges to choose from (-m 16 gave 13 and kept half the objects that
 * 256 KiB segments keep). -m 64 (memcached's default) and larger keep
 * 1 MiB. The server makes the segment size the item size limit of such a
 * heap unless -I is given. */
#define SEG_SMALL_HEAP_SEGMENTS 64
#define SEG_SMALL_HEAP_MIN_SIZE (128u << 10)
size_t seg_segment_size_for(size_t memory);

/* Background reclamation: when the free segment pool is below its low
 * watermark (1/64 of the segments, at most 64; none in heaps of fewer than
 * 64 segments), evicts by the configured
 * policy until it is not, so that writers seldom have to evict (and wait
 * for one another) themselves. engine_expire() calls it; a control thread
 * may call it more often. Returns at once when another thread is
 * reclaiming. Returns the evictions done. */
unsigned seg_reclaim(struct engine *e);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_SEG_H */
