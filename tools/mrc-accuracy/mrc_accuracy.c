/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-mrc-accuracy: how well the live miss-ratio curve (lib/mrc)
 * predicts lib/seg's own miss ratio at other sizes. Replays one trace in
 * the twitter/cache-trace CSV layout (timestamp,key,key_size,value_size,
 * client_id,op,ttl; or tools/loadgen's time,key,size,op,ttl) as a
 * look-aside client would (a get that misses is
 * followed by a set of the trace's value size and the key's TTL), on the
 * engine clock of the trace's timestamps, no network: once at -m M with
 * the curve attached, then once per modelled size without it. Prints a
 * Markdown table: predicted, measured, error, and the mean and largest.
 *
 *   segcached-mrc-accuracy TRACE.csv -m 64M [--eviction merge] [--budget B]
 *                          [--max-rate R] [--floor N] [--scaled-geometry]
 *                          [--no-adjust] [--gets-only] [--samples N]
 *
 * --samples N predicts N times more, each with every key prefixed by
 * "sII:" (II = 01..N): the same workload under another sample of its keys
 * (the sample is chosen by the keys' hash), and prints each one's error
 * against the sizes measured once, and the mean and spread by size: how
 * much of an error is the sample's luck and how much is the model's. The
 * first run and the measured ones then prefix "s00:", so that every run
 * stores items of the same sizes.
 *
 * The points lib/mrc knows to be rough (mrc.h: too few segments, or a
 * sample short of its floor) are marked "(rough)", as `stats mrc` names
 * them (mrc_rough_sizes), and the error is given without them as well.
 * A second table compares the recent window (mrc_curve_recent) with each
 * size's miss ratio over the same gets.
 * --floor N sets lib/mrc's floor of sampled keys (the server's default:
 * MRC_FLOOR_KEYS).
 *
 * --scaled-geometry models every size with the -m server's segments
 * (count scaled, same size) instead of the geometry lib/seg would choose
 * at that size (what the server does). The curve is corrected as the
 * server corrects it (mrc_curve_corrected: the sample's share of the gets
 * and misses); --gets-only corrects the gets alone (SHARDS-adj,
 * mrc_curve_adjusted), --no-adjust not at all.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "mrc/mrc.h"
#include "seg/seg.h"

struct req {
	uint32_t key_off;
	uint16_t klen;
	uint8_t op;        /* 0 get, 1 set, 2 delete */
	uint32_t vsize;
	uint32_t ttl;      /* sets: the record's; gets: the key's last write's,
			    * for the fill after a miss (as replay.py fills) */
	int64_t ts;
};

static char *keybuf;
static size_t keylen, keycap;
static struct req *reqs;
static size_t nreq, reqcap;
static int64_t clock_now;
/* Every key is replayed with this prefix (--samples). */
static char key_prefix[16];
static size_t key_prefix_len;
static int scaled_geometry;
/* 2: mrc_curve_corrected (the server's); 1 (--gets-only): SHARDS-adj on
 * the gets alone; 0 (--no-adjust): no correction */
static int adjust = 2;
static double max_rate; /* --max-rate R: the sampler's highest rate (0: lib/mrc's default) */
static uint32_t floor_keys; /* --floor N: lib/mrc's floor of sampled keys (0: its default) */
/* The recent window: the prediction run's (mrc_curve_recent) covers the
 * trace's gets from this one on; each run's miss ratio over them. */
static uint64_t recent_from;
static double recent_measured;
static struct mrc_point recent_pts[MRC_SIZES];
static struct mrc_info recent_info; /* --scaled-geometry: the -m server's segments, scaled */

static int64_t trace_clock(void *arg) { (void)arg; return clock_now; }

/* The segment size `segcached -m <memory>` gives itself: lib/seg's for
 * the memory (64 segments while they are under 1 MiB), at least 1 MiB
 * from 64 MiB up (app/segcached's options_default_segment_size and its
 * OPTIONS_FULL_ITEM_MEMORY, which this mirrors: a tool may not include
 * the app). */
static size_t
server_segment_size(size_t memory)
{
	const size_t small = seg_segment_size_for(memory);

	return memory < (64u << 20) ? small : small > (1u << 20) ? small : 1u << 20;
}

static uint64_t
key_hash(const char *k, uint16_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint16_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)k[i]) * 0x100000001b3ull;
	return h;
}

