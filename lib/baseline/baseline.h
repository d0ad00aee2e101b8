/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/baseline: the rte_hash baseline engine. It implements the engine
 * interface of lib/engine/engine.h with DPDK's own parts only, so every
 * benchmark of lib/seg has a fair, competent reference built the way a
 * DPDK application would build a cache:
 *
 *  - index: rte_hash with lock-free readers and multiple writers
 *    (RW_CONCURRENCY_LF | MULTI_WRITER_ADD | EXT_TABLE), keyed by a 64-bit
 *    fingerprint of the key; the full key lives in the item and is always
 *    compared, so a fingerprint collision can never return a wrong value;
 *  - items: per-size-class rte_mempool pages (a memcached-like slab
 *    allocator whose pages are rte_mempools populated from rte_malloc);
 *  - safe reclamation: rte_rcu_qsbr with an rte_rcu_qsbr_dq defer queue;
 *  - writers of one key serialise on a striped rte_spinlock, which makes
 *    add/cas/incr/append atomic; readers take no lock.
 *
 * Memory per object and the remaining limits are described in baseline.c.
 */
#ifndef SEGCACHED_BASELINE_H
#define SEGCACHED_BASELINE_H

#include <stddef.h>

#include "engine/engine.h"
#include "engine/engine_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a baseline engine from cfg. On failure returns NULL with a
 * message in err (errlen bytes, may be 0).
 *
 * The DPDK EAL must be initialised by the caller (rte_eal_init) before this
 * call, and the EAL must have at least cfg->memory bytes of memory to give
 * (with --no-huge, pass -m accordingly). Threads that are not EAL lcores
 * are registered with rte_thread_register() by engine_worker_create() (and
 * for the duration of engine_expire()), because rte_hash's multi-writer
 * mode needs an lcore id in every writing thread; at most RTE_MAX_LCORE
 * threads can hold an lcore id at once.
 *
 * cfg fields used: memory (required), item_max, eviction (ENGINE_EVICT_NONE
 * refuses writes when full; ENGINE_EVICT_RANDOM evicts a random item of the
 * size class; the others use sampled LRU), max_workers, cas_disabled,
 * hash_power, clock, clock_arg. segment_size, heap and heap_len are lib/seg
 * settings and are ignored. */
struct engine *baseline_create(const struct engine_config *cfg, char *err,
			       size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_BASELINE_H */
