/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The server's figures in Prometheus' text exposition format (version
 * 0.0.4), for GET /metrics (metrics_http.c). What `stats` prints appears
 * under the names prometheus' memcached_exporter gives it
 * (memcached_current_items, memcached_commands_total{command,status}, ...),
 * so dashboards made for memcached work unchanged; the engine's and the
 * network stack's own counters follow with a segcached_ prefix. The figures
 * are read the way `stats` and the telemetry read them (server_stats_fill,
 * engine_stats, the stack's counters op), as totals since start: `stats
 * reset` does not move them, as a Prometheus counter must never go back.
 */
#include <stdio.h>
#include <string.h>

#include "observe.h"
#include "server/server.h"
#include "util/util_heap.h"

/* HELP text and label values: backslash and newline escaped (and '"' in
 * a label value), as the format asks. */
static void
put_escaped(FILE *f, const char *s, bool quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (quote && *s == '"')
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

static void
family(FILE *f, const char *prefix, const char *name, const char *suffix, bool counter,
       const char *help)
{
	fprintf(f, "# HELP %s%s%s ", prefix, name, suffix);
	put_escaped(f, help, false);
	fprintf(f, "\n# TYPE %s%s%s %s\n", prefix, name, suffix, counter ? "counter" : "gauge");
}

/* A family of one sample without labels. */
static void
one(FILE *f, const char *name, bool counter, const char *help, uint64_t v)
{
	family(f, "", name, "", counter, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void
command(FILE *f, const char *cmd, const char *status, uint64_t v)
{
	fprintf(f, "memcached_commands_total{command=\"%s\",status=\"%s\"} %llu\n", cmd, status,
		(unsigned long long)v);
}

/* memcached's `stats`, named as memcached_exporter names them. */
static void
write_memcached(FILE *f, const struct server *srv, const struct cmd_server_stats *ss,
		const struct engine_stats *es)
{
	const uint64_t *e = es->counters;
	uint64_t cas = e[ENGINE_C_cas_hits] + e[ENGINE_C_cas_misses] + e[ENGINE_C_cas_badval];

	one(f, "memcached_up", false, "Could the memcached server be reached.", 1);
	one(f, "memcached_uptime_seconds", false, "Number of seconds since the server started.",
	    ss->uptime);
	one(f, "memcached_time_seconds", false, "current UNIX time according to the server.",
	    ss->time);
	family(f, "", "memcached_version", "", false, "The version of this memcached server.");
	fputs("memcached_version{version=\"", f);
	put_escaped(f, srv->cmd.version, true);
	fputs("\"} 1\n", f);
	family(f, "", "memcached_commands_total", "", true,
	       "Total number of all requests broken down by command (get, set, etc.) and status.");
	command(f, "get", "hit", e[ENGINE_C_get_hits]);
	command(f, "get", "miss", e[ENGINE_C_get_misses]);
	command(f, "delete", "hit", e[ENGINE_C_delete_hits]);
	command(f, "delete", "miss", e[ENGINE_C_delete_misses]);
	command(f, "incr", "hit", e[ENGINE_C_incr_hits]);
	command(f, "incr", "miss", e[ENGINE_C_incr_misses]);
	command(f, "decr", "hit", e[ENGINE_C_decr_hits]);
	command(f, "decr", "miss", e[ENGINE_C_decr_misses]);
	command(f, "cas", "hit", e[ENGINE_C_cas_hits]);
	command(f, "cas", "miss", e[ENGINE_C_cas_misses]);
	command(f, "cas", "badval", e[ENGINE_C_cas_badval]);
	command(f, "touch", "hit", e[ENGINE_C_touch_hits]);
	command(f, "touch", "miss", e[ENGINE_C_touch_misses]);
	command(f, "flush", "hit", __atomic_load_n(&srv->cmd.rt.cmd_flush, __ATOMIC_RELAXED));
	/* as the exporter: cmd_set counts cas too */
	command(f, "set", "hit", e[ENGINE_C_cmd_set] >= cas ? e[ENGINE_C_cmd_set] - cas : 0);
	family(f, "", "memcached_process_user_cpu_seconds_total", "", true,
	       "Accumulated user time for this process.");
	fprintf(f, "memcached_process_user_cpu_seconds_total %.6f\n",
		(double)ss->rusage_user_us / 1e6);
	family(f, "", "memcached_process_system_cpu_seconds_total", "", true,
	       "Accumulated system time for this process.");
	fprintf(f, "memcached_process_system_cpu_seconds_total %.6f\n",
		(double)ss->rusage_system_us / 1e6);
	one(f, "memcached_current_bytes", false, "Current number of bytes used to store items.",
	    es->bytes);
	one(f, "memcached_limit_bytes", false,
	    "Number of bytes this server is allowed to use for storage.", es->limit_maxbytes);
	one(f, "memcached_malloced_bytes", false,
	    "Number of bytes of memory allocated to the cache's heap (segments).", es->heap_bytes);
	one(f, "memcached_current_items", false,
	    "Current number of items stored by this instance.", es->curr_items);
	one(f, "memcached_items_total", true,
	    "Total number of items stored during the life of this instance.",
	    e[ENGINE_C_total_items]);
	one(f, "memcached_items_evicted_total", true,
	    "Total number of valid items removed from cache to free memory for new items.",
	    es->evictions);
	one(f, "memcached_items_reclaimed_total", true,
	    "Total number of times an entry was stored using memory from an expired entry.",
	    es->reclaimed);
	one(f, "memcached_items_evicted_unfetched_total", true,
	    "Total number of items evicted and never fetched.", es->evicted_unfetched);
	one(f, "memcached_read_bytes_total", true,
	    "Total number of bytes read by this server from network.", ss->bytes_read);
	one(f, "memcached_written_bytes_total", true,
	    "Total number of bytes sent by this server to network.", ss->bytes_written);
	one(f, "memcached_current_connections", false, "Current number of open connections.",
	    ss->curr_connections);
	one(f, "memcached_max_connections", false,
	    "Maximum number of clients allowed (-c).", ss->max_connections);
	one(f, "memcached_connections_total", true,
	    "Total number of connections opened since the server started running.",
	    ss->total_connections);
	one(f, "memcached_connections_rejected_total", true,
	    "Total number of connections rejected due to the connection limit (-c).",
	    ss->rejected_connections);
	one(f, "memcached_connections_listener_disabled_total", true,
	    "Number of times that the server has hit its connections limit and disabled its "
	    "listener.", ss->listen_disabled_num);
	one(f, "memcached_connections_yielded_total", true,
	    "Total number of connections yielded (segcached: a connection's requests waited "
	    "for its output to drain).", ss->conn_yields);
	one(f, "memcached_store_too_large_total", true,
	    "Number of rejected storage requests caused by attempting to write a value larger "
	    "than the item size limit (-I).", e[ENGINE_C_set_too_large]);
	one(f, "memcached_store_no_memory_total", true,
	    "Number of rejected storage requests caused by exhaustion of the memory limit.",
	    e[ENGINE_C_set_no_memory]);
}

/* The engine's and the server's own, beside memcached's. */
static void
write_engine(FILE *f, const struct cmd_server_stats *ss, const struct engine_stats *es)
{
#define ENGINE_COUNTER(name, desc)                                                   \
	family(f, "segcached_engine_", #name, "_total", true, desc);                 \
	fprintf(f, "segcached_engine_" #name "_total %llu\n",                        \
		(unsigned long long)es->counters[ENGINE_C_##name]);
	ENGINE_WORKER_COUNTERS(ENGINE_COUNTER)
#undef ENGINE_COUNTER
	one(f, "segcached_items_expired_total", true,
	    "expired items removed by the expiry sweep or eviction", es->expired);
	one(f, "segcached_flushes_total", true, "flush_all executions", es->flushes);
	one(f, "segcached_segments", false, "segments of the heap", es->seg_total);
	one(f, "segcached_segments_free", false, "segments free for writing", es->seg_free);
	one(f, "segcached_segments_evicted_total", true, "segments freed by eviction",
	    es->seg_evicted);
	one(f, "segcached_segments_expired_total", true, "segments freed by expiration",
	    es->seg_expired);
	one(f, "segcached_hash_overflow_buckets", false, "hash overflow buckets in use",
	    es->hash_overflow);
	one(f, "segcached_admin_connections", false, "connections open now on --admin-port",
	    ss->admin_connections);
	one(f, "segcached_malloc_bytes_in_use", false,
	    "the C heap in use: what connections cost outside -m", util_heap_in_use());
	if (ss->restart_state != NULL) {
		family(f, "", "segcached_restart_state", "", false,
		       "how this process started on its heap file (cold, warm, refused:CODE)");
		fputs("segcached_restart_state{state=\"", f);
		put_escaped(f, ss->restart_state, true);
		fputs("\"} 1\n", f);
		one(f, "segcached_restart_items", false, "items a warm start recovered",
		    ss->restart_items);
	}
}

static void
write_stack_counter(void *arg, const struct stack_counter *c)
{
	FILE *f = arg;

	family(f, "segcached_", c->name, c->gauge ? "" : "_total", !c->gauge, c->help);
	fprintf(f, "segcached_%s%s %llu\n", c->name, c->gauge ? "" : "_total",
		(unsigned long long)c->value);
}

void
metrics_write(struct server *srv, FILE *f)
{
	struct cmd_server_stats ss;
	struct engine_stats es;

	memset(&ss, 0, sizeof(ss));
	server_stats_fill(srv, &ss);
	engine_stats(srv->es.engine, &es);
	write_memcached(f, srv, &ss, &es);
	write_engine(f, &ss, &es);
	if (srv->stack != NULL)
		stack_counters(srv->stack, write_stack_counter, f);
}
