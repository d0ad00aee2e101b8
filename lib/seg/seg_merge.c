/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Merge-based eviction (the default policy): a run of sparse sealed
 * segments of one TTL chain is compacted into fewer destinations keeping
 * its most read items; the least read are evicted. One pass frees at
 * least one segment. A pass claims its run and a reserve under
 * evict_lock and copies without it, so passes on disjoint runs (of one
 * chain or several) run at once. Called by seg_evict.c; calls seg_hash.c
 * and seg_segment.c.
 */
#include <sys/types.h>

#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_merge.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"
#include "seg/seg_walk.h"
#include "seg/seg_merge_cut.h"


/* Segments merged per pass, at least: the run's most read items fill
 * MERGE_N - 1 new segments and a pass frees one or more. A run whose
 * live bytes do not fit in one segment fewer grows (run_walk), up to
 * MERGE_GROW_MAX, so that a pass over dense segments frees one by
 * evicting as few live items as it can (the least read of the run)
 * instead of a whole segment's worth; and a run grows up to
 * MERGE_RUN_MAX while the next segment needs no further destination (a
 * run of mostly dead copies is compacted whole). The paper's four into
 * one evicted three segments of live items for one freed, where most of
 * a Twitter-shaped heap's waste is dead copies spread thin
 * (docs/performance.md). */
#define MERGE_N 2
#define MERGE_GROW_MAX 4
#define MERGE_RUN_MAX 16
#define FREQ_LEVELS (SLOT_FREQ_MASK + 1)

static uint64_t
seg_live(const struct seg_engine *e, int32_t seg)
{
	/* The header alone, an estimate: workers may hold changes to it
	 * (seg_live.c says why that is safe here). */
	int32_t lb = seg_live_bytes_of(atomic_load_explicit(&e->hdr[seg].live,
							    memory_order_relaxed));

	return lb > 0 ? (uint64_t)lb : 0;
}

/* Which items of a run survive a merge: seg_merge_cut.h. */
_Static_assert(FREQ_LEVELS == SEG_FREQ_LEVELS, "slot frequencies fill the cut's levels");

/* Drains the run and counts its live bytes by read frequency (lock-free,
 * an estimate: the keep decision is taken again under each bucket lock),
 * then picks the cutoff so that about `keep` bytes survive. A run of two
 * or more whose live bytes fit in `keep` keeps them all: no count, which
 * would cost a hash lookup per item. */
static struct seg_merge_cut
merge_cutoff(struct seg_engine *e, const int32_t *run, unsigned n, uint64_t keep,
	     int64_t now)
{
	uint64_t bytes[FREQ_LEVELS] = { 0 };
	uint64_t live = 0;

	for (unsigned r = 0; r < n; r++) {
		seg_close_and_drain(e, run[r]);
		live += seg_live(e, run[r]);
	}
	if (n > 1 && live <= keep)
		return (struct seg_merge_cut){ 0, UINT64_MAX, live };
	for (unsigned r = 0; r < n; r++) {
		const struct seg_hdr *sh = &e->hdr[run[r]];
		const struct seg_walked *wi;
		struct seg_walk it;

		seg_walk_init(e, &it, run[r]);
		while ((wi = seg_walk_next(e, &it))) {
			_Atomic uint64_t *slot = seg_hash_find_loc_locked(
				e, &wi->k, (uint32_t)run[r], wi->off >> e->off_shift);

			if (slot && !seg_expired(seg_item_expiry(sh, wi->iv.exp_delta), now))
				bytes[slot_freq(atomic_load_explicit(slot,
								     memory_order_relaxed))] +=
					wi->span;
		}
	}
	return seg_merge_cut_pick(bytes, keep);
}

/* A cursor into chain c: the segment recorded, while it is still in the
 * life it was recorded in, else the chain's head. */
static int32_t
cursor_at(const struct seg_engine *e, const struct seg_chain *c, int32_t seg, uint64_t gen)
{
	return seg != SEG_NONE && atomic_load(&e->hdr[seg].gen) == gen ? seg : c->head;
}

