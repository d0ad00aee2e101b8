/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * An epoll wait with a nanosecond timeout that also runs on kernels older
 * than Linux 5.11, which have no epoll_pwait2.
 */
#ifndef LG_EPOLL_H
#define LG_EPOLL_H

#include <stdint.h>
#include <sys/epoll.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Waits up to wait_ns for events on ep. epoll_pwait2 where the kernel has
 * it; after its first ENOSYS, epoll_wait with the wait rounded down to
 * whole milliseconds (under one millisecond: no wait, so that a send due
 * within it is not made late by a 1 ms sleep). Returns the number of
 * events, 0 when a signal interrupted the wait, -1 with errno on any other
 * error. */
int lg_epoll_wait_ns(int ep, struct epoll_event *evs, int max, uint64_t wait_ns);

#ifdef __cplusplus
}
#endif

#endif /* LG_EPOLL_H */
