/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The command line: getopt_long over the option table's rows. Values are
 * collected first and applied after the config file (--config, wherever
 * it stands), so the command line wins; an unknown option gets a hint
 * (options_hint.c).
 */
#include "options_private.h"
#include "eal/eal_args.h"

#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_err.h"

int
options_parse(struct options *o, int argc, char **argv, char *err,
	      size_t errlen)
{
	size_t count, i, nlong = 0, nshort = 0, npending = 0;
	const struct opt_desc *opt_table = options_table(&count);
	struct option *longopts = calloc(2 * count + 1, sizeof(*longopts));
	char *shortopts = calloc(3 * count + 2, 1);
	struct pending {
		const struct opt_desc *d;
		const char *arg;
	} *pending = calloc(argc > 0 ? argc : 1, sizeof(*pending));
	int c, rc = -1;

	if (longopts == NULL || shortopts == NULL || pending == NULL) {
		util_fail(err, errlen, "out of memory");
		goto out;
	}
	/* ':' first: report missing arguments as ':' rather than '?'. */
	shortopts[nshort++] = ':';
	for (i = 0; i < count; i++) {
		const struct opt_desc *d = &opt_table[i];
		int val = d->letter ? d->letter : (int)(OPT_LONG_BASE + i);
		int has_arg = d->argname ? required_argument : no_argument;

		longopts[nlong++] = (struct option){ d->name, has_arg, NULL, val };
		if (d->alias)
			longopts[nlong++] = (struct option){ d->alias, has_arg, NULL, val };
		if (d->letter) {
			shortopts[nshort++] = (char)d->letter;
			if (d->argname)
				shortopts[nshort++] = ':';
		}
	}
	longopts[nlong] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[nshort] = '\0';

	/* Collect first, apply later: the config file, wherever --config is,
	 * is read before any command-line value. */
	optind = 0; /* full getopt reset (glibc) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt_desc *d = NULL;

		if (c == '?') {
			bool letter = optopt && optopt < OPT_LONG_BASE && isprint(optopt);
			const char *hint = letter ? options_unknown_hint(optopt, NULL)
						  : options_unknown_hint(0, argv[optind - 1]);
			char name[64];

			if (letter)
				snprintf(name, sizeof(name), "-%c", optopt);
			else
				snprintf(name, sizeof(name), "%s", argv[optind - 1]);
			const char *near = letter || hint ? NULL : options_closest(name);

			if (!letter && hint == NULL && eal_args_is_known(name))
				hint = "an EAL option: before '--' when the line has one, "
				       "or anywhere on a line without '--'";

			if (near != NULL)
				util_fail(err, errlen, "unknown option %s (did you mean --%s?)", name,
					  near);
			else
				util_fail(err, errlen, "unknown option %s%s%s", name,
					  hint ? ": " : "", hint ? hint : "");
			goto out;
		}
		if (c == ':') {
			util_fail(err, errlen, "option %s needs an argument",
			     argv[optind - 1]);
			goto out;
		}
		if (c >= OPT_LONG_BASE)
			d = &opt_table[c - OPT_LONG_BASE];
		else
			for (i = 0; i < count; i++)
				if (opt_table[i].letter == c)
					d = &opt_table[i];
		if (d == NULL) {
			util_fail(err, errlen, "unknown option");
			goto out;
		}
		if (strcmp(d->name, "config") == 0) {
			if (options_apply(o, d, optarg, "", err, errlen) < 0)
				goto out;
			continue;
		}
		pending[npending++] = (struct pending){ d, optarg };
	}
	if (optind < argc) {
		util_fail(err, errlen, "unexpected argument '%s'", argv[optind]);
		goto out;
	}

	if (o->config_file[0] && options_load_config(o, o->config_file, err, errlen) < 0)
		goto out;
	for (i = 0; i < npending; i++)
		if (options_apply(o, pending[i].d, pending[i].arg, "", err, errlen) < 0)
			goto out;
	rc = 0;
out:
	free(pending);
	free(longopts);
	free(shortopts);
	optind = 0;
	return rc;
}
