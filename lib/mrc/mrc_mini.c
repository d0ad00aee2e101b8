/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A miniature cache: lib/seg's layout on metadata only. As many segments
 * as the server would have at the modelled size, each holding
 * seg_size x rate bytes of sampled items (an item lies whole in the
 * segment it starts in, and what it takes past the end is memory the
 * cache owes, mini_settle: so bytes are neither lost nor gained at small
 * scale, where items can be larger than segments); items appended to the open segment of
 * their TTL bucket's chain; expired segments freed from the chain heads;
 * a free segment found, when none is left, by expiring and then by the
 * eviction policy (mrc_evict.c). Requests are replayed as the server saw
 * them: a get that the server answered and the miniature cache does not
 * hold is a miss here, and fills the item as the client would.
 */
#include <stdlib.h>
#include <string.h>

#include "mrc/mrc_private.h"
#include "seg/seg_merge_cut.h"
#include "seg/seg_ttl_bucket.h"

_Static_assert(MINI_TTL_BUCKETS == SEG_TTL_BUCKETS, "the miniature caches' TTL buckets are the server's");

unsigned
mini_ttl_bucket(int64_t exp, int64_t now)
{
	if (exp == 0)
		return MINI_TTL_NEVER;
	return seg_ttl_bucket(exp > now ? exp - now : 0).tb; /* as seg_ttl_place() */
}

int
mini_init(struct mini *c, unsigned idx, uint64_t bytes, uint32_t nseg, uint32_t seg_size,
	  struct mini_pool *pool, enum engine_eviction ev)
{
	memset(c, 0, sizeof(*c));
	c->idx = idx;
	c->bytes = bytes;
	c->nseg = nseg < 2 ? 2 : nseg;
	c->seg_bytes_full = seg_size;
	c->eviction = ev;
	c->rng = 0x9e3779b97f4a7c15ull ^ idx;
	/* lib/seg keeps one segment aside as the merge destination, and
	 * 1/64 of the heap (at most 64 segments, none under 64) free ahead
	 * of the writers (seg_engine.c): neither holds items. */
	c->usable = c->nseg - (ev == ENGINE_EVICT_MERGE ? 1 : 0);
	c->pool_low = c->nseg / 64 > 64 ? 64 : c->nseg / 64;
	c->nchains = c->nseg < MINI_TTL_CHAINS ? c->nseg : MINI_TTL_CHAINS;
	c->open_budget = c->nseg / 4 < 2 ? 2 : c->nseg / 4 > MINI_OPEN_RING_MAX
						       ? MINI_OPEN_RING_MAX : c->nseg / 4;
	for (unsigned i = 0; i < MINI_OPEN_RING_MAX; i++)
		c->ring[i] = MRC_NONE;
	c->pool = pool;
	c->item = pool->item;
	c->seg = calloc(c->nseg, sizeof(*c->seg));
	c->chains = calloc(c->nchains, sizeof(*c->chains));
	if (!c->seg || !c->chains) {
		mini_fini(c);
		return -1;
	}
	/* Free: the list is empty and every segment is fresh (zeroed:
	 * MINI_FREE), handed out in index order as lib/seg's pool would. */
	c->free_seg = MRC_NONE;
	c->fresh = 0;
	c->nfree = c->usable;
	for (unsigned t = 0; t < MINI_TTL_CHAINS; t++)
		c->chain_of[t] = MINI_NO_CHAIN;
	c->free_chain = MRC_NONE;
	for (uint32_t i = c->nchains; i-- > 0;) {
		c->chains[i].tb = MINI_NO_CHAIN;
		c->chains[i].head = c->free_chain;
		c->free_chain = i;
	}
	return 0;
}

void
mini_fini(struct mini *c)
{
	free(c->seg);
	free(c->chains);
	c->seg = NULL;
	c->item = NULL;
	c->chains = NULL;
}

