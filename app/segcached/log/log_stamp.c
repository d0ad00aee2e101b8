/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Timestamps on the log. Every log line of the process goes through
 * rte_log (the EAL's, the stacks', the server's); its stream becomes a
 * cookie stream (rte_openlog_stream) that writes each line to stderr after
 * the time in UTC, ISO 8601 with milliseconds:
 *
 *   2026-11-27T02:04:28.123Z segcached: listening on 127.0.0.1:11211 (tcp)
 *
 * Once the EAL runs, each message also goes to syslog as the EAL's own
 * stream sends it (syslog stamps it itself), so nothing changes for
 * syslog readers. stamp_write runs under the stream's lock: the state
 * below is only touched under it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include <rte_log.h>

#include "log.h"

static bool at_line_start = true;
static bool to_syslog;

static void
put_stamp(FILE *f)
{
	struct timespec ts;
	struct tm tm;
	char buf[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%03ldZ ", buf, ts.tv_nsec / 1000000);
}

static ssize_t
stamp_write(void *cookie, const char *buf, size_t size)
{
	size_t i = 0;

	(void)cookie;
	flockfile(stderr); /* a line and its stamp together */
	while (i < size) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t n = nl != NULL ? (size_t)(nl - (buf + i)) + 1 : size - i;

		if (at_line_start)
			put_stamp(stderr);
		fwrite(buf + i, 1, n, stderr);
		at_line_start = nl != NULL;
		i += n;
	}
	fflush(stderr);
	funlockfile(stderr);
	/* syslog's levels are rte_log's minus one (as the EAL's stream) */
	if (to_syslog && rte_log_cur_msg_loglevel() > 0)
		syslog(rte_log_cur_msg_loglevel() - 1, "%.*s", (int)size, buf);
	return (ssize_t)size;
}

void
log_stamp_begin(void)
{
	static const cookie_io_functions_t io = { .write = stamp_write };
	FILE *f = fopencookie(NULL, "w", io);

	/* without it the log goes on unstamped: not a reason to stop */
	if (f == NULL)
		return;
	/* unbuffered: glibc then hands each rte_log message to stamp_write
	 * whole, on the thread that logged it (its level for syslog) */
	setvbuf(f, NULL, _IONBF, 0);
	rte_openlog_stream(f);
}

void
log_stamp_syslog(const char *ident)
{
	/* as the EAL opens it (eal_log_init): the process's name, its pid,
	 * the daemon facility */
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	to_syslog = true;
}

void
log_stamp_eal_ready(void)
{
	to_syslog = true;
}
