/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The option table: what each option means and how its value is parsed,
 * the defaults, the checks across options (options_finalize) and the
 * usage text. Its readers: options_cli.c (the command line),
 * options_config.c (a config file); options_hint.c says what to do after
 * an unknown option.
 */
#include "options.h"
#include "options_private.h"
#include "eal_args.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include "seg/seg.h"
#include "util/util_err.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

/* Limits a user can set; the engine checks what depends on its layout. */
#define MEMORY_MIN_MB 1
#define ITEM_MAX_MIN KIB              /* memcached: -I is at least 1k */
#define ITEM_MAX_MAX GIB              /* memcached: at most 1024m */
#define THREADS_MAX 256
#define MAX_CONNS_MAX 1000000
#define BACKLOG_MAX 65535

/* A flag: NULL (given on the command line) or a config-file boolean. */
static int
parse_flag(const char *arg, bool *out, char *err, size_t errlen)
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
static int
parse_uint(const char *arg, unsigned long long min, unsigned long long max,
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

static int
opt_port(const char *arg, uint16_t *port, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 65535, &v, err, errlen) < 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int
opt_tcp_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_port(arg, &o->tcp_port, err, errlen);
}

static int
opt_udp_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_port(arg, &o->udp_port, err, errlen);
}

static int
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

static int
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

static int
opt_max_conns(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 1, MAX_CONNS_MAX, &v, err, errlen) < 0)
		return -1;
	o->max_conns = (unsigned)v;
	return 0;
}

static int
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

static int
opt_threads(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 1, THREADS_MAX, &v, err, errlen) < 0)
		return -1;
	o->threads = (unsigned)v;
	return 0;
}

static int
opt_restart_threads(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 256, &v, err, errlen) < 0)
		return -1;
	o->restart_threads = (unsigned)v;
	return 0;
}

static int
opt_restart_verify(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->restart_verify = true;
	return 0;
}

static int
opt_backlog(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 1, BACKLOG_MAX, &v, err, errlen) < 0)
		return -1;
	o->backlog = (int)v;
	return 0;
}

static int
opt_enable_shutdown(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->shutdown_enabled, err, errlen);
}

static int
opt_disable_cas(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->cas_disabled, err, errlen);
}

static int
opt_disable_flush(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->flush_disabled, err, errlen);
}

static int
opt_disable_evictions(struct options *o, const char *arg, char *err,
		      size_t errlen)
{
	return parse_flag(arg, &o->evictions_disabled, err, errlen);
}

static int
opt_verbose(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	/* -v on the command line adds one; "verbose = N" in a file sets N. */
	if (arg == NULL) {
		if (o->verbosity < 3)
			o->verbosity++;
		return 0;
	}
	if (parse_uint(arg, 0, 3, &v, err, errlen) < 0)
		return -1;
	o->verbosity = (int)v;
	return 0;
}

static int
opt_help(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->help = true;
	return 0;
}

static int
opt_version(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->version = true;
	return 0;
}

static int
opt_config(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (strlen(arg) >= sizeof(o->config_file))
		return util_fail(err, errlen, "path longer than %zu bytes",
			    sizeof(o->config_file) - 1);
	strcpy(o->config_file, arg);
	return 0;
}

/* Looks arg up in a NULL-terminated list of names; returns its index. */
static int
parse_choice(const char *arg, const char *const *names, char *err,
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

static int
opt_stack(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "posix", "native", NULL };
	int i = parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->stack = i == 0 ? STACK_POSIX : STACK_NATIVE;
	return 0;
}

static int
opt_eviction(struct options *o, const char *arg, char *err, size_t errlen)
{
	const struct engine_eviction_policy *p = engine_eviction_by_name(arg);
	char names[128];

	if (p == NULL)
		return util_fail(err, errlen, "'%s' is not one of %s", arg,
				 engine_eviction_names(names, sizeof(names)));
	o->eviction = p->id;
	return 0;
}

static int
opt_segment_size(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	if (options_parse_size(arg, 1, &v) < 0 || v == 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (bytes, or a number with a K, M or G suffix)",
			    arg);
	o->segment_size = v;
	return 0;
}