/* A look-aside client fills a key it missed with the TTL it writes that
 * key with: each get's ttl becomes its key's last write's (0 before any,
 * replay.py's --default-ttl), in trace order. A trace's gets carry no TTL
 * of their own (0), and fills that never expired would keep keys that the
 * trace writes with a TTL longer than any client would. */
static int
fill_ttls(void)
{
	size_t cap = 1;
	struct slot { uint32_t req; uint32_t ttl; } *tab;

	while (cap < 2 * nreq)
		cap <<= 1;
	tab = malloc(cap * sizeof(*tab));
	if (!tab) {
		fprintf(stderr, "mrc-accuracy: out of memory\n");
		return -1;
	}
	memset(tab, 0xff, cap * sizeof(*tab));
	for (size_t i = 0; i < nreq; i++) {
		struct req *r = &reqs[i];
		const char *k = keybuf + r->key_off;
		size_t at = key_hash(k, r->klen) & (cap - 1);

		while (tab[at].req != UINT32_MAX &&
		       !(reqs[tab[at].req].klen == r->klen &&
			 !memcmp(keybuf + reqs[tab[at].req].key_off, k, r->klen)))
			at = (at + 1) & (cap - 1);
		if (tab[at].req == UINT32_MAX) {
			tab[at].req = (uint32_t)i;
			tab[at].ttl = 0;
		}
		if (r->op == 1)
			tab[at].ttl = r->ttl;
		else if (r->op == 0)
			r->ttl = tab[at].ttl;
	}
	free(tab);
	return 0;
}

static int
load(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f) {
		fprintf(stderr, "mrc-accuracy: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *field[8];
		unsigned n = 0;
		struct req r = { 0 };

		line[strcspn(line, "\r\n")] = '\0';
		for (char *p = line, *tok; n < 8 && (tok = strsep(&p, ",")) != NULL;)
			field[n++] = tok;
		if (n == 5) {
			/* tools/loadgen's layout: time,key,size,op,ttl */
			field[6] = field[4];
			field[5] = field[3];
			field[3] = field[2];
			n = 7;
		}
		if (n < 7 || !strcmp(field[0], "timestamp") || !strcmp(field[0], "time") ||
		    field[1][0] == '\0')
			continue;
		if (!strcmp(field[5], "get") || !strcmp(field[5], "gets"))
			r.op = 0;
		else if (!strcmp(field[5], "delete"))
			r.op = 2;
		else if (!strcmp(field[5], "incr") || !strcmp(field[5], "decr"))
			continue;
		else
			r.op = 1;
		r.klen = (uint16_t)strlen(field[1]);
		if (r.klen == 0 || r.klen > ENGINE_KEY_MAX)
			continue;
		r.ts = (int64_t)atof(field[0]);
		r.vsize = (uint32_t)atol(field[3]);
		r.ttl = (uint32_t)atol(field[6]);
		if (keylen + r.klen > keycap) {
			keycap = keycap ? keycap * 2 : 1 << 20;
			keybuf = realloc(keybuf, keycap);
		}
		if (nreq == reqcap) {
			reqcap = reqcap ? reqcap * 2 : 1 << 16;
			reqs = realloc(reqs, reqcap * sizeof(*reqs));
		}
		if (!keybuf || !reqs) {
			fprintf(stderr, "mrc-accuracy: out of memory\n");
			return -1;
		}
		r.key_off = (uint32_t)keylen;
		memcpy(keybuf + keylen, field[1], r.klen);
		keylen += r.klen;
		reqs[nreq++] = r;
	}
	fclose(f);
	return nreq && fill_ttls() == 0 ? 0 : -1;
}

/* Replays the trace on an engine of `memory` bytes; with `m_out`, the curve
 * is attached and returned. Returns the measured get miss ratio. */
static double
replay(size_t memory, enum engine_eviction ev, size_t budget, struct mrc_point *pts,
       struct mrc_info *info)
{
	static char val[1 << 20], out[1 << 20];
	struct engine_config cfg = { 0 };
	struct engine_stats st;
	struct engine_worker *w;
	struct mrc *m = NULL;
	struct engine *e;
	char err[256];
	uint64_t gets = 0, misses = 0, recent_gets = 0, recent_misses = 0;

