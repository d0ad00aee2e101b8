/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Warm restart, the verdict on a saved state before anything of it is
 * used: the header (magic, version, geometry, checksum, the media's
 * unsafe shutdown count, every saved number in range), the segment
 * images and their times, the TTL chains and the overflow bucket
 * allocator. Each refusal says why (seg_restart_refuse). Loading is in
 * seg_restart_load.c; the area's layout in seg_restart.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "seg/seg_hash.h"
#include "seg/seg_read.h"
#include "seg/seg_struct.h"
#include "seg/restart/seg_restart_file.h"

/* Records why the saved state is not used: a one-word code for `stats`
 * and a sentence for the log. */
int
seg_restart_refuse(struct seg_restart_report *rep, enum seg_restart_state st, const char *code,
       const char *fmt, ...)
{
	va_list ap;

	rep->state = st;
	rep->code = code;
	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* Saved times are seconds, engine or wall clock: refused beyond 2^40 of 0
 * (35,000 years), so that no sum or difference of two can overflow. */
#define TIME_MAX ((int64_t)1 << 40)
/* 2000-01-01: a wall clock before it was not set. */
#define WALL_MIN ((int64_t)946684800)
/* The engine clock runs beside the wall clock, anchored at the start:
 * they part only by wall clock steps during a run. */
#define ANCHOR_SPAN ((int64_t)1 << 32)
/* How far a pending flush_all may lie from the stop (memcached takes
 * delays of up to 30 days, and absolute unix times beyond). */
#define FLUSH_SPAN ((int64_t)1 << 32)

static bool
time_in(int64_t t, int64_t lo, int64_t hi)
{
	return t >= lo && t <= hi;
}

/* The saved numbers the header vouches for, each in its range (no
 * arithmetic on one before it is checked). */
static int
check_numbers(const struct restart_hdr *h, int64_t now, int64_t wall,
	      struct seg_restart_report *rep)
{
	if (!time_in(wall, WALL_MIN, TIME_MAX) || !time_in(now, -TIME_MAX, TIME_MAX))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "clock",
			      "this host's clocks are not set: wall %" PRId64 ", engine %" PRId64,
			      wall, now);
	if (h->gen_counter >= 1ull << SEG_CAS_GEN_BITS)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "gen_counter %" PRIu64 ": cas keeps %d bits of it", h->gen_counter,
			      SEG_CAS_GEN_BITS);
	if (!time_in(h->stop_wall, WALL_MIN, TIME_MAX))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "stop_wall %" PRId64 " out of range", h->stop_wall);
	if (wall < h->stop_wall)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "clock",
			      "the wall clock went back %" PRId64 " s since the stop",
			      h->stop_wall - wall);
	if (!time_in(h->stop_clock, h->stop_wall - ANCHOR_SPAN, h->stop_wall + ANCHOR_SPAN))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "stop_clock %" PRId64 " out of range (stop_wall %" PRId64 ")",
			      h->stop_clock, h->stop_wall);
	if (h->flush_at != 0 &&
	    !time_in(h->flush_at, h->stop_clock - FLUSH_SPAN, h->stop_clock + FLUSH_SPAN))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "flush_at %" PRId64 " out of range (stop_clock %" PRId64 ")",
			      h->flush_at, h->stop_clock);
	return 0;
}

/* The header's verdict: 0 when the saved state may be loaded. */
int
seg_restart_check_header(const struct seg_engine *e, const struct seg_restart_area *a,
			 const struct area_layout *al, int64_t now, int64_t wall,
			 struct seg_restart_report *rep)
{
	const struct restart_hdr *h = a->addr;

