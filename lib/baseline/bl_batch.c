/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The baseline engine's batched get (engine_get_batch) and prefetch: one
 * rte_hash bulk lookup per group of keys, then each key read as bl_get()
 * reads it (bl_op.h).
 */
#include <rte_prefetch.h>

#include "baseline/bl_flush.h"
#include "baseline/bl_op.h"

/* Was it already found dead by an earlier key of this batch? */
static bool
bl_seen_dead(struct bl_item *const *dead, unsigned ndead, const struct bl_item *it)
{
	for (unsigned j = 0; j < ndead; j++)
		if (dead[j] == it)
			return true;
	return false;
}

/* The fingerprints of m keys: key i's is fp[slot[i]] (slot[i] -1 for an
 * invalid key), with kp[] and sig[] as rte_hash's bulk lookup takes them.
 * Returns how many keys are valid. */
static unsigned
group_sigs(const struct engine_key *keys, unsigned m, uint64_t *fp, const void **kp,
	   hash_sig_t *sig, int *slot)
{
	unsigned nv = 0;

	for (unsigned i = 0; i < m; i++) {
		slot[i] = -1;
		if (unlikely(keys[i].klen == 0 || keys[i].klen > ENGINE_KEY_MAX))
			continue;
		fp[nv] = bl_fingerprint(keys[i].key, keys[i].klen);
		kp[nv] = &fp[nv];
		sig[nv] = (hash_sig_t)fp[nv];
		slot[i] = (int)nv++;
	}
	return nv;
}

/* One rte_hash bulk lookup of nv fingerprints (it prefetches its buckets
 * and keys across them) and a prefetch of every item found; bit j of the
 * result says data[j] is fingerprint j's item. Call RCU-online. */
static uint64_t
group_lookup(struct bl_engine *e, const void **kp, hash_sig_t *sig, unsigned nv, void **data)
{
	uint64_t hits = 0;

	if (nv > 0 && rte_hash_lookup_with_hash_bulk_data(e->h, kp, sig, nv, &hits, data) < 0)
		hits = 0;
	for (unsigned j = 0; j < nv; j++)
		if (hits & (1ull << j))
			rte_prefetch0(data[j]);
	return hits;
}

/* One group of keys: fingerprints, one rte_hash bulk lookup (which
 * prefetches its buckets and keys across the group), a prefetch of every
 * item found, then each key as bl_get() reads it, in order, all in one
 * RCU read-side section. Dead items are unlinked afterwards, offline (as
 * bl_get() does); a repeat of a key whose item this group found dead
 * misses as it would after that unlink, without counting the expiry
 * twice. Returns false when the sink ended the batch. */
static bool
bl_get_group(struct bl_worker *w, const struct engine_key *keys, unsigned base, unsigned m,
	     const struct engine_get_sink *sink)
{
	struct bl_engine *e = w->e;
	uint64_t fp[ENGINE_BATCH_GROUP];
	const void *kp[ENGINE_BATCH_GROUP];
	hash_sig_t sig[ENGINE_BATCH_GROUP];
	void *data[ENGINE_BATCH_GROUP];
	int slot[ENGINE_BATCH_GROUP];
	struct bl_item *dead[ENGINE_BATCH_GROUP];
	unsigned dead_key[ENGINE_BATCH_GROUP];
	const bool unlinks = rte_lcore_id() != LCORE_ID_ANY;
	unsigned nv, ndead = 0;
	bool more = true;
	uint64_t hits;
	int64_t now = bl_now(e);

	bl_flush_check(e, now);
	nv = group_sigs(keys + base, m, fp, kp, sig, slot);
	bl_online(w);
	hits = group_lookup(e, kp, sig, nv, data);
	for (unsigned i = 0; i < m; i++) {
		const struct engine_key *k = &keys[base + i];
		struct bl_item *found = NULL;
		struct engine_item out = { 0 };
		enum engine_status rc = ENGINE_MISS;
		bool expired = false, flushed = false;

		if (slot[i] < 0) {
			if (!(more = sink->done(sink->arg, base + i, ENGINE_INVALID, &out)))
				break;
			continue;
		}
		if (hits & (1ull << slot[i]))
			found = data[slot[i]];
		if (found != NULL && unlinks && bl_seen_dead(dead, ndead, found))
			found = NULL;
		if (likely(found != NULL && bl_item_is(found, k->key, k->klen))) {
			expired = bl_item_expired(found, now);
			flushed = !expired && bl_item_flushed(e, found);
			if (likely(!expired && !flushed)) {
				void *buf;

				bl_read_meta(e, found, &out);
				buf = sink->value_buf(sink->arg, base + i, &out);
				rc = bl_deliver(found, now, buf, buf != NULL, &out);
			} else if (!bl_seen_dead(dead, ndead, found)) {
				dead[ndead] = found;
				dead_key[ndead++] = base + i;
			}
		}
		bl_count_get(w, rc, found, expired, flushed);
		if (!(more = sink->done(sink->arg, base + i, rc, &out)))
			break;
	}
	bl_offline(w);
	for (unsigned j = 0; j < ndead; j++) {
		struct bl_op op;

		bl_op_init(&op, w, keys[dead_key[j]].key, keys[dead_key[j]].klen);
		bl_unlink_dead(&op, dead[j]); /* lazy expiry */
	}
	return more;
}

void
bl_get_batch(struct engine_worker *wb, const struct engine_key *keys, unsigned n,
	     const struct engine_get_sink *sink)
{
	for (unsigned base = 0; base < n; base += ENGINE_BATCH_GROUP)
		if (!bl_get_group(bl_w(wb), keys, base,
				  RTE_MIN(n - base, (unsigned)ENGINE_BATCH_GROUP), sink))
			return;
}

/* engine_prefetch: a group's bulk lookup, its results dropped. */
void
bl_prefetch(struct engine_worker *wb, const struct engine_key *keys, unsigned n)
{
	struct bl_worker *w = bl_w(wb);
	uint64_t fp[ENGINE_BATCH_GROUP];
	const void *kp[ENGINE_BATCH_GROUP];
	hash_sig_t sig[ENGINE_BATCH_GROUP];
	void *data[ENGINE_BATCH_GROUP];
	int slot[ENGINE_BATCH_GROUP];
	unsigned nv = group_sigs(keys, RTE_MIN(n, (unsigned)ENGINE_BATCH_GROUP), fp, kp, sig,
				 slot);

	if (nv == 0)
		return;
	bl_online(w);
	group_lookup(w->e, kp, sig, nv, data);
	bl_offline(w);
}
