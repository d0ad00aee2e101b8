/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The control thread (control.c): the thread main() becomes once the
 * server is up, taking the stop signals and running the expiry sweep.
 */
#ifndef SEGCACHED_CONTROL_H
#define SEGCACHED_CONTROL_H

#include "server/server.h"

/* Runs before any thread exists, so every thread inherits the mask and
 * only control_run()'s sigtimedwait() ever takes SIGINT, SIGTERM and
 * SIGUSR1. */
void control_block_signals(void);
/* Runs the expiry sweep once a second until a stop signal (logged);
 * returns the signal. */
int control_run(struct server *srv);
/* Log levels of segcached's log types for -v / `verbosity` N: NOTICE,
 * INFO (1), DEBUG (2 and up). control_run() follows `verbosity` commands. */
void control_set_verbosity(int verbosity);
/* cmd's `shutdown` (any thread): asks control_run() to return. */
void control_request_shutdown(void *arg);

#endif /* SEGCACHED_CONTROL_H */
