/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's -s/-a on the posix stack: one listening unix stream socket,
 * its file made with the -a mode (memcached's umask around bind). It is a
 * listener like the TCP ones (POSIX_POLL_LISTEN): posix_accept.c accepts
 * from it, -c counts its clients, and posix_tcp.c serves them, since a
 * stream is a stream. A socket file left by a server that is gone is
 * replaced; one a live server answers on is not.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Is something listening on the socket file at addr? */
static bool
someone_listens(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ||
	       errno == EAGAIN; /* a full backlog: alive */
	close(fd);
	return live;
}

/* Removes a stale socket file at the path; fails for a live one or for
 * anything that is not a socket. */
static int
clear_path(const struct sockaddr_un *addr, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 :
		       util_fail(err, errlen, "-s %s: %s", addr->sun_path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return util_fail(err, errlen, "-s %s: the path exists and is not a socket: "
				 "remove it or give another path", addr->sun_path);
	if (someone_listens(addr))
		return util_fail(err, errlen, "-s %s: another server listens on it: stop that "
				 "one, or give this one another path", addr->sun_path);
	if (unlink(addr->sun_path) < 0)
		return util_fail(err, errlen, "-s %s: cannot remove the stale socket file: %s",
				 addr->sun_path, strerror(errno));
	return 0;
}

int
posix_unix_open(struct posix_stack *s, char *err, size_t errlen, bool *bind_failed)
{
	const char *path = s->cfg.posix.unix_path;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct posix_socket *ps;
	mode_t old_mask;
	int fd, rc;

	if (strlen(path) >= sizeof(addr.sun_path))
		return util_fail(err, errlen, "-s %s: longer than a unix socket path may be",
				 path);
	if (s->nsockets == POSIX_SOCKETS_MAX)
		return util_fail(err, errlen, "more than %d listening sockets",
				 POSIX_SOCKETS_MAX);
	strcpy(addr.sun_path, path);
	if (clear_path(&addr, err, errlen) < 0) {
		*bind_failed = true;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return util_fail(err, errlen, "socket(AF_UNIX): %s", strerror(errno));
	/* The file is made with the mode -a asks, from the start: no moment
	 * in which others may connect. Start-up runs no other thread that
	 * creates files. */
	old_mask = umask(~(mode_t)s->cfg.posix.unix_mask & 0777);
	rc = bind(fd, (const struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	if (rc < 0 || listen(fd, s->cfg.posix.backlog) < 0) {
		util_fail(err, errlen, "cannot listen on %s (unix): %s", path, strerror(errno));
		if (rc == 0)
			unlink(path);
		close(fd);
		*bind_failed = true;
		return -1;
	}
	ps = &s->sockets[s->nsockets++];
	memset(ps, 0, sizeof(*ps));
	ps->p.kind = POSIX_POLL_LISTEN;
	ps->fd = fd;
	snprintf(ps->name, sizeof(ps->name), "%s (unix, mode %03o)", path,
		 s->cfg.posix.unix_mask);
	snprintf(ps->addr, sizeof(ps->addr), "unix:%s", path);
	snprintf(ps->unix_path, sizeof(ps->unix_path), "%s", path);
	return 0;
}
