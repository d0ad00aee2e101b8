/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Merge eviction's survival rule, in one place for the two that apply it:
 * lib/seg's merge (seg_merge.c) and lib/mrc's miniature caches, which must
 * model the server's policy exactly (at sampling rate 1.0 they agree with
 * it). Given a run's live bytes by read frequency, it picks which items
 * survive: those read more often than `cutoff`, and of those read exactly
 * `cutoff` times the first ones, up to `at_cutoff` bytes; so the most read
 * items fill the destinations, not the first read items in offset order.
 * And what a survivor's count becomes (seg_merge_freq_after).
 * Unread items survive only when fewer than the destinations' worth were
 * read, and none from a run nobody read. With it, how reads are counted
 * (SEG_FREQ_EXACT), which the rule ranks items by.
 */
#ifndef SEGCACHED_SEG_MERGE_CUT_H
#define SEGCACHED_SEG_MERGE_CUT_H

#include <stdint.h>

/* Read frequencies counted per item (lib/seg keeps 8 bits in a slot). */
#define SEG_FREQ_LEVELS 256u
/* Reads are counted one by one below this frequency; from it on, each
 * with probability 1/f, up to SEG_FREQ_LEVELS - 1 (an approximate
 * logarithmic counter, so that hot keys stop writing their slot's cache
 * line): lib/seg's seg_bump_freq, and lib/mrc's model of it. */
#define SEG_FREQ_EXACT 4u
/* Which chain a merge pass takes (lib/seg's sparsest_chain, and the
 * miniature caches' model of it): runs whose live bytes per 1024 of
 * segment differ by less than this are equally dense (merged destinations
 * and segments written whole are 93% to 100% live, by how their last item
 * fit), and the one written longest ago goes first. */
#define SEG_MERGE_DENSITY_BAND 64u

struct seg_merge_cut {
	unsigned cutoff;
	uint64_t at_cutoff;
	uint64_t read_bytes; /* live bytes read at least once (all live bytes when
			      * they fit): 0 = nothing survives */
};

/* A survivor's read count in its destination: halved, so that counts age
 * and a key that was hot long ago yields to those read now, but rounded
 * up, so that an item read since it was written stays above the unread
 * ones until a merge finds it unread (1 stays 1). Halving to 0 made every
 * item read once, at each of its merges, as evictable as a new unread
 * one: on ~1 KB values, zipf 0.9, at -m 32 -t 1 it missed 0.4155 against
 * memcached's 0.4090, rounded up 0.4029, and where the popular keys
 * changed halfway through, 0.4098 in the second half against 0.4219 and
 * memcached's 0.4173 (issue 36, docs/bench/journal/protocol-replay.md). */
static inline unsigned
seg_merge_freq_after(unsigned freq)
{
	return (freq + 1) >> 1;
}

/* The cut that keeps about `keep` of the bytes counted in bytes[freq]. */
static inline struct seg_merge_cut
seg_merge_cut_pick(const uint64_t bytes[SEG_FREQ_LEVELS], uint64_t keep)
{
	struct seg_merge_cut cut = { 1, UINT64_MAX, 0 };
	uint64_t above = 0;

	for (unsigned f = 1; f < SEG_FREQ_LEVELS; f++)
		cut.read_bytes += bytes[f];
	/* A run with nothing read keeps nothing (and its chain turns cold). */
	if (cut.read_bytes == 0)
		return cut;
	/* Else the destinations fill: the most read first, then, when fewer
	 * than their worth were read, unread items in run order (a
	 * destination a twentieth full wasted the rest of its segment, and a
	 * chain of such destinations most of the heap). */
	cut.cutoff = 0;
	for (unsigned f = SEG_FREQ_LEVELS; f-- > 0;) {
		if (above + bytes[f] > keep) {
			cut.cutoff = f;
			cut.at_cutoff = keep - above;
			break;
		}
		above += bytes[f];
	}
	return cut;
}

#endif /* SEGCACHED_SEG_MERGE_CUT_H */
