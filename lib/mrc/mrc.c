/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The live miss-ratio curve: the sample (mrc_sampler.c) and the miniature
 * caches (mrc_mini.c), one per modelled size, behind one spinlock that
 * only requests of sampled keys take; the curve and the hot keys read
 * from them. Sizes the sample from the memory budget (1% of -m).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc/mrc_private.h"
#include "util/util_err.h"

const uint16_t mrc_size_eighths[MRC_SIZES] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32 };

/* MRC_RECORDS_PER_KEY: item records per sampled key, in all the caches
 * together (the pool, mrc_private.h). A key holds a record in each cache
 * that holds its item, and dead ones wait for collection. On the
 * Twitter-shaped and zipf traces of docs/bench/journal/mrc-accuracy.md the ten caches
 * hold 4 to 5 per key; a workload that needs more (every key in every
 * cache) gets a sample of fewer keys, shed when the pool runs dry
 * (make_records). */
static uint32_t
records_per_key(const struct mrc_config *cfg)
{
	return cfg->records_per_key ? cfg->records_per_key : MRC_RECORDS_PER_KEY;
}
#define MRC_MIN_KEYS 64
#define MRC_MAX_KEYS (1u << 20)

static uint32_t
mini_nseg(const struct mrc_config *cfg, unsigned i)
{
	uint64_t n = cfg->nseg_at[i] ? cfg->nseg_at[i]
				      : ((uint64_t)cfg->nseg * mrc_size_eighths[i] + 4) / 8;

	return n < 2 ? 2 : n > (1u << 24) ? 1u << 24 : (uint32_t)n;
}

/* The bytes a sample of `keys` keys takes with its caches. */
static size_t
footprint(const struct mrc_config *cfg, uint32_t keys)
{
	uint32_t slots = 1;
	size_t b = sizeof(struct mrc);
	const size_t items = (size_t)keys * records_per_key(cfg);

	while (slots < 2 * keys)
		slots <<= 1;
	b += (size_t)keys * sizeof(struct mrc_key) + (size_t)slots * sizeof(uint32_t);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		const uint32_t n = mini_nseg(cfg, i);

		b += (size_t)n * sizeof(struct mini_seg) +
		     (size_t)(n < MINI_TTL_CHAINS ? n : MINI_TTL_CHAINS) * sizeof(struct mini_chain);
	}
	return b + items * sizeof(struct mini_item);
}

struct mrc *
mrc_create(const struct mrc_config *cfg, char *err, size_t errlen)
{
	const size_t budget = cfg->budget ? cfg->budget : cfg->memory / 100;
	uint32_t keys = cfg->max_keys;
	struct mrc *m;

	if (!engine_eviction_of(cfg->eviction) || cfg->seg_size == 0 || cfg->nseg == 0) {
		util_fail(err, errlen, "mrc: no segment layout or eviction policy to model");
		return NULL;
	}
	if (keys == 0) {
		/* The most keys whose footprint fits (binary search). */
		uint32_t lo = 0, hi = MRC_MAX_KEYS;

		while (lo < hi) {
			const uint32_t mid = lo + (hi - lo + 1) / 2;

			if (footprint(cfg, mid) <= budget)
				lo = mid;
			else
				hi = mid - 1;
		}
		keys = lo;
	}
	if (keys < MRC_MIN_KEYS) {
		util_fail(err, errlen,
			  "mrc: %zu bytes hold a sample of %u keys, under %u: too few for a curve",
			  budget, keys, MRC_MIN_KEYS);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m || mrc_sampler_init(&m->s, keys,
				   cfg->max_rate > 0 ? cfg->max_rate : MRC_MAX_RATE_DEFAULT) != 0) {
		free(m);
		util_fail(err, errlen, "mrc: out of memory");
		return NULL;
	}
	rte_spinlock_init(&m->lock);
	m->server_memory = cfg->memory;
	m->eviction = cfg->eviction;
	m->memory = footprint(cfg, keys);
	m->last_sweep = INT64_MIN;
	m->pool.n = keys * records_per_key(cfg);
	m->pool.item = calloc(m->pool.n, sizeof(*m->pool.item));
	m->pool.free = MRC_NONE;
	for (uint32_t i = m->pool.item ? m->pool.n : 0; i-- > 0;)
		mini_pool_put(&m->pool, i);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		if (!m->pool.item ||
		    mini_init(&m->mini[i], i, (uint64_t)cfg->memory * mrc_size_eighths[i] / 8,
			      mini_nseg(cfg, i),
			      cfg->seg_size_at[i] ? cfg->seg_size_at[i] : cfg->seg_size,
			      &m->pool, cfg->eviction) != 0) {
			mrc_destroy(m);
			util_fail(err, errlen, "mrc: out of memory");
			return NULL;
		}
	return m;
}

