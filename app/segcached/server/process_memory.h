/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the process holds in RAM, as an operator's `ps` and `top` see it
 * (RSS), split the way the sizing line names it: the program and its
 * libraries (file-backed pages) and anonymous memory (the C heap, thread
 * stacks, and the pages of the item heap and table written so far).
 */
#ifndef SEGCACHED_PROCESS_MEMORY_H
#define SEGCACHED_PROCESS_MEMORY_H

#include <stdint.h>

struct process_memory {
	uint64_t rss;       /* resident bytes */
	uint64_t file;      /* of them, file-backed: the program, its libraries */
	uint64_t anon;      /* anonymous */
	uint64_t c_heap;    /* malloc's bytes in use (inside anon) */
};

/* From /proc/self/smaps_rollup and mallinfo2; 0 or -1 (zeros) when
 * /proc is not mounted. */
int process_memory_read(struct process_memory *m);

#endif /* SEGCACHED_PROCESS_MEMORY_H */
