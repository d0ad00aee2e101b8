/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * cmd_replay: feeds a byte stream (stdin) through cmd_process() against a
 * real lib/seg engine and writes the replies to stdout, the way a server
 * connection would: the input arrives in chunks of --chunk bytes (default:
 * all at once) and unconsumed bytes are presented again with the next
 * chunk. Exit status 3 means the connection would be closed (the bytes
 * after that point were not processed), 4 that the input ended inside a
 * request. differential.py runs the same
 * bytes through the real memcached and compares.
 *
 * usage: cmd_replay [--chunk N] [--item-max BYTES] [--flush-disabled]
 *                   [--cas-disabled] [--shutdown-enabled] [--backpressure N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "seg/seg.h"

static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);

	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (r == 0)
			break;
		if (n == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				return NULL;
			}
			buf = b;
			cap *= 2;
		}
	}
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	struct engine_config cfg = { .memory = 64u << 20, .max_workers = 2 };
	struct cmd_settings s = { .version = "1.6.18" };
	size_t chunk = 0, backpressure = 0, in_len = 0, pend = 0, fed = 0;
	struct engine_worker *w;
	struct proto_out out;
	struct cmd_conn *c;
	struct engine *e;
	char err[256];
	int status = 0;
	char *in, *buf;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--chunk") && i + 1 < argc)
			chunk = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--item-max") && i + 1 < argc)
			cfg.item_max = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--backpressure") && i + 1 < argc)
			backpressure = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--flush-disabled"))
			s.flush_disabled = true;
		else if (!strcmp(argv[i], "--cas-disabled"))
			cfg.cas_disabled = s.cas_disabled = true;
		else if (!strcmp(argv[i], "--shutdown-enabled"))
			s.shutdown_enabled = true;
		else {
			fprintf(stderr,
				"usage: %s [--chunk N] [--item-max BYTES] [--backpressure N] "
				"[--flush-disabled] [--cas-disabled] [--shutdown-enabled]\n",
				argv[0]);
			return 2;
		}
	}
	e = seg_create(&cfg, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "seg_create: %s\n", err);
		return 1;
	}
	s.engine = e;
	s.item_max = cfg.item_max ? cfg.item_max : 1024 * 1024;
	w = engine_worker_create(e);
	c = w ? cmd_conn_create(&s, w, false) : NULL;
	in = read_all(stdin, &in_len);
	buf = malloc(in_len + 1);
	if (!c || !in || !buf || proto_out_init(&out, 0, 64u << 20) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	out.backpressure = backpressure;
	if (chunk == 0)
		chunk = in_len ? in_len : 1;
	/* buf holds the unconsumed bytes: what a connection's input buffer
	 * would hold between reads */
	while (fed < in_len || pend > 0) {
		size_t take = in_len - fed < chunk ? in_len - fed : chunk;
		unsigned actions = 0;
		size_t used;

		memcpy(buf + pend, in + fed, take);
		pend += take;
		fed += take;
		for (;;) {
			used = cmd_process(c, buf, pend, &out, &actions);
			memmove(buf, buf + used, pend - used);
			pend -= used;
			fwrite(out.data + out.head, 1, proto_out_pending(&out), stdout);
			proto_out_consume(&out, proto_out_pending(&out));
			if (actions & (CMD_ACT_CLOSE | CMD_ACT_SHUTDOWN)) {
				status = 3;
				goto done;
			}
			/* stopped for backpressure only: the output was
			 * "sent", go on with the same bytes; a key dump
			 * writes a chunk per call until it ends */
			if (cmd_conn_dumping(c))
				continue;
			if (used == 0 || !backpressure)
				break;
		}
		if (take == 0)
			break;
	}
	/* an incomplete request (or a data block being swallowed) at the end */
	if (pend > 0 || cmd_conn_busy(c))
		status = 4;
done:
	fflush(stdout);
	proto_out_fini(&out);
	cmd_conn_destroy(c);
	engine_worker_destroy(w);
	engine_destroy(e);
	free(in);
	free(buf);
	return status;
}
