/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A minimal streaming JSON writer: it places the commas and escapes
 * strings, so the report code reads as a list of fields.
 */
#ifndef SB_JSON_H
#define SB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_DEPTH_MAX 16

struct jw {
	FILE *f;
	int depth;
	bool has_item[JW_DEPTH_MAX];
};

void jw_init(struct jw *j, FILE *f);
/* key is NULL inside an array (and for the top-level value). */
void jw_object(struct jw *j, const char *key);
void jw_object_end(struct jw *j);
void jw_array(struct jw *j, const char *key);
void jw_array_end(struct jw *j);
void jw_str(struct jw *j, const char *key, const char *v);
void jw_u64(struct jw *j, const char *key, uint64_t v);
void jw_i64(struct jw *j, const char *key, int64_t v);
/* NaN and infinities (a ratio with nothing to divide by) become null. */
void jw_dbl(struct jw *j, const char *key, double v);
void jw_bool(struct jw *j, const char *key, bool v);
void jw_null(struct jw *j, const char *key);

#endif /* SB_JSON_H */
