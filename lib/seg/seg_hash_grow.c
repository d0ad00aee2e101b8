/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Online growth of the hash table (linear hashing, seg_table.h): the head
 * array's reservation, splitting one chain at a time while readers go on
 * lock-free, and the chain-length sample that `stats` reports.
 *
 * A split of chain i (at the split pointer, with 2^n + i buckets in use)
 * takes i's stripe lock, then, inside one move of the stripe's seqlock:
 * writes the items whose hash bit n is set into the new chain i + 2^n
 * (its head bucket and overflow buckets the caller reserved, unreachable
 * until published), publishes the new geometry (release), then repacks
 * chain i with the items that stay and frees its emptied overflow
 * buckets. A lock-free reader that resolved its chain before the split
 * and missed an item moved away sees the move count changed and looks
 * again, resolving the new chain; a reader that finds its item in either
 * chain finds the very item (items do not move between segments here).
 * Writers resolve their chain under the stripe lock, which a split of any
 * of the stripe's chains holds, so their chain does not change under them.
 *
 * Memory: the reservation is address space only (MAP_NORESERVE); the
 * buckets in use (hash_bytes in stats) are touched pages outside the -m
 * budget, at most engine_config.hash_grow times the starting table (16
 * by default), which -m sizes at 64 bytes a KiB. In exchange the overflow
 * buckets inside the budget (segments lent to the table) shrink as chains
 * get shorter.
 */
#include <sys/mman.h>
#include <time.h>

#include <rte_common.h>

#include "seg/seg_hash.h"
#include "seg/seg_item.h"
#include "seg/seg_struct.h"
#include "seg/seg_table.h"

/* Grow while overflow buckets exceed one per GROW_LOAD_DIV head buckets:
 * with uniform hashing that is about 4.5 items a chain, most chains in
 * their head bucket. */
#define GROW_LOAD_DIV 16
#define SPLIT_ITEMS_MAX 2048u /* a longer chain is split no more */

static size_t
reserved_bytes(uint32_t max_power)
{
	return ((size_t)1 << max_power) * sizeof(struct seg_bucket);
}

/* Transparent huge pages for the buckets in use at 2^power, in whole huge
 * pages only: advised over the reservation, a 1 MiB table (-m 16) took a
 * 2 MiB huge page, half of it never written (issue 36's RSS). The rest is
 * advised as the table doubles (split_locked). */
static void
advise_in_use(const struct seg_engine *e, uint32_t power)
{
	const size_t huge = (size_t)2 << 20;
	const size_t len = reserved_bytes(power) / huge * huge;

	if (len > 0)
		madvise(e->table, len, MADV_HUGEPAGE);
}

