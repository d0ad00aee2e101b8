/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The restart area's layout on the heap file (header, segment images,
 * TTL chains, saved table) and the calls seg_restart.c (save),
 * seg_restart_load.c (load) and seg_restart_check.c (verdict) share. Kept
 * apart from the engine's headers: only the restart files (and the unit
 * tests' hooks into an area, seg_restart_test.c) need it.
 */
#ifndef SEGCACHED_SEG_RESTART_FILE_H
#define SEGCACHED_SEG_RESTART_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "seg/seg.h"

struct seg_engine;

/* ---- seg_restart.c: the restart area, shared with seg_restart_load.c ---- */
/* "SEGCRSTA" */
#define RESTART_MAGIC 0x415453524347455full
/* Bump on any change to the item format (seg_item.h), the slot layout,
 * TTL bucket geometry, the segment image or this header. */
#define RESTART_VERSION 3u
#define RESTART_PAGE 4096u
#define RESTART_ALIGN ((size_t)2 << 20)
#define RESTART_MAX_THREADS 256u

struct restart_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t clean;          /* 1 only after a complete seg_restart_save() */
	uint64_t area_bytes;
	uint64_t seg_size, nseg, buckets, off_shift;
	uint64_t hash_fp;
	uint64_t ttl_chains, image_size, bucket_size;
	int64_t stop_wall;       /* wall clock at the stop, unix seconds */
	int64_t stop_clock;      /* engine clock at the stop */
	uint64_t gen_counter;    /* the cas generation */
	int64_t flush_at;        /* pending delayed flush_all, 0 = none */
	int64_t ovf_seg;
	uint64_t ovf_next, ovf_free, ovf_used, ovf_free_count, ovf_segs;
	int64_t merge_reserve;
	uint64_t saved_items, saved_segments; /* for the log */
	/* the media under the file (seg_restart_area), if known */
	uint64_t media_known, media_id, media_usc;
	/* CRC32C of this header (crc and clean taken as 0), the TTL chains,
	 * the segment images and the saved table (seg_restart_crc) */
	uint32_t crc;
	/* The table's largest size (2^max_power head buckets): it sizes the
	 * area, which comes before the heap in a file (engine_config.hash_grow) */
	uint32_t max_power;
};
_Static_assert(sizeof(struct restart_hdr) <= RESTART_PAGE, "restart header fits a page");

/* What a segment header keeps across a restart (the rest is recounted). */
struct seg_image {
	uint64_t gen;
	int64_t exp_base, create_at, exp_max;
	uint32_t write_off;      /* valid end in bytes (no sealed bit) */
	int32_t prev, next;
	uint16_t ttl_bucket;
	uint8_t state;           /* FREE, SEALED, HASH or CONT */
	uint8_t unit_shift;
	int32_t live_items, live_bytes; /* as counted at the stop */
	/* A large item's next segment + 1 (seg_hdr.cont, seg_append.c), in
	 * its head and its continuations (state CONT); 0 = none, what files
	 * written before large items hold here. */
	int32_t cont1;
	uint32_t reserved;
};
_Static_assert(sizeof(struct seg_image) == 64, "segment image is 64 bytes");

struct area_layout {
	size_t chains_off, segs_off, table_off, total;
	size_t chains_bytes, segs_bytes, table_bytes; /* without the padding */
};

/* Where the parts of the area lie for this geometry. */
void seg_restart_layout(uint64_t nseg, uint64_t buckets, struct area_layout *al);
/* CRC32C of what the area vouches for: the header with crc and clean
 * taken as 0, then the chains, segment images and table of layout al. */
uint32_t seg_restart_crc(const uint8_t *area, const struct area_layout *al);
/* The layout an area's header describes, if it lies within len bytes
 * (for a test that patches an area and seals it again). 0, or -1. */
int seg_restart_layout_of(const uint8_t *area, size_t len, struct area_layout *al);
/* The wall clock (the area's, in tests), unix seconds. */
int64_t seg_restart_wall_now(const struct seg_restart_area *a);
/* Makes len bytes at p durable (the area's persist hook). */
void seg_restart_persist(const struct seg_restart_area *a, const void *p, size_t len);
/* What the load's header check compares with the engine starting: the
 * layout version and this engine's geometry. */
void seg_restart_put_geometry(struct restart_hdr *h, const struct seg_engine *e,
			      const struct area_layout *al);

/* ---- seg_restart_check.c: the verdict on a saved state ---- */

/* Records why the saved state is not used: a one-word code for `stats`
 * and a sentence for the log. Returns -1. */
int seg_restart_refuse(struct seg_restart_report *rep, enum seg_restart_state st,
		       const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The header's verdict (magic, version, geometry, checksum, media,
 * numbers): 0 when the saved state may be loaded, else -1 with rep set. */
int seg_restart_check_header(const struct seg_engine *e, const struct seg_restart_area *a,
			     const struct area_layout *al, int64_t now, int64_t wall,
			     struct seg_restart_report *rep);
/* The segment images, TTL chains and overflow allocator (nothing is
 * changed): 0, or -1 with rep set. */
int seg_restart_check_segments(const struct seg_engine *e, const struct restart_hdr *h,
			       const struct seg_image *img, const int32_t *chains,
			       struct seg_restart_report *rep);

#endif /* SEGCACHED_SEG_RESTART_FILE_H */
