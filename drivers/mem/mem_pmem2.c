/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libpmem2 loaded at run time (mem_pmem2.h): dlopen of its soname, the
 * ABI the header was built against, and dlsym of each function.
 */
#include "drivers/mem/mem_pmem2.h"

#include <pthread.h>
#include <stdbool.h>

#include "util/util_dl.h"
#include "util/util_err.h"

/* A name after macro expansion (pmem2_errormsg -> "pmem2_errormsgU"). */
#define MEM_PMEM2_NAME(f) MEM_PMEM2_NAME_(f)
#define MEM_PMEM2_NAME_(f) #f

static struct mem_pmem2 lib;
static bool loaded;
static char why[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
load(void)
{
	/* the soname of the libpmem2 whose header we compile against (PMDK 1.x) */
	static const char *const soname[] = { "libpmem2.so.1" };
	static const struct util_dl_sym syms[] = {
#define MEM_PMEM2_SYM(f) { MEM_PMEM2_NAME(f), (void **)&lib.f },
		MEM_PMEM2_FUNCTIONS(MEM_PMEM2_SYM)
#undef MEM_PMEM2_SYM
	};

	loaded = util_dl_open(soname, 1, syms, sizeof(syms) / sizeof(syms[0]),
			      "heap files need libpmem2 (Debian package libpmem2-1)", why,
			      sizeof(why)) != NULL;
}

const struct mem_pmem2 *
mem_pmem2(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (!loaded) {
		if (err != NULL)
			util_fail(err, errlen, "%s", why);
		return NULL;
	}
	return &lib;
}