void
mrc_destroy(struct mrc *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < MRC_SIZES; i++)
		mini_fini(&m->mini[i]);
	free(m->pool.item);
	mrc_sampler_fini(&m->s);
	free(m);
}

void
mrc_attach(struct mrc *m, struct engine *e)
{
	m->engine = e;
	engine_attach_sampler(e, mrc_access, m, m->s.threshold);
}

/* The sample is full: lower the threshold and let the keys above it go,
 * from the caches too. */
static void
lower_threshold(struct mrc *m)
{
	const uint64_t t = mrc_sampler_next_threshold(&m->s);

	const double scale = (double)t / (double)m->s.threshold;

	m->server_misses *= scale;
	m->set_bytes *= scale;
	m->noted_set_bytes *= scale;
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		m->mini[i].gets *= scale;
		m->mini[i].misses *= scale;
		mini_rescale(&m->mini[i], scale);
	}
	m->s.threshold = t;
	if (m->engine)
		__atomic_store_n(&m->engine->sample_below, t, __ATOMIC_RELAXED);
	for (uint32_t id = 0; id < m->s.max_keys; id++) {
		if (m->s.keys[id].klen == 0 || m->s.keys[id].hash < t)
			continue;
		for (unsigned i = 0; i < MRC_SIZES; i++)
			mini_drop(&m->mini[i], m->s.keys, id);
		mrc_sampler_remove(&m->s, id);
	}
}

/* Once a second of the engine clock: proactive expiry and the free
 * segments kept ahead, as the server's control thread does. */
static void
tick(struct mrc *m, int64_t now)
{
	if (now <= m->last_sweep)
		return;
	m->last_sweep = now;
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		struct mini *c = &m->mini[i];
		unsigned steps = 0;

		mini_expire(c, m->s.keys, now);
		while (c->nfree < c->pool_low && steps++ < 2 * c->pool_low &&
		       mini_evict(c, m->s.keys, now))
			;
	}
}

/* A free record for every cache, as an access inserts at most one item
 * in each: dead records collected, and when live items hold the pool,
 * keys shed from the sample (their items go dead, and are collected). */
static void
make_records(struct mrc *m)
{
	while (m->pool.nfree < MRC_SIZES) {
		for (unsigned i = 0; i < MRC_SIZES; i++)
			mini_collect_dead(&m->mini[i]);
		if (m->pool.nfree >= MRC_SIZES || m->s.nkeys == 0)
			return;
		lower_threshold(m);
	}
}

void
mrc_access(void *arg, const struct engine_access *a)
{
	struct mrc *m = arg;
	uint32_t id;

	rte_spinlock_lock(&m->lock);
	/* (a request that passed the engine's check before the threshold
	 * dropped) */
	if (a->sample_hash >= m->s.threshold)
		goto out;
	tick(m, a->now);
	make_records(m);
	if (a->sample_hash >= m->s.threshold)
		goto out;
	id = mrc_sampler_find(&m->s, a);
	if (id == MRC_NONE) {
		/* A key new to the sample: room is made by lowering the
		 * threshold, which may leave this key out too. */
		while (m->s.nkeys >= m->s.max_keys && a->sample_hash < m->s.threshold)
			lower_threshold(m);
		if (a->sample_hash >= m->s.threshold)
			goto out;
		id = mrc_sampler_add(&m->s, a);
		if (id == MRC_NONE)
			goto out;
	}
	m->requests++;
	if (a->op == ENGINE_ACCESS_GET && !a->hit)
		m->server_misses++;
	m->s.keys[id].requests++;
	if (a->size)
		m->s.keys[id].size = a->size;
	if (a->op == ENGINE_ACCESS_SET) {
		m->set_bytes += a->size;
		m->s.keys[id].ttl = a->expires_at == 0 ? 0
				    : a->expires_at > a->now ? (uint32_t)RTE_MIN(a->expires_at - a->now,
										 (int64_t)UINT32_MAX - 1)
				    : 1;
	}
	for (unsigned i = 0; i < MRC_SIZES; i++)
		mini_access(&m->mini[i], m->s.keys, id, a, mrc_seg_scale(m));
out:
	rte_spinlock_unlock(&m->lock);
}

