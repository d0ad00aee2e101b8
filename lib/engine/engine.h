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
 */
#ifndef SEGCACHED_ENGINE_H
#define SEGCACHED_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Eviction policies. Their names, help text and the engines that have
 * each are one table, engine_eviction_policies (engine_eviction.c): adding
 * a policy is a value here, its row there, and its code in the engines
 * that list it. */
enum engine_eviction {
	ENGINE_EVICT_MERGE,  /* default for lib/seg: merge-based (Segcache paper) */
	ENGINE_EVICT_FIFO,   /* oldest segment first */
	ENGINE_EVICT_RANDOM, /* a random segment */
	ENGINE_EVICT_NONE,   /* memcached -M: refuse writes when memory is full */
	ENGINE_EVICT_COUNT,  /* not a policy: how many there are */
};

/* The engines, as bits of a policy's `engines`. */
#define ENGINE_KIND_SEG (1u << 0)      /* lib/seg */
#define ENGINE_KIND_BASELINE (1u << 1) /* lib/baseline */

struct engine_eviction_policy {
	enum engine_eviction id;
	const char *name;  /* on the command line, in config files and stats */
	const char *help;  /* one line for --help */
	unsigned engines;  /* ENGINE_KIND_* bits of the engines that have it */
};

/* The table, ENGINE_EVICT_COUNT rows, in enum order. */
extern const struct engine_eviction_policy engine_eviction_policies[ENGINE_EVICT_COUNT];
/* The policy called `name`, or NULL. */
const struct engine_eviction_policy *engine_eviction_by_name(const char *name);
/* The row of `ev`, or NULL for a value that is no policy. */
const struct engine_eviction_policy *engine_eviction_of(enum engine_eviction ev);
/* The name of `ev`, or "unknown". */
const char *engine_eviction_name(enum engine_eviction ev);
/* Whether `ev` is a policy that an engine of `kind` (ENGINE_KIND_*) has. */
bool engine_eviction_supported(enum engine_eviction ev, unsigned kind);
/* The names joined by '|' ("merge|fifo|random|none") into buf, as many
 * whole names as fit; returns buf. */
char *engine_eviction_names(char *buf, size_t len);

/* What a read returns besides the value bytes. */
struct engine_item {
	uint32_t flags;      /* client flags */
	uint32_t vlen;       /* value length in bytes */
	uint64_t cas;        /* cas unique; 0 when cas is disabled */
	int64_t expires_at;  /* engine clock seconds; 0 = never */
	bool fetched_before; /* the item was read before this access (meta 'h') */
};

/* Engine clock: seconds on the unix time scale. NULL in the config selects
 * a monotonic clock anchored to the wall clock at creation (like memcached,
 * so wall-clock steps do not mass-expire the cache). Tests pass their own. */
typedef int64_t (*engine_clock_fn)(void *arg);

struct engine_config {
	size_t memory;       /* total budget: heap + hash table + metadata, bytes */
	size_t segment_size; /* lib/seg segment size; 0 = 1 MiB */
	size_t item_max;     /* largest item (key + value + header); 0 = 1 MiB */
	enum engine_eviction eviction;
	unsigned max_workers; /* most engine_worker objects alive at once; 0 = 16 */
	bool cas_disabled;    /* memcached -C */
	unsigned hash_power;  /* log2 of hash buckets; 0 = sized from memory */
	/* lib/seg: how many times its starting buckets the hash table may grow
	 * to online: 1 (no growth), 2, 4, 8 or 16; 0 = 16. It sizes the restart
	 * area of a file-backed heap (seg_restart_area_bytes()). */
	unsigned hash_grow;
	engine_clock_fn clock;
	void *clock_arg;
	/* Optional caller-provided heap region (hugepages, PMEM). NULL: the
	 * engine maps anonymous memory itself. See seg_heap_bytes(). */
	void *heap;
	size_t heap_len;
};

/* Counters kept per worker (no atomics on the data path) and summed by
 * engine_stats(). One table, used by both engines and by `stats`. */
