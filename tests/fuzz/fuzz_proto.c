/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * libFuzzer target for the lib/proto parser. The first input byte picks the
 * value limit and how the rest is cut into arrival chunks; the rest is the
 * byte stream of one connection. Checks, besides what ASan/UBSan catch:
 *  - the parser always makes progress and never consumes more than it got;
 *  - every pointer in a request lies inside the bytes it was given;
 *  - the stream parsed whole and parsed in chunks gives the same requests
 *    (unless a line is longer than PROTO_LINE_MAX, where arrival matters,
 *    as it does in memcached);
 *  - the input cut into UDP datagrams joins back into the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h" /* the command table: the parser's words */
#include "proto/proto.h"
#include "proto/proto_udp.h"

#define MAX_REQS 4096

/* A request reduced to what must not depend on how bytes arrived. */
struct flat {
	int cmd;
	const char *error;
	bool noreply, too_large, get_last, has_key;
	uint32_t flags;
	int64_t exptime;
	uint64_t cas, delta, hash;
	size_t klen, vlen;
	int sub;
	uint32_t num[2];
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static void check_inside(const void *p, size_t n, const char *buf, size_t len,
			 const struct proto_req *req)
{
	const char *c = p;

	if (!c)
		return;
	if (c >= req->keybuf && c + n <= req->keybuf + sizeof(req->keybuf))
		return;
	if (c < buf || c + n > buf + len)
		abort();
}

static void flatten(const struct proto_req *r, struct flat *f)
{
	memset(f, 0, sizeof(*f));
	f->cmd = r->cmd;
	f->error = r->error;
	f->noreply = r->noreply;
	if (r->error)
		return;
	f->too_large = r->too_large;
	f->get_last = r->get_last;
	f->has_key = r->key != NULL;
	f->flags = r->flags;
	f->exptime = r->exptime;
	f->cas = r->cas;
	f->delta = r->delta;
	f->klen = r->klen;
	f->vlen = r->vlen;
	f->sub = r->sub;
	f->num[0] = r->num[0];
	f->num[1] = r->num[1];
	f->hash = 14695981039346656037ull;
	if (r->key)
		f->hash = fnv(f->hash, r->key, r->klen);
	if (r->value)
		f->hash = fnv(f->hash, r->value, r->vlen);
	if (r->arg)
		f->hash = fnv(f->hash, r->arg, r->arg_len);
	if (r->cmd >= PROTO_CMD_MG && r->cmd <= PROTO_CMD_ME && r->cmd != PROTO_CMD_MN) {
		f->hash = fnv(f->hash, r->meta.order, r->meta.norder);
		f->hash = fnv(f->hash, &r->meta.cas, sizeof(r->meta.cas));
		f->hash = fnv(f->hash, &r->meta.ttl, sizeof(r->meta.ttl));
		f->hash = fnv(f->hash, &r->meta.mode, 1);
		if (r->meta.opaque)
			f->hash = fnv(f->hash, r->meta.opaque, r->meta.opaque_len);
	}
}

/* Parses data as it would arrive in chunks of the given sizes (0: whole);
 * returns the number of requests, or -1 after PROTO_CLOSE. */
static int parse_stream(const uint8_t *data, size_t size, size_t value_max, unsigned seed,
			struct flat *out)
{
	struct proto_parser p;
	char *buf = malloc(size + 1);
	size_t pend = 0, fed = 0;
	int n = 0;

	if (!buf)
		abort();
	proto_parser_init(&p, cmd_grammar(), value_max);
	while (fed < size || pend > 0) {
		size_t take = size - fed;

		if (seed) {
			/* chunk sizes 1..64 from a tiny generator */
			seed = seed * 1103515245u + 12345u;
			take = 1 + (seed >> 16) % 64;
			if (take > size - fed)
				take = size - fed;
		}
		memcpy(buf + pend, data + fed, take);
		pend += take;
		fed += take;
		for (unsigned guard = 0;; guard++) {
			struct proto_req req;
			size_t used = 0;
			enum proto_status st = proto_parse(&p, buf, pend, &req, &used);

			if (used > pend || guard > size + 16)
				abort(); /* over-consumption or no progress */
			if (st == PROTO_REQ) {
				check_inside(req.key, req.klen, buf, pend, &req);
				check_inside(req.value, req.vlen, buf, pend, &req);
				check_inside(req.arg, req.arg_len, buf, pend, &req);
				if (req.klen > PROTO_KEY_MAX)
					abort();
				if (n < MAX_REQS)
					flatten(&req, &out[n]);
				n++;
				if (used == 0)
					abort(); /* every request consumes bytes */
			}
			memmove(buf, buf + used, pend - used);
			pend -= used;
			if (st == PROTO_CLOSE) {
				free(buf);
				return -1;
			}
			if (st == PROTO_NEED_MORE)
				break;
		}
		if (take == 0)
			break;
	}
	free(buf);
	return n;
}

static bool has_long_line(const uint8_t *d, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		run = d[i] == '\n' ? 0 : run + 1;
		if (run > PROTO_LINE_MAX)
			return true;
	}
	return false;
}

/* The UDP frame: the input as a request datagram, and as a response cut
 * into datagrams that must join back into the input. */
static void check_udp(const uint8_t *data, size_t size)
{
	static uint8_t dgram[PROTO_UDP_HDR_LEN + 256];
	struct proto_udp_hdr h;
	size_t max_payload = size ? 1 + data[0] % 255 : 1, off = 0;
	unsigned n;

	if (proto_udp_parse(data, size, &h) >= 0 && (size < PROTO_UDP_HDR_LEN || h.total != 1))
		abort();
	n = proto_udp_count(size, max_payload);
	for (unsigned seq = 0; seq < n; seq++) {
		size_t len = proto_udp_frame(data, size, max_payload, 0x1234, seq, dgram);

		if (len <= PROTO_UDP_HDR_LEN || len > PROTO_UDP_HDR_LEN + max_payload ||
		    proto_udp_parse(dgram, len, &h) != (n == 1 ? PROTO_UDP_HDR_LEN : -1) ||
		    memcmp(dgram + PROTO_UDP_HDR_LEN, data + off, len - PROTO_UDP_HDR_LEN) != 0)
			abort();
		off += len - PROTO_UDP_HDR_LEN;
	}
	if (off != size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct flat whole[MAX_REQS], split[MAX_REQS];
	static const size_t limits[] = { 0, 1, 5, 100, 1 << 20 };
	size_t value_max;
	unsigned seed;
	int a, b;

	check_udp(data, size);
	if (size < 1)
		return 0;
	value_max = limits[data[0] % 5];
	seed = data[0] | 1u;
	data++;
	size--;
	a = parse_stream(data, size, value_max, 0, whole);
	b = parse_stream(data, size, value_max, seed, split);
	if (has_long_line(data, size))
		return 0;
	if (a != b)
		abort();
	for (int i = 0; i < a && i < MAX_REQS; i++)
		if (memcmp(&whole[i], &split[i], sizeof(whole[i])) != 0)
			abort();
	return 0;
}
