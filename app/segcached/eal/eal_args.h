/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The EAL half of the command line, the one place that reads EAL
 * arguments. Two forms:
 *
 *   segcached [segcached options]                  (memcached's line)
 *   segcached [EAL options] -- [segcached options]
 *
 * Without `--` every word is segcached's, except the EAL long options of
 * eal_args_known (--no-huge, --vdev, --file-prefix, ...), which go to the
 * EAL wherever they are on the line; other EAL options come through
 * --eal "ARGS" (or `eal =` in the config file), and the EAL gets defaults
 * chosen for the host (eal_args_add_host_defaults). With `--` the words
 * before it are the EAL's, as DPDK applications have them.
 */
#ifndef SEGCACHED_EAL_ARGS_H
#define SEGCACHED_EAL_ARGS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

struct eal_args {
	int eal_argc;       /* argv[0], the EAL arguments, our defaults */
	char **eal_argv;    /* NULL-terminated; the array is ours, and of the
			     * strings only those in words/host_lcores */
	int eal_room;       /* eal_argv's capacity, its NULL excluded */
	char mem_arg[16];   /* storage for an added -m value */
	char host_lcores[256]; /* storage for an added -l value */
	char *words;        /* the --eal words, split in place */
	int app_argc;       /* argv[0] plus segcached's words */
	char **app_argv;
	bool has_separator; /* the command line had a `--` */
};

/* The EAL long options recognised on a line without `--`, for the help
 * text: "--no-huge, --no-pci, ...", on two lines. */
extern const char eal_args_known[];

/* Splits argv: at the first `--`, or, without one, into the EAL long
 * options of eal_args_known (and their values) and the rest. Returns 0
 * or -1 (out of memory). */
int eal_args_split(struct eal_args *a, int argc, char **argv);

/* Is `word` (`--no-huge`, `--vdev=...`) one of eal_args_known? */
bool eal_args_is_known(const char *word);

/* Appends the blank-separated words of `words` (--eal, the config file's
 * `eal`); called once. Returns 0 or -1 (out of memory). */
int eal_args_add_words(struct eal_args *a, const char *words);

/* For a line without `--`, unless the EAL options say otherwise:
 * --no-huge when the host has no free hugepages or no hugetlbfs mount,
 * and `-l` with the CPUs of `cpus` (the process's affinity mask). */
void eal_args_add_host_defaults(struct eal_args *a, const cpu_set_t *cpus);

/* Adds, unless the user chose otherwise: --in-memory (or --no-shconf with
 * --no-huge, which --in-memory cannot be combined with) when there is no
 * --file-prefix, so that two instances never share runtime files; for the
 * posix stack, --no-pci, since it drives no device; and with --no-huge,
 * whose EAL memory is a fixed 64 MiB unless -m says otherwise,
 * `-m eal_memory_mb` when that is not 0 (an engine that allocates from the
 * EAL needs it). */
void eal_args_add_defaults(struct eal_args *a, bool posix_stack,
			   unsigned eal_memory_mb);

/* Checks the core options (-l, --lcores, -c) against `cpus`, the CPUs the
 * process may run on: 0, or -1 with a message naming the option and the
 * value in err ("EAL option -l 0-7: CPU 2 is not one this process may run
 * on (CPUs 0-1)"). */
int eal_args_check_lcores(const struct eal_args *a, const cpu_set_t *cpus, char *err,
			  size_t errlen);

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
/* Do the EAL's words ask for nothing a process without the EAL lacks
 * (--no-huge, --no-pci, --in-memory, --no-shconf, --no-telemetry, -m, the
 * host's default core list)? Then the posix stack runs without it. */
bool eal_args_ask_nothing(const struct eal_args *a);
bool eal_args_pins_lcores(const struct eal_args *a);

/* The EAL words (argv[0] left out), blank-separated, for the log. */
void eal_args_format(const struct eal_args *a, char *buf, size_t len);

/* Free hugepages of any size, from sysfs; -1 when it cannot be read. */
long eal_args_free_hugepages(void);

void eal_args_free(struct eal_args *a);

#endif /* SEGCACHED_EAL_ARGS_H */
