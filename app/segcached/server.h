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
#include <stdio.h>
#include <time.h>

#include "cmd/cmd.h"
#include "engine_setup.h"
#include "options.h"
#include "drivers/net/stack.h"
#include "mrc/mrc.h"

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
	struct metrics_http *metrics; /* --metrics-port's daemons; NULL: none */
	struct mrc *mrc;             /* the miss-ratio curve; NULL: --no-mrc or none */
};

/* cmd_settings.server_stats: fills the server-level fields of `stats` and
 * `stats settings` (server_stats.c). */
void server_stats_fill(void *arg, struct cmd_server_stats *out);
/* cmd_settings.stats_conns: one block of lines per socket and connection. */
void server_stats_conns(void *arg, struct proto_out *out);

/* The live miss-ratio curve and hot keys (server_mrc.c): started after
 * the engine (unless --no-mrc), stopped after the stack. */
void server_mrc_start(struct server *srv);
void server_mrc_stop(struct server *srv);
/* The server's get miss ratio since start (cmd_get and get_misses, not
 * reset by `stats reset`: the curve is since start too). */
double server_mrc_measured(struct server *srv);
/* Gives the curve the server's bytes written by sets (the control
 * thread, once a second): FIFO and random caches scale by its share. */
void server_mrc_note_writes(struct server *srv);
/* The curve, corrected for the sample's share of the server's gets and
 * misses (what `stats mrc` and telemetry report). */
unsigned server_mrc_curve(struct server *srv, struct mrc_point *pts, struct mrc_info *info);
/* cmd_settings.stats_mrc and stats_hotkeys. */
void server_stats_mrc(void *arg, struct proto_out *out);
void server_stats_hotkeys(void *arg, struct proto_out *out);

/* The control thread (control.c). control_block_signals() runs before any
 * thread exists, so every thread inherits the mask and only
 * control_run()'s sigtimedwait() ever takes SIGINT, SIGTERM and SIGUSR1. */
void control_block_signals(void);
/* Runs the expiry sweep once a second until a stop signal (logged);
 * returns the signal. */
int control_run(struct server *srv);
/* Log levels of segcached's log types for -v / `verbosity` N: NOTICE,
 * INFO (1), DEBUG (2 and up). control_run() follows `verbosity` commands. */
void control_set_verbosity(int verbosity);
/* cmd's `shutdown` (any thread): asks control_run() to return. */
void control_request_shutdown(void *arg);

/* DPDK telemetry /segcached/stats (telemetry.c). The command stays
 * registered for the process; it answers with an error while no server is
 * attached. */
int server_telemetry_register(void);
void server_telemetry_attach(struct server *srv);
void server_telemetry_detach(void);

/* Once a second on the control thread: logs the runtime events found in
 * the counters, rate-limited (server_events.c). */
void server_events_poll(const struct server *srv);

/* Prometheus' text format of the server's figures: memcached's `stats`
 * under memcached_exporter's names, the engine's and the stack's
 * counters as segcached_* (metrics.c). Any thread while the server runs. */
void metrics_write(struct server *srv, FILE *f);
/* GET /metrics on --metrics-port, on every host of -l (metrics_http.c):
 * 0 (also without --metrics-port), or an exit status with the reason
 * logged. Stop before the stack. */
int metrics_http_start(struct server *srv);
void metrics_http_stop(struct server *srv);

#endif /* SEGCACHED_SERVER_H */
