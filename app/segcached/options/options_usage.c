/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The help text (--help): the two command lines, the option table's rows
 * with their help, the EAL options read on a line without '--', the EAL
 * defaults added, and the exit statuses.
 */
#include "options_private.h"
#include "eal/eal_args.h"

#include <stdio.h>
#include <string.h>

void
options_usage(FILE *f, const char *prog)
{
	size_t n, i;
	const struct opt_desc *table = options_table(&n);

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
	for (i = 0; i < n; i++) {
		const struct opt_desc *d = &table[i];
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
