/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Fill mode, the "memcached for small objects" experiment: store keys
 * 1, 2, 3, ... with values of the given size into a fresh engine until the
 * first eviction (or the first failed set), then count what is resident two
 * ways: the engine's curr_items, and reading every stored key back.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "keys.h"
#include "rng.h"

static char stop_reason[64];

int
sb_fill(const struct sb_options *o, enum sb_engine_kind kind,
	struct sb_fill_result *r)
{
	unsigned width = o->key_format == SB_KEY_PADDED ? o->key_size : 0;
	uint64_t rng = rng_seed(o->seed, 0xf111);
	size_t vcap = o->vmax ? o->vmax : 1;
	char *val = malloc(vcap), *buf = malloc(vcap), *expect = malloc(vcap);
	uint32_t *vlens = NULL;
	char key[ENGINE_KEY_MAX + SB_ID_DIGITS_MAX];
	char err[512] = "";
	struct engine *e = NULL;
	struct engine_worker *w = NULL;
	struct engine_stats st;
	struct engine_item it;
	uint64_t id, prev_items = 0;
	double t0, deadline;
	bool entered = false;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	/* Value lengths are remembered (4 bytes a key, outside the engine's
	 * budget) only when they vary, to check each one on read-back. */
	if (o->vmin != o->vmax)
		vlens = malloc(o->fill_max_keys * sizeof(*vlens));
	if (!val || !buf || !expect || (o->vmin != o->vmax && !vlens)) {
		fprintf(stderr, "segcached-storage-bench: out of memory\n");
		goto out;
	}
	if (sb_thread_enter(kind) != 0)
		goto out;
	entered = true;
	e = sb_engine_create(kind, &o->ecfg, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "segcached-storage-bench: %s: %s\n",
			sb_engine_name(kind), err[0] ? err : "create failed");
		goto out;
	}
	w = engine_worker_create(e);
	if (!w) {
		fprintf(stderr, "segcached-storage-bench: %s: worker_create failed\n",
			sb_engine_name(kind));
		goto out;
	}

	r->stop = "key limit";
	t0 = sb_now();
	deadline = t0 + o->duration;
	for (id = 1; id <= o->fill_max_keys; id++) {
		size_t klen = sb_key_format(id, key, width);
		uint32_t vlen = sb_value_size(o, &rng);
		int st_rc;

		if ((id & 1023) == 0 && sb_now() > deadline) {
			r->stop = "time limit";
			break;
		}
		if (vlens)
			vlens[id - 1] = vlen;
		sb_value_fill(val, vlen, id);
		r->attempted++;
		st_rc = engine_store(w, ENGINE_SET, key, klen, val, vlen, 0, 0, 0,
				     NULL);
		if (st_rc != ENGINE_OK) {
			snprintf(stop_reason, sizeof(stop_reason), "set failed: %s",
				 engine_status_name(st_rc));
			r->stop = stop_reason;
			r->items_before = prev_items;
			break;
		}
		r->stored++;
		/* Every set: the point of the experiment is the exact moment
		 * the first object is pushed out. */
		engine_stats(e, &st);
		if (st.evictions > 0) {
			r->stop = "eviction";
			r->items_before = prev_items;
			break;
		}
		prev_items = st.curr_items;
	}
	if (strcmp(r->stop, "eviction") != 0 && strncmp(r->stop, "set failed", 10) != 0)
		r->items_before = prev_items;
	r->seconds = sb_now() - t0;
	engine_stats(e, &r->done);

	/* Read back everything that was ever stored. */
	t0 = sb_now();
	for (id = 1; id <= r->attempted; id++) {
		size_t klen = sb_key_format(id, key, width);
		uint32_t vlen = vlens ? vlens[id - 1] : o->vmin;
		int g = engine_get(w, key, klen, ENGINE_NO_TOUCH, buf, vcap, &it);

		if (g == ENGINE_MISS)
			continue;
		sb_value_fill(expect, vlen, id);
		if (g == ENGINE_OK && it.vlen == vlen && memcmp(buf, expect, vlen) == 0)
			r->readback_hits++;
		else
			r->readback_corrupt++;
	}
	r->readback_seconds = sb_now() - t0;
	rc = 0;
out:
	engine_worker_destroy(w);
	engine_destroy(e);
	if (entered)
		sb_thread_leave(kind);
	free(vlens);
	free(val);
	free(buf);
	free(expect);
	return rc;
}