/* The chain of TTL bucket tb, taken from the pool when it has none. */
static uint32_t
chain_get(struct mini *c, unsigned tb)
{
	uint32_t ch = c->chain_of[tb];

	if (ch != MINI_NO_CHAIN)
		return ch;
	ch = c->free_chain;
	if (ch == MRC_NONE)
		return MRC_NONE;
	c->free_chain = c->chains[ch].head;
	c->chains[ch] = (struct mini_chain){ .head = MRC_NONE, .tail = MRC_NONE,
					     .open = MRC_NONE, .merge_next = MRC_NONE,
					     .sparse_next = MRC_NONE, .tb = (uint16_t)tb };
	c->chain_of[tb] = (uint16_t)ch;
	return ch;
}

void
mini_expire(struct mini *c, struct mrc_key *keys, int64_t now)
{
	for (uint32_t ch = 0; ch < c->nchains; ch++) {
		while (c->chains[ch].tb != MINI_NO_CHAIN && c->chains[ch].tb != MINI_TTL_NEVER) {
			const uint32_t head = c->chains[ch].head;

			if (head == MRC_NONE || c->seg[head].exp_max == 0 ||
			    c->seg[head].exp_max > now)
				break;
			mini_free_seg(c, keys, head);
		}
	}
}

/* A free segment: from the free ones, else by expiring, else by evicting
 * (seg_evict_for). MRC_NONE when none can be had (eviction "none"). */
static uint32_t
acquire(struct mini *c, struct mrc_key *keys, int64_t now)
{
	uint32_t s = mini_pop_free(c);

	if (s != MRC_NONE)
		return s;
	mini_expire(c, keys, now);
	s = mini_pop_free(c);
	while (s == MRC_NONE && mini_evict(c, keys, now))
		s = mini_pop_free(c);
	return s;
}

/* Where an item goes, as seg_ttl_place(): its TTL bucket, the grid of
 * the bucket's segments (unit, exp_base one unit below, as a shared
 * segment's) and its expiry, capped at what the grid reaches. */
struct place {
	unsigned tb;
	uint8_t unit;
	int64_t exp_base, exp;
};

static struct place
place_of(int64_t exp, int64_t now)
{
	struct place p = { .tb = MINI_TTL_NEVER, .exp_base = MINI_EXP_NEVER };
	struct seg_ttl_bucket b;
	int64_t base, cap;

	if (exp == 0)
		return p;
	b = seg_ttl_bucket(exp > now ? exp - now : 0);
	p.tb = b.tb;
	p.unit = b.unit;
	base = (now + b.lo) & ~(((int64_t)1 << p.unit) - 1);
	cap = base + ((int64_t)(MINI_EXP_DELTA_MAX - 1) << p.unit);
	p.exp = exp > cap ? cap : exp;
	p.exp_base = base - ((int64_t)1 << p.unit);
	return p;
}

/* The item's expiry in open segment s, on s's grid (rounded down, as
 * lib/seg stores it), or -1 when s's grid does not hold it. */
static int64_t
fit(const struct mini *c, uint32_t s, const struct place *p)
{
	const struct mini_seg *h = &c->seg[s];
	int64_t dd;

	if (p->tb == MINI_TTL_NEVER || h->exp_base == MINI_EXP_NEVER)
		return p->tb == MINI_TTL_NEVER && h->exp_base == MINI_EXP_NEVER ? 0 : -1;
	if (h->unit > p->unit)
		return -1;
	dd = (p->exp - h->exp_base) >> h->unit;
	if (dd < 0 || dd > MINI_EXP_DELTA_MAX)
		return -1;
	return h->exp_base + (dd << h->unit);
}

static bool
ring_live(const struct mini *c, unsigned i)
{
	const uint32_t s = c->ring[i];

	return s != MRC_NONE && c->seg[s].state == MINI_OPEN && c->seg[s].seq == c->ring_seq[i];
}

static void
seal(struct mini *c, uint32_t s)
{
	c->seg[s].state = MINI_SEALED;
	if (c->chains[c->seg[s].chain].open == s)
		c->chains[c->seg[s].chain].open = MRC_NONE;
}

