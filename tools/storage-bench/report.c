/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Results as text or JSON. Every number is derived here once (struct
 * sb_metrics) so that both outputs always agree.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "shapes.h"
#include "json.h"

static const char *const counter_names[] = {
#define SB_COUNTER_NAME(name, desc) #name,
	ENGINE_WORKER_COUNTERS(SB_COUNTER_NAME)
#undef SB_COUNTER_NAME
};

struct sb_metrics {
	double mops;
	double hit_ratio;
	uint64_t lock_bucket, lock_segment, locks_other, evict_waits;
	double locks_per_op;
	/* Contention inputs of tools/storage-bench/contention-model.py, per
	 * operation of the timed phase: atomic read-modify-writes on lines
	 * other threads write (lock acquisitions included), and the share of
	 * the threads' time spent holding evict_lock (the serial fraction). */
	double rmw_segment_per_op, rmw_open_shared_per_op, rmw_bucket_per_op, rmw_global_per_op;
	double shared_rmw_per_op;
	double evict_passes_per_op, evict_ns_per_pass, evict_ns_per_op;
	double serial_fraction; /* evict_lock held, by workers and the control thread */
	double wait_fraction;   /* workers waiting for evict_lock or a pass */
	double expired_per_op, evicted_per_op;
	uint64_t warm_evictions, timed_evictions, timed_expired;
	uint64_t items;
	double item_bytes_per_item;   /* live item bytes (header, key, value) */
	double engine_bytes_per_item; /* heap + table + meta over items */
	double budget_bytes_per_item; /* the whole memory budget over items */
	int64_t rss_growth;           /* create + warm-up; <0: unknown */
	double rss_bytes_per_item;
};

static double
ratio(double a, double b)
{
	return b != 0 ? a / b : NAN;
}

static uint64_t
delta(const struct engine_stats *before,
      const struct engine_stats *after,
      enum engine_worker_counter c)
{
	return after->counters[c] - before->counters[c];
}

static void
sb_metrics(const struct sb_run_result *r, struct sb_metrics *m)
{
	const struct engine_stats *d = &r->done;

	m->mops = ratio((double)r->ops, r->seconds) / 1e6;
	m->hit_ratio = ratio((double)r->get_hits, (double)r->gets);
	m->lock_bucket = delta(&r->warmed, d, ENGINE_C_lock_bucket);
	m->lock_segment = delta(&r->warmed, d, ENGINE_C_lock_segment);
	m->locks_other = d->locks_other - r->warmed.locks_other;
	m->evict_waits = delta(&r->warmed, d, ENGINE_C_evict_waits);
	m->locks_per_op = ratio((double)(m->lock_bucket + m->lock_segment),
				(double)r->ops);
	const double ops = (double)r->ops;
	const uint64_t rmw_seg = delta(&r->warmed, d, ENGINE_C_rmw_segment);
	const uint64_t rmw_open = delta(&r->warmed, d, ENGINE_C_rmw_open_shared);
	const uint64_t rmw_bucket = delta(&r->warmed, d, ENGINE_C_rmw_bucket);
	const uint64_t rmw_global = delta(&r->warmed, d, ENGINE_C_rmw_global);
	const uint64_t passes = delta(&r->warmed, d, ENGINE_C_evict_passes);
	const uint64_t evict_ns = delta(&r->warmed, d, ENGINE_C_evict_ns);

	m->rmw_segment_per_op = ratio((double)rmw_seg, ops);
	m->rmw_open_shared_per_op = ratio((double)rmw_open, ops);
	m->rmw_bucket_per_op = ratio((double)rmw_bucket, ops);
	m->rmw_global_per_op = ratio((double)rmw_global, ops);
	m->shared_rmw_per_op = ratio((double)(m->lock_bucket + m->lock_segment + rmw_seg +
					      rmw_open + rmw_bucket + rmw_global), ops);
	m->evict_passes_per_op = ratio((double)passes, ops);
	m->evict_ns_per_pass = ratio((double)evict_ns, (double)passes);
	m->evict_ns_per_op = ratio((double)evict_ns, ops);
	const uint64_t other_ns = d->evict_ns_other - r->warmed.evict_ns_other;
	const double thread_ns = r->seconds * 1e9 * r->threads;

	m->serial_fraction = ratio((double)(evict_ns + other_ns), thread_ns);
	m->wait_fraction = ratio((double)delta(&r->warmed, d, ENGINE_C_evict_wait_ns), thread_ns);
	m->timed_expired = d->expired - r->warmed.expired;
	m->expired_per_op = ratio((double)m->timed_expired, ops);
	m->evicted_per_op = ratio((double)(d->evictions - r->warmed.evictions), ops);
	m->warm_evictions = r->warmed.evictions - r->created.evictions;
	m->timed_evictions = d->evictions - r->warmed.evictions;
	m->items = d->curr_items;
	m->item_bytes_per_item = ratio((double)d->bytes, (double)m->items);
	m->engine_bytes_per_item =
		ratio((double)(d->heap_bytes + d->table_bytes + d->meta_bytes),
		      (double)m->items);
	m->budget_bytes_per_item = ratio((double)d->limit_maxbytes, (double)m->items);
	/* Only meaningful the first time an engine runs in this process: a
	 * later run may reuse memory an earlier one touched (the EAL heap
	 * keeps what rte_free returns). */
	if (r->round == 0 && r->rss_created && r->rss_warmed >= r->rss_created) {
		m->rss_growth = (int64_t)(r->rss_warmed - r->rss_created);
		m->rss_bytes_per_item = ratio((double)m->rss_growth,
					      (double)r->warmed.curr_items);
	} else {
		m->rss_growth = -1;
		m->rss_bytes_per_item = NAN;
	}
}

