/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's -r (core files as large as allowed) and -k (memory locked),
 * for the process as a whole (process_limits.h).
 */
#include "process_limits.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "util/util_err.h"

size_t
process_raise_core_limit(char *err, size_t errlen)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	/* memcached tries unlimited first, then the hard limit. */
	if (setrlimit(RLIMIT_CORE, &rl) == 0)
		return (size_t)-1;
	if (getrlimit(RLIMIT_CORE, &rl) < 0) {
		util_fail(err, errlen, "getrlimit(RLIMIT_CORE): %s", strerror(errno));
		return 0;
	}
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_CORE, &rl) < 0) {
		util_fail(err, errlen, "setrlimit(RLIMIT_CORE, %llu): %s",
			  (unsigned long long)rl.rlim_max, strerror(errno));
		return 0;
	}
	if (rl.rlim_cur == 0) {
		util_fail(err, errlen, "the hard core file limit is 0 (ulimit -Hc, or "
			  "LimitCORE= in a systemd unit)");
		return 0;
	}
	return rl.rlim_cur == RLIM_INFINITY ? (size_t)-1 : (size_t)rl.rlim_cur;
}

int
process_lock_memory(size_t heap_bytes, char *err, size_t errlen)
{
	struct rlimit rl;
	int e;

	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		return 0;
	e = errno;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return util_fail(err, errlen,
				 "-k: cannot lock memory (mlockall: %s): the locked-memory limit "
				 "is %llu KiB and the heap alone is %zu MiB; raise it (ulimit -l "
				 "unlimited, or LimitMEMLOCK=infinity in a systemd unit) or leave "
				 "out -k", strerror(e), (unsigned long long)rl.rlim_cur >> 10,
				 heap_bytes >> 20);
	return util_fail(err, errlen, "-k: cannot lock memory (mlockall: %s); leave out -k",
			 strerror(e));
}
