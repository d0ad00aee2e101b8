/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 */
#include "mem_region.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_memzone.h>

/* Segments are laid out from the region's start; 2 MiB alignment lets the
 * first segment start on a huge page boundary for either backing. */
#define MEM_REGION_ALIGN ((size_t)2 << 20)

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

bool
mem_region_hugepages_available(void)
{
	/* Only meaningful after rte_eal_init(), which the caller has done. */
	return rte_eal_has_hugepages() != 0;
}

static int
anon_create(struct mem_region *r, size_t len, char *err, size_t errlen)
{
	void *p;

	/* MAP_NORESERVE: pages are committed as segments are first written,
	 * so a large --memory does not fail on hosts with overcommit limits
	 * before the cache has grown. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return fail(err, errlen, "cannot map %zu bytes of anonymous memory: %s",
			    len, strerror(errno));
	/* Best effort: transparent huge pages cut TLB misses on a heap that
	 * is touched at random; the kernel may have them disabled. */
	(void)madvise(p, len, MADV_HUGEPAGE);
	r->addr = p;
	r->len = len;
	r->kind = MEM_REGION_ANON;
	r->mz = NULL;
	return 0;
}

static int
hugepage_create(struct mem_region *r, const char *name, size_t len, char *err,
		size_t errlen)
{
	const struct rte_memzone *mz;

	if (!mem_region_hugepages_available())
		return fail(err, errlen,
			    "no hugepage memory: the EAL runs with --no-huge or has no hugepages reserved (see docs/operations.md)");
	mz = rte_memzone_reserve_aligned(name, len, SOCKET_ID_ANY, 0,
					 MEM_REGION_ALIGN);
	if (mz == NULL)
		return fail(err, errlen,
			    "cannot reserve %zu bytes of hugepage memory: %s (reserve more hugepages, or use --heap anon)",
			    len, rte_strerror(rte_errno));
	r->addr = mz->addr;
	r->len = len;
	r->kind = MEM_REGION_HUGEPAGE;
	r->mz = mz;
	return 0;
}

int
mem_region_create(struct mem_region *r, enum mem_region_kind kind,
		  const char *name, size_t len, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return fail(err, errlen, "empty memory region");
	switch (kind) {
	case MEM_REGION_ANON:
		return anon_create(r, len, err, errlen);
	case MEM_REGION_HUGEPAGE:
		return hugepage_create(r, name, len, err, errlen);
	}
	return fail(err, errlen, "unknown memory region kind %d", (int)kind);
}

void
mem_region_destroy(struct mem_region *r)
{
	if (r->addr == NULL)
		return;
	if (r->kind == MEM_REGION_HUGEPAGE)
		rte_memzone_free(r->mz);
	else
		munmap(r->addr, r->len);
	memset(r, 0, sizeof(*r));
}

const char *
mem_region_kind_name(enum mem_region_kind kind)
{
	switch (kind) {
	case MEM_REGION_ANON: return "anonymous memory";
	case MEM_REGION_HUGEPAGE: return "hugepages";
	}
	return "unknown";
}
