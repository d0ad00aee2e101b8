/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Who holds a port we could not bind: the socket bound to it in
 * /proc/net/{tcp,tcp6,udp,udp6} (its inode), and the process that has
 * that inode among its descriptors (/proc/PID/fd). "memcached (pid 812)"
 * says at once what to stop, e.g. Debian's memcached.service on 11211.
 * Best effort: another user's process may hide its descriptors, and then
 * only the port is named.
 */
#include "drivers/net/posix/posix_private.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The inode of a socket bound to port (listening, for TCP), or 0. */
static unsigned long
port_inode(const char *table, unsigned port, bool tcp)
{
	char line[512];
	unsigned long inode = 0;
	FILE *f = fopen(table, "r");

	if (f == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) == NULL) { /* the header */
		fclose(f);
		return 0;
	}
	while (inode == 0 && fgets(line, sizeof(line), f) != NULL) {
		char local[80];
		unsigned st, lport;
		unsigned long ino;
		const char *colon;

		/* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, "%*s %79s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &ino) != 3)
			continue;
		colon = strrchr(local, ':');
		if (colon == NULL || sscanf(colon + 1, "%x", &lport) != 1 || lport != port)
			continue;
		if (tcp && st != 0x0A) /* TCP_LISTEN */
			continue;
		inode = ino;
	}
	fclose(f);
	return inode;
}

/* "NAME (pid N)" of the process with socket:[inode] open, or false. */
static bool
inode_owner(unsigned long inode, char *out, size_t outlen)
{
	char want[48], path[600], link[64];
	DIR *proc = opendir("/proc");
	struct dirent *p;
	bool found = false;

	if (proc == NULL)
		return false;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	while (!found && (p = readdir(proc)) != NULL) {
		DIR *fds;
		struct dirent *fd;

		if (p->d_name[0] < '1' || p->d_name[0] > '9' || atol(p->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (fds == NULL)
			continue;
		while (!found && (fd = readdir(fds)) != NULL) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, fd->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			found = strcmp(link, want) == 0;
		}
		closedir(fds);
		if (found) {
			char comm[64] = "?";
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
			f = fopen(path, "r");
			if (f != NULL) {
				if (fgets(comm, sizeof(comm), f) != NULL)
					comm[strcspn(comm, "\n")] = '\0';
				fclose(f);
			}
			snprintf(out, outlen, "%s (pid %s)", comm, p->d_name);
		}
	}
	closedir(proc);
	return found;
}

bool
posix_port_owner(unsigned port, bool tcp, char *out, size_t outlen)
{
	const char *const tables[2][2] = {
		{ "/proc/net/udp", "/proc/net/udp6" },
		{ "/proc/net/tcp", "/proc/net/tcp6" },
	};

	for (unsigned i = 0; i < 2; i++) {
		unsigned long inode = port_inode(tables[tcp][i], port, tcp);

		if (inode != 0 && inode_owner(inode, out, outlen))
			return true;
	}
	return false;
}
