/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * segcached-loadgen's command line (lg_options.h): the usage text and the
 * parser that checks every option.
 */
#include "lg_options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_STACK = 256, O_SERVER, O_IP, O_UDP, O_THREADS, O_CONNS, O_DEPTH,
	O_KEYS, O_KEY_SIZE, O_VALUE_SIZE, O_GET_RATIO, O_MULTIGET, O_ZIPF,
	O_NO_PRELOAD, O_WARMUP, O_DURATION, O_RATE, O_LATE_US, O_TRACE,
	O_TRACE_SPEED, O_CHECK_EVERY, O_VERIFY, O_TTL, O_SEED, O_JSON, O_QUIET,
	O_UDP_TIMEOUT_MS, O_SPIN, O_HELP,
};

static const struct option long_opts[] = {
	{ "stack", required_argument, NULL, O_STACK },
	{ "server", required_argument, NULL, O_SERVER },
	{ "ip", required_argument, NULL, O_IP },
	{ "udp", no_argument, NULL, O_UDP },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "conns", required_argument, NULL, O_CONNS },
	{ "depth", required_argument, NULL, O_DEPTH },
	{ "keys", required_argument, NULL, O_KEYS },
	{ "key-size", required_argument, NULL, O_KEY_SIZE },
	{ "value-size", required_argument, NULL, O_VALUE_SIZE },
	{ "get-ratio", required_argument, NULL, O_GET_RATIO },
	{ "multiget", required_argument, NULL, O_MULTIGET },
	{ "zipf", required_argument, NULL, O_ZIPF },
	{ "no-preload", no_argument, NULL, O_NO_PRELOAD },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "rate", required_argument, NULL, O_RATE },
	{ "late-us", required_argument, NULL, O_LATE_US },
	{ "trace", required_argument, NULL, O_TRACE },
	{ "trace-speed", required_argument, NULL, O_TRACE_SPEED },
	{ "check-every", required_argument, NULL, O_CHECK_EVERY },
	{ "verify", required_argument, NULL, O_VERIFY },
	{ "ttl", required_argument, NULL, O_TTL },
	{ "seed", required_argument, NULL, O_SEED },
	{ "json", required_argument, NULL, O_JSON },
	{ "udp-timeout-ms", required_argument, NULL, O_UDP_TIMEOUT_MS },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "spin", no_argument, NULL, O_SPIN },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

#define LG_STR_(x) #x
#define LG_STR(x) LG_STR_(x)

void
lg_options_usage(FILE *f)
{
	fputs(
"usage: segcached-loadgen [EAL options --] [options]\n"
"transport:\n"
"  --stack socket|net     kernel sockets (epoll threads) or lib/net on the\n"
"                         EAL's port, one worker lcore per queue [socket]\n"
"  --server HOST:PORT     the server [127.0.0.1:11211]\n"
"  --ip A.B.C.D/LEN       net: our address on the port\n"
"  --udp                  memcached UDP (8-byte frame header) instead of TCP\n"
"  --threads N            socket: worker threads [1]\n"
"  --spin                 socket: poll epoll without sleeping (no wake-up\n"
"                         latency on a busy host; burns the core) [off]\n"
"  --conns N              connections (UDP: flows) per worker [16]\n"
"  --depth N              requests in flight per connection [1]\n"
"workload:\n"
"  --keys N [100000]  --key-size B [16]  --value-size B or MIN-MAX [64]\n"
"  --get-ratio F [0.9]  --multiget K [1]  --zipf THETA (0 = uniform) [0]\n"
"  --ttl S [0]  --no-preload  --warmup S [1]  --duration S [5]\n"
"  --trace FILE           replay a CSV trace instead (see lg_trace.h)\n"
"  --trace-speed X        replay at X times the trace's pace; 0 = flat out [0]\n"
"schedule:\n"
"  --rate R               open loop: Poisson arrivals, R requests/s in all;\n"
"                         latency from the intended send time [closed loop]\n"
"  --late-us N            a send N us after its time counts as late [100]\n"
"checks and output:\n"
"  --check-every N        verify the bytes of every Nth get's values [16]\n"
"  --verify all|sampled   all: every value's bytes, and its version against\n"
"                         each key's acknowledged sets (a stale value or a\n"
"                         lost update counts as stale) [sampled: --check-every]\n"
"  --udp-timeout-ms N     UDP request counted lost N ms after its send (a preload\n"
"                         set is sent again, up to " LG_STR(LG_PRELOAD_TRIES) " times) [1000]\n"
"  --seed N  --json FILE  --quiet (no progress line)\n", f);
}

