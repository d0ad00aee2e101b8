/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The memcached text protocol as the generator speaks it (lg_proto.h):
 * requests built, responses parsed and checked, the UDP frame header and
 * the UDP flows' ports and request ids.
 */
#include "lg_proto.h"

#include <stdio.h>
#include <string.h>

#include "lg_verify.h"
#include "proto/proto_out.h"

/* Longest response line we accept before calling the stream bad. */
#define LG_LINE_MAX 1024

size_t
lg_req_wire_size(const struct lg_workload *w, const struct lg_req *r)
{
	size_t klen = w->trace ? LG_KEY_MAX : w->key_size;

	if (r->op == LG_OP_GET)
		return 6 + (size_t)r->nkeys * (klen + 1);
	return 4 + klen + 40 + r->vlen + 2;
}

size_t
lg_req_build(const struct lg_workload *w, const struct lg_req *r,
	     char *buf, size_t cap)
{
	char *p = buf;
	size_t klen;

	if (lg_req_wire_size(w, r) > cap)
		return 0;
	if (r->op == LG_OP_GET) {
		memcpy(p, "get", 3);
		p += 3;
		for (unsigned i = 0; i < r->nkeys; i++) {
			*p++ = ' ';
			p += lg_key_format(w, r->keys[i], p);
		}
		*p++ = '\r';
		*p++ = '\n';
		return (size_t)(p - buf);
	}
	memcpy(p, "set ", 4);
	p += 4;
	klen = lg_key_format(w, r->keys[0], p);
	uint64_t seed = lg_value_seed(p, klen, r->version, r->vlen);
	p += klen;
	*p++ = ' ';
	p += proto_u64_to_dec(r->version, p);
	*p++ = ' ';
	p += proto_u64_to_dec(r->ttl, p);
	*p++ = ' ';
	p += proto_u64_to_dec(r->vlen, p);
	*p++ = '\r';
	*p++ = '\n';
	lg_value_fill(p, seed, 0, r->vlen);
	p += r->vlen;
	*p++ = '\r';
	*p++ = '\n';
	return (size_t)(p - buf);
}

void
lg_resp_reset(struct lg_resp *r)
{
	uint64_t checked = r->values_checked;

	memset(r, 0, sizeof(*r));
	r->values_checked = checked;
}

static bool
line_is(const char *line, size_t n, const char *word)
{
	size_t wl = strlen(word);

	return n >= wl && memcmp(line, word, wl) == 0 &&
	       (n == wl || line[wl] == ' ');
}

/* Parses a decimal token at *p (up to end); advances past it. */
static int
take_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s++ - '0');
	}
	*p = s;
	*v = x;
	return 0;
}

/* "VALUE <key> <flags> <bytes>[ <cas>]" (without \r\n). */
static enum lg_resp_status
value_line(struct lg_resp *r, const struct lg_workload *w,
	   const struct lg_req *req, const char *line,
	   size_t n)
{
	const char *p = line + 6, *end = line + n, *key;
	size_t klen;
	uint64_t flags, bytes, cas;
	char want[LG_KEY_MAX];
	bool matched = false;

	if (req->op != LG_OP_GET) {
		r->why = "VALUE in answer to a set";
		return LG_RESP_BAD;
	}
	key = p;
	while (p < end && *p != ' ')
		p++;
	klen = (size_t)(p - key);
	if (p == end || klen == 0 || (p++, take_u64(&p, end, &flags)) < 0 ||
	    p == end || *p++ != ' ' ||
	    take_u64(&p, end, &bytes) < 0 || flags > UINT32_MAX ||
	    bytes > UINT32_MAX - 2) {
		r->why = "malformed VALUE line";
		return LG_RESP_BAD;
	}
	if (p < end && (*p++ != ' ' || take_u64(&p, end, &cas) < 0 || p != end)) {
		r->why = "malformed VALUE line";
		return LG_RESP_BAD;
	}
	/* Hits come back in request order, misses left out. */
	while (r->cursor < req->nkeys) {
		size_t wl = lg_key_format(w, req->keys[r->cursor++], want);

		if (wl == klen && memcmp(want, key, klen) == 0) {
			matched = true;
			break;
		}
	}
	if (!matched) {
		r->why = "VALUE for a key that was not asked for";
		return LG_RESP_BAD;
	}
	r->hits++;
	r->in_value = true;
	r->vlen = (uint32_t)bytes;
	r->voff = 0;
	r->data_left = (uint32_t)bytes + 2;
	r->checking = req->check || w->verify;
	if (w->verify && !r->stale) {
		const char *why = lg_verify_check(w->verify, req->keys[r->cursor - 1],
						  req->vfloor[r->cursor - 1],
						  (uint32_t)flags);

		if (why) {
			r->stale = true;
			r->why = why;
		}
	}
	if (r->checking) {
		r->vseed = lg_value_seed(key, klen, (uint32_t)flags, r->vlen);
		r->values_checked++;
	}
	return LG_RESP_MORE;
}

static enum lg_resp_status
finish(struct lg_resp *r, enum lg_resp_status st)
{
	if (st == LG_RESP_OK && r->corrupt)
		st = LG_RESP_CORRUPT;
	else if (st == LG_RESP_OK && r->stale)
		st = LG_RESP_STALE;
	/* hits and why stay for the caller, who resets before the next
	 * response. */
	r->cursor = 0;
	r->in_value = false;
	r->corrupt = false;
	r->stale = false;
	return st;
}

