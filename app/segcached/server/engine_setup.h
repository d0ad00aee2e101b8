/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Creates the storage engine the options ask for, on the heap backing
 * they ask for.
 */
#ifndef SEGCACHED_ENGINE_SETUP_H
#define SEGCACHED_ENGINE_SETUP_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/engine.h"
#include "drivers/mem/mem_region.h"
#include "options/options.h"
#include "seg/seg.h"

struct engine_setup {
	struct engine *engine;
	/* lib/seg: its segments and, in a heap file, the restart area before
	 * them; unused by baseline */
	struct mem_region heap;
	struct engine_config cfg;
	/* --heap-file: the cache survives a graceful restart */
	bool restartable;
	struct seg_restart_area area;
	struct seg_restart_report restart;
	char restart_state[32];
	/* the most EAL memory the network stack may take (mbuf pools,
	 * connection slots, TCP buffers): hugepages beside the heap's */
	size_t stack_bytes;
	bool eal; /* the EAL runs: hugepages may back the heap */
};

/* Call after rte_eal_init(), or with `eal` false where the EAL does not
 * run (then --heap auto means anonymous memory). With --heap-file, takes back the cache a
 * graceful stop saved there (or starts cold and logs why); the scan runs
 * on --restart-threads threads, by default one per CPU in `cpus`, on which
 * they run. A hugepage heap is checked against the free hugepages first,
 * with `stack_bytes` (the network stack's most) beside it: refused with
 * the numbers when the heap does not fit (--heap auto: anonymous memory,
 * with a warning), a warning when the stack might not. Returns 0 or -1
 * with a message. */
int engine_setup_create(struct engine_setup *es, const struct options *o,
			const cpu_set_t *cpus, size_t stack_bytes, bool eal, char *err,
			size_t errlen);

/* At a graceful stop, after the network stack is gone (no engine worker
 * left): saves a restartable cache into its file. No-op otherwise. */
void engine_setup_save(struct engine_setup *es);

/* The restart state for `stats`: "cold", "warm", "refused:<code>", or NULL
 * without a heap file. */
const char *engine_setup_restart_state(const struct engine_setup *es);

/* From main.c's start-up watch, on SIGINT or SIGTERM before the server
 * is up: records the stop. Returns false when no warm restart's load has
 * begun (the caller may exit at once: the heap file is untouched); true
 * when one has: it stops at its next chunk of work, and the caller must
 * let engine_setup_create() return (then engine_setup_stop_asked() says
 * to stop; engine_setup_save() keeps a stopped load's file as it was). */
bool engine_setup_ask_stop(void);
bool engine_setup_stop_asked(void);

/* Destroys the engine, then its heap. */
void engine_setup_destroy(struct engine_setup *es);

#endif /* SEGCACHED_ENGINE_SETUP_H */