static int
opt_engine(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "seg", "baseline", NULL };
	int i = parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->engine = i == 0 ? SERVER_ENGINE_SEG : SERVER_ENGINE_BASELINE;
	return 0;
}

static int
opt_heap(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "auto", "anon", "hugepage", "file", NULL };
	static const enum server_heap values[] = {
		HEAP_AUTO, HEAP_ANON, HEAP_HUGEPAGE, HEAP_FILE,
	};
	int i = parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->heap = values[i];
	return 0;
}

/* --eal, repeatable: the words gather in one blank-separated string. */
static int
opt_eal(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t have = strlen(o->eal);

	if (have + 1 + strlen(arg) >= sizeof(o->eal))
		return util_fail(err, errlen, "EAL options longer than %zu bytes in all",
				 sizeof(o->eal) - 1);
	snprintf(o->eal + have, sizeof(o->eal) - have, "%s%s", have ? " " : "", arg);
	return 0;
}

static int
opt_heap_file(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (arg[0] == '\0')
		return util_fail(err, errlen, "empty path");
	if (strlen(arg) >= sizeof(o->heap_file))
		return util_fail(err, errlen, "path longer than %zu bytes",
			    sizeof(o->heap_file) - 1);
	strcpy(o->heap_file, arg);
	o->heap = HEAP_FILE;
	return 0;
}

/* "A.B.C.D", or "A.B.C.D/LEN" (required when prefix_required); nothing
 * else, no blanks or signs. LEN defaults to 32. */
static bool
parse_ipv4(const char *s, bool prefix_required, uint32_t *addr, unsigned *prefix)
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

static int
opt_ip(struct options *o, const char *arg, char *err, size_t errlen)
{
	uint32_t addr;
	unsigned prefix;

	if (strlen(arg) >= sizeof(o->ip) || !parse_ipv4(arg, true, &addr, &prefix) || prefix < 1)
		return util_fail(err, errlen,
			    "'%s' is not an IPv4 address with a prefix length, e.g. 198.18.0.2/24",
			    arg);
	if (addr >> 24 == 0 || addr >> 24 >= 224 || addr >> 24 == 127)
		return util_fail(err, errlen, "'%s': not a unicast host address", arg);
	strcpy(o->ip, arg);
	o->ip_addr = addr;
	o->ip_prefix = (uint8_t)prefix;
	return 0;
}

static int
opt_port_id(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, RTE_MAX_ETHPORTS - 1, &v, err, errlen) < 0)
		return -1;
	o->port_id = (int)v;
	return 0;
}

static int
opt_queues(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 1, 128, &v, err, errlen) < 0)
		return -1;
	o->queues = (unsigned)v;
	return 0;
}

static int
opt_desc(const char *arg, uint16_t *out, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 64, 32768, &v, err, errlen) < 0)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int
opt_rx_desc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_desc(arg, &o->rx_desc, err, errlen);
}

static int
opt_tx_desc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_desc(arg, &o->tx_desc, err, errlen);
}

static int
opt_mtu(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 576, 9000, &v, err, errlen) < 0)
		return -1;
	o->mtu = (uint16_t)v;
	return 0;
}

static int
opt_tcp_buffer_memory(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	/* as -m: a bare number is megabytes */
	if (options_parse_size(arg, MIB, &v) < 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (megabytes, or a number with a K, M or G suffix)",
			    arg);
	o->tcp_buffer_memory = v;
	return 0;
}

static int
opt_link_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 3600, &v, err, errlen) < 0)
		return -1;
	o->link_timeout = (unsigned)v;
	return 0;
}

static int
opt_idle_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 86400 * 30, &v, err, errlen) < 0)
		return -1;
	o->idle_timeout = (unsigned)v;
	return 0;
}

static int
opt_hash_power(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	/* The engine checks its own range (lib/seg 6..32, lib/baseline 10..30). */
	if (parse_uint(arg, 1, 32, &v, err, errlen) < 0)
		return -1;
	o->hash_power = (unsigned)v;
	return 0;
}