enum lg_resp_status
lg_resp_feed(struct lg_resp *r, const struct lg_workload *w,
	     const struct lg_req *req, const char *data,
	     size_t len, size_t *consumed)
{
	size_t used = 0;

	while (used < len) {
		const char *p = data + used;
		size_t avail = len - used;

		if (r->in_value) {
			size_t take = avail < r->data_left ? avail : r->data_left;
			/* Value bytes come first, then "\r\n". */
			size_t vbytes = r->voff < r->vlen ? r->vlen - r->voff : 0;

			if (vbytes > take)
				vbytes = take;
			if (r->checking && vbytes &&
			    !lg_value_check(p, r->vseed, r->voff, (uint32_t)vbytes)) {
				r->corrupt = true;
				r->why = "value bytes differ from what was set";
			}
			for (size_t i = vbytes; i < take; i++) {
				/* position in the trailer: 0 = '\r', 1 = '\n' */
				size_t t = r->voff + i - r->vlen;

				if (p[i] != (t == 0 ? '\r' : '\n')) {
					r->why = "value not followed by \\r\\n";
					return finish(r, LG_RESP_BAD);
				}
			}
			r->voff += (uint32_t)take;
			r->data_left -= (uint32_t)take;
			used += take;
			if (r->data_left == 0)
				r->in_value = false;
			continue;
		}
		const char *nl = memchr(p, '\n', avail);

		if (!nl) {
			if (avail > LG_LINE_MAX) {
				r->why = "response line too long";
				*consumed = used;
				return finish(r, LG_RESP_BAD);
			}
			break;
		}
		size_t n = (size_t)(nl - p);

		used += n + 1;
		*consumed = used;
		if (n == 0 || p[n - 1] != '\r') {
			r->why = "response line not ended by \\r\\n";
			return finish(r, LG_RESP_BAD);
		}
		n--;
		if (line_is(p, n, "VALUE")) {
			enum lg_resp_status st = value_line(r, w, req, p, n);

			if (st != LG_RESP_MORE)
				return finish(r, st);
			continue;
		}
		if (n == 3 && memcmp(p, "END", 3) == 0) {
			if (req->op != LG_OP_GET) {
				r->why = "END in answer to a set";
				return finish(r, LG_RESP_BAD);
			}
			return finish(r, LG_RESP_OK);
		}
		if (n == 6 && memcmp(p, "STORED", 6) == 0) {
			if (req->op != LG_OP_SET) {
				r->why = "STORED in answer to a get";
				return finish(r, LG_RESP_BAD);
			}
			return finish(r, LG_RESP_OK);
		}
		if (r->hits == 0 &&
		    (line_is(p, n, "SERVER_ERROR") || line_is(p, n, "CLIENT_ERROR") ||
		     line_is(p, n, "ERROR") ||
		     (req->op == LG_OP_SET &&
		      (line_is(p, n, "NOT_STORED") || line_is(p, n, "EXISTS") ||
		       line_is(p, n, "NOT_FOUND"))))) {
			r->why = "error reply";
			return finish(r, LG_RESP_ERROR);
		}
		r->why = "unexpected response line";
		return finish(r, LG_RESP_BAD);
	}
	*consumed = used;
	return LG_RESP_MORE;
}

void
lg_udp_hdr_write(uint8_t *p, uint16_t req_id)
{
	p[0] = (uint8_t)(req_id >> 8);
	p[1] = (uint8_t)req_id;
	p[2] = 0;
	p[3] = 0; /* sequence 0 */
	p[4] = 0;
	p[5] = 1; /* one datagram */
	p[6] = 0;
	p[7] = 0;
}

int
lg_udp_hdr_read(const uint8_t *p, size_t len, struct lg_udp_hdr *h)
{
	if (len < 8)
		return -1;
	h->req_id = (uint16_t)(p[0] << 8 | p[1]);
	h->seq = (uint16_t)(p[2] << 8 | p[3]);
	h->total = (uint16_t)(p[4] << 8 | p[5]);
	h->reserved = (uint16_t)(p[6] << 8 | p[7]);
	return 0;
}

/* Flows on a port: ceil(n / ports in use); bits of the id that name one. */
static unsigned
flow_bits(unsigned n, unsigned nports, unsigned *used)
{
	unsigned per_port, bits = 0;

	*used = n < nports ? n : nports;
	per_port = (n + *used - 1) / *used;
	while ((1u << bits) < per_port)
		bits++;
	return bits;
}

void
lg_udp_flow(unsigned i, unsigned n, unsigned nports, struct lg_udp_flow *f)
{
	unsigned used, bits = flow_bits(n, nports, &used);

	f->port_idx = i % used;
	f->id_mask = (uint16_t)(0xffffu >> bits);
	f->id_base = bits ? (uint16_t)((i / used) << (16 - bits)) : 0;
}

int
lg_udp_flow_of(unsigned port_idx, uint16_t id, unsigned n, unsigned nports)
{
	unsigned used, bits = flow_bits(n, nports, &used);
	unsigned i = (bits ? (unsigned)id >> (16 - bits) : 0) * used + port_idx;

	return port_idx < used && i < n ? (int)i : -1;
}
