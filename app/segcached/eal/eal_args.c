/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The EAL half of the command line: split from segcached's options, read
 * (which options it has, which cores -l/--lcores/-c name) and completed
 * with defaults, before the EAL starts.
 */
#include "eal_args.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_config.h>

#include "util/util_err.h"

/* The EAL long options a line without `--` passes to the EAL: none is a
 * segcached option, and users and docs write them as they did before
 * `--`. The rest of the EAL's options come through --eal. */
static const struct {
	const char *name;
	bool has_value;
} known[] = {
	{ "--no-huge", false },     { "--no-pci", false },   { "--no-shconf", false },
	{ "--in-memory", false },   { "--file-prefix", true }, { "--vdev", true },
	{ "--log-level", true },    { "--huge-dir", true },  { "--socket-mem", true },
	{ "--lcores", true },       { "--main-lcore", true }, { "--iova-mode", true },
};

const char eal_args_known[] =
	"--no-huge, --no-pci, --no-shconf, --in-memory, --file-prefix, --vdev,\n"
	"  --log-level, --huge-dir, --socket-mem, --lcores, --main-lcore, --iova-mode";

/* known[]'s entry for `--name` or `--name=value`, or -1. */
static int
known_index(const char *word)
{
	size_t n = strcspn(word, "=");

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && strncmp(word, known[i].name, n) == 0)
			return (int)i;
	return -1;
}

bool
eal_args_is_known(const char *word)
{
	return known_index(word) >= 0;
}

/* Room for `more` words in eal_argv, and its NULL. */
static int
eal_room(struct eal_args *a, int more)
{
	char **p;

	if (a->eal_argc + more <= a->eal_room)
		return 0;
	p = realloc(a->eal_argv, (size_t)(a->eal_argc + more + 1) * sizeof(char *));
	if (p == NULL)
		return -1;
	a->eal_argv = p;
	a->eal_room = a->eal_argc + more;
	return 0;
}

/* Room for the defaults eal_args_add_*defaults() may append. */
#define EAL_ARGS_EXTRA 8

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
	a->app_argv = calloc(argc + 1, sizeof(char *));
	if (a->app_argv == NULL || eal_room(a, argc + EAL_ARGS_EXTRA) < 0) {
		eal_args_free(a);
		return -1;
	}
	a->eal_argv[a->eal_argc++] = argv[0];
	a->app_argv[a->app_argc++] = argv[0];
	for (i = 1; i < argc; i++) {
		int k = a->has_separator ? -1 : known_index(argv[i]);

		if (i < sep && a->has_separator) {
			a->eal_argv[a->eal_argc++] = argv[i];
		} else if (k >= 0) {
			a->eal_argv[a->eal_argc++] = argv[i];
			if (known[k].has_value && strchr(argv[i], '=') == NULL && i + 1 < argc)
				a->eal_argv[a->eal_argc++] = argv[++i];
		} else if (i != sep) {
			a->app_argv[a->app_argc++] = argv[i];
			/* --eal's value is segcached's to read, even
			 * when it is one known EAL option. */
			if (!a->has_separator && strcmp(argv[i], "--eal") == 0 && i + 1 < argc)
				a->app_argv[a->app_argc++] = argv[++i];
		}
	}
	a->eal_argv[a->eal_argc] = NULL;
	return 0;
}

int
eal_args_add_words(struct eal_args *a, const char *words)
{
	char *save = NULL, *w;
	int n = 0;

	if (words == NULL || *words == '\0')
		return 0;
	free(a->words);
	a->words = strdup(words);
	if (a->words == NULL)
		return -1;
	for (const char *p = words; *p; p++)
		n += *p == ' ' || *p == '\t';
	if (eal_room(a, n + 1 + EAL_ARGS_EXTRA) < 0)
		return -1;
	for (w = strtok_r(a->words, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save))
		a->eal_argv[a->eal_argc++] = w;
	a->eal_argv[a->eal_argc] = NULL;
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

long
eal_args_free_hugepages(void)
{
	static const char *const sizes[] = { "hugepages-2048kB", "hugepages-1048576kB" };
	long total = -1;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char path[128];
		FILE *f;
		long n;

		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/free_hugepages",
			 sizes[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &n) == 1)
			total = (total < 0 ? 0 : total) + n;
		fclose(f);
	}
	return total;
}