static int
opt_hash_grow(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 1, 16, &v, err, errlen) < 0)
		return -1;
	if (v & (v - 1))
		return util_fail(err, errlen, "--hash-grow %llu: must be 1, 2, 4, 8 or 16", v);
	o->hash_grow = (unsigned)v;
	return 0;
}

/* memcached's -o suboptions that tune its slab allocator, LRU, crawler or
 * logging: nothing here works that way (segments, TTL buckets, merge
 * eviction), so a memcached command line that carries them starts, with a
 * line that says they do nothing. */
static const char *const memcached_tuning[] = {
	"modern", "no_modern", "slab_reassign", "no_slab_reassign", "slab_automove",
	"slab_automove_ratio", "slab_automove_window", "slab_chunk_max", "slab_sizes",
	"lru_crawler", "no_lru_crawler", "lru_crawler_sleep", "lru_crawler_tocrawl",
	"lru_maintainer", "no_lru_maintainer", "lru_segmented", "hot_lru_pct",
	"warm_lru_pct", "hot_max_factor", "warm_max_factor", "temporary_ttl",
	"tail_repair_time", "hash_algorithm", "no_hashexpand", "track_sizes",
	"watcher_logbuf_size", "worker_logbuf_size", "maxconns_fast", "no_maxconns_fast",
	"no_inline_ascii_resp", "inline_ascii_resp", "expirezero_does_not_evict",
	"read_buf_mem_limit", "resp_obj_mem_limit", "drop_privileges",
	"no_drop_privileges", "bind_v6only",
};

static int
extended_one(struct options *o, char *sub, char *err, size_t errlen)
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
	for (size_t i = 0; i < RTE_DIM(memcached_tuning); i++) {
		if (strcmp(sub, memcached_tuning[i]) == 0) {
			fprintf(stderr, "segcached: -o %s: memcached slab/LRU tuning, no "
				"meaning for segcached's segments; ignored\n", sub);
			return 0;
		}
	}
	return util_fail(err, errlen, "illegal suboption -o %s", sub);
}

/* memcached's -o: comma-separated suboptions, NAME or NAME=VALUE. */
static int
opt_extended(struct options *o, const char *arg, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return util_fail(err, errlen, "-o: list too long");
	strcpy(buf, arg);
	for (char *sub = strtok_r(buf, ",", &save); sub; sub = strtok_r(NULL, ",", &save))
		if (extended_one(o, sub, err, errlen) < 0)
			return -1;
	return 0;
}

static int
opt_rss_key(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t n = strlen(arg);

	if (n == 0 || n % 2 != 0 || n / 2 > sizeof(o->rss_key))
		return util_fail(err, errlen, "'%s' is not 1 to %zu bytes in hex", arg,
				 sizeof(o->rss_key));
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int b;

		if (!isxdigit((unsigned char)arg[2 * i]) ||
		    !isxdigit((unsigned char)arg[2 * i + 1]) ||
		    sscanf(arg + 2 * i, "%2x", &b) != 1)
			return util_fail(err, errlen, "'%s' is not hex", arg);
		o->rss_key[i] = (uint8_t)b;
	}
	o->rss_key_len = (uint8_t)(n / 2);
	return 0;
}

static int
opt_udp_writes(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->udp_writes, err, errlen);
}

static int
opt_udp_reply_max(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 64ull << 20, &v, err, errlen) < 0)
		return -1;
	o->udp_reply_max = (size_t)v;
	return 0;
}

static int
opt_udp_any_source(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->udp_any_source, err, errlen);
}

static int
opt_allow(struct options *o, const char *arg, char *err, size_t errlen)
{
	char list[STACK_ALLOW_MAX * 19 + 1], *save = NULL, *net;

	if (strlen(arg) >= sizeof(list))
		return util_fail(err, errlen, "list longer than %zu bytes", sizeof(list) - 1);
	strcpy(list, arg);
	o->n_allow = 0;
	for (net = strtok_r(list, ",", &save); net != NULL; net = strtok_r(NULL, ",", &save)) {
		struct stack_cidr *cidr = &o->allow[o->n_allow];
		unsigned prefix;
		uint32_t addr;

		if (!parse_ipv4(net, false, &addr, &prefix))
			return util_fail(err, errlen,
					 "'%s' is not an IPv4 address or network, "
					 "e.g. 198.18.0.0/15",
					 net);
		if (o->n_allow == STACK_ALLOW_MAX)
			return util_fail(err, errlen, "more than %d networks", STACK_ALLOW_MAX);
		cidr->mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
		cidr->addr = addr & cidr->mask;
		o->n_allow++;
	}
	if (o->n_allow == 0)
		return util_fail(err, errlen, "empty list");
	return 0;
}

