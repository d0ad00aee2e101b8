/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A shared library loaded at run time with the functions we call in it:
 * for libraries only some starts need (libpmem2 for heap files,
 * libmicrohttpd for /metrics), so that the others neither map them nor
 * their dependencies (issue 36: RSS at small -m).
 */
#ifndef SEGCACHED_UTIL_DL_H
#define SEGCACHED_UTIL_DL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A function to find: its name and where its address goes. */
struct util_dl_sym {
	const char *name;
	void **slot;
};

/* Opens the first of the sonames that loads (RTLD_NOW | RTLD_LOCAL |
 * RTLD_NODELETE: the functions stay valid for the process) and fills
 * every slot; the handle, or NULL with why in err ("<need>: <dlerror>"
 * when none loads, "<soname> has no <symbol>" when one is missing). */
void *util_dl_open(const char *const *sonames, size_t n_sonames,
		   const struct util_dl_sym *syms, size_t n_syms, const char *need,
		   char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_UTIL_DL_H */