/* Is a hugetlbfs mounted (where the EAL looks for hugepages)? */
static bool
hugetlbfs_mounted(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char dev[128], dir[256], type[64];

		found = sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 &&
			strcmp(type, "hugetlbfs") == 0;
	}
	fclose(f);
	return found;
}

/* "0-3,5": the CPUs of a set, as lists are written. */
static void
format_cpus(const cpu_set_t *cpus, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && off < len; c++) {
		int last = c;

		if (!CPU_ISSET(c, cpus))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, cpus))
			last++;
		off += (size_t)snprintf(buf + off, len - off, last > c ? "%s%d-%d" : "%s%d",
					off ? "," : "", c, last);
		c = last;
	}
}

void
eal_args_add_host_defaults(struct eal_args *a, const cpu_set_t *cpus)
{
	if (!eal_args_has(a, "--no-huge") && !eal_args_has(a, "--huge-dir") &&
	    !eal_args_has(a, "--socket-mem") &&
	    (eal_args_free_hugepages() <= 0 || !hugetlbfs_mounted()))
		add(a, "--no-huge");
	if (!eal_args_pins_lcores(a) && CPU_COUNT(cpus) > 0) {
		format_cpus(cpus, a->host_lcores, sizeof(a->host_lcores));
		add(a, "-l");
		add(a, a->host_lcores);
	}
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
eal_args_ask_nothing(const struct eal_args *a)
{
	/* What a process has without the EAL anyway: no hugepages, no PCI
	 * scan, no runtime files shared with other processes, no telemetry. */
	static const char *const without[] = {
		"--no-huge", "--no-pci", "--in-memory", "--no-shconf", "--no-telemetry",
	};

	for (int i = 1; i < a->eal_argc; i++) {
		const char *w = a->eal_argv[i];
		bool known = false;

		/* the EAL's memory size, and the core list added here as the
		 * host's default (not one the user gave: that one pins) */
		if (i + 1 < a->eal_argc &&
		    (strcmp(w, "-m") == 0 ||
		     (strcmp(w, "-l") == 0 && a->eal_argv[i + 1] == a->host_lcores))) {
			i++;
			continue;
		}
		for (size_t k = 0; k < sizeof(without) / sizeof(without[0]); k++)
			known = known || strcmp(w, without[k]) == 0;
		if (!known)
			return false;
	}
	return true;
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

/* A number or a range "N-M" at *p, or with `paren` also "(LIST)": each
 * number goes into `set` (when not NULL) and counts in *n. Advances *p.
 * -1 when *p holds neither, or a number is not below `limit`. */
static int
parse_range_list(const char **p, bool paren, unsigned limit, cpu_set_t *set, unsigned *n)
{
	bool group = paren && **p == '(';

	if (group)
		++*p;
	do {
		char *end;
		unsigned long lo, hi;

		if (group && **p == ',')
			++*p;
		if (**p < '0' || **p > '9')
			return -1;
		lo = hi = strtoul(*p, &end, 10);
		*p = end;
		if (**p == '-') {
			if ((*p)[1] < '0' || (*p)[1] > '9')
				return -1;
			hi = strtoul(*p + 1, &end, 10);
			*p = end;
		}
		if (hi < lo || hi >= limit)
			return -1;
		for (unsigned long c = lo; c <= hi; c++) {
			if (set != NULL)
				CPU_SET(c, set);
			++*n;
		}
	} while (group && **p == ',');
	if (group && *(*p)++ != ')')
		return -1;
	return 0;
}

/* The CPUs a core option's value puts lcores on, and how many lcores:
 * -l "0-3,5"; --lcores "0-3", "0@1", "(0-3)@(0,1)", ...; -c a hex mask.
 * -1 when the value is not one. */
static int
parse_cores(const char *opt, const char *v, cpu_set_t *cpus, unsigned *nlcores)
{
	CPU_ZERO(cpus);
	*nlcores = 0;
	if (strcmp(opt, "-c") == 0) {
		size_t len;

		if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
			v += 2;
		len = strlen(v);
		if (len == 0 || strspn(v, "0123456789abcdefABCDEF") != len)
			return -1;
		for (size_t i = 0; i < len; i++) {
			char d[2] = { v[len - 1 - i], '\0' };
			unsigned long bits = strtoul(d, NULL, 16);

			for (unsigned b = 0; b < 4; b++)
				if (bits & (1u << b)) {
					if (4 * i + b >= RTE_MAX_LCORE)
						return -1;
					CPU_SET(4 * i + b, cpus);
					++*nlcores;
				}
		}
		return *nlcores > 0 ? 0 : -1;
	}
	for (;;) {
		cpu_set_t lcores;
		unsigned n = 0, ncpus = 0;

		CPU_ZERO(&lcores);
		if (parse_range_list(&v, opt[1] == '-', RTE_MAX_LCORE, &lcores, &n) < 0)
			return -1;
		if (opt[1] == '-' && *v == '@') {
			v++;
			if (parse_range_list(&v, true, CPU_SETSIZE, cpus, &ncpus) < 0)
				return -1;
		} else {
			CPU_OR(cpus, cpus, &lcores);
		}
		*nlcores += n;
		if (*v == '\0')
			return 0;
		if (*v++ != ',')
			return -1;
	}
}

static const char *const core_opts[] = { "-l", "--lcores", "-c" };

/* Calls fn for each core option's value; stops at a non-zero return. */
static int
each_core_opt(const struct eal_args *a,
	      int (*fn)(const char *opt, const char *v, void *arg), void *arg)
{
	for (int i = 1; i < a->eal_argc; i++)
		for (size_t k = 0; k < sizeof(core_opts) / sizeof(core_opts[0]); k++) {
			const char *v = opt_value(a, &i, core_opts[k]);
			int rc;

			if (v != NULL) {
				rc = fn(core_opts[k], v, arg);
				if (rc != 0)
					return rc;
				break;
			}
		}
	return 0;
}

struct check_ctx {
	const cpu_set_t *allowed;
	char *err;
	size_t errlen;
};

static int
check_one(const char *opt, const char *v, void *arg)
{
	struct check_ctx *c = arg;
	char have[256];
	cpu_set_t cpus;
	unsigned n;

	format_cpus(c->allowed, have, sizeof(have));
	if (*v == '\0')
		return util_fail(c->err, c->errlen, "EAL option %s needs a value (cores %s)", opt,
				 have);
	if (parse_cores(opt, v, &cpus, &n) < 0)
		return util_fail(c->err, c->errlen,
				 "EAL option %s %s: expected %s (lcores below %d)", opt, v,
				 strcmp(opt, "-c") == 0 ? "a hexadecimal core mask such as 0x3" :
				 strcmp(opt, "-l") == 0 ? "a core list such as 0-3,5" :
				 "a core list such as 0-3 or 0@1,(1-3)@(2,3)",
				 RTE_MAX_LCORE);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &cpus) && !CPU_ISSET(cpu, c->allowed))
			return util_fail(c->err, c->errlen,
					 "EAL option %s %s: CPU %d is not one this process may "
					 "run on: give cores from %s", opt, v, cpu, have);
	return 0;
}

int
eal_args_check_lcores(const struct eal_args *a, const cpu_set_t *cpus, char *err,
		      size_t errlen)
{
	struct check_ctx c = { cpus, err, errlen };

	/* Without a mask to check against, the EAL judges alone. */
	if (CPU_COUNT(cpus) == 0)
		return 0;
	return each_core_opt(a, check_one, &c) != 0 ? -1 : 0;
}

static int
count_one(const char *opt, const char *v, void *arg)
{
	cpu_set_t cpus;
	unsigned n;

	if (parse_cores(opt, v, &cpus, &n) < 0 || n == 0)
		return 0;
	*(unsigned *)arg = n;
	return 1;
}

unsigned
eal_args_lcores_max(const struct eal_args *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	unsigned n = 0;

	if (each_core_opt(a, count_one, &n) != 0)
		return n;
	return ncpu > 0 ? (unsigned)ncpu : 1;
}

void
eal_args_format(const struct eal_args *a, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 1; i < a->eal_argc && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "",
					a->eal_argv[i]);
}

void
eal_args_free(struct eal_args *a)
{
	free(a->eal_argv);
	free(a->app_argv);
	free(a->words);
	memset(a, 0, sizeof(*a));
}
