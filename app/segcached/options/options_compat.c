/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The rest of memcached 1.6.18's command line (`memcached -h`), so that a
 * memcached line starts segcached or says why not. Each option does one of
 * three things: works with memcached's meaning (-s, -a, -k, -r, -R,
 * -B ascii, -X, -i, -e via --heap-file, -o hashpower/idle_timeout/
 * no_hashexpand/maxconns_fast); is taken and ignored, with one start line
 * "ignored: why" (slab, LRU and crawler tuning, which segments have no
 * use for); or is refused, exit 64, with the reason (-S, -Y, -Z, -B binary
 * or auto, extstore and TLS -o options). None of their values ever goes
 * to the EAL, whose letters -n, -r, -s, -S mean other things.
 */
#include "options_private.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include "util/util_err.h"

void
options_note_ignored(struct options *o, const char *fmt, ...)
{
	va_list ap;

	if (o->n_ignored == OPTIONS_IGNORED_MAX)
		return; /* the first ones are said; the rest are as harmless */
	va_start(ap, fmt);
	vsnprintf(o->ignored[o->n_ignored++], OPTIONS_IGNORED_LEN, fmt, ap);
	va_end(ap);
}

/* -s PATH: the path must fit a sockaddr_un (107 bytes and its NUL). */
int
opt_unix_socket(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (arg == NULL || arg[0] == '\0')
		return util_fail(err, errlen, "needs a path");
	if (strlen(arg) >= sizeof(o->unix_path))
		return util_fail(err, errlen, "'%s' is longer than a unix socket path may be "
				 "(%zu bytes)", arg, sizeof(o->unix_path) - 1);
	strcpy(o->unix_path, arg);
	return 0;
}

/* -a MASK: octal, as memcached reads it (strtol base 8). */
int
opt_unix_mask(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned v = 0;
	const char *p = arg;

	if (*p == '\0')
		return util_fail(err, errlen, "needs an octal mode, e.g. 700");
	for (; *p; p++) {
		if (*p < '0' || *p > '7')
			return util_fail(err, errlen, "'%s' is not an octal mode (e.g. 700, 770)%s%s%s",
					 arg, strchr(arg, ':') ? "; memcached's -a is the unix "
					 "socket's mode, the EAL's -a (a PCI device) goes in --eal '-a " : "",
					 strchr(arg, ':') ? arg : "", strchr(arg, ':') ? "'" : "");
		v = v * 8 + (unsigned)(*p - '0');
		if (v > 0777)
			return util_fail(err, errlen, "'%s' is above 777", arg);
	}
	o->unix_mask = v;
	return 0;
}

int
opt_lock_memory(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->lock_memory, err, errlen);
}

int
opt_core_dumps(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->core_dumps, err, errlen);
}

int
opt_license(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->license = true;
	return 0;
}

/* -R N: memcached takes any positive number. */
int
opt_reqs_per_event(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, 1000000, &v, err, errlen) < 0)
		return -1;
	o->reqs_per_event = (unsigned)v;
	return 0;
}

/* -B: the ascii protocol (text and meta commands) is the one spoken. */
int
opt_protocol(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)o;
	if (strcmp(arg, "ascii") == 0)
		return 0;
	if (strcmp(arg, "binary") == 0 || strcmp(arg, "auto") == 0)
		return util_fail(err, errlen,
				 "'%s': segcached speaks memcached's ascii protocol only (text and "
				 "meta commands; the binary protocol is deprecated in memcached): "
				 "give -B ascii, or leave -B out", arg);
	return util_fail(err, errlen, "'%s' is not a protocol (ascii, binary or auto)", arg);
}

int
opt_disable_dumping(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->dump_disabled, err, errlen);
}

/* The options memcached's slab allocator reads: checked as memcached
 * checks them, then ignored with a line. */
int
opt_slab_growth_factor(struct options *o, const char *arg, char *err, size_t errlen)
{
	char *end;
	double f = strtod(arg, &end);

	if (end == arg || *end != '\0' || !(f > 1.0))
		return util_fail(err, errlen, "'%s': the factor must be a number above 1", arg);
	options_note_ignored(o, "-f %s: slab classes' growth factor; Segcache stores items "
			     "of every size side by side in segments, with no classes", arg);
	return 0;
}

int
opt_slab_min_size(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, 1u << 20, &v, err, errlen) < 0)
		return -1;
	options_note_ignored(o, "-n %s: the smallest slab chunk; Segcache has no slab "
			     "chunks (an item takes its own size in a segment)", arg);
	return 0;
}

int
opt_large_pages(struct options *o, const char *arg, char *err, size_t errlen)
{
	bool on;

	if (options_parse_flag(arg, &on, err, errlen) < 0)
		return -1;
	if (on)
		options_note_ignored(o, "-L: large pages are used already: the heap is in "
				     "hugepages when the host has them, else in memory that "
				     "transparent huge pages may back (--heap, default auto)");
	return 0;
}

