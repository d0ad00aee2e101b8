/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The stack's object pools (net_pool.c): buffer pairs and out-of-order
 * tables, allocated on first need and kept for reuse.
 */
#ifndef SEGCACHED_NET_POOL_H
#define SEGCACHED_NET_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

/* Memory taken from rte_malloc on first need, one object at a time, and
 * kept for reuse (last freed, first reused: still warm in cache) until
 * the stack is destroyed; at most `max` objects ever. A connection's
 * buffers and out-of-order table come from here, so only connections
 * that hold bytes cost buffer memory (net_pool.c). */
struct net_pool {
	void **free;      /* stack of objects ready for reuse */
	/* Called once per object, when rte_malloc made it (NULL: none). */
	void (*made)(void *obj, void *arg);
	void *made_arg;
	uint32_t n_free;
	uint32_t n_made;  /* objects allocated so far */
	uint32_t max;
	size_t size;      /* bytes per object */
	int socket_id;
	const char *name;
};

int net_pool_init(struct net_pool *p, const char *name, size_t size, uint32_t max,
		  int socket_id);
/* Free every object (all must have been put back). */
void net_pool_fini(struct net_pool *p);
/* A new object while fewer than max were made; NULL otherwise or when
 * rte_malloc fails. */
void *net_pool_grow(struct net_pool *p);

/* NULL when max objects are out or rte_malloc fails. */
static inline void *
net_pool_get(struct net_pool *p)
{
	if (likely(p->n_free > 0))
		return p->free[--p->n_free];
	return net_pool_grow(p);
}

static inline void
net_pool_put(struct net_pool *p, void *obj)
{
	p->free[p->n_free++] = obj;
}


#endif /* SEGCACHED_NET_POOL_H */