static int
opt_max_conns_per_source(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, MAX_CONNS_MAX, &v, err, errlen) < 0)
		return -1;
	o->max_conns_per_source = (unsigned)v;
	return 0;
}

static int
opt_request_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (parse_uint(arg, 0, 86400, &v, err, errlen) < 0)
		return -1;
	o->request_timeout = (unsigned)v;
	return 0;
}

static int
opt_admin_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_port(arg, &o->admin_port, err, errlen);
}

static int
opt_metrics_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return opt_port(arg, &o->metrics_port, err, errlen);
}

static int
opt_no_mrc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_flag(arg, &o->mrc_disabled, err, errlen);
}

/* The one option table. */
static const struct opt_desc opt_table[] = {
	{ "port", NULL, 'p', "PORT", OPT_ANYWHERE, opt_tcp_port,
	  "TCP port to listen on, 0 = no TCP (default: 11211)" },
	{ "udp-port", NULL, 'U', "PORT", OPT_ANYWHERE, opt_udp_port,
	  "UDP port to listen on, 0 = no UDP (default: 0)" },
	{ "listen", NULL, 'l', "ADDRS", OPT_ANYWHERE, opt_listen,
	  "comma-separated addresses to listen on, each HOST, HOST:PORT or [V6]:PORT\n"
	  "(default: 127.0.0.1; memcached's default is every interface, use 0.0.0.0)" },
	{ "memory", "memory-limit", 'm', "SIZE", OPT_ANYWHERE, opt_memory,
	  "the whole cache budget: items, hash table, segment headers; a bare\n"
	  "number is megabytes, K/M/G suffixes accepted (default: 64)" },
	{ "max-conns", "conn-limit", 'c', "NUM", OPT_ANYWHERE, opt_max_conns,
	  "most simultaneous client connections (default: 1024)" },
	{ "max-item-size", NULL, 'I', "SIZE", OPT_ANYWHERE, opt_item_max,
	  "largest item (key, value and header); bytes, k/m suffixes\n"
	  "(default: 1m, range 1k..1024m; raises the segment size when needed)" },
	{ "threads", NULL, 't', "NUM", OPT_ANYWHERE, opt_threads,
	  "posix stack worker threads (default: 4)" },
	{ "listen-backlog", NULL, 'b', "NUM", OPT_ANYWHERE, opt_backlog,
	  "TCP listen backlog (default: 1024)" },
	{ "enable-shutdown", NULL, 'A', NULL, OPT_ANYWHERE, opt_enable_shutdown,
	  "accept the 'shutdown' command" },
	{ "disable-cas", NULL, 'C', NULL, OPT_ANYWHERE, opt_disable_cas,
	  "do not keep cas uniques (gets returns 0)" },
	{ "disable-flush-all", NULL, 'F', NULL, OPT_ANYWHERE, opt_disable_flush,
	  "refuse the flush_all command" },
	{ "disable-evictions", NULL, 'M', NULL, OPT_ANYWHERE, opt_disable_evictions,
	  "return an error when memory is full instead of evicting" },
	{ "verbose", NULL, 'v', NULL, OPT_ANYWHERE, opt_verbose,
	  "more log output; repeat (-vv) for more; 'verbose = N' in a config file" },
	{ "stack", NULL, 0, "posix|native", OPT_ANYWHERE, opt_stack,
	  "network stack: posix = kernel sockets (default), native = DPDK" },
	{ "eviction", NULL, 0, "POLICY", OPT_ANYWHERE, opt_eviction,
	  "how memory is reclaimed when full (default: merge); none = -M" },
	{ "segment-size", NULL, 0, "SIZE", OPT_ANYWHERE, opt_segment_size,
	  "Segcache segment size; bytes, K/M/G suffixes (default: 1M)" },
	{ "engine", NULL, 0, "seg|baseline", OPT_ANYWHERE, opt_engine,
	  "storage engine: seg = Segcache (default), baseline = rte_hash engine" },
	{ "heap", NULL, 0, "auto|anon|hugepage|file", OPT_ANYWHERE, opt_heap,
	  "item memory: hugepage = EAL hugepages, anon = anonymous memory,\n"
	  "file = --heap-file; auto = hugepage when the EAL has hugepages,\n"
	  "anon otherwise (default: auto)" },
	{ "heap-file", NULL, 0, "PATH", OPT_ANYWHERE, opt_heap_file,
	  "put item memory in this file, mapped with libpmem2 (a file on a DAX\n"
	  "file system or a device DAX for persistent memory); created and\n"
	  "grown as needed, kept afterwards; implies --heap file. A graceful\n"
	  "stop saves the cache in it and the next start takes it back (warm\n"
	  "restart; see docs/operations.md)" },
	{ "restart-threads", NULL, 0, "NUM", OPT_ANYWHERE, opt_restart_threads,
	  "--heap-file: threads that validate the saved cache at a warm start\n"
	  "(default: 0 = one per CPU the process may use)" },
	{ "restart-verify", NULL, 0, NULL, OPT_ANYWHERE, opt_restart_verify,
	  "--heap-file: at a warm start, read every saved item and check that its\n"
	  "key hashes to its slot (default: check every slot's place and the\n"
	  "counts, and read only items whose segment may hold expired ones)" },
	{ "ip", NULL, 0, "ADDR/PREFIX", OPT_ANYWHERE, opt_ip,
	  "--stack native: the server's IPv4 address and subnet on the port,\n"
	  "e.g. 198.18.0.2/24 (required with --stack native)" },
	{ "port-id", NULL, 0, "N", OPT_ANYWHERE, opt_port_id,
	  "--stack native: the DPDK port to serve on (default: the first port)" },
	{ "queues", NULL, 0, "NUM", OPT_ANYWHERE, opt_queues,
	  "--stack native: RX/TX queue pairs, one per worker lcore\n"
	  "(default: every worker lcore, i.e. the EAL's lcores minus the main one)" },
	{ "rx-desc", NULL, 0, "NUM", OPT_ANYWHERE, opt_rx_desc,
	  "--stack native: RX descriptors per queue (default: 1024)" },
	{ "tx-desc", NULL, 0, "NUM", OPT_ANYWHERE, opt_tx_desc,
	  "--stack native: TX descriptors per queue (default: 1024)" },
	{ "mtu", NULL, 0, "BYTES", OPT_ANYWHERE, opt_mtu,
	  "--stack native: IP MTU of the port (default: 1500)" },
	{ "tcp-buffer-memory", NULL, 0, "SIZE", OPT_ANYWHERE, opt_tcp_buffer_memory,
	  "--stack native: memory for the TCP buffers of all connections\n"
	  "together; a connection holds 96 KiB while it has bytes in flight.\n"
	  "Split evenly over the worker lcores, at least 4 busy connections\n"
	  "each. At the limit a request waits for its client to send it again\n"
	  "(a retransmission) instead of the server taking more memory. A bare\n"
	  "number is megabytes, K/M/G suffixes accepted; 0 = no limit, up to\n"
	  "96 KiB for every connection of -c (default: 0)" },
	{ "link-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_link_timeout,
	  "--stack native: how long to wait for the link at start; 0 = start\n"
	  "without waiting (default: 10)" },
	{ "allow", NULL, 0, "CIDRS", OPT_ANYWHERE, opt_allow,
	  "serve only clients from these comma-separated IPv4 networks, e.g.\n"
	  "198.18.0.0/15,10.1.2.3; others get nothing, not even a refusal\n"
	  "(default: everyone)" },
	{ "rss-key", NULL, 0, "HEX", OPT_ANYWHERE, opt_rss_key,
	  "--stack native: the NIC's RSS hash key, repeated to the key size the\n"
	  "NIC has (default: random at every start, so that nobody can choose\n"
	  "source ports that land on one lcore; 6d5a gives the well-known\n"
	  "symmetric key)" },
	{ "udp-writes", NULL, 0, NULL, OPT_ANYWHERE, opt_udp_writes,
	  "serve every command over UDP (default: only get, gets, gat, gats, mg,\n"
	  "mn and version: a forged source cannot store, delete or flush)" },
	{ "udp-reply-max", NULL, 0, "BYTES", OPT_ANYWHERE, opt_udp_reply_max,
	  "most reply bytes to one UDP datagram, which bounds what a forged\n"
	  "request can reflect; over it the reply is an error line; 0 = no\n"
	  "limit (default: 4096, about three datagrams)" },
	{ "udp-any-source", NULL, 0, NULL, OPT_ANYWHERE, opt_udp_any_source,
	  "--stack native: answer UDP from beyond the subnet too (default: only\n"
	  "peers on the port's subnet, which a spoofer must be on)" },
	{ "idle-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_idle_timeout,
	  "close a TCP connection that sent nothing for this long, as\n"
	  "memcached's -o idle_timeout (default: 0 = never)" },
	{ "hash-power", NULL, 0, "N", OPT_ANYWHERE, opt_hash_power,
	  "log2 of the hash table's head buckets (64 bytes, 7 items each), as\n"
	  "memcached's -o hashpower; more items chain overflow buckets from the\n"
	  "heap (default: one bucket per KiB of -m)" },
	{ "hash-grow", NULL, 0, "N", OPT_ANYWHERE, opt_hash_grow,
	  "how many times its starting size the hash table may grow to as items\n"
	  "pile up: 1 (fixed), 2, 4, 8 or 16. The table is outside -m (16 times\n"
	  "is as large as -m), and a --heap-file reserves room for its largest\n"
	  "(default: 16, or 2 with --heap-file)" },
	{ "no-mrc", NULL, 0, NULL, OPT_ANYWHERE, opt_no_mrc,
	  "do not sample keys for the live miss-ratio curve and hot keys\n"
	  "(stats mrc, stats hotkeys; on by default with --engine seg)" },
	{ "extended", NULL, 'o', "LIST", OPT_ANYWHERE, opt_extended,
	  "memcached's -o, comma-separated: hashpower=N, idle_timeout=N; its\n"
	  "slab, LRU and crawler tuning (modern, slab_reassign, lru_crawler, ...)\n"
	  "is accepted with a warning and does nothing" },
	{ "eal", NULL, 0, "ARGS", OPT_ANYWHERE, opt_eal,
	  "DPDK EAL options, blank-separated, e.g. --eal '-a 0000:3b:00.0\n"
	  "--file-prefix cache1'; repeatable, and `eal = ...` in a config file.\n"
	  "The way to EAL options on a line without '--' (see the end of this\n"
	  "help); with '--' they add to the words before it" },
	{ "config", NULL, 0, "FILE", OPT_CMDLINE_ONLY, opt_config,
	  "read options from an INI file first ([segcached] section, keys are\n"
	  "the long option names, '#' starts a comment); the command line wins" },
	{ "help", NULL, 'h', NULL, OPT_CMDLINE_ONLY, opt_help,
	  "print this help and exit" },
	{ "version", NULL, 'V', NULL, OPT_CMDLINE_ONLY, opt_version,
	  "print the version and exit" },
	{ "max-conns-per-source", NULL, 0, "NUM", OPT_ANYWHERE, opt_max_conns_per_source,
	  "most connections one client address (IPv6: one /64) may hold; more\n"
	  "are refused at once with a reset. 0 = no limit (default: 0, as\n"
	  "memcached: a proxy is one address with many connections). --stack\n"
	  "native counts per worker lcore, see docs/operations.md" },
	{ "request-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_request_timeout,
	  "reset a connection whose started request has not arrived whole after\n"
	  "this long (slowloris), or whose replies wait unsent with the client\n"
	  "taking none for this long; idle connections with nothing pending are\n"
	  "never affected (that is --idle-timeout). 0 = never (default: 30)" },
	{ "admin-port", NULL, 0, "PORT", OPT_ANYWHERE, opt_admin_port,
	  "also listen on this TCP port for administration only (stats,\n"
	  "version, verbosity, quit, shutdown): not counted against -c, at most\n"
	  "16 connections, so stats work on a full server. 0 = none (default)" },
	{ "metrics-port", NULL, 0, "PORT", OPT_ANYWHERE, opt_metrics_port,
	  "serve Prometheus metrics at http://HOST:PORT/metrics on every -l\n"
	  "host (kernel sockets on both stacks: 127.0.0.1 by default). 0 = none\n"
	  "(default; see docs/operations.md, Monitoring)" },
};

