/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Objects allocated on first need and kept for reuse: connection buffers
 * and out-of-order tables cost memory for the connections that use them
 * at the busiest moment so far, not for every slot. rte_malloc runs only
 * when that peak grows (a connection setting out with bytes to hold that
 * no earlier one left behind), never in the steady state.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "net/net_pool.h"

int
net_pool_init(struct net_pool *p, const char *name, size_t size, uint32_t max, int socket_id)
{
	p->free = rte_malloc_socket(name, sizeof(*p->free) * max, 0, socket_id);
	if (p->free == NULL)
		return -ENOMEM;
	p->made = NULL;
	p->made_arg = NULL;
	p->n_free = 0;
	p->n_made = 0;
	p->max = max;
	p->size = size;
	p->socket_id = socket_id;
	p->name = name;
	return 0;
}

void
net_pool_fini(struct net_pool *p)
{
	if (p->free == NULL)
		return;
	while (p->n_free > 0)
		rte_free(p->free[--p->n_free]);
	rte_free(p->free);
	p->free = NULL;
}

void *
net_pool_grow(struct net_pool *p)
{
	void *obj;

	if (p->n_made >= p->max)
		return NULL;
	obj = rte_malloc_socket(p->name, p->size, RTE_CACHE_LINE_SIZE, p->socket_id);
	if (obj == NULL)
		return NULL;
	p->n_made++;
	if (p->made != NULL)
		p->made(obj, p->made_arg);
	return obj;
}
