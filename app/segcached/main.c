/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached: a memcached-compatible cache server.
 *
 *   segcached [segcached options]
 *   segcached [EAL options] -- [segcached options]
 *
 * (eal/eal_args.h tells the two lines apart.) Start-up order: segcached's
 * options and the EAL's core list (bad ones exit 64 before anything
 * starts), the EAL (64 when it refuses its options), the heap and engine,
 * the network stack; then this thread becomes the control thread until a
 * signal or `shutdown` stops the server, which then tears everything down
 * in reverse and exits 0. SIGINT or SIGTERM before the engine is up
 * exits 0 at once, saving nothing; during a warm restart's load (which can
 * take long) it stops the load, which leaves the heap file as it found
 * it, and then exits 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
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

#include "control.h"
#include "eal/eal_args.h"
#include "eal/eal_start.h"
#include "eal/eal_trim.h"
#include "log/log.h"
#include "observe/observe.h"
#include "options/options.h"
#include "server/process_limits.h"
#include "server/process_memory.h"
#include "server/server.h"

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
	s->udp_writes = o->udp_writes;
	s->udp_reply_max = o->udp_reply_max;
	s->admin_all = o->admin_all;
	s->verbosity = o->verbosity;
	s->dump_disabled = o->dump_disabled;
	s->reqs_per_event = o->reqs_per_event;
	s->trace = log_trace;
	s->version = PROTOCOL_VERSION_STRING;
	s->server_stats = server_stats_fill;
	s->stats_conns = server_stats_conns;
	s->stats_mrc = server_stats_mrc;
	s->stats_hotkeys = server_stats_hotkeys;
	s->server_stats_arg = srv;
}

/* The --stack words, as the stacks name themselves (drivers/net/stack.h). */
static const char *const stack_names[] = {
	[STACK_POSIX] = "posix",
	[STACK_NATIVE] = "native",
};

/* Creates and starts the stack --stack chose; from here on the server
 * calls it through the stack interface only. */
