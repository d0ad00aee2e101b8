/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-storage-bench: drives a storage engine (lib/seg or the rte_hash
 * baseline) through lib/engine/engine.h from N threads, without any
 * network, and reports throughput, hit ratio, lock acquisitions per request
 * and memory per object; or fills a memory budget until the first eviction.
 */
#ifndef SB_BENCH_H
#define SB_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine/engine_config.h"

enum sb_engine_kind {
	SB_ENGINE_SEG,
	SB_ENGINE_BASELINE,
	SB_ENGINE_COUNT
};

enum sb_key_format {
	SB_KEY_PADDED, /* decimal id zero-padded to key_size bytes */
	SB_KEY_PLAIN,  /* decimal id: "1", "2", ... */
};

enum sb_dist {
	SB_DIST_UNIFORM,
	SB_DIST_ZIPF,
};

/* Most gets per engine_get_batch() (--batch). */
#define SB_BATCH_MAX 64

struct sb_shape;

struct sb_options {
	bool engine[SB_ENGINE_COUNT]; /* engines to run, in enum order */
	bool fill;
	bool json;
	bool pin;
	bool mrc;      /* --mrc: lib/seg with the miss-ratio curve attached (1% of -m) */
	unsigned threads;
	uint64_t keys;
	unsigned key_size;
	enum sb_key_format key_format;
	uint32_t vmin, vmax; /* value size, uniform in [vmin, vmax] */
	unsigned pct_get, pct_set, pct_delete;
	enum sb_dist dist;
	double theta;
	uint64_t ops;        /* timed operations, all threads together */
	double duration;     /* time limit of a timed phase or a fill, seconds */
	unsigned repeat;     /* rounds; with two engines the order alternates */
	uint64_t seed;
	unsigned batch;      /* gets per engine_get_batch(); 1: engine_get() */
	uint64_t fill_max_keys;
	const struct sb_shape *shape; /* --shape: mix, sizes and TTLs per key */
	uint32_t ttl;        /* --ttl: every set's TTL in seconds (0: none) */
	struct engine_config ecfg;
	bool eviction_set;
	/* EAL arguments given before "--" (NULL: built-in defaults). */
	int eal_argc;
	char **eal_argv;
};

/* One worker thread's share of a timed run. */
struct sb_thread_result {
	int cpu; /* pinned CPU, -1 when not pinned */
	uint64_t ops, gets, sets, deletes;
	uint64_t get_hits;
	uint64_t set_failed;    /* sets that did not return ENGINE_OK */
	uint64_t delete_hits;
	uint64_t errors;        /* statuses no engine should return here */
	uint64_t warm_stored, warm_failed;
	double warm_seconds;
	double start, end;      /* CLOCK_MONOTONIC seconds */
};

struct sb_run_result {
	enum sb_engine_kind kind;
	unsigned round;
	unsigned threads;
	uint64_t ops_requested;
	bool time_limited;
	double warm_seconds; /* the slowest thread's warm-up */
	double seconds; /* first thread start to last thread end */
	struct sb_thread_result *thread; /* [threads] */
	struct engine_stats created, warmed, done;
	uint64_t rss_created, rss_warmed; /* bytes; 0 when unknown */
	/* Sums over threads. */
	uint64_t ops, gets, sets, deletes, get_hits, set_failed, delete_hits,
		errors, warm_stored, warm_failed;
};

struct sb_fill_result {
	enum sb_engine_kind kind;
	const char *stop;        /* "eviction", "set failed: <status>", "key limit", "time limit" */
	uint64_t attempted;      /* sets issued, the last one included */
	uint64_t stored;         /* sets that returned ENGINE_OK */
	uint64_t items_before;   /* curr_items just before the set that evicted */
	struct engine_stats done; /* after the last set */
	uint64_t readback_hits;  /* keys 1..attempted read back with the right value */
	uint64_t readback_corrupt; /* read back with a wrong length or bytes */
	double seconds;
	double readback_seconds;
};

/* options.c */
int sb_parse_options(int argc, char **argv, struct sb_options *o);
void sb_usage(FILE *f);

/* engines.c */
const char *sb_engine_name(enum sb_engine_kind kind);
bool sb_engine_available(enum sb_engine_kind kind);
int sb_eal_init(const struct sb_options *o);
void sb_eal_fini(void);
struct engine *sb_engine_create(enum sb_engine_kind kind,
				const struct engine_config *cfg, char *err,
				size_t errlen);
/* Every thread that calls into an engine calls these around its work. */
int sb_thread_enter(enum sb_engine_kind kind);
void sb_thread_leave(enum sb_engine_kind kind);

/* run.c */
int sb_run(const struct sb_options *o, enum sb_engine_kind kind,
	   unsigned round, struct sb_run_result *r);
void sb_run_free(struct sb_run_result *r);
/* Nanoseconds per operation that the workload generator alone costs (one
 * thread, ops operations): the part of every measured op that is not the
 * engine. */
double sb_generator_ns(const struct sb_options *o, uint64_t ops);
double sb_now(void);
uint64_t sb_rss_bytes(void);

/* fill.c */
int sb_fill(const struct sb_options *o, enum sb_engine_kind kind,
	    struct sb_fill_result *r);

/* report.c */
void sb_report_run_text(FILE *f, const struct sb_options *o,
			const struct sb_run_result *r);
void sb_report_fill_text(FILE *f, const struct sb_options *o,
			 const struct sb_fill_result *r);
/* Side by side, when both engines ran. */
void sb_report_compare_text(FILE *f, const struct sb_options *o,
			    const struct sb_run_result *runs, unsigned nruns,
			    double generator_ns);
void sb_report_fill_compare_text(FILE *f, const struct sb_fill_result *fills,
				 unsigned nfills);
void sb_report_json(FILE *f, const struct sb_options *o, int argc,
		    char **argv, const struct sb_run_result *runs,
		    unsigned nruns, const struct sb_fill_result *fills,
		    unsigned nfills, double generator_ns);

/* run.c, called before rte_eal_init (which narrows the CPU affinity). */
void sb_cpus_init(void);

#endif /* SB_BENCH_H */
