/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Segment life cycle: FREE (in the pool) -> OPEN (one worker appends, linked
 * at the tail of its TTL chain) -> SEALED -> RECLAIM (one thread expires,
 * evicts or merges it) -> FREE. Locks are per segment event, never per
 * request: the pool lock when a segment is taken or returned, the chain
 * lock when it is linked or unlinked.
 *
 * Generations: a segment's gen takes a new, globally increasing value when
 * it is opened and again when it is freed. Lock-free readers compare the
 * gen before and after reading an item to detect reuse, and the cas unique
 * of an item is (gen << 20 | offset), unique for the life of the engine.
 */
#include "seg/seg_item.h"
#include "seg/seg_segment.h"
#include "seg/seg_struct.h"

uint64_t
seg_new_gen(struct seg_engine *e)
{
	return atomic_fetch_add_explicit(&e->gen_counter, 1, memory_order_relaxed) + 1;
}

int32_t
seg_pool_pop(struct seg_engine *e, struct seg_worker *w)
{
	int32_t seg = SEG_NONE;

	if (!__atomic_load_n(&e->pool_count, __ATOMIC_RELAXED))
		return SEG_NONE;
	seg_spin_lock(&e->pool_lock);
	seg_count_lock(e, w, ENGINE_C_lock_segment);
	if (e->pool_count) {
		seg = e->pool[e->pool_count - 1];
		/* stored atomically: the check above reads it unlocked */
		__atomic_store_n(&e->pool_count, e->pool_count - 1, __ATOMIC_RELAXED);
	}
	seg_spin_unlock(&e->pool_lock);
	return seg;
}

