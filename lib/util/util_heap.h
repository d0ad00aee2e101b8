/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The C heap in use, for telemetry: what per-connection state costs beyond
 * the cache's own memory (-m), on either network stack; and giving its
 * free memory back to the system.
 */
#ifndef SEGCACHED_UTIL_HEAP_H
#define SEGCACHED_UTIL_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes glibc's malloc has handed out and not had back, over every arena
 * (mallinfo2: chunks in use plus mmap'd ones). It takes each arena's lock
 * for a moment: for telemetry, not for a request path. */
uint64_t util_heap_in_use(void);

/* Gives the C heap's free memory back to the system when enough was
 * freed since the last call that did (min_bytes more free bytes in the
 * arenas than then): glibc keeps what a thread freed in its arena, and a
 * burst of large connection buffers would otherwise stay resident after
 * they are gone. One thread calls it (the control thread, once a second);
 * it takes each arena's lock for as long as its walk lasts. Returns
 * whether it trimmed. */
bool util_heap_give_back(uint64_t min_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_UTIL_HEAP_H */
