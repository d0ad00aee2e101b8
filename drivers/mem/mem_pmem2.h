/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libpmem2, loaded when the first heap file is mapped (mem_pmem2.c). A
 * DRAM cache never maps one, and libpmem2 brings ndctl, daxctl, kmod,
 * udev, OpenSSL's libcrypto, zstd and lzma with it: about 2 MB of RSS at
 * every start, more than the whole of memcached's libraries. Its header
 * still gives every prototype: the table below holds pointers of exactly
 * those types, so a call through it is checked as a direct call would be.
 */
#ifndef SEGCACHED_MEM_PMEM2_H
#define SEGCACHED_MEM_PMEM2_H

#include <stddef.h>

#include <libpmem2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The functions drivers/mem calls (pmem2_errormsg and
 * pmem2_source_device_id are the header's macros for their U names). */
#define MEM_PMEM2_FUNCTIONS(X) \
	X(pmem2_errormsg) \
	X(pmem2_source_from_fd) \
	X(pmem2_source_alignment) \
	X(pmem2_source_size) \
	X(pmem2_source_delete) \
	X(pmem2_source_device_usc) \
	X(pmem2_source_device_id) \
	X(pmem2_config_new) \
	X(pmem2_config_delete) \
	X(pmem2_config_set_required_store_granularity) \
	X(pmem2_config_set_length) \
	X(pmem2_map_new) \
	X(pmem2_map_delete) \
	X(pmem2_map_get_address) \
	X(pmem2_map_get_store_granularity) \
	X(pmem2_get_persist_fn)

struct mem_pmem2 {
#define MEM_PMEM2_POINTER(f) __typeof__(&f) f;
	MEM_PMEM2_FUNCTIONS(MEM_PMEM2_POINTER)
#undef MEM_PMEM2_POINTER
};

/* The library, loaded on the first call (any thread; later calls return
 * the same table), or NULL with why in err: not installed, or a build
 * that lacks one of the functions. */
const struct mem_pmem2 *mem_pmem2(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_MEM_PMEM2_H */
