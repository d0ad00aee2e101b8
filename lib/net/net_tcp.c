/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * TCP's connection table: the preallocated slots, the 4-tuple hash (rte_hash
 * with CRC32C), taking and releasing a slot, and the buffer pairs the
 * connections hold (a pool; pairs still pointed at by mbufs in flight).
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "net/net_tcp.h"
#include "util/util_err.h"

/* The last mbuf pointing into a pair that no connection holds is freed
 * (by the driver, after transmission). */
static void
bufs_unpinned(void *addr, void *opaque)
{
	struct net_bufs_tail *t = opaque;
	struct net_stack *s = t->stack;

	RTE_SET_USED(addr);
	if (s == NULL) {
		rte_free(t->bufs); /* its stack is gone */
		return;
	}
	TAILQ_REMOVE(&s->bufs_in_flight, t, link);
	net_pool_put(&s->buf_pool, t->bufs);
}

static rte_iova_t
iova_of(const void *va)
{
	const struct rte_memseg *ms;

	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		return (uintptr_t)va;
	ms = rte_mem_virt2memseg(va, NULL);
	if (ms == NULL || ms->iova == RTE_BAD_IOVA)
		return RTE_BAD_IOVA;
	return ms->iova + RTE_PTR_DIFF(va, ms->addr);
}

/* buf_pool's `made`: the tail of a new pair. Its IOVA is looked up once:
 * a send ring that spans two pages not adjacent in IOVA space (possible
 * with physical addresses) is always copied from. */
static void
bufs_made(void *obj, void *arg)
{
	struct net_stack *s = arg;
	uint8_t *bufs = obj;
	struct net_bufs_tail *t = tcp_bufs_tail(s, bufs);
	size_t len = (size_t)s->cfg.sndbuf;
	rte_iova_t first = iova_of(bufs);

	memset(t, 0, sizeof(*t));
	t->stack = s;
	t->bufs = bufs;
	t->iova = first != RTE_BAD_IOVA && iova_of(bufs + len - 1) == first + len - 1 ?
		first : RTE_BAD_IOVA;
	t->shared.free_cb = bufs_unpinned;
	t->shared.fcb_opaque = t;
}

size_t
net_buf_pair_bytes(uint32_t sndbuf, uint32_t rcvbuf)
{
	return net_bufs_tail_offset(sndbuf, rcvbuf) + sizeof(struct net_bufs_tail);
}

void
tcp_bufs_put(struct net_stack *s, uint8_t *bufs)
{
	struct net_bufs_tail *t = tcp_bufs_tail(s, bufs);

	if (rte_mbuf_ext_refcnt_update(&t->shared, -1) == 0)
		net_pool_put(&s->buf_pool, bufs);
	else
		TAILQ_INSERT_TAIL(&s->bufs_in_flight, t, link);
}

/* At destroy: pairs still pointed at by mbufs the driver holds are left
 * to those mbufs, which free them (bufs_unpinned). */
static void
bufs_orphan_in_flight(struct net_stack *s)
{
	struct net_bufs_tail *t;

	while ((t = TAILQ_FIRST(&s->bufs_in_flight)) != NULL) {
		TAILQ_REMOVE(&s->bufs_in_flight, t, link);
		t->stack = NULL;
	}
}

