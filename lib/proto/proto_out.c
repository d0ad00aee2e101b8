/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The response buffer and the small formatting helpers responses need.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto_out.h"

#define PROTO_OUT_DEFAULT_CAP 16384

int
proto_out_init(struct proto_out *o, size_t cap, size_t limit)
{
	memset(o, 0, sizeof(*o));
	if (cap == 0)
		cap = PROTO_OUT_DEFAULT_CAP;
	if (limit < cap)
		limit = cap;
	o->data = malloc(cap);
	if (!o->data)
		return -1;
	o->cap = cap;
	o->limit = limit;
	return 0;
}

void
proto_out_init_fixed(struct proto_out *o, void *buf, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->data = buf;
	o->cap = cap;
	o->limit = cap;
	o->fixed = true;
}

void
proto_out_fini(struct proto_out *o)
{
	if (!o->fixed)
		free(o->lent ? o->own : o->data);
	memset(o, 0, sizeof(*o));
}

void
proto_out_move(struct proto_out *to, struct proto_out *from)
{
	to->data = from->data;
	to->cap = from->cap;
	to->head = to->len = 0;
	from->data = NULL;
	from->cap = 0;
	from->head = from->len = 0;
}

void
proto_out_release(struct proto_out *o)
{
	if (!o->fixed)
		free(o->lent ? o->own : o->data);
	o->lent = false;
	o->own = NULL;
	o->own_cap = 0;
	o->kept = NULL;
	o->kept_len = 0;
	o->data = NULL;
	o->cap = 0;
	o->head = o->len = 0;
}

void
proto_out_lend(struct proto_out *o, void *win, size_t room)
{
	o->own = o->data;
	o->own_cap = o->cap;
	o->data = win;
	o->cap = room;
	o->head = o->len = 0;
	o->lent = true;
}

/* A reply outgrew the window: its pending bytes stay there, to be sent
 * first, and o composes in its own memory from now on. */
static void
leave_window(struct proto_out *o)
{
	o->kept = o->data + o->head;
	o->kept_len = o->len - o->head;
	o->data = o->own;
	o->cap = o->own_cap;
	o->head = o->len = 0;
	o->own = NULL;
	o->own_cap = 0;
	o->lent = false;
}

bool
proto_out_end_loan(struct proto_out *o)
{
	size_t kept, rest;

	if (o->lent)
		leave_window(o);
	kept = o->kept_len;
	if (kept == 0)
		return true;
	o->kept_len = 0; /* the reserve counts only what o itself holds */
	if (proto_out_reserve(o, kept) == NULL) {
		o->kept = NULL;
		return false;
	}
	rest = o->len - o->head;
	memmove(o->data + o->head + kept, o->data + o->head, rest);
	memcpy(o->data + o->head, o->kept, kept);
	o->len += kept;
	o->kept = NULL;
	return true;
}

__attribute__((hot)) char *
proto_out_reserve(struct proto_out *o, size_t n)
{
	size_t want, cap;
	char *d;

	if (o->cap - o->len >= n)
		return o->data + o->len;
	if (o->lent) {
		if (n > o->limit - proto_out_pending(o))
			return NULL;
		leave_window(o);
		if (o->cap - o->len >= n)
			return o->data + o->len;
	}
	/* first take back the bytes already sent */
	if (o->head > 0) {
		memmove(o->data, o->data + o->head, o->len - o->head);
		o->len -= o->head;
		o->head = 0;
		if (o->cap - o->len >= n)
			return o->data + o->len;
	}
	if (o->fixed || n > o->limit - o->kept_len - o->len)
		return NULL;
	want = o->len + n;
	cap = o->cap ? o->cap : PROTO_OUT_DEFAULT_CAP;
	while (cap < want)
		cap = cap > o->limit / 2 ? o->limit : cap * 2;
	if (cap > o->limit)
		cap = o->limit;
	d = realloc(o->data, cap);
	if (!d)
		return NULL;
	o->data = d;
	o->cap = cap;
	return o->data + o->len;
}

bool
proto_out_append(struct proto_out *o, const void *p, size_t n)
{
	char *dst = proto_out_reserve(o, n);

	if (!dst)
		return false;
	memcpy(dst, p, n);
	o->len += n;
	return true;
}

__attribute__((hot)) bool
proto_out_line(struct proto_out *o, const char *s)
{
	size_t n = strlen(s);
	char *dst = proto_out_reserve(o, n + 2);

	if (!dst)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\r';
	dst[n + 1] = '\n';
	o->len += n + 2;
	return true;
}

bool
proto_out_stat(struct proto_out *o, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);
	char *dst = proto_out_reserve(o, 5 + nl + 1 + vl + 2);

	if (!dst)
		return false;
	memcpy(dst, "STAT ", 5);
	memcpy(dst + 5, name, nl);
	dst[5 + nl] = ' ';
	memcpy(dst + 6 + nl, value, vl);
	memcpy(dst + 6 + nl + vl, "\r\n", 2);
	o->len += 8 + nl + vl;
	return true;
}

bool
proto_out_stat_u64(struct proto_out *o, const char *name, uint64_t v)
{
	char num[21];

	num[proto_u64_to_dec(v, num)] = '\0';
	return proto_out_stat(o, name, num);
}

__attribute__((hot)) void
proto_out_consume(struct proto_out *o, size_t n)
{
	if (o->kept_len > 0) {
		/* the window's bytes go first */
		size_t k = n < o->kept_len ? n : o->kept_len;

		o->kept += k;
		o->kept_len -= k;
		n -= k;
	}
	if (n > o->len - o->head)
		n = o->len - o->head;
	o->head += n;
	if (o->lent) {
		/* the transport owns what was taken: the window starts after it */
		o->data += o->head;
		o->cap -= o->head;
		o->len -= o->head;
		o->head = 0;
	} else if (o->head == o->len) {
		o->head = o->len = 0;
	}
}

void
proto_out_place_header(struct proto_out *o, size_t gap, const void *hdr, size_t hlen,
		       size_t blen)
{
	char *base = o->data + o->len;

	/* the prediction missed: move the body once to where it belongs */
	if (hlen != gap)
		memmove(base + hlen, base + gap, blen);
	memcpy(base, hdr, hlen);
	o->len += hlen + blen;
}

size_t
proto_dec_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

__attribute__((hot)) size_t
proto_u64_to_dec(uint64_t v, char *p)
{
	size_t n;

	/* a get reply's flags (mostly 0) and a small value's length take
	 * one or two digits: written without the loops (about 60
	 * instructions a get, two numbers) */
	if (v < 100)
		return proto_u64_to_dec_under_100(v, p);
	n = proto_dec_len(v);

	for (size_t i = n; i > 0; i--) {
		p[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	return n;
}

size_t
proto_i64_to_dec(int64_t v, char *p)
{
	if (v < 0) {
		*p = '-';
		return 1 + proto_u64_to_dec((uint64_t)0 - (uint64_t)v, p + 1);
	}
	return proto_u64_to_dec((uint64_t)v, p);
}
