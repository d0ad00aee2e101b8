/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * An option's value read from its text: a flag, a number in a range, a
 * size with a K, M or G suffix, a port, one of a list of names, an IPv4
 * address or network. What the parsers of the option table's rows
 * (options_memcached.c, options_segcached.c, options_native.c) build on.
 */
#include "options_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include "util/util_err.h"

/* A flag: NULL (given on the command line) or a config-file boolean. */
int
options_parse_flag(const char *arg, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	if (arg == NULL) {
		*out = true;
		return 0;
	}
	for (i = 0; i < RTE_DIM(yes); i++)
		if (strcasecmp(arg, yes[i]) == 0) {
			*out = true;
			return 0;
		}
	for (i = 0; i < RTE_DIM(no); i++)
		if (strcasecmp(arg, no[i]) == 0) {
			*out = false;
			return 0;
		}
	return util_fail(err, errlen, "'%s' is not yes or no", arg);
}

/* Decimal unsigned number in [min, max], nothing else around it. */
int
options_parse_uint(const char *arg, unsigned long long min, unsigned long long max,
		   unsigned long long *out, char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	*out = 0; /* defined on every path, which the compiler can then see */
	if (arg == NULL || !isdigit((unsigned char)arg[0]))
		return util_fail(err, errlen, "'%s' is not a number", arg ? arg : "");
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || *end != '\0')
		return util_fail(err, errlen, "'%s' is not a number", arg);
	if (v < min || v > max)
		return util_fail(err, errlen, "%s is out of range (%llu..%llu)", arg,
			    min, max);
	*out = v;
	return 0;
}

int
options_parse_size(const char *s, size_t bare_unit, size_t *out)
{
	unsigned long long v;
	size_t unit = bare_unit;
	char *end;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		switch (tolower((unsigned char)*end)) {
		case 'k': unit = KIB; break;
		case 'm': unit = MIB; break;
		case 'g': unit = GIB; break;
		default: return -1;
		}
		end++;
		/* Accept "64M", "64MB" and "64MiB" alike. */
		if (strcasecmp(end, "b") == 0 || strcasecmp(end, "ib") == 0)
			end += strlen(end);
		if (*end != '\0')
			return -1;
	}
	if (v > SIZE_MAX / unit)
		return -1;
	*out = (size_t)v * unit;
	return 0;
}

/* Looks arg up in a NULL-terminated list of names; returns its index. */
int
options_parse_choice(const char *arg, const char *const *names, char *err,
		     size_t errlen)
{
	char list[128] = "";
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	for (i = 0; names[i] != NULL; i++) {
		strncat(list, i ? "|" : "", sizeof(list) - strlen(list) - 1);
		strncat(list, names[i], sizeof(list) - strlen(list) - 1);
	}
	return util_fail(err, errlen, "'%s' is not one of %s", arg, list);
}

/* "A.B.C.D", or "A.B.C.D/LEN" (required when prefix_required); nothing
 * else, no blanks or signs. LEN defaults to 32. */
bool
options_parse_ipv4(const char *s, bool prefix_required, uint32_t *addr, unsigned *prefix)
{
	unsigned a, b, c, d, len = 32;
	int used = 0;

	if (!isdigit((unsigned char)s[0]) ||
	    sscanf(s, "%u.%u.%u.%u%n", &a, &b, &c, &d, &used) != 4 || used == 0 ||
	    a > 255 || b > 255 || c > 255 || d > 255 || strspn(s, "0123456789.") != (size_t)used)
		return false;
	s += used;
	if (*s == '/') {
		s++;
		if (!isdigit((unsigned char)s[0]) || strspn(s, "0123456789") != strlen(s) ||
		    strlen(s) > 2 || (len = (unsigned)atoi(s)) > 32)
			return false;
	} else if (*s != '\0' || prefix_required) {
		return false;
	}
	*addr = (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
	*prefix = len;
	return true;
}

int
options_parse_port(const char *arg, uint16_t *port, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 65535, &v, err, errlen) < 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}
