/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The process's resident memory by kind (process_memory.h).
 */
#include "process_memory.h"

#include <stdio.h>
#include <string.h>

#include "util/util_heap.h"

int
process_memory_read(struct process_memory *m)
{
	char line[256];
	unsigned long long kb;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	memset(m, 0, sizeof(*m));
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			m->rss = kb << 10;
		else if (sscanf(line, "Anonymous: %llu kB", &kb) == 1)
			m->anon = kb << 10;
	}
	fclose(f);
	m->file = m->rss > m->anon ? m->rss - m->anon : 0;
	m->c_heap = util_heap_in_use();
	return 0;
}
