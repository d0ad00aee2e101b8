/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * `stats` and its subcommands. Field names, order and formats follow
 * memcached 1.6.18 for every field segcached can fill truthfully (monitoring
 * such as prometheus' memcached_exporter and telegraf read them); fields
 * about memcached's slab allocator, LRU crawler and logger are left out.
 * `stats segments` and `stats workers` are segcached's own. `stats reset`
 * stores a baseline of every resettable counter; later replies subtract it.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd_private.h"
#include "engine/engine_dump.h"

static uint64_t
ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
st(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint64_t
since(uint64_t now, const uint64_t *base)
{
	uint64_t b = ld(base);

	return now >= b ? now - b : 0;
}

static void
gather(struct cmd_conn *c, struct engine_stats *es, struct cmd_server_stats *ss)
{
	memset(es, 0, sizeof(*es));
	memset(ss, 0, sizeof(*ss));
	engine_stats(c->s->engine, es);
	if (c->s->server_stats)
		c->s->server_stats(c->s->server_stats_arg, ss);
}

struct stat_out {
	struct cmd_conn *c;
	bool ok;
};

static void
put_str(struct stat_out *so, const char *name, const char *v)
{
	if (so->ok && !proto_out_stat(so->c->out, name, v ? v : "NULL"))
		so->ok = false;
}

static void
put_u64(struct stat_out *so, const char *name, uint64_t v)
{
	if (so->ok && !proto_out_stat_u64(so->c->out, name, v))
		so->ok = false;
}

static void
put_bool(struct stat_out *so, const char *name, bool v, const char *yes,
	 const char *no)
{
	put_str(so, name, v ? yes : no);
}

/* A fixed-point value v / 10^digits, as memcached prints it: "4.37"
 * (a sampled mean in hundredths), "0.123456" (rusage seconds from
 * microseconds). */
static void
put_fixed(struct stat_out *so, const char *name, uint64_t v, unsigned digits)
{
	uint64_t scale = 1;
	char buf[48];

	for (unsigned i = 0; i < digits; i++)
		scale *= 10;
	snprintf(buf, sizeof(buf), "%llu.%0*llu", (unsigned long long)(v / scale), (int)digits,
		 (unsigned long long)(v % scale));
	put_str(so, name, buf);
}

static void
finish(struct stat_out *so)
{
	if (so->ok)
		so->ok = cmd_put(so->c, "END\r\n", 5);
	if (!so->ok)
		cmd_fail(so->c);
}

static unsigned
log2_u64(uint64_t v)
{
	unsigned n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

static void
stats_general(struct cmd_conn *c)
{
	struct cmd_runtime *rt = c->rt;
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;
	const uint64_t *e = es.counters;
	const uint64_t *b = rt->base_engine;

	gather(c, &es, &ss);
#define EC(name) since(e[ENGINE_C_##name], &b[ENGINE_C_##name])
	put_u64(&so, "pid", (uint64_t)ss.pid);
	put_u64(&so, "uptime", ss.uptime);
	put_u64(&so, "time", ss.time);
	put_str(&so, "version", c->s->version);
	put_u64(&so, "pointer_size", sizeof(void *) * 8);
	put_fixed(&so, "rusage_user", ss.rusage_user_us, 6);
	put_fixed(&so, "rusage_system", ss.rusage_system_us, 6);
	put_u64(&so, "max_connections", ss.max_connections);
	put_u64(&so, "curr_connections", ss.curr_connections);
	put_u64(&so, "total_connections", since(ss.total_connections, &rt->base_total_connections));
	put_u64(&so, "rejected_connections",
		since(ss.rejected_connections, &rt->base_rejected_connections));
	put_u64(&so, "connection_structures", ss.connection_structures);
	put_u64(&so, "reserved_fds", ss.reserved_fds);
	put_u64(&so, "cmd_get", EC(cmd_get));
	put_u64(&so, "cmd_set", EC(cmd_set));
	put_u64(&so, "cmd_flush", since(ld(&rt->cmd_flush), &rt->base_cmd_flush));
	put_u64(&so, "cmd_touch", EC(cmd_touch));
	put_u64(&so, "cmd_meta", since(ld(&rt->cmd_meta), &rt->base_cmd_meta));
	put_u64(&so, "get_hits", EC(get_hits));
	put_u64(&so, "get_misses", EC(get_misses));
	put_u64(&so, "get_expired", EC(get_expired));
	put_u64(&so, "get_flushed", EC(get_flushed));
	put_u64(&so, "delete_misses", EC(delete_misses));
	put_u64(&so, "delete_hits", EC(delete_hits));
	put_u64(&so, "incr_misses", EC(incr_misses));
	put_u64(&so, "incr_hits", EC(incr_hits));
	put_u64(&so, "decr_misses", EC(decr_misses));
	put_u64(&so, "decr_hits", EC(decr_hits));
	put_u64(&so, "cas_misses", EC(cas_misses));
	put_u64(&so, "cas_hits", EC(cas_hits));
	put_u64(&so, "cas_badval", EC(cas_badval));
	put_u64(&so, "touch_hits", EC(touch_hits));
	put_u64(&so, "touch_misses", EC(touch_misses));
	put_u64(&so, "store_too_large", EC(set_too_large));
	put_u64(&so, "store_no_memory", EC(set_no_memory));
	/* segcached: values read straight into their item (cmd_stream.c) */
	put_u64(&so, "store_streamed", EC(set_streamed));
	put_u64(&so, "store_stream_lost", EC(set_stream_lost));
	put_u64(&so, "auth_cmds", 0);
	put_u64(&so, "auth_errors", 0);
	/* as memcached: only where an idle timeout is set */
	if (ss.idle_timeout != 0)
		put_u64(&so, "idle_kicks", since(ss.idle_kicks, &rt->base_idle_kicks));
	put_u64(&so, "bytes_read", since(ss.bytes_read, &rt->base_bytes_read));
	put_u64(&so, "bytes_written", since(ss.bytes_written, &rt->base_bytes_written));
	put_u64(&so, "limit_maxbytes", es.limit_maxbytes);
	put_u64(&so, "accepting_conns", ss.accepting_conns);
	put_u64(&so, "listen_disabled_num",
		since(ss.listen_disabled_num, &rt->base_listen_disabled_num));
	put_u64(&so, "time_in_listen_disabled_us", ss.time_in_listen_disabled_us);
	put_u64(&so, "threads", ss.threads);
	put_u64(&so, "conn_yields", since(ss.conn_yields, &rt->base_conn_yields));
	put_u64(&so, "hash_power_level", log2_u64(es.hash_buckets));
	put_u64(&so, "hash_bytes", es.table_bytes);
	put_u64(&so, "hash_is_expanding", es.hash_is_expanding);
	put_u64(&so, "bytes", es.bytes);
	put_u64(&so, "curr_items", es.curr_items);
	put_u64(&so, "total_items", EC(total_items));
	put_u64(&so, "expired_unfetched", since(es.expired_unfetched, &rt->base_expired_unfetched));
	put_u64(&so, "evicted_unfetched", since(es.evicted_unfetched, &rt->base_evicted_unfetched));
	put_u64(&so, "evictions", since(es.evictions, &rt->base_evictions));
	put_u64(&so, "reclaimed", since(es.reclaimed, &rt->base_reclaimed));
	/* segcached's own, after memcached's fields */
	put_u64(&so, "admin_connections", ss.admin_connections);
	put_u64(&so, "conns_refused_per_source",
		since(ss.conns_refused_per_source, &rt->base_conns_refused_per_source));
	put_u64(&so, "conns_request_timeouts",
		since(ss.conns_request_timeouts, &rt->base_conns_request_timeouts));
	put_u64(&so, "conns_write_timeouts",
		since(ss.conns_write_timeouts, &rt->base_conns_write_timeouts));
	/* the connections' memory beside -m (--tcp-buffer-memory on posix) */
	put_u64(&so, "conn_buffer_in_bytes", ss.conn_buffer_in_bytes);
	put_u64(&so, "conn_buffer_out_bytes", ss.conn_buffer_out_bytes);
	put_u64(&so, "conn_buffer_in_refused",
		since(ss.conn_buffer_in_refused, &rt->base_conn_buffer_in_refused));
	put_u64(&so, "conns_slow_readers_closed",
		since(ss.conns_slow_readers_closed, &rt->base_conns_slow_readers_closed));
	put_fixed(&so, "hash_chain_mean", es.hash_chain_mean_x100, 2);
	put_u64(&so, "hash_chain_max", es.hash_chain_max);
	/* segcached's own: how this process started on its heap file */
	if (ss.restart_state != NULL) {
		put_str(&so, "restart_state", ss.restart_state);
		put_u64(&so, "restart_items", ss.restart_items);
		put_u64(&so, "restart_expired", ss.restart_expired);
		put_u64(&so, "restart_segments", ss.restart_segments);
		put_fixed(&so, "restart_seconds", ss.restart_us, 6);
	}
#undef EC
	finish(&so);
}

static void
stats_reset(struct cmd_conn *c)
{
	struct cmd_runtime *rt = c->rt;
	struct cmd_server_stats ss;
	struct engine_stats es;

	gather(c, &es, &ss);
	for (unsigned i = 0; i < ENGINE_C_MAX; i++)
		st(&rt->base_engine[i], es.counters[i]);
	st(&rt->base_evictions, es.evictions);
	st(&rt->base_reclaimed, es.reclaimed);
	st(&rt->base_expired, es.expired);
	st(&rt->base_evicted_unfetched, es.evicted_unfetched);
	st(&rt->base_expired_unfetched, es.expired_unfetched);
	st(&rt->base_total_connections, ss.total_connections);
	st(&rt->base_rejected_connections, ss.rejected_connections);
	st(&rt->base_bytes_read, ss.bytes_read);
	st(&rt->base_bytes_written, ss.bytes_written);
	st(&rt->base_listen_disabled_num, ss.listen_disabled_num);
	st(&rt->base_conn_yields, ss.conn_yields);
	st(&rt->base_idle_kicks, ss.idle_kicks);
	st(&rt->base_cmd_flush, ld(&rt->cmd_flush));
	st(&rt->base_cmd_meta, ld(&rt->cmd_meta));
	st(&rt->base_conns_refused_per_source, ss.conns_refused_per_source);
	st(&rt->base_conns_request_timeouts, ss.conns_request_timeouts);
	st(&rt->base_conns_write_timeouts, ss.conns_write_timeouts);
	st(&rt->base_conn_buffer_in_refused, ss.conn_buffer_in_refused);
	st(&rt->base_conns_slow_readers_closed, ss.conns_slow_readers_closed);
	cmd_reply(c, false, "RESET");
}

static void
stats_settings(struct cmd_conn *c)
{
	const struct cmd_settings *s = c->s;
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;

	gather(c, &es, &ss);
	put_u64(&so, "maxbytes", es.limit_maxbytes);
	put_u64(&so, "maxconns", ss.maxconns);
	put_u64(&so, "tcpport", ss.tcpport);
	put_u64(&so, "udpport", ss.udpport);
	put_str(&so, "inter", ss.inter);
	put_u64(&so, "verbosity", (uint64_t)cmd_verbosity(s));
	put_bool(&so, "evictions", !ss.eviction || strcmp(ss.eviction, "none") != 0, "on", "off");
	put_str(&so, "domain_socket", ss.domain_socket);
	{
		char mask[8];

		/* -a, in octal as memcached prints it (700 by default) */
		snprintf(mask, sizeof(mask), "%o", (unsigned)ss.umask);
		put_str(&so, "umask", mask);
	}
	put_bool(&so, "shutdown_command", s->shutdown_enabled, "yes", "no");
	put_u64(&so, "num_threads", ss.threads);
	put_u64(&so, "num_threads_per_udp", ss.threads);
	put_str(&so, "detail_enabled", "no");
	/* -R; 0: no cap (memcached's is always set, 20 by default) */
	put_u64(&so, "reqs_per_event", s->reqs_per_event);
	put_bool(&so, "cas_enabled", !s->cas_disabled, "yes", "no");
	put_u64(&so, "tcp_backlog", ss.tcp_backlog);
	put_str(&so, "binding_protocol", "ascii");
	put_str(&so, "auth_enabled_sasl", "no");
	put_str(&so, "auth_enabled_ascii", "no");
	put_u64(&so, "item_size_max", s->item_max);
	put_u64(&so, "hashpower_init",
		es.hash_power_init ? es.hash_power_init : log2_u64(es.hash_buckets));
	/* segcached's: how far the table may grow (--hash-grow); 1 = fixed */
	put_u64(&so, "hash_grow_max", es.hash_grow_max ? es.hash_grow_max : 1);
	put_bool(&so, "flush_enabled", !s->flush_disabled, "yes", "no");
	put_bool(&so, "dump_enabled", engine_can_dump(s->engine) && !s->dump_disabled, "yes",
		 "no");
	put_u64(&so, "idle_timeout", ss.idle_timeout);
	/* segcached's own */
	put_str(&so, "engine", s->engine->ops->name);
	put_str(&so, "stack", ss.stack);
	put_str(&so, "eviction_policy", ss.eviction);
	put_u64(&so, "segment_size", ss.segment_size ? ss.segment_size : es.seg_size);
	put_u64(&so, "max_conns_per_source", ss.max_conns_per_source);
	put_u64(&so, "request_timeout", ss.request_timeout);
	put_u64(&so, "admin_port", ss.admin_port);
	put_u64(&so, "metrics_port", ss.metrics_port);
	put_u64(&so, "tcp_buffer_memory", ss.tcp_buffer_memory);
	/* sizing: -m's parts, and the stack's memory beside them */
	put_str(&so, "heap", ss.heap);
	put_u64(&so, "heap_bytes", es.heap_bytes);
	put_u64(&so, "hash_table_bytes", es.table_bytes);
	put_u64(&so, "segment_headers_bytes", es.meta_bytes);
	put_u64(&so, "stack_memory_max", ss.stack_memory_max);
	put_u64(&so, "conn_buffer_uncharged", ss.conn_buffer_uncharged);
	put_u64(&so, "worker_buffer_bytes", ss.worker_buffer_bytes);
	put_u64(&so, "conn_struct_bytes", ss.conn_struct_bytes);
	finish(&so);
}

static void
stats_segments(struct cmd_conn *c)
{
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;
	const uint64_t *e = es.counters;

	gather(c, &es, &ss);
	put_u64(&so, "seg_size", es.seg_size);
	put_u64(&so, "seg_total", es.seg_total);
	put_u64(&so, "seg_free", es.seg_free);
	put_u64(&so, "seg_open", es.seg_open);
	put_u64(&so, "seg_open_shared", es.seg_open_shared);
	put_u64(&so, "seg_open_bytes", es.seg_open_bytes);
	put_u64(&so, "seg_sealed", es.seg_sealed);
	put_u64(&so, "seg_hash", es.seg_hash);
	put_u64(&so, "seg_parked", es.seg_parked);
	put_u64(&so, "seg_expired", es.seg_expired);
	put_u64(&so, "seg_evicted", es.seg_evicted);
	put_u64(&so, "seg_merged", es.seg_merged);
	put_u64(&so, "seg_merge_reused", es.seg_merge_reused);
	put_u64(&so, "hash_buckets", es.hash_buckets);
	put_u64(&so, "hash_overflow", es.hash_overflow);
	put_u64(&so, "hash_overflow_free", es.hash_overflow_free);
	put_u64(&so, "heap_bytes", es.heap_bytes);
	put_u64(&so, "table_bytes", es.table_bytes);
	put_u64(&so, "meta_bytes", es.meta_bytes);
	put_u64(&so, "items_expired", since(es.expired, &c->rt->base_expired));
	put_u64(&so, "flushes", es.flushes);
	put_u64(&so, "locks_other", es.locks_other);
	put_u64(&so, "lock_bucket", e[ENGINE_C_lock_bucket]);
	put_u64(&so, "lock_segment", e[ENGINE_C_lock_segment]);
	put_u64(&so, "evict_waits", e[ENGINE_C_evict_waits]);
	put_u64(&so, "read_retries", e[ENGINE_C_read_retries]);
	put_u64(&so, "rmw_segment", e[ENGINE_C_rmw_segment]);
	put_u64(&so, "rmw_open_shared", e[ENGINE_C_rmw_open_shared]);
	put_u64(&so, "rmw_bucket", e[ENGINE_C_rmw_bucket]);
	put_u64(&so, "rmw_global", e[ENGINE_C_rmw_global]);
	put_u64(&so, "evict_passes", e[ENGINE_C_evict_passes]);
	put_u64(&so, "evict_ns", e[ENGINE_C_evict_ns]);
	put_u64(&so, "evict_wait_ns", e[ENGINE_C_evict_wait_ns]);
	put_u64(&so, "evict_ns_other", es.evict_ns_other);
	put_u64(&so, "expired_unlinked", e[ENGINE_C_expired_unlinked]);
	finish(&so);
}

static void
stats_workers(struct cmd_conn *c)
{
	static const char *const names[ENGINE_C_MAX] = {
#define NAME(n, desc) #n,
		ENGINE_WORKER_COUNTERS(NAME)
#undef NAME
	};
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;

	gather(c, &es, &ss);
	for (unsigned w = 0; ss.workers && w < ss.nworkers; w++) {
		const struct engine_worker *ew = ss.workers[w];

		if (ss.worker_conns) {
			uint64_t curr, total;
			char name[64];

			ss.worker_conns(ss.worker_conns_arg, w, &curr, &total);
			snprintf(name, sizeof(name), "worker:%u:curr_connections", w);
			put_u64(&so, name, curr);
			snprintf(name, sizeof(name), "worker:%u:total_connections", w);
			put_u64(&so, name, total);
		}
		if (!ew)
			continue;
		for (unsigned i = 0; i < ENGINE_C_MAX; i++) {
			char name[64];

			snprintf(name, sizeof(name), "worker:%u:%s", w, names[i]);
			/* another thread's counter: a relaxed read of a word */
			put_u64(&so, name, __atomic_load_n(&ew->counters[i], __ATOMIC_RELAXED));
		}
	}
	finish(&so);
}

/* `stats items` and `stats slabs`, one group of lines per class the
 * engine has items in (lib/seg: the TTL ranges of key dumps), with the
 * fields memcached-tool's display reads that segcached can fill: items and
 * the age of the oldest segment; segments as pages, the mean item size as
 * the chunk size (docs/protocol.md). */
static void
stats_items(struct cmd_conn *c)
{
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;
	int64_t now = cmd_now(c);

	gather(c, &es, &ss);
	for (unsigned k = 1; k < ENGINE_CLASSES; k++) {
		char name[48];

		if (es.classes[k].segments == 0)
			continue;
		snprintf(name, sizeof(name), "items:%u:number", k);
		put_u64(&so, name, es.classes[k].items);
		snprintf(name, sizeof(name), "items:%u:age", k);
		put_u64(&so, name,
			now > es.classes[k].oldest ? (uint64_t)(now - es.classes[k].oldest) : 0);
		snprintf(name, sizeof(name), "items:%u:mem_requested", k);
		put_u64(&so, name, es.classes[k].bytes);
	}
	finish(&so);
}

static void
stats_slabs(struct cmd_conn *c)
{
	struct stat_out so = { c, true };
	struct cmd_server_stats ss;
	struct engine_stats es;
	uint64_t active = 0;

	gather(c, &es, &ss);
	for (unsigned k = 1; k < ENGINE_CLASSES; k++) {
		uint64_t items = es.classes[k].items;
		char name[48];

		if (es.classes[k].segments == 0)
			continue;
		active++;
		snprintf(name, sizeof(name), "%u:chunk_size", k);
		put_u64(&so, name, items ? es.classes[k].bytes / items : 0);
		snprintf(name, sizeof(name), "%u:total_pages", k);
		put_u64(&so, name, es.classes[k].segments);
		snprintf(name, sizeof(name), "%u:used_chunks", k);
		put_u64(&so, name, items);
	}
	put_u64(&so, "active_slabs", active);
	put_u64(&so, "total_malloced", es.heap_bytes);
	finish(&so);
}

static bool
arg_is(const struct proto_req *req, const char *word)
{
	size_t n = strlen(word);

	return req->arg_len == n && memcmp(req->arg, word, n) == 0;
}

void
cmd_exec_stats(struct cmd_conn *c, const struct proto_req *req)
{
	struct stat_out so = { c, true };

	if (!req->arg) {
		stats_general(c);
	} else if (req->sub == PROTO_SUB_STATS_CACHEDUMP) {
		/* the arguments were checked as memcached does (the parser) */
		cmd_dump_cachedump(c, req);
	} else if (arg_is(req, "reset")) {
		stats_reset(c);
	} else if (arg_is(req, "settings")) {
		stats_settings(c);
	} else if (arg_is(req, "items")) {
		stats_items(c);
	} else if (arg_is(req, "slabs")) {
		stats_slabs(c);
	} else if (arg_is(req, "sizes")) {
		put_str(&so, "sizes_status", "disabled");
		finish(&so);
	} else if (arg_is(req, "conns")) {
		if (c->s->stats_conns)
			c->s->stats_conns(c->s->server_stats_arg, c->out);
		finish(&so);
	} else if (arg_is(req, "mrc") || arg_is(req, "hotkeys")) {
		const bool mrc = arg_is(req, "mrc");
		void (*fn)(void *, struct proto_out *) = mrc ? c->s->stats_mrc
							      : c->s->stats_hotkeys;

		if (fn)
			fn(c->s->server_stats_arg, c->out);
		else
			put_str(&so, mrc ? "mrc_status" : "hotkeys_status", "disabled");
		finish(&so);
	} else if (arg_is(req, "segments")) {
		stats_segments(c);
	} else if (arg_is(req, "workers")) {
		stats_workers(c);
	} else {
		cmd_reply(c, false, "ERROR");
	}
}
