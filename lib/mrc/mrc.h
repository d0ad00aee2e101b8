/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/mrc: the live miss-ratio curve and hot keys. A spatial sample of the
 * keys (SHARDS, fixed-size: at most a fixed number of keys, the rate
 * lowered as they arrive) feeds miniature caches that run segcached's own
 * policy (segments, TTL buckets, proactive expiry, merge/FIFO/random
 * eviction) on metadata only, one per memory size from 1/8x to 4x the
 * server's. The engine hands it the requests of sampled keys
 * (engine_attach_sampler); everything here runs under one lock, taken only
 * for sampled keys. docs/architecture.md says what was taken from
 * Waldspurger et al. (ATC'17) and what was changed for segments and TTLs.
 */
#ifndef SEGCACHED_MRC_H
#define SEGCACHED_MRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/engine_access.h"
#include "engine/engine_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sizes modelled, in eighths of the server's memory: 1/8x .. 4x,
 * the server's own (8/8) among them. */
#define MRC_SIZES 10
extern const uint16_t mrc_size_eighths[MRC_SIZES];
/* Most bytes of a key kept for `stats hotkeys` (longer keys are cut). */
#define MRC_KEY_PREFIX 48
/* The default highest sampling rate: 1 key in 128. */
#define MRC_MAX_RATE_DEFAULT (1.0 / 128)
/* Hot keys listed. */
#define MRC_HOTKEYS 20

struct mrc_config {
	size_t memory;         /* the server's -m, bytes */
	uint32_t seg_size;     /* the server's segment size */
	uint32_t nseg;         /* the server's heap segments */
	enum engine_eviction eviction;
	/* The geometry lib/seg would choose at each modelled size (its
	 * segment size depends on the memory unless one is configured, and
	 * its hash table takes a share of it): segments and their size per
	 * size; 0 = the server's, scaled. */
	uint32_t nseg_at[MRC_SIZES];
	uint32_t seg_size_at[MRC_SIZES];
	/* Bytes for the sample and the caches; 0 = memory / 100, raised to
	 * what a sample of floor_keys takes where that is more (a small
	 * heap: mrc.c says why). A budget given is kept, floor or not. */
	size_t budget;
	uint32_t floor_keys;   /* 0 = MRC_FLOOR_KEYS; only with budget 0 */
	/* The highest sampling rate, where it starts: a sampled request
	 * takes the lock and goes through every miniature cache, so on a
	 * small key space a full sample would cost more than it tells.
	 * 0 = MRC_MAX_RATE_DEFAULT; 1.0 samples every key until full. */
	double max_rate;
	uint32_t max_keys;     /* sample size; 0 = what the budget holds */
	/* Item records per sampled key, for all the caches together; 0 =
	 * MRC_RECORDS_PER_KEY. A workload whose keys are held by more caches
	 * than that gets a sample of fewer keys; MRC_SIZES + 1 never sheds
	 * a key for records. */
	uint32_t records_per_key;
};

/* Item records per sampled key by default (mrc.c says why). */
#define MRC_RECORDS_PER_KEY 6
/* The fewest keys the default budget samples, however small -m, and the
 * highest rate it may start at to find them (mrc.c, docs/bench/journal/
 * mrc-accuracy.md "Small heaps"). */
#define MRC_FLOOR_KEYS 16384
/* ... within a 32nd of -m, or a 16th of it up to MRC_FLOOR_SMALL_BYTES
 * (what RSS shows beside it), but never fewer than this: -m 8 then
 * samples 2,048 keys in about 0.6 MB, -m 16 about 3,600 in 1 MiB, -m 64
 * about 7,500 in 2 MiB, -m 128 and up the whole floor (issue 36's RSS at
 * -m 16 against memcached's, and the curve within 0.01 of real runs
 * there: docs/bench/journal/mrc-accuracy.md). */
#define MRC_FLOOR_SMALL_BYTES ((size_t)1 << 20)
#define MRC_FLOOR_MIN_KEYS 2048
#define MRC_FLOOR_MAX_RATE (1.0 / 4)
/* The recent window's epoch: sampled gets (mrc.c). */
#define MRC_EPOCH_GETS 32768

struct mrc;

/* NULL with err filled when the config is unusable (budget too small for
 * a useful sample, eviction unknown). */
struct mrc *mrc_create(const struct mrc_config *cfg, char *err, size_t errlen);
void mrc_destroy(struct mrc *m);

/* Attaches m to engine e: from now on e's requests of sampled keys reach
 * mrc_access(). Detach with engine_attach_sampler(e, NULL, NULL, 0)
 * before destroying m. */
void mrc_attach(struct mrc *m, struct engine *e);

/* One request of a sampled key (an engine_sample_fn). */
void mrc_access(void *m, const struct engine_access *a);

/* The server's bytes of all sets so far, as stored (engine counter
 * set_bytes): FIFO and random caches scale their segments by the
 * sample's share of these rather than by the rate (mrc_private.h). The
 * server's control thread gives it once a second; until then, the rate. */
void mrc_note_set_bytes(struct mrc *m, uint64_t total_set_bytes);

/* The server's gets and get misses so far (engine counters cmd_get,
 * get_misses), once a second from the same thread: where an epoch of the
 * recent window ends (mrc_curve_recent), the server's counts at that
 * moment are where the next one starts. */
void mrc_note_gets(struct mrc *m, uint64_t total_gets, uint64_t total_misses);

struct mrc_point {
	uint64_t bytes;      /* memory modelled */
	uint64_t gets;       /* sampled gets it saw */
	uint64_t misses;
	double miss_ratio;   /* misses / gets; 0 when no get was seen */
	bool current;        /* the server's own size */
	uint32_t segments;   /* lib/seg's segments at this size, as modelled */
	bool rough;          /* predicted with a known bias (MRC_ROUGH_SEGMENTS) */
};

/* A point is rough, its error measured beyond the targets (0.01 mean,
 * 0.02 largest) with any sample, where its cache has fewer segments than
 * this (the server's own size aside: its miss ratio is measured), and
 * every point below -m is while the sample holds fewer keys than the floor
 * at the rate it started at (a key space under floor / rate keys, or a
 * young sample): measured against lib/seg at -m 16 and -m 64, such points
 * read up to 0.035 low (docs/bench/journal/mrc-accuracy.md, "Small heaps").
 * `stats mrc` names them (mrc_rough_sizes). */
#define MRC_ROUGH_SEGMENTS 16

struct mrc_info {
	double rate;         /* sampling rate now */
	uint32_t keys;       /* sampled keys held */
	uint32_t max_keys;
	uint64_t requests;   /* sampled requests seen */
	size_t memory;       /* bytes m may take (allocated; touched as the sample fills) */
	size_t memory_used;  /* bytes of it touched so far: the part in the RSS */
	/* The recent window (mrc_curve_recent): the server's gets and misses
	 * since it began (its counts at the last mrc_note_gets less those at
	 * its start), and the epochs completed since start. */
	uint64_t recent_gets, recent_misses;
	uint32_t epochs;
};

/* The curve, MRC_SIZES points by size; returns how many. */
unsigned mrc_curve(struct mrc *m, struct mrc_point *out, struct mrc_info *info);
/* The same, corrected for a sample that saw more or fewer gets than its
 * share of the server's total_gets (SHARDS-adj: the difference counts as
 * hits at every size, as the hot keys in or out of the sample would
 * have been). */
unsigned mrc_curve_adjusted(struct mrc *m, uint64_t total_gets, struct mrc_point *out,
			    struct mrc_info *info);
/* SHARDS-adj with the server's misses: the gets outside the sample (its
 * share of total_gets less the gets it saw) miss as the server measured
 * them at its own size (its share of total_misses less the sampled keys'
 * misses on the server), at every size, and hit otherwise. A hot key
 * outside the sample that the server misses (deleted, expired, never
 * stored) is a miss at every size, not a hit. */
unsigned mrc_curve_corrected(struct mrc *m, uint64_t total_gets, uint64_t total_misses,
			     struct mrc_point *out, struct mrc_info *info);

/* The same as mrc_curve_corrected over the recent window alone: the last
 * completed epoch and the one under way (each MRC_EPOCH_GETS sampled gets;
 * since start until the first ends), the caches as warm as they are. The
 * server's counts are those of the window: total_gets and total_misses
 * less what they were when it began. */
unsigned mrc_curve_recent(struct mrc *m, uint64_t total_gets, uint64_t total_misses,
			  struct mrc_point *out, struct mrc_info *info);

struct mrc_hotkey {
	char key[MRC_KEY_PREFIX + 1]; /* NUL-terminated, cut at MRC_KEY_PREFIX */
	uint32_t klen;                /* the whole key's length */
	uint32_t size;                /* the item's bytes when last seen */
	uint64_t requests;            /* since it was sampled */
	double rate;                  /* requests per second since it was sampled */
};

/* The most requested sampled keys, by rate, at most max (MRC_HOTKEYS). */
unsigned mrc_hotkeys(struct mrc *m, struct mrc_hotkey *out, unsigned max, int64_t now);

#ifdef __cplusplus
}
#endif
#endif
