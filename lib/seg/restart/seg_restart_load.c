/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Warm restart, the loading half: at the next start, once
 * seg_restart_check.c has passed the header and the segment images,
 * loading the hash table and validating it in parallel (overflow buckets
 * marked in a bitmap), and rebuilding segments, chains and live counts
 * (seg_restart_load); otherwise starting cold. The area's layout and the
 * reasons for saving the table are in seg_restart.c. Calls
 * seg_restart_check.c, seg_restart.c, seg_engine.c and below.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "seg/seg_flush.h"
#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_read.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"
#include "seg/restart/seg_restart_file.h"
#include "util/util_err.h"

/* Has the caller asked the load to stop (seg_restart_area.cancel)? */
static bool
load_cancelled(const struct seg_restart_area *a)
{
	return a->cancel != NULL && a->cancel(a->cancel_arg);
}

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The header of an area that is open for writing: geometry of this
 * engine, not clean. Persisted before the heap or the table change. */
static void
mark_open(struct seg_engine *e, const struct seg_restart_area *a, const struct area_layout *al)
{
	struct restart_hdr *h = a->addr;

	h->clean = 0;
	seg_restart_persist(a, &h->clean, sizeof(h->clean));
	seg_restart_put_geometry(h, e, al);
	h->gen_counter = atomic_load(&e->gen_counter);
	seg_restart_persist(a, h, sizeof(*h));
}

/* Back to an empty engine (what seg_create() makes), with gens above
 * gen_floor so that a cas a client kept from before cannot match. */
static void
cold_reset(struct seg_engine *e, uint64_t gen_floor)
{
	if (atomic_load(&e->gen_counter) < gen_floor)
		atomic_store(&e->gen_counter, gen_floor);
	memset(e->table, 0, seg_hash_bytes(e));
	atomic_store(&e->geo.geom, seg_geom_make(e->geo.base_power, 0));
	for (uint32_t i = 0; i < e->nseg; i++) {
		struct seg_hdr *h = &e->hdr[i];

		atomic_store(&h->write_off, 0);
		atomic_store(&h->live, 0);
		atomic_store(&h->exp_max, 0);
		h->exp_base = 0;
		h->create_at = 0;
		h->unit_shift = 0;
		h->ttl_bucket = 0;
		h->prev = h->next = SEG_NONE;
		h->cont = SEG_NONE;
		atomic_store(&h->state, SEG_FREE);
		atomic_store(&h->gen, seg_new_gen(e));
	}
	for (unsigned i = 0; i < TTL_CHAINS; i++) {
		e->chain[i].head = e->chain[i].tail = SEG_NONE;
		e->chain[i].merge_next = SEG_NONE;
		atomic_store(&e->chain[i].shared_open, 0);
		seg_chain_mark_used(e, i);
	}
	e->ovf_seg = SEG_NONE;
	e->ovf_next = 0;
	e->ovf_free = 0;
	atomic_store(&e->ovf_free_count, 0);
	atomic_store(&e->ovf_used, 0);
	atomic_store(&e->ovf_segs, 0);
	atomic_store(&e->flush_at, 0);
	e->merge_reserve = e->eviction == ENGINE_EVICT_MERGE ? (int32_t)e->nseg - 1 : SEG_NONE;
	e->pool_count = 0;
	for (uint32_t i = e->nseg - (e->merge_reserve != SEG_NONE); i-- > 0;)
		e->pool[e->pool_count++] = (int32_t)i;
}

/* ---- loading ------------------------------------------------------------ */

/* The table is copied in chunks of this size, the cancel hook asked
 * between two (a table of gigabytes takes a second to copy). */
#define TABLE_COPY_CHUNK ((size_t)64 << 20)

/* A load stopped by its cancel hook, the engine to be destroyed unused.
 * Until the scan drops an expired item nothing of the file has changed
 * but the clean flag (the table was read into the engine's own memory):
 * it is set again and the next start takes the same saved cache. A drop
 * repacks overflow buckets in the heap, which the saved table no longer
 * matches: then the area stays not clean and the reason says why. */