void
seg_pool_push(struct seg_engine *e, int32_t seg)
{
	seg_spin_lock(&e->pool_lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	e->pool[e->pool_count] = seg;
	__atomic_store_n(&e->pool_count, e->pool_count + 1, __ATOMIC_RELAXED);
	seg_spin_unlock(&e->pool_lock);
}

void
seg_init_open(struct seg_engine *e, int32_t seg, unsigned ttl_bucket, int64_t exp_base,
	      uint8_t unit_shift, int64_t now)
{
	struct seg_hdr *h = &e->hdr[seg];

	/* `writers` is never stored, only counted up and down: a stale
	 * appender of an earlier life may be counted in it right now, and
	 * takes itself out again when it sees the gen changed. */
	atomic_store_explicit(&h->write_off, 0, memory_order_relaxed);
	/* Changes that workers still hold for an earlier life are dropped
	 * when they flush (seg_live.c): seg_retire waited for them. */
	atomic_store_explicit(&h->live, 0, memory_order_relaxed);
	atomic_store_explicit(&h->exp_max, 0, memory_order_relaxed);
	atomic_store_explicit(&h->sharers, false, memory_order_relaxed);
	/* Lock-free readers of the earlier life may still read these (a
	 * seqlock: their gen check discards what they read): stored
	 * atomically, as seg_item_expiry() loads them. */
	__atomic_store_n(&h->unit_shift, unit_shift, __ATOMIC_RELAXED);
	__atomic_store_n(&h->ttl_bucket, (uint16_t)ttl_bucket, __ATOMIC_RELAXED);
	h->prev = h->next = SEG_NONE;
	__atomic_store_n(&h->cont, SEG_NONE, __ATOMIC_RELAXED); /* seg_append.c sets it after */
	__atomic_store_n(&h->exp_base, exp_base, __ATOMIC_RELAXED);
	__atomic_store_n(&h->create_at, now, __ATOMIC_RELAXED); /* stats and dumps read it */
	/* The state is left to the caller: a segment must not be OPEN (and
	 * so claimable by flush_all, the sweep or eviction, which unlink it
	 * from its chain) before it is linked into its chain. */
	/* Last: readers that see this gen see the fields above. */
	atomic_store_explicit(&h->gen, seg_new_gen(e), memory_order_release);
	/* The writer half of the readers' seqlock for this life, as in
	 * seg_retire: the appends that follow (by this thread or any that
	 * takes the segment from it) are ordered after the new gen, so a
	 * reader that read their bytes under the gen seg_retire stored loads
	 * this one, or a later one, after its acquire fence and throws the
	 * read away. A release store alone orders the stores before it, not
	 * those after; x86 and ARMv8 keep this order anyway, the C11 model
	 * does not (docs/architecture.md, "Memory ordering"). */
	atomic_thread_fence(memory_order_release);
}

/* Under the chain's lock: its bit says whether it holds segments. */
static void
chain_mark(struct seg_engine *e, unsigned tb, bool used)
{
	const uint64_t bit = 1ull << (tb % 64);

	if (used)
		atomic_fetch_or_explicit(&e->chain_used[tb / 64], bit, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&e->chain_used[tb / 64], ~bit, memory_order_relaxed);
}

void
seg_chain_mark_used(struct seg_engine *e, unsigned tb)
{
	chain_mark(e, tb, e->chain[tb].head != SEG_NONE);
}

unsigned
seg_chain_next_used(const struct seg_engine *e, unsigned from)
{
	while (from < TTL_CHAINS) {
		uint64_t w = atomic_load_explicit(&e->chain_used[from / 64], memory_order_relaxed) &
			     (~0ull << (from % 64));

		if (w)
			return (from & ~63u) + (unsigned)__builtin_ctzll(w);
		from = (from & ~63u) + 64;
	}
	return TTL_CHAINS;
}

void
seg_chain_append(struct seg_engine *e, struct seg_worker *w, int32_t seg)
{
	struct seg_hdr *h = &e->hdr[seg];
	struct seg_chain *c = &e->chain[h->ttl_bucket];

	seg_spin_lock(&c->lock);
	seg_count_lock(e, w, ENGINE_C_lock_segment);
	h->prev = c->tail;
	h->next = SEG_NONE;
	if (c->tail != SEG_NONE) {
		e->hdr[c->tail].next = seg;
	} else {
		__atomic_store_n(&c->head, seg, __ATOMIC_RELAXED);
		chain_mark(e, h->ttl_bucket, true);
	}
	c->tail = seg;
	seg_spin_unlock(&c->lock);
}

/* Under the chain lock. */
static void
chain_unlink(struct seg_engine *e, struct seg_chain *c, int32_t seg)
{
	struct seg_hdr *h = &e->hdr[seg];

	if (h->prev != SEG_NONE)
		e->hdr[h->prev].next = h->next;
	else
		__atomic_store_n(&c->head, h->next, __ATOMIC_RELAXED);
	if (h->next != SEG_NONE)
		e->hdr[h->next].prev = h->prev;
	else
		c->tail = h->prev;
	if (c->merge_next == seg)
		c->merge_next = SEG_NONE;
	if (c->sparse_next == seg)
		c->sparse_next = SEG_NONE;
	h->prev = h->next = SEG_NONE;
	if (c->head == SEG_NONE)
		chain_mark(e, (unsigned)(c - e->chain), false);
}

void
seg_chain_remove(struct seg_engine *e, int32_t seg)
{
	struct seg_chain *c = &e->chain[e->hdr[seg].ttl_bucket];

	seg_spin_lock(&c->lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	chain_unlink(e, c, seg);
	seg_spin_unlock(&c->lock);
}

void
seg_chain_replace_run(struct seg_engine *e, unsigned ttl_bucket, const int32_t *run,
		      unsigned n, const int32_t *dest, unsigned ndest)
{
	struct seg_chain *c = &e->chain[ttl_bucket];

	seg_spin_lock(&c->lock);
	atomic_fetch_add_explicit(&e->n_locks_other, 1, memory_order_relaxed);
	/* The run is consecutive: its members are claimed, so nobody else
	 * unlinks them, and members reused as destinations kept their links
	 * (chain_reopen_member, seg_merge.c). Its neighbours are read now: another
	 * reclaimer may have unlinked (or replaced) the ones it had when it
	 * was claimed. */
	const int32_t prev = e->hdr[run[0]].prev;
	const int32_t next = e->hdr[run[n - 1]].next;
	int32_t at = prev;

	for (unsigned i = 0; i < n; i++)
		e->hdr[run[i]].prev = e->hdr[run[i]].next = SEG_NONE;
	for (unsigned i = 0; i < ndest; i++) {
		e->hdr[dest[i]].prev = at;
		if (at != SEG_NONE)
			e->hdr[at].next = dest[i];
		else
			__atomic_store_n(&c->head, dest[i], __ATOMIC_RELAXED);
		at = dest[i];
	}
	if (at != SEG_NONE)
		e->hdr[at].next = next;
	else
		__atomic_store_n(&c->head, next, __ATOMIC_RELAXED);
	if (next != SEG_NONE)
		e->hdr[next].prev = at;
	else
		c->tail = at;
	if (c->head == SEG_NONE)
		chain_mark(e, ttl_bucket, false);
	/* The next merge in this chain starts after the run. */
	c->merge_next = c->sparse_next = next;
	c->merge_gen = c->sparse_gen = next != SEG_NONE ? atomic_load(&e->hdr[next].gen) : 0;
	seg_spin_unlock(&c->lock);
}

bool
seg_claim(struct seg_engine *e, int32_t seg, uint8_t from)
{
	uint8_t expected = from;

	return atomic_compare_exchange_strong(&e->hdr[seg].state, &expected, SEG_RECLAIM);
}

/* Waits until no worker is counted in seg's `writers` (a live-count
 * change being applied, seg_live.c) or marks it as the segment it appends
 * to (seg_chunk.c). The caller's seq_cst store or RMW (sealed bit, gen)
 * comes first: pairs with the marker's mark-then-check. */
static void
wait_appenders(struct seg_engine *e, int32_t seg)
{
	struct seg_hdr *h = &e->hdr[seg];
	unsigned spins = 0;

	while (atomic_load(&h->writers))
		seg_relax(&spins);
	for (unsigned i = 0; i < e->max_workers; i++)
		while (atomic_load(&e->append_marks[i].seg) == (uint64_t)seg + 1)
			seg_relax(&spins);
}

void
seg_close_and_drain(struct seg_engine *e, int32_t seg)
{
	/* seq_cst pairs with the appender's mark then write_off load:
	 * either it sees the sealed bit, or we see its mark. */
	atomic_fetch_or(&e->hdr[seg].write_off, SEG_WOFF_SEALED);
	wait_appenders(e, seg);
}

uint32_t
seg_valid_end(const struct seg_engine *e, int32_t seg)
{
	uint32_t end = atomic_load_explicit(&e->hdr[seg].write_off, memory_order_acquire) &
		       ~SEG_WOFF_SEALED;

	return end < e->seg_size ? end : e->seg_size;
}

void
seg_retire(struct seg_engine *e, int32_t seg)
{
	struct seg_hdr *h = &e->hdr[seg];

	/* New gen first: readers still holding the old one fail validation,
	 * and so do appenders that still refer to this life. An appender
	 * marks the segment (or counts itself in `writers`) before it loads
	 * the gen (both seq_cst): one that loaded the old gen is marked before
	 * the store below, so the wait sees it, and it leaves when it finds the state is not
	 * OPEN. Only then may the segment be opened again. */
	atomic_store(&h->gen, seg_new_gen(e));
	/* The writer half of the readers' seqlock: every store after this
	 * fence (a merge's copies into a member it reuses as a destination,
	 * the next life's seg_init_open and appends, by this thread or one
	 * that takes the segment from the pool) is ordered after the new gen.
	 * A lock-free reader that read any of those bytes and then passes
	 * its acquire fence (seg_read_valid) loads this gen or a later one,
	 * and throws the read away. Without it only the seq_cst loads of the
	 * drain loop below happen to keep later stores after the gen store
	 * on ARM (a seq_cst store alone lets later stores pass it). */
	atomic_thread_fence(memory_order_release);
	wait_appenders(e, seg);
	/* What workers still held for the life that ended is dropped (they
	 * see the new gen, or were waited for just now: seg_live.c), so its
	 * count may not have reached zero: a free segment counts nothing. */
	atomic_store_explicit(&h->live, 0, memory_order_relaxed);
	/* A large item's continuations (seg_append.c) end with it, after the
	 * head's new gen and its writers: a reader that reads one reused
	 * fails its check of the head's gen. */
	for (int32_t c = __atomic_load_n(&h->cont, __ATOMIC_RELAXED); c != SEG_NONE;) {
		struct seg_hdr *ch = &e->hdr[c];
		const int32_t next = __atomic_load_n(&ch->cont, __ATOMIC_RELAXED);

		__atomic_store_n(&ch->cont, SEG_NONE, __ATOMIC_RELAXED);
		atomic_store(&ch->gen, seg_new_gen(e));
		atomic_store_explicit(&ch->state, SEG_FREE, memory_order_release);
		seg_pool_push(e, c);
		c = next;
	}
	__atomic_store_n(&h->cont, SEG_NONE, __ATOMIC_RELAXED);
	atomic_store_explicit(&h->state, SEG_FREE, memory_order_release);
}

void
seg_release(struct seg_engine *e, int32_t seg)
{
	seg_retire(e, seg);
	seg_pool_push(e, seg);
}

uint32_t
seg_item_span(const struct seg_engine *e, uint64_t v)
{
	struct item_view iv;

	if (!seg_parse_slot(e, v, &iv))
		return 0;
	return item_span(iv.total, e->off_shift);
}

void
seg_account_add(struct seg_engine *e, uint64_t v, uint32_t size)
{
	atomic_fetch_add_explicit(&e->hdr[slot_seg(v)].live, seg_live_pack(1, (int32_t)size),
				  memory_order_relaxed);
}

void
seg_account_remove(struct seg_engine *e, uint64_t v)
{
	atomic_fetch_sub_explicit(&e->hdr[slot_seg(v)].live,
				  seg_live_pack(1, (int32_t)seg_item_span(e, v)), memory_order_relaxed);
}

bool
seg_reclaim_begin(struct seg_engine *e)
{
	/* seq_cst, both: pairs with seg_reclaim_quiesce's store then load.
	 * Either it sees this count, or this sees its flag. */
	atomic_fetch_add(&e->reclaims_out, 1);
	if (SEG_UNLIKELY(atomic_load(&e->quiescing))) {
		atomic_fetch_sub(&e->reclaims_out, 1);
		return false;
	}
	return true;
}

void
seg_reclaim_end(struct seg_engine *e)
{
	atomic_fetch_sub_explicit(&e->reclaims_out, 1, memory_order_release);
}

void
seg_reclaim_quiesce(struct seg_engine *e)
{
	unsigned spins = 0;

	atomic_store(&e->quiescing, true);
	/* Passes in flight end and broadcast; none starts meanwhile
	 * (seg_evict.c and seg_merge.c look at `quiescing` under
	 * evict_lock), so a flush waits at most for the passes it found. */
	while (e->passes_in_flight > 0) {
		SEG_TEST_POINT(SEG_TP_QUIESCE_WAIT);
		pthread_cond_wait(&e->evict_done, &e->evict_lock);
	}
	/* Expiry takes no evict_lock: wait for what began before the flag. */
	while (atomic_load_explicit(&e->reclaims_out, memory_order_acquire) > 0)
		seg_relax(&spins);
}

void
seg_reclaim_resume(struct seg_engine *e)
{
	atomic_store(&e->quiescing, false);
	/* Workers that found it quiescing wait for a pass to end. */
	pthread_cond_broadcast(&e->evict_done);
}
