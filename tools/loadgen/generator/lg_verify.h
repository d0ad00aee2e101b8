/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * --verify all: which versions of each key a get may return. The sampled
 * mode checks a value's bytes against the version in its own flags, so a
 * stale value (an older set's, whole and well formed) or a lost update
 * passes; here every set of a key takes the key's next version, and a get
 * must return a version no older than the newest one that had certainly
 * replaced every other before the get was sent, and no newer than any
 * version handed out when its answer arrived.
 *
 * Versions are (epoch << 24) | counter: the epoch tells this run's values
 * from an earlier run's on the same server (acceptable only before this
 * run's first acknowledged set of the key).
 *
 * The floor is conservative so that reordering never reads as staleness:
 * a set acknowledged raises it to its own version only when no other set
 * of the key was outstanding (prepared, sent or unacknowledged) when it
 * was prepared; with sets overlapping, the server may apply them in either
 * order, and the floor stays where it was. Shared by all workers: one
 * spin lock per key (the sampled mode never touches this).
 */
#ifndef LG_VERIFY_H
#define LG_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#define LG_VERIFY_COUNTER_BITS 24
#define LG_VERIFY_COUNTER_MASK ((1u << LG_VERIFY_COUNTER_BITS) - 1)

struct lg_verify_key {
	uint32_t floor;       /* counter: no older version may be returned (0: none yet) */
	uint32_t next;        /* counter of the newest version handed out */
	uint32_t outstanding; /* sets prepared and not yet acknowledged or given up */
	uint8_t lock;
	bool wrapped;         /* the counter wrapped: older numbers may be larger */
};

struct lg_verify {
	uint64_t nkeys;
	uint32_t epoch;       /* 1..255 */
	struct lg_verify_key *keys;
};

/* Returns 0, or -1 when out of memory. epoch_seed picks the epoch. */
int lg_verify_init(struct lg_verify *v, uint64_t nkeys, uint64_t epoch_seed);
void lg_verify_free(struct lg_verify *v);

/* A set of key is prepared: returns its version (the flags it stores), and
 * in *raise the floor its acknowledgement establishes (0: none). */
uint32_t lg_verify_set_prepared(struct lg_verify *v, uint64_t key, uint32_t *raise);
/* The set was acknowledged (STORED). */
void lg_verify_set_acked(struct lg_verify *v, uint64_t key, uint32_t raise);
/* The set was never sent, failed or was lost. */
void lg_verify_set_dropped(struct lg_verify *v, uint64_t key);
/* The floor of key, when a get of it is sent. */
uint32_t lg_verify_floor(struct lg_verify *v, uint64_t key);
/* A get sent when the key's floor was floor returned version: NULL when it
 * may be current, or why not. */
const char *lg_verify_check(struct lg_verify *v, uint64_t key, uint32_t floor,
			    uint32_t version);

#endif /* LG_VERIFY_H */
