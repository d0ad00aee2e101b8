/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What an engine counts and reports: the per-worker counters (one
 * X-macro table, ENGINE_WORKER_COUNTERS, that both engines and `stats`
 * use) and struct engine_stats, the engine-wide state engine_stats()
 * fills.
 */
#ifndef SEGCACHED_ENGINE_STATS_H
#define SEGCACHED_ENGINE_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
	X(set_streamed, "stores whose value went straight into its item as it arrived") \
	X(set_stream_lost, "of them, items evicted or flushed before their value was complete") \
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
	X(admin_refused, "admin port requests refused: not counters, and --admin-commands is not all") \
	X(rmw_segment, "atomic RMWs on segment headers: live counts, own open segment") \
	X(rmw_open_shared, "atomic RMWs on a shared open segment: write_off (a chunk), exp_max") \
	X(rmw_bucket, "atomic RMWs on hash slots outside the bucket lock: frequency bumps") \
	X(rmw_global, "atomic RMWs on engine-wide lines: the gen counter")               \
	X(evict_passes, "evict_lock passes taken by this worker to find a free segment")  \
	X(evict_ns, "nanoseconds this worker held evict_lock")                           \
	X(evict_wait_ns, "nanoseconds this worker waited for evict_lock or a pass to end") \
	X(expired_unlinked, "expired items this worker's reads and writes took out of the table") \
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
	uint64_t evict_ns_other; /* ns evict_lock was held outside workers (control thread) */
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

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_ENGINE_STATS_H */
