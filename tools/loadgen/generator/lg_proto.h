/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The memcached text protocol as the generator speaks it: requests built
 * from a struct lg_req, and an incremental response parser that checks
 * every response against the request it answers (the key of every VALUE
 * must be one the request asked for, in order; sampled values, or with
 * --verify all every value and its version, are checked byte for byte). Transport-independent: TCP feeds it a byte stream that
 * may split anywhere, UDP one datagram's payload.
 */
#ifndef LG_PROTO_H
#define LG_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lg_workload.h"

struct lg_req {
	uint64_t intended_ns;   /* when it should have been sent (latency origin) */
	uint64_t sent_ns;       /* when it was (last) sent: UDP timeout origin */
	uint32_t vlen;          /* set: value length */
	uint32_t version;       /* set: flags = version (value check) */
	uint32_t vraise;        /* --verify all set: the floor its ack sets (0: none) */
	uint32_t ttl;
	uint16_t udp_id;        /* UDP request id */
	uint8_t op;             /* enum lg_op */
	uint8_t nkeys;
	uint8_t tries;          /* sends so far (UDP preload: resends) */
	bool preload;           /* a preload set */
	bool check;             /* verify returned values byte for byte */
	uint64_t keys[LG_MGET_MAX];
	/* --verify all get: each key's floor when it was sent (lg_verify.h) */
	uint32_t vfloor[LG_MGET_MAX];
};

/* Bytes the request needs on the wire (at most). */
size_t lg_req_wire_size(const struct lg_workload *w, const struct lg_req *r);
/* Writes the request into buf; returns its length, or 0 when cap is too
 * small (nothing written). */
size_t lg_req_build(const struct lg_workload *w, const struct lg_req *r,
		    char *buf, size_t cap);

enum lg_resp_status {
	LG_RESP_MORE,     /* everything usable consumed; the rest needs more bytes */
	LG_RESP_OK,       /* the request is answered (hits in lg_resp.hits) */
	LG_RESP_ERROR,    /* answered with an error line (SERVER_ERROR, NOT_STORED ...) */
	LG_RESP_CORRUPT,  /* answered, but a checked value was wrong */
	LG_RESP_STALE,    /* --verify all: a whole value, but of a version that
			   * cannot be current (older than one acknowledged
			   * before the get, or never set) */
	LG_RESP_BAD,      /* not a valid answer to this request: drop the stream */
};

struct lg_resp {
	unsigned hits;        /* VALUEs in this response so far */
	unsigned cursor;      /* next requested key a VALUE may match */
	uint32_t data_left;   /* value bytes + "\r\n" still to come */
	uint32_t vlen, voff;
	uint64_t vseed;
	bool in_value;
	bool checking;        /* this value is compared byte by byte */
	bool corrupt;
	bool stale;
	uint64_t values_checked;
	const char *why;      /* LG_RESP_BAD / CORRUPT: what was wrong */
};

/* Start of a new response. */
void lg_resp_reset(struct lg_resp *r);
/* Parse data[0..len) as (the next part of) the answer to req. *consumed is
 * set to the bytes used. On anything but LG_RESP_MORE the response is over
 * (hits and why describe it; data beyond *consumed belongs to the next
 * one): call lg_resp_reset() before feeding the next response. */
enum lg_resp_status lg_resp_feed(struct lg_resp *r, const struct lg_workload *w,
				 const struct lg_req *req, const char *data,
				 size_t len, size_t *consumed);

/* The memcached UDP frame header (8 bytes, big endian). */
struct lg_udp_hdr {
	uint16_t req_id, seq, total, reserved;
};
void lg_udp_hdr_write(uint8_t *p, uint16_t req_id);
/* Returns 0, or -1 when len < 8. */
int lg_udp_hdr_read(const uint8_t *p, size_t len, struct lg_udp_hdr *h);

/* UDP flows over a transport whose workers have nports source ports each
 * (lib/net: a stack listens on a few ports only): flow i of n sends from
 * port port_idx, with request ids id_base | (a counter within id_mask).
 * Flows spread over every port first, so a NIC's RSS sees as many flows
 * as there are ports; flows sharing a port split the 16-bit id space. */
struct lg_udp_flow {
	unsigned port_idx;
	uint16_t id_base, id_mask;
};
void lg_udp_flow(unsigned i, unsigned n, unsigned nports, struct lg_udp_flow *f);
/* The flow an answer to port port_idx with request id id belongs to, or -1. */
int lg_udp_flow_of(unsigned port_idx, uint16_t id, unsigned n, unsigned nports);

#endif /* LG_PROTO_H */
