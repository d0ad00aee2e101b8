/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the running server shows of itself: `stats` and its sections
 * (server_stats.c, server_mrc.c), the live miss-ratio curve and hot keys
 * (server_mrc.c), DPDK telemetry (telemetry.c), the runtime events logged
 * from the counters (server_events.c), and Prometheus /metrics (metrics.c,
 * metrics_http.c).
 */
#ifndef SEGCACHED_OBSERVE_H
#define SEGCACHED_OBSERVE_H

#include <stdint.h>
#include <stdio.h>

#include "server/server.h"

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
/* GET /metrics on --metrics-port, on every host of --metrics-listen (metrics_http.c):
 * 0 (also without --metrics-port), or an exit status with the reason
 * logged. Stop before the stack. */
int metrics_http_start(struct server *srv);
void metrics_http_stop(struct server *srv);
/* Once a second on the control thread: ends the /metrics connections
 * open longer than their bound (metrics_http.c). */
void metrics_http_tick(struct server *srv);

#endif /* SEGCACHED_OBSERVE_H */
