/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The heap backings of mem_region.h: anonymous memory, an EAL hugepage
 * memzone, or a file mapped with libpmem2 (opened and guarded by
 * mem_file.c; libpmem2 loaded by mem_pmem2.c when the first file is).
 */
#include "drivers/mem/mem_region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_memzone.h>
#include "drivers/mem/mem_file.h"
#include "drivers/mem/mem_pmem2.h"
#include "util/util_err.h"

/* Segments are laid out from the region's start; 2 MiB alignment lets the
 * first segment start on a huge page boundary for either backing. */
#define MEM_REGION_ALIGN ((size_t)2 << 20)


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
		return util_fail(err, errlen, "cannot map %zu bytes of anonymous memory: %s",
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
		return util_fail(err, errlen,
			    "no hugepage memory: the EAL runs with --no-huge or has no hugepages "
			    "reserved (see docs/operations.md)");
	mz = rte_memzone_reserve_aligned(name, len, SOCKET_ID_ANY, 0,
					 MEM_REGION_ALIGN);
	if (mz == NULL)
		return util_fail(err, errlen,
			    "cannot reserve %zu bytes of hugepage memory: %s "
			    "(reserve more hugepages, or use --heap anon)",
			    len, rte_strerror(rte_errno));
	r->addr = mz->addr;
	r->len = len;
	r->kind = MEM_REGION_HUGEPAGE;
	r->mz = mz;
	return 0;
}

/* The device id (hashed, FNV-1a) and unsafe shutdown count of the media
 * under src, where libpmem2 can tell (DAX on PMEM, built with ndctl). */
static void
media_of(struct mem_region *r, const struct mem_pmem2 *pm, const struct pmem2_source *src)
{
	char id[256];
	size_t len = 0;
	uint64_t usc, hash = 0xcbf29ce484222325ull;

	if (pm->pmem2_source_device_usc(src, &usc) != 0 ||
	    pm->pmem2_source_device_id(src, NULL, &len) != 0 || len == 0 || len > sizeof(id) ||
	    pm->pmem2_source_device_id(src, id, &len) != 0)
		return;
	for (size_t i = 0; i < len && id[i]; i++)
		hash = (hash ^ (uint8_t)id[i]) * 0x100000001b3ull;
	r->media_known = true;
	r->media_id = hash;
	r->media_usc = usc;
}

static int
file_create(struct mem_region *r, const char *path, size_t len, char *err,
	    size_t errlen)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	struct stat st;
	size_t have = 0, align = 1, map_len;
	int fd, rc;

	/* loaded now, not at every start (mem_pmem2.h) */
	const struct mem_pmem2 *pm = mem_pmem2(err, errlen);

	if (pm == NULL)
		return -1;
	/* not through a link, the server user's only (mem_file.h) */
	fd = mem_file_open(path, r->warning, sizeof(r->warning), err, errlen);
	if (fd < 0)
		return -1;
	/* One server per file: two would write the same segments, and the
	 * saved cache of a warm restart belongs to one of them. The lock goes
	 * with the descriptor, so a crash releases it too. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			util_fail(err, errlen,
				  "%s is in use by another process (another segcached serves "
				  "from it: stop that one first, or give each its own --heap-file)",
				  path);
		else
			util_fail(err, errlen, "cannot lock %s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		util_fail(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if (pm->pmem2_source_from_fd(&src, fd) != 0 ||
	    pm->pmem2_source_alignment(src, &align) != 0) {
		util_fail(err, errlen, "%s: %s", path, pm->pmem2_errormsg());
		goto out;
	}
	/* A mapping's length must be a multiple of the source's alignment:
	 * the page size for a file, 2 MiB or 1 GiB for a device DAX. The
	 * heap uses len bytes of it. */
	map_len = (len + align - 1) / align * align;
	/* A regular file is grown to the mapping's size with its blocks
	 * allocated, so a full file system fails now, not with SIGBUS when
	 * a segment is first written. A device DAX has the size it has. */
	if (S_ISREG(st.st_mode) && (size_t)st.st_size < map_len) {
		rc = posix_fallocate(fd, 0, (off_t)map_len);
		if (rc != 0) {
			util_fail(err, errlen, "cannot size %s to %zu bytes: %s", path,
			     map_len, strerror(rc));
			goto out;
		}
	}
	if (pm->pmem2_source_size(src, &have) != 0) {
		util_fail(err, errlen, "%s: %s", path, pm->pmem2_errormsg());
		goto out;
	}
	if (have < map_len) {
		util_fail(err, errlen, "%s holds %zu bytes, the heap needs %zu (%zu rounded up to "
			  "the device's alignment of %zu)", path, have, map_len, len, align);
		goto out;
	}
	/* Page granularity is the least we require, so the mapping works on
	 * any file; pmem2 still reports (and flushes at) the finest the
	 * mapping really has: cache lines on DAX, bytes with eADR. */
	if (pm->pmem2_config_new(&cfg) != 0 ||
	    pm->pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) != 0 ||
	    pm->pmem2_config_set_length(cfg, map_len) != 0 ||
	    pm->pmem2_map_new(&map, cfg, src) != 0) {
		util_fail(err, errlen, "cannot map %s: %s", path, pm->pmem2_errormsg());
		goto out;
	}
	r->addr = pm->pmem2_map_get_address(map);
	r->len = len;
	r->kind = MEM_REGION_FILE;
	r->persist = pm->pmem2_get_persist_fn(map);
	r->granularity = (int)pm->pmem2_map_get_store_granularity(map);
	r->map = map;
	r->fd = fd;
	fd = -1;
	media_of(r, pm, src);
	/* a truncated file or a media error: a said stop, not a silent death */
	mem_file_guard(r->addr, map_len, path);
