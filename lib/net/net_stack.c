/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Stack lifecycle (configuration, create, destroy), the counters, input
 * (the Ethernet layer) and polling. The way out is net_tx.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_random.h>

#include "net/net_conn.h"
#include "net/net_private.h"
#include "net/net_tcp.h"
#include "util/util_err.h"

RTE_LOG_REGISTER(net_logtype, segcached.net, NOTICE);

static const char *const counter_names[] = {
#define NET_COUNTER_NAME(name, desc) #name,
	NET_COUNTERS(NET_COUNTER_NAME)
#undef NET_COUNTER_NAME
};

static const char *const counter_descs[] = {
#define NET_COUNTER_DESC(name, desc) desc,
	NET_COUNTERS(NET_COUNTER_DESC)
#undef NET_COUNTER_DESC
};

const char *
net_counter_name(enum net_counter_id id)
{
	return (unsigned)id < NET_C__COUNT ? counter_names[id] : NULL;
}

const char *
net_counter_desc(enum net_counter_id id)
{
	return (unsigned)id < NET_C__COUNT ? counter_descs[id] : NULL;
}

uint64_t
net_stack_counter(const struct net_stack *s, enum net_counter_id id)
{
	return (unsigned)id < NET_C__COUNT ? s->ctr[id] : 0;
}

void
net_stack_counters_read(const struct net_stack *s, uint64_t out[NET_C__COUNT])
{
	memcpy(out, s->ctr, sizeof(s->ctr));
}

uint32_t
net_stack_conns_in_use(const struct net_stack *s)
{
	return s->conns_in_use;
}

size_t
net_conn_slot_bytes(void)
{
	/* the hash's share is measured (tests/unit/net, SlotCostsWhatIsDocumented):
	 * its key store, its buckets and the extendable table's reserve */
	return sizeof(struct net_conn) + NET_HASH_BYTES_PER_CONN +
	       2 * sizeof(void *) /* a place in each pool's free stack */;
}

void
net_stack_memory_read(const struct net_stack *s, struct net_stack_memory *out)
{
	out->slots = (size_t)s->cfg.max_conns * net_conn_slot_bytes();
	out->buffers = (size_t)s->buf_pool.n_made * s->buf_pool.size;
	out->buffers_max = (size_t)s->buf_pool.max * s->buf_pool.size;
	out->buffers_in_use = s->buf_pool.n_made - s->buf_pool.n_free;
	out->ooo = (size_t)s->ooo_pool.n_made * s->ooo_pool.size;
}

uint64_t
net_stack_now(const struct net_stack *s)
{
	return s->now;
}

static __attribute__((hot)) uint64_t
read_clock(struct net_stack *s)
{
	if (s->cfg.clock != NULL)
		return s->cfg.clock(s->cfg.clock_arg);
	/* a multiply, not a division: this runs twice per loop */
	return rte_reciprocal_divide_u64(rte_get_timer_cycles(), &s->per_us);
}

static void
fill_defaults(struct net_stack_config *c)
{
#define DEFAULT(field, value) do { if (c->field == 0) c->field = (value); } while (0)
	DEFAULT(mtu, 1500);
	DEFAULT(tx_ring_size, 512);
	DEFAULT(syn_backlog, RTE_MAX(c->max_conns / 4, 1u));
	DEFAULT(sndbuf, NET_DEFAULT_BUF);
	DEFAULT(rcvbuf, NET_DEFAULT_BUF);
	DEFAULT(ooo_max, 8);
	if (c->max_buf_pairs == 0 || c->max_buf_pairs > c->max_conns)
		c->max_buf_pairs = c->max_conns;
	/* TSO carries a payload only an mbuf pointing into the ring can hold,
	 * and leaves the checksums to the NIC */
	if (!c->tx_cksum_offload || c->tx_zero_copy_min == 0 ||
	    c->tx_zero_copy_min > (uint32_t)c->mtu - 40)
		c->tx_tso_max = 0;
	c->tx_tso_max = RTE_MIN(c->tx_tso_max, NET_TSO_MAX);
	DEFAULT(rto_initial_us, 1000 * 1000);
	DEFAULT(rto_min_us, 200 * 1000);
	DEFAULT(rto_max_us, 60ull * 1000 * 1000);
	DEFAULT(delack_us, 5 * 1000);
	DEFAULT(time_wait_us, 1000 * 1000);
	DEFAULT(fin_wait2_us, 30ull * 1000 * 1000);
	DEFAULT(syncookie_idle_us, 120ull * 1000 * 1000);
	DEFAULT(orphan_timeout_us, 60ull * 1000 * 1000);
	DEFAULT(max_orphans, RTE_MAX(c->max_conns / 4, 1u));
	DEFAULT(max_retries, 8);
	DEFAULT(max_syn_retries, 5);
#undef DEFAULT
}

