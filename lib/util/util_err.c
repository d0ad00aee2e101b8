/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * util_fail(): set-up code writes its error message into the caller's
 * buffer and returns -1 (util_err.h).
 */
#include "util/util_err.h"

#include <stdarg.h>
#include <stdio.h>

int
util_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