static const char *
eviction_name(const struct sb_options *o)
{
	return o->eviction_set ? engine_eviction_name(o->ecfg.eviction) : "default";
}

void
sb_report_run_text(FILE *f, const struct sb_options *o,
		   const struct sb_run_result *r)
{
	struct sb_metrics m;

	sb_metrics(r, &m);
	fprintf(f, "%s, round %u, %u thread%s: %" PRIu64 " ops in %.3f s = %.3f Mops/s%s\n",
		sb_engine_name(r->kind), r->round, r->threads,
		r->threads == 1 ? "" : "s", r->ops, r->seconds, m.mops,
		r->time_limited ? " (stopped by --duration)" : "");
	for (unsigned i = 0; i < r->threads; i++) {
		const struct sb_thread_result *t = &r->thread[i];

		fprintf(f, "  thread %u (cpu %d): %" PRIu64 " ops, %.3f Mops/s\n", i,
			t->cpu, t->ops, ratio((double)t->ops, t->end - t->start) / 1e6);
	}
	fprintf(f, "  get %" PRIu64 " (hit ratio %.4f), set %" PRIu64 " (%" PRIu64
		" failed), delete %" PRIu64 " (%" PRIu64 " hits)%s\n",
		r->gets, m.hit_ratio, r->sets, r->set_failed, r->deletes,
		r->delete_hits, r->errors ? ", UNEXPECTED STATUSES" : "");
	fprintf(f, "  locks/op %.5f (bucket %" PRIu64 ", segment %" PRIu64
		", outside workers %" PRIu64 "); evict_lock waits %" PRIu64 "\n",
		m.locks_per_op, m.lock_bucket, m.lock_segment, m.locks_other, m.evict_waits);
	fprintf(f, "  shared-line RMWs/op %.3f (segment %.3f, shared open %.3f, slot %.3f, "
		"global %.4f); evict_lock: %.5f passes/op, %.0f ns/pass, %.4f of thread time "
		"held (%.4f waiting)\n",
		m.shared_rmw_per_op, m.rmw_segment_per_op, m.rmw_open_shared_per_op,
		m.rmw_bucket_per_op,
		m.rmw_global_per_op, m.evict_passes_per_op, m.evict_ns_per_pass,
		m.serial_fraction, m.wait_fraction);
	fprintf(f, "  while timed: %.5f items expired/op, %.5f evicted/op\n", m.expired_per_op,
		m.evicted_per_op);
	fprintf(f, "  warm-up: %" PRIu64 " keys stored in %.2f s, %" PRIu64
		" failed, %" PRIu64 " evictions; %" PRIu64 " evictions while timed\n",
		r->warm_stored, r->warm_seconds, r->warm_failed, m.warm_evictions,
		m.timed_evictions);
	fprintf(f, "  memory: %" PRIu64 " items; live item bytes %.1f/item; "
		"heap+table+meta %.1f/item; RSS growth ",
		m.items, m.item_bytes_per_item, m.engine_bytes_per_item);
	if (m.rss_growth >= 0)
		fprintf(f, "%.1f/item\n", m.rss_bytes_per_item);
	else
		fprintf(f, "n/a (not the engine's first run)\n");
	(void)o;
}

