/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The C heap in use, for telemetry: what per-connection state costs beyond
 * the cache's own memory (-m), on either network stack.
 */
#ifndef SEGCACHED_UTIL_HEAP_H
#define SEGCACHED_UTIL_HEAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes glibc's malloc has handed out and not had back, over every arena
 * (mallinfo2: chunks in use plus mmap'd ones). It takes each arena's lock
 * for a moment: for telemetry, not for a request path. */
uint64_t util_heap_in_use(void);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_UTIL_HEAP_H */