static void
load_stopped(const struct seg_restart_area *a, struct restart_hdr *h,
	     struct seg_restart_report *rep)
{
	if (rep->expired == 0) {
		h->clean = 1;
		seg_restart_persist(a, &h->clean, sizeof(h->clean));
		snprintf(rep->reason, sizeof(rep->reason),
			 "the load was stopped; the saved cache is kept for the next start");
	} else {
		snprintf(rep->reason, sizeof(rep->reason),
			 "the load was stopped after %" PRIu64 " expired items had been dropped "
			 "from the heap: the saved state no longer matches, the next start is cold",
			 rep->expired);
	}
}

/* Takes the images into the engine's segment headers, chains and pool.
 * shift moves saved engine-clock times onto this process's engine clock. */
static void
apply_segments(struct seg_engine *e, const struct restart_hdr *h, const struct seg_image *img,
	       const int32_t *chains, int64_t shift)
{
	int32_t reserve = SEG_NONE;

	atomic_store(&e->gen_counter, h->gen_counter);
	e->pool_count = 0;
	for (uint32_t i = 0; i < e->nseg; i++) {
		const struct seg_image *s = &img[i];
		struct seg_hdr *hd = &e->hdr[i];
		bool sealed = s->state == SEG_SEALED;

		atomic_store(&hd->live, 0);
		atomic_store(&hd->write_off, sealed ? s->write_off | SEG_WOFF_SEALED
				   : s->state == SEG_CONT ? e->seg_size | SEG_WOFF_SEALED
							  : 0);
		hd->cont = sealed || s->state == SEG_CONT ? s->cont1 - 1 : SEG_NONE;
		hd->exp_base = !sealed ? 0 : s->exp_base == EXP_NEVER ? EXP_NEVER
								     : s->exp_base + shift;
		atomic_store(&hd->exp_max, sealed && s->exp_max ? s->exp_max + shift : 0);
		hd->create_at = sealed ? s->create_at + shift : 0;
		hd->unit_shift = s->unit_shift;
		hd->ttl_bucket = s->ttl_bucket;
		hd->prev = sealed ? s->prev : SEG_NONE;
		hd->next = sealed ? s->next : SEG_NONE;
		atomic_store(&hd->state, s->state);
		atomic_store(&hd->gen, s->gen);
	}
	for (unsigned c = 0; c < TTL_CHAINS; c++) {
		e->chain[c].head = chains[2 * c];
		e->chain[c].tail = chains[2 * c + 1];
		e->chain[c].merge_next = SEG_NONE;
		e->chain[c].merge_cold = false;
		atomic_store(&e->chain[c].shared_open, 0);
		seg_chain_mark_used(e, c);
	}
	/* The merge reserve is a free segment outside the pool; another
	 * eviction policy than at the stop may want one or not. */
	if (e->eviction == ENGINE_EVICT_MERGE)
		reserve = h->merge_reserve;
	for (uint32_t i = e->nseg; i-- > 0;)
		if (img[i].state == SEG_FREE && (int32_t)i != reserve)
			e->pool[e->pool_count++] = (int32_t)i;
	if (e->eviction == ENGINE_EVICT_MERGE && reserve == SEG_NONE && e->pool_count > 0)
		reserve = e->pool[--e->pool_count];
	e->merge_reserve = reserve;
	e->merge_spares = 0; /* the spares saved came back in the pool */
	e->merge_want_spare = false;
	e->ovf_seg = (int32_t)h->ovf_seg;
	e->ovf_next = (uint32_t)h->ovf_next;
	e->ovf_free = h->ovf_free;
	atomic_store(&e->ovf_used, h->ovf_used);
	atomic_store(&e->ovf_free_count, h->ovf_free_count);
	atomic_store(&e->ovf_segs, (uint32_t)h->ovf_segs);
	atomic_store(&e->flush_at, h->flush_at ? h->flush_at + shift : 0);
}

/* The overflow buckets the table may use: those of the segments lent to
 * it, below ovf_next in the one being carved. Every bucket reached, from
 * a chain or the free list, is marked once: a second mark is a bucket in
 * two chains, in a chain and on the free list, or a loop. So walks end
 * within the capacity of the hash segments, whatever the file counts. */