void
mrc_note_set_bytes(struct mrc *m, uint64_t total_set_bytes)
{
	/* The sample's bytes as of the same moment: counted on between two
	 * notes against a total that is not, they would run ahead of it
	 * (a share of 2 after the first second's sets). */
	rte_spinlock_lock(&m->lock);
	m->total_set_bytes = total_set_bytes;
	m->noted_set_bytes = m->set_bytes;
	rte_spinlock_unlock(&m->lock);
}

static unsigned
curve(struct mrc *m, uint64_t total_gets, uint64_t total_misses, bool with_misses,
      struct mrc_point *out, struct mrc_info *info)
{
	rte_spinlock_lock(&m->lock);
	/* The server's misses on the keys outside the sample, at its own
	 * size, as the sample's share of them: the misses of its share of
	 * get_misses that the sampled keys did not make (negative when the
	 * sample holds more than its share). */
	const double unseen_misses =
		with_misses ? mrc_rate(m) * (double)total_misses - m->server_misses : 0;

	for (unsigned i = 0; i < MRC_SIZES; i++) {
		const struct mini *c = &m->mini[i];
		/* every cache saw the same gets; the rescaled counts are as if
		 * sampled at today's rate, so today's rate gives the share */
		double gets = c->gets, misses = c->misses;

		if (total_gets) {
			gets += mrc_rate(m) * (double)total_gets - c->gets;
			/* The gets outside the sample missed as they did on the
			 * server (deletes, expiry, first requests: the hot keys
			 * SHARDS-adj leaves out miss for those at any size), and
			 * hit otherwise. */
			misses += unseen_misses;
			if (misses < 0)
				misses = 0;
			if (gets < misses)
				gets = misses;
		}
		out[i] = (struct mrc_point){
			.bytes = c->bytes, .gets = (uint64_t)(c->gets + 0.5),
			.misses = (uint64_t)(c->misses + 0.5),
			.miss_ratio = gets > 0 ? misses / gets : 0,
			.current = mrc_size_eighths[i] == 8,
		};
	}
	if (info)
		*info = (struct mrc_info){ .rate = mrc_rate(m), .keys = m->s.nkeys,
					   .max_keys = m->s.max_keys,
					   .requests = m->requests, .memory = m->memory };
	rte_spinlock_unlock(&m->lock);
	return MRC_SIZES;
}

unsigned
mrc_curve(struct mrc *m, struct mrc_point *out, struct mrc_info *info)
{
	return curve(m, 0, 0, false, out, info);
}

unsigned
mrc_curve_adjusted(struct mrc *m, uint64_t total_gets, struct mrc_point *out,
		   struct mrc_info *info)
{
	return curve(m, total_gets, 0, false, out, info);
}

unsigned
mrc_curve_corrected(struct mrc *m, uint64_t total_gets, uint64_t total_misses,
		    struct mrc_point *out, struct mrc_info *info)
{
	return curve(m, total_gets, total_misses, true, out, info);
}

static double
rate_of(const struct mrc_key *k, int64_t now)
{
	const int64_t span = now - k->first_seen;

	return (double)k->requests / (double)(span > 0 ? span : 1);
}

unsigned
mrc_hotkeys(struct mrc *m, struct mrc_hotkey *out, unsigned max, int64_t now)
{
	uint32_t top[MRC_HOTKEYS];
	unsigned n = 0;

	if (max > MRC_HOTKEYS)
		max = MRC_HOTKEYS;
	rte_spinlock_lock(&m->lock);
	/* Insertion into a sorted top-max: max is 20. */
	for (uint32_t id = 0; id < m->s.max_keys; id++) {
		const struct mrc_key *k = &m->s.keys[id];
		const double r = rate_of(k, now);
		unsigned at;

		if (k->klen == 0 || (n == max && r <= rate_of(&m->s.keys[top[n - 1]], now)))
			continue;
		at = n < max ? n++ : n - 1;
		while (at > 0 && rate_of(&m->s.keys[top[at - 1]], now) < r) {
			top[at] = top[at - 1];
			at--;
		}
		top[at] = id;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct mrc_key *k = &m->s.keys[top[i]];
		const uint32_t len = k->klen < MRC_KEY_PREFIX ? k->klen : MRC_KEY_PREFIX;

		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].key, k->key, len);
		out[i].klen = k->klen;
		out[i].size = k->size;
		out[i].requests = k->requests;
		out[i].rate = rate_of(k, now);
	}
	rte_spinlock_unlock(&m->lock);
	return n;
}
