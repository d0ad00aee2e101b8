/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The option table's rows, shared by its readers: the command line
 * (options_cli.c), the config file (options_config.c) and the hints after
 * an unknown option (options_hint.c).
 */
#ifndef SEGCACHED_OPTIONS_PRIVATE_H
#define SEGCACHED_OPTIONS_PRIVATE_H

#include <stddef.h>

#include "options.h"

typedef int (*opt_parser)(struct options *o, const char *arg, char *err,
			  size_t errlen);

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

/* The table (options.c) and its number of rows. */
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

#endif
