/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The storage engine the options ask for, on the heap they ask for: the
 * heap checked against the memory the host has, a heap file's saved cache
 * taken back at start (stoppable by a signal) and saved again at a
 * graceful stop.
 */
#include "engine_setup.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "baseline/baseline.h"
#include "log/log.h"
#include "seg/seg.h"
#include "util/util_err.h"

/* Engine workers: one per posix worker thread or native worker lcore,
 * plus 8, and at least this many, so that a restart with another -t up
 * to 56 keeps the geometry (the workers' state comes out of -m, and the
 * segments with it). A seg worker is 4,488 bytes (its 128 TTL-bucket
 * open-segment and chunk refs), taken out of -m: 0.29 MB for 64, 0.45% of
 * -m 64. (With a ref for each of the 1,025 buckets it was 33,160 bytes,
 * and 64 of them left a -m 2 server unable to start.) */
#define ENGINE_WORKERS_MIN 64

static void
area_persist(void *arg, const void *addr, size_t len)
{
	mem_region_persist(arg, addr, len);
}

/* A stop asked during start-up (main.c's start-up watch). Before a warm
 * restart's load begins the process may just exit: the file is as saved.
 * Once it began, exiting could leave the file half loaded (not clean, the
 * next start cold): the load is asked to stop instead, and puts the file
 * back as it found it. The lock orders the two: a stop asked before the
 * load begins is seen by the load's first look at its cancel hook. */
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static bool load_begun;
static _Atomic bool stop_asked;

bool
engine_setup_ask_stop(void)
{
	bool begun;

	pthread_mutex_lock(&stop_lock);
	atomic_store(&stop_asked, true);
	begun = load_begun;
	pthread_mutex_unlock(&stop_lock);
	return begun;
}

bool
engine_setup_stop_asked(void)
{
	return atomic_load(&stop_asked);
}

static bool
load_cancel(void *arg)
{
	(void)arg;
	return atomic_load_explicit(&stop_asked, memory_order_relaxed);
}

/* Takes back the cache saved in the heap file, or starts cold. The scan
 * threads inherit this thread's CPUs, which the EAL narrowed to the main
 * lcore: they get every CPU in `cpus` for the while. */
static void
restart_load(struct engine_setup *es, const struct options *o, const cpu_set_t *cpus)
{
	struct seg_restart_report *rep = &es->restart;
	unsigned threads = o->restart_threads;
	cpu_set_t saved;
	bool widened = false;

	if (threads == 0)
		threads = cpus != NULL && CPU_COUNT(cpus) > 0 ? (unsigned)CPU_COUNT(cpus) : 1;
	if (cpus != NULL && CPU_COUNT(cpus) > 0 &&
	    pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) == 0)
		widened = pthread_setaffinity_np(pthread_self(), sizeof(*cpus), cpus) == 0;
	pthread_mutex_lock(&stop_lock);
	load_begun = true;
	pthread_mutex_unlock(&stop_lock);
	APP_LOG(INFO, "heap file %s: loading what it holds, on %u threads", o->heap_file, threads);
	(void)seg_restart_load(es->engine, &es->area, threads, rep);
	if (widened)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	switch (rep->state) {
	case SEG_RESTART_WARM:
		snprintf(es->restart_state, sizeof(es->restart_state), "warm");
		APP_LOG(NOTICE,
			"warm restart from %s: %" PRIu64 " items recovered (%" PRIu64
			" expired while down dropped), %" PRIu64 " segments (items read in %"
			PRIu64 "), %" PRIu64 " hash buckets checked by %u threads in %.3f s (%s)",
			o->heap_file, rep->items, rep->expired, rep->segments, rep->segments_read,
			rep->buckets, rep->threads, (double)rep->usec / 1e6, rep->reason);
		break;
	case SEG_RESTART_COLD:
		snprintf(es->restart_state, sizeof(es->restart_state), "cold");
		APP_LOG(NOTICE, "cold start in %s: %s", o->heap_file, rep->reason);
		break;
	case SEG_RESTART_REFUSED:
		snprintf(es->restart_state, sizeof(es->restart_state), "refused:%s", rep->code);
		APP_LOG(WARNING, "cold start in %s, the saved cache is not used: %s",
			o->heap_file, rep->reason);
		break;
	case SEG_RESTART_CANCELLED:
		snprintf(es->restart_state, sizeof(es->restart_state), "cancelled");
		APP_LOG(NOTICE, "warm restart from %s stopped after %.3f s: %s", o->heap_file,
			(double)rep->usec / 1e6, rep->reason);
		break;
	}
}

/* An anonymous heap larger than the host's RAM starts (it is reserved
 * lazily) and fails later: swapped, or killed by the OOM killer as it
 * fills. Refused at start with the numbers. */
