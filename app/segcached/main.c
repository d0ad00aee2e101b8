/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached: a memcached-compatible cache server.
 *
 *   segcached [EAL options] -- [segcached options]
 *
 * Start-up order: segcached's options (bad ones exit 64 before anything
 * starts), the EAL, the heap and engine, the network stack; then this
 * thread becomes the control thread until a signal or `shutdown` stops the
 * server, which then tears everything down in reverse and exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_lcore.h>

#include "eal_args.h"
#include "log.h"
#include "options.h"
#include "server.h"

RTE_LOG_REGISTER(segcached_logtype, segcached.app, NOTICE);

#ifndef SEGCACHED_VERSION
#define SEGCACHED_VERSION "unknown"
#endif

/* What `version` and `stats` report. Clients and tools gate features on
 * the memcached version they see (memccapable, for one, expects pre-1.6
 * error replies from anything below 1.6), so the reply starts with the
 * memcached release whose protocol we follow, then names us the way
 * memcached's own git builds add a suffix ("1.6.18-5-gabcdef"). */
#define MEMCACHED_PROTOCOL_VERSION "1.6.18"
#define PROTOCOL_VERSION_STRING MEMCACHED_PROTOCOL_VERSION "-segcached-" SEGCACHED_VERSION

static const char *
prog_name(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	return slash ? slash + 1 : argv0;
}

/* `segcached --help` and `segcached -V` work without the `--`. */
static bool
is_help_or_version(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 ||
	       strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0;
}

static void
fill_cmd_settings(struct server *srv)
{
	const struct options *o = &srv->opt;
	struct cmd_settings *s = &srv->cmd;

	memset(s, 0, sizeof(*s));
	s->engine = srv->es.engine;
	s->item_max = o->item_max;
	s->cas_disabled = o->cas_disabled;
	s->flush_disabled = o->flush_disabled;
	s->shutdown_enabled = o->shutdown_enabled;
	s->verbosity = o->verbosity;
	s->version = PROTOCOL_VERSION_STRING;
	s->server_stats = server_stats_fill;
	s->stats_conns = server_stats_conns;
	s->server_stats_arg = srv;
}

