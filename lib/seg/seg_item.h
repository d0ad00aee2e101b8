/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The object layout inside a segment. No expiry, pointer, LRU link or cas
 * per object: the segment holds the expiry base, the hash slot holds the
 * location (which doubles as the cas unique, see seg_ops.c).
 *
 *   byte 0      bit 0: short form; bits 1-7: expiry delta in the
 *               segment's unit above its exp_base
 * Short form (keys up to 16 bytes, values up to 15, no client flags: tiny
 * objects, where a byte is a tenth of the item):
 *   byte 1      key length - 1 (bits 0-3), value length (bits 4-7)
 * Long form:
 *   byte 1      key length (1..250)
 *   byte 2..5   value length, little-endian base-128 with a continuation
 *               bit (bit 7); the first byte holds 6 bits and, in bit 6,
 *               "client flags follow"; a fourth byte holds 8 bits
 *   [4 bytes]   client flags, little-endian, only when non-zero
 *   key, value
 *
 * So a header is 2 bytes (short) or 3 to 9. Items are packed without
 * padding when the segment is at most 1 MiB (offsets count bytes); larger
 * segments align items to seg_size / 1 MiB.
 */
#ifndef SEGCACHED_SEG_ITEM_H
#define SEGCACHED_SEG_ITEM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define ITEM_FLAGS_LEN 4
#define ITEM_VLEN_MAX ((1u << 22) - 1)
#define ITEM_SHORT 1u
#define ITEM_SHORT_KLEN 16
#define ITEM_SHORT_VLEN 15
#define ITEM_LONG_FLAGS 0x40u

struct item_view {
	uint32_t hdr_len; /* header + flags */
	uint32_t klen;
	uint32_t vlen;
	uint32_t flags;
	uint32_t exp_delta;
	uint32_t total;   /* hdr_len + klen + vlen, before alignment */
};

static inline bool
item_is_short(uint32_t klen, uint32_t vlen, uint32_t flags)
{
	return klen <= ITEM_SHORT_KLEN && vlen <= ITEM_SHORT_VLEN && flags == 0;
}

static inline uint32_t
item_vlen_bytes(uint32_t vlen)
{
	return vlen < (1u << 6) ? 1 : vlen < (1u << 13) ? 2 : vlen < (1u << 20) ? 3 : 4;
}

static inline uint32_t
item_size(uint32_t klen, uint32_t vlen, uint32_t flags)
{
	if (item_is_short(klen, vlen, flags))
		return 2 + klen + vlen;
	return 2 + item_vlen_bytes(vlen) + (flags ? ITEM_FLAGS_LEN : 0) + klen + vlen;
}

/* Writes the header (and flags) at p; returns its length. */
static inline uint32_t
item_write_hdr(uint8_t *p, uint32_t klen, uint32_t vlen, uint32_t flags,
	       uint32_t exp_delta)
{
	uint32_t n = 2, bytes;

	if (item_is_short(klen, vlen, flags)) {
		p[0] = (uint8_t)((exp_delta << 1) | ITEM_SHORT);
		p[1] = (uint8_t)((klen - 1) | vlen << 4);
		return 2;
	}
	p[0] = (uint8_t)(exp_delta << 1);
	p[1] = (uint8_t)klen;
	bytes = item_vlen_bytes(vlen);
	p[n++] = (uint8_t)((bytes > 1 ? 0x80 : 0) | (flags ? ITEM_LONG_FLAGS : 0) | (vlen & 0x3f));
	if (bytes > 1)
		p[n++] = (uint8_t)((bytes > 2 ? 0x80 : 0) | ((vlen >> 6) & 0x7f));
	if (bytes > 2)
		p[n++] = (uint8_t)((bytes > 3 ? 0x80 : 0) | ((vlen >> 13) & 0x7f));
	if (bytes > 3)
		p[n++] = (uint8_t)(vlen >> 20);
	if (flags) {
		p[n++] = (uint8_t)flags;
		p[n++] = (uint8_t)(flags >> 8);
		p[n++] = (uint8_t)(flags >> 16);
		p[n++] = (uint8_t)(flags >> 24);
	}
	return n;
}

/* Rewrites only the expiry delta of an item header (merge relocation). */
static inline void
item_set_exp_delta(uint8_t *p, uint32_t exp_delta)
{
	p[0] = (uint8_t)((exp_delta << 1) | (p[0] & ITEM_SHORT));
}

/* Parses the item at p, of which at most `room` bytes are inside the
 * segment. Returns 0 when the bytes cannot be an item (a reader racing with
 * segment reuse sees garbage: it must never read past the segment). */
static inline int
item_parse(const uint8_t *p, uint32_t room, struct item_view *v)
{
	uint32_t n = 3, shift = 6;
	bool has_flags;

	if (room < 2)
		return 0;
	v->exp_delta = p[0] >> 1;
	v->flags = 0;
	if (p[0] & ITEM_SHORT) {
		v->klen = (p[1] & 0x0fu) + 1;
		v->vlen = p[1] >> 4;
		v->hdr_len = 2;
		v->total = 2 + v->klen + v->vlen;
		return v->total <= room;
	}
	if (room < 3)
		return 0;
	v->klen = p[1];
	v->vlen = p[2] & 0x3fu;
	has_flags = p[2] & ITEM_LONG_FLAGS;
	/* Up to three more value-length bytes, the last one 8 bits wide. */
	for (uint8_t b = p[2]; b & 0x80; shift += 7) {
		if (n >= room)
			return 0;
		b = p[n++];
		if (n == 6) {
			v->vlen |= (uint32_t)b << shift;
			break;
		}
		v->vlen |= (uint32_t)(b & 0x7f) << shift;
	}
	if (has_flags) {
		if (room < n + ITEM_FLAGS_LEN)
			return 0;
		v->flags = (uint32_t)p[n] | (uint32_t)p[n + 1] << 8 | (uint32_t)p[n + 2] << 16 |
			   (uint32_t)p[n + 3] << 24;
		n += ITEM_FLAGS_LEN;
	}
	v->hdr_len = n;
	v->total = n + v->klen + v->vlen;
	if (v->klen == 0 || v->vlen > ITEM_VLEN_MAX || v->total > room)
		return 0;
	return 1;
}