void
sb_report_fill_text(FILE *f, const struct sb_options *o,
		    const struct sb_fill_result *r)
{
	const struct engine_stats *d = &r->done;

	fprintf(f, "%s fill: budget %zu bytes, values %u..%u bytes, %s keys: stopped by %s "
		"after %" PRIu64 " sets (%.2f s)\n",
		sb_engine_name(r->kind), o->ecfg.memory, o->vmin, o->vmax,
		o->key_format == SB_KEY_PLAIN ? "plain" : "padded", r->stop,
		r->attempted, r->seconds);
	fprintf(f, "  resident just before the %s: %" PRIu64
		" objects (%.2f bytes of budget per object)\n",
		strcmp(r->stop, "eviction") == 0 ? "first eviction" :
		strncmp(r->stop, "set failed", 10) == 0 ? "failed set" : "stop",
		r->items_before, ratio((double)o->ecfg.memory, (double)r->items_before));
	fprintf(f, "  after the last set: curr_items %" PRIu64 ", read back %" PRIu64
		" of %" PRIu64 " keys (%" PRIu64 " corrupt), evictions %" PRIu64 "\n",
		d->curr_items, r->readback_hits, r->attempted, r->readback_corrupt,
		d->evictions);
	fprintf(f, "  engine memory: heap %" PRIu64 " + table %" PRIu64 " + meta %" PRIu64
		" = %" PRIu64 " bytes (budget %zu); live item bytes %" PRIu64 "\n",
		d->heap_bytes, d->table_bytes, d->meta_bytes,
		d->heap_bytes + d->table_bytes + d->meta_bytes, o->ecfg.memory, d->bytes);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, unsigned n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One engine's rounds, summarised. */
struct sb_engine_summary {
	unsigned rounds;
	double mops_median;
	double hit_ratio;     /* mean over rounds */
	double locks_per_op;  /* mean over rounds */
	double item_bytes_per_item;
	double engine_bytes_per_item;
	double rss_bytes_per_item; /* first round */
};

static void
sb_summarise(const struct sb_run_result *runs, unsigned nruns,
	     enum sb_engine_kind kind, struct sb_engine_summary *s)
{
	double mops[nruns ? nruns : 1];
	double hits = 0, locks = 0;

	memset(s, 0, sizeof(*s));
	s->rss_bytes_per_item = NAN;
	for (unsigned i = 0; i < nruns; i++) {
		struct sb_metrics m;

		if (runs[i].kind != kind)
			continue;
		sb_metrics(&runs[i], &m);
		mops[s->rounds++] = m.mops;
		hits += m.hit_ratio;
		locks += m.locks_per_op;
		s->item_bytes_per_item = m.item_bytes_per_item;
		s->engine_bytes_per_item = m.engine_bytes_per_item;
		if (m.rss_growth >= 0)
			s->rss_bytes_per_item = m.rss_bytes_per_item;
	}
	s->mops_median = median(mops, s->rounds);
	s->hit_ratio = s->rounds ? hits / s->rounds : NAN;
	s->locks_per_op = s->rounds ? locks / s->rounds : NAN;
}

/* seg/baseline throughput of each round in which both ran; returns the count. */
static unsigned
sb_round_ratios(const struct sb_run_result *runs, unsigned nruns,
		double *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nruns; i++) {
		if (runs[i].kind != SB_ENGINE_SEG)
			continue;
		for (unsigned k = 0; k < nruns; k++) {
			struct sb_metrics ms, mb;

			if (runs[k].kind != SB_ENGINE_BASELINE || runs[k].round != runs[i].round)
				continue;
			sb_metrics(&runs[i], &ms);
			sb_metrics(&runs[k], &mb);
			out[n++] = ratio(ms.mops, mb.mops);
		}
	}
	return n;
}