static int
start_posix(struct server *srv)
{
	struct posix_stack_config pc = {
		.listen = srv->opt.listen,
		.tcp_port = srv->opt.tcp_port,
		.udp_port = srv->opt.udp_port,
		.threads = srv->opt.threads,
		.max_conns = srv->opt.max_conns,
		.backlog = srv->opt.backlog,
		.engine = srv->es.engine,
		.cmd = &srv->cmd,
		.on_shutdown = control_request_shutdown,
		.on_shutdown_arg = srv,
	};
	char err[512];
	bool bind_failed;
	const char *name;
	unsigned i;

	srv->stack = posix_stack_create(&pc, err, sizeof(err), &bind_failed);
	if (srv->stack == NULL) {
		APP_LOG(ERR, "%s", err);
		return bind_failed ? EX_OSERR : EXIT_FAILURE;
	}
	if (posix_stack_start(srv->stack, err, sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		return EXIT_FAILURE;
	}
	for (i = 0; (name = posix_stack_socket_name(srv->stack, i)) != NULL; i++)
		APP_LOG(NOTICE, "listening on %s", name);
	return 0;
}

static int
start_native(struct server *srv)
{
	const struct options *o = &srv->opt;
	struct native_config nc = {
		.ip = o->ip_addr,
		.prefix_len = o->ip_prefix,
		.port_id = o->port_id,
		.queues = o->queues,
		.rx_desc = o->rx_desc,
		.tx_desc = o->tx_desc,
		.mtu = o->mtu,
		.link_timeout_ms = o->link_timeout * 1000u,
		.tcp_port = o->tcp_port,
		.udp_port = o->udp_port,
		.max_conns = o->max_conns,
		.idle_timeout_s = o->idle_timeout,
		.item_max = o->item_max,
		.engine = srv->es.engine,
		.cmd = &srv->cmd,
		.on_shutdown = control_request_shutdown,
		.on_shutdown_arg = srv,
	};
	char err[1024];

	srv->native = native_create(&nc, err, sizeof(err));
	if (srv->native == NULL) {
		APP_LOG(ERR, "%s", err);
		return EXIT_FAILURE;
	}
	if (native_start(srv->native, err, sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		return EXIT_FAILURE;
	}
	APP_LOG(NOTICE, "native stack: %s on port %u (%s), %u worker lcore(s), TCP port %u, UDP port %u",
		o->ip, srv->native->port.port_id, srv->native->port.name,
		srv->native->nworkers, o->tcp_port, o->udp_port);
	return 0;
}

/* Free hugepages of any size, from sysfs; -1 when it cannot be read. */
static long
free_hugepages(void)
{
	static const char *const sizes[] = { "hugepages-2048kB", "hugepages-1048576kB" };
	long total = -1;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char path[128];
		FILE *f;
		long n;

		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/free_hugepages", sizes[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &n) == 1)
			total = (total < 0 ? 0 : total) + n;
		fclose(f);
	}
	return total;
}

/* Does the EAL command line have this option? */
static bool
eal_has(const struct eal_args *ea, const char *opt)
{
	for (int i = 1; i < ea->eal_argc; i++)
		if (strcmp(ea->eal_argv[i], opt) == 0)
			return true;
	return false;
}

/* Upper bound of the lcores the EAL will run, from -l/--lcores/-c, else
 * every CPU: enough to size --no-huge memory before the EAL starts. */
static unsigned
eal_lcores_upper(const struct eal_args *ea)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	for (int i = 1; i < ea->eal_argc; i++) {
		const char *a = ea->eal_argv[i];
		const char *v = i + 1 < ea->eal_argc ? ea->eal_argv[i + 1] : "";
		unsigned n = 0;

		/* -l LIST, -lLIST, --lcores LIST, --lcores=LIST; "(0-3)@..." too */
		if (strncmp(a, "--lcores=", 9) == 0)
			a = "--lcores", v = ea->eal_argv[i] + 9;
		else if (strncmp(a, "-l", 2) == 0 && a[2] != '\0' && a[1] != '-')
			a = "-l", v = ea->eal_argv[i] + 2;
		if (strcmp(a, "-l") == 0 || strcmp(a, "--lcores") == 0) {
			/* "0-3,5": count the numbers each range covers. */
			const char *p = v;

			while (*p == '(')
				p++;
			while (*p) {
				char *end;
				unsigned long lo = strtoul(p, &end, 10), hi = lo;

				if (end == p)
					break;
				p = end;
				if (*p == '-') {
					hi = strtoul(p + 1, &end, 10);
					p = end;
				}
				n += hi >= lo ? (unsigned)(hi - lo + 1) : 1;
				while (*p && *p != ',')
					p++;
				if (*p == ',')
					p++;
			}
			if (n > 0)
				return n;
		} else if (strcmp(a, "-c") == 0) {
			unsigned long long mask = strtoull(v, NULL, 16);

			return (unsigned)__builtin_popcountll(mask);
		}
	}
	return ncpu > 0 ? (unsigned)ncpu : 1;
}

/* EAL memory for --no-huge: the baseline engine's items, and per lcore
 * the stack's connection buffers and the mbuf pool. */
static unsigned
eal_memory_mb(const struct options *o, const struct eal_args *ea)
{
	unsigned mb = 0;

	if (o->engine == SERVER_ENGINE_BASELINE)
		mb += (unsigned)(o->memory >> 20) * 2 + 128;
	if (o->stack == STACK_NATIVE) {
		/* As native_stack.c sizes each worker: connection slots of
		 * 96 KiB of TCP buffers (plus their state), and the pool. */
		unsigned workers = RTE_MAX(eal_lcores_upper(ea), 2u) - 1;
		uint64_t share = 2 * (uint64_t)o->max_conns / workers + 64;
		uint64_t slots = RTE_MIN(share, (uint64_t)o->max_conns) + o->max_conns / 8 + 16;
		uint64_t per = slots * (64 + 32 + 4) * 1024 + 16384ull * 2600;

		mb += (unsigned)((workers * per) >> 20) + 128;
	}
	return mb;
}

