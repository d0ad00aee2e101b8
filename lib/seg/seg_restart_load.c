/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Warm restart, the loading half: at the next start, checking the saved
 * header against this engine (refusing it with a reason, or starting
 * cold), loading the hash table and validating it in parallel, and
 * rebuilding segments, chains and live counts (seg_restart_load). The
 * area's layout and the reasons for saving the table are in
 * seg_restart.c. Calls seg_restart.c, seg_engine.c and below.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "seg/seg_private.h"
#include "seg/seg_item.h"
#include "util/util_err.h"

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Records why the saved state is not used: a one-word code for `stats`
 * and a sentence for the log. */
static int
refuse(struct seg_restart_report *rep, enum seg_restart_state st, const char *code,
       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
refuse(struct seg_restart_report *rep, enum seg_restart_state st, const char *code,
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

/* The header's verdict: 0 when the saved state may be loaded. */
static int
check_header(const struct seg_engine *e, const struct restart_hdr *h, int64_t wall,
	     struct seg_restart_report *rep)
{
	if (h->magic != RESTART_MAGIC)
		return refuse(rep, SEG_RESTART_COLD, "none", "no saved cache in the file");
	if (h->version != RESTART_VERSION)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "version",
			      "saved by layout version %" PRIu32 ", this build reads %u",
			      h->version, RESTART_VERSION);
	if (h->seg_size != e->seg_size || h->off_shift != e->off_shift)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "segment size changed: saved %" PRIu64 ", now %" PRIu32,
			      h->seg_size, e->seg_size);
	if (h->nseg != e->nseg)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "heap changed (-m or the file): saved %" PRIu64
			      " segments, now %" PRIu32, h->nseg, e->nseg);
	if (h->buckets != e->table_mask + 1)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "geometry",
			      "hash table changed (-m): saved %" PRIu64 " buckets, now %" PRIu64,
			      h->buckets, e->table_mask + 1);
	if (h->hash_fp != seg_hash_fingerprint() || h->ttl_chains != TTL_CHAINS ||
	    h->image_size != sizeof(struct seg_image) ||
	    h->bucket_size != sizeof(struct seg_bucket))
		return refuse(rep, SEG_RESTART_REFUSED,
			      "version",
			      "saved with another key hash or table format");
	if (h->clean != 1)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "dirty",
			      "not stopped cleanly (a crash or kill -9): "
			      "the saved state may be torn");
	if (wall < h->stop_wall)
		return refuse(rep, SEG_RESTART_REFUSED,
			      "clock",
			      "the wall clock went back %" PRId64 " s since the stop",
			      h->stop_wall - wall);
	return 0;
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
	memset(e->table, 0, (e->table_mask + 1) * sizeof(struct seg_bucket));
	for (uint32_t i = 0; i < e->nseg; i++) {
		struct seg_hdr *h = &e->hdr[i];

		atomic_store(&h->write_off, 0);
		atomic_store(&h->live_items, 0);
		atomic_store(&h->live_bytes, 0);
		atomic_store(&h->exp_max, 0);
		h->exp_base = 0;
		h->create_at = 0;
		h->unit_shift = 0;
		h->ttl_bucket = 0;
		h->prev = h->next = SEG_NONE;
		atomic_store(&h->state, SEG_FREE);
		atomic_store(&h->gen, seg_new_gen(e));
	}
	for (unsigned i = 0; i < TTL_CHAINS; i++) {
		e->chain[i].head = e->chain[i].tail = SEG_NONE;
		e->chain[i].merge_next = SEG_NONE;
		atomic_store(&e->chain[i].shared_open, 0);
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

/* Validates the saved segment images and chains (nothing is changed). */
static int
check_segments(const struct seg_engine *e, const struct restart_hdr *h,
	       const struct seg_image *img, const int32_t *chains, struct seg_restart_report *rep)
{
	uint32_t sealed = 0, chained = 0;

	for (uint32_t i = 0; i < e->nseg; i++) {
		const struct seg_image *s = &img[i];

		if (s->gen == 0 || s->gen > h->gen_counter)
			return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "segment %" PRIu32 ": generation %" PRIu64 " out of range", i,
				      s->gen);
		switch (s->state) {
		case SEG_FREE:
		case SEG_HASH:
			break;
		case SEG_SEALED:
			sealed++;
			if (s->write_off > e->seg_size || s->ttl_bucket >= TTL_CHAINS ||
			    s->unit_shift > 12 || s->live_items < 0 || s->live_bytes < 0 ||
			    (uint32_t)s->live_bytes > s->write_off)
				return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					      "segment %" PRIu32 ": bad header", i);
			break;
		default:
			return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
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
				return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
					      "TTL chain %u is broken", c);
		}
		if (prev != chains[2 * c + 1])
			return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "TTL chain %u: bad tail", c);
		chained += len;
	}
	if (chained != sealed)
		return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "%" PRIu32 " segments in use, %" PRIu32 " in the TTL chains", sealed,
			      chained);
	if ((h->ovf_seg != SEG_NONE &&
	     (h->ovf_seg < 0 || h->ovf_seg >= e->nseg || img[h->ovf_seg].state != SEG_HASH)) ||
	    h->ovf_next > e->seg_size / sizeof(struct seg_bucket) ||
	    (h->merge_reserve != SEG_NONE &&
	     (h->merge_reserve < 0 || h->merge_reserve >= e->nseg ||
	      img[h->merge_reserve].state != SEG_FREE)))
		return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
			      "bad overflow bucket or merge state");
	return 0;
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

		atomic_store(&hd->live_items, 0);
		atomic_store(&hd->live_bytes, 0);
		atomic_store(&hd->write_off, sealed ? s->write_off | SEG_WOFF_SEALED : 0);
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
	e->ovf_seg = (int32_t)h->ovf_seg;
	e->ovf_next = (uint32_t)h->ovf_next;
	e->ovf_free = h->ovf_free;
	atomic_store(&e->ovf_used, h->ovf_used);
	atomic_store(&e->ovf_free_count, h->ovf_free_count);
	atomic_store(&e->ovf_segs, (uint32_t)h->ovf_segs);
	atomic_store(&e->flush_at, h->flush_at ? h->flush_at + shift : 0);
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
	bool verify;               /* parse every item and check its key's hash */
	uint64_t lo, hi;           /* head buckets [lo, hi) */
	int64_t now;
	_Atomic bool *bad;         /* set by the first job that fails */
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
	if (!item_parse(p, end - off, &iv)) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": no item at segment %" PRIu32
			 " offset %" PRIu32, b, seg, off);
		return false;
	}
	seg_key_init(e, &k, p + iv.hdr_len, iv.klen);
	if (j->verify && (k.head != &e->table[b] || k.tag != slot_tag(v))) {
		snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": the item at segment %" PRIu32
			 " offset %" PRIu32 " hashes elsewhere", b, seg, off);
		return false;
	}
	*expired = seg_expired(seg_item_expiry(h, iv.exp_delta), j->now);
	*span = (iv.total + (1u << e->off_shift) - 1) & ~((1u << e->off_shift) - 1);
	return true;
}