void
sb_report_compare_text(FILE *f, const struct sb_options *o,
		       const struct sb_run_result *runs, unsigned nruns,
		       double generator_ns)
{
	struct sb_engine_summary s, b;
	double ratios[nruns ? nruns : 1], sorted[nruns ? nruns : 1];
	unsigned n = sb_round_ratios(runs, nruns, ratios);

	sb_summarise(runs, nruns, SB_ENGINE_SEG, &s);
	sb_summarise(runs, nruns, SB_ENGINE_BASELINE, &b);
	memcpy(sorted, ratios, n * sizeof(*ratios));
	fprintf(f, "\nside by side, %u thread%s, %s keys, %u..%u-byte values, "
		"mix %u:%u:%u, gets in batches of %u, %u round%s:\n",
		o->threads, o->threads == 1 ? "" : "s",
		o->dist == SB_DIST_ZIPF ? "zipf" : "uniform", o->vmin, o->vmax,
		o->pct_get, o->pct_set, o->pct_delete, o->batch, n, n == 1 ? "" : "s");
	fprintf(f, "  %-28s %12s %12s %12s\n", "", "seg", "baseline", "seg/baseline");
	fprintf(f, "  %-28s %12.3f %12.3f %12.3f\n", "Mops/s (median)", s.mops_median,
		b.mops_median, median(sorted, n));
	fprintf(f, "  %-28s %12.4f %12.4f\n", "hit ratio", s.hit_ratio, b.hit_ratio);
	fprintf(f, "  %-28s %12.5f %12.5f\n", "locks/op", s.locks_per_op, b.locks_per_op);
	fprintf(f, "  %-28s %12.1f %12.1f %12.3f\n", "live item bytes/item",
		s.item_bytes_per_item, b.item_bytes_per_item,
		ratio(s.item_bytes_per_item, b.item_bytes_per_item));
	fprintf(f, "  %-28s %12.1f %12.1f %12.3f\n", "RSS growth bytes/item",
		s.rss_bytes_per_item, b.rss_bytes_per_item,
		ratio(s.rss_bytes_per_item, b.rss_bytes_per_item));
	fprintf(f, "  (the workload generator alone costs %.1f ns/op of every op above)\n",
		generator_ns);
	if (n > 1) {
		fprintf(f, "  seg/baseline per round:");
		for (unsigned i = 0; i < n; i++)
			fprintf(f, " %.3f", ratios[i]);
		fputc('\n', f);
	}
}

void
sb_report_fill_compare_text(FILE *f, const struct sb_fill_result *fills,
			    unsigned nfills)
{
	const struct sb_fill_result *s = NULL, *b = NULL;

	for (unsigned i = 0; i < nfills; i++) {
		if (fills[i].kind == SB_ENGINE_SEG)
			s = &fills[i];
		else
			b = &fills[i];
	}
	if (!s || !b)
		return;
	fprintf(f, "\nfill side by side:        %12s %12s %12s\n", "seg", "baseline",
		"seg/baseline");
	fprintf(f, "  %-24s %12" PRIu64 " %12" PRIu64 " %12.3f\n",
		"before first eviction", s->items_before, b->items_before,
		ratio((double)s->items_before, (double)b->items_before));
	fprintf(f, "  %-24s %12" PRIu64 " %12" PRIu64 " %12.3f\n", "read back after",
		s->readback_hits, b->readback_hits,
		ratio((double)s->readback_hits, (double)b->readback_hits));
}

