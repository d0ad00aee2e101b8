/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Listening sockets of the posix stack: parses the --listen list and binds
 * one TCP and one UDP socket per address.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void
posix_addr_string(const struct sockaddr *sa, socklen_t len, bool tcp, char *out,
		  size_t outlen)
{
	char host[INET6_ADDRSTRLEN + 16], serv[NI_MAXSERV];

	/* a unix socket's client: memcached's "unix:" and the path, which a
	 * client that did not bind has not */
	if (sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t n = len > offsetof(struct sockaddr_un, sun_path) ?
			   len - offsetof(struct sockaddr_un, sun_path) : 0;

		snprintf(out, outlen, "unix:%.*s", (int)strnlen(un->sun_path, n), un->sun_path);
		return;
	}
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(out, outlen, "%s:?", tcp ? "tcp" : "udp");
	else if (sa->sa_family == AF_INET6)
		snprintf(out, outlen, "%s6:[%s]:%s", tcp ? "tcp" : "udp", host, serv);
	else
		snprintf(out, outlen, "%s:%s:%s", tcp ? "tcp" : "udp", host, serv);
}

static void
describe(const struct sockaddr *sa, socklen_t len, int type, char *out,
	 size_t outlen)
{
	char host[INET6_ADDRSTRLEN + 16], serv[NI_MAXSERV];

	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(out, outlen, "? (%s)", type == SOCK_STREAM ? "tcp" : "udp");
	else if (sa->sa_family == AF_INET6)
		snprintf(out, outlen, "[%s]:%s (%s)", host, serv,
			 type == SOCK_STREAM ? "tcp" : "udp");
	else
		snprintf(out, outlen, "%s:%s (%s)", host, serv,
			 type == SOCK_STREAM ? "tcp" : "udp");
}

/* Binds every address host:port resolves to, for one socket type. */
static int
bind_one(struct posix_stack *s, const char *host, const char *port, int type,
	 char *err, size_t errlen, bool *bind_failed)
{
	struct addrinfo hints = { 0 }, *res, *ai;
	int rc, bound = 0;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = type;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		util_fail(err, errlen, "cannot resolve listen address %s: %s",
			   host, gai_strerror(rc));
		*bind_failed = true;
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		struct posix_socket *ps;
		int fd, one = 1;

		if (s->nsockets == POSIX_SOCKETS_MAX) {
			util_fail(err, errlen, "more than %d listening sockets",
				   POSIX_SOCKETS_MAX);
			goto fail;
		}
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			util_fail(err, errlen, "socket: %s", strerror(errno));
			goto fail;
		}
		ps = &s->sockets[s->nsockets];
		ps->p.kind = type == SOCK_STREAM ? POSIX_POLL_LISTEN : POSIX_POLL_UDP;
		ps->fd = fd;
		describe(ai->ai_addr, ai->ai_addrlen, type, ps->name,
			 sizeof(ps->name));
		posix_addr_string(ai->ai_addr, ai->ai_addrlen, type == SOCK_STREAM,
				  ps->addr, sizeof(ps->addr));
		/* SO_REUSEADDR lets a restarted server bind while old
		 * connections sit in TIME_WAIT. Not SO_REUSEPORT: a second
		 * server on the same port must fail, not share the traffic. */
		if (type == SOCK_STREAM)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    (type == SOCK_STREAM && listen(fd, s->cfg.posix.backlog) < 0)) {
			int e = errno;
			char owner[128] = "another server";

			if (e == EADDRINUSE)
				(void)posix_port_owner((unsigned)strtoul(port, NULL, 10),
						       type == SOCK_STREAM, owner, sizeof(owner));
			util_fail(err, errlen, "cannot listen on %s: %s%s%s%s%s", ps->name,
				   strerror(e), e == EADDRINUSE ? " (" : "",
				   e == EADDRINUSE ? owner : "", e == EADDRINUSE ?
				   " has it: stop that one, or give this one another -p or -l "
				   "HOST:PORT)" : "",
				   /* Debian's memcached package starts one on 11211 */
				   strncmp(owner, "memcached ", 10) == 0 ?
				   "; Debian's memcached.service stops for good with "
				   "'systemctl disable --now memcached'" : "");
			close(fd);
			*bind_failed = true;
			goto fail;
		}
		if (set_nonblock(fd) < 0) {
			util_fail(err, errlen, "fcntl: %s", strerror(errno));
			close(fd);
			goto fail;
		}
		s->nsockets++;
		bound++;
	}
	freeaddrinfo(res);
	return bound;
fail:
	freeaddrinfo(res);
	return -1;
}

