/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Error messages for set-up code that reports failures into a caller's
 * buffer (options, heap backings, ports) instead of printing them.
 */
#ifndef SEGCACHED_UTIL_ERR_H
#define SEGCACHED_UTIL_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats a message into err[errlen] and returns -1, so that a failing
 * path reads `return util_fail(err, errlen, "...", ...);`. */
int util_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_UTIL_ERR_H */
