/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Test-only access to lib/seg: named points where a unit test can run code
 * in the middle of an operation (to force one exact interleaving of two
 * workers, deterministically, on one thread), and a check of the engine's
 * invariants at rest. Production code never sets the hook; a point costs
 * one predictable branch.
 */
#ifndef SEGCACHED_SEG_TEST_H
#define SEGCACHED_SEG_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

enum seg_test_point {
	/* reserve(): the worker has put its append mark on its open segment
	 * and has not yet checked that the segment is still its own */
	SEG_TP_RESERVE_HELD,
	/* a reader found an expired item and is about to unlink it */
	SEG_TP_UNLINK_EXPIRED,
	/* a read-modify-write read its item lock-free, before using it */
	SEG_TP_RMW_READ,
	/* a worker initialised a new open segment, before linking it */
	SEG_TP_OPENING,
	/* an append found its item's expiry above its segment's exp_max and
	 * is about to raise it */
	SEG_TP_EXP_MAX_RAISE,
	/* a merge pass has claimed its run, dropped evict_lock and is about
	 * to copy */
	SEG_TP_PASS_COPYING,
	/* flush_all (or a restart save) waits, holding evict_lock between
	 * waits, for the passes in flight to end */
	SEG_TP_QUIESCE_WAIT,
	/* a worker that needs a segment waits for a pass to end (every run
	 * or reserve taken, or a quiesce) */
	SEG_TP_EVICT_WAIT,
	/* an appender sealed an open segment (full, or the item's expiry
	 * outside its window) */
	SEG_TP_SEALING,
};

typedef void (*seg_test_hook_fn)(enum seg_test_point at, void *arg);

/* Installs (or with NULL removes) the hook; not thread-safe: set it while
 * no operation runs. */
void seg_test_set_hook(seg_test_hook_fn fn, void *arg);

/* Makes worker w append only to open segments of its own (never to the
 * ones workers share), as a busy worker on a large heap does. */
void seg_test_own_open(struct engine_worker *w);

/* The slot among a worker's open-segment refs that TTL bucket tb takes
 * (two buckets with the same one take it over from each other). */
unsigned seg_test_ref_slot(unsigned tb);

struct seg_census {
	uint32_t free, open, sealed, reclaim, hash;
	uint32_t cont; /* a large item's continuations (seg_append.c), each named once */
	uint32_t sealed_empty; /* sealed segments in a chain with no live item */
	uint64_t live_items;
	uint64_t items_written; /* items (live or dead) in open and sealed segments */
	uint64_t merges_at_once; /* merge passes begun while another was in flight */
	uint32_t merge_spares;   /* reserves beyond the first, kept for passes at once */
};

/* At rest (no operation in flight): counts segments by state and checks
 * the invariants: no append in flight, live counts never negative and
 * equal to the slots pointing into each segment, no slot pointing into a
 * free segment, the pool holding exactly the free segments. Returns 0,
 * or -1 with the first violation in err. */
int seg_test_check(struct engine *e, struct seg_census *c, char *err, size_t errlen);

/* Where key's item lies: its segment, offset and span, and that segment's
 * write_off (without the sealed bit) and whether it is sealed to appends.
 * 0, or -1 when the key is not found. */
struct seg_test_place {
	uint32_t seg, off, span, write_off;
	int sealed;
};
int seg_test_locate(struct engine *e, const void *key, size_t klen, struct seg_test_place *p);

/* At rest: moves n free segments from the pool to merge's spare reserves
 * (at most its 15), so that a test can run several merge passes at once
 * on a heap that has not made spares yet. Returns how many moved. */
unsigned seg_test_merge_spares(struct engine *e, unsigned n);

/* Mean (in hundredths) and max items per chain over every chain of the
 * hash table, now (what `stats` samples). 0, or -1 without an engine. */
int seg_test_chain_stats(struct engine *e, uint64_t *mean_x100, uint64_t *max);

/* Seals a restart area again after a test patched it: recomputes the
 * header's CRC over the layout its header describes (so that the loader's
 * own checks, not the checksum, judge the patch). Returns 1 when the CRC
 * changed, 0 when it was right already, -1 when the header's geometry does
 * not fit in len bytes (then nothing is written). */
int seg_test_restart_reseal(void *area, size_t len);

/* Where a saved field lies in a restart area of len bytes: "hdr.<name>"
 * (struct restart_hdr), "img.<name>" of segment seg (struct seg_image) or
 * "table" (the saved head buckets); its offset, and its size in *size. -1 for an unknown name or a segment
 * beyond the header's. */
long seg_test_restart_field(const void *area, size_t len, const char *name, uint32_t seg,
			    size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_SEG_TEST_H */
