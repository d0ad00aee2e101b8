/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Open connections per source address (stack_sources.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <sys/random.h>
#include <time.h>

#include <rte_hash_crc.h>

#include "drivers/net/stack_sources.h"
#include "util/util_err.h"

/* An open-addressing table (linear probing, deletion by shifting back,
 * so no tombstones) of source -> connections, at most half full: room for
 * max_sources sources is allocated at creation, nothing later. Plain
 * memory, not rte_hash's: the posix stack also runs where the EAL, whose
 * allocator rte_hash needs, does not. One thread at a time (a native
 * worker's own, the posix stack's under its lock). */
struct stack_source_slot {
	struct stack_source src;
	uint32_t conns; /* 0: empty */
};

struct stack_sources {
	struct stack_source_slot *slot;
	uint32_t mask;
	uint32_t used; /* sources held: at most half the slots */
	uint32_t seed; /* keyed per table: sources cannot be picked to collide */
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
stack_sources_create(uint32_t max_sources, char *err, size_t errlen)
{
	struct stack_sources *t = calloc(1, sizeof(*t));
	uint32_t n = 16;

	while (n < 2 * (uint64_t)max_sources && n < (1u << 30))
		n <<= 1;
	if (t != NULL)
		t->slot = calloc(n, sizeof(*t->slot));
	if (t == NULL || t->slot == NULL) {
		util_fail(err, errlen,
			  "cannot allocate the per-source connection table (%u sources)",
			  max_sources);
		free(t);
		return NULL;
	}
	t->mask = n - 1;
	if (getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) != sizeof(t->seed))
		t->seed = (uint32_t)(uintptr_t)t ^ (uint32_t)time(NULL);
	return t;
}

void
stack_sources_destroy(struct stack_sources *t)
{
	if (t == NULL)
		return;
	free(t->slot);
	free(t);
}

static uint32_t
home_of(const struct stack_sources *t, const struct stack_source *src)
{
	return rte_hash_crc(src->addr, sizeof(src->addr), t->seed) & t->mask;
}

/* The slot holding src, or the empty slot where it would go. */
static uint32_t
find(const struct stack_sources *t, const struct stack_source *src)
{
	uint32_t i = home_of(t, src);

	while (t->slot[i].conns != 0 &&
	       memcmp(t->slot[i].src.addr, src->addr, sizeof(src->addr)) != 0)
		i = (i + 1) & t->mask;
	return i;
}

/* Empties slot i, moving back every later entry of its probe run that
 * would no longer be found past the hole. */
static void
remove_at(struct stack_sources *t, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		j = (j + 1) & t->mask;
		if (t->slot[j].conns == 0)
			break;
		uint32_t home = home_of(t, &t->slot[j].src);

		/* j's entry stays when its home lies cyclically in (i, j] */
		if (((j - home) & t->mask) < ((j - i) & t->mask))
			continue;
		t->slot[i] = t->slot[j];
		i = j;
	}
	t->slot[i].conns = 0;
}

bool
stack_sources_take(struct stack_sources *t, const struct stack_source *src, uint32_t limit)
{
	uint32_t i = find(t, src);

	if (t->slot[i].conns >= limit)
		return false;
	if (t->slot[i].conns == 0) {
		/* more sources than it was made for: refused, never full */
		if (t->used >= t->mask / 2 + 1)
			return false;
		t->slot[i].src = *src;
		t->used++;
	}
	t->slot[i].conns++;
	return true;
}

void
stack_sources_put(struct stack_sources *t, const struct stack_source *src)
{
	uint32_t i = find(t, src);

	if (t->slot[i].conns == 0)
		return;
	if (--t->slot[i].conns == 0) {
		remove_at(t, i);
		t->used--;
	}
}

uint32_t
stack_sources_count(const struct stack_sources *t, const struct stack_source *src)
{
	return t->slot[find(t, src)].conns;
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
