/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libpmem2 loaded at run time (mem_pmem2.h): dlopen of its soname, the
 * ABI the header was built against, and dlsym of each function.
 */
#include "drivers/mem/mem_pmem2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/util_err.h"

/* The soname of the libpmem2 whose header we compile against (PMDK 1.x). */
#define MEM_PMEM2_SONAME "libpmem2.so.1"

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
	/* RTLD_NODELETE: the persist function stays valid for the process */
	void *h = dlopen(MEM_PMEM2_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	if (h == NULL) {
		snprintf(why, sizeof(why),
			 "heap files need libpmem2 (Debian package libpmem2-1): %s", dlerror());
		return;
	}
#define MEM_PMEM2_LOAD(f) \
	*(void **)&lib.f = dlsym(h, MEM_PMEM2_NAME(f)); \
	if (lib.f == NULL) { \
		snprintf(why, sizeof(why), "%s has no %s", MEM_PMEM2_SONAME, MEM_PMEM2_NAME(f)); \
		dlclose(h); \
		return; \
	}
	MEM_PMEM2_FUNCTIONS(MEM_PMEM2_LOAD)
#undef MEM_PMEM2_LOAD
	loaded = true;
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