	if (h->magic != RESTART_MAGIC)
		return seg_restart_refuse(rep, SEG_RESTART_COLD, "none", "no saved cache in the file");
	if (h->version != RESTART_VERSION)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "version",
			      "saved by layout version %" PRIu32 ", this build reads %u",
			      h->version, RESTART_VERSION);
	if (h->seg_size != e->seg_size || h->off_shift != e->off_shift)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "segment size changed: saved %" PRIu64 ", now %" PRIu32,
			      h->seg_size, e->seg_size);
	if (h->nseg != e->nseg)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "heap changed (-m or the file): saved %" PRIu64
			      " segments, now %" PRIu32, h->nseg, e->nseg);
	/* A table grown online is saved as it is: any size from this
	 * engine's starting table to its largest loads (linear hashing
	 * places every key by the size alone). */
	if (h->buckets < e->table_mask + 1 || h->buckets > 1ull << e->geo.max_power)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "hash table changed (-m, --hash-power or --hash-grow): saved %" PRIu64
			      " buckets, now %" PRIu64 " to %" PRIu64,
			      h->buckets, e->table_mask + 1, (uint64_t)1 << e->geo.max_power);
	/* The area is sized for the table at its largest and the heap
	 * follows it in a file: another cap moves every segment. */
	if (h->max_power != e->geo.max_power)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "hash table's largest size changed (--hash-grow or --hash-power): "
			      "saved with room for 2^%" PRIu32 " buckets, now 2^%" PRIu32,
			      h->max_power, e->geo.max_power);
	if (h->hash_fp != seg_hash_fingerprint() || h->ttl_chains != TTL_CHAINS ||
	    h->image_size != sizeof(struct seg_image) ||
	    h->bucket_size != sizeof(struct seg_bucket))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "version",
			      "saved with another key hash or table format");
	if (h->clean != 1)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED,
			      "dirty",
			      "not stopped cleanly (a crash or kill -9): "
			      "the saved state may be torn");
	if (seg_restart_crc((const uint8_t *)h, al) != h->crc)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "checksum: the restart area changed after the save");
	if (h->media_known && a->media_known && h->media_id != a->media_id)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "dirty",
			      "the file is on other media than at the stop (device id)");
	if (h->media_known && a->media_known && h->media_usc != a->media_usc)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "dirty",
			      "the media's unsafe shutdown count went from %" PRIu64 " to %" PRIu64
			      ": power was lost before its buffers were flushed", h->media_usc,
			      a->media_usc);
	return check_numbers(h, now, wall, rep);
}

/* A sealed segment's times, against the stop and its TTL bucket: made at
 * or before the stop; exp_base EXP_NEVER in the never-expiring bucket
 * only; otherwise no later than the bucket's shortest TTL after its
 * creation, on the bucket's unit, and exp_max within the 7-bit deltas
 * above it. So no item can outlive its TTL bucket's range. */
static int
check_times(const struct restart_hdr *h, const struct seg_image *s, uint32_t i,
	    struct seg_restart_report *rep)
{
	const int64_t past = h->stop_clock - TIME_MAX;
	const unsigned c = s->ttl_bucket, unit = c == TTL_NEVER ? 0 : 4 * (c >> 8);
	const int64_t lo = c == TTL_NEVER ? 0 : (int64_t)(c & 255) << (3 + unit);

	if (!time_in(s->create_at, past, h->stop_clock))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "segment %" PRIu32 ": create_at %" PRId64 " not before stop_clock %"
			      PRId64, i, s->create_at, h->stop_clock);
	if (s->unit_shift != unit)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "segment %" PRIu32 ": unit_shift %u in TTL bucket %u", i,
			      s->unit_shift, c);
	if (c == TTL_NEVER) {
		if (s->exp_base != EXP_NEVER || s->exp_max != 0)
			return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "segment %" PRIu32 ": exp_base/exp_max %" PRId64 "/%" PRId64
				      " in the never-expiring TTL bucket", i, s->exp_base,
				      s->exp_max);
		return 0;
	}
	if (!time_in(s->exp_base, past, s->create_at + lo))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "segment %" PRIu32 ": exp_base %" PRId64 " beyond TTL bucket %u "
			      "(create_at %" PRId64 ")", i, s->exp_base, c, s->create_at);
	if (s->exp_max != 0 &&
	    !time_in(s->exp_max, past, s->exp_base + ((int64_t)(EXP_DELTA_MAX + 1) << unit)))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "segment %" PRIu32 ": exp_max %" PRId64 " beyond exp_base %" PRId64,
			      i, s->exp_max, s->exp_base);
	return 0;
}

/* The overflow bucket allocator's saved state against the segments lent
 * to the table: capacity is what those segments hold, not what the file
 * counts. */
