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
#include "engine/engine_config.h"

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
 * hold fewer than SEG_SMALL_HEAP_SEGMENTS segments: 1 MiB from 256 MiB
 * up, 256 KiB at -m 64, 64 KiB at -m 16. Every TTL bucket in use keeps an
 * open segment, about half of it idle, and merge chooses among segments:
 * a heap of few large ones keeps fewer objects (Twitter-shaped B at -m 32
 * with 4 workers: 44,568 objects and 0.0631 misses in 512 KiB segments,
 * 52,330 and 0.0440 in 128 KiB; docs/bench/journal/protocol-replay.md,
 * "Segments for 256"). Items larger than a segment span several, so the
 * item limit does not set it. The server and tools/mrc-accuracy use it
 * for every size (app/segcached/options/options_defaults.c). */
#define SEG_SMALL_HEAP_SEGMENTS 256
#define SEG_SMALL_HEAP_MIN_SIZE (64u << 10)
size_t seg_segment_size_for(size_t memory);

/* Background reclamation: when the free segment pool is below its low
 * watermark (1/64 of the segments, at most 64; none in heaps of fewer than
 * 64 segments), evicts by the configured
 * policy until it is not, so that writers seldom have to evict (and wait
 * for one another) themselves. engine_expire() calls it; a control thread
 * may call it more often. Returns at once when another thread is
 * reclaiming. Returns the evictions done. */
unsigned seg_reclaim(struct engine *e);


/* ---- warm restart (restart/seg_restart.c) -------------------------------
 * A heap in a file (PMEM on a DAX file system, or /dev/shm) survives the
 * process. Beside the heap, in the same file, lies a restart area: a
 * versioned header, the segment headers, the TTL chains and a copy of the
 * hash table. seg_restart_save() writes it at a graceful stop (nothing
 * else running) and sets the header's clean flag last; seg_restart_load()
 * takes it back on a new engine over the same heap, or starts cold, and
 * clears the clean flag before anything is served. */

struct seg_restart_area {
	void *addr;        /* seg_restart_area_bytes() bytes, mapped with the heap */
	size_t len;
	/* Makes [addr, addr + len) of the area or the heap durable: libpmem2's
	 * persist function of the mapping (cache-line flushes and a fence on
	 * DAX, msync on a page-cache file). */
	void (*persist)(void *arg, const void *addr, size_t len);
	void *persist_arg;
	/* Wall clock, unix seconds; NULL: CLOCK_REALTIME. (The engine clock
	 * is monotonic; the wall clock tells how long the cache was down and
	 * whether time went backwards.) */
	engine_clock_fn wall;
	void *wall_arg;
	/* Read every saved item at the load: it must parse and its key must
	 * hash to the bucket and tag of its slot. Without it the load checks
	 * every slot's place (a sealed segment, inside its used bytes), every
	 * chain link, and that the slots naming each segment are the items it
	 * counted at the stop; it reads only the items of segments whose
	 * expiry range straddles now (a cache miss an item: the cost). */
	bool verify_items;
	/* The media under the file, where the platform tells (libpmem2's
	 * device id and unsafe shutdown count on PMEM): saved at the stop, and
	 * a load on other media, or after the count rose (power was lost
	 * before the media's buffers were flushed), is refused as dirty. Not
	 * known (a file in the page cache or /dev/shm): not checked. */
	bool media_known;
	uint64_t media_id;  /* a hash of the device id */
	uint64_t media_usc; /* the unsafe shutdown count */
	/* Asked between chunks of the load's work (the table's copy, every
	 * 1,024 buckets of its scan): true stops the load (state CANCELLED),
	 * so that a stop asked during a long load is not held up by it. NULL:
	 * never. */
	bool (*cancel)(void *arg);
	void *cancel_arg;
};

enum seg_restart_state {
	SEG_RESTART_COLD,    /* nothing saved in the area (a new file) */
	SEG_RESTART_WARM,    /* the saved cache is back */
	SEG_RESTART_REFUSED, /* something saved, not usable: started cold (reason) */
	/* a->cancel stopped the load: the engine must be destroyed unused and
	 * unsaved. The area is as the load found it (the next start is warm)
	 * unless expired items had been dropped from overflow buckets in the
	 * heap already; then it is left not clean and the reason says so. */
	SEG_RESTART_CANCELLED,
};

struct seg_restart_report {
	enum seg_restart_state state;
	/* REFUSED: "version", "geometry", "dirty", "clock", "corrupt",
	 * "memory" or "area"; COLD: "none"; WARM: NULL; CANCELLED:
	 * "cancelled" */
	const char *code;
	char reason[192];   /* the same in a sentence, for the log */
	uint64_t items;     /* live items recovered */
	uint64_t expired;   /* items dropped: they expired while the cache was down */
	uint64_t segments;  /* segments holding items */
	uint64_t segments_read; /* of those, segments whose items were read */
	uint64_t buckets;   /* hash chains validated */
	uint64_t usec;      /* time the recovery took */
	unsigned threads;   /* scan threads used */
};

/* Bytes of the restart area for cfg (a multiple of 2 MiB, so a heap placed
 * after it in a file stays huge-page aligned), or 0 if cfg has no layout. */
size_t seg_restart_area_bytes(const struct engine_config *cfg);

/* On an engine just created over a heap that may hold a saved cache (no
 * worker yet): if the area's header is valid, of this layout version and
 * geometry, marked clean, its checksum right, its numbers in range, and
 * the wall clock has not gone back since the stop, takes the saved
 * segments and hash table back (validating every slot, overflow bucket
 * and, where read, item, in parallel on `threads` threads), drops the
 * items that expired meanwhile and continues the cas generation above the
 * saved one.
 * Otherwise the engine stays empty (cold) and rep says why. Either way the
 * area is then marked not clean, durably, before it returns: a crash from
 * here on starts cold. Returns 0, or -1 (with rep->reason) when the area is
 * too small for cfg. A load stopped by a->cancel is the exception
 * (SEG_RESTART_CANCELLED above). */
int seg_restart_load(struct engine *e, const struct seg_restart_area *a, unsigned threads,
		     struct seg_restart_report *rep);

/* At a graceful stop, with every worker destroyed and nothing else calling
 * the engine: writes the segment headers, TTL chains, hash table and
 * header to the area, persists them and the heap's used bytes, then sets
 * and persists the clean flag. Returns 0, or -1 with a message (the area
 * then stays not clean). */
int seg_restart_save(struct engine *e, const struct seg_restart_area *a, char *err,
		     size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_SEG_H */