	cfg.memory = memory;
	/* the segment size `segcached -m <memory>` gives itself (options_finalize:
	 * smaller segments for a small heap) */
	cfg.segment_size = server_segment_size(memory);
	cfg.eviction = ev;
	cfg.max_workers = 1;
	cfg.clock = trace_clock;
	clock_now = 1700000000;
	e = seg_create(&cfg, err, sizeof(err));
	if (!e) {
		/* (a size under lib/seg's least: the curve still models it) */
		fprintf(stderr, "mrc-accuracy: -m %zu: %s\n", memory, err);
		if (pts)
			exit(1);
		return -1;
	}
	if (pts) {
		struct mrc_config mc = { 0 };

		engine_stats(e, &st);
		mc.memory = memory;
		mc.seg_size = (uint32_t)st.seg_size;
		mc.nseg = (uint32_t)st.seg_total;
		mc.eviction = ev;
		mc.budget = budget;
		mc.max_rate = max_rate;
		mc.floor_keys = floor_keys;
		for (unsigned i = 0; !scaled_geometry && i < MRC_SIZES; i++) {
			/* lib/seg's geometry at each size, as the server gives it */
			struct engine_config at = cfg;
			size_t heap;

			at.memory = memory / 8 * mrc_size_eighths[i];
			at.segment_size = server_segment_size(at.memory);
			heap = seg_heap_bytes(&at);
			if (heap >= at.segment_size) {
				mc.nseg_at[i] = (uint32_t)(heap / at.segment_size);
				mc.seg_size_at[i] = (uint32_t)at.segment_size;
			}
		}
		m = mrc_create(&mc, err, sizeof(err));
		if (!m) {
			fprintf(stderr, "mrc-accuracy: %s\n", err);
			exit(1);
		}
		mrc_attach(m, e);
	}
	w = engine_worker_create(e);
	for (size_t i = 0; i < nreq; i++) {
		const struct req *r = &reqs[i];
		char kbuf[sizeof(key_prefix) + ENGINE_KEY_MAX];
		const char *k = keybuf + r->key_off;
		const uint16_t klen = (uint16_t)(r->klen + key_prefix_len);

		if (key_prefix_len) {
			memcpy(kbuf, key_prefix, key_prefix_len);
			memcpy(kbuf + key_prefix_len, k, r->klen);
			k = kbuf;
		}
		const uint32_t vs = r->vsize < sizeof(val) - 256 ? r->vsize : sizeof(val) - 256;
		struct engine_item it;

		if (1700000000 + r->ts > clock_now) {
			clock_now = 1700000000 + r->ts;
			engine_expire(e); /* the server's control thread, once a second */
			if (m) {
				/* and the bytes written (server_mrc_note_writes) */
				engine_stats(e, &st);
				mrc_note_set_bytes(m, st.counters[ENGINE_C_set_bytes]);
				mrc_note_gets(m, gets, misses);
			}
		}
		if (r->op == 0) {
			const bool in_recent = gets >= recent_from;

			gets++;
			recent_gets += in_recent;
			/* (into a buffer: a get that only asks for the meta
			 * data is not a request the server counts, nor samples) */
			if (engine_get(w, k, klen, ENGINE_NO_TOUCH, out, sizeof(out), &it) ==
			    ENGINE_MISS) {
				misses++;
				recent_misses += in_recent;
				engine_store(w, ENGINE_SET, k, klen, val, vs ? vs : 1, 0, r->ttl, 0,
					     NULL);
			}
		} else if (r->op == 1) {
			engine_store(w, ENGINE_SET, k, klen, val, vs ? vs : 1, 0, r->ttl, 0, NULL);
		} else {
			engine_delete(w, k, klen, 0);
		}
	}
	engine_worker_destroy(w);
	recent_measured = recent_gets ? (double)recent_misses / (double)recent_gets : 0;
	if (m) {
		mrc_curve_recent(m, gets, misses, recent_pts, &recent_info);
		/* (the runs at each size count their misses from there) */
		recent_from = gets - recent_info.recent_gets;
		if (adjust == 2)
			mrc_curve_corrected(m, gets, misses, pts, info);
		else if (adjust == 1)
			mrc_curve_adjusted(m, gets, pts, info);
		else
			mrc_curve(m, pts, info);
		engine_attach_sampler(e, NULL, NULL, 0);
		mrc_destroy(m);
	}
	engine_destroy(e);
	return gets ? (double)misses / (double)gets : 0;
}

/* --samples: n more predictions, each of the workload under another
 * sample of its keys (prefixed "sI:"), against the sizes measured. */
