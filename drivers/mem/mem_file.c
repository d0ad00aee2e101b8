/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The heap file's checks and its SIGBUS guard (mem_file.h says why each).
 */
#include "drivers/mem/mem_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util_err.h"

/* The directory part of path ("." for a bare name). */
static void
dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* A directory anyone may write: refused without the sticky bit (anyone
 * may rename or remove the file and put theirs in its place), a warning
 * with it (anyone may take the name before the server does: it then
 * refuses that file, below). A directory that cannot be read is left to
 * open() to report. */
static int
check_dir(const char *path, char *warn, size_t warnlen, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;

	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IWOTH))
		return 0;
	if (!(st.st_mode & S_ISVTX))
		return util_fail(err, errlen,
				 "%s is in %s, which anyone may write and which has no sticky bit: "
				 "any user could replace the file; put it in a directory only the "
				 "server's user can write (mkdir -m 0700 /var/lib/segcached, or "
				 "/dev/shm/segcached for a DRAM heap)", path, dir);
	snprintf(warn, warnlen,
		 "%s is in %s, which every user may write: another user can create the "
		 "name first (the server then refuses to start); a directory of its own is "
		 "safer (mkdir -m 0700 %s/segcached)", path, dir,
		 strcmp(dir, "/") == 0 ? "" : dir);
	return 0;
}

/* The file is the server user's and only theirs. */
static int
check_file(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return util_fail(err, errlen, "cannot stat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return util_fail(err, errlen,
				 "%s is neither a regular file nor a device DAX: refused", path);
	if (st.st_uid != geteuid())
		return util_fail(err, errlen,
				 "%s belongs to uid %u, not to the server's user (uid %u): another "
				 "user's file could be read or changed by that user, and may not be "
				 "what it seems; remove it, or give --heap-file a path of the "
				 "server's own", path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return util_fail(err, errlen,
				 "%s has mode %04o: its group or other users may read or write the "
				 "cached data; chmod 600 %s, or remove it for a cold start", path,
				 (unsigned)(st.st_mode & 07777), path);
	return 0;
}

int
mem_file_open(const char *path, char *warn, size_t warnlen, char *err, size_t errlen)
{
	int fd, tries;

	warn[0] = '\0';
	if (check_dir(path, warn, warnlen, err, errlen) < 0)
		return -1;
	/* An existing file, not through a link; a missing one created here
	 * and nowhere else (O_EXCL: not one that appeared in between). */
	for (tries = 0; tries < 2; tries++) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0 || errno != ENOENT)
			break;
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		if (errno == ELOOP)
			return util_fail(err, errlen,
					 "%s is a symbolic link: refused (whoever made it chooses "
					 "which file the server overwrites); give the file's own path",
					 path);
		return util_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
	}
	if (check_file(fd, path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- SIGBUS ----------------------------------------------------------------- */

static struct {
	uintptr_t start, end;
	char line[PATH_MAX + 256];
	size_t line_len;
	struct sigaction old;
	int guarded;
} bus;

/* The handler may use only async-signal-safe calls: write(2), _exit(2). */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	char num[24];
	size_t n = sizeof(num);
	uint64_t off;

	(void)ctx;
	if (!bus.guarded || a < bus.start || a >= bus.end) {
		/* not the heap's: die of it as before */
		sigaction(sig, &bus.old, NULL);
		if (bus.old.sa_handler == SIG_DFL || bus.old.sa_handler == SIG_IGN) {
			signal(sig, SIG_DFL);
			raise(sig);
		}
		return;
	}
	off = a - bus.start;
	do {
		num[--n] = (char)('0' + off % 10);
		off /= 10;
	} while (off != 0 && n > 0);
	(void)!write(STDERR_FILENO, bus.line, bus.line_len);
	(void)!write(STDERR_FILENO, num + n, sizeof(num) - n);
	(void)!write(STDERR_FILENO, ")\n", 2);
	_exit(MEM_FILE_SIGBUS_EXIT);
}

void
mem_file_guard(const void *addr, size_t len, const char *path)
{
	struct sigaction sa;
	int n;

	n = snprintf(bus.line, sizeof(bus.line),
		     "segcached: heap file %s: reading or writing the mapping failed "
		     "(SIGBUS: the file was truncated while the server ran, or its media "
		     "failed); stopping at once with status %d, the cache in the file is "
		     "not saved and the next start is cold (offset ", path,
		     MEM_FILE_SIGBUS_EXIT);
	bus.line_len = n < 0 ? 0 : (size_t)n >= sizeof(bus.line) ? sizeof(bus.line) - 1
								 : (size_t)n;
	bus.start = (uintptr_t)addr;
	bus.end = bus.start + len;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (!bus.guarded && sigaction(SIGBUS, &sa, &bus.old) == 0)
		bus.guarded = 1;
}

void
mem_file_unguard(const void *addr)
{
	if (!bus.guarded || (uintptr_t)addr != bus.start)
		return;
	sigaction(SIGBUS, &bus.old, NULL);
	bus.guarded = 0;
}
