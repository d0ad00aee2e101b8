/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * rte_eal_init() with the EAL's usage dump held back (eal_start.c).
 */
#ifndef SEGCACHED_EAL_START_H
#define SEGCACHED_EAL_START_H

#include <stddef.h>

#include "eal_args.h"

/* rte_eal_init() on ea's EAL words; its result, with rte_errno kept.
 * Anything the EAL prints on stdout is passed on when it starts, dropped
 * when it refuses its options (EINVAL); then `bad` holds the first given
 * option the EAL's usage does not list, or "" when each is listed (a bad
 * value: the EAL's own log line names the option). */
int eal_start(struct eal_args *ea, char *bad, size_t badlen);

#endif /* SEGCACHED_EAL_START_H */
