/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's own options, with memcached's letters and meaning: the
 * ports and addresses, -m, -c, -I, -t, -b, the -A/-C/-F/-M switches, -v,
 * -o (its suboptions in options_compat.c), -h and -V. One parser per row of the option table
 * (options_table.c).
 */
#include "options_private.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include "util/util_err.h"

/* Limits a user can set; the engine checks what depends on its layout. */
#define MEMORY_MIN_MB 1
#define ITEM_MAX_MIN KIB              /* memcached: -I is at least 1k */
#define ITEM_MAX_MAX GIB              /* memcached: at most 1024m */
#define THREADS_MAX 256
#define BACKLOG_MAX 65535

int
opt_tcp_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_port(arg, &o->tcp_port, err, errlen);
}

int
opt_udp_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_port(arg, &o->udp_port, err, errlen);
}

int
opt_listen(struct options *o, const char *arg, char *err, size_t errlen)
{
	const char *p;

	if (arg[0] == '\0')
		return util_fail(err, errlen, "empty address list");
	if (strlen(arg) >= sizeof(o->listen))
		return util_fail(err, errlen, "address list longer than %zu bytes",
			    sizeof(o->listen) - 1);
	for (p = arg; *p; p++)
		if (isspace((unsigned char)*p))
			return util_fail(err, errlen,
				    "'%s': separate addresses with commas, no spaces",
				    arg);
	strcpy(o->listen, arg);
	return 0;
}

int
opt_memory(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	/* memcached: a bare number is megabytes. */
	if (options_parse_size(arg, MIB, &v) < 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (megabytes, or a number with a K, M or G suffix)",
			    arg);
	if (v < MEMORY_MIN_MB * MIB)
		return util_fail(err, errlen, "'%s' is below %d megabyte", arg,
			    MEMORY_MIN_MB);
	o->memory = v;
	return 0;
}

int
opt_max_conns(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, MAX_CONNS_MAX, &v, err, errlen) < 0)
		return -1;
	o->max_conns = (unsigned)v;
	return 0;
}

int
opt_item_max(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	/* memcached: a bare number is bytes; k and m suffixes. */
	if (options_parse_size(arg, 1, &v) < 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (bytes, or a number with a k, m or g suffix)",
			    arg);
	if (v < ITEM_MAX_MIN || v > ITEM_MAX_MAX)
		return util_fail(err, errlen, "'%s' is out of range (1k..1024m)", arg);
	o->item_max = v;
	o->item_max_given = true;
	return 0;
}

int
opt_threads(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, THREADS_MAX, &v, err, errlen) < 0)
		return -1;
	o->threads = (unsigned)v;
	return 0;
}

int
opt_backlog(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, BACKLOG_MAX, &v, err, errlen) < 0)
		return -1;
	o->backlog = (int)v;
	return 0;
}

int
opt_enable_shutdown(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->shutdown_enabled, err, errlen);
}

int
opt_disable_cas(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->cas_disabled, err, errlen);
}

int
opt_disable_flush(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->flush_disabled, err, errlen);
}

int
opt_disable_evictions(struct options *o, const char *arg, char *err,
		      size_t errlen)
{
	return options_parse_flag(arg, &o->evictions_disabled, err, errlen);
}

int
opt_verbose(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	/* -v on the command line adds one; "verbose = N" in a file sets N. */
	if (arg == NULL) {
		if (o->verbosity < 3)
			o->verbosity++;
		return 0;
	}
	if (options_parse_uint(arg, 0, 3, &v, err, errlen) < 0)
		return -1;
	o->verbosity = (int)v;
	return 0;
}

int
opt_idle_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 86400 * 30, &v, err, errlen) < 0)
		return -1;
	o->idle_timeout = (unsigned)v;
	return 0;
}

int
opt_hash_power(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	/* The engine checks its own range (lib/seg 6..32, lib/baseline 10..30). */
	if (options_parse_uint(arg, 1, 32, &v, err, errlen) < 0)
		return -1;
	o->hash_power = (unsigned)v;
	return 0;
}

/* memcached's -o: comma-separated suboptions, NAME or NAME=VALUE. */
int
opt_extended(struct options *o, const char *arg, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return util_fail(err, errlen, "-o: list too long");
	strcpy(buf, arg);
	for (char *sub = strtok_r(buf, ",", &save); sub; sub = strtok_r(NULL, ",", &save))
		if (options_extended_one(o, sub, err, errlen) < 0)
			return -1;
	return 0;
}

int
opt_help(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->help = true;
	return 0;
}

int
opt_version(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->version = true;
	return 0;
}
