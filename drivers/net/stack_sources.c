/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Open connections per source address (stack_sources.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_random.h>

#include "drivers/net/stack_sources.h"
#include "util/util_err.h"

struct stack_sources {
	struct rte_hash *h;
};

void
stack_source_ipv4(struct stack_source *src, uint32_t addr)
{
	memset(src->addr, 0, 10);
	src->addr[10] = 0xff;
	src->addr[11] = 0xff;
	src->addr[12] = (uint8_t)(addr >> 24);
	src->addr[13] = (uint8_t)(addr >> 16);
	src->addr[14] = (uint8_t)(addr >> 8);
	src->addr[15] = (uint8_t)addr;
}

bool
stack_source_of(struct stack_source *src, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		stack_source_ipv4(src, ntohl(in->sin_addr.s_addr));
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		memcpy(src->addr, a->s6_addr, 16);
		/* an IPv4 client of a dual-stack socket counts as its IPv4 address */
		if (!IN6_IS_ADDR_V4MAPPED(a))
			memset(src->addr + 8, 0, 8);
		return true;
	}
	return false;
}

struct stack_sources *
stack_sources_create(const char *name, uint32_t max_sources, int socket_id, char *err,
		     size_t errlen)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = max_sources < 8 ? 8 : max_sources,
		.key_len = sizeof(struct stack_source),
		.hash_func = rte_hash_crc,
		/* keyed per table: sources cannot be picked to share a bucket
		 * without knowing it */
		.hash_func_init_val = (uint32_t)rte_rand(),
		.socket_id = socket_id,
		/* the extendable table guarantees room for `entries` keys */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct stack_sources *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		util_fail(err, errlen, "out of memory");
		return NULL;
	}
	t->h = rte_hash_create(&hp);
	if (t->h == NULL) {
		util_fail(err, errlen,
			  "cannot create the per-source connection table (%u sources): %s",
			  max_sources, rte_strerror(rte_errno));
		free(t);
		return NULL;
	}
	return t;
}

void
stack_sources_destroy(struct stack_sources *t)
{
	if (t == NULL)
		return;
	rte_hash_free(t->h);
	free(t);
}

bool
stack_sources_take(struct stack_sources *t, const struct stack_source *src, uint32_t limit)
{
	void *data;
	uintptr_t n = 0;

	if (rte_hash_lookup_data(t->h, src, &data) >= 0)
		n = (uintptr_t)data;
	if (n >= limit)
		return false;
	/* an existing key gets its data replaced in place */
	return rte_hash_add_key_data(t->h, src, (void *)(n + 1)) == 0;
}

void
stack_sources_put(struct stack_sources *t, const struct stack_source *src)
{
	void *data;
	uintptr_t n;

	if (rte_hash_lookup_data(t->h, src, &data) < 0)
		return;
	n = (uintptr_t)data;
	if (n <= 1)
		rte_hash_del_key(t->h, src);
	else
		rte_hash_add_key_data(t->h, src, (void *)(n - 1));
}

uint32_t
stack_sources_count(const struct stack_sources *t, const struct stack_source *src)
{
	void *data;

	if (rte_hash_lookup_data(t->h, src, &data) < 0)
		return 0;
	return (uint32_t)(uintptr_t)data;
}

enum stack_admin_take
stack_admin_take(struct stack_admin_sources *t, const struct stack_source *src, uint64_t id,
		 unsigned per_source)
{
	rte_spinlock_t *lock = &t->lock;
	enum stack_admin_take r = STACK_ADMIN_FULL;
	unsigned same = 0, i, free_slot = STACK_ADMIN_SLOTS;

	rte_spinlock_lock(lock);
	for (i = 0; i < STACK_ADMIN_SLOTS; i++) {
		if (t->slot[i].id == 0) {
			if (free_slot == STACK_ADMIN_SLOTS)
				free_slot = i;
		} else if (memcmp(t->slot[i].src.addr, src->addr, sizeof(src->addr)) == 0) {
			same++;
		}
	}
	if (same >= per_source) {
		r = STACK_ADMIN_SOURCE_FULL;
	} else if (free_slot < STACK_ADMIN_SLOTS) {
		t->slot[free_slot].src = *src;
		t->slot[free_slot].id = id;
		t->used++;
		r = STACK_ADMIN_TAKEN;
	}
	rte_spinlock_unlock(lock);
	return r;
}

void
stack_admin_put(struct stack_admin_sources *t, uint64_t id)
{
	rte_spinlock_t *lock = &t->lock;

	rte_spinlock_lock(lock);
	for (unsigned i = 0; i < STACK_ADMIN_SLOTS; i++) {
		if (t->slot[i].id == id) {
			t->slot[i].id = 0;
			t->used--;
			break;
		}
	}
	rte_spinlock_unlock(lock);
}