static void
json_config(struct jw *j, const struct sb_options *o)
{
	jw_object(j, "config");
	jw_array(j, "engines");
	for (int k = 0; k < SB_ENGINE_COUNT; k++)
		if (o->engine[k])
			jw_str(j, NULL, sb_engine_name((enum sb_engine_kind)k));
	jw_array_end(j);
	jw_u64(j, "threads", o->threads);
	jw_u64(j, "keys", o->keys);
	jw_str(j, "key_format", o->key_format == SB_KEY_PLAIN ? "plain" : "padded");
	jw_u64(j, "key_size", o->key_size);
	jw_u64(j, "value_size_min", o->vmin);
	jw_u64(j, "value_size_max", o->vmax);
	jw_object(j, "mix");
	jw_u64(j, "get", o->pct_get);
	jw_u64(j, "set", o->pct_set);
	jw_u64(j, "delete", o->pct_delete);
	jw_object_end(j);
	jw_str(j, "dist", o->dist == SB_DIST_ZIPF ? "zipf" : "uniform");
	jw_str(j, "shape", o->shape ? o->shape->name : "none");
	jw_u64(j, "ttl", o->ttl);
	if (o->dist == SB_DIST_ZIPF)
		jw_dbl(j, "theta", o->theta);
	else
		jw_null(j, "theta");
	jw_u64(j, "ops", o->ops);
	jw_dbl(j, "duration_limit", o->duration);
	jw_u64(j, "repeat", o->repeat);
	jw_u64(j, "seed", o->seed);
	jw_u64(j, "batch", o->batch);
	jw_bool(j, "pin", o->pin);
	jw_u64(j, "memory", o->ecfg.memory);
	jw_str(j, "eviction", eviction_name(o));
	jw_u64(j, "segment_size", o->ecfg.segment_size);
	jw_u64(j, "hash_power", o->ecfg.hash_power);
	jw_u64(j, "item_max", o->ecfg.item_max);
	jw_bool(j, "cas_disabled", o->ecfg.cas_disabled);
	if (o->fill)
		jw_u64(j, "fill_max_keys", o->fill_max_keys);
	jw_object_end(j);
}

static void
json_engine_stats(struct jw *j, const char *key,
		  const struct engine_stats *st)
{
	jw_object(j, key);
	jw_u64(j, "curr_items", st->curr_items);
	jw_u64(j, "bytes", st->bytes);
	jw_u64(j, "limit_maxbytes", st->limit_maxbytes);
	jw_u64(j, "evictions", st->evictions);
	jw_u64(j, "expired", st->expired);
	jw_u64(j, "seg_total", st->seg_total);
	jw_u64(j, "seg_free", st->seg_free);
	jw_u64(j, "seg_hash", st->seg_hash);
	jw_u64(j, "seg_evicted", st->seg_evicted);
	jw_u64(j, "seg_merged", st->seg_merged);
	jw_u64(j, "hash_buckets", st->hash_buckets);
	jw_u64(j, "hash_overflow", st->hash_overflow);
	jw_u64(j, "heap_bytes", st->heap_bytes);
	jw_u64(j, "table_bytes", st->table_bytes);
	jw_u64(j, "table_grown_bytes", st->table_grown_bytes);
	jw_u64(j, "meta_bytes", st->meta_bytes);
	jw_object_end(j);
}

