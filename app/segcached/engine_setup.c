/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 */
#include "engine_setup.h"

#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "baseline/baseline.h"
#include "log.h"
#include "seg/seg.h"
#include "util/util_err.h"

/* Engine workers: one per posix worker thread, plus room for the DPDK
 * stack's lcores and tools that attach later. */
#define ENGINE_WORKERS_MIN 64

static int
seg_setup(struct engine_setup *es, const struct options *o, char *err,
	  size_t errlen)
{
	enum mem_region_kind kind;
	char why[256];
	size_t len;
	int rc;

	len = seg_heap_bytes(&es->cfg);
	if (len == 0) {
		/* The engine cannot lay this configuration out; let it say
		 * why (it fails before allocating anything). */
		struct engine *e = seg_create(&es->cfg, why, sizeof(why));

		if (e != NULL) {
			engine_destroy(e);
			snprintf(why, sizeof(why), "no heap size for this configuration");
		}
		return util_fail(err, errlen, "engine seg: %s (--memory %zu)", why, o->memory);
	}
	switch (o->heap) {
	case HEAP_ANON:
		kind = MEM_REGION_ANON;
		break;
	case HEAP_HUGEPAGE:
		kind = MEM_REGION_HUGEPAGE;
		break;
	case HEAP_FILE:
		kind = MEM_REGION_FILE;
		break;
	default:
		kind = mem_region_hugepages_available() ? MEM_REGION_HUGEPAGE
							: MEM_REGION_ANON;
		break;
	}
	rc = mem_region_create(&es->heap, kind,
			       kind == MEM_REGION_FILE ? o->heap_file : "segcached_heap",
			       len, why, sizeof(why));
	/* auto: hugepages are an optimisation, not a requirement. */
	if (rc < 0 && o->heap == HEAP_AUTO && kind == MEM_REGION_HUGEPAGE) {
		APP_LOG(WARNING, "heap: %s; using anonymous memory instead", why);
		kind = MEM_REGION_ANON;
		rc = mem_region_create(&es->heap, kind, "segcached_heap", len,
				       why, sizeof(why));
	}
	if (rc < 0)
		return util_fail(err, errlen, "heap: %s", why);
	es->cfg.heap = es->heap.addr;
	es->cfg.heap_len = es->heap.len;
	es->engine = seg_create(&es->cfg, why, sizeof(why));
	if (es->engine == NULL) {
		mem_region_destroy(&es->heap);
		return util_fail(err, errlen, "engine seg: %s", why);
	}
	APP_LOG(INFO, "heap: %zu bytes of %s", len, mem_region_kind_name(kind));
	return 0;
}

int
engine_setup_create(struct engine_setup *es, const struct options *o,
		    char *err, size_t errlen)
{
	char why[256];

	memset(es, 0, sizeof(*es));
	es->cfg.memory = o->memory;
	es->cfg.segment_size = o->segment_size;
	es->cfg.item_max = o->item_max;
	es->cfg.eviction = o->eviction;
	es->cfg.cas_disabled = o->cas_disabled;
	/* Posix threads or, on the native stack, worker lcores. */
	es->cfg.max_workers = RTE_MAX(RTE_MAX(o->threads, rte_lcore_count()) + 8,
				      (unsigned)ENGINE_WORKERS_MIN);

	if (o->engine == SERVER_ENGINE_SEG)
		return seg_setup(es, o, err, errlen);

	if (o->heap != HEAP_AUTO)
		APP_LOG(WARNING, "--heap applies to the seg engine only; "
			"baseline uses DPDK's allocator");
	es->engine = baseline_create(&es->cfg, why, sizeof(why));
	if (es->engine == NULL)
		return util_fail(err, errlen, "engine baseline: %s", why);
	return 0;
}

void
engine_setup_destroy(struct engine_setup *es)
{
	engine_destroy(es->engine);
	es->engine = NULL;
	mem_region_destroy(&es->heap);
}
