/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The keys a burst's requests will read, for engine_prefetch() in the
 * first phase of a two-phase RX burst. A scan, not a parse: the bytes
 * may be the middle of a request or garbage, and a wrong key costs only
 * a wasted prefetch; cmd_process() parses them properly afterwards.
 */
#include <string.h>

#include "cmd/cmd.h"

/* The key tokens of one get line starting at p (after the verb and its
 * space), up to its end; only the first for mg, whose flags follow. */
static unsigned
line_keys(const char *p, const char *end, bool first_only, struct engine_key *keys,
	  unsigned max)
{
	unsigned n = 0;

	while (p < end && n < max) {
		const char *t = p;

		while (p < end && *p != ' ' && *p != '\r' && *p != '\n')
			p++;
		if (p > t && (size_t)(p - t) <= ENGINE_KEY_MAX)
			keys[n++] = (struct engine_key){ t, (size_t)(p - t) };
		if (p == end || *p != ' ' || first_only)
			break;
		p++;
	}
	return n;
}

unsigned
cmd_hint_keys(const void *data, size_t len, struct engine_key *keys, unsigned max)
{
	const char *p = data, *end = p + len;
	unsigned n = 0;

	/* Pipelined get lines one after another; the first other line ends
	 * the scan (a set's data block must not be read for keys). */
	while (n < max && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = eol != NULL ? eol : end;
		size_t ll = (size_t)(line_end - p);

		if (ll > 4 && memcmp(p, "get ", 4) == 0)
			n += line_keys(p + 4, line_end, false, keys + n, max - n);
		else if (ll > 5 && memcmp(p, "gets ", 5) == 0)
			n += line_keys(p + 5, line_end, false, keys + n, max - n);
		else if (ll > 3 && memcmp(p, "mg ", 3) == 0)
			n += line_keys(p + 3, line_end, true, keys + n, max - n);
		else
			break;
		if (eol == NULL)
			break;
		p = eol + 1;
	}
	return n;
}
