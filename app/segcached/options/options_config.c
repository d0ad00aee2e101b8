/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The config file (--config): rte_cfgfile reads it, after a pass over its
 * lines of our own, as rte_cfgfile skips a line without '=' without a
 * word: every line is blank, a comment, a known [section] or a known
 * key = value, or the start stops with the line's number. A key is an
 * option's long name; flags take yes/no (true/false, on/off, 1/0).
 */
#include "options_private.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include "util/util_err.h"

/* The sections a config file may have: before any section, or [segcached]. */
static bool
config_section_known(const char *name)
{
	return strcmp(name, "GLOBAL") == 0 || strcmp(name, "segcached") == 0;
}

/* rte_cfgfile reads a line into CFG_NAME_LEN + CFG_VALUE_LEN + 4 bytes
 * (with its newline and NUL) and truncates a longer value silently. */
#define CONFIG_LINE_MAX (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/* One line of a config file, without its newline, as rte_cfgfile sees it:
 * a '#' not after a backslash starts a comment, blanks around are
 * stripped. 0 when it is blank, a comment, a known [section] or
 * "key = value" with a known key and a value; else the message in err.
 * *is_entry tells whether it is an entry rte_cfgfile will return. */
static int
config_check_line(char *line, bool *is_entry, char *err, size_t errlen)
{
	char *p, *eq, *end, *key, *value;
	const struct opt_desc *d;
	const char *hint;

	*is_entry = false;
	if (strlen(line) > CONFIG_LINE_MAX)
		return util_fail(err, errlen, "expected at most %d characters on a line, got %zu",
				 CONFIG_LINE_MAX, strlen(line));
	for (p = strchr(line, '#'); p != NULL; p = strchr(p + 1, '#'))
		if (p == line || p[-1] != '\\') {
			*p = '\0';
			break;
		}
	while (isspace((unsigned char)*line))
		line++;
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (*line == '\0')
		return 0;
	if (*line == '[') {
		if (end[-1] != ']' || end - line < 3)
			return util_fail(err, errlen,
					 "expected a section header such as [segcached], got '%.64s'",
					 line);
		end[-1] = '\0';
		if (!config_section_known(line + 1))
			return util_fail(err, errlen,
					 "unknown section [%.64s] (options go in [segcached])",
					 line + 1);
		return 0;
	}
	eq = strchr(line, '=');
	if (eq == NULL) {
		/* "memory 4G" or a bare "disable-flush-all": say how to write it. */
		size_t n = strcspn(line, " \t");

		value = line + n + strspn(line + n, " \t");
		line[n] = '\0';
		d = options_find(line);
		if (d != NULL && d->scope == OPT_ANYWHERE)
			return util_fail(err, errlen,
					 "expected key = value, got '%.64s%s%.64s' (write '%s = %.64s')",
					 line, *value ? " " : "", value, line,
					 *value ? value : d->argname ? d->argname : "yes");
		return util_fail(err, errlen,
				 "expected key = value, [section], a '#' comment or a blank "
				 "line, got '%.64s%s%.64s'", line, *value ? " " : "", value);
	}
	key = line;
	value = eq + 1;
	for (p = eq; p > key && isspace((unsigned char)p[-1]); p--)
		;
	*p = '\0';
	value += strspn(value, " \t");
	if (*key == '\0')
		return util_fail(err, errlen, "expected an option name before '=', got '= %.64s'",
				 value);
	d = options_find(key);
	if (d == NULL) {
		const char *near = options_closest(key);

		hint = options_unknown_hint(0, key);
		if (hint == NULL && near != NULL)
			return util_fail(err, errlen, "unknown option '%.64s' (did you mean '%s'?)",
					 key, near);
		return util_fail(err, errlen, "unknown option '%.64s': %s", key,
				 hint ? hint : "keys are the long option names of --help");
	}
	if (d->scope == OPT_CMDLINE_ONLY)
		return util_fail(err, errlen, "'%s' is only valid on the command line", key);
	if (*value == '\0')
		return util_fail(err, errlen, "expected a value after '=', as in '%s = %s'", key,
				 d->argname ? d->argname : "yes");
	if (strlen(value) >= CFG_VALUE_LEN)
		return util_fail(err, errlen, "expected a value of at most %d characters, got %zu",
				 CFG_VALUE_LEN - 1, strlen(value));
	*is_entry = true;
	return 0;
}

/* The pass before rte_cfgfile: every line of the file must be blank, a
 * comment, a section or an entry (rte_cfgfile skips a line without '='
 * without a word). Fills lines[] with the line number of each entry, in
 * the order rte_cfgfile returns them. */