/* A filler: bytes that hold no item, written where a worker reserved bytes
 * ahead (seg_chunk.c) and left them unused, so that walkers step over them.
 * It parses as an item (key one zero byte) whose header says "client flags
 * follow" and whose flags are 0, which item_write_hdr never writes. At
 * least SEG_FILLER_MIN bytes; at most SEG_FILLER_MAX in one. */
#define SEG_FILLER_MIN 8u
#define SEG_FILLER_MAX (1u << 21)

static inline void
item_write_filler(uint8_t *p, uint32_t total)
{
	/* value-length bytes: the fewest whose range holds the rest */
	static const uint32_t vlen_cap[4] = { 1u << 6, 1u << 13, 1u << 20, ITEM_VLEN_MAX + 1 };
	uint32_t vb = 1, vlen;

	while (vb < 4 && total - 7 - vb >= vlen_cap[vb - 1])
		vb++;
	vlen = total - 7 - vb;
	p[0] = 0;
	p[1] = 1;
	p[2] = (uint8_t)((vb > 1 ? 0x80 : 0) | ITEM_LONG_FLAGS | (vlen & 0x3f));
	if (vb > 1)
		p[3] = (uint8_t)((vb > 2 ? 0x80 : 0) | ((vlen >> 6) & 0x7f));
	if (vb > 2)
		p[4] = (uint8_t)((vb > 3 ? 0x80 : 0) | ((vlen >> 13) & 0x7f));
	if (vb > 3)
		p[5] = (uint8_t)(vlen >> 20);
	memset(p + 2 + vb, 0, ITEM_FLAGS_LEN + 1); /* flags 0, key byte 0 */
}

/* The largest filler item_write_filler_head writes: two value-length
 * bytes. A chunk (at most 2 KiB) leaves no more after an item. */
#define SEG_FILLER_HEAD_MAX (9u + (1u << 13) - 1)

/* The same filler as item_write_filler, for SEG_FILLER_MIN <= total <=
 * SEG_FILLER_HEAD_MAX, in at most two stores: its value length always in
 * two bytes (item_parse reads any width; one for total 8, as its header is
 * all it has), so moving a chunk's filler past the item just placed costs
 * what writing nine bytes does. */
static inline void
item_write_filler_head(uint8_t *p, uint32_t total)
{
	const uint32_t vlen = total - 9;
	uint8_t h[9] = { 0, 1, ITEM_LONG_FLAGS, 0, 0, 0, 0, 0, 0 };

	if (total == SEG_FILLER_MIN) {
		memcpy(p, h, 8); /* one value-length byte, value length 0 */
		return;
	}
	h[2] = (uint8_t)(0x80 | ITEM_LONG_FLAGS | (vlen & 0x3f));
	h[3] = (uint8_t)(vlen >> 6); /* < 0x80: the last length byte */
	memcpy(p, h, sizeof(h));
}

/* The bytes an item of `total` bytes takes in a segment whose slot offsets
 * count units of 1 << off_shift: rounded up to where the next item may
 * start (what walks step by and live counts add). */
static inline uint32_t
item_span(uint32_t total, unsigned off_shift)
{
	const uint32_t align = (1u << off_shift) - 1;

	return (total + align) & ~align;
}

/* Is the item parsed at p (as v) a filler? */
static inline bool
item_is_filler(const uint8_t *p, const struct item_view *v)
{
	return !(p[0] & ITEM_SHORT) && (p[2] & ITEM_LONG_FLAGS) && v->flags == 0;
}

/* Whether the len bytes at a and b differ: a key of 8 to 32 bytes (most
 * keys) is compared by overlapping 8-byte words in line, not by a call to
 * memcmp() (~18 instructions a get, and its code out of the I-cache).
 * The get's read and the set's search under the lock both use it. */
static inline bool
seg_key_differs(const uint8_t *a, const void *b, size_t len)
{
	const uint8_t *q = (const uint8_t *)b;
	uint64_t x0, x1, y0, y1;

	if (len < 8 || len > 32)
		return memcmp(a, b, len) != 0;
	if (len > 16) {
		memcpy(&x0, a + 8, 8);
		memcpy(&y0, q + 8, 8);
		memcpy(&x1, a + len - 16, 8);
		memcpy(&y1, q + len - 16, 8);
		if ((x0 ^ y0) | (x1 ^ y1))
			return true;
	}
	memcpy(&x0, a, 8);
	memcpy(&y0, q, 8);
	memcpy(&x1, a + len - 8, 8);
	memcpy(&y1, q + len - 8, 8);
	return ((x0 ^ y0) | (x1 ^ y1)) != 0;
}

#endif /* SEGCACHED_SEG_ITEM_H */