static void
json_run(struct jw *j, const struct sb_run_result *r)
{
	struct sb_metrics m;

	sb_metrics(r, &m);
	jw_object(j, NULL);
	jw_u64(j, "round", r->round);
	jw_str(j, "engine", sb_engine_name(r->kind));
	jw_u64(j, "threads", r->threads);
	jw_u64(j, "ops_requested", r->ops_requested);
	jw_u64(j, "ops", r->ops);
	jw_bool(j, "time_limited", r->time_limited);
	jw_dbl(j, "seconds", r->seconds);
	jw_dbl(j, "mops", m.mops);
	jw_u64(j, "gets", r->gets);
	jw_u64(j, "get_hits", r->get_hits);
	jw_dbl(j, "hit_ratio", m.hit_ratio);
	jw_u64(j, "sets", r->sets);
	jw_u64(j, "set_failed", r->set_failed);
	jw_u64(j, "deletes", r->deletes);
	jw_u64(j, "delete_hits", r->delete_hits);
	jw_u64(j, "errors", r->errors);
	jw_dbl(j, "locks_per_op", m.locks_per_op);
	jw_u64(j, "lock_bucket", m.lock_bucket);
	jw_u64(j, "lock_segment", m.lock_segment);
	jw_u64(j, "locks_other", m.locks_other);
	jw_u64(j, "evict_waits", m.evict_waits);
	jw_u64(j, "evictions", m.timed_evictions);
	jw_object(j, "contention"); /* per operation; docs/bench/journal/contention-model.md */
	jw_dbl(j, "shared_rmw_per_op", m.shared_rmw_per_op);
	jw_dbl(j, "lock_bucket_per_op", ratio((double)m.lock_bucket, (double)r->ops));
	jw_dbl(j, "lock_segment_per_op", ratio((double)m.lock_segment, (double)r->ops));
	jw_dbl(j, "rmw_segment_per_op", m.rmw_segment_per_op);
	jw_dbl(j, "rmw_open_shared_per_op", m.rmw_open_shared_per_op);
	jw_dbl(j, "rmw_bucket_per_op", m.rmw_bucket_per_op);
	jw_dbl(j, "rmw_global_per_op", m.rmw_global_per_op);
	jw_dbl(j, "evict_passes_per_op", m.evict_passes_per_op);
	jw_dbl(j, "evict_ns_per_pass", m.evict_ns_per_pass);
	jw_dbl(j, "evict_ns_per_op", m.evict_ns_per_op);
	jw_dbl(j, "serial_fraction", m.serial_fraction);
	jw_dbl(j, "wait_fraction", m.wait_fraction);
	jw_dbl(j, "expired_per_op", m.expired_per_op);
	jw_dbl(j, "evicted_per_op", m.evicted_per_op);
	jw_object_end(j);
	jw_u64(j, "expired", m.timed_expired);
	jw_array(j, "per_thread");
	for (unsigned i = 0; i < r->threads; i++) {
		const struct sb_thread_result *t = &r->thread[i];

		jw_object(j, NULL);
		jw_i64(j, "cpu", t->cpu);
		jw_u64(j, "ops", t->ops);
		jw_u64(j, "gets", t->gets);
		jw_u64(j, "get_hits", t->get_hits);
		jw_u64(j, "sets", t->sets);
		jw_u64(j, "deletes", t->deletes);
		jw_dbl(j, "seconds", t->end - t->start);
		jw_dbl(j, "mops", ratio((double)t->ops, t->end - t->start) / 1e6);
		jw_object_end(j);
	}
	jw_array_end(j);
	jw_object(j, "warmup");
	jw_u64(j, "stored", r->warm_stored);
	jw_u64(j, "failed", r->warm_failed);
	jw_u64(j, "evictions", m.warm_evictions);
	jw_dbl(j, "seconds", r->warm_seconds);
	jw_object_end(j);
	jw_object(j, "counters"); /* engine counters, delta over the timed phase */
	for (int c = 0; c < ENGINE_C_MAX; c++)
		jw_u64(j, counter_names[c],
		       delta(&r->warmed, &r->done, (enum engine_worker_counter)c));
	jw_object_end(j);
	jw_object(j, "memory");
	jw_u64(j, "items", m.items);
	jw_dbl(j, "item_bytes_per_item", m.item_bytes_per_item);
	jw_dbl(j, "engine_bytes_per_item", m.engine_bytes_per_item);
	jw_dbl(j, "budget_bytes_per_item", m.budget_bytes_per_item);
	if (m.rss_growth >= 0) {
		jw_i64(j, "rss_growth", m.rss_growth);
		jw_dbl(j, "rss_bytes_per_item", m.rss_bytes_per_item);
	} else {
		jw_null(j, "rss_growth");
		jw_null(j, "rss_bytes_per_item");
	}
	jw_object_end(j);
	json_engine_stats(j, "engine_stats", &r->done);
	jw_object_end(j);
}