/* Looks for a sparse segment (under 3/4 live) in chain c, going on where
 * the last look stopped: at most RUN_SCAN_MAX segments a call, on to the
 * head after the tail. Merged destinations are dense and stay where their
 * run was, while segments written since fill with dead copies of
 * rewritten keys: those are the ones worth merging. Caller holds the
 * chain lock. */
#define RUN_SCAN_MAX 32
static int32_t
find_sparse(const struct seg_engine *e, struct seg_chain *c, bool advance)
{
	int32_t seg = cursor_at(e, c, c->sparse_next, c->sparse_gen);
	int32_t found = SEG_NONE;

	for (unsigned i = 0; i < RUN_SCAN_MAX && seg != SEG_NONE; i++) {
		if (atomic_load(&e->hdr[seg].state) == SEG_SEALED &&
		    seg_live(e, seg) < e->seg_size / 4 * 3) {
			found = seg;
			break;
		}
		seg = e->hdr[seg].next;
	}
	/* Only a claim moves the cursor: a look (run_density) that moved it
	 * sent the claim after it to a different run from the one compared. */
	if (advance) {
		c->sparse_next = seg;
		c->sparse_gen = seg != SEG_NONE ? atomic_load(&e->hdr[seg].gen) : 0;
	}
	return found;
}

/* Where a pass over chain c starts: a sparse segment when find_sparse()
 * finds one; else the first sealed segment from the merge cursor (a pass
 * there evicts, and the cursor moves past its run) or, from_head, from
 * the head. Caller holds the chain lock. */
static int32_t
run_first(const struct seg_engine *e, struct seg_chain *c, bool from_head, bool claiming)
{
	int32_t seg = from_head ? SEG_NONE : find_sparse(e, c, claiming);

	if (seg != SEG_NONE)
		return seg;
	seg = from_head ? c->head : cursor_at(e, c, c->merge_next, c->merge_gen);
	while (seg != SEG_NONE && atomic_load(&e->hdr[seg].state) != SEG_SEALED)
		seg = e->hdr[seg].next;
	return seg;
}

/* Segments a pass over chain c takes at least (and a run needs): one
 * while the chain is cold, MERGE_N else. */
static unsigned
run_min(const struct seg_chain *c)
{
	return __atomic_load_n(&c->merge_cold, __ATOMIC_RELAXED) ? 1 : MERGE_N;
}

/* Segments needed to hold `live` bytes (at least one). */
static uint64_t
segs_for(const struct seg_engine *e, uint64_t live)
{
	return live ? (live + e->seg_size - 1) / e->seg_size : 1;
}

/* Whether a warm run of n segments holding `live` bytes takes the next
 * one, holding `more`: while the run cannot free a segment without
 * evicting live items (up to MERGE_GROW_MAX), or while the next one needs
 * no further destination (up to MERGE_RUN_MAX, the caller's bound). */
static bool
run_grows(const struct seg_engine *e, unsigned n, uint64_t live, uint64_t more)
{
	if (n < MERGE_GROW_MAX && live > (uint64_t)(n - 1) * e->seg_size)
		return true;
	return segs_for(e, live + more) <= segs_for(e, live);
}

/* Walks the run a pass over warm or cold chain c takes from run_first():
 * consecutive sealed segments, run_min() of them and, beyond that (warm
 * chains), more while run_grows(): a run of dense segments grows until
 * one segment fewer holds it, and a run of mostly dead copies (hot keys
 * rewritten) is compacted whole instead of into destinations that would
 * stay mostly empty. Claims the segments into run[] when run is not
 * NULL. Returns how many; *live sums their live bytes, *oldest_gen (when
 * not NULL) is their lowest gen. Caller holds the chain lock. */
static unsigned
run_walk(struct seg_engine *e, struct seg_chain *c, bool from_head, int32_t *run,
	 uint64_t *live, uint64_t *oldest_gen)
{
	int32_t seg = run_first(e, c, from_head, run != NULL);
	const unsigned min = run_min(c);
	unsigned n = 0;

	*live = 0;
	if (oldest_gen)
		*oldest_gen = UINT64_MAX;
	while (seg != SEG_NONE && n < MERGE_RUN_MAX &&
	       atomic_load(&e->hdr[seg].state) == SEG_SEALED) {
		const uint64_t live_here = seg_live(e, seg);

		if (n >= min && (min == 1 || !run_grows(e, n, *live, live_here)))
			break;
		if (run && !seg_claim(e, seg, SEG_SEALED))
			break;
		if (run)
			run[n] = seg;
		n++;
		*live += live_here;
		if (oldest_gen) {
			const uint64_t gen = atomic_load(&e->hdr[seg].gen);

			if (gen < *oldest_gen)
				*oldest_gen = gen;
		}
		seg = e->hdr[seg].next;
	}
	return n;
}

