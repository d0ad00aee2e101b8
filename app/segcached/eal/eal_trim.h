/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Gives back the memory of the shared objects the EAL loads that the
 * posix stack never calls (eal_trim.c).
 */
#ifndef SEGCACHED_EAL_TRIM_H
#define SEGCACHED_EAL_TRIM_H

#include <stddef.h>

/* The files mapped before rte_eal_init(). */
struct eal_trim {
	char **paths; /* sorted */
	size_t n;
};

/* Before rte_eal_init(): notes which files the process maps. 0, or -1
 * (out of memory, or no /proc: eal_trim_release() then does nothing). */
int eal_trim_snapshot(struct eal_trim *t);

/* After rte_eal_init(), on the posix stack: drops from this process the
 * pages of every file mapped since the snapshot (the EAL's drivers and the
 * libraries they need) that are the file's own, read-only mappings only
 * (eal_trim.c says why this loses nothing). Returns the resident bytes
 * dropped. Frees the snapshot. */
size_t eal_trim_release(struct eal_trim *t);

/* Frees the snapshot (what eal_trim_release() does too). */
void eal_trim_free(struct eal_trim *t);

#endif /* SEGCACHED_EAL_TRIM_H */
