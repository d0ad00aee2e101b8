/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Connections the posix stack accepted but does not serve: the log line
 * for a refused peer (the -c limit in posix_accept.c, the per-source
 * limit in posix_tcp.c) and giving an abandoned connection's count back
 * (posix_handoff.c and posix_tcp.c, when a connection on its way to a
 * worker cannot be served after all). Accepting, handing off and adopting run one way
 * (posix_accept.c -> posix_handoff.c -> posix_tcp.c); these two helpers
 * are called from more than one step of it, so they stand below all three.
 */
#include "drivers/net/posix/posix_private.h"

#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <unistd.h>

void
posix_log_refused(struct util_ratelimit *rl, const struct sockaddr *peer, socklen_t len,
		  const char *why)
{
	char host[NI_MAXHOST];
	uint64_t suppressed;

	if (!util_ratelimit(rl, &suppressed))
		return;
	if (getnameinfo(peer, len, host, sizeof(host), NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(host, sizeof(host), "?");
	if (suppressed > 0)
		POSIX_LOG(WARNING, "connection from %s refused: %s (and %" PRIu64
			  " more refused for this since the last such line)", host, why,
			  suppressed);
	else
		POSIX_LOG(WARNING, "connection from %s refused: %s", host, why);
}

void
posix_accept_abandon(struct posix_stack *s, int fd)
{
	close(fd);
	atomic_fetch_sub_explicit(&s->curr_conns, 1, memory_order_relaxed);
}
