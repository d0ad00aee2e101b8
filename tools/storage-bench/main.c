/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-storage-bench: see bench.h and README.md.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int
main(int argc, char **argv)
{
	struct sb_options o;
	struct sb_run_result *runs = NULL;
	struct sb_fill_result fills[SB_ENGINE_COUNT];
	unsigned nruns = 0, nfills = 0, nengines = 0;
	char **bench_argv = argv;
	int bench_argc = argc;
	double generator_ns = 0;
	int rc = 1;

	/* [EAL options --] [bench options], as DPDK applications do. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			bench_argv = argv + i;
			bench_argc = argc - i;
			break;
		}
	}
	if (sb_parse_options(bench_argc, bench_argv, &o) != 0)
		return 2;
	if (bench_argv != argv) {
		o.eal_argc = (int)(bench_argv - argv);
		o.eal_argv = argv;
	}
	for (int k = 0; k < SB_ENGINE_COUNT; k++) {
		if (!o.engine[k])
			continue;
		nengines++;
		if (!sb_engine_available((enum sb_engine_kind)k)) {
			fprintf(stderr,
				"segcached-storage-bench: engine %s is not part of this build\n",
				sb_engine_name((enum sb_engine_kind)k));
			return 2;
		}
	}

	sb_cpus_init();
	if (o.engine[SB_ENGINE_BASELINE] && sb_eal_init(&o) != 0)
		return 1;

	if (o.fill) {
		for (int k = 0; k < SB_ENGINE_COUNT; k++) {
			if (!o.engine[k])
				continue;
			if (sb_fill(&o, (enum sb_engine_kind)k, &fills[nfills]) != 0)
				goto out;
			if (!o.json)
				sb_report_fill_text(stdout, &o, &fills[nfills]);
			nfills++;
		}
		if (!o.json && nfills > 1)
			sb_report_fill_compare_text(stdout, fills, nfills);
	} else {
		generator_ns = sb_generator_ns(&o, o.ops < 2000000 ? o.ops : 2000000);
		runs = calloc((size_t)o.repeat * nengines, sizeof(*runs));
		if (!runs) {
			fprintf(stderr, "segcached-storage-bench: out of memory\n");
			goto out;
		}
		for (unsigned round = 0; round < o.repeat; round++) {
			/* Alternate the order, so that neither engine always
			 * runs on a machine the other one has just warmed. */
			for (int i = 0; i < SB_ENGINE_COUNT; i++) {
				int k = round % 2 ? SB_ENGINE_COUNT - 1 - i : i;

				if (!o.engine[k])
					continue;
				if (sb_run(&o, (enum sb_engine_kind)k, round, &runs[nruns]) != 0) {
					sb_run_free(&runs[nruns]);
					goto out;
				}
				if (!o.json)
					sb_report_run_text(stdout, &o, &runs[nruns]);
				nruns++;
			}
		}
		if (!o.json && nengines > 1)
			sb_report_compare_text(stdout, &o, runs, nruns, generator_ns);
	}
	if (o.json)
		sb_report_json(stdout, &o, argc, argv, runs, nruns, fills, nfills,
			       generator_ns);
	rc = 0;
out:
	for (unsigned i = 0; i < nruns; i++)
		sb_run_free(&runs[i]);
	free(runs);
	sb_eal_fini();
	return rc;
}