struct ovf_map {
	int32_t *index;          /* per segment: its place among the hash ones, or -1 */
	_Atomic uint64_t *bits;  /* one per bucket of the hash segments */
	uint32_t nseg, per_seg;
	int32_t carving;         /* ovf_seg */
	uint32_t carve_end;      /* ovf_next */
};

static void
ovf_map_free(struct ovf_map *m)
{
	free(m->index);
	free(m->bits);
}

static int
ovf_map_init(struct ovf_map *m, const struct seg_engine *e, const struct restart_hdr *h,
	     const struct seg_image *img)
{
	uint64_t hash = 0;

	*m = (struct ovf_map){ .nseg = e->nseg,
			       .per_seg = e->seg_size / (uint32_t)sizeof(struct seg_bucket),
			       .carving = (int32_t)h->ovf_seg, .carve_end = (uint32_t)h->ovf_next };
	m->index = malloc(e->nseg * sizeof(*m->index));
	if (!m->index)
		return -1;
	for (uint32_t i = 0; i < e->nseg; i++)
		m->index[i] = img[i].state == SEG_HASH ? (int32_t)hash++ : -1;
	m->bits = calloc((hash * m->per_seg + 63) / 64 + 1, sizeof(*m->bits));
	return m->bits ? 0 : -1;
}

/* Marks the bucket a link names: NULL, or why it may not be used. */
static const char *
ovf_mark(struct ovf_map *m, uint64_t link)
{
	const uint32_t seg = slot_seg(link), idx = slot_off(link);
	uint64_t bit, was;

	if (!slot_is_link(link) || seg >= m->nseg || m->index[seg] < 0 || idx >= m->per_seg)
		return "a link to no overflow bucket";
	if ((int32_t)seg == m->carving && idx >= m->carve_end)
		return "an overflow bucket at or beyond ovf_next";
	bit = (uint64_t)m->index[seg] * m->per_seg + idx;
	was = atomic_fetch_or_explicit(&m->bits[bit / 64], 1ull << (bit % 64),
				       memory_order_relaxed);
	return was & 1ull << (bit % 64) ? "an overflow bucket reached twice" : NULL;
}

/* What the scan must read of the items of a segment. */
enum scan_mode {
	SCAN_LIVE,    /* none expired (exp_base after now, or never): no read */
	SCAN_EXPIRED, /* all expired (exp_max at or before now): no read */
	SCAN_READ,    /* some may have expired: each item's own delta */
};

struct scan_job {
	struct seg_engine *e;
	const uint8_t *mode;       /* enum scan_mode per segment */
	struct ovf_map *ovf;
	uint64_t ovf_buckets;      /* overflow buckets in this job's chains */
	bool verify;               /* parse every item and check its key's hash */
	uint64_t lo, hi;           /* head buckets [lo, hi) */
	int64_t now;
	_Atomic bool *bad;         /* set by the first job that fails */
	const struct seg_restart_area *area; /* its cancel hook */
	bool cancelled;            /* this job stopped at the hook's word */
	/* per segment, this job's share: slots naming it, live ones, their
	 * bytes and (items read) the bytes of all */
	uint32_t *slots, *items, *bytes, *all_bytes;
	uint64_t live, expired;
	char err[128];
	pthread_t thread;
};

/* The item a slot names, checked against what the slot claims: always
 * that it lies inside the used part of a sealed segment; items read, that
 * it parses; with verify, that its key hashes to this bucket and tag. */