static int
start_stack(struct server *srv)
{
	const struct options *o = &srv->opt;
	const struct stack_ops *ops = stack_find(stack_names[o->stack]);
	struct stack_config sc = {
		.tcp_port = o->tcp_port,
		.udp_port = o->udp_port,
		.max_conns = o->max_conns,
		.engine = srv->es.engine,
		.cmd = &srv->cmd,
		.on_shutdown = control_request_shutdown,
		.on_shutdown_arg = srv,
		.allow = o->allow,
		.n_allow = o->n_allow,
		.max_conns_per_source = o->max_conns_per_source,
		.request_timeout_s = o->request_timeout,
		.idle_timeout_s = o->idle_timeout,
		.admin_port = o->admin_port,
		.admin_listen = o->admin_listen,
		.admin_idle_timeout_s = o->admin_idle_timeout,
	};
	char err[1024], line[256];
	bool bind_failed = false;
	static cpu_set_t cpus[RTE_MAX_LCORE];
	unsigned lcore;

	if (o->stack == STACK_POSIX) {
		struct stack_posix_config *pc = &sc.posix;

		pc->listen = o->listen;
		pc->threads = o->threads;
		pc->backlog = o->backlog;
		pc->unix_path = o->unix_path[0] ? o->unix_path : NULL;
		pc->unix_mask = o->unix_mask;
		pc->buffer_memory = o->tcp_buffer_memory_given ? o->tcp_buffer_memory :
								 STACK_BUFFER_MEMORY_DEFAULT;
		/* Worker i on the i-th EAL lcore (main lcore included, in lcore
		 * id order), or every worker on every CPU the process started
		 * with. */
		if (srv->lcores_pinned) {
			RTE_LCORE_FOREACH(lcore)
				cpus[pc->ncpus++] = rte_lcore_cpuset(lcore);
		} else if (CPU_COUNT(&srv->startup_cpus) > 0) {
			cpus[pc->ncpus++] = srv->startup_cpus;
		}
		pc->cpus = cpus;
	} else {
		sc.native = (struct stack_native_config){
			.ip = o->ip_addr,
			.prefix_len = o->ip_prefix,
			.port_id = o->port_id,
			.queues = o->queues,
			.rx_desc = o->rx_desc,
			.tx_desc = o->tx_desc,
			.mtu = o->mtu,
			.link_timeout_ms = o->link_timeout * 1000u,
			.rss_key = o->rss_key_len ? o->rss_key : NULL,
			.rss_key_len = o->rss_key_len,
			.udp_any_source = o->udp_any_source,
			.no_cksum_offload = o->no_cksum_offload,
			.no_tso = o->no_tso,
			.tcp_buffer_memory = o->tcp_buffer_memory,
		};
	}
	srv->stack = stack_create(ops, &sc, err, sizeof(err), &bind_failed);
	if (srv->stack == NULL) {
		APP_LOG(ERR, "%s", err);
		return bind_failed ? EX_OSERR : EXIT_FAILURE;
	}
	/* Before the stack serves: a client that got an answer finds the
	 * telemetry's /segcached/stats answering too. */
	server_telemetry_attach(srv);
	if (stack_start(srv->stack, err, sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		return EXIT_FAILURE;
	}
	for (unsigned i = 0; stack_describe(srv->stack, i, line, sizeof(line)) != NULL; i++)
		APP_LOG(NOTICE, "%s", line);
	/* what the admin port lets whoever reaches it do (docs/operations.md) */
	if (o->admin_port != 0)
		APP_LOG(NOTICE, "admin port %u on %s: %s; at most %d connections, %d from one "
			"address, closed after %u s of silence (0: never)", o->admin_port,
			o->admin_listen, o->admin_all ?
			"every administration command: counters, the key lists (stats "
			"cachedump, stats hotkeys, lru_crawler metadump), stats conns and reset, "
			"cache_memlimit, verbosity, shutdown (with -A)" :
			"counters only (stats and its subcommands but cachedump, hotkeys, "
			"conns and reset; version; quit): what lists keys or changes the "
			"server needs --admin-commands all", STACK_ADMIN_CONNS,
			STACK_ADMIN_CONNS_PER_SOURCE, o->admin_idle_timeout);
	return 0;
}

/* EAL memory for --no-huge: the baseline engine's items, and per lcore
 * the stack's connection buffers and the mbuf pool. */
static unsigned
eal_memory_mb(const struct options *o, const struct eal_args *ea)
{
	const struct stack_ops *ops = stack_find(stack_names[o->stack]);
	unsigned mb = 0;

	if (o->engine == SERVER_ENGINE_BASELINE)
		mb += (unsigned)(o->memory >> 20) * 2 + 128;
	if (ops->eal_memory_mb != NULL)
		mb += ops->eal_memory_mb(o->max_conns, o->tcp_buffer_memory,
					 eal_args_lcores_max(ea));
	return mb;
}

/* The most EAL memory the stack may take (its mbuf pools, connection
 * slots and TCP buffers; hugepages when the EAL has them), from the
 * figure it gives for --no-huge. */
static size_t
stack_memory_bytes(const struct options *o)
{
	const struct stack_ops *ops = stack_find(stack_names[o->stack]);

	/* The posix stack asks the EAL for a little memory (posix_stack.c)
	 * for the EAL's own tables; its sockets' buffers are the kernel's. */
	if (ops->eal_memory_mb == NULL || o->stack == STACK_POSIX)
		return 0;
	return (size_t)ops->eal_memory_mb(o->max_conns, o->tcp_buffer_memory,
					  rte_lcore_count()) << 20;
}

/* What the process holds beyond -m's pages written so far, at start: what
 * `ps` shows of a server that stores nothing yet, by part. */
static void
log_process_memory(const struct server *srv)
{
	struct process_memory m;

	if (process_memory_read(&m) < 0)
		return;
	APP_LOG(NOTICE,
		"resident now: %.1f MiB = the program and its libraries %.1f MiB + anonymous "
		"%.1f MiB (C heap %.1f MiB in use, thread stacks, the %s; the heap's "
		"pages come as they are written)",
		m.rss / 1048576.0, m.file / 1048576.0, m.anon / 1048576.0,
		m.c_heap / 1048576.0,
		srv->eal_running ? "EAL's memory" : "DPDK EAL not started");
}

/* What the server's memory is made of, at start (`stats settings` has the
 * same figures): -m's parts, and the stack's memory outside -m. */
static void
log_sizing(const struct server *srv)
{
	struct engine_stats st;

	char stack[400];

	engine_stats(srv->es.engine, &st);
	if (srv->es.stack_bytes != 0)
		snprintf(stack, sizeof(stack),
			 "up to %zu MiB of %s (mbuf pools, connection slots, TCP buffers)",
			 srv->es.stack_bytes >> 20,
			 rte_eal_has_hugepages() ? "hugepages" : "EAL memory");
	else if (srv->stack->ops->sizing == NULL ||
		 srv->stack->ops->sizing(srv->stack, stack, sizeof(stack)) == NULL)
		snprintf(stack, sizeof(stack), "kernel sockets (their buffers are the kernel's)");
	/* lib/baseline has no segments: its items come from the EAL's heap
	 * as they are stored, up to what -m leaves beside its table */
	if (srv->opt.engine == SERVER_ENGINE_BASELINE) {
		APP_LOG(NOTICE,
			"sizing: -m %zu MiB = items up to %" PRIu64 " MiB (EAL memory, taken as "
			"they are stored) + hash table %" PRIu64 " MiB; beside it, for -c %u, "
			"the network stack: %s",
			srv->opt.memory >> 20,
			(srv->opt.memory > st.table_bytes ? srv->opt.memory - st.table_bytes : 0) >> 20,
			st.table_bytes >> 20, srv->opt.max_conns, stack);
		return;
	}
	APP_LOG(NOTICE,
		"sizing: -m %zu MiB = segments %" PRIu64 " MiB (%s) + hash table %" PRIu64
		" MiB + segment headers %" PRIu64 " MiB; beside it, for -c %u, the network "
		"stack: %s",
		srv->opt.memory >> 20, st.heap_bytes >> 20,
		srv->es.heap.addr != NULL ? mem_region_kind_name(srv->es.heap.kind) : "EAL memory",
		st.table_bytes >> 20, st.meta_bytes >> 20, srv->opt.max_conns, stack);
}

/* On a line without `--`, -l is memcached's listen list; a value of
 * digits, '-' and ',' only ("0", "0-3", "0,2-5") is a DPDK core list
 * written the way lines before `--` existed took it, and "0" would listen
 * on every address. */
static bool
listen_is_core_list(const char *listen)
{
	return *listen != '\0' && strspn(listen, "0123456789-,") == strlen(listen);
}

/* Start-up watch: the control thread waits for signals only once the
 * server is up, and until then SIGINT and SIGTERM stay blocked (the EAL's
 * and the engine's threads inherit that mask). A thread of its own takes
 * them while the EAL and the engine start, a warm restart's load from the
 * heap file included, and stops the process at once: an operator's stop
 * must not wait for a load of minutes. SIGUSR2 from main() ends the watch;
 * a signal after it waits for control_run(), which stops gracefully. */
static void *
startup_watch(void *arg)
{
	sigset_t set;
	siginfo_t info;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR2);
	do
		sig = sigwaitinfo(&set, &info);
	while (sig < 0 && errno == EINTR);
	if (sig != SIGINT && sig != SIGTERM)
		return NULL;
	if (!engine_setup_ask_stop()) {
		APP_LOG(NOTICE, "%s from pid %ld during start-up: stopping now (nothing is saved)",
			strsignal(sig), (long)info.si_pid);
		_exit(0);
	}
	/* Exiting now could leave the heap file half loaded: the load stops
	 * at its next chunk of work and main() exits after it. */
	APP_LOG(NOTICE, "%s from pid %ld during start-up: stopping the load from the heap "
		"file (the file keeps the saved cache)", strsignal(sig), (long)info.si_pid);
	return NULL;
}

