/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * DPDK telemetry of the server (dpdk-telemetry.py, or any client of the
 * telemetry socket):
 *
 *   /segcached/stats     server and engine figures (what `stats` shows), and
 *                        the C heap in use (malloc_bytes_in_use)
 *   /segcached/mrc       the live miss-ratio curve and hot keys (what
 *                        `stats mrc` and `stats hotkeys` show)
 *
 * The network stack registers its own commands (the native stack's
 * /segcached/net). The callback runs on the telemetry thread and only reads
 * counters; a mutex keeps it away from a server being torn down.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "observe.h"
#include "server/server.h"
#include "util/util_heap.h"

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct server *srv_tel; /* NULL while no server runs */

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct cmd_server_stats ss;
	struct engine_stats es;
	int rc = -1;

	(void)cmd;
	(void)params;
	pthread_mutex_lock(&tel_lock);
	if (srv_tel == NULL)
		goto out;
	memset(&ss, 0, sizeof(ss));
	server_stats_fill(srv_tel, &ss);
	engine_stats(srv_tel->es.engine, &es);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "pid", (uint64_t)ss.pid);
	rte_tel_data_add_dict_u64(d, "uptime", ss.uptime);
	rte_tel_data_add_dict_string(d, "stack", ss.stack ? ss.stack : "");
	rte_tel_data_add_dict_string(d, "engine", srv_tel->es.engine->ops->name);
	rte_tel_data_add_dict_u64(d, "threads", ss.threads);
	rte_tel_data_add_dict_u64(d, "max_connections", ss.max_connections);
	rte_tel_data_add_dict_u64(d, "curr_connections", ss.curr_connections);
	rte_tel_data_add_dict_u64(d, "total_connections", ss.total_connections);
	rte_tel_data_add_dict_u64(d, "rejected_connections", ss.rejected_connections);
	rte_tel_data_add_dict_u64(d, "admin_connections", ss.admin_connections);
	rte_tel_data_add_dict_u64(d, "conns_refused_per_source", ss.conns_refused_per_source);
	rte_tel_data_add_dict_u64(d, "conns_request_timeouts", ss.conns_request_timeouts);
	rte_tel_data_add_dict_u64(d, "conns_write_timeouts", ss.conns_write_timeouts);
	rte_tel_data_add_dict_u64(d, "bytes_read", ss.bytes_read);
	rte_tel_data_add_dict_u64(d, "bytes_written", ss.bytes_written);
	/* what connections cost outside -m, on the posix stack as well
	 * (the native stack's /segcached/net has it too) */
	rte_tel_data_add_dict_u64(d, "malloc_bytes_in_use", util_heap_in_use());
	rte_tel_data_add_dict_u64(d, "curr_items", es.curr_items);
	rte_tel_data_add_dict_u64(d, "bytes", es.bytes);
	rte_tel_data_add_dict_u64(d, "limit_maxbytes", es.limit_maxbytes);
	rte_tel_data_add_dict_u64(d, "evictions", es.evictions);
	rte_tel_data_add_dict_u64(d, "expired", es.expired);
#define TEL_ENGINE_COUNTER(name, desc) \
	rte_tel_data_add_dict_u64(d, #name, es.counters[ENGINE_C_##name]);
	ENGINE_WORKER_COUNTERS(TEL_ENGINE_COUNTER)
#undef TEL_ENGINE_COUNTER
	if (ss.restart_state != NULL) {
		rte_tel_data_add_dict_string(d, "restart_state", ss.restart_state);
		rte_tel_data_add_dict_u64(d, "restart_items", ss.restart_items);
		rte_tel_data_add_dict_u64(d, "restart_expired", ss.restart_expired);
		rte_tel_data_add_dict_u64(d, "restart_segments", ss.restart_segments);
		rte_tel_data_add_dict_u64(d, "restart_us", ss.restart_us);
	}
	rc = 0;
out:
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

/* Telemetry has no floating point: ratios as parts per million, and the
 * curve as arrays side by side (containers do not nest). */
static struct rte_tel_data *
tel_u64_array(const uint64_t *v, unsigned n)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a) {
		rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
		for (unsigned i = 0; i < n; i++)
			rte_tel_data_add_array_u64(a, v[i]);
	}
	return a;
}