#define OPT_COUNT RTE_DIM(opt_table)

const struct opt_desc *
options_table(size_t *n)
{
	*n = OPT_COUNT;
	return opt_table;
}

void
options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->tcp_port = 11211;
	o->udp_port = 0;
	strcpy(o->listen, "127.0.0.1");
	o->memory = 64 * MIB;
	o->max_conns = 1024;
	o->item_max = MIB;
	o->threads = 4;
	o->backlog = 1024;
	o->stack = STACK_POSIX;
	o->eviction = ENGINE_EVICT_MERGE;
	o->engine = SERVER_ENGINE_SEG;
	o->heap = HEAP_AUTO;
	o->port_id = -1;
	o->link_timeout = 10;
	o->udp_reply_max = 4096;
	o->request_timeout = 30;
}

int
options_apply(struct options *o, const struct opt_desc *d, const char *arg,
	      const char *where, char *err, size_t errlen)
{
	char why[256];

	if (d->parse(o, arg, why, sizeof(why)) == 0)
		return 0;
	return util_fail(err, errlen, "%s--%s: %s", where, d->name, why);
}

const struct opt_desc *
options_find(const char *name)
{
	size_t i;

	for (i = 0; i < OPT_COUNT; i++)
		if (strcmp(opt_table[i].name, name) == 0 ||
		    (opt_table[i].alias && strcmp(opt_table[i].alias, name) == 0))
			return &opt_table[i];
	return NULL;
}