static int
startup_watch_begin(pthread_t *t)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return pthread_create(t, NULL, startup_watch, NULL);
}

static void
startup_watch_end(pthread_t t)
{
	pthread_kill(t, SIGUSR2);
	pthread_join(t, NULL);
}

/* How far start-up got: what clean_up() undoes, in reverse. */
enum startup_reached {
	REACHED_NOTHING,
	REACHED_EAL_ARGS, /* the command line split: eal_args_free() */
	REACHED_EAL,      /* the EAL runs (its arguments freed): rte_eal_cleanup() */
	REACHED_ENGINE,   /* the engine and its heap: saved, then destroyed */
	REACHED_STACK,    /* the curve started, the stack created (or not) and
			   * maybe started: destroyed, the curve stopped */
	REACHED_SERVING,  /* the stack serves, /metrics and telemetry are up:
			   * stopped and detached first */
};

/* Start-up's state, from step to step and for clean_up(). */
struct startup {
	struct server srv;
	const char *prog;
	int argc;
	char **argv;
	struct eal_args ea;
	struct eal_trim trim;
	pthread_t watch;
	enum startup_reached reached;
};

/* A start-up step returns STEP_NEXT to go on, or the status to exit with. */
#define STEP_NEXT (-1)

/* The command line, split into the EAL's words and segcached's. */
static int
split_command_line(struct startup *s)
{
	if (eal_args_split(&s->ea, s->argc, s->argv) < 0) {
		fprintf(stderr, "%s: out of memory\n", s->prog);
		return EXIT_FAILURE;
	}
	s->reached = REACHED_EAL_ARGS;
	return STEP_NEXT;
}

