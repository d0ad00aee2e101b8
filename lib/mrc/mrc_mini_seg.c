/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A miniature cache's segments and item records: the free pools, the
 * memory a segment holds (its units and what is past its end) and the
 * TTL chains' links, which both the cache (mrc_mini.c) and its eviction
 * (mrc_evict.c) take and give back through, as lib/seg's seg_segment.c is
 * for the server's heap; and the random numbers both draw.
 */
#include "mrc/mrc_private.h"

uint32_t
mini_pool_take(struct mini_pool *p)
{
	uint32_t i = p->free;

	if (i != MRC_NONE)
		p->free = p->item[i].next;
	else if (p->used < p->n)
		i = p->used++;
	else
		return MRC_NONE;
	p->nfree--;
	return i;
}

void
mini_pool_put(struct mini_pool *p, uint32_t i)
{
	p->item[i].next = p->free;
	p->free = i;
	p->nfree++;
}

uint32_t
mini_pop_free(struct mini *c)
{
	uint32_t s = c->free_seg;

	if (c->nfree <= 0)
		return MRC_NONE;
	if (s != MRC_NONE) {
		c->free_seg = c->seg[s].next;
		c->nfree--;
	} else if (c->fresh < c->usable) {
		s = c->fresh++;
		c->nfree--;
	}
	return s;
}

uint64_t
mini_unit(const struct mini_seg *h)
{
	return h->cap / h->units;
}

uint64_t
mini_rand(struct mini *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

/* Adds `segments` (a fraction, either sign) to what the cache owes,
 * taking a free segment for each whole one owed and giving one back for
 * each whole one repaid. */
static void
owe(struct mini *c, double segments)
{
	c->owed += segments;
	for (; c->owed >= 1.0 - 1e-9; c->owed -= 1.0)
		c->nfree--;
	for (; c->owed < -1e-9; c->owed += 1.0)
		c->nfree++;
}

uint32_t
mini_settle(struct mini *c, uint32_t seg)
{
	struct mini_seg *h = &c->seg[seg];
	const uint64_t unit = mini_unit(h) ? mini_unit(h) : 1;
	const uint64_t want = h->used / unit, was_over = h->over;
	uint32_t extra = 0;

	if (h->used <= h->cap)
		return 0;
	if (want > h->units) {
		extra = (uint32_t)(want - h->units);
		h->units = (uint32_t)want;
		h->cap = unit * want;
		c->nfree -= extra;
	}
	/* (again after more went in: only the difference is owed) */
	h->over = h->used - h->cap;
	owe(c, ((double)h->over - (double)was_over) / (double)unit);
	return extra;
}

void
mini_repay(struct mini *c, uint32_t seg)
{
	const struct mini_seg *h = &c->seg[seg];

	c->nfree += h->units;
	if (h->over != 0)
		owe(c, -(double)h->over / (double)mini_unit(h));
}

void
mini_chain_remove(struct mini *c, uint32_t seg)
{
	struct mini_seg *s = &c->seg[seg];
	struct mini_chain *ch = &c->chains[s->chain];

	if (s->prev != MRC_NONE)
		c->seg[s->prev].next = s->next;
	else
		ch->head = s->next;
	if (s->next != MRC_NONE)
		c->seg[s->next].prev = s->prev;
	else
		ch->tail = s->prev;
	if (ch->open == seg)
		ch->open = MRC_NONE;
	if (ch->merge_next == seg)
		ch->merge_next = MRC_NONE;
	if (ch->sparse_next == seg)
		ch->sparse_next = MRC_NONE;
	if (ch->head == MRC_NONE) {
		c->chain_of[ch->tb] = MINI_NO_CHAIN;
		ch->tb = MINI_NO_CHAIN;
		ch->head = c->free_chain;
		c->free_chain = s->chain;
	}
}

void
mini_free_seg(struct mini *c, struct mrc_key *keys, uint32_t seg)
{
	struct mini_seg *s = &c->seg[seg];

	for (uint32_t i = s->head; i != MRC_NONE;) {
		struct mini_item *it = &c->item[i];
		const uint32_t next = it->next;

		if (it->live)
			keys[it->key].loc[c->idx] = MRC_NONE;
		mini_pool_put(c->pool, i);
		i = next;
	}
	mini_chain_remove(c, seg);
	mini_repay(c, seg);
	*s = (struct mini_seg){ .state = MINI_FREE, .next = c->free_seg };
	c->free_seg = seg;
}
