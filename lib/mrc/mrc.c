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

/* The most the default floor's sample may take beside -m: a 32nd of it,
 * or a 16th up to MRC_FLOOR_SMALL_BYTES (mrc.h). */
static size_t
floor_room(size_t memory)
{
	size_t small = memory / 16 < MRC_FLOOR_SMALL_BYTES ? memory / 16 : MRC_FLOOR_SMALL_BYTES;

	return memory / 32 > small ? memory / 32 : small;
}

/* The most keys whose footprint fits in `bytes` (binary search). */
static uint32_t
keys_within(const struct mrc_config *cfg, size_t bytes)
{
	uint32_t lo = 0, hi = MRC_MAX_KEYS;

	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo + 1) / 2;

		if (footprint(cfg, mid) <= bytes)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The floor (MRC_FLOOR_KEYS): the error of a sampled curve is the
 * sample's, and a sample's error depends on how many keys it holds, not on
 * -m; 1% of a small -m holds a few hundred (189 at -m 16), and such
 * curves missed the measured miss ratio by up to 0.09. Below the -m whose
 * 1% holds the floor (about 500 MiB), the default budget is raised to what
 * the floor takes, and the rate may start higher (MRC_FLOOR_MAX_RATE), as
 * a small heap's keys are few: the rate falls as the keys arrive, as ever,
 * so it stays that high only on a key space under floor / rate keys. The
 * key records and item records are touched only as the sample fills
 * (mrc_sampler_init): the floor costs memory only where it is used. */
struct mrc *
mrc_create(const struct mrc_config *cfg, char *err, size_t errlen)
{
	const size_t budget = cfg->budget ? cfg->budget : cfg->memory / 100;
	const uint32_t floor_keys = cfg->floor_keys ? cfg->floor_keys : MRC_FLOOR_KEYS;
	double max_rate = cfg->max_rate > 0 ? cfg->max_rate : MRC_MAX_RATE_DEFAULT;
	uint32_t keys = cfg->max_keys;
	struct mrc *m;

	if (!engine_eviction_of(cfg->eviction) || cfg->seg_size == 0 || cfg->nseg == 0) {
		util_fail(err, errlen, "mrc: no segment layout or eviction policy to model");
		return NULL;
	}
	if (keys == 0) {
		keys = keys_within(cfg, budget);
		if (cfg->budget == 0 && keys < floor_keys) {
			/* The default floor within floor_room() (RSS counts it:
			 * 16,384 keys took 4 MB beside -m 16's 16 MiB), never
			 * under MRC_FLOOR_MIN_KEYS; a floor given is taken whole. */
			uint32_t f = floor_keys;

			if (cfg->floor_keys == 0) {
				const uint32_t cap = keys_within(cfg, floor_room(cfg->memory));

				f = cap < f ? cap : f;
				f = f < MRC_FLOOR_MIN_KEYS ? MRC_FLOOR_MIN_KEYS : f;
			}
			if (f > keys) {
				keys = f;
				if (cfg->max_rate <= 0 && max_rate < MRC_FLOOR_MAX_RATE)
					max_rate = MRC_FLOOR_MAX_RATE;
			}
		}
	}
	if (keys < MRC_MIN_KEYS) {
		util_fail(err, errlen,
			  "mrc: %zu bytes hold a sample of %u keys, under %u: too few for a curve",
			  budget, keys, MRC_MIN_KEYS);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m || mrc_sampler_init(&m->s, keys, max_rate) != 0) {
		free(m);
		util_fail(err, errlen, "mrc: out of memory");
		return NULL;
	}
	rte_spinlock_init(&m->lock);
	m->server_memory = cfg->memory;
	m->floor_keys = floor_keys;
	m->eviction = cfg->eviction;
	m->memory = footprint(cfg, keys);
	m->last_sweep = INT64_MIN;
	m->pool.n = keys * records_per_key(cfg);
	m->pool.item = calloc(m->pool.n, sizeof(*m->pool.item));
	m->pool.free = MRC_NONE;
	m->pool.nfree = m->pool.n; /* all never handed out (mini_pool_take) */
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
	m->win_server_misses[0] *= scale;
	m->win_server_misses[1] *= scale;
	m->epoch_gets *= scale;
	m->set_bytes *= scale;
	m->noted_set_bytes *= scale;
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		m->mini[i].gets *= scale;
		m->mini[i].misses *= scale;
		for (unsigned e = 0; e < 2; e++) {
			m->mini[i].win_gets[e] *= scale;
			m->mini[i].win_misses[e] *= scale;
		}
		mini_rescale(&m->mini[i], scale);
	}
	m->s.threshold = t;
	if (m->engine)
		__atomic_store_n(&m->engine->sample_below, t, __ATOMIC_RELAXED);
	for (uint32_t id = 0; id < m->s.used; id++) {
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
	const unsigned e = m->epoch & 1;

	if (a->op == ENGINE_ACCESS_GET) {
		m->epoch_gets++;
		if (!a->hit) {
			m->server_misses++;
			m->win_server_misses[e]++;
		}
	}
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
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		struct mini *c = &m->mini[i];
		const double gets = c->gets, misses = c->misses;

		mini_access(c, m->s.keys, id, a, mrc_seg_scale(m));
		c->win_gets[e] += c->gets - gets;
		c->win_misses[e] += c->misses - misses;
	}
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

/* The recent window (mrc_curve_recent): two epochs, not a decayed
 * average, so that the window is a plain count over a known span of the
 * server's gets, which the server's own counts over the same span
 * (recent_gets, recent_misses) can be set against. Its length is fixed in
 * sampled gets: 32,768 to 65,536 of them, so that counting alone puts a
 * point within about 0.003 at any miss ratio, whatever the traffic. */
