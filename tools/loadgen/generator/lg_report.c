/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Results (lg_report.h): the progress line, the summary and the JSON file.
 */
#include "lg_report.h"

void
lg_progress_read(struct lg_worker *const *w, unsigned n, struct lg_progress *p)
{
	p->done = p->hits = p->errs = 0;
	for (unsigned i = 0; i < n; i++) {
		p->done += __atomic_load_n(&w[i]->done_all, __ATOMIC_RELAXED);
		p->hits += __atomic_load_n(&w[i]->hits_all, __ATOMIC_RELAXED);
		p->errs += __atomic_load_n(&w[i]->errs_all, __ATOMIC_RELAXED);
	}
}

void
lg_report_progress(FILE *f, double t_s, const char *phase,
		   const struct lg_progress *now, const struct lg_progress *prev,
		   double dt_s)
{
	fprintf(f, "[%6.1fs] %-8s %12.0f req/s  total %llu  hits %llu  errors %llu\n",
		t_s, phase, dt_s > 0 ? (double)(now->done - prev->done) / dt_s : 0,
		(unsigned long long)now->done, (unsigned long long)now->hits,
		(unsigned long long)now->errs);
	fflush(f);
}

static double
ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999 };
static const char *const qnames[] = { "p50", "p90", "p99", "p99.9" };

void
lg_report_text(FILE *f, const struct lg_options *o, const struct lg_stats *s,
	       double measure_s)
{
	fprintf(f, "throughput  %.0f req/s (%.0f keys/s) over %.2f s\n",
		ratio(s->requests, 1) / measure_s,
		(double)(s->keys_asked + s->sets) / measure_s, measure_s);
	fprintf(f, "requests    %llu (get %llu, set %llu)  hit ratio %.4f\n",
		(unsigned long long)s->requests, (unsigned long long)s->gets,
		(unsigned long long)s->sets, ratio(s->hits, s->keys_asked));
	fprintf(f, "errors      %llu  corrupt %llu  stale %llu  bad %llu  lost %llu  late %llu  "
		"conn_failed %llu  values_checked %llu\n",
		(unsigned long long)s->errors, (unsigned long long)s->corrupt,
		(unsigned long long)s->stale,
		(unsigned long long)s->bad, (unsigned long long)s->lost,
		(unsigned long long)s->late, (unsigned long long)s->conn_failed,
		(unsigned long long)s->values_checked);
	if (o->run.rate > 0 || o->run.trace_speed > 0)
		fprintf(f, "schedule    sent %llu  late: generator %llu, window %llu  "
			"unsent_at_drain %llu  backlog_peak %llu\n",
			(unsigned long long)s->sent, (unsigned long long)s->generator_late,
			(unsigned long long)s->window_late,
			(unsigned long long)s->unsent_at_drain,
			(unsigned long long)s->backlog_peak);
	if (lg_stats_generator_behind(s))
		fprintf(f, "INVALID     %.2f%% of the sends generator-late (over %d%%): the "
			"generator fell behind its schedule, so these latencies are its own\n",
			100.0 * ratio(s->generator_late, s->sent), LG_GENERATOR_LATE_MAX_PERCENT);
	/* Closed loop, each request queues behind the others in flight (p50
	 * about in-flight / throughput): response time, not server latency. */
	fprintf(f, o->run.rate > 0 ? "latency us " : "response us");
	for (unsigned i = 0; i < 4; i++)
		fprintf(f, " %s %.1f", qnames[i],
			(double)lg_hist_quantile(&s->hist, quantiles[i]) / 1e3);
	fprintf(f, " max %.1f mean %.1f", (double)s->hist.max / 1e3,
		s->hist.count ? s->hist.sum / (double)s->hist.count / 1e3 : 0);
	if (o->run.rate > 0)
		fprintf(f, " (from intended send times; a lost request at its timeout)\n");
	else
		fprintf(f, " (closed loop, %u in flight: queueing, not server latency)\n",
			o->run.workers * o->run.conns * o->run.depth);
}

