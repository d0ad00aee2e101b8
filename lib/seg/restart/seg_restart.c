/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Warm restart, the saving half: the engine's state saved beside a
 * file-backed heap at a graceful stop (seg_restart_save), and the restart
 * area's layout that both halves share. seg_restart_load.c takes it back
 * at the next start.
 *
 * The restart area (at the start of the heap file, before the segments):
 *
 *   page 0      header: magic, layout version, geometry, hash fingerprint,
 *               clean flag, wall and engine clock at the stop, cas
 *               generation, overflow bucket allocator, merge reserve
 *   chains      head and tail of every TTL chain
 *   segments    one struct seg_image per segment
 *   table       the head buckets of the hash table, as they were
 *
 * The header's crc is a CRC32C over the header (crc and clean taken as
 * 0), the chains, the segment images and the table: a load refuses an
 * area whose bytes changed since the save ("checksum"). Item bytes and
 * overflow buckets, in the heap, are not covered (docs/architecture.md,
 * "Warm restart", says why).
 *
 * Why the hash table is saved instead of rebuilt from the segments: the
 * heap holds every version of a key that was ever written and not yet
 * reclaimed (an overwrite appends, a delete only clears a slot), and
 * items carry no sequence number, so the segments alone cannot tell the
 * live version from a deleted or overwritten one. The table can: at the
 * stop it names exactly the live items. It holds no pointers (slots name
 * segment + offset, overflow buckets segment + index, and those buckets are
 * in the heap already), so it is valid at any mapping address. Recovery
 * then is: check the header, load the table, and validate it in parallel
 * (every slot must name a parsable item of a sealed segment whose key
 * hashes to that very bucket and tag), counting live items per segment and
 * dropping those that expired while the cache was down. See
 * docs/architecture.md, "Warm restart".
 *
 * Every item keeps its cas: cas = segment gen << 20 | offset, gens are
 * saved, and new gens continue above the saved generation counter, so no
 * cas issued before the stop can match an item stored after it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include <rte_hash_crc.h>

#include "seg/seg_engine.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_live.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"
#include "seg/restart/seg_restart_file.h"
#include "util/util_err.h"

static size_t
round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

void
seg_restart_layout(uint64_t nseg, uint64_t buckets, struct area_layout *al)
{
	al->chains_bytes = TTL_CHAINS * 2 * sizeof(int32_t);
	al->segs_bytes = nseg * sizeof(struct seg_image);
	al->table_bytes = buckets * sizeof(struct seg_bucket);
	al->chains_off = RESTART_PAGE;
	al->segs_off = round_up(al->chains_off + al->chains_bytes, RESTART_PAGE);
	al->table_off = round_up(al->segs_off + al->segs_bytes, RESTART_PAGE);
	al->total = round_up(al->table_off + al->table_bytes, RESTART_ALIGN);
}

int
seg_restart_layout_of(const uint8_t *area, size_t len, struct area_layout *al)
{
	const struct restart_hdr *h = (const void *)area;

	if (len < sizeof(*h) || h->nseg > SEG_MAX_SEGMENTS || h->buckets > (1ull << 40))
		return -1;
	seg_restart_layout(h->nseg, h->buckets, al);
	return al->table_off + al->table_bytes <= len ? 0 : -1;
}

static uint32_t
crc_of(const void *p, size_t len, uint32_t crc)
{
	const uint8_t *b = p;
	const size_t chunk = (size_t)1 << 30;

	for (; len > chunk; b += chunk, len -= chunk)
		crc = rte_hash_crc(b, (uint32_t)chunk, crc);
	return rte_hash_crc(b, (uint32_t)len, crc);
}

uint32_t
seg_restart_crc(const uint8_t *area, const struct area_layout *al)
{
	struct restart_hdr h;
	uint32_t crc;

	memcpy(&h, area, sizeof(h));
	h.crc = 0;
	h.clean = 0;
	crc = crc_of(&h, sizeof(h), ~0u);
	crc = crc_of(area + al->chains_off, al->chains_bytes, crc);
	crc = crc_of(area + al->segs_off, al->segs_bytes, crc);
	return ~crc_of(area + al->table_off, al->table_bytes, crc);
}

size_t
seg_restart_area_bytes(const struct engine_config *cfg)
{
	struct area_layout al;
	uint32_t nseg, seg_size;
	uint64_t buckets;

	if (seg_geometry(cfg, &nseg, &seg_size, &buckets) < 0)
		return 0;
	/* Room for the table grown to its largest (the table is last: an
	 * area saved smaller leaves the rest unused). */
	seg_restart_layout(nseg,
			   1ull << seg_hash_max_power(63u - (unsigned)__builtin_clzll(buckets),
						      (uint32_t)seg_hash_grow_powers(cfg->hash_grow)),
			   &al);
	return al.total;
}

