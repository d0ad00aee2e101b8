/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-loadgen: a memcached load generator over lib/net (DPDK) or
 * kernel sockets. See docs/bench/suite.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "lg_control.h"
#include "lg_net.h"
#include "lg_options.h"
#include "lg_report.h"
#include "lg_sock.h"
#include "lg_verify.h"

struct sock_thread {
	pthread_t tid;
	struct lg_worker w;
	const struct lg_options *o;
	int rc;
};

static void *
sock_thread_main(void *arg)
{
	struct sock_thread *t = arg;

	t->rc = lg_sock_worker(&t->w, t->o);
	if (t->rc < 0) /* let the clock stop too */
		__atomic_store_n(&t->w.run->phase, LG_PHASE_STOP, __ATOMIC_RELEASE);
	return NULL;
}

static int
run_socket(struct lg_options *o, struct lg_stats *total, double *measure_s)
{
	unsigned n = o->threads;
	struct sock_thread *t = calloc(n, sizeof(*t));
	struct lg_worker **w = calloc(n, sizeof(*w));
	int rc;

	if (!t || !w) {
		fprintf(stderr, "loadgen: out of memory\n");
		return -1;
	}
	o->run.workers = n;
	for (unsigned i = 0; i < n; i++) {
		lg_worker_init(&t[i].w, &o->run, i, o->seed);
		t[i].o = o;
		w[i] = &t[i].w;
	}
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t[i].tid, NULL, sock_thread_main, &t[i]) != 0) {
			fprintf(stderr, "loadgen: cannot start thread %u\n", i);
			exit(1);
		}
	rc = lg_control_run(o, w, n, measure_s);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i].tid, NULL);
		if (t[i].rc < 0) {
			fprintf(stderr, "loadgen: worker %u: %s\n", i, t[i].w.last_bad);
			rc = -1;
		}
	}
	lg_control_collect(w, n, total);
	free(t);
	free(w);
	return rc;
}

int
main(int argc, char **argv)
{
	struct lg_options o;
	struct lg_stats total;
	struct lg_trace trace;
	struct lg_verify verify = { 0 };
	bool eal = false;
	double measure_s = 0;
	char err[256];
	int rc, consumed = 0;

	/* EAL options come first, ended by "--", and only with --stack net. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			eal = true;
	if (eal) {
		consumed = rte_eal_init(argc, argv);
		if (consumed < 0) {
			fprintf(stderr, "loadgen: EAL initialisation failed (see above)\n");
			return 1;
		}
	}
	argv[consumed] = argv[0];
	rc = lg_options_parse(&o, argc - consumed, argv + consumed, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "loadgen: %s\n", err);
		return rc < 0 ? 2 : 0;
	}
	if (o.stack == LG_STACK_NET && !eal) {
		fprintf(stderr, "loadgen: --stack net needs EAL options first, ended by --\n");
		return 2;
	}
	if (o.trace_path) {
		if (lg_trace_load(&trace, o.trace_path, err, sizeof(err)) < 0) {
			fprintf(stderr, "loadgen: %s\n", err);
			return 2;
		}
		o.run.wl.trace = &trace;
		o.run.preload = false;
		fprintf(stderr, "loadgen: trace %s: %zu requests, %zu keys, %zu skipped\n",
			o.trace_path, trace.nreqs, trace.nkeys, trace.skipped);
	}
	if (lg_workload_init(&o.run.wl, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: %s\n", err);
		return 2;
	}
	/* The epoch tells this run's versions from an earlier run's. */
	if (o.verify_all &&
	    lg_verify_init(&verify, o.trace_path ? trace.nkeys : o.run.wl.keys,
			   (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 8)) < 0) {
		fprintf(stderr, "loadgen: --verify all: out of memory\n");
		return 1;
	}
	if (o.verify_all)
		o.run.wl.verify = &verify;
	if (o.stack == LG_STACK_NET)
		rc = lg_net_run(&o, &total, &measure_s);
	else
		rc = run_socket(&o, &total, &measure_s);
	if (o.trace_path)
		lg_trace_free(&trace);
	lg_verify_free(&verify);
	if (rc < 0)
		return 1;
	lg_report_text(stdout, &o, &total, measure_s);
	if (total.conn_failed || total.bad)
		fprintf(stderr, "loadgen: connections failed or misbehaved; last reason: %s\n",
			total.why ? total.why : "?");
	/* Not a wrong answer (the exit status stays 0), but not a result. */
	if (lg_stats_generator_behind(&total))
		fprintf(stderr, "loadgen: run invalid: %llu of %llu sends generator-late "
			"(over %d%%): the generator fell behind its schedule\n",
			(unsigned long long)total.generator_late,
			(unsigned long long)total.sent, LG_GENERATOR_LATE_MAX_PERCENT);
	if (o.json_path && lg_report_json(o.json_path, &o, &total, measure_s) < 0) {
		fprintf(stderr, "loadgen: cannot write %s\n", o.json_path);
		return 1;
	}
	if (eal)
		rte_eal_cleanup();
	/* Wrong answers are failures: a run that saw one exits non-zero. */
	return total.corrupt || total.stale || total.bad ? 3 : 0;
}
