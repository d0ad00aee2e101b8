/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A miniature cache's eviction, one step by the server's policy: merge
 * (seg_merge.c's pass on metadata: the sparsest run of a TTL chain is
 * compacted into one segment fewer, keeping its most read items and
 * halving their counts; a cold chain gives up one segment whole), FIFO
 * (the oldest segment) or random. Called by mrc_mini.c.
 */
#include <string.h>

#include "mrc/mrc_private.h"
#include "seg/seg_merge_cut.h"

#define MERGE_N 2
#define MERGE_GROW_MAX 4
#define MERGE_RUN_MAX 16
#define RUN_SCAN_MAX 32
#define FREQ_LEVELS SEG_FREQ_LEVELS

static bool
sealed(const struct mini *c, uint32_t s)
{
	return s != MRC_NONE && c->seg[s].state == MINI_SEALED;
}

/* The size of a unit of the run (its newest segments': a segment opened
 * now), for the bytes it may keep. */
static uint64_t
run_cap(const struct mini *c, const uint32_t *run, unsigned n)
{
	uint64_t cap = 0;

	for (unsigned i = 0; i < n; i++)
		cap = mini_unit(&c->seg[run[i]]) > cap ? mini_unit(&c->seg[run[i]]) : cap;
	return cap;
}


/* The units of the run's segments (one each, but for grown ones). */
static unsigned
run_units(const struct mini *c, const uint32_t *run, unsigned n)
{
	unsigned u = 0;

	for (unsigned i = 0; i < n; i++)
		u += c->seg[run[i]].units;
	return u;
}

/* The memory segment s holds: its units, and what its last item took
 * past their end (mini_settle). What its live bytes are measured
 * against: lib/seg's segments hold no more than their size, so there the
 * two are one; here a merged destination holds its run's straddling
 * items whole, and counted against its units alone it looked up to half
 * as dense again as it is (densities of 1,300 to 1,500 in 1,024 on
 * Twitter-shaped B at -m 1G), so merge passed over the chains it had
 * merged and sent its passes to the others: a chain of 40 segments fell
 * to 5 in the trace's next 100 seconds and grew back, where lib/seg's
 * chains kept their size within a few segments. */
static uint64_t
mem_held(const struct mini_seg *h)
{
	return h->cap + h->over;
}

/* The memory of the run's segments, bytes. */
static uint64_t
run_held(const struct mini *c, const uint32_t *run, unsigned n)
{
	uint64_t b = 0;

	for (unsigned i = 0; i < n; i++)
		b += mem_held(&c->seg[run[i]]);
	return b;
}

/* seg_merge.c find_sparse: a sealed segment under 3/4 live, going on
 * where the last look stopped, at most RUN_SCAN_MAX a call. */
static uint32_t
find_sparse(const struct mini *c, struct mini_chain *ch)
{
	uint32_t s = ch->sparse_next != MRC_NONE ? ch->sparse_next : ch->head;
	uint32_t found = MRC_NONE;

	for (unsigned i = 0; i < RUN_SCAN_MAX && s != MRC_NONE; i++) {
		if (sealed(c, s) && c->seg[s].live < mem_held(&c->seg[s]) / 4 * 3) {
			found = s;
			break;
		}
		s = c->seg[s].next;
	}
	ch->sparse_next = s;
	return found;
}

/* Where a pass over chain ch starts (seg_merge.c run_first): a sparse
 * segment, else the first sealed one from the merge cursor or, from_head,
 * from the head. */
static uint32_t
run_first(const struct mini *c, struct mini_chain *ch, bool from_head)
{
	uint32_t s = from_head ? MRC_NONE : find_sparse(c, ch);

	if (s != MRC_NONE)
		return s;
	s = from_head || ch->merge_next == MRC_NONE ? ch->head : ch->merge_next;
	while (s != MRC_NONE && !sealed(c, s))
		s = c->seg[s].next;
	return s;
}

static uint64_t
segs_for(uint64_t live, uint64_t cap)
{
	return live ? (live + cap - 1) / cap : 1;
}

/* The run a pass takes (seg_merge.c run_walk): run_min() sealed segments
 * and, on a warm chain, more while one segment fewer cannot hold them (up
 * to MERGE_GROW_MAX) or the next needs no further destination; the
 * growth counted in units, a grown segment as the segments it took (at
 * least two segments still: one item cannot be merged into less). */
