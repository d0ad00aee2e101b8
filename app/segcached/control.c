/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The control thread: waits for signals synchronously (no async handlers,
 * so nothing has to be async-signal-safe) and runs the engine's expiration
 * sweep once a second in between, and gives freed C heap back to the
 * system (malloc_trim) when connections freed much of it.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "log/log.h"
#include "observe/observe.h"
#include "server/server.h"
#include "util/util_heap.h"

/* Free bytes in the C heap, beyond what the last trim left, that make the
 * control thread trim it: well under the 20% of RSS an operator would
 * notice, well over what a few connections free in a second. */
#define CONTROL_TRIM_MIN (1u << 20)

/* SIGINT/SIGTERM stop the server, as in memcached; SIGUSR1 is memcached's
 * graceful-stop signal and also what `shutdown` sends to this thread. */
static void
stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGHUP);
}

void
control_block_signals(void)
{
	sigset_t set;

	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* Writes to closed sockets return EPIPE instead of killing us. */
	signal(SIGPIPE, SIG_IGN);
}

void
control_request_shutdown(void *arg)
{
	struct server *srv = arg;

	pthread_kill(srv->control_thread, SIGUSR1);
}

void
control_set_verbosity(int verbosity)
{
	uint32_t level = verbosity >= 2 ? RTE_LOG_DEBUG :
			 verbosity == 1 ? RTE_LOG_INFO : RTE_LOG_NOTICE;

	rte_log_set_level_pattern("segcached.*", level);
}

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
control_run(struct server *srv)
{
	double next = mono_now() + 1.0;
	int verbosity = cmd_verbosity(&srv->cmd);
	sigset_t set;

	stop_signals(&set);
	for (;;) {
		double left = next - mono_now();
		struct timespec ts;
		siginfo_t info;
		int sig;

		if (left > 0) {
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			sig = sigtimedwait(&set, &info, &ts);
			if (sig == SIGHUP) {
				APP_LOG(INFO, "SIGHUP ignored");
				continue;
			}
			if (sig > 0) {
				if (sig == SIGUSR1 && info.si_pid == getpid())
					APP_LOG(NOTICE, "shutdown command: shutting down");
				else
					APP_LOG(NOTICE, "%s from pid %ld: shutting down",
						strsignal(sig), (long)info.si_pid);
				return sig;
			}
			if (errno != EAGAIN && errno != EINTR)
				APP_LOG(WARNING, "sigtimedwait: %s", strerror(errno));
			if (mono_now() < next)
				continue;
		}
		/* The sweep frees whole expired segments; memcached's LRU
		 * crawler does this job there. */
		unsigned n = engine_expire(srv->es.engine);
		if (n > 0)
			APP_LOG(DEBUG, "expiry sweep removed %u items", n);
		server_mrc_note_writes(srv);
		/* heap full, link down or up: logged here, rate-limited */
		server_events_poll(srv);
		/* /metrics connections past their time */
		metrics_http_tick(srv);
		/* Connection buffers freed (a burst of large requests or
		 * slow readers gone) go back to the system. */
		if (util_heap_give_back(CONTROL_TRIM_MIN))
			APP_LOG(DEBUG, "freed heap memory given back to the system");
		/* A `verbosity` command changes the log level, as in memcached. */
		if (cmd_verbosity(&srv->cmd) != verbosity) {
			verbosity = cmd_verbosity(&srv->cmd);
			control_set_verbosity(verbosity);
		}
		next += 1.0;
		if (next < mono_now())
			next = mono_now() + 1.0; /* we were stalled: do not catch up */
	}
}