static bool
check_item(struct scan_job *j, uint64_t b, uint64_t v, uint32_t *span, bool *expired)
{
	struct seg_engine *e = j->e;
	uint32_t seg = slot_seg(v), off, end;
	const struct seg_hdr *h;
	struct item_view iv;
	struct seg_key k;
	const uint8_t *p;

	if (seg >= e->nseg || atomic_load_explicit(&e->hdr[seg].state, memory_order_relaxed) !=
				      SEG_SEALED) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": slot names segment %" PRIu32
			 ", not in use", b, seg);
		return false;
	}
	h = &e->hdr[seg];
	off = slot_off(v) << e->off_shift;
	end = atomic_load_explicit(&h->write_off, memory_order_relaxed) & ~SEG_WOFF_SEALED;
	p = seg_data(e, seg) + off;
	if (off >= end) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": slot beyond the end of "
			 "segment %" PRIu32, b, seg);
		return false;
	}
	*span = 0;
	if (j->mode[seg] != SCAN_READ && !j->verify) {
		*expired = j->mode[seg] == SCAN_EXPIRED;
		return true;
	}
	if (!seg_parse_in(e, seg, off, end, &iv)) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": no item at segment %" PRIu32
			 " offset %" PRIu32, b, seg, off);
		return false;
	}
	seg_key_init(e, &k, p + iv.hdr_len, iv.klen);
	if (j->verify && (seg_hash_chain(e, &k) != &e->table[b] || k.tag != slot_tag(v))) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": the item at segment %" PRIu32
			 " offset %" PRIu32 " hashes elsewhere", b, seg, off);
		return false;
	}
	*expired = seg_expired(seg_item_expiry(h, iv.exp_delta), j->now);
	*span = item_span(iv.total, e->off_shift);
	return true;
}

/* One chain: validate and count every item; then drop the expired ones
 * (removal repacks the chain, so each is looked up afresh). */
static bool
scan_chain(struct scan_job *j, uint64_t b)
{
	struct seg_engine *e = j->e;
	struct seg_bucket *head = &e->table[b];
	struct seg_bucket *bk = head;
	uint64_t expired = 0;

	for (unsigned i = 1;; i = 0) {
		for (; i < BUCKET_SLOTS; i++) {
			uint64_t v = atomic_load_explicit(&bk->slot[i], memory_order_relaxed);
			uint32_t span;
			bool exp;

			if (v == 0)
				continue;
			if (i == BUCKET_SLOTS - 1 && slot_is_link(v)) {
				/* Marked before it is read: a bucket of two chains
				 * is read (and later changed) by one job only. */
				const char *why = ovf_mark(j->ovf, v);

				if (why) {
					snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": %s", b,
						 why);
					return false;
				}
				j->ovf_buckets++;
				bk = seg_hash_link_target(e, v);
				break;
			}
			if (slot_is_link(v) || !check_item(j, b, v, &span, &exp)) {
				if (!j->err[0])
					snprintf(j->err, sizeof(j->err),
						 "bucket %" PRIu64 ": link in an item slot", b);
				return false;
			}
			j->slots[slot_seg(v)]++;
			j->all_bytes[slot_seg(v)] += span;
			if (exp) {
				expired++;
				continue;
			}
			j->items[slot_seg(v)]++;
			j->bytes[slot_seg(v)] += span;
			j->live++;
		}
		if (i == BUCKET_SLOTS)
			break;
	}
	j->expired += expired;
	while (expired-- > 0) {
		struct seg_chain_iter it;
		_Atomic uint64_t *slot;
		uint64_t v;

		seg_iter_init(&it, head);
		while ((slot = seg_iter_next(e, &it, &v))) {
			uint32_t span;
			bool exp;

			if (v && check_item(j, b, v, &span, &exp) && exp)
				break;
		}
		if (slot)
			seg_hash_remove_locked(e, head, slot);
	}
	return true;
}

/* The free list of overflow buckets runs through the buckets themselves
 * (in the heap): every link must be valid, each bucket on it once, and
 * the count as saved. Runs before the scan marks the chains' buckets. */
static int
check_ovf_free(struct seg_engine *e, struct ovf_map *m, struct seg_restart_report *rep)
{
	const uint64_t want = atomic_load(&e->ovf_free_count);
	uint64_t n = 0;

	for (uint64_t link = e->ovf_free; link != 0; n++) {
		const char *why = ovf_mark(m, link);

		if (why)
			return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "overflow bucket free list: %s", why);
		link = atomic_load_explicit(&seg_hash_link_target(e, link)->slot[0],
					    memory_order_relaxed);
	}
	if (n != want)
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "overflow bucket free list: %" PRIu64 " buckets, %" PRIu64 " saved",
			      n, want);
	return 0;
}

/* Head buckets whose items are prefetched ahead of the one checked: the
 * scan waits on one cache (and TLB) miss per item otherwise. */
#define SCAN_AHEAD 8