int
options_finalize(struct options *o, char *err, size_t errlen)
{
	if (o->tcp_port == 0 && o->udp_port == 0)
		return util_fail(err, errlen,
			    "--port 0 and --udp-port 0: nothing to listen on");
	if (o->stack == STACK_NATIVE && o->ip_addr == 0)
		return util_fail(err, errlen,
			    "--stack native needs --ip ADDR/PREFIX "
			    "(the server's address on the port)");
	if (o->stack == STACK_POSIX && o->ip_addr != 0)
		return util_fail(err, errlen,
			    "--ip applies to --stack native only (the posix stack listens on -l)");
	if (o->stack == STACK_POSIX && o->tcp_buffer_memory != 0)
		return util_fail(err, errlen,
			    "--tcp-buffer-memory applies to --stack native only (the posix "
			    "stack's buffers are the kernel's: sysctl net.ipv4.tcp_mem)");
	if (o->admin_port != 0 && o->admin_port == o->tcp_port)
		return util_fail(err, errlen,
			    "--admin-port %u is the client port (-p): give it a port of its own",
			    o->admin_port);
	if (o->metrics_port != 0 && o->stack == STACK_POSIX &&
	    (o->metrics_port == o->tcp_port || o->metrics_port == o->admin_port))
		return util_fail(err, errlen,
			    "--metrics-port %u is the %s port: give it a port of its own",
			    o->metrics_port, o->metrics_port == o->tcp_port ? "client (-p)" : "admin");
	if (o->evictions_disabled)
		o->eviction = ENGINE_EVICT_NONE;
	if (o->heap == HEAP_FILE && o->heap_file[0] == '\0')
		return util_fail(err, errlen, "--heap file needs --heap-file PATH");
	if (o->heap_file[0] != '\0' && o->heap != HEAP_FILE)
		return util_fail(err, errlen, "--heap-file and --heap %s contradict each other",
			    o->heap == HEAP_ANON ? "anon" :
			    o->heap == HEAP_HUGEPAGE ? "hugepage" : "auto");
	/* lib/seg's largest item (a 22-bit value length, seg_item.h): a bad
	 * value like any other, refused before anything starts. */
	if (o->engine == SERVER_ENGINE_SEG && o->item_max > OPTIONS_SEG_ITEM_MAX)
		return util_fail(err, errlen,
			    "--max-item-size %zu is above the seg engine's largest, 4m (%u)",
			    o->item_max, OPTIONS_SEG_ITEM_MAX);
	/* A small Segcache heap gets smaller segments, and -I follows them
	 * unless it was given (seg_segment_size_for says why). */
	if (o->engine == SERVER_ENGINE_SEG && o->segment_size == 0 && !o->item_max_given &&
	    seg_segment_size_for(o->memory) < o->item_max) {
		o->segment_size = seg_segment_size_for(o->memory);
		o->item_max = o->segment_size;
	}
	/* An item must fit in one segment. Without --segment-size the
	 * engine grows the segment to fit -I, as memcached's -I grows its
	 * slab page; an explicit segment size that is too small is an error. */
	if (o->segment_size != 0 && o->item_max > o->segment_size)
		return util_fail(err, errlen,
			    "--max-item-size %zu is larger than --segment-size %zu",
			    o->item_max, o->segment_size);
	if (o->item_max > o->memory / 2)
		return util_fail(err, errlen,
			    "--max-item-size %zu is more than half of --memory %zu",
			    o->item_max, o->memory);
	return 0;
}

