/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The server's log type, "segcached.app"; -v raises its level (and the
 * posix stack's) from NOTICE to INFO and DEBUG.
 */
#ifndef SEGCACHED_APP_LOG_H
#define SEGCACHED_APP_LOG_H

#include <rte_log.h>

extern int segcached_logtype;

/* Timestamps on every log line (log_stamp.c): begin() first thing in
 * main(), eal_ready() once rte_eal_init() has opened syslog, or syslog()
 * to open it as the EAL would where the EAL does not run. */
void log_stamp_begin(void);
void log_stamp_eal_ready(void);
void log_stamp_syslog(const char *ident);

/* cmd_settings.trace: -vv's lines, rate-limited (log_trace.c). */
void log_trace(void *arg, const char *line);

#define APP_LOG(level, fmt, ...)                                           \
	rte_log(RTE_LOG_##level, segcached_logtype, "segcached: " fmt "\n",  \
		##__VA_ARGS__)

#endif /* SEGCACHED_APP_LOG_H */