static unsigned
run_walk1(const struct mini *c, struct mini_chain *ch, bool from_head, uint32_t *run,
	  uint64_t *live)
{
	const unsigned min = ch->cold ? 1 : MERGE_N;
	uint32_t s = run_first(c, ch, from_head);
	unsigned n = 0, u = 0;

	*live = 0;
	while (sealed(c, s) && n < MERGE_RUN_MAX) {
		const uint64_t here = c->seg[s].live, cap = mini_unit(&c->seg[s]);

		if (n >= min &&
		    (ch->cold ||
		     !((u < MERGE_GROW_MAX && *live > (uint64_t)(u - 1) * cap) ||
		       segs_for(*live + here, cap) <= segs_for(*live, cap) + c->seg[s].units - 1)))
			break;
		run[n++] = s;
		u += c->seg[s].units;
		*live += here;
		s = c->seg[s].next;
	}
	return n >= min ? n : 0;
}

/* From the cursors, else from the head (seg_merge.c claim_run). */
static unsigned
run_walk(const struct mini *c, struct mini_chain *ch, uint32_t *run, uint64_t *live)
{
	const unsigned n = run_walk1(c, ch, false, run, live);

	return n ? n : run_walk1(c, ch, true, run, live);
}

/* The chain whose run is sparsest, live bytes against the memory they
 * hold, and among runs within SEG_MERGE_DENSITY_BAND of that, the one
 * written longest ago (seg_merge.c sparsest_chain); equal ones take turns,
 * the search starting after the last chain chosen. */
static uint32_t
sparsest_chain(struct mini *c)
{
	uint32_t best = MRC_NONE, run[MERGE_RUN_MAX];
	uint64_t sparsest = UINT64_MAX, oldest = UINT64_MAX;

	for (uint32_t ch = 0; ch < c->nchains; ch++) {
		struct mini_chain *h = &c->chains[ch];
		uint64_t live;
		unsigned n;

		h->look_density = UINT64_MAX;
		if (h->tb == MINI_NO_CHAIN)
			continue;
		n = run_walk(c, h, run, &live);
		if (n == 0)
			continue;
		h->look_density = live * 1024 / run_held(c, run, n);
		h->look_touched = UINT64_MAX;
		for (unsigned i = 0; i < n; i++)
			if (c->seg[run[i]].touched < h->look_touched)
				h->look_touched = c->seg[run[i]].touched;
		if (h->look_density < sparsest)
			sparsest = h->look_density;
	}
	for (uint32_t i = 0; sparsest != UINT64_MAX && i < c->nchains; i++) {
		const uint32_t ch = (c->merge_cursor + i) % c->nchains;
		const struct mini_chain *h = &c->chains[ch];

		if (h->look_density < sparsest + SEG_MERGE_DENSITY_BAND && h->look_touched < oldest) {
			oldest = h->look_touched;
			best = ch;
		}
	}
	if (best != MRC_NONE)
		c->merge_cursor = (best + 1) % c->nchains;
	return best;
}


/* seg_merge.c merge_cutoff: which of the run's live items survive. */
static struct seg_merge_cut
merge_cut(const struct mini *c, const uint32_t *run, unsigned n, uint64_t keep, int64_t now)
{
	uint64_t bytes[FREQ_LEVELS] = { 0 }, live = 0;

	for (unsigned r = 0; r < n; r++)
		live += c->seg[run[r]].live;
	if (n > 1 && live <= keep)
		return (struct seg_merge_cut){ 0, UINT64_MAX, live };
	for (unsigned r = 0; r < n; r++)
		for (uint32_t i = c->seg[run[r]].head; i != MRC_NONE; i = c->item[i].next) {
			const struct mini_item *it = &c->item[i];

			if (it->live && !(it->exp != 0 && it->exp <= now))
				bytes[it->freq] += it->size;
		}
	return seg_merge_cut_pick(bytes, keep);
}

/* Whether an item of `size` bytes is kept where `left` bytes remain to be
 * kept: when it fits, and when it straddles the end with the odds of the
 * part that fits. seg_merge.c keeps only what fits, which at full scale
 * loses a part of one item a pass, of segments that hold thousands; at a
 * small rate a segment holds a few sampled items or less than one, where
 * that rule keeps no item larger than what is left however often it was
 * read, and keeping every straddling item keeps up to several times the
 * bytes allowed. These odds keep the bytes allowed, on average. */
static bool
fits(struct mini *c, uint64_t left, uint32_t size)
{
	if (size <= left)
		return true;
	return ((mini_rand(c) >> 32) * size >> 32) < left;
}

