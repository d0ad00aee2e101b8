/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The table of network stacks the server can run, and the parser of the
 * listen list's entries that the posix stack and /metrics share.
 */
#include <stdlib.h>
#include <string.h>

#include "drivers/net/stack.h"
#include "util/util_err.h"

static const struct stack_ops *const stacks[] = {
	&posix_stack_ops,
	&native_stack_ops,
};

#define NSTACKS (sizeof(stacks) / sizeof(stacks[0]))

const struct stack_ops *
stack_find(const char *name)
{
	for (size_t i = 0; i < NSTACKS; i++)
		if (strcmp(stacks[i]->name, name) == 0)
			return stacks[i];
	return NULL;
}

int
stack_telemetry_register(void)
{
	int rc = 0;

	for (size_t i = 0; i < NSTACKS; i++)
		if (stacks[i]->telemetry_register != NULL && stacks[i]->telemetry_register() != 0)
			rc = -1;
	return rc;
}

/* Splits one list entry into host and port: "host", "host:port",
 * "[v6]" or "[v6]:port". A bare IPv6 address (several colons) has no
 * port. Returns 0 or -1 with a message. */
int
stack_split_hostport(const char *entry, char *host, size_t hostlen,
		     char *port, size_t portlen, char *err, size_t errlen)
{
	const char *colon, *p;
	size_t n;

	port[0] = '\0';
	if (entry[0] == '[') {
		const char *close = strchr(entry, ']');

		if (close == NULL)
			goto bad;
		n = (size_t)(close - entry - 1);
		if (n == 0 || n >= hostlen)
			goto bad;
		memcpy(host, entry + 1, n);
		host[n] = '\0';
		p = close + 1;
		if (*p == '\0')
			return 0;
		if (*p != ':' || p[1] == '\0')
			goto bad;
		p++;
	} else {
		colon = strchr(entry, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			colon = NULL; /* bare IPv6 address */
		n = colon ? (size_t)(colon - entry) : strlen(entry);
		if (n == 0 || n >= hostlen)
			goto bad;
		memcpy(host, entry, n);
		host[n] = '\0';
		if (colon == NULL)
			return 0;
		p = colon + 1;
		if (*p == '\0')
			goto bad;
	}
	for (n = 0; p[n]; n++)
		if (p[n] < '0' || p[n] > '9')
			goto bad;
	if (n >= portlen || n > 5 || atoi(p) > 65535)
		goto bad;
	memcpy(port, p, n + 1);
	return 0;
bad:
	util_fail(err, errlen,
		   "listen address '%s' is not HOST, HOST:PORT or [IPV6]:PORT", entry);
	return -1;
}