out:
	pm->pmem2_config_delete(&cfg);
	pm->pmem2_source_delete(&src);
	if (fd >= 0)
		close(fd);
	return r->addr != NULL ? 0 : -1;
}

int
mem_region_create(struct mem_region *r, enum mem_region_kind kind,
		  const char *name, size_t len, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return util_fail(err, errlen, "empty memory region");
	switch (kind) {
	case MEM_REGION_ANON:
		return anon_create(r, len, err, errlen);
	case MEM_REGION_HUGEPAGE:
		return hugepage_create(r, name, len, err, errlen);
	case MEM_REGION_FILE:
		return file_create(r, name, len, err, errlen);
	}
	return util_fail(err, errlen, "unknown memory region kind %d", (int)kind);
}

void
mem_region_persist(const struct mem_region *r, const void *addr, size_t len)
{
	if (r->kind == MEM_REGION_FILE && r->persist != NULL && len > 0)
		r->persist(addr, len);
}

const char *
mem_region_granularity_name(const struct mem_region *r)
{
	if (r->kind != MEM_REGION_FILE)
		return "none (volatile)";
	switch ((enum pmem2_granularity)r->granularity) {
	case PMEM2_GRANULARITY_BYTE: return "byte (eADR: a fence)";
	case PMEM2_GRANULARITY_CACHE_LINE: return "cache line (DAX: flush and fence)";
	case PMEM2_GRANULARITY_PAGE: return "page (msync)";
	}
	return "unknown";
}

void
mem_region_destroy(struct mem_region *r)
{
	if (r->addr == NULL)
		return;
	switch (r->kind) {
	case MEM_REGION_HUGEPAGE:
		rte_memzone_free(r->mz);
		break;
	case MEM_REGION_FILE:
		mem_file_unguard(r->addr);
		/* loaded: the region was mapped with it */
		mem_pmem2(NULL, 0)->pmem2_map_delete(&r->map);
		close(r->fd);
		break;
	case MEM_REGION_ANON:
		munmap(r->addr, r->len);
		break;
	}
	memset(r, 0, sizeof(*r));
}

const char *
mem_region_kind_name(enum mem_region_kind kind)
{
	switch (kind) {
	case MEM_REGION_ANON: return "anonymous memory";
	case MEM_REGION_HUGEPAGE: return "hugepages";
	case MEM_REGION_FILE: return "a mapped file (libpmem2)";
	}
	return "unknown";
}
