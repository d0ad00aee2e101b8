/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Starts the EAL without its usage dump: when DPDK 22.11's EAL refuses an
 * option it prints its whole usage (about 100 lines) on stdout and names
 * neither the option nor the fix. The EAL's stdout is held in a temporary
 * file while rte_eal_init() runs; on success it is passed on unchanged,
 * on a refusal it is dropped, and the usage it held tells which of the
 * given options the EAL does not have (read from the installed DPDK's own
 * text rather than a copy of its option table, which changes by release).
 */
#include "eal_start.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

/* The EAL prints its usage and exits 0 for these: the user asked for it. */
static bool
asks_for_help(const struct eal_args *ea)
{
	for (int i = 1; i < ea->eal_argc; i++) {
		const char *w = ea->eal_argv[i];

		if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0 || strstr(w, "help") != NULL)
			return true;
	}
	return false;
}

/* Does the usage text list `word`'s option ("--vdev=x" -> "--vdev",
 * "-l0-3" -> "-l")? */
static bool
usage_lists(const char *usage, const char *word)
{
	size_t n = word[1] == '-' ? strcspn(word, "=") : 2;

	for (const char *p = strstr(usage, "-"); p != NULL; p = strstr(p + 1, "-")) {
		unsigned char next = (unsigned char)p[n];

		if (p > usage && p[-1] != ' ' && p[-1] != '\n' && p[-1] != '\t')
			continue;
		if (strncmp(p, word, n) != 0)
			continue;
		if (!isalnum(next) && next != '-')
			return true;
	}
	return false;
}

/* The file's contents as a string (NULL when it cannot be read). */
static char *
slurp(FILE *f)
{
	long len;
	char *s;

	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		return NULL;
	s = malloc((size_t)len + 1);
	if (s == NULL)
		return NULL;
	s[fread(s, 1, (size_t)len, f)] = '\0';
	return s;
}

static void
find_unknown(const struct eal_args *ea, const char *usage, char *bad, size_t badlen)
{
	/* Usage text that lists no common option is not the EAL's usage. */
	if (!usage_lists(usage, "--no-huge"))
		return;
	for (int i = 1; i < ea->eal_argc; i++) {
		const char *w = ea->eal_argv[i];

		if (w[0] == '-' && w[1] != '\0' && !usage_lists(usage, w)) {
			snprintf(bad, badlen, "%s", w);
			return;
		}
	}
}

int
eal_start(struct eal_args *ea, char *bad, size_t badlen)
{
	FILE *held = NULL;
	int saved = -1, rc, err;
	char *text;

	bad[0] = '\0';
	fflush(stdout);
	if (!asks_for_help(ea) && (held = tmpfile()) != NULL &&
	    (saved = dup(STDOUT_FILENO)) >= 0 && dup2(fileno(held), STDOUT_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	rc = rte_eal_init(ea->eal_argc, ea->eal_argv);
	err = rte_errno;
	if (saved < 0) {
		if (held != NULL)
			fclose(held);
		rte_errno = err;
		return rc;
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	text = slurp(held);
	fclose(held);
	if (text != NULL) {
		if (rc < 0 && err == EINVAL)
			find_unknown(ea, text, bad, badlen);
		else
			fputs(text, stdout);
		free(text);
	}
	rte_errno = err;
	return rc;
}
