/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * What the command files share to reach the engine and the settings: the
 * engine clock, the live verbosity, reading an item straight into the
 * output buffer, and removing a key without counting a delete.
 */
#include "cmd/cmd_private.h"

int
cmd_verbosity(const struct cmd_settings *s)
{
	int v = __atomic_load_n(&s->rt.verbosity_plus1, __ATOMIC_RELAXED);

	return v ? v - 1 : s->verbosity;
}

int64_t
cmd_now(const struct cmd_conn *c)
{
	if (c->s->clock)
		return c->s->clock(c->s->clock_arg);
	return engine_clock_default(NULL);
}

void
cmd_drop_key(struct cmd_conn *c, const char *key, size_t klen)
{
	uint64_t hits = c->w->counters[ENGINE_C_delete_hits];
	uint64_t misses = c->w->counters[ENGINE_C_delete_misses];

	engine_delete(c->w, key, klen, 0);
	/* the worker is this thread's (its only writer); stats read it
	 * from others, so the store is atomic (engine_count) */
	__atomic_store_n(&c->w->counters[ENGINE_C_delete_hits], hits, __ATOMIC_RELAXED);
	__atomic_store_n(&c->w->counters[ENGINE_C_delete_misses], misses, __ATOMIC_RELAXED);
}

int
cmd_fetch(struct cmd_conn *c, const char *key, size_t klen, int64_t touch, size_t gap,
	  bool buf_wanted, struct engine_item *it)
{
	size_t want = CMD_HDR_MAX + CMD_VALUE_ROOM_MIN + 2;

	if (!buf_wanted) {
		enum engine_status rc = engine_get(c->w, key, klen, touch, NULL, 0, it);

		return rc == ENGINE_BUF_SMALL ? ENGINE_OK : rc;
	}
	for (unsigned tries = 0; tries < CMD_FETCH_TRIES; tries++) {
		char *p = proto_out_reserve(c->out, want);
		size_t cap;
		enum engine_status rc;

		if (!p)
			return -1;
		/* offer all the room there is: one engine call for most values */
		cap = proto_out_room(c->out) - CMD_HDR_MAX - 2;
		rc = engine_get(c->w, key, klen, touch, p + gap, cap, it);
		if (rc != ENGINE_BUF_SMALL)
			return rc;
		want = CMD_HDR_MAX + (size_t)it->vlen + 2;
		/* the touch is done: the retry only copies the value (touching
		 * again would rewrite the item and count the touch twice) */
		touch = ENGINE_NO_TOUCH;
	}
	return -1;
}
