/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The option table: every option's long name, memcached's alias, letter,
 * argument, scope, parser and help, in the order the help lists them;
 * the row of a name, and a row's parser run with the option named in its
 * error. Its readers: options_cli.c (the command line), options_config.c
 * (a config file), options_hint.c (after an unknown option) and
 * options_usage.c (the help).
 */
#include "options_private.h"

#include <string.h>

#include <rte_common.h>
#include "util/util_err.h"

/* The one option table. */
static const struct opt_desc opt_table[] = {
	{ "port", NULL, 'p', "PORT", OPT_ANYWHERE, opt_tcp_port,
	  "TCP port to listen on, 0 = no TCP (default: 11211)" },
	{ "udp-port", NULL, 'U', "PORT", OPT_ANYWHERE, opt_udp_port,
	  "UDP port to listen on, 0 = no UDP (default: 0)" },
	{ "listen", NULL, 'l', "ADDRS", OPT_ANYWHERE, opt_listen,
	  "comma-separated addresses to listen on, each HOST, HOST:PORT or [V6]:PORT\n"
	  "(default: 127.0.0.1; memcached's default is every interface, use 0.0.0.0)" },
	{ "memory", "memory-limit", 'm', "SIZE", OPT_ANYWHERE, opt_memory,
	  "the whole cache budget: items, hash table, segment headers; a bare\n"
	  "number is megabytes, K/M/G suffixes accepted (default: 64)" },
	{ "max-conns", "conn-limit", 'c', "NUM", OPT_ANYWHERE, opt_max_conns,
	  "most simultaneous client connections (default: 1024)" },
	{ "max-item-size", NULL, 'I', "SIZE", OPT_ANYWHERE, opt_item_max,
	  "largest item (key, value and header); bytes, k/m suffixes\n"
	  "(default: 1m, range 1k..1024m; raises the segment size when needed)" },
	{ "threads", NULL, 't', "NUM", OPT_ANYWHERE, opt_threads,
	  "posix stack worker threads (default: 4)" },
	{ "listen-backlog", NULL, 'b', "NUM", OPT_ANYWHERE, opt_backlog,
	  "TCP listen backlog (default: 1024)" },
	{ "enable-shutdown", NULL, 'A', NULL, OPT_ANYWHERE, opt_enable_shutdown,
	  "accept the 'shutdown' command" },
	{ "disable-cas", NULL, 'C', NULL, OPT_ANYWHERE, opt_disable_cas,
	  "do not keep cas uniques (gets returns 0)" },
	{ "disable-flush-all", NULL, 'F', NULL, OPT_ANYWHERE, opt_disable_flush,
	  "refuse the flush_all command" },
	{ "disable-evictions", NULL, 'M', NULL, OPT_ANYWHERE, opt_disable_evictions,
	  "return an error when memory is full instead of evicting" },
	{ "verbose", NULL, 'v', NULL, OPT_ANYWHERE, opt_verbose,
	  "more log output; repeat (-vv) for more; 'verbose = N' in a config file" },
	{ "stack", NULL, 0, "posix|native", OPT_ANYWHERE, opt_stack,
	  "network stack: posix = kernel sockets (default), native = DPDK" },
	{ "eviction", NULL, 0, "POLICY", OPT_ANYWHERE, opt_eviction,
	  "how memory is reclaimed when full (default: merge); none = -M" },
	{ "segment-size", NULL, 0, "SIZE", OPT_ANYWHERE, opt_segment_size,
	  "Segcache segment size; bytes, K/M/G suffixes (default: 1M)" },
	{ "engine", NULL, 0, "seg|baseline", OPT_ANYWHERE, opt_engine,
	  "storage engine: seg = Segcache (default), baseline = rte_hash engine" },
	{ "heap", NULL, 0, "auto|anon|hugepage|file", OPT_ANYWHERE, opt_heap,
	  "item memory: hugepage = EAL hugepages, anon = anonymous memory,\n"
	  "file = --heap-file; auto = hugepage when the EAL has hugepages,\n"
	  "anon otherwise (default: auto)" },
	{ "heap-file", "memory-file", 'e', "PATH", OPT_ANYWHERE, opt_heap_file,
	  "put item memory in this file, mapped with libpmem2 (a file on a DAX\n"
	  "file system or a device DAX for persistent memory); created and\n"
	  "grown as needed, kept afterwards; implies --heap file. A graceful\n"
	  "stop saves the cache in it and the next start takes it back (warm\n"
	  "restart; see docs/operations.md). memcached's -e: a graceful stop\n"
	  "(SIGTERM, SIGINT, or SIGUSR1 as memcached) saves the cache" },
	{ "restart-threads", NULL, 0, "NUM", OPT_ANYWHERE, opt_restart_threads,
	  "--heap-file: threads that validate the saved cache at a warm start\n"
	  "(default: 0 = one per CPU the process may use)" },
	{ "restart-verify", NULL, 0, NULL, OPT_ANYWHERE, opt_restart_verify,
	  "--heap-file: at a warm start, read every saved item and check that its\n"
	  "key hashes to its slot (default: check every slot's place and the\n"
	  "counts, and read only items whose segment may hold expired ones)" },
	{ "ip", NULL, 0, "ADDR/PREFIX", OPT_ANYWHERE, opt_ip,
	  "--stack native: the server's IPv4 address and subnet on the port,\n"
	  "e.g. 198.18.0.2/24 (required with --stack native)" },
	{ "port-id", NULL, 0, "N", OPT_ANYWHERE, opt_port_id,
	  "--stack native: the DPDK port to serve on (default: the first port)" },
	{ "queues", NULL, 0, "NUM", OPT_ANYWHERE, opt_queues,
	  "--stack native: RX/TX queue pairs, one per worker lcore\n"
	  "(default: every worker lcore, i.e. the EAL's lcores minus the main one)" },
	{ "rx-desc", NULL, 0, "NUM", OPT_ANYWHERE, opt_rx_desc,
	  "--stack native: RX descriptors per queue (default: 1024)" },
	{ "tx-desc", NULL, 0, "NUM", OPT_ANYWHERE, opt_tx_desc,
	  "--stack native: TX descriptors per queue (default: 1024)" },
	{ "mtu", NULL, 0, "BYTES", OPT_ANYWHERE, opt_mtu,
	  "--stack native: IP MTU of the port (default: 1500)" },
	{ "tcp-buffer-memory", NULL, 0, "SIZE", OPT_ANYWHERE, opt_tcp_buffer_memory,
	  "memory for the buffers of all connections together. A bare number\n"
	  "is megabytes, K/M/G suffixes accepted; 0 = no limit.\n"
	  "--stack native: their TCP buffers; a connection holds 96 KiB while\n"
	  "it has bytes in flight. Split evenly over the worker lcores, at\n"
	  "least 4 busy connections each. At the limit a request waits for its\n"
	  "client to send it again (a retransmission) instead of the server\n"
	  "taking more memory (default: 0, up to 96 KiB for every connection).\n"
	  "--stack posix: requests being received (3/4) and replies not yet\n"
	  "taken (1/4), beyond 16 KiB of each per connection. At the limit a\n"
	  "store is refused (SERVER_ERROR out of memory storing object, as\n"
	  "memcached's full heap) and a reader that fell behind is reset\n"
	  "(default: 2 x min(-c, 32) x (-I + 64 KiB), 68 MiB at -I 1m)" },
	{ "link-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_link_timeout,
	  "--stack native: how long to wait for the link at start; 0 = start\n"
	  "without waiting (default: 10)" },
	{ "allow", NULL, 0, "CIDRS", OPT_ANYWHERE, opt_allow,
	  "serve only clients from these comma-separated IPv4 networks, e.g.\n"
	  "198.18.0.0/15,10.1.2.3; others get nothing, not even a refusal\n"
	  "(default: everyone)" },
	{ "rss-key", NULL, 0, "HEX", OPT_ANYWHERE, opt_rss_key,
	  "--stack native: the NIC's RSS hash key, repeated to the key size the\n"
	  "NIC has (default: random at every start, so that nobody can choose\n"
	  "source ports that land on one lcore; 6d5a gives the well-known\n"
	  "symmetric key)" },
	{ "udp-writes", NULL, 0, NULL, OPT_ANYWHERE, opt_udp_writes,
	  "serve every command over UDP (default: only get, gets, mg without\n"
	  "T, N or R, mn and version: a forged source cannot store, delete,\n"
	  "flush, touch or expire)" },
	{ "udp-reply-max", NULL, 0, "BYTES", OPT_ANYWHERE, opt_udp_reply_max,
	  "most reply bytes to one UDP datagram, which bounds what a forged\n"
	  "request can reflect; over it the reply is an error line; 0 = no\n"
	  "limit (default: 4096, about three datagrams)" },
	{ "offloads", NULL, 0, "LIST", OPT_ANYWHERE, opt_offloads,
	  "--stack native: the offloads the server may use where the port has\n"
	  "them: cksum,tso (checksums and TCP segmentation), cksum (checksums\n"
	  "only) or none (both in software: a NIC whose offloads misbehave);\n"
	  "TSO leaves the checksums to the NIC, so tso needs cksum\n"
	  "(default: cksum,tso)" },
	{ "udp-any-source", NULL, 0, NULL, OPT_ANYWHERE, opt_udp_any_source,
	  "--stack native: answer UDP from beyond the subnet too (default: only\n"
	  "peers on the port's subnet, which a spoofer must be on)" },
	{ "idle-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_idle_timeout,
	  "close a TCP connection that sent nothing for this long, as\n"
	  "memcached's -o idle_timeout (default: 0 = never)" },
	{ "hash-power", NULL, 0, "N", OPT_ANYWHERE, opt_hash_power,
	  "log2 of the hash table's head buckets (64 bytes, 7 items each), as\n"
	  "memcached's -o hashpower; more items chain overflow buckets from the\n"
	  "heap (default: one bucket per KiB of -m)" },
	{ "hash-grow", NULL, 0, "N", OPT_ANYWHERE, opt_hash_grow,
	  "how many times its starting size the hash table may grow to as items\n"
	  "pile up: 1 (fixed), 2, 4, 8 or 16. The table is outside -m (16 times\n"
	  "is as large as -m), and a --heap-file reserves room for its largest\n"
	  "(default: 16, or 2 with --heap-file)" },
	{ "no-mrc", NULL, 0, NULL, OPT_ANYWHERE, opt_no_mrc,
	  "do not sample keys for the live miss-ratio curve and hot keys\n"
	  "(stats mrc, stats hotkeys; on by default with --engine seg)" },
	{ "extended", NULL, 'o', "LIST", OPT_ANYWHERE, opt_extended,
	  "memcached's -o, comma-separated: hashpower=N, idle_timeout=N,\n"
	  "no_hashexpand (--hash-grow 1), maxconns_fast (always so); its slab,\n"
	  "LRU and crawler tuning (modern, slab_reassign, lru_crawler, ...) is\n"
	  "accepted and ignored with a line; ext_* and ssl_* are refused" },
	{ "eal", NULL, 0, "ARGS", OPT_ANYWHERE, opt_eal,
	  "DPDK EAL options, blank-separated, e.g. --eal '-a 0000:3b:00.0\n"
	  "--file-prefix cache1'; repeatable, and `eal = ...` in a config file.\n"
	  "The way to EAL options on a line without '--' (see the end of this\n"
	  "help); with '--' they add to the words before it" },
	{ "config", NULL, 0, "FILE", OPT_CMDLINE_ONLY, opt_config,
	  "read options from an INI file first ([segcached] section, keys are\n"
	  "the long option names, '#' starts a comment); the command line wins" },
	/* memcached's, for a drop-in command line (options_compat.c) */
	{ "unix-socket", NULL, 's', "PATH", OPT_ANYWHERE, opt_unix_socket,
	  "listen on this unix socket instead of TCP and UDP, as memcached's -s\n"
	  "(posix stack; --admin-port and --metrics-port still listen on -l)" },
	{ "unix-mask", NULL, 'a', "MASK", OPT_ANYWHERE, opt_unix_mask,
	  "the unix socket file's access mode, octal (default: 700)" },
	{ "lock-memory", NULL, 'k', NULL, OPT_ANYWHERE, opt_lock_memory,
	  "lock all memory, the heap's included, once the heap is mapped\n"
	  "(mlockall); a start that cannot lock it fails saying why" },
	{ "enable-coredumps", NULL, 'r', NULL, OPT_ANYWHERE, opt_core_dumps,
	  "raise the core file limit to its hard limit (unlimited when allowed)" },
	{ "max-reqs-per-event", NULL, 'R', "NUM", OPT_ANYWHERE, opt_reqs_per_event,
	  "posix stack: at most NUM requests of one connection per wake-up, then\n"
	  "the others' turn (memcached's default is 20; default: no cap)" },
	{ "protocol", NULL, 'B', "ascii", OPT_ANYWHERE, opt_protocol,
	  "ascii, the only one spoken (binary and auto are refused)" },
	{ "disable-dumping", NULL, 'X', NULL, OPT_ANYWHERE, opt_disable_dumping,
	  "refuse stats cachedump and lru_crawler metadump" },
	{ "slab-growth-factor", NULL, 'f', "NUM", OPT_ANYWHERE, opt_slab_growth_factor,
	  "memcached's slab tuning: accepted and ignored (no slab classes)" },
	{ "slab-min-size", NULL, 'n', "BYTES", OPT_ANYWHERE, opt_slab_min_size,
	  "memcached's slab tuning: accepted and ignored (no slab chunks)" },
	{ "enable-largepages", NULL, 'L', NULL, OPT_ANYWHERE, opt_large_pages,
	  "accepted and ignored: hugepages are used when the host has them" },
	{ "stat-key-prefix", NULL, 'D', "CHAR", OPT_ANYWHERE, opt_stat_key_prefix,
	  "accepted and ignored: no per-prefix stats" },
	{ "disable-watch", NULL, 'W', NULL, OPT_ANYWHERE, opt_disable_watch,
	  "accepted and ignored: there is no watch command" },
	{ "napi-ids", "napi_ids", 'N', "NUM", OPT_ANYWHERE, opt_napi_ids,
	  "accepted and ignored: connections go to threads round-robin" },
	{ "enable-sasl", NULL, 'S', NULL, OPT_ANYWHERE, opt_sasl,
	  "refused: SASL is for the binary protocol, not spoken here" },
	{ "auth-file", NULL, 'Y', "FILE", OPT_ANYWHERE, opt_auth_file,
	  "refused: no ascii authentication (use --allow, -s with -a, a firewall)" },
	{ "enable-ssl", NULL, 'Z', NULL, OPT_ANYWHERE, opt_ssl,
	  "refused: no TLS (put a TLS terminator in front)" },
	{ "license", NULL, 'i', NULL, OPT_CMDLINE_ONLY, opt_license,
	  "print the licence and exit" },
	{ "help", NULL, 'h', NULL, OPT_CMDLINE_ONLY, opt_help,
	  "print this help and exit" },
	{ "version", NULL, 'V', NULL, OPT_CMDLINE_ONLY, opt_version,
	  "print the version and exit" },
	{ "max-conns-per-source", NULL, 0, "NUM", OPT_ANYWHERE, opt_max_conns_per_source,
	  "most connections one client address (IPv6: one /64) may hold; more\n"
	  "are refused at once with a reset. 0 = no limit (default: 0, as\n"
	  "memcached: a proxy is one address with many connections). --stack\n"
	  "native counts per worker lcore, see docs/operations.md" },
	{ "request-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_request_timeout,
	  "reset a connection whose started request has not arrived whole after\n"
	  "this long (slowloris), or whose replies wait unsent with the client\n"
	  "taking none for this long; idle connections with nothing pending are\n"
	  "never affected (that is --idle-timeout). 0 = never (default: 30)" },
	{ "admin-port", NULL, 0, "PORT", OPT_ANYWHERE, opt_admin_port,
	  "also listen on this TCP port for administration only, on the\n"
	  "--admin-listen addresses: not counted against -c, at most 16\n"
	  "connections (4 from one address), so stats work on a full server.\n"
	  "0 = none (default)" },
	{ "admin-listen", NULL, 0, "ADDRS", OPT_ANYWHERE, opt_admin_listen,
	  "comma-separated addresses the admin port listens on, whatever -l\n"
	  "says (default: 127.0.0.1; --stack native: required, its --ip address)" },
	{ "admin-commands", NULL, 0, "stats|all", OPT_ANYWHERE, opt_admin_commands,
	  "what the admin port serves: stats = counters only (stats and its\n"
	  "subcommands but cachedump, hotkeys, conns and reset; version, quit);\n"
	  "all = also what lists keys or changes the server (stats cachedump,\n"
	  "lru_crawler metadump, cache_memlimit, verbosity, shutdown, ...)\n"
	  "(default: stats)" },
	{ "admin-idle-timeout", NULL, 0, "SECONDS", OPT_ANYWHERE, opt_admin_idle_timeout,
	  "close an admin port connection that sent nothing for this long;\n"
	  "0 = never (default: 60)" },
	{ "metrics-port", NULL, 0, "PORT", OPT_ANYWHERE, opt_metrics_port,
	  "serve Prometheus metrics at http://HOST:PORT/metrics on the\n"
	  "--metrics-listen addresses (kernel sockets on both stacks), to\n"
	  "--allow's clients, 4 connections from one address, 10 s for each\n"
	  "request. 0 = none (default; see docs/operations.md, Monitoring)" },
	{ "metrics-listen", NULL, 0, "ADDRS", OPT_ANYWHERE, opt_metrics_listen,
	  "comma-separated addresses /metrics listens on, whatever -l says\n"
	  "(default: 127.0.0.1)" },
};

#define OPT_COUNT RTE_DIM(opt_table)

const struct opt_desc *
options_table(size_t *n)
{
	*n = OPT_COUNT;
	return opt_table;
}


int
options_apply(struct options *o, const struct opt_desc *d, const char *arg,
	      const char *where, char *err, size_t errlen)
{
	char why[256];

	if (d->parse(o, arg, why, sizeof(why)) == 0)
		return 0;
	return util_fail(err, errlen, "%s--%s: %s", where, d->name, why);
}

const struct opt_desc *
options_find(const char *name)
{
	size_t i;

	for (i = 0; i < OPT_COUNT; i++)
		if (strcmp(opt_table[i].name, name) == 0 ||
		    (opt_table[i].alias && strcmp(opt_table[i].alias, name) == 0))
			return &opt_table[i];
	return NULL;
}