/* Compacts the run (`held`: its memory, run_held) into at most `max`
 * units of destinations in its place in the chain (the last one taking
 * what is past its end, mini_settle); the items that do not survive leave
 * the cache. */
static void
merge_run(struct mini *c, struct mrc_key *keys, const uint32_t *run, unsigned n,
	  unsigned max, struct seg_merge_cut cut, uint64_t cap, uint64_t held, int64_t now)
{
	const uint32_t chi = c->seg[run[0]].chain;
	struct mini_chain *ch = &c->chains[chi];
	const uint32_t prev = c->seg[run[0]].prev, next = c->seg[run[n - 1]].next;
	const uint64_t seq = c->seg[run[0]].seq;
	uint32_t kept = MRC_NONE, kept_tail = MRC_NONE, dest = MRC_NONE, last = prev;
	uint64_t used_at_cutoff = 0, kept_bytes = 0;
	unsigned ndest = 0; /* units of destinations */

	/* Sort the run's records into the kept list and the free pool. */
	for (unsigned r = 0; r < n; r++) {
		for (uint32_t i = c->seg[run[r]].head; i != MRC_NONE;) {
			struct mini_item *it = &c->item[i];
			const uint32_t nx = it->next;
			const bool expired = it->exp != 0 && it->exp <= now;
			/* (the cut bounds the bytes kept: those read more than
			 * it, and at it up to at_cutoff; a straddling item only
			 * where the pass still frees memory, or a pass could
			 * free nothing and the next halve the counts again) */
			const bool keep =
				it->live && !expired && it->freq >= cut.cutoff &&
				(it->freq > cut.cutoff ||
				 (used_at_cutoff < cut.at_cutoff &&
				  (it->size <= cut.at_cutoff - used_at_cutoff ||
				   (kept_bytes + it->size < held &&
				    fits(c, cut.at_cutoff - used_at_cutoff, it->size)))));

			if (keep) {
				kept_bytes += it->size;
				if (it->freq == cut.cutoff)
					used_at_cutoff += it->size;
				it->next = MRC_NONE;
				if (kept_tail != MRC_NONE)
					c->item[kept_tail].next = i;
				else
					kept = i;
				kept_tail = i;
			} else {
				if (it->live)
					keys[it->key].loc[c->idx] = MRC_NONE;
				mini_pool_put(c->pool, i);
			}
			i = nx;
		}
	}
	for (unsigned r = 0; r < n; r++) {
		mini_repay(c, run[r]);
		c->seg[run[r]] = (struct mini_seg){ .state = MINI_FREE, .next = c->free_seg };
		c->free_seg = run[r];
	}
	/* Destinations, linked where the run was. */
	for (uint32_t i = kept; i != MRC_NONE;) {
		struct mini_item *it = &c->item[i];
		const uint32_t nx = it->next;

		/* a full destination takes what is past its end (an item
		 * larger than a segment grows it, mrc_mini.c) */
		if (dest != MRC_NONE && c->seg[dest].used >= c->seg[dest].cap)
			ndest += mini_settle(c, dest);
		if (dest == MRC_NONE || (c->seg[dest].used >= c->seg[dest].cap && ndest < max)) {
			const uint32_t d = mini_pop_free(c);

			if (d == MRC_NONE && dest == MRC_NONE) {
				/* (the cache owes more than the run frees: what
				 * was to be kept goes too) */
				while (i != MRC_NONE) {
					const uint32_t drop = i;

					i = c->item[i].next;
					keys[c->item[drop].key].loc[c->idx] = MRC_NONE;
					mini_pool_put(c->pool, drop);
				}
				break;
			}
			if (d != MRC_NONE) {
				dest = d;
				ndest++;
				c->seg[dest] = (struct mini_seg){
					.head = MRC_NONE, .tail = MRC_NONE, .prev = last,
					.next = MRC_NONE, .seq = seq, .touched = ++c->seq,
					.cap = cap, .units = 1,
					.state = MINI_SEALED, .chain = (uint16_t)chi };
				if (last != MRC_NONE)
					c->seg[last].next = dest;
				else
					ch->head = dest;
				last = dest;
			}
			/* (else, owing, the last destination takes it too) */
		}
		it->next = MRC_NONE;
		it->seg = dest;
		it->freq = seg_merge_freq_after(it->freq);
		if (c->seg[dest].tail != MRC_NONE)
			c->item[c->seg[dest].tail].next = i;
		else
			c->seg[dest].head = i;
		c->seg[dest].tail = i;
		c->seg[dest].used += it->size;
		c->seg[dest].live += it->size;
		if (it->exp > c->seg[dest].exp_max)
			c->seg[dest].exp_max = it->exp;
		i = nx;
	}
	if (dest != MRC_NONE)
		mini_settle(c, dest);
	if (last != MRC_NONE)
		c->seg[last].next = next;
	else
		ch->head = next;
	if (next != MRC_NONE)
		c->seg[next].prev = last;
	else
		ch->tail = last;
	/* The next merge in this chain starts after the run. */
	ch->merge_next = ch->sparse_next = next;
	if (ch->head == MRC_NONE && ch->open == MRC_NONE) {
		c->chain_of[ch->tb] = MINI_NO_CHAIN;
		ch->tb = MINI_NO_CHAIN;
		ch->head = c->free_chain;
		c->free_chain = chi;
	}
}

