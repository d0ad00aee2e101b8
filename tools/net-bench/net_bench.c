/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/net alone, without a NIC: a client stack and a server stack in one
 * thread, their TX arrays handed to each other's input. Every connection
 * keeps one memcached-shaped request in flight ("get" of a 16-byte key,
 * a 64-byte value back). Prints the thread's CPU time per request (both
 * stacks, both directions), which the load of other processes on a shared
 * host disturbs far less than a wall-clock rate.
 *
 * With --active K only the first K connections send; the others stay
 * open and idle, as most of a big server's connections are.
 *
 *	segcached-net-bench [EAL options] -- [--conns N] [--active K] [--seconds S]
 *	segcached-net-bench [EAL options] -- --cksum [--seconds S]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "net/net.h"
#include "cksum_bench.h"

#define PORT 11211
#define CLI_IP 0xc6120001u /* 198.18.0.1 */
#define SRV_IP 0xc6120002u /* 198.18.0.2 */

static const char request[] = "get key:0000000001\r\n";
static char response[128];
static size_t response_len;

struct bench {
	struct net_stack *cli, *srv;
	uint64_t done;      /* responses received whole */
	uint32_t connected;
	uint32_t active;    /* connections 0..active-1 send */
	size_t *got;        /* response bytes so far, per client connection */
};

static void
send_request(struct net_conn *c)
{
	net_tcp_send(c, request, sizeof(request) - 1);
}

static void
cli_connected(void *app, struct net_conn *c)
{
	struct bench *b = app;

	b->connected++;
	if ((uintptr_t)net_conn_ctx(c) < b->active)
		send_request(c);
}

static size_t
cli_recv(void *app, struct net_conn *c, const uint8_t *data, size_t len)
{
	struct bench *b = app;
	size_t *got = &b->got[(uintptr_t)net_conn_ctx(c)];

	(void)data;
	*got += len;
	while (*got >= response_len) {
		*got -= response_len;
		b->done++;
		send_request(c);
	}
	return len;
}

static size_t
srv_recv(void *app, struct net_conn *c, const uint8_t *data, size_t len)
{
	size_t used = 0;

	(void)app;
	(void)data;
	while (len - used >= sizeof(request) - 1) {
		net_tcp_send(c, response, response_len);
		used += sizeof(request) - 1;
	}
	return used;
}

static const struct net_app_ops cli_ops = { .connected = cli_connected, .recv = cli_recv };
static const struct net_app_ops srv_ops = { .recv = srv_recv };

/* What `from` built goes into `to`: a NIC that takes everything. */
static void
carry(struct net_stack *from, struct net_stack *to)
{
	static struct rte_mbuf *burst[4096]; /* tx_ring_size */
	struct rte_mbuf **tx;
	uint16_t n = 0, k;

	/* the queue is a ring: what wrapped comes in a second burst */
	while (n < RTE_DIM(burst) && (k = net_stack_tx_burst_prepare(from, &tx)) > 0) {
		k = (uint16_t)RTE_MIN((unsigned)k, RTE_DIM(burst) - n);
		memcpy(burst + n, tx, sizeof(*burst) * k);
		net_stack_tx_burst_done(from, k);
		n = (uint16_t)(n + k);
	}
	for (uint16_t i = 0; i < n; i += 32)
		net_stack_input(to, burst + i, (uint16_t)RTE_MIN(32, n - i));
}

static void
turn(struct bench *b)
{
	net_stack_poll(b->cli);
	carry(b->cli, b->srv);
	net_stack_poll(b->srv);
	carry(b->srv, b->cli);
}

static uint64_t
retransmits(const struct bench *b)
{
	return net_stack_counter(b->cli, NET_C_tcp_retransmits) +
	       net_stack_counter(b->srv, NET_C_tcp_retransmits);
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct net_stack *
make_stack(const char *name, uint8_t mac_last, uint32_t ip, uint32_t conns,
	   struct rte_mempool *pool, const struct net_app_ops *ops, void *app)
{
	struct net_stack_config c;
	char err[256];
	struct net_stack *s;

	memset(&c, 0, sizeof(c));
	c.name = name;
	c.socket_id = SOCKET_ID_ANY;
	c.mac = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, mac_last } };
	c.ip = ip;
	c.prefix_len = 24;
	c.tx_pool = pool;
	c.tx_ring_size = 4096;
	c.max_conns = conns + 16;
	c.syn_backlog = conns + 16;
	c.sndbuf = 64 << 10; /* segcached native's buffers */
	c.rcvbuf = 32 << 10;
	c.ops = ops;
	c.app_arg = app;
	if (ip == SRV_IP)
		c.tcp_ports[0] = PORT;
	s = net_stack_create(&c, err, sizeof(err));
	if (s == NULL) {
		fprintf(stderr, "net-bench: %s\n", err);
		exit(1);
	}
	return s;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "conns", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "active", required_argument, NULL, 'a' },
		{ "cksum", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench b = { 0 };
	uint32_t conns = 256, active = 0;
	double seconds = 2, t0, t1;
	uint64_t d0, r0;
	struct rte_mempool *pool;
	bool cksum = false;
	int n, opt;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "net-bench: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'c')
			conns = (uint32_t)strtoul(optarg, NULL, 10);
		else if (opt == 's')
			seconds = strtod(optarg, NULL);
		else if (opt == 'a')
			active = (uint32_t)strtoul(optarg, NULL, 10);
		else if (opt == 'k')
			cksum = true;
		else
			return 2;
	}
	if (cksum)
		return cksum_bench(seconds);
	b.active = active != 0 && active < conns ? active : conns;
	response_len = (size_t)snprintf(response, sizeof(response),
					"VALUE key:0000000001 0 64\r\n%064d\r\nEND\r\n", 0);
	pool = rte_pktmbuf_pool_create("bench", 4 * conns + 8192, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	b.got = calloc(conns, sizeof(*b.got));
	if (pool == NULL || b.got == NULL) {
		fprintf(stderr, "net-bench: out of memory\n");
		return 1;
	}
	b.cli = make_stack("cli", 1, CLI_IP, conns, pool, &cli_ops, &b);
	b.srv = make_stack("srv", 2, SRV_IP, conns, pool, &srv_ops, NULL);
	for (uint32_t i = 0; i < conns; i++)
		if (net_tcp_connect(b.cli, SRV_IP, PORT, 0, (void *)(uintptr_t)i) == NULL) {
			fprintf(stderr, "net-bench: connect %u failed\n", i);
			return 1;
		}
	for (int i = 0; i < 100000 && b.connected < conns; i++)
		turn(&b);
	if (b.connected < conns) {
		fprintf(stderr, "net-bench: %u of %u connected\n", b.connected, conns);
		return 1;
	}
	for (int i = 0; i < 2000; i++) /* warm up */
		turn(&b);
	d0 = b.done;
	r0 = retransmits(&b);
	t0 = cpu_seconds();
	do {
		for (int i = 0; i < 100; i++)
			turn(&b);
		t1 = cpu_seconds();
	} while (t1 - t0 < seconds);
	printf("conns %u active %u requests %llu cpu_s %.3f ns_per_request %.1f retransmits %llu "
	       "(%llu while connecting)\n",
	       conns, b.active, (unsigned long long)(b.done - d0), t1 - t0,
	       (t1 - t0) * 1e9 / (double)(b.done - d0),
	       (unsigned long long)(retransmits(&b) - r0), (unsigned long long)r0);
	net_stack_destroy(b.cli);
	net_stack_destroy(b.srv);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