int
seg_hash_table_init(struct seg_engine *e, uint32_t base_power, uint32_t grow_powers)
{
	const uint32_t max_power = seg_hash_max_power(base_power, grow_powers);
	void *p = mmap(NULL, reserved_bytes(max_power), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	e->table = p;
	/* Random access over the table misses the TLB on 4 KiB pages. */
	advise_in_use(e, base_power);
	e->table_mask = (1ull << base_power) - 1;
	e->geo.base_power = base_power;
	e->geo.max_power = max_power;
	atomic_store(&e->geo.geom, seg_geom_make(base_power, 0));
	return 0;
}

void
seg_hash_table_free(struct seg_engine *e)
{
	if (e->table)
		munmap(e->table, reserved_bytes(e->geo.max_power));
	e->table = NULL;
}

uint64_t
seg_hash_bytes(const struct seg_engine *e)
{
	return seg_hash_buckets(e) * sizeof(struct seg_bucket);
}

bool
seg_hash_wants_growth(const struct seg_engine *e)
{
	const uint64_t buckets = seg_hash_buckets(e);

	return buckets < 1ull << e->geo.max_power &&
	       atomic_load_explicit(&e->ovf_used, memory_order_relaxed) * GROW_LOAD_DIV > buckets;
}

void
seg_hash_ovf_used_add(struct seg_engine *e, int64_t n)
{
	atomic_fetch_add_explicit(&e->ovf_used, (uint64_t)n, memory_order_relaxed);
}

unsigned
seg_hash_split_estimate(const struct seg_engine *e)
{
	const uint64_t g = atomic_load_explicit(&e->geo.geom, memory_order_acquire);
	const struct seg_bucket *b = &e->table[seg_geom_split(g)];
	unsigned n = 0;

	/* Lock-free: a chain changing meanwhile makes this a guess, which the
	 * split checks under the lock. Bounded: links only go forward, but a
	 * bucket freed and reused meanwhile could join another chain. */
	for (;;) {
		uint64_t v = atomic_load_explicit(&b->slot[BUCKET_SLOTS - 1], memory_order_acquire);

		if (!slot_is_link(v) || n >= SPLIT_ITEMS_MAX / (BUCKET_SLOTS - 1))
			return n;
		n++;
		b = seg_hash_link_target(e, v);
	}
}

/* Lays count items out as a packed chain from head: head slots 1..7, then
 * the buckets of links (in order), slot 7 of each but the last a link.
 * Returns the buckets it used beyond the head. */
static unsigned
write_chain(struct seg_engine *e, struct seg_bucket *head, const uint64_t *items,
	    unsigned count, const uint64_t *links)
{
	/* A chain of B buckets holds 7B items (the head's slot 0 is the info
	 * word, every link takes a slot). */
	const unsigned nb = count <= BUCKET_SLOTS - 1 ? 1 : (count + BUCKET_SLOTS - 2) /
							      (BUCKET_SLOTS - 1);
	struct seg_bucket *b = head;
	unsigned k = 0, s = 1;

	for (unsigned bi = 0; bi < nb; bi++, s = 0) {
		const bool last = bi == nb - 1;

		for (; s < BUCKET_SLOTS - (last ? 0u : 1u); s++)
			atomic_store_explicit(&b->slot[s], k < count ? items[k++] : 0,
					      memory_order_release);
		if (!last) {
			atomic_store_explicit(&b->slot[BUCKET_SLOTS - 1], links[bi],
					      memory_order_release);
			b = seg_hash_link_target(e, links[bi]);
		}
	}
	return nb - 1;
}

/* Whether the item v's key has hash bit `bit` set. */
static bool
moves_up(const struct seg_engine *e, uint64_t v, uint32_t bit)
{
	const uint8_t *p = seg_item_at(e, v);
	struct item_view iv;

	/* Under the stripe lock a linked item's segment stays: it parses. */
	if (!seg_parse_slot(e, v, &iv))
		return false;
	return (seg_hash_of(p + iv.hdr_len, iv.klen) >> bit) & 1;
}

static int
split_locked(struct seg_engine *e, uint64_t g, const uint64_t *links, unsigned n,
	     unsigned *used)
{
	const uint32_t power = seg_geom_power(g);
	const uint64_t i = seg_geom_split(g), j = i + (1ull << power);
	struct seg_bucket *old = &e->table[i], *nw = &e->table[j];
	struct seg_bucket *stripe = seg_hash_stripe(e, old);
	uint64_t stay[SPLIT_ITEMS_MAX], up[SPLIT_ITEMS_MAX];
	uint64_t old_links[SPLIT_ITEMS_MAX / (BUCKET_SLOTS - 1) + 1];
	unsigned n_stay = 0, n_up = 0, n_links = 0, need, kept;
	struct seg_chain_iter it;
	struct seg_bucket *last = old;
	_Atomic uint64_t *slot;
	uint64_t v;

	seg_iter_init(&it, old);
	while ((slot = seg_iter_next(e, &it, &v))) {
		if (it.b != last) {
			if (n_links == RTE_DIM(old_links))
				return -1;
			old_links[n_links++] =
				atomic_load_explicit(&last->slot[BUCKET_SLOTS - 1],
						     memory_order_relaxed);
			last = it.b;
		}
		if (!v)
			continue;
		if (n_stay + n_up == SPLIT_ITEMS_MAX)
			return -1;
		if (moves_up(e, v, power))
			up[n_up++] = v;
		else
			stay[n_stay++] = v;
	}
	need = n_up <= BUCKET_SLOTS - 1 ? 0 : (n_up + BUCKET_SLOTS - 2) / (BUCKET_SLOTS - 1) - 1;
	*used = need;
	if (need > n)
		return -1;

	seg_hash_moves_begin(stripe);
	atomic_store_explicit(&nw->slot[0], 0, memory_order_relaxed);
	write_chain(e, nw, up, n_up, links);
	seg_hash_ovf_used_add(e, need);
	atomic_store_explicit(&e->geo.geom,
			      i + 1 == 1ull << power ? seg_geom_make(power + 1, 0)
						     : seg_geom_make(power, i + 1),
			      memory_order_release);
	kept = write_chain(e, old, stay, n_stay, old_links);
	for (unsigned l = kept; l < n_links; l++)
		seg_hash_ovf_release(e, old_links[l]);
	seg_hash_moves_end(stripe);
	atomic_fetch_add_explicit(&e->geo.splits, 1, memory_order_relaxed);
	if (i + 1 == 1ull << power)
		advise_in_use(e, power + 1); /* a doubling done */
	return 1;
}

int
seg_hash_split(struct seg_engine *e, const uint64_t *links, unsigned n, unsigned *used)
{
	uint64_t g;
	int rc;

	*used = 0;
	if (atomic_exchange_explicit(&e->geo.splitting, 1, memory_order_acquire))
		return 0;
	if (!seg_hash_wants_growth(e)) {
		atomic_store_explicit(&e->geo.splitting, 0, memory_order_release);
		return 0;
	}
	/* Only splitters change the geometry, and there is one. */
	g = atomic_load_explicit(&e->geo.geom, memory_order_relaxed);
	seg_bucket_lock(&e->table[seg_geom_split(g) & e->table_mask]);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	rc = split_locked(e, g, links, n, used);
	seg_bucket_unlock(&e->table[seg_geom_split(g) & e->table_mask]);
	atomic_store_explicit(&e->geo.splitting, 0, memory_order_release);
	return rc;
}

void
seg_hash_chain_stats(struct seg_engine *e, uint64_t sample, uint64_t every_ns,
		     uint64_t *mean_x100, uint64_t *max)
{
	const uint64_t buckets = seg_hash_buckets(e);
	const uint64_t n = sample < buckets ? sample : buckets;
	const uint64_t now = seg_clock_ns(CLOCK_MONOTONIC_COARSE), last = atomic_load(&e->geo.sampled_ns);
	uint64_t at, items = 0, top = 0;

	if (every_ns && last && now - last < every_ns) {
		*mean_x100 = atomic_load(&e->geo.sampled_mean_x100);
		*max = atomic_load(&e->geo.sampled_max);
		return;
	}
	at = atomic_fetch_add_explicit(&e->geo.sample_at, n, memory_order_relaxed);

	/* Lock-free counts: a chain changing meanwhile is off by a move. */
	for (uint64_t s = 0; s < n; s++) {
		struct seg_chain_iter it;
		uint64_t v, len = 0;

		seg_iter_init(&it, &e->table[(at + s) % buckets]);
		while (seg_iter_next(e, &it, &v) && len < SPLIT_ITEMS_MAX * 8)
			len += v != 0;
		items += len;
		top = len > top ? len : top;
	}
	*mean_x100 = n ? items * 100 / n : 0;
	*max = top;
	atomic_store(&e->geo.sampled_mean_x100, *mean_x100);
	atomic_store(&e->geo.sampled_max, *max);
	atomic_store(&e->geo.sampled_ns, now);
}