static void
json_fill(struct jw *j, const struct sb_options *o,
	  const struct sb_fill_result *r)
{
	jw_object(j, NULL);
	jw_str(j, "engine", sb_engine_name(r->kind));
	jw_str(j, "stop", r->stop);
	jw_u64(j, "attempted", r->attempted);
	jw_u64(j, "stored", r->stored);
	jw_u64(j, "items_before_first_eviction", r->items_before);
	jw_dbl(j, "budget_bytes_per_object",
	       ratio((double)o->ecfg.memory, (double)r->items_before));
	jw_u64(j, "engine_bytes", r->done.heap_bytes + r->done.table_bytes +
				  r->done.meta_bytes);
	jw_u64(j, "table_grown_bytes", r->done.table_grown_bytes);
	jw_u64(j, "curr_items", r->done.curr_items);
	jw_u64(j, "readback_hits", r->readback_hits);
	jw_u64(j, "readback_corrupt", r->readback_corrupt);
	jw_u64(j, "evictions", r->done.evictions);
	jw_dbl(j, "seconds", r->seconds);
	jw_dbl(j, "readback_seconds", r->readback_seconds);
	json_engine_stats(j, "engine_stats", &r->done);
	jw_object_end(j);
}

static void
json_summary(struct jw *j, const struct sb_run_result *runs,
	     unsigned nruns)
{
	double ratios[nruns ? nruns : 1];
	unsigned n = sb_round_ratios(runs, nruns, ratios);

	jw_object(j, "summary");
	for (int k = 0; k < SB_ENGINE_COUNT; k++) {
		struct sb_engine_summary s;

		sb_summarise(runs, nruns, (enum sb_engine_kind)k, &s);
		if (!s.rounds)
			continue;
		jw_object(j, sb_engine_name((enum sb_engine_kind)k));
		jw_u64(j, "rounds", s.rounds);
		jw_dbl(j, "mops_median", s.mops_median);
		jw_dbl(j, "hit_ratio", s.hit_ratio);
		jw_dbl(j, "locks_per_op", s.locks_per_op);
		jw_dbl(j, "item_bytes_per_item", s.item_bytes_per_item);
		jw_dbl(j, "engine_bytes_per_item", s.engine_bytes_per_item);
		jw_dbl(j, "rss_bytes_per_item", s.rss_bytes_per_item);
		jw_object_end(j);
	}
	if (n) {
		jw_array(j, "seg_over_baseline_per_round");
		for (unsigned i = 0; i < n; i++)
			jw_dbl(j, NULL, ratios[i]);
		jw_array_end(j);
		jw_dbl(j, "seg_over_baseline_median", median(ratios, n));
	}
	jw_object_end(j);
}

void
sb_report_json(FILE *f, const struct sb_options *o, int argc,
	       char **argv, const struct sb_run_result *runs,
	       unsigned nruns, const struct sb_fill_result *fills,
	       unsigned nfills, double generator_ns)
{
	struct jw j;

	jw_init(&j, f);
	jw_object(&j, NULL);
	jw_str(&j, "tool", "segcached-storage-bench");
	jw_array(&j, "command");
	for (int i = 0; i < argc; i++)
		jw_str(&j, NULL, argv[i]);
	jw_array_end(&j);
	jw_str(&j, "mode", o->fill ? "fill" : "run");
	json_config(&j, o);
	if (o->fill) {
		jw_array(&j, "fills");
		for (unsigned i = 0; i < nfills; i++)
			json_fill(&j, o, &fills[i]);
		jw_array_end(&j);
	} else {
		jw_dbl(&j, "generator_ns_per_op", generator_ns);
		jw_array(&j, "runs");
		for (unsigned i = 0; i < nruns; i++)
			json_run(&j, &runs[i]);
		jw_array_end(&j);
		json_summary(&j, runs, nruns);
	}
	jw_object_end(&j);
}