#define ENGINE_WORKER_COUNTERS(X)                                                       \
	X(cmd_get, "keys looked up by get/gets/gat/gats")                               \
	X(get_hits, "lookups that found the key")                                       \
	X(get_misses, "lookups that did not")                                           \
	X(get_expired, "misses because the item had expired")                           \
	X(get_flushed, "misses because of flush_all")                                   \
	X(cmd_set, "store attempts: set/add/replace/append/prepend/cas")                \
	X(set_stored, "store attempts that stored")                                     \
	X(set_not_stored, "add on a present key, replace/append/prepend on a missing one") \
	X(set_too_large, "items over the item size limit")                              \
	X(set_no_memory, "stores refused: no memory could be reclaimed")                \
	X(cas_hits, "cas that stored")                                                  \
	X(cas_misses, "cas on a missing key")                                           \
	X(cas_badval, "cas on an item changed since it was read")                       \
	X(cmd_touch, "touch and gat requests")                                          \
	X(touch_hits, "touches that found the key")                                     \
	X(touch_misses, "touches that did not")                                         \
	X(delete_hits, "deletes that found the key")                                    \
	X(delete_misses, "deletes that did not")                                        \
	X(incr_hits, "incr that found the key")                                         \
	X(incr_misses, "incr on a missing key")                                         \
	X(decr_hits, "decr that found the key")                                         \
	X(decr_misses, "decr on a missing key")                                         \
	X(total_items, "items ever stored")                                             \
	X(lock_bucket, "hash bucket lock acquisitions (held for ns)")                   \
	X(lock_segment, "segment-level lock acquisitions: pool, chain, evict")          \
	X(evict_waits, "evict_lock found held: waited for another thread's eviction")   \
	X(read_retries, "lock-free reads retried after a concurrent reuse")               \
	X(udp_refused, "UDP requests refused: not a read, and --udp-writes is off")      \
	X(udp_capped, "UDP replies replaced by an error: over --udp-reply-max")          \
	X(rmw_segment, "atomic RMWs on segment headers: live counts, own open segment") \
	X(rmw_open_shared, "atomic RMWs on a shared open segment: write_off (a chunk), exp_max") \
	X(rmw_bucket, "atomic RMWs on hash slots outside the bucket lock: frequency bumps") \
	X(rmw_global, "atomic RMWs on engine-wide lines: gen counter, expired count")   \
	X(evict_passes, "evict_lock passes taken by this worker to find a free segment")  \
	X(evict_ns, "nanoseconds this worker held evict_lock")                           \
	X(set_bytes, "bytes of the items sets stored, as in the heap (lib/mrc's share)")

enum engine_worker_counter {
#define ENGINE_COUNTER_ENUM(name, desc) ENGINE_C_##name,
	ENGINE_WORKER_COUNTERS(ENGINE_COUNTER_ENUM)
#undef ENGINE_COUNTER_ENUM
	ENGINE_C_MAX
};

/* The classes a dump reports (engine_dump_item.cls): 1..ENGINE_CLASSES-1. */
#define ENGINE_CLASSES 6

/* Engine-wide state, filled by engine_stats(). Fields an engine does not
 * have stay 0. */
struct engine_stats {
	uint64_t counters[ENGINE_C_MAX]; /* summed over all workers, live and gone */
	uint64_t curr_items;
	uint64_t bytes;          /* bytes of live items (header + key + value) */
	uint64_t limit_maxbytes; /* the memory budget */
	uint64_t evictions;      /* live items removed to make room */
	uint64_t expired;        /* expired items removed by sweep/eviction */
	uint64_t reclaimed;      /* items whose memory was reused after expiry or delete */
	uint64_t evicted_unfetched;
	uint64_t expired_unfetched; /* expired items that were never read */
	uint64_t flushes;        /* flush_all executions */
	uint64_t locks_other;    /* lock acquisitions outside workers (sweep, flush) */
	/* lib/seg segment accounting */
	uint64_t seg_size;
	uint64_t seg_total;
	uint64_t seg_free;
	uint64_t seg_open;
	uint64_t seg_sealed;
	uint64_t seg_hash;       /* segments lent to hash overflow buckets */
	uint64_t seg_parked;     /* free segments held out of use by cache_memlimit */
	uint64_t seg_expired;    /* segments freed by expiration */
	uint64_t seg_evicted;    /* segments freed by eviction */
	uint64_t seg_merged;     /* merge passes */
	uint64_t seg_merge_reused; /* emptied run members reopened as merge destinations */
	uint64_t hash_buckets;   /* primary buckets */
	uint64_t hash_power;     /* log2 of hash_buckets, rounded down */
	uint64_t hash_power_init; /* log2 of the primary buckets at start */
	uint64_t hash_grow_max;   /* times hash_power_init's buckets the table may reach; 0 = fixed */
	uint64_t hash_is_expanding; /* 1 while the table grows */
	uint64_t hash_chain_mean_x100; /* items per chain, sampled, in hundredths */
	uint64_t hash_chain_max; /* longest chain in the sample, items */
	uint64_t hash_overflow;  /* overflow buckets in use */
	uint64_t hash_overflow_free; /* overflow buckets given back, for reuse */
	uint64_t seg_open_shared;    /* open segments that workers share */
	uint64_t seg_open_bytes;     /* bytes appended so far to open segments */
	uint64_t heap_bytes;
	uint64_t table_bytes;
	uint64_t table_grown_bytes; /* of table_bytes, what growth added beyond -m (lib/seg) */
	uint64_t meta_bytes;
	/* per class (lib/seg: TTL range; `stats items`, `stats slabs`) */
	struct {
		uint64_t items, bytes, segments;
		int64_t oldest; /* creation of its oldest segment; 0 = none */
	} classes[ENGINE_CLASSES];
};

