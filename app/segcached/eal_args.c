/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The EAL half of the command line: split from segcached's options, read
 * (which options it has, how many lcores -l/--lcores/-c give) and
 * completed with defaults, before the EAL starts.
 */
#include "eal_args.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
bool
eal_args_has(const struct eal_args *a, const char *opt)
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
	if (!eal_args_has(a, "--file-prefix") && !eal_args_has(a, "--in-memory") &&
	    !eal_args_has(a, "--no-shconf"))
		add(a, eal_args_has(a, "--no-huge") ? "--no-shconf" : "--in-memory");
	if (posix_stack && !eal_args_has(a, "--no-pci") && !eal_args_has(a, "-a") &&
	    !eal_args_has(a, "--allow") && !eal_args_has(a, "-b") && !eal_args_has(a, "--block"))
		add(a, "--no-pci");
	if (eal_memory_mb != 0 && eal_args_has(a, "--no-huge") && !eal_args_has(a, "-m") &&
	    !eal_args_has(a, "--socket-mem")) {
		snprintf(a->mem_arg, sizeof(a->mem_arg), "%u", eal_memory_mb);
		add(a, "-m");
		add(a, a->mem_arg);
	}
}

bool
eal_args_pins_lcores(const struct eal_args *a)
{
	return eal_args_has(a, "-l") || eal_args_has(a, "--lcores") || eal_args_has(a, "-c");
}

/* The value of option `opt` (`-l`, `--lcores`) if eal_argv[*i] is it:
 * `-l VALUE`, `-lVALUE`, `--lcores VALUE` or `--lcores=VALUE`; a
 * separate VALUE is stepped over. NULL if eal_argv[*i] is another. */
static const char *
opt_value(const struct eal_args *a, int *i, const char *opt)
{
	const char *s = a->eal_argv[*i];
	size_t n = strlen(opt);

	if (strncmp(s, opt, n) != 0)
		return NULL;
	if (s[n] == '\0') {
		if (*i + 1 >= a->eal_argc)
			return "";
		return a->eal_argv[++*i];
	}
	if (opt[1] == '-')
		return s[n] == '=' ? s + n + 1 : NULL;
	return s + n;
}

/* The lcores a list names, "0-3,5" or "(0-3)@..." (the CPUs after an @
 * count nothing): the numbers each range covers. */
static unsigned
count_lcore_list(const char *p)
{
	unsigned n = 0;

	while (*p == '(')
		p++;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			break;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			p = end;
		}
		n += hi >= lo ? (unsigned)(hi - lo + 1) : 1;
		while (*p && *p != ',')
			p++;
		if (*p == ',')
			p++;
	}
	return n;
}

unsigned
eal_args_lcores_max(const struct eal_args *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	for (int i = 1; i < a->eal_argc; i++) {
		const char *v;

		if ((v = opt_value(a, &i, "-l")) != NULL ||
		    (v = opt_value(a, &i, "--lcores")) != NULL) {
			unsigned n = count_lcore_list(v);

			if (n > 0)
				return n;
		} else if ((v = opt_value(a, &i, "-c")) != NULL) {
			return (unsigned)__builtin_popcountll(strtoull(v, NULL, 16));
		}
	}
	return ncpu > 0 ? (unsigned)ncpu : 1;
}

void
eal_args_free(struct eal_args *a)
{
	free(a->eal_argv);
	free(a->app_argv);
	memset(a, 0, sizeof(*a));
}