static int
config_check_file(const char *path, unsigned **lines, unsigned *nlines, char *err,
		  size_t errlen)
{
	char *buf = NULL, why[256];
	size_t cap = 0, room = 0;
	unsigned lineno = 0;
	struct stat st;
	ssize_t len;
	bool entry;
	FILE *f;
	int fd, rc = -1;

	*lines = NULL;
	*nlines = 0;
	/* O_NONBLOCK: a FIFO must not block the start; it is refused below. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return util_fail(err, errlen, "config file %s: cannot open it: %s", path,
				 strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return util_fail(err, errlen, "config file %s: cannot read it: %s", path,
				 strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return util_fail(err, errlen,
					 "config file %s: cannot read it: %s (give the path "
					 "of an INI file)", path, strerror(EISDIR));
		return util_fail(err, errlen,
				 "config file %s: not a regular file (it is read twice: "
				 "give a file, not a pipe or a device)", path);
	}
	f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return util_fail(err, errlen, "config file %s: cannot read it: %s", path,
				 strerror(errno));
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		lineno++;
		if (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (strlen(buf) != (size_t)len) {
			util_fail(err, errlen, "config file %s, line %u: expected text, got a NUL byte",
				  path, lineno);
			goto out;
		}
		if (config_check_line(buf, &entry, why, sizeof(why)) < 0) {
			util_fail(err, errlen, "config file %s, line %u: %s", path, lineno, why);
			goto out;
		}
		if (!entry)
			continue;
		if (*nlines == room) {
			unsigned *more;

			room = room ? 2 * room : 16;
			more = realloc(*lines, room * sizeof(**lines));
			if (more == NULL) {
				util_fail(err, errlen, "config file %s: out of memory", path);
				goto out;
			}
			*lines = more;
		}
		(*lines)[(*nlines)++] = lineno;
	}
	if (ferror(f)) {
		util_fail(err, errlen, "config file %s: cannot read it: %s", path,
			  strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(buf);
	fclose(f);
	if (rc < 0) {
		free(*lines);
		*lines = NULL;
	}
	return rc;
}

int
options_load_config(struct options *o, const char *path, char *err, size_t errlen)
{
	struct rte_cfgfile_parameters params = {
		.comment_character = '#',
	};
	struct rte_cfgfile_entry *entries = NULL;
	char (*names)[CFG_NAME_LEN] = NULL;
	char **name_ptrs = NULL;
	struct rte_cfgfile *cfg;
	unsigned *lines, nlines, next = 0, *first_line;
	size_t nrows;
	const struct opt_desc *table = options_table(&nrows);
	char where[320];
	int nsec, n, i, k, rc = -1;

	if (config_check_file(path, &lines, &nlines, err, errlen) < 0)
		return -1;
	/* the line each option was first set on: a second one is refused */
	first_line = calloc(nrows, sizeof(*first_line));
	if (first_line == NULL) {
		free(lines);
		return util_fail(err, errlen, "config file %s: out of memory", path);
	}
	cfg = rte_cfgfile_load_with_params(path, CFG_FLAG_GLOBAL_SECTION, &params);
	if (cfg == NULL) {
		free(lines);
		return util_fail(err, errlen,
				 "config file %s: rte_cfgfile could not load it (its log line "
				 "above says why)", path);
	}

	nsec = rte_cfgfile_num_sections(cfg, NULL, 0);
	names = calloc(nsec > 0 ? nsec : 1, CFG_NAME_LEN);
	name_ptrs = calloc(nsec > 0 ? nsec : 1, sizeof(char *));
	if (names == NULL || name_ptrs == NULL) {
		util_fail(err, errlen, "config file %s: out of memory", path);
		goto out;
	}
	for (i = 0; i < nsec; i++)
		name_ptrs[i] = names[i];
	nsec = rte_cfgfile_sections(cfg, name_ptrs, nsec);

	/* The sections and keys were checked line by line; the values are
	 * the options' own parsers' business. */
	for (i = 0; i < nsec; i++) {
		n = rte_cfgfile_section_num_entries_by_index(cfg, names[i], i);
		if (n <= 0)
			continue;
		free(entries);
		entries = calloc(n, sizeof(*entries));
		if (entries == NULL) {
			util_fail(err, errlen, "config file %s: out of memory", path);
			goto out;
		}
		n = rte_cfgfile_section_entries_by_index(cfg, i, names[i], entries, n);
		for (k = 0; k < n; k++, next++) {
			const struct opt_desc *d = options_find(entries[k].name);

			if (next < nlines)
				snprintf(where, sizeof(where), "config file %s, line %u: ", path,
					 lines[next]);
			else
				snprintf(where, sizeof(where), "config file %s: ", path);
			if (d == NULL || d->scope == OPT_CMDLINE_ONLY) {
				util_fail(err, errlen, "%sunexpected key '%s'", where,
					  entries[k].name);
				goto out;
			}
			/* Two `port =` lines would leave the last in force without a
			 * word: a file says each option once (eal adds its words). */
			if (d->parse != opt_eal && first_line[d - table] != 0) {
				util_fail(err, errlen, "%s'%s' is set again (first on line %u): "
					  "give each option once", where, entries[k].name,
					  first_line[d - table]);
				goto out;
			}
			first_line[d - table] = next < nlines ? lines[next] : 1;
			if (options_apply(o, d, entries[k].value, where, err, errlen) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(first_line);
	free(lines);
	free(entries);
	free(names);
	free(name_ptrs);
	rte_cfgfile_close(cfg);
	return rc;
}

