/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached's own options: the words after `--` on the command line and the
 * entries of the optional config file. All of them live in one table in
 * options_table.c (name, letter, argument, help, parser); memcached's options
 * keep memcached's letters and meaning.
 */
#ifndef SEGCACHED_OPTIONS_H
#define SEGCACHED_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "drivers/net/stack.h"
#include "engine/engine.h"
#include "engine/engine_config.h"

/* sysexits.h EX_USAGE: what a bad option or config file exits with. */
#define OPTIONS_EXIT_USAGE 64

/* lib/seg's SEG_LARGE_SEGS_MAX: the most segments one item spans */
#define OPTIONS_SEG_SPAN_MAX 64u

/* lib/seg's largest item: -I above it is a bad option. */
#define OPTIONS_SEG_ITEM_MAX (4u << 20)

enum server_stack {
	STACK_POSIX,  /* kernel sockets, epoll worker threads */
	STACK_NATIVE, /* the DPDK user-space stack */
};

enum server_engine {
	SERVER_ENGINE_SEG,      /* lib/seg, the Segcache engine */
	SERVER_ENGINE_BASELINE, /* lib/baseline, rte_hash based, for comparisons */
};

enum server_heap {
	HEAP_AUTO,     /* hugepages when the EAL has them, anonymous memory otherwise */
	HEAP_ANON,     /* anonymous memory (transparent huge pages where allowed) */
	HEAP_HUGEPAGE, /* an rte_memzone in EAL hugepage memory */
	HEAP_FILE,     /* a file mapped with libpmem2 (--heap-file) */
};

#define OPTIONS_LISTEN_MAX 512
/* memcached options taken and ignored, each said once at start. */
#define OPTIONS_IGNORED_MAX 16
#define OPTIONS_IGNORED_LEN 200

