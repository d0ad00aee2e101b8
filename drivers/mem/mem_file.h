/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A heap file that only the server's user can reach, and a mapping of it
 * that does not kill the server silently (for mem_region.c's
 * MEM_REGION_FILE):
 *
 *  - mem_file_open() opens an existing file without following a symbolic
 *    link (O_NOFOLLOW) and refuses one that belongs to another user or
 *    that group or others may read or write, with a message saying why
 *    and what to do; a missing file is created O_EXCL, mode 0600. A
 *    directory that anyone may write without the sticky bit (anyone could
 *    replace the file) is refused; one with the sticky bit (/dev/shm,
 *    /tmp: anyone can take the name first) gives a warning.
 *  - mem_file_guard() catches SIGBUS in the mapping: the file shrank under
 *    it (truncated by its owner or root) or its media failed. Nothing can
 *    prevent that for a named file (F_SEAL is for memfds, Linux has no
 *    mandatory locks, MAP_POPULATE pages go when the file is truncated),
 *    so the handler says so on stderr and exits with status 74 (EX_IOERR)
 *    instead of dying of the signal without a word; the file is left as
 *    it is while serving, not clean, so the next start is cold
 *    (refused:dirty).
 */
#ifndef SEGCACHED_MEM_FILE_H
#define SEGCACHED_MEM_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The exit status after a SIGBUS in a guarded mapping (sysexits.h EX_IOERR). */
#define MEM_FILE_SIGBUS_EXIT 74

/* Opens path read-write (O_CLOEXEC), as above. Returns the descriptor, or
 * -1 with a message in err; warn gets a warning (or "") either way. */
int mem_file_open(const char *path, char *warn, size_t warnlen, char *err, size_t errlen);

/* From now on a SIGBUS at an address in [addr, addr + len) is reported as
 * the heap file path's and ends the process (MEM_FILE_SIGBUS_EXIT); one
 * elsewhere kills it as before. One mapping at a time; path is copied. */
void mem_file_guard(const void *addr, size_t len, const char *path);
/* The mapping at addr goes away: its SIGBUS is no longer ours. */
void mem_file_unguard(const void *addr);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_MEM_FILE_H */