void
mrc_note_gets(struct mrc *m, uint64_t total_gets, uint64_t total_misses)
{
	rte_spinlock_lock(&m->lock);
	m->noted_gets = total_gets;
	m->noted_misses = total_misses;
	if (m->epoch_gets >= MRC_EPOCH_GETS) {
		const unsigned e = ++m->epoch & 1;

		m->epoch_gets = 0;
		m->win_server_misses[e] = 0;
		m->start_gets[e] = total_gets;
		m->start_misses[e] = total_misses;
		for (unsigned i = 0; i < MRC_SIZES; i++)
			m->mini[i].win_gets[e] = m->mini[i].win_misses[e] = 0;
	}
	rte_spinlock_unlock(&m->lock);
}

/* What m has touched: all but the key and item records above their
 * high-water marks, and of the index (calloc'd, written one random slot
 * per key) at most a page per key handed out. */
static size_t
memory_used(const struct mrc *m)
{
	const size_t index = ((size_t)m->s.index_mask + 1) * sizeof(uint32_t);
	const size_t index_used = (size_t)m->s.used * 4096 < index ? (size_t)m->s.used * 4096
								    : index;

	return m->memory - (size_t)(m->s.max_keys - m->s.used) * sizeof(struct mrc_key) -
	       (size_t)(m->pool.n - m->pool.used) * sizeof(struct mini_item) - index + index_used;
}

static unsigned
curve(struct mrc *m, uint64_t total_gets, uint64_t total_misses, bool with_misses, bool recent,
      struct mrc_point *out, struct mrc_info *info)
{
	rte_spinlock_lock(&m->lock);
	/* The window began when the last completed epoch did (0: at start). */
	const unsigned prev = (m->epoch & 1) ^ 1;
	const uint64_t from_gets = recent ? m->start_gets[prev] : 0;
	const uint64_t from_misses = recent ? m->start_misses[prev] : 0;
	const double sampled_misses =
		recent ? m->win_server_misses[0] + m->win_server_misses[1] : m->server_misses;
	/* (the window's own counts: what was given, or what was noted last) */
	const uint64_t now_gets = total_gets ? total_gets : m->noted_gets;
	const uint64_t now_misses = total_gets ? total_misses : m->noted_misses;

	/* (a sample short of the floor at its highest rate: mrc.h's rough) */
	const bool short_sample =
		m->s.nkeys < m->floor_keys && m->s.threshold == m->s.start_threshold;

	total_gets = total_gets > from_gets ? total_gets - from_gets : 0;
	total_misses = total_misses > from_misses ? total_misses - from_misses : 0;
	/* The server's misses on the keys outside the sample, at its own
	 * size, as the sample's share of them: the misses of its share of
	 * get_misses that the sampled keys did not make (negative when the
	 * sample holds more than its share). */
	const double unseen_misses =
		with_misses ? mrc_rate(m) * (double)total_misses - sampled_misses : 0;

	for (unsigned i = 0; i < MRC_SIZES; i++) {
		const struct mini *c = &m->mini[i];
		/* every cache saw the same gets; the rescaled counts are as if
		 * sampled at today's rate, so today's rate gives the share */
		const double seen = recent ? c->win_gets[0] + c->win_gets[1] : c->gets;
		double gets = seen,
		       misses = recent ? c->win_misses[0] + c->win_misses[1] : c->misses;

		if (total_gets) {
			gets += mrc_rate(m) * (double)total_gets - seen;
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
			.bytes = c->bytes, .gets = (uint64_t)(seen + 0.5),
			.misses = (uint64_t)((recent ? c->win_misses[0] + c->win_misses[1]
						     : c->misses) + 0.5),
			.miss_ratio = gets > 0 ? misses / gets : 0,
			.current = mrc_size_eighths[i] == 8,
			.segments = c->nseg,
			.rough = mrc_size_eighths[i] != 8 &&
				 (c->nseg < MRC_ROUGH_SEGMENTS ||
				  (short_sample && mrc_size_eighths[i] < 8)),
		};
	}
	if (info)
		*info = (struct mrc_info){ .rate = mrc_rate(m), .keys = m->s.nkeys,
					   .max_keys = m->s.max_keys,
					   .requests = m->requests, .memory = m->memory,
					   .memory_used = memory_used(m),
					   .recent_gets = now_gets - m->start_gets[prev],
					   .recent_misses = now_misses - m->start_misses[prev],
					   .epochs = m->epoch };
	rte_spinlock_unlock(&m->lock);
	return MRC_SIZES;
}

unsigned
mrc_curve(struct mrc *m, struct mrc_point *out, struct mrc_info *info)
{
	return curve(m, 0, 0, false, false, out, info);
}

unsigned
mrc_curve_adjusted(struct mrc *m, uint64_t total_gets, struct mrc_point *out,
		   struct mrc_info *info)
{
	return curve(m, total_gets, 0, false, false, out, info);
}

unsigned
mrc_curve_corrected(struct mrc *m, uint64_t total_gets, uint64_t total_misses,
		    struct mrc_point *out, struct mrc_info *info)
{
	return curve(m, total_gets, total_misses, true, false, out, info);
}

unsigned
mrc_curve_recent(struct mrc *m, uint64_t total_gets, uint64_t total_misses,
		 struct mrc_point *out, struct mrc_info *info)
{
	return curve(m, total_gets, total_misses, true, true, out, info);
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
	for (uint32_t id = 0; id < m->s.used; id++) {
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