static void
prefetch_items(const struct scan_job *j, uint64_t b)
{
	const struct seg_engine *e = j->e;
	const struct seg_bucket *head = &e->table[b];

	for (unsigned i = 1; i < BUCKET_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&head->slot[i], memory_order_relaxed);

		/* Not validated yet, but a prefetch never faults. Only items
		 * that will be read: the others would cost bandwidth. */
		if (v != 0 && !slot_is_link(v) && slot_seg(v) < e->nseg &&
		    (j->verify || j->mode[slot_seg(v)] == SCAN_READ))
			__builtin_prefetch(seg_data(e, slot_seg(v)) +
					   ((size_t)slot_off(v) << e->off_shift));
	}
}

static void *
scan_run(void *arg)
{
	struct scan_job *j = arg;

	for (uint64_t b = j->lo; b < j->lo + SCAN_AHEAD && b < j->hi; b++)
		prefetch_items(j, b);
	for (uint64_t b = j->lo; b < j->hi; b++) {
		if ((b & 1023) == 0 && atomic_load_explicit(j->bad, memory_order_relaxed))
			break;
		if ((b & 1023) == 0 && load_cancelled(j->area)) {
			j->cancelled = true;
			break;
		}
		if (b + SCAN_AHEAD < j->hi)
			prefetch_items(j, b + SCAN_AHEAD);
		if (!scan_chain(j, b)) {
			atomic_store(j->bad, true);
			break;
		}
	}
	return NULL;
}

/* Validates the loaded table and recounts live items per segment, on
 * `threads` threads over disjoint ranges of head buckets (so over
 * disjoint chains: no locks). */
static int
scan_table(struct seg_engine *e, const struct restart_hdr *h, const struct seg_image *img,
	   struct ovf_map *ovf, unsigned threads, const struct seg_restart_area *a, int64_t now,
	   struct seg_restart_report *rep)
{
	const bool verify = a->verify_items;
	bool cancelled = false;
	const uint64_t nb = seg_hash_buckets(e);
	_Atomic bool bad = false;
	struct scan_job *jobs;
	unsigned started = 1;
	uint8_t *mode;
	int rc = 0;