static int
check_config(const struct net_stack_config *c, char *err, size_t errlen)
{
	if (c->tx_pool == NULL)
		return util_fail(err, errlen, "tx_pool is required");
	if (c->n_allow > NET_ALLOW_MAX || (c->n_allow != 0 && c->allow == NULL))
		return util_fail(err, errlen, "allow: 1..%d networks (got %u)", NET_ALLOW_MAX,
				 c->n_allow);
	if (c->max_conns == 0 || c->max_conns > (1u << 24))
		return util_fail(err, errlen, "max_conns must be 1..16777216 (got %u)",
				 c->max_conns);
	if (c->reserved_slots >= c->max_conns || (c->reserved_slots != 0 && c->reserved_port == 0))
		return util_fail(err, errlen,
				 "reserved_slots (%u) need a reserved_port and must stay below "
				 "max_conns (%u)", c->reserved_slots, c->max_conns);
	if (c->ip == 0 || c->prefix_len == 0 || c->prefix_len > 32)
		return util_fail(err, errlen,
				 "an IPv4 address and a prefix length 1..32 are required");
	if (c->mtu < 576 || c->mtu > 9000)
		return util_fail(err, errlen, "mtu must be 576..9000 (got %u)", c->mtu);
	if (rte_pktmbuf_data_room_size(c->tx_pool) <
	    RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + c->mtu)
		return util_fail(err, errlen,
				 "tx_pool mbufs (%u bytes of data room) cannot hold an MTU of %u",
				 rte_pktmbuf_data_room_size(c->tx_pool), c->mtu);
	if (c->sndbuf < 2048 || c->sndbuf > (1u << 30) ||
	    c->rcvbuf < 2048 || c->rcvbuf > (1u << 30))
		return util_fail(err, errlen, "sndbuf and rcvbuf must be 2 KiB..1 GiB");
	if (c->ooo_max > NET_OOO_MAX)
		return util_fail(err, errlen, "ooo_max must be at most %d", NET_OOO_MAX);
	if (c->rto_min_us > c->rto_max_us || c->rto_initial_us > c->rto_max_us)
		return util_fail(err, errlen,
				 "rto_min_us and rto_initial_us must not exceed rto_max_us");
	if (rte_is_zero_ether_addr(&c->mac) || !rte_is_unicast_ether_addr(&c->mac))
		return util_fail(err, errlen, "a unicast MAC address is required");
	return 0;
}

struct net_stack *
net_stack_create(const struct net_stack_config *cfg, char *err, size_t errlen)
{
	struct net_stack_config c = *cfg;
	struct net_stack *s;
	uint32_t rw;

	fill_defaults(&c);
	if (check_config(&c, err, errlen) != 0)
		return NULL;
	s = rte_zmalloc_socket("net_stack", sizeof(*s), RTE_CACHE_LINE_SIZE, c.socket_id);
	if (s == NULL) {
		util_fail(err, errlen, "cannot allocate the stack (%zu bytes)", sizeof(*s));
		return NULL;
	}
	s->cfg = c;
	snprintf(s->name, sizeof(s->name), "%s", c.name != NULL ? c.name : "net");
	s->ops = c.ops;
	s->ip = c.ip;
	s->ip_be = rte_cpu_to_be_32(c.ip);
	s->netmask = c.prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> c.prefix_len);
	s->mss = c.mtu - sizeof(struct rte_ipv4_hdr) - sizeof(struct rte_tcp_hdr);
	/* Smallest scale that lets the 16-bit field express the buffer. */
	for (rw = c.rcvbuf, s->rcv_wscale = 0; rw > 0xffff && s->rcv_wscale < 14; rw >>= 1)
		s->rcv_wscale++;
	s->per_us = rte_reciprocal_value_u64(RTE_MAX(rte_get_timer_hz() / 1000000, (uint64_t)1));
	for (unsigned i = 0; i < c.n_allow; i++)
		s->allow[i] = (struct net_cidr){ c.allow[i].addr & c.allow[i].mask,
						 c.allow[i].mask };
	s->cfg.allow = NULL; /* the caller's array may go; s->allow is the copy */
	s->secret[0] = c.secret_seed != 0 ? c.secret_seed : rte_rand();
	s->secret[1] = c.secret_seed != 0 ? c.secret_seed * 0x9e3779b97f4a7c15ull : rte_rand();
	s->ip_id = (uint16_t)s->secret[1];
	s->next_ephemeral = 49152 + (uint16_t)(s->secret[0] % 16384);
	for (unsigned i = 0; i < NET_MAX_LISTEN; i++) {
		if (c.tcp_ports[i] != 0)
			s->tcp_listen[s->n_tcp_listen++].port = c.tcp_ports[i];
		if (c.udp_ports[i] != 0)
			s->udp_listen[s->n_udp_listen++] = c.udp_ports[i];
	}
	s->tx_cap = c.tx_ring_size;
	s->tx = rte_zmalloc_socket("net_tx", (sizeof(*s->tx) + sizeof(*s->tx_len)) * s->tx_cap, 0,
				   c.socket_id);
	if (s->tx == NULL) {
		util_fail(err, errlen, "cannot allocate the TX array");
		rte_free(s);
		return NULL;
	}
	s->tx_len = (uint32_t *)(s->tx + s->tx_cap);
	s->now = read_clock(s);
	TAILQ_INIT(&s->output_list);
	TAILQ_INIT(&s->release_list);
	TAILQ_INIT(&s->time_wait);
	TAILQ_INIT(&s->buf_waiters);
	TAILQ_INIT(&s->free_list);
	net_wheel_init(&s->wheel, s->now, net_tcp_timer_cb);
	if (net_tcp_init(s, err, errlen) != 0) {
		rte_free(s->tx);
		rte_free(s);
		return NULL;
	}
	NET_LOG(INFO, s, "created: %u connections, sndbuf %u, rcvbuf %u, mss %u, wscale %u",
		c.max_conns, c.sndbuf, c.rcvbuf, s->mss, s->rcv_wscale);
	return s;
}

