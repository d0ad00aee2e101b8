/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What memcached's -r and -k ask of the process: a core file limit raised
 * to its most, and all memory locked once the heap is mapped.
 */
#ifndef SEGCACHED_PROCESS_LIMITS_H
#define SEGCACHED_PROCESS_LIMITS_H

#include <stddef.h>

/* -r: RLIMIT_CORE unlimited, or as high as the hard limit allows. Returns
 * the soft limit now set (RLIM_INFINITY as (size_t)-1), or 0 with why in
 * err when it could not be raised. */
size_t process_raise_core_limit(char *err, size_t errlen);

/* -k: mlockall(MCL_CURRENT | MCL_FUTURE), as memcached does. 0, or -1 with
 * why and the fix (the memlock limit) in err. */
int process_lock_memory(size_t heap_bytes, char *err, size_t errlen);

#endif /* SEGCACHED_PROCESS_LIMITS_H */