static int
tel_mrc(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct mrc_point pts[MRC_SIZES];
	struct mrc_hotkey hot[MRC_HOTKEYS];
	uint64_t bytes[MRC_SIZES], ppm[MRC_SIZES], gets[MRC_SIZES];
	struct mrc_info info;
	struct rte_tel_data *a;
	unsigned n, nhot;
	int rc = -1;

	(void)cmd;
	(void)params;
	pthread_mutex_lock(&tel_lock);
	if (srv_tel == NULL || srv_tel->mrc == NULL)
		goto out;
	n = server_mrc_curve(srv_tel, pts, &info);
	nhot = mrc_hotkeys(srv_tel->mrc, hot, MRC_HOTKEYS, engine_clock_default(NULL));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "sample_rate_ppm", (uint64_t)(info.rate * 1e6 + 0.5));
	rte_tel_data_add_dict_u64(d, "sample_keys", info.keys);
	rte_tel_data_add_dict_u64(d, "sample_max_keys", info.max_keys);
	rte_tel_data_add_dict_u64(d, "sample_requests", info.requests);
	rte_tel_data_add_dict_u64(d, "memory", info.memory);
	rte_tel_data_add_dict_u64(d, "current_bytes", srv_tel->opt.memory);
	rte_tel_data_add_dict_u64(d, "measured_miss_ratio_ppm",
				  (uint64_t)(server_mrc_measured(srv_tel) * 1e6 + 0.5));
	for (unsigned i = 0; i < n; i++) {
		bytes[i] = pts[i].bytes;
		ppm[i] = (uint64_t)(pts[i].miss_ratio * 1e6 + 0.5);
		gets[i] = pts[i].gets;
	}
	if ((a = tel_u64_array(bytes, n)) != NULL)
		rte_tel_data_add_dict_container(d, "bytes", a, 0);
	if ((a = tel_u64_array(ppm, n)) != NULL)
		rte_tel_data_add_dict_container(d, "miss_ratio_ppm", a, 0);
	if ((a = tel_u64_array(gets, n)) != NULL)
		rte_tel_data_add_dict_container(d, "sample_gets", a, 0);
	a = rte_tel_data_alloc();
	if (a) {
		/* "key rate_per_s size requests", as `stats hotkeys` */
		rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
		for (unsigned i = 0; i < nhot; i++) {
			char line[RTE_TEL_MAX_STRING_LEN];

			for (char *p = hot[i].key; *p; p++)
				if (*p <= ' ' || *p >= 127 || *p == '"' || *p == '\\')
					*p = '?';
			snprintf(line, sizeof(line), "%.48s %.3f %u %llu", hot[i].key, hot[i].rate,
				 hot[i].size, (unsigned long long)hot[i].requests);
			rte_tel_data_add_array_string(a, line);
		}
		rte_tel_data_add_dict_container(d, "hotkeys", a, 0);
	}
	rc = 0;
out:
	pthread_mutex_unlock(&tel_lock);
	return rc;
}

int
server_telemetry_register(void)
{
	return rte_telemetry_register_cmd("/segcached/stats", tel_stats,
					  "Server and engine figures, as 'stats'. "
					  "Takes no parameters") |
	       rte_telemetry_register_cmd("/segcached/mrc", tel_mrc,
					  "Live miss-ratio curve and hot keys, as 'stats mrc' "
					  "and 'stats hotkeys'. Takes no parameters");
}

void
server_telemetry_attach(struct server *srv)
{
	pthread_mutex_lock(&tel_lock);
	srv_tel = srv;
	pthread_mutex_unlock(&tel_lock);
}

void
server_telemetry_detach(void)
{
	pthread_mutex_lock(&tel_lock);
	srv_tel = NULL;
	pthread_mutex_unlock(&tel_lock);
}
