/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Heap backings: one contiguous virtual region that an engine lays its
 * segments out in (engine_config.heap / heap_len).
 *
 *  - MEM_REGION_ANON: anonymous private memory, reserved lazily
 *    (MAP_NORESERVE) and marked for transparent huge pages where the kernel
 *    allows them. Works everywhere, needs nothing from the EAL.
 *  - MEM_REGION_HUGEPAGE: an rte_memzone in the EAL's hugepage memory
 *    (2 MiB or 1 GiB pages: fewer TLB misses, never swapped). Needs an
 *    initialised EAL that has hugepages (not --no-huge).
 *  - MEM_REGION_FILE: a file mapped with libpmem2: a file on a DAX file
 *    system or a device DAX (/dev/daxX.Y) puts the heap on persistent
 *    memory in App Direct mode; any other file works too (page cache,
 *    /dev/shm). The file outlives the process: lib/seg's warm restart
 *    keeps the cache in it across a graceful restart, made durable with
 *    mem_region_persist().
 */
#ifndef SEGCACHED_MEM_REGION_H
#define SEGCACHED_MEM_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mem_region_kind {
	MEM_REGION_ANON,
	MEM_REGION_HUGEPAGE,
	MEM_REGION_FILE,
};

struct rte_memzone;
struct pmem2_map;

struct mem_region {
	void *addr;
	size_t len;
	enum mem_region_kind kind;
	const struct rte_memzone *mz; /* MEM_REGION_HUGEPAGE only */
	struct pmem2_map *map;        /* MEM_REGION_FILE only */
	int fd;                       /* MEM_REGION_FILE only */
	/* MEM_REGION_FILE: libpmem2's persist function for the mapping's
	 * store granularity (byte: a fence; cache line: flushes and a fence;
	 * page: msync). */
	void (*persist)(const void *addr, size_t len);
	int granularity;              /* enum pmem2_granularity */
	/* MEM_REGION_FILE on media that libpmem2 can identify (PMEM with
	 * ndctl): a hash of the device id and its unsafe shutdown count, for
	 * the warm restart to compare (seg_restart_area). */
	bool media_known;
	uint64_t media_id, media_usc;
	/* MEM_REGION_FILE: a warning about where the file is, for the
	 * caller to log ("" when none; mem_file.h) */
	char warning[512];
};

/* True when the EAL has hugepage memory to reserve from (call after
 * rte_eal_init()). */
bool mem_region_hugepages_available(void);

/* Reserves len bytes of the given kind. name: the memzone name for
 * hugepages (at most 31 characters), the path for a file (created when
 * missing and grown to len rounded up to the source's alignment, the page
 * size; a device DAX must hold len rounded up to its alignment, 2 MiB or
 * 1 GiB; refused when it is a link, another user's, or open to group or
 * others, and guarded against SIGBUS: mem_file.h). Returns 0, or -1 with
 * a message. */
int mem_region_create(struct mem_region *r, enum mem_region_kind kind,
		      const char *name, size_t len, char *err, size_t errlen);

/* Makes stores to [addr, addr + len) inside a file region durable
 * (libpmem2's persist function); nothing to do for the other kinds, whose
 * contents die with the process. */
void mem_region_persist(const struct mem_region *r, const void *addr, size_t len);

/* "byte (eADR)", "cache line (DAX)" or "page (msync)" for a file region. */
const char *mem_region_granularity_name(const struct mem_region *r);

/* Releases the region; a zeroed region is fine. */
void mem_region_destroy(struct mem_region *r);

const char *mem_region_kind_name(enum mem_region_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_MEM_REGION_H */