struct engine;
struct engine_worker;

/* One live item, as a dump reports it (engine_dump). */
struct engine_dump_item {
	const void *key;     /* valid only during the callback */
	size_t klen;
	uint32_t vlen;
	uint32_t size;       /* bytes it takes in the engine: header, key, value */
	int64_t expires_at;  /* engine clock seconds; 0 = never */
	int64_t written_at;  /* engine clock seconds; lib/seg: its segment's creation */
	uint64_t cas;
	bool fetched;        /* read since it was written */
	unsigned cls;        /* the engine's class (lib/seg: the TTL range, 1..5) */
};

/* Where a dump goes on; zero it to start at the beginning. */
struct engine_dump_cursor {
	uint64_t pos;        /* engine's own: lib/seg, segment << 32 | offset */
	uint64_t gen;        /* lib/seg: the segment's gen when pos was recorded */
	bool done;           /* every item has been offered */
};

/* Takes one item; false: not now (the dump stops and offers it again on
 * the next call). */
typedef bool (*engine_dump_fn)(void *arg, const struct engine_dump_item *d);

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
	/* Optional (NULL: the engine has none); see engine_set_memory() and
	 * engine_dump() below. */
	int (*set_memory)(struct engine *e, size_t bytes);
	void (*dump)(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn,
		     void *arg);
};

/* A keyed request of a sampled key, as the engine saw it (lib/mrc's
 * miniature caches replay these): which operation, whether the key was
 * there, the item's bytes in the heap and its expiry. */
enum engine_access_op {
	ENGINE_ACCESS_GET,    /* get/gets/gat/gats and batched gets */
	ENGINE_ACCESS_SET,    /* a stored item (set/add/replace/cas/append/prepend) */
	ENGINE_ACCESS_DELETE, /* the key's item is gone (delete, or a store that
			       * removed it: expired at once, too large) */
};

struct engine_access {
	const void *key;
	uint32_t klen;
	uint32_t sample_hash; /* engine_sample_hash() of the engine's key hash */
	uint32_t size;        /* the item's bytes in the heap (hits and sets) */
	bool hit;             /* GET: found; DELETE: there was an item */
	uint8_t op;           /* enum engine_access_op */
	int64_t expires_at;   /* hits and sets: 0 = never */
	int64_t now;          /* engine clock */
};

typedef void (*engine_sample_fn)(void *arg, const struct engine_access *a);

/* Every engine object starts with this. sample_below is 0 (nothing
 * sampled) unless a sampler is attached (engine_attach_sampler): a keyed
 * request whose engine_sample_hash() is below it goes to sample_fn, and
 * the sampler lowers it as its sample fills. */
struct engine {
	const struct engine_ops *ops;
	uint64_t sample_below;
	engine_sample_fn sample_fn;
	void *sample_arg;
};

/* The sampling hash of a key from the hash the engine computed for its
 * table anyway: a multiplicative remix, so that sampling by the high
 * bits does not follow the table's bucket bits. */
static inline uint32_t
engine_sample_hash(uint32_t key_hash)
{
	return key_hash * 2654435761u;
}

/* Whether a key of this hash is sampled: the one comparison that an
 * unsampled key pays. */
static inline bool
engine_sampled(const struct engine *e, uint32_t key_hash)
{
	return engine_sample_hash(key_hash) < __atomic_load_n(&e->sample_below, __ATOMIC_RELAXED);
}

/* Attaches a sampler (before workers serve requests); fn NULL detaches. */
static inline void
engine_attach_sampler(struct engine *e, engine_sample_fn fn, void *arg, uint64_t below)
{
	e->sample_fn = fn;
	e->sample_arg = arg;
	__atomic_store_n(&e->sample_below, fn ? below : 0, __ATOMIC_RELEASE);
}

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

/* Offers the live items from *cur on to fn, without locks held across
 * items (lib/seg reads segments lock-free, checking each item's generation,
 * so writers are never held up), until fn declines one or the items run
 * out (cur->done). Items written, deleted or moved during a dump may be
 * offered or not, and an item moved by merge eviction may be offered
 * twice. Does nothing where the engine has no dump (engine_can_dump). */
void engine_dump(struct engine *e, struct engine_dump_cursor *cur, engine_dump_fn fn, void *arg);
static inline bool engine_can_dump(const struct engine *e) { return e->ops->dump != NULL; }

/* Helpers shared by the engines (engine.c). */

/* The default clock: monotonic seconds on the unix time scale. */
int64_t engine_clock_default(void *arg);

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
