/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What follows "unknown option", on the command line and in a config
 * file: for a memcached option segcached lacks, what to do instead; for
 * a typo, the closest option's name.
 */
#include "options_private.h"

#include <limits.h>
#include <string.h>

#include <rte_common.h>

/* memcached options segcached does not have, and what to do instead: the
 * hint that follows "unknown option" on the command line and in a file. */
static const struct {
	int letter;
	const char *name;
	const char *hint;
} memcached_only[] = {
	{ 'u', "user",
	  "segcached does not switch users: start it as that user (systemd's User=, "
	  "see tools/systemd/segcached.service; or runuser -u USER -- segcached ...)" },
	{ 'd', "daemon",
	  "segcached has no daemon mode: run it under systemd (tools/systemd/), or in "
	  "the background with '&'" },
	{ 'P', "pid-file",
	  "segcached writes no pid file: systemd tracks the process (MainPID); after "
	  "'&' a shell has it in $!" },
	{ 'P', "pidfile", /* memcached's long name */
	  "segcached writes no pid file: systemd tracks the process (MainPID); after "
	  "'&' a shell has it in $!" },
};

/* Every letter of memcached 1.6.18's -h. */
static const char memcached_letters[] = "pUsaAldrumMckvhiVPfnLDtRCbBISFXWYeZoN";

bool
options_memcached_letter(int letter)
{
	return letter > 0 && letter < 128 && strchr(memcached_letters, letter) != NULL;
}

/* ": HINT" for a memcached option segcached lacks, else "". By letter, or
 * by long name (with or without leading dashes and "=value"). */
const char *
options_unknown_hint(int letter, const char *name)
{
	size_t n;

	if (name != NULL) {
		name += strspn(name, "-");
		n = strcspn(name, "=");
	}
	for (size_t i = 0; i < RTE_DIM(memcached_only); i++)
		if ((letter != 0 && letter == memcached_only[i].letter) ||
		    (name != NULL && strlen(memcached_only[i].name) == n &&
		     strncmp(name, memcached_only[i].name, n) == 0))
			return memcached_only[i].hint;
	return NULL;
}

/* Edit distance of a[0..an) and b, capped: enough to catch a typo. */
static unsigned
edit_distance(const char *a, size_t an, const char *b)
{
	unsigned row[64], prev, cur;
	size_t bn = strlen(b), i, j;

	if (an >= RTE_DIM(row) || bn >= RTE_DIM(row))
		return UINT_MAX;
	for (j = 0; j <= bn; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= an; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (j = 1; j <= bn; j++) {
			cur = row[j];
			row[j] = RTE_MIN(RTE_MIN(row[j] + 1, row[j - 1] + 1),
					 prev + (a[i - 1] != b[j - 1]));
			prev = cur;
		}
	}
	return row[bn];
}

/* The long option closest to a mistyped name (with or without leading
 * dashes and "=value"), or NULL when none is within two edits. */
const char *
options_closest(const char *name)
{
	const char *best = NULL;
	unsigned best_d = 3;
	size_t n;

	name += strspn(name, "-");
	n = strcspn(name, "=");
	if (n < 3)
		return NULL;
	size_t count;
	const struct opt_desc *table = options_table(&count);

	for (size_t i = 0; i < count; i++) {
		unsigned d = edit_distance(name, n, table[i].name);

		if (d < best_d) {
			best_d = d;
			best = table[i].name;
		}
	}
	return best;
}