/* A new open segment joins the ring in place of one no longer open, or
 * else of the oldest, which is sealed (seg_append.c ring_add). */
static void
ring_add(struct mini *c, uint32_t s)
{
	unsigned at = UINT32_MAX;

	for (unsigned i = 0; i < c->open_budget && at == UINT32_MAX; i++)
		if (!ring_live(c, i))
			at = i;
	if (at == UINT32_MAX) {
		at = c->ring_next;
		c->ring_next = (c->ring_next + 1) % c->open_budget;
		seal(c, c->ring[at]);
	}
	c->ring[at] = s;
	c->ring_seq[at] = c->seg[s].seq;
}

/* With every open segment of the budget in use, another bucket's whose
 * grid holds the item, else (expiring items) the one whose grid reaches
 * furthest towards it, the item's life cut there (seg_append.c
 * borrow_shared). *exp is the item's expiry there. */
static uint32_t
borrow(const struct mini *c, const struct place *p, int64_t *exp)
{
	uint32_t best = MRC_NONE;
	int64_t best_end = 0;

	for (unsigned i = 0; i < c->open_budget; i++)
		if (!ring_live(c, i))
			return MRC_NONE;
	for (unsigned i = 0; i < c->open_budget; i++) {
		const uint32_t s = c->ring[i];

		if (c->seg[s].used < c->seg[s].cap && (*exp = fit(c, s, p)) >= 0)
			return s;
	}
	if (p->tb == MINI_TTL_NEVER)
		return MRC_NONE;
	for (unsigned i = 0; i < c->open_budget; i++) {
		const struct mini_seg *h = &c->seg[c->ring[i]];
		int64_t end;

		if (h->used >= h->cap || h->exp_base == MINI_EXP_NEVER || h->unit > p->unit ||
		    h->exp_base > p->exp)
			continue;
		end = h->exp_base + ((int64_t)MINI_EXP_DELTA_MAX << h->unit);
		if (end > best_end) {
			best_end = end;
			best = c->ring[i];
		}
	}
	if (best != MRC_NONE) {
		struct place cut = *p;

		cut.exp = best_end < p->exp ? best_end : p->exp;
		*exp = fit(c, best, &cut);
		if (*exp < 0)
			best = MRC_NONE;
	}
	return best;
}

/* Opens a segment at the tail of p's chain, of the size that the rate
 * gives now. */
static uint32_t
open_seg(struct mini *c, struct mrc_key *keys, const struct place *p, int64_t now, double rate)
{
	uint32_t s = acquire(c, keys, now), ch;
	struct mini_seg *h;
	struct mini_chain *chain;

	if (s == MRC_NONE)
		return MRC_NONE;
	/* (evicting may have freed the chain: look it up afterwards) */
	ch = chain_get(c, p->tb);
	if (ch == MRC_NONE) {
		c->seg[s] = (struct mini_seg){ .state = MINI_FREE, .next = c->free_seg };
		c->free_seg = s;
		c->nfree++;
		return MRC_NONE;
	}
	chain = &c->chains[ch];
	h = &c->seg[s];
	*h = (struct mini_seg){ .head = MRC_NONE, .tail = MRC_NONE, .prev = chain->tail,
				.next = MRC_NONE, .seq = ++c->seq, .touched = c->seq, .state = MINI_OPEN, .units = 1,
				.exp_base = p->exp_base, .unit = p->unit, .chain = (uint16_t)ch };
	h->cap = (uint64_t)((double)c->seg_bytes_full * rate + 0.5);
	if (h->cap == 0)
		h->cap = 1;
	if (chain->tail != MRC_NONE)
		c->seg[chain->tail].next = s;
	else
		chain->head = s;
	chain->tail = s;
	chain->open = s;
	ring_add(c, s);
	return s;
}

/* Seals the chain's open segment when it is full; the memory it holds
 * past its end is taken (mini_settle). */