static void
other_samples(unsigned n, size_t memory, enum engine_eviction ev, size_t budget,
	      const double real[MRC_SIZES])
{
	double sum[MRC_SIZES] = { 0 }, sq[MRC_SIZES] = { 0 }, mae_sum = 0;
	unsigned within = 0;

	printf("\n%u other samples (keys prefixed sII:), error by size (predicted - measured):\n\n"
	       "| sample | keys | MAE | max |", n);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		printf(" %u/8 |", mrc_size_eighths[i]);
	printf("\n|---|---:|---:|---:|");
	for (unsigned i = 0; i < MRC_SIZES; i++)
		printf("---:|");
	printf("\n");
	for (unsigned s = 1; s <= n; s++) {
		struct mrc_point pts[MRC_SIZES];
		struct mrc_info info;
		double mae = 0, worst = 0;
		unsigned compared = 0;

		key_prefix_len = (size_t)snprintf(key_prefix, sizeof(key_prefix), "s%02u:", s);
		replay(memory, ev, budget, pts, &info);
		printf("| %s | %u |", key_prefix, info.keys);
		for (unsigned i = 0; i < MRC_SIZES; i++) {
			const double d = pts[i].miss_ratio - real[i];

			if (real[i] < 0)
				continue;
			compared++;
			mae += fabs(d);
			worst = fabs(d) > worst ? fabs(d) : worst;
			sum[i] += d;
			sq[i] += d * d;
		}
		mae = compared ? mae / compared : 0;
		mae_sum += mae;
		within += mae <= 0.01 && worst <= 0.02;
		printf(" %.4f | %.4f |", mae, worst);
		for (unsigned i = 0; i < MRC_SIZES; i++)
			printf(real[i] < 0 ? " |" : " %+.3f |", pts[i].miss_ratio - real[i]);
		printf("\n");
	}
	printf("| mean | | %.4f | |", mae_sum / n);
	for (unsigned i = 0; i < MRC_SIZES; i++)
		printf(" %+.3f |", sum[i] / n);
	printf("\n| spread (sd) | | | |");
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		const double mean = sum[i] / n, var = sq[i] / n - mean * mean;

		printf(" %.3f |", var > 0 ? sqrt(var) : 0);
	}
	printf("\n\n%u of %u samples within MAE 0.01 and max 0.02\n", within, n);
}

/* The recent window (mrc_curve_recent) against each size's miss ratio
 * over the same gets of the trace. */
static void
print_recent(const double real[MRC_SIZES], const double real_recent[MRC_SIZES])
{
	double sum = 0, worst = 0, fine_sum = 0, fine_worst = 0;
	unsigned compared = 0, fine = 0;

	printf("\nrecent window: the last %llu gets of the trace (%u epochs ended)\n\n"
	       "| memory | predicted | measured | error |\n|---:|---:|---:|---:|\n",
	       (unsigned long long)recent_info.recent_gets, recent_info.epochs);
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		const double d = fabs(recent_pts[i].miss_ratio - real_recent[i]);

		if (real[i] < 0)
			continue;
		compared++;
		sum += d;
		worst = d > worst ? d : worst;
		if (!recent_pts[i].rough) {
			fine++;
			fine_sum += d;
			fine_worst = d > fine_worst ? d : fine_worst;
		}
		printf("| %.0f MiB%s | %.4f | %.4f | %.4f |\n", (double)recent_pts[i].bytes / (1 << 20),
		       recent_pts[i].current ? " (-m)" : "", recent_pts[i].miss_ratio, real_recent[i],
		       d);
	}
	printf("\nrecent: MAE %.4f, max %.4f (%u sizes compared)\n",
	       compared ? sum / compared : 0, worst, compared);
	printf("recent, without the rough sizes: MAE %.4f, max %.4f (%u sizes)\n",
	       fine ? fine_sum / fine : 0, fine_worst, fine);
}

