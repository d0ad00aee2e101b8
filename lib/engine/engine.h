/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The storage engine interface. Both engines (lib/seg, the Segcache engine,
 * and lib/baseline, built on DPDK's rte_hash) implement it, so the request
 * executor, the server and the storage benchmark run unchanged on either.
 *
 * Threading model: any thread may operate on any key. A thread that calls
 * operations first creates its own `struct engine_worker` and passes it to
 * every call; a worker must never be used by two threads at once. Engine-wide
 * calls (stats, expire, flush) may come from any thread.
 *
 * Semantics are memcached's (protocol.txt); see docs/protocol.md.
 *
 * This header is the keyed interface every user of an engine needs: the
 * statuses, the ops table, struct engine and struct engine_worker, and the
 * inline wrappers that call through the table. The rest is in headers of
 * its own, included by the files that use it:
 *   engine_stats.h   the per-worker counters and struct engine_stats
 *                    (included here: a worker holds its counters)
 *   engine_config.h  struct engine_config, the clock, eviction policies
 *                    (for whoever creates an engine or names a policy)
 *   engine_dump.h    engine_dump(), its items and cursor (lib/cmd's key
 *                    dumps and the tests)
 *   engine_access.h  the sampled access stream lib/mrc reads
 *   engine_stream.h  a store whose value is written as it arrives
 */
#ifndef SEGCACHED_ENGINE_H
#define SEGCACHED_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ENGINE_KEY_MAX 250
/* memcached: exptimes up to 30 days are relative, larger ones absolute. */
#define ENGINE_RELATIVE_EXPTIME_MAX (60 * 60 * 24 * 30)
/* exptime value meaning "leave the expiry as it is" (engine_get). */
#define ENGINE_NO_TOUCH INT64_MIN

enum engine_status {
	ENGINE_OK = 0,
	ENGINE_MISS,        /* no such key: get miss, NOT_FOUND */
	ENGINE_NOT_STORED,  /* add on a present key; replace/append/prepend on a missing one */
	ENGINE_EXISTS,      /* cas: the item changed since the client read it */
	ENGINE_TOO_LARGE,   /* item larger than the configured item size limit */
	ENGINE_NO_MEMORY,   /* no memory could be reclaimed (or eviction is off) */
	ENGINE_NON_NUMERIC, /* incr/decr on a value that is not a decimal uint64 */
	ENGINE_BUF_SMALL,   /* get: value larger than the caller's buffer; item meta is filled */
	ENGINE_INVALID,     /* bad argument: key length 0 or over 250 */
};

enum engine_store_mode {
	ENGINE_SET,
	ENGINE_ADD,
	ENGINE_REPLACE,
	ENGINE_APPEND,  /* keeps the existing flags and expiry */
	ENGINE_PREPEND, /* keeps the existing flags and expiry */
	ENGINE_CAS,
};

/* What a read returns besides the value bytes. */
struct engine_item {
	uint32_t flags;      /* client flags */
	uint32_t vlen;       /* value length in bytes */
	uint64_t cas;        /* cas unique; 0 when cas is disabled */
	int64_t expires_at;  /* engine clock seconds; 0 = never */
	bool fetched_before; /* the item was read before this access (meta 'h') */
};

struct engine;
struct engine_worker;
struct engine_dump_item;   /* engine_dump.h */
struct engine_dump_cursor; /* engine_dump.h */
struct engine_access;      /* engine_access.h */

/* A dump's consumer (engine_dump.h): takes one item; false: not now (the
 * dump stops and offers it again on the next call). */
typedef bool (*engine_dump_fn)(void *arg, const struct engine_dump_item *d);

/* Takes one sampled request (engine_access.h, engine_attach_sampler). */
typedef void (*engine_sample_fn)(void *arg, const struct engine_access *a);

/* One key of a batched get (engine_get_batch). */
struct engine_key {
	const void *key;
	size_t klen;
};

/* Where engine_get_batch() delivers, key by key, in order. */
struct engine_get_sink {
	/* Key i was found, *it filled: returns where its it->vlen value bytes
	 * go, or NULL to take only the meta data (the key's status is then
	 * ENGINE_BUF_SMALL). May be called again for the same key when a
	 * concurrent write made the engine read it again: the new buffer
	 * replaces the old, whose bytes are garbage. Runs inside the engine's
	 * read (lib/seg may hold a bucket lock, lib/baseline is RCU-online):
	 * it must not call the engine, and should be quick. */
	void *(*value_buf)(void *arg, unsigned i, const struct engine_item *it);
	/* Key i is finished with what engine_get() would return for it
	 * (*it filled for ENGINE_OK and ENGINE_BUF_SMALL); on ENGINE_OK the
	 * value is in the buffer value_buf gave last. Called for 0..n-1 in
	 * order, each after key i's last value_buf and before key i+1's
	 * first. Returns false to end the batch after key i: the keys after
	 * it are left alone (not read, not counted). */
	bool (*done)(void *arg, unsigned i, enum engine_status st, const struct engine_item *it);
	void *arg;
};

struct engine_stream; /* engine_stream.h */

struct engine_ops {
	const char *name;
	void (*destroy)(struct engine *e);
	struct engine_worker *(*worker_create)(struct engine *e);
	void (*worker_destroy)(struct engine_worker *w);
	/* The keyed operations; their wrappers below say what they return. */
	enum engine_status (*get)(struct engine_worker *w, const void *key,
				  size_t klen, int64_t touch_exptime, void *buf,
				  size_t cap, struct engine_item *it);
	void (*get_batch)(struct engine_worker *w, const struct engine_key *keys, unsigned n,
			  const struct engine_get_sink *sink);
	void (*prefetch)(struct engine_worker *w, const struct engine_key *keys, unsigned n);
	enum engine_status (*store)(struct engine_worker *w,
				    enum engine_store_mode mode,
				    const void *key, size_t klen,
				    const void *val, size_t vlen,
				    uint32_t flags, int64_t exptime,
				    uint64_t cas_in, uint64_t *cas_out);
	/* Optional (NULL: values are stored whole only): engine_store_begin()
	 * and the calls after it. */
	enum engine_status (*store_begin)(struct engine_worker *w, enum engine_store_mode mode,
					  const void *key, size_t klen, size_t vlen,
					  uint32_t flags, int64_t exptime,
					  struct engine_stream *st);
	void (*store_write)(struct engine_worker *w, struct engine_stream *st,
			    const void *data, size_t len);
	enum engine_status (*store_finish)(struct engine_worker *w, struct engine_stream *st,
					   enum engine_store_mode mode, const void *key,
					   size_t klen, uint64_t cas_in, uint64_t *cas_out);
	enum engine_status (*remove)(struct engine_worker *w, const void *key,
				     size_t klen, uint64_t cas_in);
	enum engine_status (*arith)(struct engine_worker *w, const void *key,
				    size_t klen, bool incr, uint64_t delta,
				    uint64_t *value_out, uint64_t *cas_out);
	enum engine_status (*touch)(struct engine_worker *w, const void *key,
				    size_t klen, int64_t exptime);
	void (*flush_all)(struct engine *e, int64_t delay);
	unsigned (*expire)(struct engine *e);
	void (*stats)(struct engine *e, struct engine_stats *st);
	/* Optional (NULL: the engine has none); see engine_set_memory() below
	 * and engine_dump() (engine_dump.h). */
	int (*set_memory)(struct engine *e, size_t bytes);
	void (*dump)(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn,
		     void *arg);
};

/* Every engine object starts with this. sample_below is 0 (nothing
 * sampled) unless a sampler is attached (engine_attach_sampler): a keyed
 * request whose engine_sample_hash() is below it goes to sample_fn, and
 * the sampler lowers it as its sample fills (engine_access.h). */
struct engine {
	const struct engine_ops *ops;
	uint64_t sample_below;
	engine_sample_fn sample_fn;
	void *sample_arg;
};

/* Every worker object starts with this. */
struct engine_worker {
	struct engine *engine;
	uint64_t counters[ENGINE_C_MAX]; /* engine_count() writes, engine_stats() reads */
};

/* Counts n events on a worker's counter. A worker's counters have one
 * writer, the worker's thread, and engine_stats() reads them from any
 * thread: a relaxed atomic load and store (the same instructions as a
 * plain add on x86 and ARM) keep that read from being a data race. */
static inline void
engine_count_add(struct engine_worker *w, enum engine_worker_counter c, uint64_t n)
{
	__atomic_store_n(&w->counters[c], __atomic_load_n(&w->counters[c], __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline void
engine_count(struct engine_worker *w, enum engine_worker_counter c)
{
	engine_count_add(w, c, 1);
}

/* Lifecycle. */
static inline void engine_destroy(struct engine *e) { if (e) e->ops->destroy(e); }
static inline struct engine_worker *engine_worker_create(struct engine *e)
{ return e->ops->worker_create(e); }
static inline void engine_worker_destroy(struct engine_worker *w)
{ if (w) w->engine->ops->worker_destroy(w); }

/* get/gets; with touch_exptime != ENGINE_NO_TOUCH also gat/gats. Copies the
 * value into buf when it fits; otherwise returns ENGINE_BUF_SMALL with *it
 * filled so the caller can retry with it->vlen bytes. buf may be NULL with
 * cap 0 to fetch only the item's meta data.
 *
 * Returns:
 * - ENGINE_OK: the value is in buf, *it is filled.
 * - ENGINE_BUF_SMALL: *it is filled, the value did not fit (or buf is NULL);
 *   a gat has set the new expiry all the same.
 * - ENGINE_MISS: no live item (missing, expired or flushed).
 * - ENGINE_INVALID: klen is 0 or over ENGINE_KEY_MAX.
 * - ENGINE_NO_MEMORY: lib/seg only, gat/gats only: the touched item is
 *   rewritten and no segment could be had for it.
 */
static inline enum engine_status engine_get(struct engine_worker *w,
					    const void *key, size_t klen,
					    int64_t touch_exptime, void *buf,
					    size_t cap, struct engine_item *it)
{ return w->engine->ops->get(w, key, klen, touch_exptime, buf, cap, it); }

/* n plain gets (no touch) at once: the result of key i is what
 * engine_get(w, keys[i], ..., ENGINE_NO_TOUCH, ...) would return if the
 * gets ran one after another, counters included (a key may repeat; a
 * repeat sees what the earlier get did, e.g. fetched_before). The engine
 * hashes every key first and prefetches their hash buckets, then their
 * items, then copies the values, so the cache misses of the keys overlap
 * instead of following one another. A value read while a writer replaces
 * or evicts it is checked after the copy like a single get's: a key never
 * delivers another object's bytes. Results go to *sink (see above). */
static inline void engine_get_batch(struct engine_worker *w, const struct engine_key *keys,
				    unsigned n, const struct engine_get_sink *sink)
{ w->engine->ops->get_batch(w, keys, n, sink); }

/* A hint that gets of these keys follow soon: start loading what their
 * lookups will read (hash buckets, then the items found in them), so the
 * cache misses of requests that arrive together overlap though each is
 * answered on its own later (the first phase of a two-phase RX burst).
 * Reads only: no state, counter or expiry changes, any bytes accepted
 * (invalid keys are skipped). Looks at most ENGINE_BATCH_GROUP keys. */
static inline void engine_prefetch(struct engine_worker *w, const struct engine_key *keys,
				   unsigned n)
{ w->engine->ops->prefetch(w, keys, n); }

/* Keys an engine looks up together (hash, prefetch, copy); a larger batch
 * is taken in groups of this many. */
#define ENGINE_BATCH_GROUP 32

/* set/add/replace/append/prepend/cas. cas_in is used by ENGINE_CAS (and,
 * when non-zero, by the other modes as a meta-protocol compare). *cas_out
 * (may be NULL) receives the new item's cas unique.
 *
 * Returns:
 * - ENGINE_OK: stored (a negative or past exptime stores an item that is
 *   expired at once, which removes the key's live item).
 * - ENGINE_NOT_STORED: add on a live key; replace, append or prepend on a
 *   missing one.
 * - ENGINE_MISS: cas (or a non-zero cas_in with set/add/replace) on a
 *   missing key.
 * - ENGINE_EXISTS: cas_in does not match the item's cas unique.
 * - ENGINE_TOO_LARGE: the item (for append/prepend: the joined item) is
 *   over the item size limit. lib/seg also drops the key's old value on a
 *   too large set, as memcached does; lib/baseline leaves it (lib/cmd
 *   drops it).
 * - ENGINE_NO_MEMORY: no room could be made (eviction off or nothing to
 *   reclaim); lib/baseline also when a non-EAL thread finds no free lcore
 *   id to borrow.
 * - ENGINE_INVALID: klen is 0 or over ENGINE_KEY_MAX.
 */
static inline enum engine_status engine_store(struct engine_worker *w,
					      enum engine_store_mode mode,
					      const void *key, size_t klen,
					      const void *val, size_t vlen,
					      uint32_t flags, int64_t exptime,
					      uint64_t cas_in,
					      uint64_t *cas_out)
{ return w->engine->ops->store(w, mode, key, klen, val, vlen, flags, exptime, cas_in, cas_out); }

/* delete; cas_in != 0 deletes only if the cas unique matches.
 *
 * Returns:
 * - ENGINE_OK: deleted.
 * - ENGINE_MISS: no live item.
 * - ENGINE_EXISTS: cas_in does not match; the item stays.
 * - ENGINE_INVALID: klen is 0 or over ENGINE_KEY_MAX.
 * - ENGINE_NO_MEMORY: lib/baseline only: a non-EAL thread found no free
 *   lcore id to borrow.
 */
static inline enum engine_status engine_delete(struct engine_worker *w,
					       const void *key, size_t klen,
					       uint64_t cas_in)
{ return w->engine->ops->remove(w, key, klen, cas_in); }

/* incr/decr: the value must be a decimal uint64 of at most 20 digits; incr
 * wraps at 2^64, decr stops at 0 (memcached). The item keeps its flags and
 * expiry.
 *
 * Returns:
 * - ENGINE_OK: *value_out and *cas_out (each may be NULL) are filled.
 * - ENGINE_MISS: no live item.
 * - ENGINE_NON_NUMERIC: the value is not a decimal uint64.
 * - ENGINE_NO_MEMORY: the new item could not be placed (as store); for
 *   lib/baseline also no free lcore id for a non-EAL thread.
 * - ENGINE_TOO_LARGE: lib/baseline only: the new value would put the item
 *   over the item size limit.
 * - ENGINE_INVALID: klen is 0 or over ENGINE_KEY_MAX.
 */
static inline enum engine_status engine_arith(struct engine_worker *w,
					      const void *key, size_t klen,
					      bool incr, uint64_t delta,
					      uint64_t *value_out,
					      uint64_t *cas_out)
{ return w->engine->ops->arith(w, key, klen, incr, delta, value_out, cas_out); }

/* touch: sets a new expiry (a negative or past exptime removes the item).
 *
 * Returns:
 * - ENGINE_OK: touched.
 * - ENGINE_MISS: no live item.
 * - ENGINE_NO_MEMORY: lib/seg only: the item is rewritten under its new
 *   expiry and no segment could be had for it.
 * - ENGINE_INVALID: klen is 0 or over ENGINE_KEY_MAX.
 */
static inline enum engine_status engine_touch(struct engine_worker *w,
					      const void *key, size_t klen,
					      int64_t exptime)
{ return w->engine->ops->touch(w, key, klen, exptime); }

/* flush_all [delay]: delay <= 0 flushes now; otherwise every item that
 * exists when the delay has passed is invalidated then. */
static inline void engine_flush_all(struct engine *e, int64_t delay)
{ e->ops->flush_all(e, delay); }

/* Proactive expiration; the server calls it every second from its control
 * thread. Returns the number of items removed. */
static inline unsigned engine_expire(struct engine *e) { return e->ops->expire(e); }

static inline void engine_stats(struct engine *e, struct engine_stats *st)
{ e->ops->stats(e, st); }

/* memcached's cache_memlimit: a new memory budget at run time, at most the
 * one the engine was created with. Shrinking frees whole segments in
 * bounded steps (the call does none; engine_expire() does them, a bounded
 * number of evictions at a time, while requests go on); limit_maxbytes
 * shows the new budget at once. Returns 0; -ERANGE when bytes is over the
 * budget at creation or under what the engine needs to run; -ENOTSUP when
 * the engine cannot change its budget (lib/baseline: rte_hash is sized
 * once). */
int engine_set_memory(struct engine *e, size_t bytes);

/* Helpers shared by the engines (engine.c). */

/* Converts a memcached exptime to an absolute expiry in engine clock
 * seconds: 0 = never (returns 0); negative = already expired (returns -1);
 * up to 30 days = relative to now; larger = absolute unix time. An absolute
 * time at or before now also yields -1. */
int64_t engine_expiry_from_exptime(int64_t exptime, int64_t now);

/* Parses an incr/decr operand stored as a value: 1..20 decimal digits,
 * value <= UINT64_MAX. memcached also accepts trailing spaces (its incr
 * writes values padded with spaces), which are ignored. */
bool engine_parse_u64(const void *buf, size_t len, uint64_t *out);

/* Writes v as decimal into buf (>= 20 bytes); returns the length. */
size_t engine_format_u64(uint64_t v, char *buf);

/* Name of a status, for logs and tests. */
const char *engine_status_name(enum engine_status status);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_H */
