/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 */
#include "eal_args.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for the defaults eal_args_add_defaults() may append. */
#define EAL_ARGS_EXTRA 6

int
eal_args_split(struct eal_args *a, int argc, char **argv)
{
	int i, sep = argc;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			a->has_separator = true;
			break;
		}
	a->eal_argv = calloc(sep + EAL_ARGS_EXTRA + 1, sizeof(char *));
	/* Room for every word: main() may move a lone --help over. */
	a->app_argv = calloc(argc + 1, sizeof(char *));
	if (a->eal_argv == NULL || a->app_argv == NULL) {
		eal_args_free(a);
		return -1;
	}
	for (i = 0; i < sep; i++)
		a->eal_argv[a->eal_argc++] = argv[i];
	a->app_argv[a->app_argc++] = argv[0];
	for (i = sep + 1; i < argc; i++)
		a->app_argv[a->app_argc++] = argv[i];
	return 0;
}

/* Is the option given, as `--opt`, `--opt=value` or (short) `-oVALUE`? */
static bool
has_arg(const struct eal_args *a, const char *opt)
{
	size_t n = strlen(opt);
	int i;

	for (i = 1; i < a->eal_argc; i++) {
		const char *s = a->eal_argv[i];

		if (strncmp(s, opt, n) != 0)
			continue;
		if (s[n] == '\0' || s[n] == '=' || (opt[1] != '-'))
			return true;
	}
	return false;
}

static void
add(struct eal_args *a, const char *word)
{
	a->eal_argv[a->eal_argc++] = (char *)(uintptr_t)word;
	a->eal_argv[a->eal_argc] = NULL;
}

void
eal_args_add_defaults(struct eal_args *a, bool posix_stack,
		      unsigned eal_memory_mb)
{
	if (!has_arg(a, "--file-prefix") && !has_arg(a, "--in-memory") &&
	    !has_arg(a, "--no-shconf"))
		add(a, has_arg(a, "--no-huge") ? "--no-shconf" : "--in-memory");
	if (posix_stack && !has_arg(a, "--no-pci") && !has_arg(a, "-a") &&
	    !has_arg(a, "--allow") && !has_arg(a, "-b") && !has_arg(a, "--block"))
		add(a, "--no-pci");
	if (eal_memory_mb != 0 && has_arg(a, "--no-huge") && !has_arg(a, "-m") &&
	    !has_arg(a, "--socket-mem")) {
		snprintf(a->mem_arg, sizeof(a->mem_arg), "%u", eal_memory_mb);
		add(a, "-m");
		add(a, a->mem_arg);
	}
}

bool
eal_args_pins_lcores(const struct eal_args *a)
{
	return has_arg(a, "-l") || has_arg(a, "--lcores") || has_arg(a, "-c");
}

void
eal_args_free(struct eal_args *a)
{
	free(a->eal_argv);
	free(a->app_argv);
	memset(a, 0, sizeof(*a));
}