/* seg_merge_pass(): false when no chain has a run. */
static bool
merge_pass(struct mini *c, struct mrc_key *keys, int64_t now)
{
	uint32_t run[MERGE_RUN_MAX];

	for (;;) {
		const uint32_t chi = sparsest_chain(c);
		struct mini_chain *ch;
		uint64_t live, cap, held, keep;
		unsigned n, units, max;
		struct seg_merge_cut cut;
		bool cold = false;

		if (chi == MRC_NONE)
			return false;
		ch = &c->chains[chi];
		n = run_walk(c, ch, run, &live);
		units = run_units(c, run, n);
		max = n > 1 ? units - 1 : units;
		cap = run_cap(c, run, n);
		held = run_held(c, run, n);
		/* a segment's worth less than the run's memory (a run of one,
		 * as much) */
		keep = n > 1 ? held - cap : held;
		cut = merge_cut(c, run, n, keep, now);
		if (n == 1 && cut.read_bytes > 0) {
			ch->cold = false;
			ch->unread = 0;
			continue;
		}
		if (cut.read_bytes > 0) {
			ch->unread = 0;
		} else if ((ch->unread += held) < (uint64_t)n * c->seg_bytes_full) {
			/* Nothing read, but in fewer items than a run at full
			 * scale holds: seg_merge.c's run of thousands of items
			 * with none read is a cold chain; a run of a few sampled
			 * items with none read is, at a small rate, most often
			 * chance (nearly half the passes of the 1/8x cache on
			 * zipf at 1/128). Cold when the chain's runs in a row
			 * with nothing read add up to a full-scale run's bytes,
			 * as one run does at rate 1.0; until then, unread items
			 * fill the destinations as when little was read. */
			cut = (struct seg_merge_cut){ 0, keep, 0 };
		} else {
			cold = true;
		}
		ch->cold = cold;
		merge_run(c, keys, run, n, max, cut, cap, held, now);
		return true;
	}
}

/* The oldest sealed segment (or, with none sealed, the oldest open one). */
static uint32_t
oldest(const struct mini *c)
{
	uint32_t best = MRC_NONE;

	for (int want = MINI_SEALED; best == MRC_NONE && want >= MINI_OPEN; want--)
		for (uint32_t ch = 0; ch < c->nchains; ch++) {
			uint32_t s = c->chains[ch].tb == MINI_NO_CHAIN ? MRC_NONE
								       : c->chains[ch].head;

			while (s != MRC_NONE && c->seg[s].state != want)
				s = c->seg[s].next;
			if (s != MRC_NONE && (best == MRC_NONE || c->seg[s].seq < c->seg[best].seq))
				best = s;
		}
	return best;
}

static uint32_t
random_seg(struct mini *c)
{
	const uint32_t start = (uint32_t)(mini_rand(c) % c->nseg);
	for (uint32_t i = 0; i < c->nseg; i++) {
		const uint32_t s = (start + i) % c->nseg;

		if (c->seg[s].state == MINI_SEALED)
			return s;
	}
	return oldest(c);
}

bool
mini_evict(struct mini *c, struct mrc_key *keys, int64_t now)
{
	uint32_t s;

	switch (c->eviction) {
	case ENGINE_EVICT_MERGE:
		if (merge_pass(c, keys, now))
			return true;
		s = oldest(c);
		break;
	case ENGINE_EVICT_FIFO:
		s = oldest(c);
		break;
	case ENGINE_EVICT_RANDOM:
		s = random_seg(c);
		break;
	default:
		return false;
	}
	if (s == MRC_NONE)
		return false;
	mini_free_seg(c, keys, s);
	return true;
}