int
opt_stat_key_prefix(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (strlen(arg) != 1)
		return util_fail(err, errlen, "'%s': one character, e.g. ':'", arg);
	options_note_ignored(o, "-D %s: per-prefix stats (stats detail) are not kept; "
			     "stats hotkeys names the most requested keys", arg);
	return 0;
}

int
opt_disable_watch(struct options *o, const char *arg, char *err, size_t errlen)
{
	bool on;

	if (options_parse_flag(arg, &on, err, errlen) < 0)
		return -1;
	if (on)
		options_note_ignored(o, "-W: there is no watch command to disable");
	return 0;
}

int
opt_napi_ids(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, 1024, &v, err, errlen) < 0)
		return -1;
	options_note_ignored(o, "-N %s: connections are not assigned to threads by NAPI id; "
			     "they go round-robin, as memcached's do without -N", arg);
	return 0;
}

/* Refused: what they secure would be open, silently, if ignored. */
int
opt_sasl(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)o;
	(void)arg;
	return util_fail(err, errlen,
			 "SASL authenticates memcached's binary protocol, which segcached does "
			 "not speak: restrict clients with --allow, a unix socket (-s, -a) or a "
			 "firewall");
}

int
opt_auth_file(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)o;
	(void)arg;
	return util_fail(err, errlen,
			 "ascii authentication is not supported: restrict clients with --allow, "
			 "a unix socket (-s, -a) or a firewall");
}

int
opt_ssl(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)o;
	(void)arg;
	return util_fail(err, errlen,
			 "TLS is not supported: put a TLS terminator (stunnel, a proxy) in "
			 "front, or serve on loopback or a unix socket (-s)");
}

/* memcached's -o suboptions that tune its slab allocator, LRU, crawler or
 * logging: nothing here works that way (segments, TTL buckets, merge
 * eviction), so a memcached command line that carries them starts, with a
 * line that says they do nothing. */
static const char *const memcached_tuning[] = {
	"modern", "no_modern", "slab_reassign", "no_slab_reassign", "slab_automove",
	"slab_automove_ratio", "slab_automove_window", "slab_automove_freeratio",
	"slab_chunk_max", "slab_sizes", "lru_crawler", "no_lru_crawler", "lru_crawler_sleep",
	"lru_crawler_tocrawl", "lru_maintainer", "no_lru_maintainer", "lru_segmented",
	"hot_lru_pct", "warm_lru_pct", "hot_max_factor", "warm_max_factor", "temporary_ttl",
	"tail_repair_time", "hash_algorithm", "track_sizes", "watcher_logbuf_size",
	"worker_logbuf_size", "no_maxconns_fast", "no_inline_ascii_resp",
	"inline_ascii_resp", "expirezero_does_not_evict", "read_buf_mem_limit",
	"resp_obj_mem_limit", "drop_privileges", "no_drop_privileges", "bind_v6only",
	"sock_cookie_id",
};

/* -o NAME[=VALUE]. */
int
options_extended_one(struct options *o, char *sub, char *err, size_t errlen)
{
	char *value = strchr(sub, '=');

	if (value)
		*value++ = '\0';
	if (strcmp(sub, "hashpower") == 0 || strcmp(sub, "idle_timeout") == 0) {
		if (!value || !*value)
			return util_fail(err, errlen, "-o %s needs a value", sub);
		return sub[0] == 'h' ? opt_hash_power(o, value, err, errlen)
				     : opt_idle_timeout(o, value, err, errlen);
	}
	/* memcached: the table keeps its size; ours then never grows */
	if (strcmp(sub, "no_hashexpand") == 0) {
		o->hash_grow = 1;
		return 0;
	}
	/* memcached: refuse at once over -c; that is what happens here */
	if (strcmp(sub, "maxconns_fast") == 0)
		return 0;
	if (strncmp(sub, "ext_", 4) == 0)
		return util_fail(err, errlen,
				 "-o %s: there is no external storage (extstore): the cache is "
				 "-m in memory, or in a --heap-file (-e) kept across restarts", sub);
	if (strncmp(sub, "ssl_", 4) == 0)
		return util_fail(err, errlen,
				 "-o %s: TLS is not supported: put a TLS terminator in front", sub);
	for (size_t i = 0; i < RTE_DIM(memcached_tuning); i++) {
		if (strcmp(sub, memcached_tuning[i]) == 0) {
			options_note_ignored(o, "-o %s: memcached's slab/LRU/crawler tuning, "
					     "no meaning for segcached's segments", sub);
			return 0;
		}
	}
	return util_fail(err, errlen, "illegal suboption -o %s", sub);
}
