/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The reach of the admin port and of /metrics: the addresses each binds
 * (--admin-listen, --metrics-listen; loopback by default, whatever -l
 * says, since neither is for clients), what the admin port serves
 * (--admin-commands) and how long it keeps a silent connection
 * (--admin-idle-timeout); and the checks of them against the other
 * options (options_admin_finalize, from options_finalize).
 */
#include "options_private.h"

#include <stdio.h>
#include <string.h>

#include "util/util_err.h"

/* A comma-separated list of hosts without ports (the port is
 * --admin-port's or --metrics-port's): HOST, or [V6] / a bare V6. */
static int
parse_hosts(const char *arg, char *out, size_t outlen, char *err, size_t errlen)
{
	char list[OPTIONS_LISTEN_MAX], *save = NULL, *entry;

	if (arg == NULL || arg[0] == '\0')
		return util_fail(err, errlen, "empty list of addresses");
	if (strlen(arg) >= sizeof(list))
		return util_fail(err, errlen, "longer than %zu characters", sizeof(list) - 1);
	strcpy(list, arg);
	for (entry = strtok_r(list, ",", &save); entry != NULL;
	     entry = strtok_r(NULL, ",", &save)) {
		char host[256], port[8];

		if (stack_split_hostport(entry, host, sizeof(host), port, sizeof(port), err,
					 errlen) < 0)
			return -1;
		if (port[0] != '\0')
			return util_fail(err, errlen,
					 "'%s' has a port: give addresses only (the port is the "
					 "option's own)", entry);
		if (host[0] == '\0')
			return util_fail(err, errlen, "an empty address in '%s'", arg);
	}
	snprintf(out, outlen, "%s", arg);
	return 0;
}

int
opt_admin_listen(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (parse_hosts(arg, o->admin_listen, sizeof(o->admin_listen), err, errlen) < 0)
		return -1;
	o->admin_listen_given = true;
	return 0;
}

int
opt_metrics_listen(struct options *o, const char *arg, char *err, size_t errlen)
{
	return parse_hosts(arg, o->metrics_listen, sizeof(o->metrics_listen), err, errlen);
}

int
opt_admin_commands(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "stats", "all", NULL };
	int i = options_parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->admin_all = i == 1;
	return 0;
}

int
opt_admin_idle_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 86400, &v, err, errlen) < 0)
		return -1;
	o->admin_idle_timeout = (unsigned)v;
	return 0;
}

void
options_admin_defaults(struct options *o)
{
	strcpy(o->admin_listen, "127.0.0.1");
	strcpy(o->metrics_listen, "127.0.0.1");
	o->admin_idle_timeout = 60;
}

/* Is the native stack's address (host byte order) in the list, or the
 * list "0.0.0.0"? */
static bool
names_native_ip(const char *list, uint32_t ip)
{
	char copy[OPTIONS_LISTEN_MAX], *save = NULL, *entry;

	snprintf(copy, sizeof(copy), "%s", list);
	for (entry = strtok_r(copy, ",", &save); entry != NULL;
	     entry = strtok_r(NULL, ",", &save)) {
		uint32_t addr;
		unsigned prefix;

		if (options_parse_ipv4(entry, false, &addr, &prefix) && prefix == 32 &&
		    (addr == ip || addr == 0))
			return true;
	}
	return false;
}

int
options_admin_finalize(struct options *o, char *err, size_t errlen)
{
	char ip[16];

	if (o->stack != STACK_NATIVE || o->admin_port == 0)
		return 0;
	/* The native stack serves its port's one address and no loopback:
	 * its admin port would answer every host of that network. Only when
	 * asked for by name. */
	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", o->ip_addr >> 24, (o->ip_addr >> 16) & 255,
		 (o->ip_addr >> 8) & 255, o->ip_addr & 255);
	if (!o->admin_listen_given)
		return util_fail(err, errlen,
				 "--admin-port on --stack native: the native stack has no loopback, "
				 "so the admin port would be on %s, open to the port's network; "
				 "say --admin-listen %s to serve it there (and --allow to say who "
				 "may connect)", ip, ip);
	if (!names_native_ip(o->admin_listen, o->ip_addr))
		return util_fail(err, errlen,
				 "--admin-listen %s: --stack native serves the admin port on its "
				 "one address, %s (--ip); give --admin-listen %s",
				 o->admin_listen, ip, ip);
	return 0;
}