/* segcached's options, the config file's first: a bad one exits 64 with
 * the reason and a hint. */
static int
read_options(struct startup *s)
{
	struct options *o = &s->srv.opt;
	const struct eal_args *ea = &s->ea;
	char err[512];

	options_defaults(o);
	if (options_parse(o, ea->app_argc, ea->app_argv, err, sizeof(err)) < 0 ||
	    (!o->help && !o->version && options_finalize(o, err, sizeof(err)) < 0)) {
		fprintf(stderr, "%s: %s\n", s->prog, err);
		/* "unknown option -x": the EAL's letters are not read here. A
		 * letter memcached defines is never pointed to the EAL, where
		 * it means something else (-n memory channels, -s service
		 * cores): memcached's value must not become DPDK's. */
		if (!ea->has_separator && strncmp(err, "unknown option -", 16) == 0 &&
		    err[16] != '-' && err[16] != '\0' && err[17] == '\0' &&
		    !options_memcached_letter(err[16]))
			fprintf(stderr,
				"  If -%c is an EAL option: on a line without '--' give it "
				"with --eal '-%c ...'.\n", err[16], err[16]);
		fprintf(stderr, "Try '%s --help'.\n", s->prog);
		return OPTIONS_EXIT_USAGE;
	}
	if (!ea->has_separator && listen_is_core_list(o->listen)) {
		fprintf(stderr,
			"%s: -l %s: memcached's -l is the addresses to listen on, and this is "
			"a core list: give cores with --lcores %s (or -l before a '--'), every "
			"address with -l 0.0.0.0\n",
			s->prog, o->listen, o->listen);
		return OPTIONS_EXIT_USAGE;
	}
	return STEP_NEXT;
}

/* -i, as memcached's prints its own and libevent's licence. */
static const char segcached_license[] =
	"Copyright (c) 2026 The segcached authors. BSD-3-Clause licence\n"
	"(SPDX-License-Identifier: BSD-3-Clause, in every source file): redistribution\n"
	"and use in source and binary forms, with or without modification, are\n"
	"permitted provided that the copyright notice, the conditions and the\n"
	"disclaimer are retained, and the authors' names are not used to endorse\n"
	"derived products without permission. Provided \"as is\", without warranty.\n"
	"Built on DPDK (BSD-3-Clause), libpmem2 (BSD-3-Clause) and\n"
	"libmicrohttpd (LGPL-2.1-or-later).\n";

/* memcached's options taken and ignored, one line each; -r's core limit.
 * Before the EAL, whose log goes to stderr until then. */
static int
apply_process_options(struct startup *s)
{
	const struct options *o = &s->srv.opt;
	char err[256];

	for (unsigned i = 0; i < o->n_ignored; i++)
		APP_LOG(NOTICE, "ignored: %s", o->ignored[i]);
	if (o->core_dumps) {
		size_t lim = process_raise_core_limit(err, sizeof(err));

		if (lim == 0) {
			APP_LOG(ERR, "-r: %s", err);
			return EXIT_FAILURE;
		}
		if (lim == (size_t)-1)
			APP_LOG(NOTICE, "-r: core file limit raised to unlimited");
		else
			APP_LOG(NOTICE, "-r: core file limit raised to the hard limit, %zu bytes",
				lim);
	}
	return STEP_NEXT;
}

