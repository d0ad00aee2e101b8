/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The run's clock (lg_control.h): the phases from preload to stop on the
 * main thread, the preload's report, and the workers' results gathered.
 */
#include "lg_control.h"

#include <stdio.h>
#include <time.h>

#include "lg_report.h"

struct clock_state {
	struct lg_options *o;
	struct lg_worker *const *w;
	unsigned n;
	uint64_t t0, last_ns;
	struct lg_progress last;
};

static void
set_phase(struct lg_run *r, enum lg_phase p)
{
	__atomic_store_n(&r->phase, (int)p, __ATOMIC_RELEASE);
}

static const char *
phase_name(int p)
{
	static const char *const names[] = { "preload", "warmup", "measure",
					     "drain", "stop" };

	return names[p];
}

/* Sleeps 10 ms; prints the progress line when a second has passed. */
static void
tick(struct clock_state *cs)
{
	struct timespec ts = { 0, 10000000 };
	uint64_t now;

	nanosleep(&ts, NULL);
	now = lg_now_ns();
	if (now - cs->last_ns >= 1000000000ULL) {
		struct lg_progress p;

		lg_progress_read(cs->w, cs->n, &p);
		if (!cs->o->quiet)
			lg_report_progress(stderr, (double)(now - cs->t0) / 1e9,
					   phase_name(lg_phase_get(&cs->o->run)), &p,
					   &cs->last, (double)(now - cs->last_ns) / 1e9);
		cs->last = p;
		cs->last_ns = now;
	}
}

static bool
all_flag(struct lg_worker *const *w, unsigned n, bool preload)
{
	for (unsigned i = 0; i < n; i++)
		if (!__atomic_load_n(preload ? &w[i]->preloaded : &w[i]->trace_done,
				     __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* UDP preload sets sent again or given up on: a key never set would make
 * every measured get of it a miss, so the run stops there. */
static int
preload_report(const struct lg_options *o, struct lg_worker *const *w, unsigned n)
{
	uint64_t resent = 0, failed = 0;

	for (unsigned i = 0; i < n; i++) {
		resent += w[i]->pre_resent;
		failed += w[i]->pre_failed;
	}
	if (failed) {
		fprintf(stderr, "loadgen: %llu preload set(s) unanswered after %d sends "
			"each\n", (unsigned long long)failed, LG_PRELOAD_TRIES);
		return -1;
	}
	if (resent && !o->quiet)
		fprintf(stderr, "loadgen: preload: %llu set(s) sent again after "
			"a timeout\n", (unsigned long long)resent);
	return 0;
}

int
lg_control_run(struct lg_options *o, struct lg_worker *const *w, unsigned n,
	       double *measure_s)
{
	struct lg_run *r = &o->run;
	struct clock_state cs = { .o = o, .w = w, .n = n };
	uint64_t end, start;

	cs.t0 = cs.last_ns = lg_now_ns();
	/* Phase PRELOAD is where the run starts (workers connect meanwhile). */
	end = cs.t0 + (uint64_t)(o->preload_timeout_s * 1e9);
	while (!all_flag(w, n, true)) {
		if (lg_now_ns() > end) {
			set_phase(r, LG_PHASE_STOP);
			fprintf(stderr, "loadgen: preload not answered after %.0f s%s%s\n",
				o->preload_timeout_s, w[0]->last_bad ? ": " : "",
				w[0]->last_bad ? w[0]->last_bad : "");
			return -1;
		}
		tick(&cs);
	}
	if (preload_report(o, w, n) < 0) {
		set_phase(r, LG_PHASE_STOP);
		return -1;
	}
	if (!r->wl.trace) {
		set_phase(r, LG_PHASE_WARMUP);
		end = lg_now_ns() + (uint64_t)(o->warmup_s * 1e9);
		while (lg_now_ns() < end)
			tick(&cs);
	}
	start = lg_now_ns();
	__atomic_store_n(&r->trace_start_ns, start, __ATOMIC_RELEASE);
	set_phase(r, LG_PHASE_MEASURE);
	end = start + (uint64_t)(o->duration_s * 1e9);
	while (lg_now_ns() < end && !(r->wl.trace && all_flag(w, n, false)))
		tick(&cs);
	__atomic_store_n(&r->drain_ns, lg_now_ns(), __ATOMIC_RELEASE);
	*measure_s = (double)(r->drain_ns - start) / 1e9;
	set_phase(r, LG_PHASE_DRAIN);
	/* Answers to requests sent while measuring still count; give them up
	 * to 2 s (UDP: the timeout), then stop regardless. */
	end = lg_now_ns() + 2000000000ULL;
	while (lg_now_ns() < end) {
		bool idle = true;

		for (unsigned i = 0; i < n; i++)
			if (__atomic_load_n(&w[i]->outstanding, __ATOMIC_RELAXED))
				idle = false;
		if (idle)
			break;
		tick(&cs);
	}
	set_phase(r, LG_PHASE_STOP);
	return 0;
}

void
lg_control_collect(struct lg_worker *const *w, unsigned n, struct lg_stats *out)
{
	lg_stats_init(out);
	for (unsigned i = 0; i < n; i++) {
		lg_stats_merge(out, &w[i]->stats);
		if (w[i]->last_bad)
			out->why = w[i]->last_bad;
	}
}
