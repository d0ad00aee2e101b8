/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The option table's rows, shared by its readers: the command line
 * (options_cli.c), the config file (options_config.c), the hints after
 * an unknown option (options_hint.c) and the help (options_usage.c); the
 * rows' parsers, and the value parsers they build on.
 */
#ifndef SEGCACHED_OPTIONS_PRIVATE_H
#define SEGCACHED_OPTIONS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

/* -c's and --max-conns-per-source's largest. */
#define MAX_CONNS_MAX 1000000

/* A row's parser: sets its option in o from arg (NULL: a flag given on the
 * command line); 0, or -1 with why in err. */
typedef int opt_parse_fn(struct options *o, const char *arg, char *err, size_t errlen);
typedef opt_parse_fn *opt_parser;

enum opt_scope {
	OPT_ANYWHERE,     /* command line and config file */
	OPT_CMDLINE_ONLY, /* --config, --help, --version */
};

struct opt_desc {
	const char *name;   /* long option and config file key */
	const char *alias;  /* memcached's long name where it differs, or NULL */
	int letter;         /* short option, 0 for none */
	const char *argname; /* NULL: a flag without argument */
	enum opt_scope scope;
	opt_parser parse;   /* arg is NULL for a flag on the command line */
	const char *help;
};

/* getopt_long's value for long-only options and aliases: 256 + table index. */
#define OPT_LONG_BASE 256

/* The table (options_table.c) and its number of rows. */
const struct opt_desc *options_table(size_t *n);
/* The row of a long name or memcached's alias, or NULL. */
const struct opt_desc *options_find(const char *name);
/* Runs d's parser on arg; on failure err says "<where>--<name>: why". */
int options_apply(struct options *o, const struct opt_desc *d, const char *arg,
		  const char *where, char *err, size_t errlen);
/* Reads the config file at path into o (options_config.c). */
int options_load_config(struct options *o, const char *path, char *err, size_t errlen);
/* ": what to do instead" for a memcached option segcached lacks (by
 * letter, or by long name with or without dashes and "=value"), or NULL
 * (options_hint.c). */
const char *options_unknown_hint(int letter, const char *name);
/* The long option within two edits of a mistyped name, or NULL. */
const char *options_closest(const char *name);

/* The rows' parsers, by the table's groups. memcached's options
 * (options_memcached.c): */
opt_parse_fn opt_tcp_port, opt_udp_port, opt_listen, opt_memory, opt_max_conns, opt_item_max,
	opt_threads, opt_backlog, opt_enable_shutdown, opt_disable_cas, opt_disable_flush,
	opt_disable_evictions, opt_verbose, opt_idle_timeout, opt_hash_power, opt_extended,
	opt_help, opt_version;
/* segcached's own (options_segcached.c): */
opt_parse_fn opt_config, opt_stack, opt_eviction, opt_segment_size, opt_engine, opt_heap,
	opt_heap_file, opt_restart_threads, opt_restart_verify, opt_eal, opt_hash_grow,
	opt_udp_writes, opt_udp_reply_max, opt_allow, opt_max_conns_per_source,
	opt_request_timeout, opt_admin_port, opt_metrics_port, opt_no_mrc;
/* the admin port's and /metrics' reach (options_admin.c): */
opt_parse_fn opt_admin_listen, opt_admin_commands, opt_admin_idle_timeout, opt_metrics_listen;
/* Their defaults, and their checks against the other options (from
 * options_defaults and options_finalize). */
void options_admin_defaults(struct options *o);
int options_admin_finalize(struct options *o, char *err, size_t errlen);
/* memcached's kept for a drop-in command line: mapped, ignored with a
 * line, or refused with the reason (options_compat.c): */
opt_parse_fn opt_unix_socket, opt_unix_mask, opt_lock_memory, opt_core_dumps, opt_license,
	opt_reqs_per_event, opt_protocol, opt_disable_dumping, opt_slab_growth_factor,
	opt_slab_min_size, opt_large_pages, opt_stat_key_prefix, opt_disable_watch,
	opt_napi_ids, opt_sasl, opt_auth_file, opt_ssl;
/* Records "what: why" as an option taken and ignored (o->ignored). */
void options_note_ignored(struct options *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* -o's suboptions (options_compat.c): 0, or -1 with why in err. */
int options_extended_one(struct options *o, char *sub, char *err, size_t errlen);
/* --stack native's (options_native.c): */
opt_parse_fn opt_ip, opt_port_id, opt_queues, opt_rx_desc, opt_tx_desc, opt_mtu,
	opt_tcp_buffer_memory, opt_link_timeout, opt_rss_key, opt_udp_any_source,
	opt_offloads;

/* Values (options_value.c). A flag: arg NULL (given on the command line)
 * or a config-file boolean. */
int options_parse_flag(const char *arg, bool *out, char *err, size_t errlen);
/* A decimal unsigned number in [min, max], nothing else around it. */
int options_parse_uint(const char *arg, unsigned long long min, unsigned long long max,
		       unsigned long long *out, char *err, size_t errlen);
/* A size: a number of bare_unit bytes, or with a K, M or G suffix (and an
 * optional B or iB); 0, or -1 for anything else or an overflow. */
int options_parse_size(const char *s, size_t bare_unit, size_t *out);
/* A TCP or UDP port, 0 to 65535. */
int options_parse_port(const char *arg, uint16_t *port, char *err, size_t errlen);
/* arg's index in a NULL-terminated list of names, or -1 with the list in err. */
int options_parse_choice(const char *arg, const char *const *names, char *err,
			 size_t errlen);
/* "A.B.C.D", or "A.B.C.D/LEN" (required when prefix_required); nothing
 * else, no blanks or signs. LEN defaults to 32. */
bool options_parse_ipv4(const char *s, bool prefix_required, uint32_t *addr,
			unsigned *prefix);

#endif