	if (threads > nb)
		threads = (unsigned)nb;
	jobs = calloc(threads, sizeof(*jobs));
	mode = calloc(e->nseg, 1);
	if (!jobs || !mode) {
		free(jobs);
		free(mode);
		return seg_restart_refuse(rep, SEG_RESTART_REFUSED, "memory", "out of memory");
	}
	/* A segment's items expire between its exp_base and its exp_max: only
	 * segments that straddle now need their items read. */
	for (uint32_t s = 0; s < e->nseg; s++) {
		const struct seg_hdr *h = &e->hdr[s];
		int64_t exp_max = atomic_load(&h->exp_max);

		if (h->exp_base == EXP_NEVER || h->exp_base > now)
			mode[s] = SCAN_LIVE;
		else if (exp_max != 0 && exp_max <= now)
			mode[s] = SCAN_EXPIRED;
		else
			mode[s] = SCAN_READ;
	}
	for (unsigned t = 0; t < threads; t++) {
		jobs[t] = (struct scan_job){ .e = e, .mode = mode, .ovf = ovf, .verify = verify,
					     .lo = nb * t / threads, .hi = nb * (t + 1) / threads,
					     .now = now, .bad = &bad, .area = a };
		jobs[t].slots = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].items = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].bytes = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].all_bytes = calloc(e->nseg, sizeof(uint32_t));
		if (!jobs[t].slots || !jobs[t].items || !jobs[t].bytes || !jobs[t].all_bytes) {
			threads = t + 1;
			rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "memory", "out of memory");
			goto out;
		}
	}
	/* The info words hold the writers' locks and move counts: nobody
	 * holds or moves anything now. Cleared before the jobs run, since a
	 * job's removals count moves on stripes other jobs' chains share. */
	for (uint64_t b = 0; b < nb; b++)
		atomic_store_explicit(&e->table[b].slot[0], 0, memory_order_relaxed);
	for (; started < threads; started++)
		if (pthread_create(&jobs[started].thread, NULL, scan_run, &jobs[started]) != 0)
			break;
	/* Whatever could not get a thread of its own runs here. */
	for (unsigned t = started; t < threads; t++)
		scan_run(&jobs[t]);
	scan_run(&jobs[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(jobs[t].thread, NULL);
	rep->threads = started;
	uint64_t ovf_buckets = 0;

	for (unsigned t = 0; t < threads; t++) {
		if (jobs[t].err[0] && rc == 0)
			rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt", "hash table: %s",
				    jobs[t].err);
		rep->items += jobs[t].live;
		rep->expired += jobs[t].expired;
		ovf_buckets += jobs[t].ovf_buckets;
		cancelled |= jobs[t].cancelled;
	}
	/* The counts of a scan stopped part-way mean nothing; what it dropped
	 * (rep->expired) decides whether the area may stay clean. */
	if (rc == 0 && cancelled)
		rc = seg_restart_refuse(rep, SEG_RESTART_CANCELLED, "cancelled",
			    "stopped during the hash table's scan");
	if (rc == 0 && bad)
		rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt", "hash table: invalid");
	if (rc == 0 && ovf_buckets != h->ovf_used)
		rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			    "ovf_used %" PRIu64 ", %" PRIu64 " overflow buckets in the chains",
			    h->ovf_used, ovf_buckets);
	/* The slots naming each segment must be the items it counted at the
	 * stop, and where its items were read, their bytes too: the table and
	 * the segment headers agree. */
	for (uint32_t s = 0; rc == 0 && s < e->nseg; s++) {
		uint64_t slots = 0, items = 0, bytes = 0, all_bytes = 0;
		const bool read = verify || mode[s] == SCAN_READ;

		for (unsigned t = 0; t < threads; t++) {
			slots += jobs[t].slots[s];
			items += jobs[t].items[s];
			bytes += jobs[t].bytes[s];
			all_bytes += jobs[t].all_bytes[s];
		}
		if (img[s].state != SEG_SEALED)
			continue;
		if (slots != (uint64_t)img[s].live_items ||
		    (read && all_bytes != (uint64_t)img[s].live_bytes)) {
			rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				    "segment %" PRIu32 ": %" PRIu64 " slots, %" PRIu64
				    " bytes; saved %" PRId32 " items, %" PRId32 " bytes",
				    s, slots, all_bytes, img[s].live_items, img[s].live_bytes);
			break;
		}
		if (!read)
			bytes = items == slots ? (uint64_t)img[s].live_bytes : 0;
		atomic_store(&e->hdr[s].live, seg_live_pack((int32_t)items, (int32_t)bytes));
		rep->segments++;
		rep->segments_read += read;
	}
	rep->buckets = nb;
out:
	for (unsigned t = 0; t < threads; t++) {
		free(jobs[t].slots);
		free(jobs[t].items);
		free(jobs[t].bytes);
		free(jobs[t].all_bytes);
	}
	free(jobs);
	free(mode);
	return rc;
}

/* The head buckets the saved table has, where the header is this
 * format's and they fit this engine's table (seg_restart_check_header()
 * refuses the others), else the starting table's. */
static uint64_t
saved_buckets(const struct seg_engine *e, const struct restart_hdr *h)
{
	if (h->magic == RESTART_MAGIC && h->version == RESTART_VERSION &&
	    h->buckets >= e->table_mask + 1 && h->buckets <= 1ull << e->geo.max_power)
		return h->buckets;
	return e->table_mask + 1;
}

int
seg_restart_load(struct engine *eng, const struct seg_restart_area *a, unsigned threads,
		 struct seg_restart_report *rep)
{
	struct seg_engine *e = seg_engine_of(eng);
	const uint64_t t0 = mono_us();
	struct restart_hdr *h = a->addr;
	struct area_layout al;
	const struct seg_image *img;
	const int32_t *chains;
	uint8_t *area = a->addr;
	struct ovf_map ovf = { 0 };
	int64_t now, wall, shift;
	int rc;

