/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The EAL's drivers, paged out where the chosen stack does not use them.
 *
 * A shared DPDK build's EAL dlopens every driver in its plugin directory
 * (RTE_EAL_PMD_PATH, e.g. /usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0, with
 * no option to skip it) and the libraries those need (ibverbs, mlx5,
 * crypto, ...): on Debian's DPDK 22.11, 128 drivers, about 11 MB resident
 * of drivers and 5 MB of their libraries once their constructors ran,
 * measured after start-up at -m 16 (docs/bench/journal/memory.md, "Memory a user
 * sees"). The posix stack calls none of them: once the EAL is up, the
 * pages of their read-only mappings that are still the file's own (no
 * private copy in the mapping: Anonymous 0 in smaps) are dropped from
 * this process (MADV_DONTNEED). That loses nothing: a page touched again
 * (rte_eal_cleanup() at the stop calls the buses' cleanup) is read back
 * from the file, as at the first touch. Writable mappings (data, bss) and
 * read-only ones the dynamic linker wrote (RELRO) are left alone.
 * MADV_PAGEOUT would be the gentler advice, but the kernel skips pages
 * that another process maps too (a second server on the host).
 */
#include "eal_trim.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line of /proc/self/maps: its range, permissions and file (or ""). */
static int
parse_map(const char *line, uintptr_t *lo, uintptr_t *hi, char perms[5], char *path,
	  size_t pathlen)
{
	unsigned long long l, h;
	int off = 0;

	if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %n", &l, &h, perms, &off) < 3 || off == 0)
		return -1;
	*lo = (uintptr_t)l;
	*hi = (uintptr_t)h;
	snprintf(path, pathlen, "%s", line + off);
	path[strcspn(path, "\n")] = '\0';
	return 0;
}

void
eal_trim_free(struct eal_trim *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->paths[i]);
	free(t->paths);
	t->paths = NULL;
	t->n = 0;
}

int
eal_trim_snapshot(struct eal_trim *t)
{
	char line[4352], path[4096], perms[5];
	size_t room = 0;
	uintptr_t lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");

	memset(t, 0, sizeof(*t));
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (parse_map(line, &lo, &hi, perms, path, sizeof(path)) < 0 || path[0] != '/')
			continue;
		if (t->n > 0 && strcmp(t->paths[t->n - 1], path) == 0)
			continue; /* the same file's next mapping */
		if (t->n == room) {
			char **p = realloc(t->paths, (room = room ? 2 * room : 64) * sizeof(*p));

			if (p == NULL)
				goto fail;
			t->paths = p;
		}
		t->paths[t->n] = strdup(path);
		if (t->paths[t->n] == NULL)
			goto fail;
		t->n++;
	}
	fclose(f);
	qsort(t->paths, t->n, sizeof(*t->paths), cmp_path);
	return 0;
fail:
	fclose(f);
	eal_trim_free(t);
	return -1;
}

size_t
eal_trim_release(struct eal_trim *t)
{
	char line[4352], path[4096], perms[5];
	size_t released = 0, rss_kb = 0;
	bool candidate = false;
	uintptr_t lo = 0, hi = 0;
	FILE *f;

	if (t->paths == NULL) /* no snapshot: everything would look new */
		return 0;
	f = fopen("/proc/self/smaps", "r");
	if (f == NULL) {
		eal_trim_free(t);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *key = path;
		size_t kb;

		if (parse_map(line, &lo, &hi, perms, path, sizeof(path)) == 0) {
			candidate = path[0] == '/' && perms[1] != 'w' && perms[3] == 'p' &&
				    bsearch(&key, t->paths, t->n, sizeof(*t->paths),
					    cmp_path) == NULL;
			rss_kb = 0;
			continue;
		}
		if (!candidate)
			continue;
		if (sscanf(line, "Rss: %zu kB", &kb) == 1) {
			rss_kb = kb;
		} else if (sscanf(line, "Anonymous: %zu kB", &kb) == 1) {
			/* Pages the dynamic linker wrote (relocations in
			 * RELRO) are private copies: dropping them would lose
			 * the writes. Without any, every page is the file's. */
			if (kb == 0 && rss_kb > 0 && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
				released += rss_kb << 10;
			candidate = false;
		}
	}
	fclose(f);
	eal_trim_free(t);
	return released;
}