int
net_tcp_init(struct net_stack *s, char *err, size_t errlen)
{
	static uint32_t instance;
	const struct net_stack_config *cfg = &s->cfg;
	char hname[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = hname,
		.entries = RTE_MAX(cfg->max_conns, 8u),
		.key_len = sizeof(struct net_conn_key),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = (uint32_t)s->secret[1],
		.socket_id = cfg->socket_id,
		/* The extendable table guarantees room for `entries` keys. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	size_t tail_off = net_bufs_tail_offset(cfg->sndbuf, cfg->rcvbuf);
	size_t pair = net_buf_pair_bytes(cfg->sndbuf, cfg->rcvbuf);
	/* Under a real cap the reserved port gets pairs of its own, beyond
	 * it (without one every connection can hold a pair anyway). */
	uint32_t reserve = cfg->max_buf_pairs < cfg->max_conns ?
			   RTE_MIN(cfg->reserved_slots, NET_RESERVED_BUF_PAIRS) : 0;

	snprintf(hname, sizeof(hname), "net_conns_%u",
		 __atomic_fetch_add(&instance, 1, __ATOMIC_RELAXED));
	s->bufs_tail_off = tail_off;
	s->buf_cap = cfg->max_buf_pairs;
	TAILQ_INIT(&s->bufs_in_flight);
	s->conns = rte_zmalloc_socket("net_conns", sizeof(*s->conns) * cfg->max_conns,
				      RTE_CACHE_LINE_SIZE, cfg->socket_id);
	s->conn_hash = rte_hash_create(&hp);
	if (s->conns == NULL || s->conn_hash == NULL ||
	    net_pool_init(&s->buf_pool, "net_bufs", pair, cfg->max_buf_pairs + reserve,
			  cfg->socket_id) < 0 ||
	    net_pool_init(&s->ooo_pool, "net_ooo", sizeof(struct net_ooo_range) * cfg->ooo_max,
			  cfg->max_conns, cfg->socket_id) < 0) {
		util_fail(err, errlen, "cannot allocate %u connections (%zu bytes, hash: %s)",
			  cfg->max_conns, sizeof(*s->conns) * cfg->max_conns,
			  s->conn_hash == NULL ? rte_strerror(rte_errno) : "ok");
		net_tcp_fini(s);
		return -1;
	}
	s->buf_pool.made = bufs_made;
	s->buf_pool.made_arg = s;
	for (uint32_t i = 0; i < cfg->max_conns; i++) {
		struct net_conn *c = &s->conns[i];

		c->stack = s;
		TAILQ_INSERT_TAIL(&s->free_list, c, out_link);
	}
	return 0;
}

void
net_tcp_fini(struct net_stack *s)
{
	if (s->conns != NULL) {
		for (uint32_t i = 0; i < s->cfg.max_conns; i++) {
			struct net_conn *c = &s->conns[i];

			if (c->state != TCP_CLOSED && !(c->flags & CF_RELEASED))
				tcp_conn_release(s, c, NET_CLOSE_STACK);
		}
		net_tcp_release_pending(s); /* their buffers go back to the pools */
	}
	bufs_orphan_in_flight(s);
	rte_hash_free(s->conn_hash);
	net_pool_fini(&s->buf_pool);
	net_pool_fini(&s->ooo_pool);
	rte_free(s->conns);
	s->conn_hash = NULL;
	s->conns = NULL;
}

struct net_conn *
tcp_conn_lookup(struct net_stack *s, const struct net_conn_key *k)
{
	void *data;

	if (rte_hash_lookup_data(s->conn_hash, k, &data) < 0)
		return NULL;
	return data;
}

struct net_listener *
tcp_listener(struct net_stack *s, uint16_t port)
{
	for (unsigned i = 0; i < s->n_tcp_listen; i++)
		if (s->tcp_listen[i].port == port)
			return &s->tcp_listen[i];
	return NULL;
}

/* Free slots beyond the reserve, or any free slot when reserved_ok. */
static bool
free_slot_usable(const struct net_stack *s, bool reserved_ok)
{
	uint32_t free = s->cfg.max_conns - s->conns_in_use;

	return free > (reserved_ok ? 0 : s->cfg.reserved_slots);
}

bool
tcp_slot_available(const struct net_stack *s, bool reserved_ok)
{
	return (free_slot_usable(s, reserved_ok) && !TAILQ_EMPTY(&s->free_list)) ||
	       !TAILQ_EMPTY(&s->time_wait);
}

struct net_conn *
tcp_conn_alloc(struct net_stack *s, const struct net_conn_key *k, bool reserved_ok)
{
	struct net_conn *c = NULL;

	if (free_slot_usable(s, reserved_ok))
		c = TAILQ_FIRST(&s->free_list);
	if (c == NULL) {
		/* Full: a TIME_WAIT connection is the cheapest to give up. */
		c = TAILQ_FIRST(&s->time_wait);
		if (c == NULL) {
			NET_INC(s, tcp_conn_table_full);
			return NULL;
		}
		NET_INC(s, tcp_time_wait_reused);
		tcp_conn_release(s, c, NET_CLOSE_NORMAL);
		/* Nothing up the stack refers to a TIME_WAIT slot: take it
		 * straight off the release list. */
		TAILQ_REMOVE(&s->release_list, c, out_link);
		s->conns_in_use--;
	} else {
		TAILQ_REMOVE(&s->free_list, c, out_link);
	}
	/* A recycled TIME_WAIT slot skipped net_tcp_release_pending. */
	tcp_bufs_detach(s, c);
	tcp_ooo_detach(s, c);
	memset(c, 0, sizeof(*c));
	c->stack = s;
	c->key = *k;
	s->conn_epoch++;
	if (rte_hash_add_key_data(s->conn_hash, k, c) < 0) {
		TAILQ_INSERT_HEAD(&s->free_list, c, out_link);
		NET_INC(s, tcp_conn_table_full);
		return NULL;
	}
	c->mss = 536; /* RFC 9293 default until the peer says otherwise */
	c->rto = s->cfg.rto_initial_us;
	s->conns_in_use++;
	return c;
}

/* The application closed c and the stack still holds it for the close
 * handshake: bounded in number (max_orphans) and in time (TD_LINGER). */
void
tcp_orphan_end(struct net_stack *s, struct net_conn *c)
{
	if (c->flags & CF_ORPHAN) {
		c->flags &= ~CF_ORPHAN;
		s->orphans--;
	}
}

void
tcp_conn_release(struct net_stack *s, struct net_conn *c, enum net_close_reason why)
{
	if (c->state == TCP_CLOSED || (c->flags & CF_RELEASED))
		return;
	tcp_orphan_end(s, c);
	if (c->state == TCP_SYN_RCVD && c->listen_idx < NET_MAX_LISTEN) {
		struct net_listener *l = &s->tcp_listen[c->listen_idx];

		if (l->syn_rcvd > 0)
			l->syn_rcvd--;
	}
	if (c->state == TCP_TIME_WAIT)
		TAILQ_REMOVE(&s->time_wait, c, tw_link);
	if (c->flags & CF_BUF_WAIT)
		TAILQ_REMOVE(&s->buf_waiters, c, wait_link);
	rte_hash_del_key(s->conn_hash, &c->key);
	s->conn_epoch++;
	net_timer_cancel(&s->wheel, &c->timer);
	if (c->flags & CF_ON_OUTPUT)
		TAILQ_REMOVE(&s->output_list, c, out_link);
	c->flags = (c->flags & CF_APP_KNOWS) | CF_RELEASED;
	c->state = TCP_CLOSED;
	/* The slot is reused only after the current event, so callers up the
	 * stack may still look at c (and see CF_RELEASED). */
	TAILQ_INSERT_TAIL(&s->release_list, c, out_link);
	NET_INC(s, tcp_closed);
	if (c->flags & CF_APP_KNOWS) {
		c->flags &= ~CF_APP_KNOWS;
		if (s->ops != NULL && s->ops->closed != NULL)
			s->ops->closed(s->cfg.app_arg, c, why);
	}
}

void
net_tcp_release_list(struct net_stack *s)
{
	struct net_conn *c;

	while ((c = TAILQ_FIRST(&s->release_list)) != NULL) {
		TAILQ_REMOVE(&s->release_list, c, out_link);
		c->flags = 0;
		/* Only now: a recv callback that aborted its connection may
		 * still be reading the receive buffer. */
		tcp_bufs_detach(s, c);
		tcp_ooo_detach(s, c);
		TAILQ_INSERT_TAIL(&s->free_list, c, out_link);
		s->conns_in_use--;
	}
}