static int
num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int
num_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

int
lg_options_parse(struct lg_options *o, int argc, char **argv, char *err,
		 size_t errlen)
{
	struct lg_run *r = &o->run;
	struct lg_workload *wl = &r->wl;
	/* initialised for GCC's -O3 (the release build), which cannot see
	 * that each is read only after its parser set it */
	uint64_t v = 0;
	double d = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->stack = LG_STACK_SOCKET;
	snprintf(o->server, sizeof(o->server), "127.0.0.1");
	o->port = 11211;
	o->threads = 1;
	o->warmup_s = 1;
	o->duration_s = 5;
	o->preload_timeout_s = 60;
	o->seed = 1;
	r->conns = 16;
	r->depth = 1;
	r->preload = true;
	r->check_every = 16;
	r->late_ns = 100000;
	r->udp_timeout_ns = 1000000000ULL;
	wl->keys = 100000;
	wl->key_size = 16;
	wl->vmin = wl->vmax = 64;
	wl->get_ratio = 0.9;
	wl->multiget = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		const char *a = optarg;
		int bad = 0;

		switch (c) {
		case O_STACK:
			if (strcmp(a, "socket") == 0)
				o->stack = LG_STACK_SOCKET;
			else if (strcmp(a, "net") == 0)
				o->stack = LG_STACK_NET;
			else
				bad = 1;
			break;
		case O_SERVER: {
			const char *colon = strrchr(a, ':');
			size_t n = colon ? (size_t)(colon - a) : strlen(a);

			if (n == 0 || n >= sizeof(o->server) ||
			    (colon && num_u64(colon + 1, 1, 65535, &v) < 0)) {
				bad = 1;
				break;
			}
			memcpy(o->server, a, n);
			o->server[n] = 0;
			if (colon)
				o->port = (uint16_t)v;
			break;
		}
		case O_IP: {
			char buf[32];
			const char *slash = strchr(a, '/');
			struct in_addr in;
			size_t n = slash ? (size_t)(slash - a) : strlen(a);

			if (!slash || n >= sizeof(buf) ||
			    num_u64(slash + 1, 1, 32, &v) < 0) {
				bad = 1;
				break;
			}
			memcpy(buf, a, n);
			buf[n] = 0;
			if (inet_pton(AF_INET, buf, &in) != 1) {
				bad = 1;
				break;
			}
			o->local_ip = ntohl(in.s_addr);
			o->prefix_len = (uint8_t)v;
			break;
		}
		case O_UDP: o->udp = true; break;
		case O_THREADS:
			bad = num_u64(a, 1, 1024, &v);
			o->threads = (unsigned)v;
			break;
		case O_CONNS:
			bad = num_u64(a, 1, 65536, &v);
			r->conns = (unsigned)v;
			break;
		case O_DEPTH:
			bad = num_u64(a, 1, 128, &v);
			r->depth = (unsigned)v;
			break;
		case O_KEYS:
			bad = num_u64(a, 1, UINT32_MAX, &v);
			wl->keys = v;
			break;
		case O_KEY_SIZE:
			bad = num_u64(a, 2, 250, &v);
			wl->key_size = (unsigned)v;
			break;
		case O_VALUE_SIZE: {
			const char *dash = strchr(a, '-');
			uint64_t hi = 0;

			if (dash) {
				char lo[24];
				size_t n = (size_t)(dash - a);

				if (n >= sizeof(lo)) {
					bad = 1;
					break;
				}
				memcpy(lo, a, n);
				lo[n] = 0;
				bad = num_u64(lo, 1, 1 << 24, &v) ||
				      num_u64(dash + 1, 1, 1 << 24, &hi) || hi < v;
			} else {
				bad = num_u64(a, 1, 1 << 24, &v);
				hi = v;
			}
			wl->vmin = (uint32_t)v;
			wl->vmax = (uint32_t)hi;
			break;
		}
		case O_GET_RATIO:
			bad = num_double(a, 0, 1, &wl->get_ratio);
			break;
		case O_MULTIGET:
			bad = num_u64(a, 1, LG_MGET_MAX, &v);
			wl->multiget = (unsigned)v;
			break;
		case O_ZIPF:
			bad = num_double(a, 0, 10, &d);
			wl->zipf = d > 0;
			wl->theta = d;
			break;
		case O_NO_PRELOAD: r->preload = false; break;
		case O_WARMUP: bad = num_double(a, 0, 3600, &o->warmup_s); break;
		case O_DURATION: bad = num_double(a, 0.1, 3600, &o->duration_s); break;
		case O_RATE: bad = num_double(a, 0, 1e9, &r->rate); break;
		case O_LATE_US:
			bad = num_u64(a, 0, 60000000, &v);
			r->late_ns = v * 1000;
			break;
		case O_TRACE: o->trace_path = a; break;
		case O_TRACE_SPEED: bad = num_double(a, 0, 1e6, &r->trace_speed); break;
		case O_CHECK_EVERY:
			bad = num_u64(a, 0, UINT32_MAX, &v);
			r->check_every = (unsigned)v;
			break;
		case O_VERIFY:
			if (strcmp(a, "all") == 0)
				o->verify_all = true;
			else if (strcmp(a, "sampled") == 0)
				o->verify_all = false;
			else
				bad = -1;
			break;
		case O_TTL:
			bad = num_u64(a, 0, UINT32_MAX, &v);
			wl->ttl = (uint32_t)v;
			break;
		case O_SEED: bad = num_u64(a, 0, UINT64_MAX, &o->seed); break;
		case O_JSON: o->json_path = a; break;
		case O_UDP_TIMEOUT_MS:
			bad = num_u64(a, 1, 60000, &v);
			r->udp_timeout_ns = v * 1000000;
			break;
		case O_QUIET: o->quiet = true; break;
		case O_SPIN: o->spin = true; break;
		case O_HELP:
			lg_options_usage(stdout);
			return 1;
		default:
			snprintf(err, errlen, "unknown option %s (see --help)",
				 argv[optind - 1]);
			return -1;
		}
		if (bad) {
			snprintf(err, errlen, "bad value for %s: %s",
				 argv[optind - 1 - (a != NULL && argv[optind - 1] == a)], a);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument %s", argv[optind]);
		return -1;
	}
	if (o->stack == LG_STACK_NET) {
		struct in_addr in;

		if (o->local_ip == 0) {
			snprintf(err, errlen, "--stack net needs --ip A.B.C.D/LEN");
			return -1;
		}
		if (inet_pton(AF_INET, o->server, &in) != 1) {
			snprintf(err, errlen, "--stack net: --server takes an IPv4 address");
			return -1;
		}
		o->server_ip = ntohl(in.s_addr);
	}
	if (o->udp && wl->vmax + wl->key_size + 64 > 1400) {
		snprintf(err, errlen, "--udp: values up to %u bytes do not fit one datagram "
			 "(answers are not reassembled)", wl->vmax);
		return -1;
	}
	if (o->udp && o->stack == LG_STACK_NET && r->conns > LG_NET_UDP_FLOWS_MAX) {
		/* lib/net listens on a few ports: flows share them and split
		 * the request ids; each keeps at least 8 bits of counter. */
		snprintf(err, errlen, "--udp --stack net: at most %u flows per worker "
			 "(request ids)", LG_NET_UDP_FLOWS_MAX);
		return -1;
	}
	r->udp = o->udp;
	return 0;
}