int
main(int argc, char **argv)
{
	static struct server srv; /* large; and reachable from callbacks */
	const char *prog = prog_name(argv[0]);
	struct eal_args ea;
	char err[512];
	int rc;

	if (eal_args_split(&ea, argc, argv) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_FAILURE;
	}
	options_defaults(&srv.opt);
	if (!ea.has_separator && argc == 2 && is_help_or_version(argv[1])) {
		ea.app_argv[ea.app_argc++] = argv[1];
		ea.eal_argc = 1;
	}
	if (options_parse(&srv.opt, ea.app_argc, ea.app_argv, err, sizeof(err)) < 0 ||
	    (!srv.opt.help && !srv.opt.version &&
	     options_finalize(&srv.opt, err, sizeof(err)) < 0)) {
		fprintf(stderr, "%s: %s\nTry '%s -- --help'.\n", prog, err, prog);
		eal_args_free(&ea);
		return OPTIONS_EXIT_USAGE;
	}
	if (srv.opt.help) {
		options_usage(stdout, prog);
		eal_args_free(&ea);
		return 0;
	}
	if (srv.opt.version) {
		printf("segcached %s\n", SEGCACHED_VERSION);
		eal_args_free(&ea);
		return 0;
	}
	/* Before the EAL starts its threads, so they inherit the mask. */
	control_block_signals();
	srv.control_thread = pthread_self();

	/* The baseline engine allocates its items from the EAL: give it the
	 * budget plus room for its index when the EAL runs on --no-huge. */
	eal_args_add_defaults(&ea, srv.opt.stack == STACK_POSIX, eal_memory_mb(&srv.opt, &ea));
	rc = rte_eal_init(ea.eal_argc, ea.eal_argv);
	if (rc < 0) {
		bool no_huge = eal_has(&ea, "--no-huge");

		/* The EAL fails with EACCES when it finds no hugepages. */
		if (!no_huge && rte_errno == EACCES && free_hugepages() <= 0)
			fprintf(stderr,
				"%s: cannot initialise the DPDK EAL: no free hugepages.\n"
				"  Reserve some, e.g. `dpdk-hugepages.py -p 2M --setup 2G` (or\n"
				"  echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages),\n"
				"  or add the EAL option --no-huge for a try-out (see docs/operations.md).\n",
				prog);
		else
			fprintf(stderr,
				"%s: cannot initialise the DPDK EAL: %s\n"
				"  EAL options go before '--', segcached's after it; on a host without\n"
				"  hugepages add --no-huge (see docs/operations.md).\n",
				prog, rte_strerror(rte_errno));
		eal_args_free(&ea);
		return EXIT_FAILURE;
	}
	eal_args_free(&ea);
	if (native_telemetry_register() != 0)
		APP_LOG(WARNING, "telemetry commands /segcached/* could not be registered");
	/* -v overrides the level; without it --log-level (EAL) decides. */
	if (srv.opt.verbosity > 0)
		control_set_verbosity(srv.opt.verbosity);
	clock_gettime(CLOCK_MONOTONIC, &srv.started_mono);

	if (engine_setup_create(&srv.es, &srv.opt, err, sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		rte_eal_cleanup();
		return EXIT_FAILURE;
	}
	{
		struct engine_stats st;

		engine_stats(srv.es.engine, &st);
		srv.segment_size = st.seg_size;
	}
	fill_cmd_settings(&srv);
	rc = srv.opt.stack == STACK_NATIVE ? start_native(&srv) : start_posix(&srv);
	if (rc != 0) {
		native_destroy(srv.native);
		posix_stack_destroy(srv.stack);
		engine_setup_destroy(&srv.es);
		rte_eal_cleanup();
		return rc;
	}
	native_telemetry_attach(&srv);
	APP_LOG(NOTICE,
		"segcached %s ready: engine %s, memory %zu MiB, item size max %zu, %u %s, max %u connections",
		SEGCACHED_VERSION, srv.es.engine->ops->name,
		srv.opt.memory >> 20, srv.opt.item_max,
		srv.native ? srv.native->nworkers : srv.opt.threads,
		srv.native ? "worker lcores" : "posix threads", srv.opt.max_conns);

	(void)control_run(&srv);

	native_telemetry_detach();
	native_destroy(srv.native);
	srv.native = NULL;
	posix_stack_destroy(srv.stack);
	srv.stack = NULL;
	engine_setup_destroy(&srv.es);
	rte_eal_cleanup();
	return 0;
}
