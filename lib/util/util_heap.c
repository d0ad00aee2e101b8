/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * util_heap_in_use(): the C heap's bytes in use, from glibc's mallinfo2
 * (util_heap.h).
 */
#include "util/util_heap.h"

#include <malloc.h>

uint64_t
util_heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}
