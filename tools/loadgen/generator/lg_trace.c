/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The trace replay input (lg_trace.h): a CSV parsed whole, its keys
 * interned.
 */
#include "lg_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_workload.h"

#define TRACE_MAX_COLS 8

/* Open-addressing table from key bytes to key index, only while loading. */
struct intern {
	uint32_t *slots; /* index + 1; 0 = empty */
	size_t mask;
	size_t keys_cap; /* entries allocated in t->keys */
};

static uint64_t
key_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int
intern_grow(struct intern *in, struct lg_trace *t)
{
	size_t cap = in->mask ? (in->mask + 1) * 2 : 1024;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->nkeys; i++) {
		size_t j = key_hash(t->keys[i]->name, t->keys[i]->len) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(in->slots);
	in->slots = slots;
	in->mask = cap - 1;
	return 0;
}

/* Index of key s[0..n), added when new; -1 when out of memory. */
static long
intern_key(struct intern *in, struct lg_trace *t, const char *s, size_t n)
{
	size_t j;

	if ((t->nkeys + 1) * 2 > in->mask + 1 && intern_grow(in, t) < 0)
		return -1;
	j = key_hash(s, n) & in->mask;
	while (in->slots[j]) {
		const struct lg_trace_key *k = t->keys[in->slots[j] - 1];

		if (k->len == n && memcmp(k->name, s, n) == 0)
			return (long)(in->slots[j] - 1);
		j = (j + 1) & in->mask;
	}
	if (t->nkeys == in->keys_cap) {
		size_t cap = in->keys_cap ? in->keys_cap * 2 : 64;
		struct lg_trace_key **keys = realloc(t->keys, cap * sizeof(*keys));

		if (!keys)
			return -1;
		t->keys = keys;
		in->keys_cap = cap;
	}
	struct lg_trace_key *k = malloc(sizeof(*k) + n);

	if (!k)
		return -1;
	k->len = (uint32_t)n;
	memcpy(k->name, s, n);
	t->keys[t->nkeys] = k;
	in->slots[j] = (uint32_t)t->nkeys + 1;
	return (long)t->nkeys++;
}

/* Maps a trace op name to a request: 1 = get, 2 = set, 0 = skip. */
static int
op_kind(const char *s, size_t n)
{
	static const char *const gets[] = { "get", "gets" };
	static const char *const sets[] = { "set", "add", "replace", "cas",
					    "append", "prepend" };

	for (size_t i = 0; i < sizeof(gets) / sizeof(gets[0]); i++)
		if (strlen(gets[i]) == n && memcmp(s, gets[i], n) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (strlen(sets[i]) == n && memcmp(s, sets[i], n) == 0)
			return 2;
	return 0;
}

static int
parse_u32(const char *s, size_t n, uint32_t *out)
{
	char buf[24];
	char *end;
	unsigned long v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int
lg_trace_parse(struct lg_trace *t, const char *text, size_t len, char *err,
	       size_t errlen)
{
	struct intern in = { 0 };
	size_t cap = 0, lineno = 0;
	const char *p = text, *end = text + len;
	double t0 = -1;

	memset(t, 0, sizeof(*t));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *col[TRACE_MAX_COLS];
		size_t clen[TRACE_MAX_COLS];
		unsigned ncol = 0;
		const char *q;
		struct lg_trace_req r = { 0 };
		int kind;
		size_t ki, si, oi, ti;
		uint32_t ttl = 0, size = 0;
		double tm;
		char tbuf[32];
		long key;

		if (!eol)
			eol = end;
		lineno++;
		q = p;
		/* Split on commas (keys in these traces hold no comma). */
		for (;;) {
			const char *c = memchr(q, ',', (size_t)(eol - q));
			const char *stop = c ? c : eol;

			if (ncol == TRACE_MAX_COLS)
				goto bad;
			col[ncol] = q;
			clen[ncol] = (size_t)(stop - q);
			if (!c && clen[ncol] && q[clen[ncol] - 1] == '\r')
				clen[ncol]--;
			ncol++;
			if (!c)
				break;
			q = c + 1;
		}
		p = eol + 1;
		if (ncol == 1 && clen[0] == 0)
			continue; /* empty line */
		if (ncol == 5) {
			ti = 0; ki = 1; si = 2; oi = 3;
		} else if (ncol == 7) {
			ti = 0; ki = 1; si = 3; oi = 5;
		} else {
			goto bad;
		}
		if (clen[ti] == 0 || clen[ti] >= sizeof(tbuf))
			goto bad;
		memcpy(tbuf, col[ti], clen[ti]);
		tbuf[clen[ti]] = 0;
		{
			char *e;

			tm = strtod(tbuf, &e);
			if (*e) {
				if (lineno == 1)
					continue; /* a header line */
				goto bad;
			}
		}
		if (clen[ki] == 0 || clen[ki] > LG_KEY_MAX)
			goto bad;
		for (size_t i = 0; i < clen[ki]; i++)
			if ((unsigned char)col[ki][i] <= ' ' || col[ki][i] == 127)
				goto bad; /* not a valid memcached key */
		if (parse_u32(col[si], clen[si], &size) < 0 ||
		    parse_u32(col[ncol - 1], clen[ncol - 1], &ttl) < 0)
			goto bad;
		kind = op_kind(col[oi], clen[oi]);
		if (kind == 0) {
			t->skipped++;
			continue;
		}
		key = intern_key(&in, t, col[ki], clen[ki]);
		if (key < 0)
			goto oom;
		if (t0 < 0)
			t0 = tm;
		r.time_ns = tm > t0 ? (uint64_t)((tm - t0) * 1e9) : 0;
		r.key = (uint32_t)key;
		r.op = kind == 1 ? LG_OP_GET : LG_OP_SET;
		r.size = kind == 2 ? (size ? size : 1) : 0;
		r.ttl = ttl;
		if (r.size > t->max_size)
			t->max_size = r.size;
		if (t->nreqs == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct lg_trace_req *reqs = realloc(t->reqs, ncap * sizeof(*reqs));

			if (!reqs)
				goto oom;
			t->reqs = reqs;
			cap = ncap;
		}
		t->reqs[t->nreqs++] = r;
		continue;
bad:
		snprintf(err, errlen,
			 "trace line %zu: expected time,key,size,op,ttl or "
			 "time,key,key_size,value_size,client,op,ttl", lineno);
		free(in.slots);
		lg_trace_free(t);
		return -1;
	}
	free(in.slots);
	if (t->nreqs == 0) {
		snprintf(err, errlen, "trace has no get or set requests");
		lg_trace_free(t);
		return -1;
	}
	return 0;
oom:
	free(in.slots);
	lg_trace_free(t);
	snprintf(err, errlen, "trace: out of memory");
	return -1;
}

int
lg_trace_load(struct lg_trace *t, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "%s: cannot size the file", path);
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errlen, "%s: cannot read", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	rc = lg_trace_parse(t, buf, (size_t)n, err, errlen);
	free(buf);
	return rc;
}

void
lg_trace_free(struct lg_trace *t)
{
	for (size_t i = 0; i < t->nkeys; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->reqs);
	memset(t, 0, sizeof(*t));
}