static int
anon_heap_fits(size_t memory, size_t len, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	size_t ram;

	if (pages <= 0 || page <= 0)
		return 0;
	ram = (size_t)pages * (size_t)page;
	if (len <= ram)
		return 0;
	return util_fail(err, errlen,
			 "heap: --memory %zu MiB needs a heap of %zu MiB of anonymous memory "
			 "but this host has %zu MiB of RAM: lower -m, or put the heap in a "
			 "file on persistent memory (--heap-file)", memory >> 20, len >> 20,
			 ram >> 20);
}

/* Bytes of the host's free hugepages, of every size (sysfs). */
static size_t
free_hugepage_bytes(void)
{
	const char *root = "/sys/kernel/mm/hugepages";
	DIR *d = opendir(root);
	struct dirent *e;
	size_t total = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		unsigned long kb;
		char path[512];
		long n = 0;
		FILE *f;

		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", root, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &n) == 1 && n > 0)
			total += (size_t)n * kb * 1024;
		fclose(f);
	}
	closedir(d);
	return total;
}

/* Free space in the EAL's heaps: hugepages it has mapped and not handed out. */
static size_t
eal_heap_free_bytes(void)
{
	size_t total = 0;

	for (unsigned i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			total += st.heap_freesz_bytes;
	}
	return total;
}

/* A hugepage heap larger than the free hugepages fails to reserve with no
 * numbers, and one that fits but leaves too little for the native stack's
 * pools and buffers fails later, at start or under load. Refused (or, for
 * --heap auto, left to anonymous memory) with the numbers; the second case
 * is a warning, since the stack's figure is its most, not its need. */
static int
hugepage_heap_fits(const struct engine_setup *es, const struct options *o, size_t len,
		   char *err, size_t errlen)
{
	size_t sys = free_hugepage_bytes(), eal = eal_heap_free_bytes();
	size_t avail = sys + eal;

	if (!rte_eal_has_hugepages())
		return 0;
	if (len > avail) {
		util_fail(err, errlen,
			  "heap: --memory %zu MiB needs a heap of %zu MiB of hugepages but "
			  "%zu MiB are free (%zu MiB of free hugepages, %zu MiB free in the "
			  "EAL's memory): reserve more (e.g. dpdk-hugepages.py -p 2M --setup "
			  "%zuM), lower -m, or use --heap anon",
			  o->memory >> 20, len >> 20, avail >> 20, sys >> 20, eal >> 20,
			  ((len + es->stack_bytes - eal) >> 20) + 64);
		return -1;
	}
	if (len + es->stack_bytes > avail)
		APP_LOG(WARNING,
			"heap: %zu MiB of the %zu MiB of free hugepages leave %zu MiB, and the "
			"network stack may take up to %zu MiB (mbuf pools, connection slots, "
			"TCP buffers): reserve more hugepages, lower -m or -c, or bound the "
			"buffers with --tcp-buffer-memory",
			len >> 20, avail >> 20, (avail - len) >> 20, es->stack_bytes >> 20);
	return 0;
}

