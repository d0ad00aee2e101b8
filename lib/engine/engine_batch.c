/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * engine_get_batch() into caller buffers: the sink that the storage
 * benchmark and the tests use, where each key has a buffer of its own.
 */
#include "engine/engine.h"

struct batch_into {
	void *const *bufs;
	const size_t *caps;
	struct engine_item *its;
	enum engine_status *st;
};

static void *
into_value_buf(void *arg, unsigned i, const struct engine_item *it)
{
	const struct batch_into *b = arg;

	return b->bufs[i] != NULL && it->vlen <= b->caps[i] ? b->bufs[i] : NULL;
}

static bool
into_done(void *arg, unsigned i, enum engine_status st, const struct engine_item *it)
{
	const struct batch_into *b = arg;

	b->st[i] = st;
	if (st == ENGINE_OK || st == ENGINE_BUF_SMALL)
		b->its[i] = *it;
	return true;
}

void
engine_get_batch_into(struct engine_worker *w, const struct engine_key *keys, unsigned n,
		      void *const *bufs, const size_t *caps, struct engine_item *its,
		      enum engine_status *st)
{
	struct batch_into b = { .bufs = bufs, .caps = caps, .its = its, .st = st };
	const struct engine_get_sink sink = {
		.value_buf = into_value_buf,
		.done = into_done,
		.arg = &b,
	};

	engine_get_batch(w, keys, n, &sink);
}