/* Claims the run of chain c from its merge cursor or, when that gives
 * fewer than run_min(), from its head (the cursor reached the end of the
 * chain). Caller holds the chain lock. */
static unsigned
claim_run(struct seg_engine *e, struct seg_chain *c, int32_t *run)
{
	uint64_t live;
	unsigned n = 0;

	for (int from_head = 0; from_head < 2 && n < run_min(c); from_head++) {
		for (unsigned i = 0; i < n; i++)
			atomic_store(&e->hdr[run[i]].state, SEG_SEALED);
		n = run_walk(e, c, from_head, run, &live, NULL);
	}
	return n;
}

#define DENSITY_NONE UINT32_MAX

/* What a pass over a chain's next run would take: its live bytes per
 * 1024 bytes of segment, or DENSITY_NONE when it would take none (a
 * merged destination counts whole: the part it never filled is wasted
 * too), and the oldest gen among its segments (a segment's gen is new
 * when it opens, written or as a merge destination: the lowest is the
 * run written longest ago). Caller holds the chain lock. */
struct run_look {
	uint32_t density;
	uint64_t gen;
};

static struct run_look
run_density(struct seg_engine *e, struct seg_chain *c)
{
	for (int from_head = 0; from_head < 2; from_head++) {
		uint64_t live, gen;
		unsigned n = run_walk(e, c, from_head, NULL, &live, &gen);

		if (n >= run_min(c))
			return (struct run_look){
				(uint32_t)(live * 1024 / ((uint64_t)n * e->seg_size)), gen };
	}
	return (struct run_look){ DENSITY_NONE, UINT64_MAX };
}

/* The chain whose next run holds the fewest live bytes for its size: a
 * pass there frees the most memory for the fewest live items evicted (a
 * log-structured cleaner's greedy choice). Round robin over the chains,
 * by which a pass used to choose, sends passes to chains of live items
 * while others are mostly dead copies: a few hot keys rewritten with
 * large values fill segments with dead bytes much faster than cold keys
 * fill them with live ones.
 *
 * Among runs equally dense (within SEG_MERGE_DENSITY_BAND of the
 * sparsest), the one written longest ago: every chain's data then meets
 * merge at the same age, and a chain gets passes as it gets writes.
 * Taking turns instead gave every chain the same passes whatever its
 * size, so a TTL few keys had fell to the two segments a run needs and
 * its items were merged away young: Twitter-shaped B's 7-day keys (5% of the gets) missed 0.80
 * at 256 MiB against 0.37 to 0.49 for the other long TTLs. Equal runs
 * still take turns (the scan starts after the last chain chosen). */
static struct seg_chain *
sparsest_chain(struct seg_engine *e, struct seg_worker *w)
{
	/* (under evict_lock: one pass chooses at a time; 12 KiB of stack) */
	uint32_t density[TTL_CHAINS];
	uint64_t gen[TTL_CHAINS];
	uint32_t sparsest = DENSITY_NONE;
	uint64_t oldest = UINT64_MAX;
	unsigned best_at = TTL_CHAINS;

	for (unsigned at = 0; at < TTL_CHAINS; at++) {
		density[at] = DENSITY_NONE;
		gen[at] = UINT64_MAX;
	}
	/* Only the chains that hold segments: their bits in chain_used. */
	for (unsigned at = seg_chain_next_used(e, 0); at < TTL_CHAINS;
	     at = seg_chain_next_used(e, at + 1)) {
		struct seg_chain *c = &e->chain[at];
		struct run_look l;

		seg_spin_lock(&c->lock);
		seg_count_lock(e, w, ENGINE_C_lock_segment);
		l = run_density(e, c);
		seg_spin_unlock(&c->lock);
		density[at] = l.density;
		gen[at] = l.gen;
		if (l.density < sparsest)
			sparsest = l.density;
	}
	if (sparsest == DENSITY_NONE)
		return NULL;
	for (unsigned i = 0; i < TTL_CHAINS; i++) {
		const unsigned at = (e->merge_cursor + i) % TTL_CHAINS;

		if (density[at] < sparsest + SEG_MERGE_DENSITY_BAND && gen[at] < oldest) {
			oldest = gen[at];
			best_at = at;
		}
	}
	e->merge_cursor = (best_at + 1) % TTL_CHAINS;
	return &e->chain[best_at];
}

