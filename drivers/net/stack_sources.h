/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Open connections per source address, for --max-conns-per-source. Both
 * stacks count with it: the posix stack in one table for all its threads
 * (under a lock, next to accept(2) and close(2)), the native stack in one
 * table per worker lcore (no lock, no cache line shared with another
 * lcore). A table maps the source to its count (plain memory: the posix
 * stack also runs without the EAL, whose allocator rte_hash needs); a source
 * leaves the table when its last connection closes, so a table never holds
 * more sources than connections.
 *
 * A source is an IPv4 address, or an IPv6 /64: a host is given a /64, and
 * counting single IPv6 addresses would let one host open 2^64 "sources".
 */
#ifndef SEGCACHED_STACK_SOURCES_H
#define SEGCACHED_STACK_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdalign.h>
#include <stdint.h>

#include <sys/socket.h>

#include <rte_spinlock.h>

#ifdef __cplusplus
extern "C" {
#endif

/* IPv4 as an IPv4-mapped IPv6 address (::ffff:a.b.c.d); IPv6 as its /64.
 * 8-byte aligned: rte_hash_crc reads the key 8 bytes at a time. */
struct stack_source {
	alignas(8) uint8_t addr[16];
};

void stack_source_ipv4(struct stack_source *src, uint32_t addr);
/* false for an address family that is neither IPv4 nor IPv6. */
bool stack_source_of(struct stack_source *src, const struct sockaddr *sa);

struct stack_sources;

/* A table for up to max_sources sources at once (at least the connections
 * it will count); a source beyond them is refused. NULL with a message in
 * err. */
struct stack_sources *stack_sources_create(uint32_t max_sources, char *err, size_t errlen);
void stack_sources_destroy(struct stack_sources *t);

/* Counts one more connection of src unless it holds `limit` already:
 * true when counted (release it with stack_sources_put()), false when it
 * is refused. Also false, and counted as refused, when the table is full,
 * which only a table smaller than the connections it counts can be. */
bool stack_sources_take(struct stack_sources *t, const struct stack_source *src,
			uint32_t limit);
/* One connection of src closed. */
void stack_sources_put(struct stack_sources *t, const struct stack_source *src);
/* Connections src holds now (tests, stats). */
uint32_t stack_sources_count(const struct stack_sources *t, const struct stack_source *src);

/* The admin port's connections (at most STACK_ADMIN_CONNS, stack.h): a
 * few slots with their source and the connection's id, shared by every
 * thread or lcore of a stack under a spinlock (taken only at an admin
 * port's accept and close), so that one source holds at most
 * STACK_ADMIN_CONNS_PER_SOURCE of them and cannot lock the others out.
 * Zeroed memory is an empty table. */
#define STACK_ADMIN_SLOTS 16

struct stack_admin_sources {
	rte_spinlock_t lock;            /* zeroed: free */
	unsigned used;
	struct {
		struct stack_source src;
		uint64_t id;            /* 0: a free slot */
	} slot[STACK_ADMIN_SLOTS];
};

enum stack_admin_take {
	STACK_ADMIN_TAKEN,
	STACK_ADMIN_FULL,               /* every slot is held */
	STACK_ADMIN_SOURCE_FULL,        /* src holds per_source already */
};

/* Holds a slot for connection id (not 0, unique among those open) of src. */
enum stack_admin_take stack_admin_take(struct stack_admin_sources *t,
				       const struct stack_source *src, uint64_t id,
				       unsigned per_source);
/* Connection id closed; nothing when it holds no slot. */
void stack_admin_put(struct stack_admin_sources *t, uint64_t id);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_STACK_SOURCES_H */
