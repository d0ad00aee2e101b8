/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Runtime events the control thread finds once a second in the counters
 * (the ones the stacks meet on a connection, refusals, they log where they
 * happen): stores refused because the heap is full and eviction could not
 * make room (SERVER_ERROR out of memory), and the native port's link going
 * down or coming back. One line per occurrence, at most one per kind per
 * UTIL_RATELIMIT_EVENT_S, the line counting what it stands for.
 */
#include <inttypes.h>
#include <string.h>

#include "log/log.h"
#include "observe.h"
#include "server/server.h"
#include "util/util_ratelimit.h"

static struct {
	bool started;
	uint64_t no_memory_logged; /* set_no_memory when last logged (0 at start) */
	int link_logged;           /* what the last line said: 0 down, 1 up */
	int link_now;              /* -1: no link (posix); 0 down; 1 up */
	uint64_t link_changes;     /* changes since the last line */
	uint64_t link_speed;
	struct util_ratelimit no_memory_rl, link_rl;
} ev;

static void
read_link(void *arg, const struct stack_counter *c)
{
	(void)arg;
	if (strcmp(c->name, "link_up") == 0)
		ev.link_now = c->value != 0;
	else if (strcmp(c->name, "link_speed_mbps") == 0)
		ev.link_speed = c->value;
}

static void
heap_full(const struct server *srv)
{
	struct engine_stats es;
	uint64_t n, suppressed;

	engine_stats(srv->es.engine, &es);
	/* counted from 0 at start: refusals before the first poll count */
	n = es.counters[ENGINE_C_set_no_memory];
	if (n == ev.no_memory_logged || !util_ratelimit(&ev.no_memory_rl, &suppressed))
		return;
	APP_LOG(WARNING,
		"heap full: %" PRIu64 " stores refused with SERVER_ERROR out of memory since "
		"the last such line (%s; %" PRIu64 " refused since start)",
		n - ev.no_memory_logged,
		srv->opt.eviction == ENGINE_EVICT_NONE ?
			"evictions are off (-M / --eviction none)" :
			"eviction could not free memory for them in time",
		n);
	ev.no_memory_logged = n;
}

static void
link_change(const struct server *srv)
{
	uint64_t suppressed;
	int before = ev.link_now;

	ev.link_now = -1;
	stack_counters(srv->stack, read_link, NULL);
	if (ev.link_now < 0)
		return; /* a stack without a port */
	if (before >= 0 && ev.link_now != before)
		ev.link_changes++;
	/* a change held back by the limit is logged when it allows, with
	 * the state of then */
	if (ev.link_now == ev.link_logged || !util_ratelimit(&ev.link_rl, &suppressed))
		return;
	if (ev.link_now)
		APP_LOG(NOTICE, "the port's link is up (%" PRIu64 " Mbit/s)%s", ev.link_speed,
			ev.link_changes > 1 ? "; it changed more than once since the last line" :
					      "");
	else
		APP_LOG(WARNING, "the port's link is down: clients cannot reach the server "
			"until it is back (check the cable, the switch port, `ip link` of a veth)%s",
			ev.link_changes > 1 ? "; it changed more than once since the last line" :
					      "");
	ev.link_logged = ev.link_now;
	ev.link_changes = 0;
}

void
server_events_poll(const struct server *srv)
{
	if (!ev.started) {
		struct util_ratelimit rl = UTIL_RATELIMIT_INIT(UTIL_RATELIMIT_EVENT_S);

		ev.no_memory_rl = rl;
		ev.link_rl = rl;
		ev.link_now = -1;
		/* as if the last line said up: a port whose link is down
		 * when the server is ready (--link-timeout 0, or it timed out)
		 * gets its line at the first poll */
		ev.link_logged = 1;
	}
	heap_full(srv);
	if (srv->stack != NULL)
		link_change(srv);
	ev.started = true;
}
