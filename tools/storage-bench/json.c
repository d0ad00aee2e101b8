/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The minimal streaming JSON writer (json.h): commas placed, strings
 * escaped.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void
jw_init(struct jw *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->has_item[0] = false;
}

static void
jw_string_body(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Comma, newline and indentation before a member, then its key. */
static void
jw_member(struct jw *j, const char *key)
{
	if (j->depth > 0) {
		if (j->has_item[j->depth])
			fputc(',', j->f);
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	j->has_item[j->depth] = true;
	if (key) {
		jw_string_body(j->f, key);
		fputs(": ", j->f);
	}
}

static void
jw_open(struct jw *j, const char *key, char c)
{
	jw_member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JW_DEPTH_MAX)
		j->depth++;
	j->has_item[j->depth] = false;
}

static void
jw_close(struct jw *j, char c)
{
	bool had = j->has_item[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void jw_object(struct jw *j, const char *key) { jw_open(j, key, '{'); }
void jw_object_end(struct jw *j) { jw_close(j, '}'); }
void jw_array(struct jw *j, const char *key) { jw_open(j, key, '['); }
void jw_array_end(struct jw *j) { jw_close(j, ']'); }

void
jw_str(struct jw *j, const char *key, const char *v)
{
	jw_member(j, key);
	jw_string_body(j->f, v);
}

void
jw_u64(struct jw *j, const char *key, uint64_t v)
{
	jw_member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void
jw_i64(struct jw *j, const char *key, int64_t v)
{
	jw_member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void
jw_dbl(struct jw *j, const char *key, double v)
{
	jw_member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void
jw_bool(struct jw *j, const char *key, bool v)
{
	jw_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void
jw_null(struct jw *j, const char *key)
{
	jw_member(j, key);
	fputs("null", j->f);
}
