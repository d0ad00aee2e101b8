/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's UDP frame header: parse a request, number a response.
 */
#include <string.h>

#include "proto/proto_udp.h"

static uint16_t
get_be16(const unsigned char *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static void
put_be16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

__attribute__((hot)) int
proto_udp_parse(const void *dgram, size_t len, struct proto_udp_hdr *h)
{
	const unsigned char *p = dgram;

	if (len < PROTO_UDP_HDR_LEN)
		return -1;
	h->req_id = get_be16(p);
	h->seq = get_be16(p + 2);
	h->total = get_be16(p + 4);
	h->reserved = get_be16(p + 6);
	if (h->total != 1)
		return -1;
	return PROTO_UDP_HDR_LEN;
}

__attribute__((hot)) void
proto_udp_write_hdr(void *dst, uint16_t req_id, uint16_t seq, uint16_t total)
{
	unsigned char *p = dst;

	put_be16(p, req_id);
	put_be16(p + 2, seq);
	put_be16(p + 4, total);
	put_be16(p + 6, 0);
}

__attribute__((hot)) unsigned
proto_udp_count(size_t len, size_t max_payload)
{
	size_t n;

	if (max_payload == 0)
		return 0;
	if (len <= max_payload) /* most responses: no division */
		return len != 0;
	n = len / max_payload + (len % max_payload != 0);
	return n > UINT16_MAX ? 0 : (unsigned)n;
}

__attribute__((hot)) size_t
proto_udp_frame_iov(const void *resp, size_t len, size_t max_payload, uint16_t req_id,
		    unsigned seq, unsigned total, uint8_t hdr[PROTO_UDP_HDR_LEN],
		    struct iovec iov[2])
{
	size_t off = (size_t)seq * max_payload;
	size_t n = len - off < max_payload ? len - off : max_payload;

	proto_udp_write_hdr(hdr, req_id, (uint16_t)seq, (uint16_t)total);
	iov[0] = (struct iovec){ hdr, PROTO_UDP_HDR_LEN };
	iov[1] = (struct iovec){ (void *)((uintptr_t)resp + off), n };
	return PROTO_UDP_HDR_LEN + n;
}

size_t
proto_udp_frame(const void *resp, size_t len, size_t max_payload, uint16_t req_id,
		unsigned seq, void *out)
{
	unsigned total = proto_udp_count(len, max_payload);
	struct iovec iov[2];
	size_t n;

	if (seq >= total)
		return 0;
	n = proto_udp_frame_iov(resp, len, max_payload, req_id, seq, total, out, iov);
	memcpy((unsigned char *)out + PROTO_UDP_HDR_LEN, iov[1].iov_base, iov[1].iov_len);
	return n;
}
