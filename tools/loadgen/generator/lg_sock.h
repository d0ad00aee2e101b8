/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Kernel-socket transport: one epoll thread per worker, non-blocking TCP
 * connections (or connected UDP sockets) to the server. Needs no EAL, so
 * it measures memcached and segcached's posix stack with the same request
 * logic as the lib/net transport.
 */
#ifndef LG_SOCK_H
#define LG_SOCK_H

#include "lg_options.h"
#include "lg_session.h"

/* Runs worker w until the run reaches LG_PHASE_STOP. Returns 0, or -1
 * with a message in w->last_bad when the server cannot be resolved. */
int lg_sock_worker(struct lg_worker *w, const struct lg_options *o);

#endif /* LG_SOCK_H */
