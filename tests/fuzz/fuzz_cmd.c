/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libFuzzer target for cmd_process() against two real lib/seg engines.
 * Engine A gets each input whole, engine B the same bytes cut into chunks
 * (sizes from the first input byte) with a small backpressure bound, so
 * cmd_process() stops and resumes often. Both engines see the same request
 * sequence forever, so their replies must be byte-identical (lines over
 * PROTO_LINE_MAX excepted: there, arrival legitimately matters). Side B
 * also composes in a lent window of a random size before each call, as
 * the native stack does in TCP's send ring (proto_out_lend), so replies
 * outgrow it at every possible point. ASan and UBSan watch everything
 * else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "proto/proto.h"
#include "seg/seg.h"

struct side {
	struct engine *e;
	struct engine_worker *w;
	struct cmd_settings s;
	struct proto_out out;
};

static int64_t fixed_clock(void *arg)
{
	(void)arg;
	return 1700000000;
}

static void side_init(struct side *sd)
{
	struct engine_config cfg = { .memory = 16u << 20, .item_max = 64 * 1024,
				     .max_workers = 2, .clock = fixed_clock };
	char err[128];

	sd->e = seg_create(&cfg, err, sizeof(err));
	if (!sd->e)
		abort();
	sd->w = engine_worker_create(sd->e);
	if (!sd->w)
		abort();
	memset(&sd->s, 0, sizeof(sd->s));
	sd->s.engine = sd->e;
	sd->s.item_max = cfg.item_max;
	sd->s.version = "fuzz";
	sd->s.clock = fixed_clock;
	if (proto_out_init(&sd->out, 0, 256u << 20) != 0)
		abort();
}

static void side_fini(struct side *sd)
{
	proto_out_fini(&sd->out);
	engine_worker_destroy(sd->w);
	engine_destroy(sd->e);
}

/* The largest window side B is lent: up to three 4 KiB value replies. */
#define WINDOW_MAX 16384

/* Hashes and consumes everything sd composed, the kept window bytes first
 * (proto_out_front), as a transport takes them. */
static void
take_output(struct side *sd, uint64_t *hash, size_t *bytes)
{
	while (proto_out_pending(&sd->out) > 0) {
		size_t n;
		const unsigned char *o = (const unsigned char *)proto_out_front(&sd->out, &n);

		for (size_t i = 0; i < n; i++)
			*hash = (*hash ^ o[i]) * 1099511628211ull;
		*bytes += n;
		proto_out_consume(&sd->out, n);
	}
}

struct result {
	uint64_t hash;
	size_t bytes;
	unsigned actions;
};

static void run(struct side *sd, const uint8_t *data, size_t size, unsigned seed,
		struct result *res)
{
	struct cmd_conn *c = cmd_conn_create(&sd->s, sd->w, false);
	char *buf = malloc(size + 1);
	char *win = seed ? malloc(WINDOW_MAX) : NULL;
	size_t pend = 0, fed = 0;

	if (!c || !buf || (seed && !win))
		abort();
	res->hash = 14695981039346656037ull;
	res->bytes = 0;
	res->actions = 0;
	sd->out.backpressure = seed ? 4096 : 0;
	while (fed < size || pend > 0) {
		size_t take = size - fed;

		if (seed) {
			seed = seed * 1103515245u + 12345u;
			take = 1 + (seed >> 16) % 128;
			if (take > size - fed)
				take = size - fed;
		}
		memcpy(buf + pend, data + fed, take);
		pend += take;
		fed += take;
		for (;;) {
			unsigned actions = 0;
			size_t used;

			if (win) {
				seed = seed * 1103515245u + 12345u;
				proto_out_lend(&sd->out, win, 1 + (seed >> 8) % WINDOW_MAX);
			}
			used = cmd_process(c, buf, pend, &sd->out, &actions);
			if (used > pend)
				abort();
			take_output(sd, &res->hash, &res->bytes);
			if (win) {
				if (!proto_out_end_loan(&sd->out))
					abort();
				/* bytes read from the window after this are garbage */
				memset(win, 0xa5, WINDOW_MAX);
			}
			memmove(buf, buf + used, pend - used);
			pend -= used;
			if (actions) {
				res->actions = actions;
				goto done;
			}
			if (used == 0 || !sd->out.backpressure)
				break;
		}
		if (take == 0)
			break;
	}
done:
	cmd_conn_destroy(c);
	free(buf);
	free(win);
}

static bool has_long_line(const uint8_t *d, size_t n)
{
	size_t run_len = 0;

	for (size_t i = 0; i < n; i++) {
		run_len = d[i] == '\n' ? 0 : run_len + 1;
		if (run_len > PROTO_LINE_MAX)
			return true;
	}
	return false;
}

/* The first phase of an RX burst sees the same bytes: every key it
 * finds lies inside them, and prefetching them changes nothing (the two
 * sides below must still agree). */
static void
hint(struct side *sd, const uint8_t *data, size_t size)
{
	struct engine_key keys[ENGINE_BATCH_GROUP];
	unsigned n = cmd_hint_keys(data, size, keys, ENGINE_BATCH_GROUP);

	for (unsigned i = 0; i < n; i++) {
		const uint8_t *k = keys[i].key;

		if (keys[i].klen == 0 || keys[i].klen > ENGINE_KEY_MAX || k < data ||
		    k + keys[i].klen > data + size)
			abort();
	}
	engine_prefetch(sd->w, keys, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct side a, b;
	static bool ready;
	struct result ra, rb;

	if (!ready) {
		side_init(&a);
		side_init(&b);
		ready = true;
	}
	if (size < 1)
		return 0;
	hint(&a, data + 1, size - 1);
	run(&a, data + 1, size - 1, 0, &ra);
	run(&b, data + 1, size - 1, data[0] | 1u, &rb);
	if (has_long_line(data + 1, size - 1)) {
		/* the two sides may have executed different requests: start
		 * both afresh (counters and cas generations would differ) */
		side_fini(&a);
		side_fini(&b);
		side_init(&a);
		side_init(&b);
		return 0;
	}
	if (ra.hash != rb.hash || ra.bytes != rb.bytes || ra.actions != rb.actions)
		abort();
	return 0;
}
