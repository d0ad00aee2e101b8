/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The engines the bench can drive, and the DPDK EAL that the rte_hash
 * baseline needs (lib/seg needs none). Bench threads are plain pthreads; for
 * the baseline they register with the EAL as non-EAL threads so that they
 * get an lcore id (rte_hash's per-lcore free-slot caches index by it).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "bench.h"
#ifdef SB_HAVE_SEG
#include "seg/seg.h"
#endif
#ifdef SB_HAVE_BASELINE
#include "baseline/baseline.h"
#endif
#include "util/util_err.h"

static bool eal_up;
/* This thread took an lcore id through rte_thread_register. */
static __thread bool registered;

const char *
sb_engine_name(enum sb_engine_kind kind)
{
	return kind == SB_ENGINE_SEG ? "seg" : "baseline";
}

bool
sb_engine_available(enum sb_engine_kind kind)
{
	switch (kind) {
#ifdef SB_HAVE_SEG
	case SB_ENGINE_SEG:
		return true;
#endif
#ifdef SB_HAVE_BASELINE
	case SB_ENGINE_BASELINE:
		return true;
#endif
	default:
		return false;
	}
}

int
sb_eal_init(const struct sb_options *o)
{
	/* the default EAL words, writable as rte_eal_init wants them */
	static char words[16][32];
	char *defaults[16];
	char **argv;
	int argc, rc;
	cpu_set_t set;
	int first_cpu = 0;

	if (eal_up)
		return 0;
	if (o->eal_argv) {
		argc = o->eal_argc;
		argv = o->eal_argv;
	} else {
		/* The EAL's main lcore is only the control thread here: give it
		 * the first CPU this process may use. Its memory must hold the
		 * engine's budget plus rte_hash's own structures. --no-shconf
		 * keeps runs apart (--in-memory is refused with --no-huge). */
		size_t mb = o->ecfg.memory >> 20;

		if (sched_getaffinity(0, sizeof(set), &set) == 0) {
			for (int c = 0; c < CPU_SETSIZE; c++) {
				if (CPU_ISSET(c, &set)) {
					first_cpu = c;
					break;
				}
			}
		}
		static const char *const fixed[] = {
			"segcached-storage-bench", "--no-huge", "--no-shconf", "--no-pci",
			"--no-telemetry", "--log-level=error",
		};

		argc = 0;
		for (size_t i = 0; i < RTE_DIM(fixed); i++)
			snprintf(words[argc++], sizeof(words[0]), "%s", fixed[i]);
		snprintf(words[argc++], sizeof(words[0]), "-l");
		snprintf(words[argc++], sizeof(words[0]), "%d", first_cpu);
		snprintf(words[argc++], sizeof(words[0]), "-m");
		snprintf(words[argc++], sizeof(words[0]), "%zu", mb + (mb / 2 > 256 ? mb / 2 : 256));
		for (int i = 0; i < argc; i++)
			defaults[i] = words[i];
		defaults[argc] = NULL;
		argv = defaults;
	}
	/* rte_eal_init may permute argv: hand it a copy. */
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));

	if (!copy)
		return -1;
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	rc = rte_eal_init(argc, copy);
	free(copy);
	if (rc < 0) {
		fprintf(stderr, "segcached-storage-bench: rte_eal_init failed: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	eal_up = true;
	return 0;
}

void
sb_eal_fini(void)
{
	if (eal_up)
		rte_eal_cleanup();
	eal_up = false;
}

struct engine *
sb_engine_create(enum sb_engine_kind kind,
		 const struct engine_config *cfg, char *err,
		 size_t errlen)
{
	(void)cfg; /* unused when the build has neither engine */
	switch (kind) {
#ifdef SB_HAVE_SEG
	case SB_ENGINE_SEG:
		return seg_create(cfg, err, errlen);
#endif
#ifdef SB_HAVE_BASELINE
	case SB_ENGINE_BASELINE:
		return baseline_create(cfg, err, errlen);
#endif
	default:
		util_fail(err, errlen, "engine %s is not part of this build",
			  sb_engine_name(kind));
		return NULL;
	}
}

int
sb_thread_enter(enum sb_engine_kind kind)
{
	/* The EAL's main thread has its lcore id already. */
	if (kind != SB_ENGINE_BASELINE || !eal_up || rte_lcore_id() != LCORE_ID_ANY)
		return 0;
	if (rte_thread_register() != 0) {
		fprintf(stderr,
			"segcached-storage-bench: rte_thread_register failed: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	registered = true;
	return 0;
}

void
sb_thread_leave(enum sb_engine_kind kind)
{
	(void)kind;
	if (registered)
		rte_thread_unregister();
	registered = false;
}