int64_t
seg_restart_wall_now(const struct seg_restart_area *a)
{
	struct timespec ts;

	if (a->wall)
		return a->wall(a->wall_arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

void
seg_restart_persist(const struct seg_restart_area *a, const void *p, size_t len)
{
	if (len > 0)
		a->persist(a->persist_arg, p, len);
}

/* What check_header() compares with the engine starting: the layout
 * version and this engine's geometry. */
void
seg_restart_put_geometry(struct restart_hdr *h, const struct seg_engine *e,
			 const struct area_layout *al)
{
	h->magic = RESTART_MAGIC;
	h->version = RESTART_VERSION;
	h->area_bytes = al->total;
	h->seg_size = e->seg_size;
	h->nseg = e->nseg;
	h->buckets = seg_hash_buckets(e); /* the linear hashing geometry (seg_table.h) */
	h->max_power = e->geo.max_power;
	h->off_shift = e->off_shift;
	h->hash_fp = seg_hash_fingerprint();
	h->ttl_chains = TTL_CHAINS;
	h->image_size = sizeof(struct seg_image);
	h->bucket_size = sizeof(struct seg_bucket);
}

int
seg_restart_save(struct engine *eng, const struct seg_restart_area *a, char *err, size_t errlen)
{
	struct seg_engine *e = seg_engine_of(eng);
	struct restart_hdr *h = a->addr;
	uint8_t *area = a->addr;
	struct area_layout al;
	struct seg_image *img;
	int32_t *chains;
	uint64_t items = 0, segs = 0;
	int rc = -1;

	seg_restart_layout(e->nseg, seg_hash_buckets(e), &al);
	if (a->len < al.total)
		return util_fail(err, errlen, "restart area of %zu bytes, %zu needed", a->len,
				 al.total);
	img = (struct seg_image *)(area + al.segs_off);
	chains = (int32_t *)(area + al.chains_off);
	/* An append in flight (a worker's mark: seg_chunk.c) is not at rest. */
	for (unsigned i = 0; i < e->max_workers; i++)
		if (atomic_load(&e->append_marks[i].seg))
			return util_fail(err, errlen, "worker %u is appending: the engine is not at rest",
					 i);
	pthread_mutex_lock(&e->evict_lock);
	seg_reclaim_quiesce(e);
	h->clean = 0;
	seg_restart_persist(a, &h->clean, sizeof(h->clean));
	for (uint32_t i = 0; i < e->nseg; i++) {
		struct seg_hdr *hd = &e->hdr[i];
		uint8_t st = atomic_load(&hd->state);
		struct seg_image *s = &img[i];

		if (atomic_load(&hd->writers) != 0 || st == SEG_RECLAIM) {
			util_fail(err, errlen,
				  "segment %" PRIu32 " is busy: the engine is not at rest", i);
			goto out;
		}
		memset(s, 0, sizeof(*s));
		s->gen = atomic_load(&hd->gen);
		s->cont1 = hd->cont + 1; /* a large item's link (0: none) */
		/* Open segments (shared ones; workers sealed their own) come
		 * back sealed: there is no appender after a restart. */
		s->state = st == SEG_OPEN ? SEG_SEALED : st;
		if (s->state == SEG_SEALED) {
			s->write_off = seg_valid_end(e, (int32_t)i);
			s->exp_base = hd->exp_base;
			s->create_at = hd->create_at;
			s->exp_max = atomic_load(&hd->exp_max);
			s->prev = hd->prev;
			s->next = hd->next;
			s->ttl_bucket = hd->ttl_bucket;
			s->unit_shift = hd->unit_shift;
			/* with what workers hold for it (seg_live.c): at rest */
			const int64_t live = seg_live_read(e, (int32_t)i);

			s->live_items = seg_live_items_of(live);
			s->live_bytes = seg_live_bytes_of(live);
			items += (uint64_t)s->live_items;
			segs++;
			seg_restart_persist(a, seg_data(e, i), s->write_off);
		} else {
			s->prev = s->next = SEG_NONE;
			if (st == SEG_HASH || st == SEG_CONT) /* overflow buckets; a large item */
				seg_restart_persist(a, seg_data(e, i), e->seg_size);
		}
	}
	for (unsigned c = 0; c < TTL_CHAINS; c++) {
		chains[2 * c] = e->chain[c].head;
		chains[2 * c + 1] = e->chain[c].tail;
	}
	memcpy(area + al.table_off, e->table, seg_hash_bytes(e));
	seg_restart_persist(a, area + al.chains_off, al.total - al.chains_off);

	seg_restart_put_geometry(h, e, &al);
	h->stop_wall = seg_restart_wall_now(a);
	h->stop_clock = seg_now(e);
	h->gen_counter = atomic_load(&e->gen_counter);
	h->flush_at = atomic_load(&e->flush_at);
	h->ovf_seg = e->ovf_seg;
	h->ovf_next = e->ovf_next;
	h->ovf_free = e->ovf_free;
	h->ovf_used = atomic_load(&e->ovf_used);
	h->ovf_free_count = atomic_load(&e->ovf_free_count);
	h->ovf_segs = atomic_load(&e->ovf_segs);
	h->merge_reserve = e->merge_reserve;
	h->saved_items = items;
	h->saved_segments = segs;
	h->media_known = a->media_known;
	h->media_id = a->media_id;
	h->media_usc = a->media_usc;
	h->crc = seg_restart_crc(area, &al);
	seg_restart_persist(a, h, sizeof(*h));
	/* Last, on its own: everything it vouches for is durable already. */
	h->clean = 1;
	seg_restart_persist(a, &h->clean, sizeof(h->clean));
	rc = 0;
out:
	seg_reclaim_resume(e);
	pthread_mutex_unlock(&e->evict_lock);
	return rc;
}