struct options {
	char config_file[256];
	uint16_t tcp_port;        /* -p; 0 = no TCP */
	uint16_t udp_port;        /* -U; 0 = no UDP */
	char listen[OPTIONS_LISTEN_MAX]; /* -l: comma-separated host[:port] list */
	size_t memory;            /* -m, bytes: the whole cache budget */
	unsigned max_conns;       /* -c */
	size_t item_max;          /* -I, bytes */
	bool item_max_given;      /* -I was on the command line */
	unsigned threads;         /* -t: posix worker threads */
	bool shutdown_enabled;    /* -A */
	bool udp_writes;          /* --udp-writes: every command over UDP */
	size_t udp_reply_max;     /* --udp-reply-max: reply bytes per datagram; 0 = no limit */
	bool cas_disabled;        /* -C */
	bool flush_disabled;      /* -F */
	bool evictions_disabled;  /* -M */
	int verbosity;            /* -v, repeatable */
	enum server_stack stack;
	enum engine_eviction eviction;
	size_t segment_size;      /* 0 = the engine's default */
	enum server_engine engine;
	enum server_heap heap;
	char heap_file[256];      /* --heap-file */
	char eal[512];            /* --eal, each one's words after the last's */
	unsigned restart_threads; /* --restart-threads; 0 = one per CPU */
	bool restart_verify;      /* --restart-verify */
	int backlog;              /* -b: listen backlog */
	/* --stack native */
	char ip[32];              /* --ip as given, "198.18.0.2/24" */
	uint32_t ip_addr;         /* host byte order; 0 = not given */
	uint8_t ip_prefix;
	int port_id;              /* -1 = the first port */
	unsigned queues;          /* 0 = one per worker lcore */
	uint16_t rx_desc, tx_desc; /* 0 = the default */
	uint16_t mtu;
	size_t tcp_buffer_memory; /* bytes for all TCP buffers; 0 = no limit */
	bool tcp_buffer_memory_given; /* posix: else derived from -c and -I */
	unsigned link_timeout;    /* seconds to wait for the link; 0 = no wait */
	unsigned idle_timeout;    /* seconds; 0 = never (memcached's idle_timeout) */
	unsigned hash_power;      /* log2 of head buckets; 0 = sized from -m */
	unsigned hash_grow;       /* --hash-grow: 1..16 times; 0 = by heap kind */
	uint8_t rss_key[64];      /* --rss-key; rss_key_len 0 = a random key */
	uint8_t rss_key_len;
	bool udp_any_source;      /* --udp-any-source */
	bool no_cksum_offload;    /* --offloads without cksum */
	bool no_tso;              /* --offloads without tso */
	struct stack_cidr allow[STACK_ALLOW_MAX]; /* --allow; n_allow 0 = everyone */
	unsigned n_allow;
	bool help;
	bool version;
	/* hardening, both stacks (docs/operations.md, Security) */
	unsigned max_conns_per_source; /* 0 = no limit */
	unsigned request_timeout; /* seconds a request may take to arrive, and
				   * replies to be taken; 0 = none */
	uint16_t admin_port;      /* 0 = none */
	uint16_t metrics_port;    /* Prometheus /metrics over HTTP; 0 = none */
	/* what the admin port and /metrics reach (options_admin.c) */
	char admin_listen[OPTIONS_LISTEN_MAX];   /* --admin-listen hosts; 127.0.0.1 */
	bool admin_listen_given;
	bool admin_all;           /* --admin-commands all: beyond counters */
	unsigned admin_idle_timeout; /* seconds; 0 = never (default 60) */
	char metrics_listen[OPTIONS_LISTEN_MAX]; /* --metrics-listen hosts; 127.0.0.1 */
	bool mrc_disabled;        /* --no-mrc: no miss-ratio curve, no hot keys */
	/* memcached's, kept for a drop-in command line (options_compat.c) */
	char unix_path[108];      /* -s: a unix socket instead of TCP/UDP; "" = none */
	unsigned unix_mask;       /* -a: the socket file's mode (default 0700) */
	bool lock_memory;         /* -k: mlockall() once the heap is mapped */
	bool core_dumps;          /* -r: the core file limit raised to its maximum */
	unsigned reqs_per_event;  /* -R: requests per connection per wake-up; 0 = no cap */
	bool dump_disabled;       /* -X: no stats cachedump, no lru_crawler metadump */
	bool license;             /* -i: print the licence and exit */
	/* "-f 1.25: why" for every memcached option taken and ignored; main()
	 * logs each as "ignored: ..." */
	char ignored[OPTIONS_IGNORED_MAX][OPTIONS_IGNORED_LEN];
	unsigned n_ignored;
	/* What options_finalize() chose for the largest item and why, when
	 * -m made it matter; main() logs it at start ("" = nothing to say) */
	bool segment_size_derived; /* options_finalize() chose segment_size for -m */
};

/* Fills o with the defaults (options_defaults.c). */
void options_defaults(struct options *o);

/* Parses segcached's arguments (argv[0] is a program name, then options),
 * reading the config file first when --config is given, so that command-line
 * values override the file. Returns 0, or -1 with a message in err. */
int options_parse(struct options *o, int argc, char **argv, char *err,
		  size_t errlen);

/* Checks the options against each other and derives dependent values
 * (segment size large enough for -I; options_defaults.c). Returns 0 or -1
 * with a message. */
int options_finalize(struct options *o, char *err, size_t errlen);

/* Is letter one of memcached's (`memcached -h`)? Such a letter never
 * goes to the EAL, whose -n, -r, -s, -S mean other things
 * (options_hint.c). */
bool options_memcached_letter(int letter);

/* The segment size the seg engine gets at -m `memory` when
 * --segment-size is not given: lib/seg's seg_segment_size_for (1 MiB from
 * 256 MiB up, smaller below). What `segcached -m <memory>` would build,
 * for the miss-ratio curve's sizes too. */
size_t options_default_segment_size(size_t memory);

/* Prints the option table as help text (options_usage.c). */
void options_usage(FILE *f, const char *prog);

#endif /* SEGCACHED_OPTIONS_H */