	memset(rep, 0, sizeof(*rep));
	seg_restart_layout(e->nseg, saved_buckets(e, h), &al);
	if (a->len < al.total) {
		seg_restart_refuse(rep, SEG_RESTART_REFUSED, "area", "restart area of %zu bytes, %zu needed",
		       a->len, al.total);
		return -1;
	}
	threads = threads == 0 ? 1 : threads > RESTART_MAX_THREADS ? RESTART_MAX_THREADS : threads;
	now = seg_now(e);
	wall = seg_restart_wall_now(a);
	img = (const struct seg_image *)(area + al.segs_off);
	chains = (const int32_t *)(area + al.chains_off);
	if (load_cancelled(a)) {
		seg_restart_refuse(rep, SEG_RESTART_CANCELLED, "cancelled",
				   "stopped before the load began; the saved cache is kept for "
				   "the next start");
		return 0;
	}
	rc = seg_restart_check_header(e, a, &al, now, wall, rep);
	if (rc == 0)
		rc = seg_restart_check_segments(e, h, img, chains, rep);
	if (rc == 0 && ovf_map_init(&ovf, e, h, img) < 0)
		rc = seg_restart_refuse(rep, SEG_RESTART_REFUSED, "memory", "out of memory");
	if (rc < 0) {
		ovf_map_free(&ovf);
		/* Cold, but cas values stay above any handed out before (and
		 * within the cas's bits: a corrupt counter starts over). */
		if (h->magic == RESTART_MAGIC && h->gen_counter < 1ull << SEG_CAS_GEN_BITS)
			cold_reset(e, h->gen_counter);
		else if (h->magic == RESTART_MAGIC)
			cold_reset(e, 0);
		mark_open(e, a, &al);
		rep->usec = mono_us() - t0;
		return 0;
	}
	/* Not clean from here on: loading changes the table and overflow
	 * buckets (expired items leave them). */
	h->clean = 0;
	seg_restart_persist(a, &h->clean, sizeof(h->clean));
	/* The engine clock is monotonic, anchored to the wall clock when the
	 * process started: if the anchors differ (the wall clock was stepped
	 * during the last run), saved times move by the difference. Within a
	 * second either way is the anchors' rounding, not a step. */
	shift = (now - wall) - (h->stop_clock - h->stop_wall);
	if (shift >= -1 && shift <= 1)
		shift = 0;
	apply_segments(e, h, img, chains, shift);
	/* The geometry first: the scan resolves chains by it. */
	atomic_store(&e->geo.geom, seg_geom_of_buckets(h->buckets));
	rc = 0;
	const size_t table_bytes = seg_hash_bytes(e);
	for (size_t off = 0; off < table_bytes && rc == 0; off += TABLE_COPY_CHUNK) {
		if (load_cancelled(a))
			rc = seg_restart_refuse(rep, SEG_RESTART_CANCELLED, "cancelled",
						"stopped while the hash table was copied");
		else
			memcpy((uint8_t *)e->table + off, area + al.table_off + off,
			       table_bytes - off < TABLE_COPY_CHUNK ? table_bytes - off
								    : TABLE_COPY_CHUNK);
	}
	if (rc == 0)
		rc = check_ovf_free(e, &ovf, rep);
	if (rc == 0)
		rc = scan_table(e, h, img, &ovf, threads, a, now, rep);
	ovf_map_free(&ovf);
	if (rc < 0 && rep->state == SEG_RESTART_CANCELLED) {
		load_stopped(a, h, rep);
		rep->usec = mono_us() - t0;
		return 0;
	}
	if (rc < 0) {
		cold_reset(e, h->gen_counter);
		rep->items = rep->expired = rep->segments = rep->segments_read = 0;
		mark_open(e, a, &al);
		rep->usec = mono_us() - t0;
		return 0;
	}
	/* A delayed flush_all that came due while the cache was down. Segments
	 * whose items all expired meanwhile hold no live item now; the first
	 * expiry sweep frees them (freeing here would also reclaim ahead,
	 * evicting recovered items before they are counted). */
	const uint64_t flushes = atomic_load(&e->n_flushes);

	seg_flush_if_due(e, now);
	const bool flushed = atomic_load(&e->n_flushes) != flushes;

	if (flushed) /* what the scan counted is gone */
		rep->items = 0;
	rep->state = SEG_RESTART_WARM;
	snprintf(rep->reason, sizeof(rep->reason), "stopped cleanly %" PRId64 " s ago%s",
		 wall - h->stop_wall, flushed ? "; a delayed flush_all came due" : "");
	mark_open(e, a, &al);
	rep->usec = mono_us() - t0;
	return 0;
}
