/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached's own options: the engine, its eviction and segments, the heap
 * and its file (warm restart), the network stack's choice, the EAL words,
 * UDP's limits, who may connect and for how long, the admin and metrics
 * ports, the miss-ratio curve; and --config. One parser per row of the
 * option table (options_table.c).
 */
#include "options_private.h"

#include <stdio.h>
#include <string.h>

#include "util/util_err.h"

int
opt_config(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (strlen(arg) >= sizeof(o->config_file))
		return util_fail(err, errlen, "path longer than %zu bytes",
			    sizeof(o->config_file) - 1);
	strcpy(o->config_file, arg);
	return 0;
}

int
opt_stack(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "posix", "native", NULL };
	int i = options_parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->stack = i == 0 ? STACK_POSIX : STACK_NATIVE;
	return 0;
}

int
opt_eviction(struct options *o, const char *arg, char *err, size_t errlen)
{
	const struct engine_eviction_policy *p = engine_eviction_by_name(arg);
	char names[128];

	if (p == NULL)
		return util_fail(err, errlen, "'%s' is not one of %s", arg,
				 engine_eviction_names(names, sizeof(names)));
	o->eviction = p->id;
	return 0;
}

int
opt_segment_size(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t v;

	if (options_parse_size(arg, 1, &v) < 0 || v == 0)
		return util_fail(err, errlen,
			    "'%s' is not a size (bytes, or a number with a K, M or G suffix)",
			    arg);
	o->segment_size = v;
	return 0;
}

int
opt_engine(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "seg", "baseline", NULL };
	int i = options_parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->engine = i == 0 ? SERVER_ENGINE_SEG : SERVER_ENGINE_BASELINE;
	return 0;
}

int
opt_heap(struct options *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = { "auto", "anon", "hugepage", "file", NULL };
	static const enum server_heap values[] = {
		HEAP_AUTO, HEAP_ANON, HEAP_HUGEPAGE, HEAP_FILE,
	};
	int i = options_parse_choice(arg, names, err, errlen);

	if (i < 0)
		return -1;
	o->heap = values[i];
	return 0;
}

int
opt_heap_file(struct options *o, const char *arg, char *err, size_t errlen)
{
	if (arg[0] == '\0')
		return util_fail(err, errlen, "empty path");
	if (strlen(arg) >= sizeof(o->heap_file))
		return util_fail(err, errlen, "path longer than %zu bytes",
			    sizeof(o->heap_file) - 1);
	strcpy(o->heap_file, arg);
	o->heap = HEAP_FILE;
	return 0;
}

int
opt_restart_threads(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 256, &v, err, errlen) < 0)
		return -1;
	o->restart_threads = (unsigned)v;
	return 0;
}

int
opt_restart_verify(struct options *o, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	o->restart_verify = true;
	return 0;
}

/* --eal, repeatable: the words gather in one blank-separated string. */
int
opt_eal(struct options *o, const char *arg, char *err, size_t errlen)
{
	size_t have = strlen(o->eal);

	if (have + 1 + strlen(arg) >= sizeof(o->eal))
		return util_fail(err, errlen, "EAL options longer than %zu bytes in all",
				 sizeof(o->eal) - 1);
	snprintf(o->eal + have, sizeof(o->eal) - have, "%s%s", have ? " " : "", arg);
	return 0;
}

int
opt_hash_grow(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 1, 16, &v, err, errlen) < 0)
		return -1;
	if (v & (v - 1))
		return util_fail(err, errlen, "--hash-grow %llu: must be 1, 2, 4, 8 or 16", v);
	o->hash_grow = (unsigned)v;
	return 0;
}

int
opt_udp_writes(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->udp_writes, err, errlen);
}

int
opt_udp_reply_max(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 64ull << 20, &v, err, errlen) < 0)
		return -1;
	o->udp_reply_max = (size_t)v;
	return 0;
}

int
opt_allow(struct options *o, const char *arg, char *err, size_t errlen)
{
	char list[STACK_ALLOW_MAX * 19 + 1], *save = NULL, *net;

	if (strlen(arg) >= sizeof(list))
		return util_fail(err, errlen, "list longer than %zu bytes", sizeof(list) - 1);
	strcpy(list, arg);
	o->n_allow = 0;
	for (net = strtok_r(list, ",", &save); net != NULL; net = strtok_r(NULL, ",", &save)) {
		struct stack_cidr *cidr = &o->allow[o->n_allow];
		unsigned prefix;
		uint32_t addr;

		if (!options_parse_ipv4(net, false, &addr, &prefix))
			return util_fail(err, errlen,
					 "'%s' is not an IPv4 address or network, "
					 "e.g. 198.18.0.0/15",
					 net);
		if (o->n_allow == STACK_ALLOW_MAX)
			return util_fail(err, errlen, "more than %d networks", STACK_ALLOW_MAX);
		cidr->mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
		cidr->addr = addr & cidr->mask;
		o->n_allow++;
	}
	if (o->n_allow == 0)
		return util_fail(err, errlen, "empty list");
	return 0;
}

int
opt_max_conns_per_source(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, MAX_CONNS_MAX, &v, err, errlen) < 0)
		return -1;
	o->max_conns_per_source = (unsigned)v;
	return 0;
}

int
opt_request_timeout(struct options *o, const char *arg, char *err, size_t errlen)
{
	unsigned long long v;

	if (options_parse_uint(arg, 0, 86400, &v, err, errlen) < 0)
		return -1;
	o->request_timeout = (unsigned)v;
	return 0;
}

int
opt_admin_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_port(arg, &o->admin_port, err, errlen);
}

int
opt_metrics_port(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_port(arg, &o->metrics_port, err, errlen);
}

int
opt_no_mrc(struct options *o, const char *arg, char *err, size_t errlen)
{
	return options_parse_flag(arg, &o->mrc_disabled, err, errlen);
}