static void
seal_if_full(struct mini *c, uint32_t s)
{
	if (c->seg[s].used < c->seg[s].cap)
		return;
	seal(c, s);
	mini_settle(c, s);
}

/* The records of dead items (replaced, deleted, dropped from the sample)
 * go back: the segments keep their bytes (used, live), so what eviction
 * and expiry see does not change, and a cache needs records for live
 * items only. */
uint32_t
mini_collect_dead(struct mini *c)
{
	uint32_t freed = 0;

	for (uint32_t s = 0; s < c->nseg; s++) {
		struct mini_seg *h = &c->seg[s];
		uint32_t *link = &h->head, last = MRC_NONE;

		if (h->state == MINI_FREE)
			continue;
		while (*link != MRC_NONE) {
			const uint32_t i = *link;
			struct mini_item *it = &c->item[i];

			if (it->live) {
				last = i;
				link = &it->next;
				continue;
			}
			*link = it->next;
			mini_pool_put(c->pool, i);
			freed++;
		}
		h->tail = last;
	}
	return freed;
}

/* Appends an item for key id (seg_reserve: its bucket's open segment,
 * else a borrowed one, else a new one); no-op when no room can be made. */
static void
insert(struct mini *c, struct mrc_key *keys, uint32_t id, uint32_t size, int64_t exp,
       int64_t now, double rate)
{
	const struct place p = place_of(exp, now);
	uint32_t s = MRC_NONE, ch, rec;
	int64_t item_exp = 0;
	struct mini_item *it;

	/* An item larger than the whole cache at this rate: never held. */
	if ((double)size > (double)c->usable * (double)c->seg_bytes_full * rate)
		return;
	for (unsigned tries = 0; tries < 64 && s == MRC_NONE; tries++) {
		ch = c->chain_of[p.tb];
		s = ch != MINI_NO_CHAIN ? c->chains[ch].open : MRC_NONE;
		if (s != MRC_NONE) {
			item_exp = fit(c, s, &p);
			if (c->seg[s].used < c->seg[s].cap && item_exp >= 0)
				break;
			/* full, or the item is past its window */
			if (c->seg[s].used >= c->seg[s].cap)
				seal_if_full(c, s);
			else
				seal(c, s);
			s = MRC_NONE;
			continue;
		}
		s = borrow(c, &p, &item_exp);
		if (s != MRC_NONE)
			break;
		s = open_seg(c, keys, &p, now, rate);
		if (s == MRC_NONE)
			return;
		item_exp = fit(c, s, &p);
		break;
	}
	if (s == MRC_NONE)
		return;
	/* mrc_access() leaves a free record for each cache before it comes
	 * here (make_records: collecting dead ones, shedding keys). */
	rec = mini_pool_take(c->pool);
	if (rec == MRC_NONE)
		return;
	it = &c->item[rec];
	*it = (struct mini_item){ .key = id, .size = size, .next = MRC_NONE, .seg = s,
				  .exp = item_exp <= 0 ? 0 : item_exp > UINT32_MAX ? UINT32_MAX
										: (uint32_t)item_exp,
				  .live = true };
	if (c->seg[s].tail != MRC_NONE)
		c->item[c->seg[s].tail].next = rec;
	else
		c->seg[s].head = rec;
	c->seg[s].tail = rec;
	c->seg[s].used += size;
	c->seg[s].live += size;
	if (it->exp > c->seg[s].exp_max) /* (a chain's items all expire, or none does) */
		c->seg[s].exp_max = it->exp;
	keys[id].loc[c->idx] = rec;
	seal_if_full(c, s);
	/* What it took past the end, paid now (as lib/seg evicts before it
	 * writes), with a bound: a pass can keep as much as it frees. */
	for (unsigned steps = 0; c->nfree < 0 && steps < 4 * c->nseg; steps++)
		if (!mini_evict(c, keys, now))
			break;
}

