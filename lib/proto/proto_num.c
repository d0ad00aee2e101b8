/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Numbers as memcached 1.6 reads them. memcached passes each token to
 * strtol/strtoul/strtoull and accepts the result when the conversion stops
 * at the end of the token or at a blank. Clients depend on the outcome
 * (for example exptimes and lengths are truncated to 32 bits, a flags value
 * of 2^32 reads as 0), so the rules are reproduced exactly here, without
 * the C library, on tokens that are not NUL-terminated.
 */
#include "proto/proto.h"

static inline bool
is_blank(unsigned char c)
{
	/* isspace() in the C locale */
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* What strto*l with base 10 does up to its end pointer. */
struct scan {
	bool neg;
	bool overflow;   /* the magnitude exceeded max */
	bool digits;     /* at least one digit converted */
	uint64_t mag;
	size_t end;      /* index of the end pointer; 0 when nothing converted */
};

static __attribute__((hot)) void
scan_number(const char *s, size_t len, uint64_t max, struct scan *sc)
{
	size_t i = 0;

	sc->neg = false;
	sc->overflow = false;
	sc->digits = false;
	sc->mag = 0;
	while (i < len && is_blank((unsigned char)s[i]))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-')) {
		sc->neg = s[i] == '-';
		i++;
	}
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			break;
		sc->digits = true;
		if (sc->overflow)
			continue;
		if (sc->mag > (max - d) / 10)
			sc->overflow = true;
		else
			sc->mag = sc->mag * 10 + d;
	}
	/* strto*l sets the end pointer to the start when nothing converted */
	sc->end = sc->digits ? i : 0;
}

/* The check shared by memcached's safe_strto* helpers: the conversion
 * stopped at a blank or at the end of a non-empty conversion. */
static bool
ends_well(const char *s, size_t len, const struct scan *sc)
{
	if (sc->end < len)
		return is_blank((unsigned char)s[sc->end]);
	return sc->end != 0;
}

static bool
has_minus(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '-')
			return true;
	return false;
}

__attribute__((hot)) bool
proto_strtol32(const char *s, size_t len, int32_t *out)
{
	struct scan sc;
	uint64_t v;

	*out = 0;
	/* strtol's range is [LONG_MIN, LONG_MAX] */
	scan_number(s, len, (uint64_t)INT64_MAX + 1, &sc);
	if (!sc.digits || sc.overflow || (!sc.neg && sc.mag > (uint64_t)INT64_MAX))
		return false;
	if (!ends_well(s, len, &sc))
		return false;
	/* memcached stores the long into an int32_t: keep the low 32 bits */
	v = sc.neg ? (uint64_t)0 - sc.mag : sc.mag;
	*out = (int32_t)(uint32_t)v;
	return true;
}

__attribute__((hot)) bool
proto_strtoul32(const char *s, size_t len, uint32_t *out)
{
	struct scan sc;
	uint64_t v;

	*out = 0;
	scan_number(s, len, UINT64_MAX, &sc);
	if (!sc.digits || sc.overflow)
		return false;
	if (!ends_well(s, len, &sc))
		return false;
	v = sc.neg ? (uint64_t)0 - sc.mag : sc.mag;
	if ((int64_t)v < 0 && has_minus(s, len))
		return false;
	*out = (uint32_t)v;
	return true;
}

bool
proto_strtoull(const char *s, size_t len, uint64_t *out)
{
	struct scan sc;
	uint64_t v;

	*out = 0;
	scan_number(s, len, UINT64_MAX, &sc);
	if (!sc.digits || sc.overflow || !ends_well(s, len, &sc))
		return false;
	v = sc.neg ? (uint64_t)0 - sc.mag : sc.mag;
	if ((int64_t)v < 0 && has_minus(s, len))
		return false;
	*out = v;
	return true;
}