int
lg_report_json(const char *path, const struct lg_options *o,
	       const struct lg_stats *s, double measure_s)
{
	FILE *f = fopen(path, "w");
	const struct lg_workload *wl = &o->run.wl;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"stack\": \"%s\", \"transport\": \"%s\", \"server\": \"%s:%u\",\n",
		o->stack == LG_STACK_NET ? "net" : "socket", o->udp ? "udp" : "tcp",
		o->server, o->port);
	fprintf(f, "  \"workers\": %u, \"conns_per_worker\": %u, \"depth\": %u,\n",
		o->run.workers, o->run.conns, o->run.depth);
	if (o->trace_path)
		fprintf(f, "  \"trace\": \"%s\", \"trace_speed\": %g,\n", o->trace_path,
			o->run.trace_speed);
	else
		fprintf(f, "  \"keys\": %llu, \"key_size\": %u, \"value_size_min\": %u, "
			"\"value_size_max\": %u, \"get_ratio\": %g, \"multiget\": %u, "
			"\"zipf\": %g,\n", (unsigned long long)wl->keys, wl->key_size,
			wl->vmin, wl->vmax, wl->get_ratio, wl->multiget,
			wl->zipf ? wl->theta : 0.0);
	fprintf(f, "  \"mode\": \"%s\", \"rate\": %g, \"duration_s\": %.3f,\n",
		o->run.rate > 0 ? "open" : "closed", o->run.rate, measure_s);
	fprintf(f, "  \"throughput\": %.1f, \"keys_per_s\": %.1f,\n",
		(double)s->requests / measure_s,
		(double)(s->keys_asked + s->sets) / measure_s);
	fprintf(f, "  \"requests\": %llu, \"gets\": %llu, \"sets\": %llu, \"hits\": %llu, "
		"\"keys_asked\": %llu, \"hit_ratio\": %.6f,\n",
		(unsigned long long)s->requests, (unsigned long long)s->gets,
		(unsigned long long)s->sets, (unsigned long long)s->hits,
		(unsigned long long)s->keys_asked, ratio(s->hits, s->keys_asked));
	fprintf(f, "  \"errors\": %llu, \"corrupt\": %llu, \"stale\": %llu, \"bad\": %llu, "
		"\"lost\": %llu, \"late\": %llu, \"conn_failed\": %llu, \"values_checked\": %llu,\n"
		"  \"verify\": \"%s\",\n",
		(unsigned long long)s->errors, (unsigned long long)s->corrupt,
		(unsigned long long)s->stale,
		(unsigned long long)s->bad, (unsigned long long)s->lost,
		(unsigned long long)s->late, (unsigned long long)s->conn_failed,
		(unsigned long long)s->values_checked, o->verify_all ? "all" : "sampled");
	/* Open loop (and paced replay): why sends were late, what was never
	 * sent, and whether the generator kept its schedule at all. */
	fprintf(f, "  \"sent\": %llu, \"generator_late\": %llu, \"window_late\": %llu, "
		"\"unsent_at_drain\": %llu, \"backlog_peak\": %llu, \"generator_behind\": %s,\n",
		(unsigned long long)s->sent, (unsigned long long)s->generator_late,
		(unsigned long long)s->window_late, (unsigned long long)s->unsent_at_drain,
		(unsigned long long)s->backlog_peak,
		lg_stats_generator_behind(s) ? "true" : "false");
	fprintf(f, "  \"latency_us\": {");
	for (unsigned i = 0; i < 4; i++)
		fprintf(f, "\"%s\": %.3f, ", qnames[i],
			(double)lg_hist_quantile(&s->hist, quantiles[i]) / 1e3);
	fprintf(f, "\"max\": %.3f, \"mean\": %.3f}\n}\n", (double)s->hist.max / 1e3,
		s->hist.count ? s->hist.sum / (double)s->hist.count / 1e3 : 0);
	return fclose(f) == 0 ? 0 : -1;
}