/* A link slot must name a bucket inside a segment lent to the table. */
static bool
check_link(struct scan_job *j, uint64_t b, uint64_t link)
{
	struct seg_engine *e = j->e;
	uint32_t seg = slot_seg(link);

	if (seg < e->nseg &&
	    atomic_load_explicit(&e->hdr[seg].state, memory_order_relaxed) == SEG_HASH &&
	    slot_off(link) < e->seg_size / sizeof(struct seg_bucket))
		return true;
	snprintf(j->err, sizeof(j->err), "bucket %" PRIu64 ": bad overflow link", b);
	return false;
}

/* One chain: validate and count every item; then drop the expired ones
 * (removal repacks the chain, so each is looked up afresh). */
static bool
scan_chain(struct scan_job *j, uint64_t b)
{
	struct seg_engine *e = j->e;
	struct seg_bucket *head = &e->table[b];
	struct seg_bucket *bk = head;
	uint64_t expired = 0, steps = 0;
	const uint64_t max_steps = atomic_load(&e->ovf_used) + 1;

	/* The info word holds the writers' lock and move count: nobody
	 * holds or moves anything now. */
	atomic_store_explicit(&head->slot[0], 0, memory_order_relaxed);
	for (unsigned i = 1;; i = 0) {
		for (; i < BUCKET_SLOTS; i++) {
			uint64_t v = atomic_load_explicit(&bk->slot[i], memory_order_relaxed);
			uint32_t span;
			bool exp;

			if (v == 0)
				continue;
			if (i == BUCKET_SLOTS - 1 && slot_is_link(v)) {
				if (!check_link(j, b, v) || ++steps > max_steps) {
					if (!j->err[0])
						snprintf(j->err, sizeof(j->err),
							 "bucket %" PRIu64 ": chain loops", b);
					return false;
				}
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
 * (in the heap): every link must be valid and the count as saved. */
static int
check_ovf_free(struct seg_engine *e, struct seg_restart_report *rep)
{
	const uint64_t want = atomic_load(&e->ovf_free_count);
	struct scan_job j = { .e = e };
	uint64_t n = 0;

	for (uint64_t link = e->ovf_free; link != 0; n++) {
		if (n >= want || !slot_is_link(link) || !check_link(&j, 0, link))
			return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				      "overflow bucket free list is broken");
		link = atomic_load_explicit(&seg_hash_link_target(e, link)->slot[0],
					    memory_order_relaxed);
	}
	if (n != want)
		return refuse(rep, SEG_RESTART_REFUSED, "corrupt",
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
scan_table(struct seg_engine *e, const struct seg_image *img, unsigned threads, bool verify,
	   int64_t now, struct seg_restart_report *rep)
{
	const uint64_t nb = e->table_mask + 1;
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
		return refuse(rep, SEG_RESTART_REFUSED, "memory", "out of memory");
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
		jobs[t] = (struct scan_job){ .e = e, .mode = mode, .verify = verify,
					     .lo = nb * t / threads, .hi = nb * (t + 1) / threads,
					     .now = now, .bad = &bad };
		jobs[t].slots = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].items = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].bytes = calloc(e->nseg, sizeof(uint32_t));
		jobs[t].all_bytes = calloc(e->nseg, sizeof(uint32_t));
		if (!jobs[t].slots || !jobs[t].items || !jobs[t].bytes || !jobs[t].all_bytes) {
			threads = t + 1;
			rc = refuse(rep, SEG_RESTART_REFUSED, "memory", "out of memory");
			goto out;
		}
	}
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
	for (unsigned t = 0; t < threads; t++) {
		if (jobs[t].err[0] && rc == 0)
			rc = refuse(rep, SEG_RESTART_REFUSED, "corrupt", "hash table: %s",
				    jobs[t].err);
		rep->items += jobs[t].live;
		rep->expired += jobs[t].expired;
	}
	if (rc == 0 && bad)
		rc = refuse(rep, SEG_RESTART_REFUSED, "corrupt", "hash table: invalid");
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
			rc = refuse(rep, SEG_RESTART_REFUSED, "corrupt",
				    "segment %" PRIu32 ": %" PRIu64 " slots, %" PRIu64
				    " bytes; saved %" PRId32 " items, %" PRId32 " bytes",
				    s, slots, all_bytes, img[s].live_items, img[s].live_bytes);
			break;
		}
		if (!read)
			bytes = items == slots ? (uint64_t)img[s].live_bytes : 0;
		atomic_store(&e->hdr[s].live_items, (int32_t)items);
		atomic_store(&e->hdr[s].live_bytes, (int32_t)bytes);
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
	int64_t now, wall, shift;
	int rc;

	memset(rep, 0, sizeof(*rep));
	seg_restart_layout(e->nseg, e->table_mask + 1, &al);
	if (a->len < al.total) {
		refuse(rep, SEG_RESTART_REFUSED, "area", "restart area of %zu bytes, %zu needed",
		       a->len, al.total);
		return -1;
	}
	threads = threads == 0 ? 1 : threads > RESTART_MAX_THREADS ? RESTART_MAX_THREADS : threads;
	now = seg_now(e);
	wall = seg_restart_wall_now(a);
	img = (const struct seg_image *)(area + al.segs_off);
	chains = (const int32_t *)(area + al.chains_off);
	rc = check_header(e, h, wall, rep);
	if (rc == 0)
		rc = check_segments(e, h, img, chains, rep);
	if (rc < 0) {
		/* Cold, but cas values stay above any handed out before. */
		if (h->magic == RESTART_MAGIC)
			cold_reset(e, h->gen_counter);
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
	memcpy(e->table, area + al.table_off, (e->table_mask + 1) * sizeof(struct seg_bucket));
	if (check_ovf_free(e, rep) < 0 ||
	    scan_table(e, img, threads, a->verify_items, now, rep) < 0) {
		uint64_t floor = h->gen_counter;

		cold_reset(e, floor);
		rep->items = rep->expired = rep->segments = rep->segments_read = 0;
		mark_open(e, a, &al);
		rep->usec = mono_us() - t0;
		return 0;
	}
	/* A delayed flush_all that came due while the cache was down. Segments
	 * whose items all expired meanwhile hold no live item now; the first
	 * expiry sweep frees them (freeing here would also reclaim ahead,
	 * evicting recovered items before they are counted). */
	seg_flush_if_due(e, now);
	rep->state = SEG_RESTART_WARM;
	snprintf(rep->reason, sizeof(rep->reason), "stopped cleanly %" PRId64 " s ago",
		 wall - h->stop_wall);
	mark_open(e, a, &al);
	rep->usec = mono_us() - t0;
	return 0;
}
