/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The command line is `segcached [EAL args] -- [segcached options]`. This
 * splits it and adds EAL defaults that keep runs independent of each other.
 */
#ifndef SEGCACHED_EAL_ARGS_H
#define SEGCACHED_EAL_ARGS_H

#include <stdbool.h>

struct eal_args {
	int eal_argc;       /* argv[0], the EAL arguments, our defaults */
	char **eal_argv;    /* NULL-terminated; the array is ours, not the strings */
	char mem_arg[16];   /* storage for an added -m value */
	int app_argc;       /* argv[0] plus everything after `--` */
	char **app_argv;
	bool has_separator; /* the command line had a `--` */
};

/* Splits argv at the first `--`. Returns 0 or -1 (out of memory). */
int eal_args_split(struct eal_args *a, int argc, char **argv);

/* Adds, unless the user chose otherwise: --in-memory (or --no-shconf with
 * --no-huge, which --in-memory cannot be combined with) when there is no
 * --file-prefix, so that two instances never share runtime files; for the
 * posix stack, --no-pci, since it drives no device; and with --no-huge,
 * whose EAL memory is a fixed 64 MiB unless -m says otherwise,
 * `-m eal_memory_mb` when that is not 0 (an engine that allocates from the
 * EAL needs it). */
void eal_args_add_defaults(struct eal_args *a, bool posix_stack,
			   unsigned eal_memory_mb);

/* Is an EAL option given, as `--opt`, `--opt=value` or (short, "-m")
 * `-mVALUE`? */
bool eal_args_has(const struct eal_args *a, const char *opt);

/* Upper bound of the lcores the EAL will run, from -l/--lcores/-c (each
 * as one word with its value or two), else every CPU: enough to size
 * --no-huge memory before the EAL starts. */
unsigned eal_args_lcores_max(const struct eal_args *a);

/* Does the EAL command line choose the lcores (-l, --lcores, -c)? Then the
 * posix stack's threads run on those lcores' CPUs, else on every CPU the
 * process was started with. */
bool eal_args_pins_lcores(const struct eal_args *a);

void eal_args_free(struct eal_args *a);

#endif /* SEGCACHED_EAL_ARGS_H */
