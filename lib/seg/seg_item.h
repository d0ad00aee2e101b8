/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The object layout inside a segment. No expiry, pointer, LRU link or cas
 * per object: the segment holds the expiry base, the hash slot holds the
 * location (which doubles as the cas unique, see seg_ops.c).
 *
 *   byte 0      bit 0: client flags follow the header; bits 1-7: expiry
 *               delta in the segment's unit above its exp_base
 *   byte 1      key length (1..250)
 *   byte 2..4   value length, little-endian base-128: 7 bits per byte with
 *               a continuation bit, the third byte holding 8 bits (22 bits,
 *               values up to 4 MiB - 1)
 *   [4 bytes]   client flags, little-endian, only when non-zero
 *   key, value
 *
 * So a header is 3 to 5 bytes. Items are packed without padding when the
 * segment is at most 1 MiB (offsets count bytes); larger segments align
 * items to seg_size / 1 MiB.
 */
#ifndef SEGCACHED_SEG_ITEM_H
#define SEGCACHED_SEG_ITEM_H

#include <stdint.h>
#include <string.h>

#define ITEM_HDR_MAX 5
#define ITEM_FLAGS_LEN 4
#define ITEM_VLEN_MAX ((1u << 22) - 1)

struct item_view {
	uint32_t hdr_len; /* header + flags */
	uint32_t klen;
	uint32_t vlen;
	uint32_t flags;
	uint32_t exp_delta;
	uint32_t total;   /* hdr_len + klen + vlen, before alignment */
};

static inline uint32_t item_vlen_bytes(uint32_t vlen)
{
	return vlen < (1u << 7) ? 1 : vlen < (1u << 14) ? 2 : 3;
}

static inline uint32_t item_size(uint32_t klen, uint32_t vlen, uint32_t flags)
{
	return 2 + item_vlen_bytes(vlen) + (flags ? ITEM_FLAGS_LEN : 0) + klen + vlen;
}

/* Writes the header (and flags) at p; returns its length. */
static inline uint32_t item_write_hdr(uint8_t *p, uint32_t klen, uint32_t vlen, uint32_t flags,
				      uint32_t exp_delta)
{
	uint32_t n = 2;

	p[0] = (uint8_t)((exp_delta << 1) | (flags != 0));
	p[1] = (uint8_t)klen;
	if (vlen < (1u << 7)) {
		p[n++] = (uint8_t)vlen;
	} else if (vlen < (1u << 14)) {
		p[n++] = (uint8_t)(0x80 | (vlen & 0x7f));
		p[n++] = (uint8_t)(vlen >> 7);
	} else {
		p[n++] = (uint8_t)(0x80 | (vlen & 0x7f));
		p[n++] = (uint8_t)(0x80 | ((vlen >> 7) & 0x7f));
		p[n++] = (uint8_t)(vlen >> 14);
	}
	if (flags) {
		p[n++] = (uint8_t)flags;
		p[n++] = (uint8_t)(flags >> 8);
		p[n++] = (uint8_t)(flags >> 16);
		p[n++] = (uint8_t)(flags >> 24);
	}
	return n;
}

/* Rewrites only the expiry delta of an item header (merge relocation). */
static inline void item_set_exp_delta(uint8_t *p, uint32_t exp_delta)
{
	p[0] = (uint8_t)((exp_delta << 1) | (p[0] & 1));
}

/* Parses the item at p, of which at most `room` bytes are inside the
 * segment. Returns 0 when the bytes cannot be an item (a reader racing with
 * segment reuse sees garbage: it must never read past the segment). */
static inline int item_parse(const uint8_t *p, uint32_t room, struct item_view *v)
{
	uint32_t n = 2;

	if (room < 3)
		return 0;
	v->exp_delta = p[0] >> 1;
	v->klen = p[1];
	if (!(p[2] & 0x80)) {
		v->vlen = p[2];
		n = 3;
	} else if (room >= 4 && !(p[3] & 0x80)) {
		v->vlen = (p[2] & 0x7fu) | (uint32_t)p[3] << 7;
		n = 4;
	} else if (room >= 5) {
		v->vlen = (p[2] & 0x7fu) | (uint32_t)(p[3] & 0x7f) << 7 | (uint32_t)p[4] << 14;
		n = 5;
	} else {
		return 0;
	}
	v->flags = 0;
	if (p[0] & 1) {
		if (room < n + ITEM_FLAGS_LEN)
			return 0;
		v->flags = (uint32_t)p[n] | (uint32_t)p[n + 1] << 8 | (uint32_t)p[n + 2] << 16 |
			   (uint32_t)p[n + 3] << 24;
		n += ITEM_FLAGS_LEN;
	}
	v->hdr_len = n;
	v->total = n + v->klen + v->vlen;
	if (v->klen == 0 || v->total > room)
		return 0;
	return 1;
}

#endif /* SEGCACHED_SEG_ITEM_H */