/* Opens a claimed, retired member of a run in its chain as a merge
 * destination (SEG_RECLAIM), keeping its chain links: other reclaimers
 * (the sweep, a pass on a neighbouring run) may unlink its neighbours
 * meanwhile, under the chain lock, which this holds. */
static void
chain_reopen_member(struct seg_engine *e, int32_t seg, unsigned ttl_bucket, int64_t exp_base,
		    uint8_t unit_shift, int64_t now)
{
	struct seg_chain *c = &e->chain[ttl_bucket];
	struct seg_hdr *h = &e->hdr[seg];

	seg_spin_lock(&c->lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	const int32_t prev = h->prev, next = h->next;

	seg_init_open(e, seg, ttl_bucket, exp_base, unit_shift, now);
	h->prev = prev;
	h->next = next;
	atomic_store(&h->state, SEG_RECLAIM);
	seg_spin_unlock(&c->lock);
}

/* The destinations of a merge pass: the reserve segment first, then
 * members of the run once every item in them has been moved or dropped
 * (their memory is free again), at most `max` of them. All take the
 * run's lowest exp_base, so every kept item's delta is >= 0 (workers'
 * clocks may straddle a second, so a later segment of the chain can have
 * a lower one). */
struct merge_dests {
	int32_t seg[MERGE_RUN_MAX];
	unsigned n, max;
	uint32_t off;      /* write offset in the last one */
	int64_t exp_max;   /* of the last one */
	int64_t exp_base;
	uint64_t kept;     /* bytes, in all of them */
	/* the last one's live items and bytes (seg_live_pack), added to its
	 * header once, when it is sealed: one RMW a destination, not one an
	 * item */
	int64_t live;
};

static void
dest_open(struct seg_engine *e, struct merge_dests *md, const int32_t *run, int32_t seg)
{
	const struct seg_hdr *r = &e->hdr[run[0]];

	if (md->n == 0) {
		/* The reserve: in no chain. */
		seg_init_open(e, seg, r->ttl_bucket, md->exp_base, r->unit_shift, r->create_at);
		atomic_store(&e->hdr[seg].state, SEG_RECLAIM);
	} else {
		/* A member of the run: it stays linked where it is until the
		 * run is replaced. */
		chain_reopen_member(e, seg, r->ttl_bucket, md->exp_base, r->unit_shift,
				    r->create_at);
	}
	md->seg[md->n++] = seg;
	md->off = 0;
	md->exp_max = 0;
	md->live = 0;
}

/* Seals the last destination: its items are in place, its slots point
 * at them. Its state stays SEG_RECLAIM (nobody else may claim it) until
 * the run is replaced by the destinations in the chain. */
static void
dest_seal(struct seg_engine *e, struct merge_dests *md)
{
	struct seg_hdr *d = &e->hdr[md->seg[md->n - 1]];

	atomic_store_explicit(&d->exp_max, md->exp_max, memory_order_relaxed);
	/* before anyone may claim it (it is still RECLAIM): workers may have
	 * counted removals from it already, which this add completes */
	atomic_fetch_add_explicit(&d->live, md->live, memory_order_relaxed);
	md->live = 0;
	atomic_store_explicit(&d->write_off, md->off | SEG_WOFF_SEALED, memory_order_release);
	md->kept += md->off;
}

/* Room for `span` more bytes: in the last destination, else in a new one
 * made of run[md->n - 1] when the pass is past it (run[done - 1] is the
 * last member wholly moved) and may take one more. A member's old life
 * ends first: readers holding its gen fail validation. */
static bool
dest_room(struct seg_engine *e, struct merge_dests *md, const int32_t *run, unsigned done,
	  uint32_t span)
{
	if (md->off + span <= e->seg_size)
		return true;
	if (md->n >= md->max || md->n > done || span > e->seg_size)
		return false;
	dest_seal(e, md);
	/* seg_retire's release fence orders its gen bump before the copies
	 * into this member (docs/architecture.md, "Memory ordering"). */
	seg_retire(e, run[md->n - 1]);
	dest_open(e, md, run, run[md->n - 1]);
	atomic_fetch_add_explicit(&e->n_merge_reused, 1, memory_order_relaxed);
	return true;
}

/* Copies the still-used items of the run into the destinations and
 * unlinks the rest. Leaves the last destination unsealed. */
static void
merge_run(struct seg_engine *e, struct seg_worker *w, const int32_t *run,
	  unsigned n, struct merge_dests *md, const struct seg_merge_cut cut, int64_t now)
{
	uint64_t used_at_cutoff = 0;
	unsigned evicted = 0, expired = 0, unfetched = 0, expired_unfetched = 0;

	for (unsigned r = 0; r < n; r++) {
		const int32_t src = run[r];
		const struct seg_hdr *sh = &e->hdr[src];
		const uint8_t *sdata = seg_data(e, src);
		const struct seg_walked *wi;
		struct seg_walk it;

		seg_walk_init(e, &it, src); /* drained by merge_cutoff */
		while ((wi = seg_walk_next(e, &it))) {
			const struct seg_key k = wi->k;
			const uint32_t off = wi->off, span = wi->span;
			_Atomic uint64_t *slot;
			int64_t exp;

			if (!seg_hash_maybe_linked(e, &k, (uint32_t)src, off >> e->off_shift))
				continue; /* a dead copy: nothing to keep or unlink */
			seg_bucket_lock(k.head);
			seg_count_lock(e, w, ENGINE_C_lock_bucket);
			slot = seg_hash_find_loc_locked(e, &k, (uint32_t)src, off >> e->off_shift);
			if (slot) {
				uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
				unsigned freq = slot_freq(v);

				exp = seg_item_expiry(sh, wi->iv.exp_delta);
				if (!seg_expired(exp, now) && freq >= cut.cutoff &&
				    (freq > cut.cutoff || used_at_cutoff + span <= cut.at_cutoff) &&
				    (!exp || exp >= md->exp_base) && dest_room(e, md, run, r, span)) {
					const int32_t dest = md->seg[md->n - 1];
					const struct seg_hdr *d = &e->hdr[dest];
					uint8_t *ddata = seg_data(e, dest) + md->off;
					uint32_t delta = 0;

					memcpy(ddata, sdata + off, wi->iv.total);
					if (exp) {
						int64_t dd = (exp - d->exp_base) >> d->unit_shift;

						/* Merged items may die early, never late
						 * (dest's exp_base is the run's lowest, so
						 * dd >= 0). */
						delta = dd > EXP_DELTA_MAX ? EXP_DELTA_MAX
									   : (uint32_t)dd;
						item_set_exp_delta(ddata, delta);
						exp = seg_item_expiry(d, delta);
						if (exp > md->exp_max)
							md->exp_max = exp;
					}
					v = slot_make(k.tag, seg_merge_freq_after(freq), (uint32_t)dest,
						      md->off >> e->off_shift);
					/* (no removal from the source's count: the
					 * pass ends its life, which zeroes it) */
					atomic_store_explicit(slot, v, memory_order_release);
					md->live += seg_live_pack(1, (int32_t)span);
					md->off += span;
					if (freq == cut.cutoff)
						used_at_cutoff += span;
				} else {
					seg_hash_remove_locked(e, k.head, slot);
					if (seg_expired(exp, now)) {
						expired++;
						expired_unfetched += freq == 0;
					} else {
						evicted++;
						unfetched += freq == 0;
					}
				}
			}
			seg_bucket_unlock(k.head);
		}
	}
	atomic_fetch_add_explicit(&e->n_evictions, evicted, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->n_evicted_unfetched, unfetched, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->n_expired, expired, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->n_expired_unfetched, expired_unfetched,
				  memory_order_relaxed);
}

/* A reserve for a pass: the kept one, else a spare. Caller holds
 * evict_lock. */
static int32_t
reserve_take(struct seg_engine *e, bool *spare)
{
	int32_t seg = e->merge_reserve;

	*spare = false;
	if (seg != SEG_NONE) {
		e->merge_reserve = SEG_NONE;
	} else if (e->merge_spares > 0) {
		seg = e->merge_spare[--e->merge_spares];
		*spare = true;
	}
	return seg;
}

/* Keeps a segment a pass freed (retired) as a reserve when one is
 * missing, or as a spare when the pass took one (*owed: it gives it back,
 * or the spares made under contention were used up one pass at a time
 * and every second pass at once waited again) or one is wanted; else it
 * goes to the thread that asked, or to the pool. Spares are one, or up to
 * a 64th of the heap (as the pool's low watermark), and none below 32
 * segments: a segment kept empty is memory the cache does not use, so a
 * small heap runs few passes at once. Caller holds evict_lock. */
static void
reserve_give(struct seg_engine *e, int32_t seg, int32_t *got, bool *owed)
{
	const bool room = e->merge_spares < sizeof(e->merge_spare) / sizeof(e->merge_spare[0]) &&
			  e->nseg >= 32 && (e->merge_spares == 0 || e->merge_spares < e->nseg / 64);

	if (e->merge_reserve == SEG_NONE) {
		e->merge_reserve = seg;
	} else if (owed && *owed && room) {
		e->merge_spare[e->merge_spares++] = seg;
		*owed = false;
	} else if (e->merge_want_spare && room) {
		e->merge_spare[e->merge_spares++] = seg;
		e->merge_want_spare = false;
	} else if (got && *got == SEG_NONE) {
		*got = seg; /* the thread that asked: not through the pool */
	} else {
		seg_pool_push(e, seg);
	}
}

/* The end of a pass: it is no longer in flight. Takes evict_lock (which
 * the pass dropped to copy) and wakes those waiting for a pass to end. */
void
seg_pass_end(struct seg_engine *e, struct seg_worker *w, uint64_t *copy_ns, uint64_t from)
{
	pthread_mutex_lock(&e->evict_lock);
	if (copy_ns)
		*copy_ns += seg_clock_ns(CLOCK_MONOTONIC) - from;
	seg_count_lock(e, w, ENGINE_C_lock_segment);
	e->passes_in_flight--;
	pthread_cond_broadcast(&e->evict_done);
}

/* What a pass that found nothing to claim (or no reserve) returns: wait
 * for the passes in flight, which free segments and give back reserves,
 * when there are any. */
static enum seg_merge_result
pass_none(struct seg_engine *e, bool for_reserve)
{
	if (e->passes_in_flight == 0)
		return SEG_MERGE_NONE;
	if (for_reserve)
		e->merge_want_spare = true;
	return SEG_MERGE_BUSY;
}

/* One merge pass over the chain with the sparsest run (sparsest_chain).
 * Caller holds evict_lock; the pass drops it once its run and reserve are
 * claimed (the copies, most of a pass's time, run without it) and takes
 * it again to give back what it freed.
 *
 * A chain whose last pass kept nothing (data written once and never read)
 * is "cold": its passes take one segment, which goes whole when nothing in
 * it was read, as FIFO would; MERGE_N at a time would keep MERGE_N - 1
 * segments' worth of the pool empty for nothing. A read item in that one
 * segment makes the chain warm again and the pass a full one (chosen
 * afresh: at most once per cold chain, as no chain turns cold within a
 * pass). */
enum seg_merge_result
seg_merge_pass(struct seg_engine *e, struct seg_worker *w, int64_t now, uint64_t *copy_ns,
	       int32_t *got)
{
	int32_t run[MERGE_RUN_MAX];

	for (;;) {
		struct merge_dests md = { .n = 0 };
		struct seg_merge_cut cut;
		struct seg_chain *c;
		int32_t reserve;
		bool owed; /* the reserve was a spare: one goes back */
		unsigned n, tb;
		uint64_t copy_from;

		/* a flush waits for the passes in flight: no new one */
		if (atomic_load_explicit(&e->quiescing, memory_order_relaxed))
			return SEG_MERGE_BUSY;
		if (e->merge_reserve == SEG_NONE && e->merge_spares == 0)
			return pass_none(e, true);
		c = sparsest_chain(e, w);
		if (!c)
			return pass_none(e, false);
		seg_spin_lock(&c->lock);
		seg_count_lock(e, w, ENGINE_C_lock_segment);
		n = claim_run(e, c, run);
		if (n < run_min(c)) {
			/* Not what run_density saw: a pass in flight claimed
			 * part of it, or freed it meanwhile. */
			for (unsigned i = 0; i < n; i++)
				atomic_store(&e->hdr[run[i]].state, SEG_SEALED);
			seg_spin_unlock(&c->lock);
			return pass_none(e, false);
		}
		seg_spin_unlock(&c->lock);
		reserve = reserve_take(e, &owed);
		e->n_merge_at_once += e->passes_in_flight > 0;
		e->passes_in_flight++;
		copy_from = copy_ns ? seg_clock_ns(CLOCK_MONOTONIC) : 0;
		pthread_mutex_unlock(&e->evict_lock);
		SEG_TEST_POINT(SEG_TP_PASS_COPYING);

		/* n - 1 destinations at most: a pass frees one segment or more. */
		md.max = n > 1 ? n - 1 : 1;
		cut = merge_cutoff(e, run, n, (uint64_t)md.max * e->seg_size, now);
		if (n == 1 && cut.read_bytes > 0) {
			/* Warm again: choose afresh with full passes here. */
			atomic_store(&e->hdr[run[0]].state, SEG_SEALED);
			__atomic_store_n(&c->merge_cold, false, __ATOMIC_RELAXED);
			seg_pass_end(e, w, copy_ns, copy_from);
			reserve_give(e, reserve, NULL, &owed);
			continue;
		}
		__atomic_store_n(&c->merge_cold, cut.read_bytes == 0, __ATOMIC_RELAXED);

		tb = e->hdr[run[0]].ttl_bucket;
		md.exp_base = e->hdr[run[0]].exp_base;
		for (unsigned i = 1; i < n; i++)
			if (e->hdr[run[i]].exp_base < md.exp_base)
				md.exp_base = e->hdr[run[i]].exp_base;
		dest_open(e, &md, run, reserve);
		merge_run(e, w, run, n, &md, cut, now);
		if (md.n == 1 && md.off == 0) {
			/* Nothing kept: free the whole run and keep the reserve,
			 * rather than link an empty segment. */
			seg_chain_replace_run(e, tb, run, n, NULL, 0);
			seg_retire(e, reserve);
			for (unsigned i = 0; i < n; i++)
				seg_retire(e, run[i]);
			atomic_fetch_add_explicit(&e->n_seg_evicted, n, memory_order_relaxed);
			seg_pass_end(e, w, copy_ns, copy_from);
			reserve_give(e, reserve, got, &owed);
			for (unsigned i = 0; i < n; i++)
				reserve_give(e, run[i], got, &owed);
			return SEG_MERGE_DONE;
		}
		dest_seal(e, &md);
		seg_chain_replace_run(e, tb, run, n, md.seg, md.n);
		/* Linked in the run's place: others may claim them now. */
		for (unsigned i = 0; i < md.n; i++)
			atomic_store_explicit(&e->hdr[md.seg[i]].state, SEG_SEALED,
					      memory_order_release);
		/* run[0 .. md.n - 2] are destinations now; the next member
		 * becomes the next reserve (and another a spare, when one is
		 * wanted), the rest go to the pool. Their lives end like any
		 * other (stale appenders drained). */
		for (unsigned i = md.n - 1; i < n; i++)
			seg_retire(e, run[i]);
		atomic_fetch_add_explicit(&e->n_seg_merged, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->n_seg_evicted, n - md.n, memory_order_relaxed);
		seg_pass_end(e, w, copy_ns, copy_from);
		for (unsigned i = md.n - 1; i < n; i++)
			reserve_give(e, run[i], got, &owed);
		return SEG_MERGE_DONE;
	}
}