void
options_usage(FILE *f, const char *prog)
{
	size_t i;

	fprintf(f,
		"Usage: %s [segcached options]\n"
		"   or: %s [EAL options] -- [segcached options]\n"
		"\n"
		"A memcached-compatible cache server. Without '--' every word is\n"
		"segcached's (memcached's letters: -m 1024 -p 11211 -t 4), but for the\n"
		"EAL options listed at the end, and the EAL gets the host's defaults.\n"
		"With '--' the words before it are DPDK EAL options, as in any DPDK\n"
		"application: %s --no-huge -l 0-3 -- --stack posix -m 1G -t 4\n"
		"\n"
		"segcached options:\n",
		prog, prog, prog);
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_desc *d = &opt_table[i];
		char head[96];
		const char *h, *nl;
		int n;

		if (d->letter)
			n = snprintf(head, sizeof(head), "  -%c, --%s", d->letter, d->name);
		else
			n = snprintf(head, sizeof(head), "      --%s", d->name);
		if (d->argname && n > 0 && (size_t)n < sizeof(head))
			snprintf(head + n, sizeof(head) - n, " %s", d->argname);
		fprintf(f, "%s\n", head);
		/* Help text, indented, one output line per '\n'. */
		for (h = d->help; *h; h = nl + 1) {
			nl = strchr(h, '\n');
			if (nl == NULL)
				nl = h + strlen(h);
			fprintf(f, "        %.*s\n", (int)(nl - h), h);
			if (*nl == '\0')
				break;
		}
		if (d->parse == opt_eviction)
			for (unsigned p = 0; p < ENGINE_EVICT_COUNT; p++)
				fprintf(f, "          %-7s %s\n", engine_eviction_policies[p].name,
					engine_eviction_policies[p].help);
		if (d->alias)
			fprintf(f, "        (also --%s, as in memcached)\n", d->alias);
	}
	fprintf(f,
		"\nEAL options that go to the EAL wherever they are on a line without\n"
		"'--' (any other goes in --eal):\n"
		"  %s\n"
		"The EAL then also gets --no-huge when the host has no free, mounted\n"
		"hugepages, and -l with the CPUs the process may run on; -v prints\n"
		"the EAL options it starts with.\n"
		"Defaults added to the EAL options on both lines unless given:\n"
		"--in-memory (or --no-shconf with --no-huge) when no --file-prefix is\n"
		"set, so that instances never collide; --no-pci with the posix stack.\n"
		"Exit status: 0 on a clean shutdown (SIGINT, SIGTERM, 'shutdown'; a\n"
		"signal during start-up stops at once, saving nothing);\n"
		"64 for a usage mistake: a bad option, config file or EAL option,\n"
		"found by segcached or by the EAL; 71 when a socket cannot be bound;\n"
		"1 for other start-up failures.\n",
		eal_args_known);
}