static size_t
parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'G': case 'g': v *= 1 << 30; break;
	case 'M': case 'm': v *= 1 << 20; break;
	case 'K': case 'k': v *= 1 << 10; break;
	case '\0': v *= 1 << 20; break; /* -m's megabytes */
	default: fprintf(stderr, "mrc-accuracy: bad size %s\n", s); exit(2);
	}
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	const char *trace = NULL;
	size_t memory = 64 << 20, budget = 0;
	enum engine_eviction ev = ENGINE_EVICT_MERGE;
	struct mrc_point pts[MRC_SIZES];
	struct mrc_info info;
	double sum = 0, worst = 0, here, real[MRC_SIZES], real_recent[MRC_SIZES];
	unsigned compared = 0, samples = 0, fine = 0;
	double fine_sum = 0, fine_worst = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			memory = parse_size(argv[++i]);
		} else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
			budget = parse_size(argv[++i]);
		} else if (!strcmp(argv[i], "--eviction") && i + 1 < argc) {
			const struct engine_eviction_policy *p = engine_eviction_by_name(argv[++i]);

			if (!p) {
				fprintf(stderr, "mrc-accuracy: no eviction policy %s\n", argv[i]);
				return 2;
			}
			ev = p->id;
		} else if (!strcmp(argv[i], "--max-rate") && i + 1 < argc) {
			max_rate = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--floor") && i + 1 < argc) {
			floor_keys = (uint32_t)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--no-adjust")) {
			adjust = 0;
		} else if (!strcmp(argv[i], "--gets-only")) {
			adjust = 1;
		} else if (!strcmp(argv[i], "--scaled-geometry")) {
			scaled_geometry = 1;
		} else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
			samples = (unsigned)atoi(argv[++i]);
		} else if (argv[i][0] != '-' && !trace) {
			trace = argv[i];
		} else {
			fprintf(stderr, "usage: segcached-mrc-accuracy TRACE.csv [-m SIZE] "
					"[--eviction POLICY] [--budget SIZE] [--max-rate R] [--floor N] "
					"[--scaled-geometry] [--no-adjust] [--gets-only] "
					"[--samples N]\n");
			return 2;
		}
	}
	if (samples > 99) {
		fprintf(stderr, "mrc-accuracy: --samples: at most 99\n");
		return 2;
	}
	if (samples)
		key_prefix_len = (size_t)snprintf(key_prefix, sizeof(key_prefix), "s00:");
	if (!trace || load(trace) != 0) {
		fprintf(stderr, "mrc-accuracy: no requests read (a trace CSV is needed)\n");
		return 2;
	}
	here = replay(memory, ev, budget, pts, &info);
	printf("trace %s: %zu requests; -m %zu MiB, eviction %s; sample rate %.5f, "
	       "%u keys, %zu bytes (%.2f%% of -m); measured at -m: %.4f\n\n",
	       trace, nreq, memory >> 20, engine_eviction_name(ev), info.rate, info.keys,
	       info.memory, 100.0 * (double)info.memory / (double)memory, here);
	printf("| memory | predicted | measured | error |\n|---:|---:|---:|---:|\n");
	for (unsigned i = 0; i < MRC_SIZES; i++) {
		double d;

		/* (the -m size once more, for its miss ratio over the recent
		 * window, which the prediction run could not know in advance) */
		real[i] = replay(pts[i].bytes, ev, 0, NULL, NULL);
		real_recent[i] = recent_measured;
		if (pts[i].current)
			real[i] = here;
		d = fabs(pts[i].miss_ratio - real[i]);

		if (real[i] < 0) {
			printf("| %.0f MiB | %.4f | (under lib/seg's least memory) | |\n",
			       (double)pts[i].bytes / (1 << 20), pts[i].miss_ratio);
			continue;
		}
		compared++;
		sum += d;
		worst = d > worst ? d : worst;
		if (!pts[i].rough) {
			fine++;
			fine_sum += d;
			fine_worst = d > fine_worst ? d : fine_worst;
		}
		printf("| %.0f MiB%s | %.4f | %.4f | %.4f |\n", (double)pts[i].bytes / (1 << 20),
		       pts[i].current ? " (-m)" : pts[i].rough ? " (rough)" : "",
		       pts[i].miss_ratio, real[i], d);
		fflush(stdout);
	}
	printf("\nMAE %.4f, max %.4f (%u sizes compared)\n", compared ? sum / compared : 0, worst,
	       compared);
	/* (the sizes `stats mrc` does not name in mrc_rough_sizes) */
	printf("without the rough sizes: MAE %.4f, max %.4f (%u sizes)\n",
	       fine ? fine_sum / fine : 0, fine_worst, fine);
	print_recent(real, real_recent);
	if (samples)
		other_samples(samples, memory, ev, budget, real);
	return 0;
}
