/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Command line of segcached-loadgen:
 *   segcached-loadgen [EAL options --] [options]
 * EAL options are read only with --stack net (the DPDK port and lcores).
 */
#ifndef LG_OPTIONS_H
#define LG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lg_session.h"

enum lg_stack { LG_STACK_SOCKET, LG_STACK_NET };

/* --stack net UDP: source ports per worker (lib/net's NET_MAX_LISTEN), and
 * flows per worker so that each keeps 8 bits of request-id counter. */
#define LG_NET_UDP_PORTS 8
#define LG_NET_UDP_FLOWS_MAX (LG_NET_UDP_PORTS * 256)

struct lg_options {
	enum lg_stack stack;
	bool udp;
	char server[64];          /* host (socket) or IPv4 (net) */
	uint32_t server_ip;       /* host byte order */
	uint16_t port;
	uint32_t local_ip;        /* net: our address */
	uint8_t prefix_len;
	unsigned threads;         /* socket: worker threads */
	bool spin;                /* socket: poll without sleeping */
	double warmup_s, duration_s;
	double preload_timeout_s;
	uint64_t seed;
	const char *json_path;
	const char *trace_path;
	bool quiet;
	bool verify_all;          /* --verify all (lg_verify.h) */
	struct lg_run run;        /* workload and schedule, shared by workers */
};

/* Parses argv (without EAL options). Returns 0, 1 when --help was printed,
 * or -1 with a message in err. */
int lg_options_parse(struct lg_options *o, int argc, char **argv, char *err,
		     size_t errlen);
void lg_options_usage(FILE *f);

#endif /* LG_OPTIONS_H */