static int
seg_setup(struct engine_setup *es, const struct options *o, const cpu_set_t *cpus,
	  char *err, size_t errlen)
{
	enum mem_region_kind kind;
	size_t len, area = 0;
	char why[256];
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
		kind = es->eal && mem_region_hugepages_available() ? MEM_REGION_HUGEPAGE
							: MEM_REGION_ANON;
		break;
	}
	/* In a file, the restart area comes first (its header at offset 0,
	 * where any later geometry still finds it), the segments after it. */
	/* A file holds room for the table at its largest (the restart
	 * area): 2 times keeps it at 1/16 of -m where 16 would double the
	 * file. Anonymous and hugepage heaps reserve address space only. */
	if (es->cfg.hash_grow == 0)
		es->cfg.hash_grow = kind == MEM_REGION_FILE ? 2 : 16;
	if (kind == MEM_REGION_FILE)
		area = seg_restart_area_bytes(&es->cfg);
	if (kind == MEM_REGION_ANON && anon_heap_fits(o->memory, len, err, errlen) < 0)
		return -1;
	if (kind == MEM_REGION_HUGEPAGE && hugepage_heap_fits(es, o, len, err, errlen) < 0) {
		if (o->heap != HEAP_AUTO)
			return -1;
		/* auto: as when the reservation fails, below */
		snprintf(why, sizeof(why), "%s", err + strlen("heap: "));
		rc = -1;
	} else {
		rc = mem_region_create(&es->heap, kind,
				       kind == MEM_REGION_FILE ? o->heap_file : "segcached_heap",
				       area + len, why, sizeof(why));
	}
	/* auto: hugepages are an optimisation, not a requirement. */
	if (rc < 0 && o->heap == HEAP_AUTO && kind == MEM_REGION_HUGEPAGE) {
		APP_LOG(WARNING, "heap: %s; using anonymous memory instead", why);
		kind = MEM_REGION_ANON;
		if (anon_heap_fits(o->memory, len, err, errlen) < 0)
			return -1;
		rc = mem_region_create(&es->heap, kind, "segcached_heap", len,
				       why, sizeof(why));
	}
	if (rc < 0)
		return util_fail(err, errlen, "heap: %s", why);
	if (es->heap.warning[0] != '\0')
		APP_LOG(WARNING, "heap: %s", es->heap.warning);
	es->cfg.heap = (uint8_t *)es->heap.addr + area;
	es->cfg.heap_len = es->heap.len - area;
	es->engine = seg_create(&es->cfg, why, sizeof(why));
	if (es->engine == NULL) {
		mem_region_destroy(&es->heap);
		return util_fail(err, errlen, "engine seg: %s", why);
	}
	APP_LOG(INFO, "heap: %zu bytes of %s", len, mem_region_kind_name(kind));
	if (kind == MEM_REGION_FILE) {
		APP_LOG(INFO, "heap file %s: restart area %zu bytes, persistence granularity %s",
			o->heap_file, area, mem_region_granularity_name(&es->heap));
		es->restartable = true;
		es->area = (struct seg_restart_area){
			.addr = es->heap.addr,
			.len = area,
			.persist = area_persist,
			.persist_arg = &es->heap,
			.verify_items = o->restart_verify,
			.media_known = es->heap.media_known,
			.media_id = es->heap.media_id,
			.media_usc = es->heap.media_usc,
			.cancel = load_cancel,
		};
		if (es->heap.media_known)
			APP_LOG(INFO, "heap file %s: media unsafe shutdown count %" PRIu64, o->heap_file,
				es->heap.media_usc);
		restart_load(es, o, cpus);
	}
	return 0;
}

int
engine_setup_create(struct engine_setup *es, const struct options *o,
		    const cpu_set_t *cpus, size_t stack_bytes, bool eal, char *err,
		    size_t errlen)
{
	char why[256];

	memset(es, 0, sizeof(*es));
	es->stack_bytes = stack_bytes;
	es->eal = eal;
	es->cfg.memory = o->memory;
	es->cfg.segment_size = o->segment_size;
	es->cfg.hash_power = o->hash_power;
	es->cfg.hash_grow = o->hash_grow;
	es->cfg.item_max = o->item_max;
	es->cfg.eviction = o->eviction;
	es->cfg.cas_disabled = o->cas_disabled;
	/* Posix threads or, on the native stack, worker lcores. */
	es->cfg.max_workers = RTE_MAX(RTE_MAX(o->threads, rte_lcore_count()) + 8,
				      (unsigned)ENGINE_WORKERS_MIN);

	if (o->engine == SERVER_ENGINE_SEG)
		return seg_setup(es, o, cpus, err, errlen);

	if (o->heap != HEAP_AUTO)
		APP_LOG(WARNING, "--heap applies to the seg engine only; "
			"baseline uses DPDK's allocator");
	if (o->hash_grow != 0)
		APP_LOG(WARNING, "--hash-grow applies to the seg engine only; "
			"baseline's table has a fixed size");
	es->engine = baseline_create(&es->cfg, why, sizeof(why));
	if (es->engine == NULL)
		return util_fail(err, errlen, "engine baseline: %s", why);
	return 0;
}

void
engine_setup_save(struct engine_setup *es)
{
	struct timespec t0, t1;
	struct engine_stats st;
	char err[256];

	if (!es->restartable || es->engine == NULL)
		return;
	/* A stopped load's engine is half built; the file keeps what it had
	 * (or says at the next start why it cannot). */
	if (es->restart.state == SEG_RESTART_CANCELLED)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	engine_stats(es->engine, &st);
	if (seg_restart_save(es->engine, &es->area, err, sizeof(err)) < 0) {
		APP_LOG(ERR, "cache not saved, the next start is cold: %s", err);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	APP_LOG(NOTICE, "cache saved for a warm restart: %" PRIu64 " items in %" PRIu64
		" segments, %.3f s", st.curr_items, st.seg_sealed + st.seg_open,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

const char *
engine_setup_restart_state(const struct engine_setup *es)
{
	return es->restartable ? es->restart_state : NULL;
}

void
engine_setup_destroy(struct engine_setup *es)
{
	engine_destroy(es->engine);
	es->engine = NULL;
	mem_region_destroy(&es->heap);
}
