/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The server's part of `stats` and `stats settings`: process, connection
 * and traffic figures that lib/cmd prints with memcached's names.
 */
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "observe.h"
#include "server/server.h"

static uint64_t
timeval_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* Where the segments are, in --heap's words (one word: a stats value);
 * "eal" for the baseline engine, which allocates its items there. */
static const char *
heap_word(const struct engine_setup *es)
{
	if (es->heap.addr == NULL)
		return "eal";
	switch (es->heap.kind) {
	case MEM_REGION_ANON: return "anon";
	case MEM_REGION_HUGEPAGE: return "hugepage";
	case MEM_REGION_FILE: return "file";
	}
	return "unknown";
}

void
server_stats_fill(void *arg, struct cmd_server_stats *out)
{
	const struct server *srv = arg;
	const struct options *o = &srv->opt;
	struct timespec now;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &now);
	out->pid = (long)getpid();
	out->uptime = (uint64_t)(now.tv_sec - srv->started_mono.tv_sec);
	/* The engine's clock: a monotonic clock anchored to the wall clock
	 * at start, so `time` is what absolute exptimes are compared with. */
	out->time = (uint64_t)engine_clock_default(NULL);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		out->rusage_user_us = timeval_us(ru.ru_utime);
		out->rusage_system_us = timeval_us(ru.ru_stime);
	}
	out->max_connections = o->max_conns;
	out->threads = o->threads;
	out->accepting_conns = true;
	if (srv->stack != NULL)
		stack_stats(srv->stack, out);

	out->maxconns = o->max_conns;
	out->tcpport = o->tcp_port;
	out->udpport = o->udp_port;
	out->inter = o->stack == STACK_NATIVE ? o->ip : o->listen;
	out->tcp_backlog = (uint64_t)o->backlog;
	out->domain_socket = o->unix_path[0] ? o->unix_path : NULL;
	out->umask = o->unix_mask;
	out->idle_timeout = o->idle_timeout;
	out->stack = o->stack == STACK_POSIX ? "posix" : "native";
	out->eviction = engine_eviction_name(o->eviction);
	out->segment_size = srv->segment_size;
	out->max_conns_per_source = o->max_conns_per_source;
	out->request_timeout = o->request_timeout;
	out->admin_port = o->admin_port;
	out->metrics_port = o->metrics_port;
	if (o->stack == STACK_NATIVE) /* the posix stack's own stats have its figure */
		out->tcp_buffer_memory = o->tcp_buffer_memory;
	out->heap = heap_word(&srv->es);
	out->stack_memory_max = srv->es.stack_bytes;
	out->restart_state = engine_setup_restart_state(&srv->es);
	out->restart_items = srv->es.restart.items;
	out->restart_expired = srv->es.restart.expired;
	out->restart_segments = srv->es.restart.segments;
	out->restart_us = srv->es.restart.usec;
}

void
server_stats_conns(void *arg, struct proto_out *out)
{
	struct server *srv = arg;

	if (srv->stack != NULL)
		stack_stats_conns(srv->stack, out);
}