static int
check_ovf_alloc(const struct seg_engine *e, const struct restart_hdr *h,
		const struct seg_image *img, uint32_t hash, struct seg_restart_report *rep)
{
	const uint64_t per_seg = e->seg_size / sizeof(struct seg_bucket);
	const uint64_t cap = hash * per_seg;

	if (h->ovf_segs != hash)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "ovf_segs %" PRIu64 ", %" PRIu32 " segments lent to the table",
			      h->ovf_segs, hash);
	if (hash == 0 ? h->ovf_seg != SEG_NONE
		      : h->ovf_seg < 0 || h->ovf_seg >= e->nseg || img[h->ovf_seg].state != SEG_HASH)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "ovf_seg %" PRId64 " is not a segment lent to the table", h->ovf_seg);
	if (hash == 0 ? h->ovf_next != 0 : h->ovf_next == 0 || h->ovf_next > per_seg)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "ovf_next %" PRIu64 " out of range", h->ovf_next);
	if (h->ovf_used > cap || h->ovf_free_count > cap - h->ovf_used)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "ovf_used %" PRIu64 " + ovf_free_count %" PRIu64 ": more than the %"
			      PRIu64 " overflow buckets there are", h->ovf_used, h->ovf_free_count,
			      cap);
	if (h->merge_reserve != SEG_NONE &&
	    (h->merge_reserve < 0 || h->merge_reserve >= e->nseg ||
	     img[h->merge_reserve].state != SEG_FREE))
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "merge_reserve %" PRId64 " is not a free segment", h->merge_reserve);
	return 0;
}

/* Every continuation of a large item (seg_append.c) is named by the links
 * of one sealed head, once: none lost, none shared, no cycle. */
static int
check_conts(const struct seg_engine *e, const struct seg_image *img, uint32_t conts,
	    struct seg_restart_report *rep)
{
	uint8_t *named;
	int rc = 0;

	if (conts == 0)
		return 0;
	named = calloc(e->nseg, 1);
	if (named == NULL)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "no memory",
				  "no memory to check %" PRIu32 " continuations", conts);
	for (uint32_t i = 0; i < e->nseg && rc == 0; i++) {
		if (img[i].state != SEG_SEALED)
			continue;
		for (int32_t c = img[i].cont1 - 1; c != SEG_NONE && rc == 0; c = img[c].cont1 - 1) {
			if (img[c].state != SEG_CONT || named[c]++)
				rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					    "segment %" PRIu32 ": a large item's link to %" PRId32
					    " is broken", i, c);
			else
				conts--;
		}
	}
	free(named);
	if (rc == 0 && conts != 0)
		rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				"%" PRIu32 " continuation segments no large item names", conts);
	return rc;
}

/* Validates the saved segment images and chains (nothing is changed). */
int
seg_restart_check_segments(const struct seg_engine *e, const struct restart_hdr *h,
			   const struct seg_image *img, const int32_t *chains,
			   struct seg_restart_report *rep)
{
	uint32_t sealed = 0, chained = 0, hash = 0, conts = 0;

	for (uint32_t i = 0; i < e->nseg; i++) {
		const struct seg_image *s = &img[i];

		if (s->gen == 0 || s->gen > h->gen_counter)
			return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "segment %" PRIu32 ": generation %" PRIu64 " out of range", i,
				      s->gen);
		switch (s->state) {
		case SEG_FREE:
			break;
		case SEG_HASH:
			hash++;
			break;
		case SEG_CONT:
			conts++;
			if (s->cont1 < 0 || (uint32_t)s->cont1 > e->nseg)
				return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					      "segment %" PRIu32 ": bad continuation", i);
			break;
		case SEG_SEALED:
			sealed++;
			/* a large item's head counts its whole item (seg_append.c) */
			if (s->write_off > e->seg_size || s->ttl_bucket >= TTL_CHAINS ||
			    s->unit_shift > 12 || s->live_items < 0 || s->live_bytes < 0 ||
			    s->cont1 < 0 || (uint32_t)s->cont1 > e->nseg ||
			    (uint32_t)s->live_bytes > (s->cont1 ? SEG_LARGE_ROOM : s->write_off))
				return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					      "segment %" PRIu32 ": bad header", i);
			if (check_times(h, s, i, rep) < 0)
				return -1;
			break;
		default:
			return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "segment %" PRIu32 ": state %u", i,
				      s->state);
		}
	}
	for (unsigned c = 0; c < TTL_CHAINS; c++) {
		int32_t prev = SEG_NONE, s = chains[2 * c];
		uint32_t len = 0;

		for (; s != SEG_NONE; prev = s, s = img[s].next) {
			if (s < 0 || (uint32_t)s >= e->nseg || ++len > e->nseg ||
			    img[s].state != SEG_SEALED || img[s].prev != prev ||
			    img[s].ttl_bucket != c)
				return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					      "TTL chain %u is broken", c);
		}
		if (prev != chains[2 * c + 1])
			return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "TTL chain %u: bad tail", c);
		chained += len;
	}
	if (chained != sealed)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "%" PRIu32 " segments in use, %" PRIu32 " in the TTL chains", sealed,
			      chained);
	if (check_conts(e, img, conts, rep) < 0)
		return -1;
	return check_ovf_alloc(e, h, img, hash, rep);
}
