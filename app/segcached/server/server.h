/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The running server: options, engine, request executor settings and the
 * network stack, tied together by main.c.
 */
#ifndef SEGCACHED_SERVER_H
#define SEGCACHED_SERVER_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "cmd/cmd.h"
#include "drivers/net/stack.h"
#include "engine_setup.h"
#include "mrc/mrc.h"
#include "options/options.h"

struct server {
	struct options opt;
	struct engine_setup es;
	struct cmd_settings cmd;
	struct stack *stack;         /* the network stack --stack chose */
	pthread_t control_thread;    /* main(): signals and the expiry sweep */
	struct timespec started_mono; /* for uptime */
	uint64_t segment_size;       /* the engine's, for stats settings */
	/* Where the posix stack's threads run: every CPU the process was
	 * started with, or the EAL lcores when -l/--lcores/-c chose them (the
	 * EAL pins this thread to the main lcore, so threads it starts would
	 * all inherit that one CPU). */
	cpu_set_t startup_cpus;
	bool lcores_pinned;
	/* The DPDK EAL runs: the native stack, the baseline engine, a
	 * hugepage heap, telemetry or any EAL option asked for it. The posix
	 * stack on the seg engine runs without it otherwise (main.c). */
	bool eal_running;
	struct metrics_http *metrics; /* --metrics-port's daemons; NULL: none */
	struct mrc *mrc;             /* the miss-ratio curve; NULL: --no-mrc or none */
};

#endif /* SEGCACHED_SERVER_H */
