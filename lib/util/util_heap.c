/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * util_heap_in_use(): the C heap's bytes in use, from glibc's mallinfo2;
 * util_heap_give_back(): malloc_trim when much was freed (util_heap.h).
 */
#include "util/util_heap.h"

#include <malloc.h>

uint64_t
util_heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

bool
util_heap_give_back(uint64_t min_bytes)
{
	/* free bytes in the arenas after the last trim: what trimming could
	 * not give back (pieces of pages between chunks in use), which
	 * malloc still counts as free */
	static uint64_t left_free;
	struct mallinfo2 mi = mallinfo2();

	if (mi.fordblks < left_free)
		left_free = mi.fordblks; /* reused since */
	if (mi.fordblks < left_free + min_bytes)
		return false;
	malloc_trim(0);
	left_free = mallinfo2().fordblks;
	return true;
}