/* --help and --version answer and exit 0. */
static int
answer_help_or_version(struct startup *s)
{
	if (s->srv.opt.help) {
		options_usage(stdout, s->prog);
		return 0;
	}
	if (s->srv.opt.version) {
		printf("segcached %s\n", SEGCACHED_VERSION);
		return 0;
	}
	if (s->srv.opt.license) {
		printf("segcached %s\n%s", SEGCACHED_VERSION, segcached_license);
		return 0;
	}
	return STEP_NEXT;
}

/* Completes the EAL's command line: the --eal words, the host's defaults
 * on a line without `--`, ours; checks its core list (64 when bad). */
static int
complete_eal_args(struct startup *s)
{
	struct server *srv = &s->srv;
	struct eal_args *ea = &s->ea;
	char err[512];

	if (eal_args_add_words(ea, srv->opt.eal) < 0) {
		fprintf(stderr, "%s: out of memory\n", s->prog);
		return EXIT_FAILURE;
	}
	/* Before the EAL pins this thread to the main lcore. */
	if (sched_getaffinity(0, sizeof(srv->startup_cpus), &srv->startup_cpus) < 0)
		CPU_ZERO(&srv->startup_cpus);
	/* The user's choice, not the host default below. */
	srv->lcores_pinned = eal_args_pins_lcores(ea);
	if (!ea->has_separator)
		eal_args_add_host_defaults(ea, &srv->startup_cpus);
	if (eal_args_check_lcores(ea, &srv->startup_cpus, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", s->prog, err);
		return OPTIONS_EXIT_USAGE;
	}
	/* Before the EAL starts: a usage mistake, said as one (64). */
	if (srv->opt.stack == STACK_NATIVE && eal_args_lcores_max(ea) < 2) {
		fprintf(stderr,
			"%s: --stack native needs at least two lcores (the main lcore runs the "
			"control loop, each worker lcore serves one queue) and the EAL gets one: "
			"give e.g. --lcores 0-1 (or the EAL's -l 0-1 before a '--')\n", s->prog);
		return OPTIONS_EXIT_USAGE;
	}
	/* The baseline engine allocates its items from the EAL: give it the
	 * budget plus room for its index when the EAL runs on --no-huge. */
	eal_args_add_defaults(ea, srv->opt.stack == STACK_POSIX, eal_memory_mb(&srv->opt, ea));
	if (srv->opt.verbosity > 0) {
		char line[1024];

		eal_args_format(ea, line, sizeof(line));
		APP_LOG(NOTICE, "EAL options: %s", line);
	}
	return STEP_NEXT;
}

/* Signals blocked in every thread to come, and the start-up watch. */
static int
watch_startup(struct startup *s)
{
	/* Before the EAL starts its threads, so they inherit the mask. */
	control_block_signals();
	s->srv.control_thread = pthread_self();
	if (startup_watch_begin(&s->watch) != 0) {
		fprintf(stderr, "%s: cannot start a thread\n", s->prog);
		return EXIT_FAILURE;
	}
	return STEP_NEXT;
}

/* Why the EAL did not start, on stderr: 64 for options it refused, 1
 * otherwise. */
static int
eal_refused(struct startup *s, const char *bad)
{
	const char *prog = s->prog;
	bool no_huge = eal_args_has(&s->ea, "--no-huge");
	char line[1024];

	eal_args_format(&s->ea, line, sizeof(line));
	/* The EAL fails with EACCES when it finds no hugepages, with
	 * EINVAL when it refuses its options (a usage mistake; its
	 * parser also fails, rarely, when it cannot create its runtime
	 * directory, which then exits 64 too). */
	if (rte_errno == EINVAL) {
		/* One line, without the EAL's usage (eal_start()). */
		if (bad[0] != '\0')
			fprintf(stderr,
				"%s: the DPDK EAL has no option %s (EAL options: %s): "
				"correct or remove it; EAL options go before '--', or "
				"in --eal '...' on a line without one "
				"('%s --help --' lists them)\n",
				prog, bad, line, prog);
		else
			fprintf(stderr,
				"%s: the DPDK EAL refused a value (its EAL: line above "
				"names the option; EAL options: %s): correct it "
				"('%s --help --' lists the EAL's options)\n",
				prog, line, prog);
		return OPTIONS_EXIT_USAGE;
	}
	if (!no_huge && rte_errno == EACCES && eal_args_free_hugepages() <= 0)
		fprintf(stderr,
			"%s: cannot initialise the DPDK EAL: no free hugepages.\n"
			"  Reserve some, e.g. `dpdk-hugepages.py -p 2M --setup 2G` (or\n"
			"  echo 1024 > "
			"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages),\n"
			"  or add the EAL option --no-huge for a try-out "
			"(see docs/operations.md).\n",
			prog);
	else
		fprintf(stderr,
			"%s: cannot initialise the DPDK EAL: %s (EAL options: %s)\n"
			"  On a host without hugepages add --no-huge "
			"(see docs/operations.md).\n",
			prog, rte_strerror(rte_errno), line);
	return EXIT_FAILURE;
}

/* Can this server run without the EAL? The posix stack on the seg engine
 * uses nothing of it but its log (which works without it) unless it is
 * asked for: telemetry, hugepages, a core list to pin threads to, or any
 * other EAL option. Started anyway, a shared DPDK build's EAL loads every
 * driver in its plugin directory and the libraries they need (ibverbs,
 * crypto, ...) and starts three threads: about 6 MB of RSS and most of
 * the start-up time of a server that uses none of it
 * (docs/bench/journal/memory.md). */
static bool
runs_without_eal(const struct startup *s)
{
	const struct options *o = &s->srv.opt;

	return o->stack == STACK_POSIX && o->engine == SERVER_ENGINE_SEG &&
	       o->heap != HEAP_HUGEPAGE && !s->srv.lcores_pinned &&
	       eal_args_has(&s->ea, "--no-huge") && eal_args_ask_nothing(&s->ea);
}

/* The EAL; then its log stamps, the telemetry commands, -v's levels, and
 * on the posix stack the EAL's unused drivers given back. Not at all where
 * the posix stack needs nothing of it. */
static int
start_eal(struct startup *s)
{
	struct server *srv = &s->srv;
	char bad[128];

	if (runs_without_eal(s)) {
		eal_args_free(&s->ea);
		eal_trim_free(&s->trim);
		s->reached = REACHED_EAL;
		log_stamp_syslog(s->prog);
		if (srv->opt.verbosity > 0)
			control_set_verbosity(srv->opt.verbosity);
		APP_LOG(INFO, "posix stack without the DPDK EAL (no EAL option asks for it): "
			"no telemetry socket; any EAL option, e.g. --file-prefix NAME for "
			"segcached-stat, starts it");
		return STEP_NEXT;
	}
	/* The files mapped before the EAL loads its drivers. */
	(void)eal_trim_snapshot(&s->trim);
	if (eal_start(&s->ea, bad, sizeof(bad)) < 0) {
		eal_trim_free(&s->trim);
		return eal_refused(s, bad);
	}
	eal_args_free(&s->ea);
	s->reached = REACHED_EAL;
	srv->eal_running = true;
	log_stamp_eal_ready();
	if (server_telemetry_register() != 0 || stack_telemetry_register() != 0)
		APP_LOG(WARNING, "telemetry commands /segcached/* could not be registered");
	/* -v overrides the level; without it --log-level (EAL) decides. */
	if (srv->opt.verbosity > 0)
		control_set_verbosity(srv->opt.verbosity);
	if (srv->opt.stack == STACK_POSIX) {
		size_t trimmed = eal_trim_release(&s->trim);

		if (trimmed > 0)
			APP_LOG(INFO, "posix stack: %zu KiB of the EAL's drivers, which it does "
				"not use, given back", trimmed >> 10);
	} else {
		eal_trim_free(&s->trim);
	}
	return STEP_NEXT;
}

/* The heap and the engine, a warm cache loaded; the start-up watch ends,
 * and a stop it was asked for during the load exits 0. */
static int
create_engine(struct startup *s)
{
	struct server *srv = &s->srv;
	struct engine_stats st;
	char err[512];

	clock_gettime(CLOCK_MONOTONIC, &srv->started_mono);
	if (engine_setup_create(&srv->es, &srv->opt, &srv->startup_cpus,
				stack_memory_bytes(&srv->opt), srv->eal_running, err,
				sizeof(err)) < 0) {
		APP_LOG(ERR, "%s", err);
		return EXIT_FAILURE;
	}
	s->reached = REACHED_ENGINE;
	/* The engine is up and a warm cache loaded: from here a signal
	 * stops the server gracefully, saving the cache again. */
	startup_watch_end(s->watch);
	/* Asked during the load: a finished load is saved again, a stopped
	 * one left the file as it was (clean_up). Nothing was served. */
	if (engine_setup_stop_asked())
		return 0;
	engine_stats(srv->es.engine, &st);
	srv->segment_size = st.seg_size;
	if (srv->opt.lock_memory) {
		if (process_lock_memory(st.heap_bytes, err, sizeof(err)) < 0) {
			APP_LOG(ERR, "%s", err);
			return EXIT_FAILURE;
		}
		APP_LOG(NOTICE, "-k: memory locked, the %" PRIu64 " MiB heap included (mlockall)",
			st.heap_bytes >> 20);
	}
	return STEP_NEXT;
}

/* The miss-ratio curve, the request executor's settings, the network
 * stack and /metrics. On failure nothing was served: a cache taken back
 * from the heap file is saved again (clean_up), so a start that fails (a
 * port in use) does not cost the next start its warm cache. */
static int
start_serving(struct startup *s)
{
	struct server *srv = &s->srv;
	int rc;

	server_mrc_start(srv);
	s->reached = REACHED_STACK;
	fill_cmd_settings(srv);
	rc = start_stack(srv);
	if (rc == 0)
		rc = metrics_http_start(srv);
	if (rc != 0)
		return rc;
	s->reached = REACHED_SERVING;
	stack_telemetry_attach(srv->stack);
	log_sizing(srv);
	log_process_memory(srv);
	APP_LOG(NOTICE,
		"segcached %s ready: engine %s, memory %zu MiB, item size max %zu, %u %s, "
		"max %u connections",
		SEGCACHED_VERSION, srv->es.engine->ops->name,
		srv->opt.memory >> 20, srv->opt.item_max,
		stack_workers(srv->stack), srv->stack->ops->workers_noun, srv->opt.max_conns);
	return STEP_NEXT;
}

/* Start-up, in order. */
static int (*const startup_steps[])(struct startup *s) = {
	split_command_line,
	read_options,
	answer_help_or_version,
	apply_process_options,
	complete_eal_args,
	watch_startup,
	start_eal,
	create_engine,
	start_serving,
};

/* Undoes what start-up reached, in reverse; after a served run, from the
 * stop of /metrics to the EAL's clean-up. */
static void
clean_up(struct startup *s)
{
	struct server *srv = &s->srv;

	switch (s->reached) {
	case REACHED_SERVING:
		metrics_http_stop(srv);
		stack_telemetry_detach(srv->stack);
		server_telemetry_detach();
		stack_stop(srv->stack);
		/* fall through */
	case REACHED_STACK:
		server_telemetry_detach();
		stack_destroy(srv->stack);
		srv->stack = NULL;
		server_mrc_stop(srv);
		/* fall through */
	case REACHED_ENGINE:
		/* Every worker is gone and in-flight requests are done: a heap
		 * file keeps the cache for the next start. */
		engine_setup_save(&srv->es);
		engine_setup_destroy(&srv->es);
		/* fall through */
	case REACHED_EAL:
		if (srv->eal_running)
			rte_eal_cleanup();
		break;
	case REACHED_EAL_ARGS:
		eal_args_free(&s->ea);
		break;
	case REACHED_NOTHING:
		break;
	}
}

int
main(int argc, char **argv)
{
	static struct startup s; /* large; and reachable from callbacks */
	int rc = STEP_NEXT;

	log_stamp_begin();
	s.prog = prog_name(argv[0]);
	s.argc = argc;
	s.argv = argv;
	for (size_t i = 0; i < RTE_DIM(startup_steps) && rc == STEP_NEXT; i++)
		rc = startup_steps[i](&s);
	if (rc == STEP_NEXT) {
		(void)control_run(&s.srv);
		rc = 0;
	}
	clean_up(&s);
	return rc;
}
