/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The sample: the keys whose sampling hash is below a threshold (spatial
 * sampling, so every request of a sampled key is seen), at most max_keys
 * of them. SHARDS' fixed-size variant: when a new key finds the sample
 * full, the threshold drops to the largest hashes held, whose keys leave
 * (here about 1/64 of the sample at a time, found by a histogram, so a
 * step costs one pass over the keys per max_keys/64 new keys rather than
 * a priority queue's upkeep per key). The rate is threshold / 2^32.
 */
#include <stdlib.h>
#include <string.h>

#include "mrc/mrc_private.h"

int
mrc_sampler_init(struct mrc_sampler *s, uint32_t max_keys, double max_rate)
{
	uint32_t slots = 1;

	memset(s, 0, sizeof(*s));
	while (slots < 2 * max_keys)
		slots <<= 1;
	s->threshold = max_rate >= 1.0 ? MRC_HASH_SPACE
				       : (uint64_t)((double)MRC_HASH_SPACE * max_rate) + 1;
	s->start_threshold = s->threshold;
	s->max_keys = max_keys;
	s->index_mask = slots - 1;
	/* calloc'd and handed out from the bottom up (s->used), never
	 * written ahead: pages of key records the sample has not reached
	 * stay untouched zero pages, out of the server's RSS, so a floor of
	 * keys (mrc.c) costs memory only as the sample fills. The index
	 * holds id + 1 (0: none) for the same reason. */
	s->index = calloc(slots, sizeof(*s->index));
	s->keys = calloc(max_keys, sizeof(*s->keys));
	if (!s->index || !s->keys) {
		mrc_sampler_fini(s);
		return -1;
	}
	s->free = MRC_NONE;
	return 0;
}

void
mrc_sampler_fini(struct mrc_sampler *s)
{
	free(s->index);
	free(s->keys);
	s->index = NULL;
	s->keys = NULL;
}

static bool
same_key(const struct mrc_key *k, const struct engine_access *a)
{
	const uint32_t n = a->klen < MRC_KEY_PREFIX ? a->klen : MRC_KEY_PREFIX;

	/* Keys alike in their first MRC_KEY_PREFIX bytes, length and
	 * 32-bit hash count as one: rare enough not to matter to a curve. */
	return k->hash == a->sample_hash && k->klen == a->klen && memcmp(k->key, a->key, n) == 0;
}

uint32_t
mrc_sampler_find(const struct mrc_sampler *s, const struct engine_access *a)
{
	for (uint32_t i = s->index[a->sample_hash & s->index_mask] - 1; i != MRC_NONE;
	     i = s->keys[i].next)
		if (same_key(&s->keys[i], a))
			return i;
	return MRC_NONE;
}

uint32_t
mrc_sampler_add(struct mrc_sampler *s, const struct engine_access *a)
{
	const uint32_t slot = a->sample_hash & s->index_mask;
	uint32_t id = s->free;
	struct mrc_key *k;

	if (id != MRC_NONE)
		s->free = s->keys[id].next;
	else if (s->used < s->max_keys)
		id = s->used++;
	else
		return MRC_NONE;
	k = &s->keys[id];
	memset(k, 0, sizeof(*k));
	k->hash = a->sample_hash;
	k->klen = a->klen;
	memcpy(k->key, a->key, a->klen < MRC_KEY_PREFIX ? a->klen : MRC_KEY_PREFIX);
	k->first_seen = a->now;
	k->ttl = MRC_TTL_UNKNOWN;
	memset(k->loc, 0xff, sizeof(k->loc));
	k->next = s->index[slot] - 1;
	s->index[slot] = id + 1;
	s->nkeys++;
	return id;
}

uint64_t
mrc_sampler_next_threshold(const struct mrc_sampler *s)
{
	enum { BINS = 256 };
	uint32_t bins[BINS] = { 0 };
	uint32_t want = s->nkeys / 64 > 0 ? s->nkeys / 64 : 1;
	uint64_t lo = 0, width = s->threshold;

	/* Narrow down [lo, lo + width) to the bin where the top `want`
	 * keys begin, twice (256 x 256 bins), then cut there. */
	for (int pass = 0; pass < 2 && width >= BINS; pass++) {
		uint32_t above = 0;
		const uint64_t bw = width / BINS;

		memset(bins, 0, sizeof(bins));
		for (uint32_t i = 0; i < s->used; i++) {
			const struct mrc_key *k = &s->keys[i];

			if (k->klen && k->hash >= lo && k->hash < lo + width) {
				uint64_t b = (k->hash - lo) / bw;

				bins[b < BINS ? b : BINS - 1]++;
			}
		}
		for (unsigned b = BINS; b-- > 0;) {
			if (above + bins[b] >= want || b == 0) {
				want -= above; /* the next pass finds the rest in bin b */
				lo += (uint64_t)b * bw;
				width = b == BINS - 1 ? width - (uint64_t)b * bw : bw;
				break;
			}
			above += bins[b];
		}
	}
	/* Below the cut: at least one key leaves. */
	return lo > 0 ? lo : 1;
}

void
mrc_sampler_remove(struct mrc_sampler *s, uint32_t id)
{
	struct mrc_key *k = &s->keys[id];
	uint32_t *head = &s->index[k->hash & s->index_mask];

	/* (the index holds id + 1: MRC_NONE + 1 wraps to 0, none) */
	if (*head - 1 == id) {
		*head = k->next + 1;
	} else {
		uint32_t i = *head - 1;

		while (s->keys[i].next != id)
			i = s->keys[i].next;
		s->keys[i].next = k->next;
	}
	k->klen = 0;
	k->next = s->free;
	s->free = id;
	s->nkeys--;
}