/* --admin-port on host: its sockets are marked, and named so. */
static int
admin_open(struct posix_stack *s, const char *host, char *err, size_t errlen,
	   bool *bind_failed)
{
	unsigned first = s->nsockets;
	char port[8];

	snprintf(port, sizeof(port), "%u", s->cfg.admin_port);
	if (bind_one(s, host, port, SOCK_STREAM, err, errlen, bind_failed) < 0)
		return -1;
	for (unsigned i = first; i < s->nsockets; i++) {
		struct posix_socket *ps = &s->sockets[i];
		size_t n = strlen(ps->name);

		ps->admin = true;
		/* "127.0.0.1:11212 (tcp)" -> "... (tcp, admin)" */
		if (n > 0 && ps->name[n - 1] == ')' && n + 7 < sizeof(ps->name))
			strcpy(ps->name + n - 1, ", admin)");
	}
	return 0;
}

/* --admin-port on the hosts of --admin-listen (loopback by default: the
 * port is an operator's, not the clients'). */
static int
admin_list_open(struct posix_stack *s, const char *hosts, char *err, size_t errlen,
		bool *bind_failed)
{
	char *list = strdup(hosts), *save = NULL, *entry;
	int rc = 0;

	if (list == NULL)
		return util_fail(err, errlen, "out of memory");
	for (entry = strtok_r(list, ",", &save); entry != NULL && rc == 0;
	     entry = strtok_r(NULL, ",", &save)) {
		char host[256], port[8];

		rc = stack_split_hostport(entry, host, sizeof(host), port, sizeof(port), err,
					  errlen);
		if (rc < 0)
			*bind_failed = true;
		else
			rc = admin_open(s, host, err, errlen, bind_failed);
	}
	free(list);
	return rc;
}

int
posix_sockets_open(struct posix_stack *s, char *err, size_t errlen,
		   bool *bind_failed)
{
	char *list, *save = NULL, *entry;
	int rc = -1;

	/* memcached's -s: the unix socket, and TCP and UDP off (the
	 * options set -p and -U to 0) but for the admin port */
	if (s->cfg.posix.unix_path != NULL && posix_unix_open(s, err, errlen, bind_failed) < 0)
		return -1;
	list = strdup(s->cfg.posix.listen);
	if (list == NULL) {
		util_fail(err, errlen, "out of memory");
		return -1;
	}
	for (entry = strtok_r(list, ",", &save); entry != NULL;
	     entry = strtok_r(NULL, ",", &save)) {
		char host[256], port[8], tcp_port[8], udp_port[8];

		if (stack_split_hostport(entry, host, sizeof(host), port,
					 sizeof(port), err, errlen) < 0) {
			*bind_failed = true;
			goto out;
		}
		/* As in memcached: a port in the entry replaces -p and -U
		 * for that address; -p 0 / -U 0 still turn TCP / UDP off. */
		snprintf(tcp_port, sizeof(tcp_port), "%s", port);
		snprintf(udp_port, sizeof(udp_port), "%s", port);
		if (!port[0]) {
			snprintf(tcp_port, sizeof(tcp_port), "%u", s->cfg.tcp_port);
			snprintf(udp_port, sizeof(udp_port), "%u", s->cfg.udp_port);
		}
		if (s->cfg.tcp_port != 0 &&
		    bind_one(s, host, tcp_port, SOCK_STREAM, err, errlen,
			     bind_failed) < 0)
			goto out;
		if (s->cfg.udp_port != 0 &&
		    bind_one(s, host, udp_port, SOCK_DGRAM, err, errlen,
			     bind_failed) < 0)
			goto out;
		if (s->cfg.admin_port != 0 && s->cfg.admin_listen == NULL &&
		    admin_open(s, host, err, errlen, bind_failed) < 0)
			goto out;
	}
	if (s->cfg.admin_port != 0 && s->cfg.admin_listen != NULL &&
	    admin_list_open(s, s->cfg.admin_listen, err, errlen, bind_failed) < 0)
		goto out;
	if (s->nsockets == 0) {
		util_fail(err, errlen, "no address to listen on");
		goto out;
	}
	rc = 0;
out:
	free(list);
	return rc;
}

void
posix_sockets_close(struct posix_stack *s)
{
	unsigned i;

	for (i = 0; i < s->nsockets; i++) {
		if (s->sockets[i].fd >= 0)
			close(s->sockets[i].fd);
		/* the unix socket's file is ours: memcached leaves it, but a
		 * stale file would only be replaced at the next start */
		if (s->sockets[i].unix_path[0] != '\0')
			unlink(s->sockets[i].unix_path);
	}
	s->nsockets = 0;
}

bool
posix_peer_allowed(const struct posix_stack *s, const struct sockaddr *sa)
{
	uint32_t addr;

	/* unix socket clients: its file's mode (-a) says who may connect */
	if (s->cfg.n_allow == 0 || sa->sa_family == AF_UNIX)
		return true;
	if (sa->sa_family == AF_INET) {
		addr = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	} else if (sa->sa_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr)) {
		const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		addr = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	} else {
		return false; /* the list names IPv4 networks only */
	}
	for (unsigned i = 0; i < s->cfg.n_allow; i++)
		if ((addr & s->allow[i].mask) == s->allow[i].addr)
			return true;
	return false;
}
