/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libFuzzer target for lib/seg's warm restart loader (seg_restart_load).
 *
 * Once: an engine over a small heap in memory is filled with a known
 * workload (sets with and without a TTL, overwrites, appends, deletes,
 * enough keys for overflow buckets) and saved; that image is kept.
 * Per input: the image is copied, the input's patches are applied to its
 * restart area (header, TTL chains, segment images, saved hash table),
 * and a new engine loads it. The area carries a CRC32C of what it vouches
 * for, so the input's first byte chooses how the patched area is loaded:
 *  - raw (bit 0 clear): as patched. A patch that changed a byte the CRC
 *    covers must be refused (a warm start then is a finding), unless the
 *    patch also wrote the matching CRC;
 *  - resealed (bit 0 set): its CRC recomputed first
 *    (seg_test_restart_reseal), so the loader's own checks, not the
 *    checksum, must catch what the patch broke; a slot moved to an older
 *    copy of its own key is the one change they cannot see (only the
 *    checksum can), so there serving that copy is allowed.
 * Bit 1 of the first byte loads with verify_items (--restart-verify).
 * Whatever the bytes, the start must be
 *  - cold or refused: then the cache is empty, or
 *  - warm: every key it serves is a saved key with exactly the saved value
 *    and flags, it serves as many as the report claims (with verify; at
 *    most as many without: a slot naming another key's item only misses),
 *    curr_items is what the report claims, a fixed workload of
 *    new writes reads back whole afterwards (an allocator that hands out
 *    memory still in use loses them) without disturbing what was recovered,
 *    and once the clock passes every TTL no item with a TTL is served.
 * A crash, a sanitizer report or a hang (libFuzzer's -timeout) is a
 * finding too.
 *
 * Input: [mode:1] then a list of patches, each [op:1][offset:4, little
 * endian][len:1][len bytes]; op bit 0 chooses overwrite (0) or xor (1);
 * the offset is taken modulo the bytes of the area the loader reads
 * (PATCH_SPAN).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seg/seg.h"
#include "seg/seg_test.h"

#define KEYS 1500
#define NEW_KEYS 1000
#define TTL 100
#define VALUE_MAX 200
/* The header page, TTL chains, segment images and the hash table of this
 * geometry lie within the area's first 64 KiB. */
#define PATCH_SPAN (64u << 10)

static int64_t now_clock = 1700000000, now_wall = 1700000000;

static int64_t
engine_clock(void *arg)
{
	(void)arg;
	return now_clock;
}

static int64_t
wall_clock(void *arg)
{
	(void)arg;
	return now_wall;
}

static void
no_persist(void *arg, const void *addr, size_t len)
{
	(void)arg;
	(void)addr;
	(void)len;
}

struct expect {
	bool live;
	bool has_ttl;
	uint32_t flags;
	uint32_t vlen;
	uint8_t value[2 * VALUE_MAX];
	/* versions before the last (overwritten, or before an append): their
	 * bytes are still in the heap */
	unsigned nold;
	uint32_t old_len[2];
	uint8_t old[2][2 * VALUE_MAX];
};

static struct expect model[KEYS];
/* This input's mode (its first byte): the area resealed after the patches,
 * and the load reading every item (--restart-verify). */
static bool resealed, verify;
static uint8_t *pristine, *work, scratch[PATCH_SPAN];
static size_t area_len, heap_len;
static struct engine_config base_cfg;

static void
fail(const char *what, int key)
{
	fprintf(stderr, "fuzz_restart: %s (key %d)\n", what, key);
	abort();
}

static size_t
key_of(char *buf, const char *prefix, int i)
{
	return (size_t)snprintf(buf, 32, "%s:%d", prefix, i);
}

static uint32_t
fill_value(uint8_t *v, int i, int version)
{
	uint32_t n = 1 + (uint32_t)((i * 37 + version * 11) % VALUE_MAX);

	for (uint32_t j = 0; j < n; j++)
		v[j] = (uint8_t)(i * 131 + j * 7 + version);
	return n;
}

static struct engine *
open_engine(uint8_t *mem, struct seg_restart_report *rep)
{
	struct engine_config cfg = base_cfg;
	struct seg_restart_area a = {
		.addr = mem, .len = area_len, .persist = no_persist, .wall = wall_clock,
		.verify_items = verify,
	};
	char err[256];
	struct engine *e;

	cfg.heap = mem + area_len;
	cfg.heap_len = heap_len;
	e = seg_create(&cfg, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "fuzz_restart: seg_create: %s\n", err);
		abort();
	}
	if (rep != NULL && seg_restart_load(e, &a, 1, rep) != 0)
		fail("seg_restart_load refused an area of the right size", -1);
	return e;
}

static void
store(struct engine_worker *w, enum engine_store_mode mode, const char *key, size_t klen,
      const uint8_t *v, uint32_t vlen, uint32_t flags, int64_t exptime)
{
	if (engine_store(w, mode, key, klen, v, vlen, flags, exptime, 0, NULL) != ENGINE_OK)
		fail("the set-up workload was not stored", -1);
}

static void
keep_old(struct expect *m)
{
	m->old_len[m->nold] = m->vlen;
	memcpy(m->old[m->nold++], m->value, m->vlen);
}

/* The saved image and what it must serve. */
static void
build_pristine(void)
{
	struct seg_restart_area a = { .persist = no_persist, .wall = wall_clock };
	struct seg_restart_report rep;
	struct engine_worker *w;
	struct engine *e;
	char key[32], err[256];

	base_cfg.memory = 4u << 20;
	base_cfg.segment_size = 64u << 10;
	base_cfg.max_workers = 2;
	base_cfg.hash_power = 7; /* 128 buckets for 1,500 keys: overflow chains */
	base_cfg.clock = engine_clock;
	area_len = seg_restart_area_bytes(&base_cfg);
	heap_len = seg_heap_bytes(&base_cfg);
	if (area_len < PATCH_SPAN || heap_len == 0)
		fail("geometry", -1);
	/* aligned_alloc wants a multiple of the alignment */
	size_t whole = (area_len + heap_len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);

	pristine = aligned_alloc(2u << 20, whole);
	work = aligned_alloc(2u << 20, whole);
	if (!pristine || !work)
		abort();
	memset(pristine, 0, area_len + heap_len);
	e = open_engine(pristine, &rep);
	w = engine_worker_create(e);
	for (int i = 0; i < KEYS; i++) {
		struct expect *m = &model[i];
		size_t klen = key_of(key, "k", i);

		m->has_ttl = i % 3 == 0;
		m->flags = (uint32_t)(i % 4 == 0 ? i * 2654435761u : 0);
		m->vlen = fill_value(m->value, i, 0);
		store(w, ENGINE_SET, key, klen, m->value, m->vlen, m->flags, m->has_ttl ? TTL : 0);
		m->live = true;
		if (i % 5 == 0) { /* overwritten: only the second version may be served */
			keep_old(m);
			m->vlen = fill_value(m->value, i, 1);
			store(w, ENGINE_SET, key, klen, m->value, m->vlen, m->flags,
			      m->has_ttl ? TTL : 0);
		}
		if (i % 7 == 0) {
			uint8_t tail[VALUE_MAX];
			uint32_t n = fill_value(tail, i, 2);

			keep_old(m);
			store(w, ENGINE_APPEND, key, klen, tail, n, 0, 0);
			memcpy(m->value + m->vlen, tail, n);
			m->vlen += n;
		}
		if (i % 11 == 0) {
			if (engine_delete(w, key, klen, 0) != ENGINE_OK)
				fail("delete", i);
			m->live = false;
		}
	}
	engine_worker_destroy(w);
	a.addr = pristine;
	a.len = area_len;
	if (seg_restart_save(e, &a, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_restart: save: %s\n", err);
		abort();
	}
	engine_destroy(e);
}

static void
apply_patches(const uint8_t *d, size_t n)
{
	while (n >= 6) {
		uint8_t op = d[0];
		uint32_t off = (uint32_t)d[1] | (uint32_t)d[2] << 8 | (uint32_t)d[3] << 16 |
			       (uint32_t)d[4] << 24;
		size_t len = d[5];

		d += 6;
		n -= 6;
		if (len > n)
			len = n;
		off %= PATCH_SPAN;
		if (len > PATCH_SPAN - off)
			len = PATCH_SPAN - off;
		for (size_t i = 0; i < len; i++)
			work[off + i] = (op & 1) ? work[off + i] ^ d[i] : d[i];
		d += len;
		n -= len;
	}
}

static bool
same(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* Reads key i: 1 when served (and checked byte for byte), 0 when not. A
 * resealed area may hold a slot moved to an older copy of its own key
 * (an overwritten or deleted version still in the heap): no check but the
 * checksum can tell (docs/architecture.md, "Warm restart"), so there that
 * copy is the worst allowed; anywhere else it is a finding. */
static int
check_saved_key(struct engine_worker *w, int i)
{
	uint8_t buf[2 * VALUE_MAX];
	struct engine_item it;
	char key[32];
	size_t klen = key_of(key, "k", i);
	enum engine_status st = engine_get(w, key, klen, ENGINE_NO_TOUCH, buf, sizeof(buf), &it);

	if (st == ENGINE_MISS)
		return 0;
	if (st != ENGINE_OK)
		fail("a recovered item is not readable", i);
	const struct expect *m = &model[i];
	bool older = same(buf, it.vlen, m->value, m->vlen) && !m->live;

	for (unsigned v = 0; v < m->nold; v++)
		older |= same(buf, it.vlen, m->old[v], m->old_len[v]);
	if (!(m->live && same(buf, it.vlen, m->value, m->vlen)) && !(resealed && older))
		fail(m->live ? "a recovered value is not the saved one" : "a deleted key came back",
		     i);
	if (it.flags != model[i].flags)
		fail("recovered flags are not the saved ones", i);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seg_restart_report rep;
	struct engine_stats st;
	struct engine_worker *w;
	struct engine *e;
	uint64_t served = 0;
	char key[32];
	bool raw_changed = false;

	if (pristine == NULL)
		build_pristine();
	if (size == 0)
		return 0;
	memcpy(work, pristine, area_len + heap_len);
	apply_patches(data + 1, size - 1);
	resealed = data[0] & 1;
	verify = data[0] & 2;
	if (resealed) {
		seg_test_restart_reseal(work, area_len);
	} else {
		/* Would resealing change the CRC? Then the raw area must fail
		 * it. (Everything the CRC covers lies within PATCH_SPAN.) */
		memcpy(scratch, work, PATCH_SPAN);
		raw_changed = seg_test_restart_reseal(scratch, PATCH_SPAN) == 1;
	}
	now_clock = now_wall = 1700000010; /* down for 10 s: no TTL ran out */
	e = open_engine(work, &rep);
	if (raw_changed && rep.state == SEG_RESTART_WARM)
		fail("a changed area passed the checksum", -1);
	w = engine_worker_create(e);
	for (int i = 0; i < KEYS; i++)
		served += (uint64_t)check_saved_key(w, i);
	if (size < 7) { /* no patch: the saved cache comes back whole */
		uint64_t live = 0;

		for (int i = 0; i < KEYS; i++)
			live += model[i].live;
		if (rep.state != SEG_RESTART_WARM || served != live)
			fail("an untouched image does not come back whole", -1);
	}
	if (rep.state != SEG_RESTART_WARM && served != 0)
		fail("a cold or refused start serves saved items", -1);
	/* Without verify, a slot that names an item of another key is counted
	 * and only misses (its reader compares keys): never more served. */
	if (rep.state == SEG_RESTART_WARM && (verify ? served != rep.items : served > rep.items))
		fail("a warm start serves another number of items than it reports", -1);
	engine_stats(e, &st);
	if (st.curr_items != (rep.state == SEG_RESTART_WARM ? rep.items : 0))
		fail("curr_items is not what the load reports", -1);

	/* New writes after the load: every one reads back, and the recovered
	 * items stay as they were. */
	for (int i = 0; i < NEW_KEYS; i++) {
		uint8_t v[VALUE_MAX];
		uint32_t n = fill_value(v, i, 3);
		size_t klen = key_of(key, "n", i);

		if (engine_store(w, ENGINE_SET, key, klen, v, n, 0, 0, 0, NULL) != ENGINE_OK)
			fail("a new write after the load was refused", i);
	}
	for (int i = 0; i < NEW_KEYS; i++) {
		uint8_t v[VALUE_MAX], want[VALUE_MAX];
		uint32_t n = fill_value(want, i, 3);
		struct engine_item it;
		size_t klen = key_of(key, "n", i);

		if (engine_get(w, key, klen, ENGINE_NO_TOUCH, v, sizeof(v), &it) != ENGINE_OK)
			fail("a new write after the load was lost", i);
		if (it.vlen != n || memcmp(v, want, n) != 0)
			fail("a new write after the load reads back other bytes", i);
	}
	uint64_t again = 0;

	for (int i = 0; i < KEYS; i++)
		again += (uint64_t)check_saved_key(w, i);
	if (again != served)
		fail("recovered items were lost to new writes", -1);

	/* Past every TTL: nothing with a TTL is served. */
	now_clock += 2 * TTL;
	now_wall += 2 * TTL;
	engine_expire(e);
	for (int i = 0; i < KEYS; i++) {
		if (!model[i].has_ttl)
			continue;
		uint8_t buf[2 * VALUE_MAX];
		struct engine_item it;
		size_t klen = key_of(key, "k", i);

		if (engine_get(w, key, klen, ENGINE_NO_TOUCH, buf, sizeof(buf), &it) != ENGINE_MISS)
			fail("an item is served after its TTL", i);
	}
	engine_worker_destroy(w);
	engine_destroy(e);
	return 0;
}