void
net_stack_destroy(struct net_stack *s)
{
	if (s == NULL)
		return;
	/* packets first: those pointing into buffer pairs give them back */
	for (uint16_t i = 0; i < s->tx_count; i++)
		rte_pktmbuf_free(s->tx[(s->tx_head + i) % s->tx_cap]);
	rte_pktmbuf_free_bulk(s->stash, s->stash_n);
	net_tcp_fini(s);
	rte_free(s->tx);
	rte_free(s);
}

/* --- input --- */

static __attribute__((hot)) void
eth_input(struct net_stack *s, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;

	NET_INC(s, rx_packets);
	NET_ADD(s, rx_bytes, m->pkt_len);
	if (unlikely(m->nb_segs > 1) && rte_pktmbuf_linearize(m) != 0) {
		NET_INC(s, drop_chained);
		goto drop;
	}
	if (unlikely(m->data_len < sizeof(*eth))) {
		NET_INC(s, drop_truncated);
		goto drop;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (!rte_is_same_ether_addr(&eth->dst_addr, &s->cfg.mac) &&
	    !rte_is_broadcast_ether_addr(&eth->dst_addr)) {
		NET_INC(s, drop_not_our_mac);
		goto drop;
	}
	switch (eth->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		net_ipv4_input(s, m);
		return;
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		net_arp_input(s, m);
		return;
	default:
		NET_INC(s, drop_ethertype);
	}
drop:
	rte_pktmbuf_free(m);
}

__attribute__((hot)) void
net_stack_input(struct net_stack *s, struct rte_mbuf **pkts, uint16_t n)
{
	s->now = read_clock(s);
	s->now_from_input = true;
	/* Two phases per group of frames: look up and prefetch the
	 * connections and let the application prefetch what the requests
	 * read, then process each frame (which finds all that in cache);
	 * the first only where it pays (net_burst_choose). */
	for (uint16_t base = 0; base < n; base += NET_RX_GROUP) {
		uint16_t m = RTE_MIN((uint16_t)(n - base), (uint16_t)NET_RX_GROUP);

		bool timed;
		bool prepare = net_burst_choose(s, m, &timed);
		uint64_t t0 = timed ? rte_rdtsc() : 0;

		if (!prepare) {
			for (uint16_t i = 0; i < m; i++)
				eth_input(s, pkts[base + i]);
		} else {
			net_burst_prepare(s, pkts + base, m);
			for (uint16_t i = 0; i < m; i++) {
				s->rx.cur = &s->rx.slot[i];
				eth_input(s, pkts[base + i]);
			}
			s->rx.cur = NULL;
		}
		if (timed)
			net_burst_account(s, prepare, rte_rdtsc() - t0, m);
	}
	net_tcp_release_pending(s);
}

__attribute__((hot)) void
net_stack_poll(struct net_stack *s)
{
	/* After input in the same loop its time serves: the burst took
	 * microseconds, the wheel counts milliseconds, and a clock read is
	 * a good part of an idle loop. */
	if (!s->now_from_input)
		s->now = read_clock(s);
	s->now_from_input = false;
	net_wheel_run(s, &s->wheel, s->now);
	net_tcp_wake_buf_waiters(s);
	net_tcp_output_all(s);
	net_tcp_release_pending(s);
}