/* Key id's item is no longer live (replaced, deleted, expired). */
static void
remove_item(struct mini *c, struct mrc_key *keys, uint32_t id)
{
	const uint32_t rec = keys[id].loc[c->idx];

	if (rec == MRC_NONE)
		return;
	c->item[rec].live = false;
	c->seg[c->item[rec].seg].live -= c->item[rec].size;
	keys[id].loc[c->idx] = MRC_NONE;
}

void
mini_rescale(struct mini *c, double factor)
{
	for (uint32_t s = 0; s < c->nseg; s++) {
		struct mini_seg *h = &c->seg[s];

		if (h->state == MINI_FREE)
			continue;
		h->cap = (uint64_t)((double)h->cap * factor + 0.5);
		if (h->cap < h->units)
			h->cap = h->units;
		h->over = (uint64_t)((double)h->over * factor + 0.5);
		/* Dead copies shrink too: in expectation the same share of
		 * them was the leaving keys' (whose live items mini_drop takes
		 * out exactly). Left whole, they filled the segments more at
		 * every step down, and the cache held less than its size. */
		if (h->used > h->live)
			h->used = h->live + (uint64_t)((double)(h->used - h->live) * factor + 0.5);
	}
	for (uint32_t ch = 0; ch < c->nchains; ch++)
		c->chains[ch].unread = (uint64_t)((double)c->chains[ch].unread * factor);
}

void
mini_drop(struct mini *c, struct mrc_key *keys, uint32_t id)
{
	const uint32_t rec = keys[id].loc[c->idx];

	/* At the new rate its segment never held it: no hole is left (a
	 * hole would look like a dead copy, and draw merge passes). */
	if (rec != MRC_NONE) {
		struct mini_seg *h = &c->seg[c->item[rec].seg];

		h->used -= h->used > c->item[rec].size ? c->item[rec].size : h->used;
	}
	remove_item(c, keys, id);
}

/* seg_bump_freq(): exact below SEG_FREQ_EXACT, then with probability
 * 1/freq, saturating. */
static void
bump_freq(struct mini *c, struct mini_item *it)
{
	if (it->freq == UINT8_MAX)
		return;
	if (it->freq >= SEG_FREQ_EXACT && (((mini_rand(c) >> 32) * it->freq) >> 32) != 0)
		return;
	it->freq++;
}

/* The expiry a client's refill of key k gives it now. */
static int64_t
refill_expiry(const struct mrc_key *k, const struct engine_access *a)
{
	if (k->ttl == MRC_TTL_UNKNOWN)
		return a->expires_at;
	return k->ttl == 0 ? 0 : a->now + (int64_t)k->ttl;
}

void
mini_access(struct mini *c, struct mrc_key *keys, uint32_t id, const struct engine_access *a,
	    double rate)
{
	uint32_t rec = keys[id].loc[c->idx];

	switch (a->op) {
	case ENGINE_ACCESS_GET:
		c->gets++;
		if (rec != MRC_NONE && c->item[rec].exp != 0 && c->item[rec].exp <= a->now) {
			remove_item(c, keys, id);
			rec = MRC_NONE;
		}
		if (rec != MRC_NONE) {
			bump_freq(c, &c->item[rec]);
			return;
		}
		c->misses++;
		/* The server had it: the client of a cache this size would
		 * have missed and filled it again, with the TTL it set the key
		 * with (what is left of the server's copy's would put the item
		 * in a shorter TTL bucket than the server's, and the refills of
		 * one TTL spread over a chain per second of age: a dozen
		 * extra chains of nearly empty segments in a 59-segment cache). */
		if (a->hit)
			insert(c, keys, id, a->size, refill_expiry(&keys[id], a), a->now, rate);
		return;
	case ENGINE_ACCESS_SET:
		remove_item(c, keys, id);
		insert(c, keys, id, a->size, a->expires_at, a->now, rate);
		return;
	case ENGINE_ACCESS_DELETE:
	default:
		remove_item(c, keys, id);
		return;
	}
}
