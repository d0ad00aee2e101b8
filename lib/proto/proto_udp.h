/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's UDP frame: every datagram starts with 8 bytes, four 16-bit
 * big-endian fields: request id, sequence number, total datagrams in the
 * message, reserved (0). A request is one datagram (total 1); a response
 * larger than one datagram is split and numbered 0..total-1.
 */
#ifndef SEGCACHED_PROTO_UDP_H
#define SEGCACHED_PROTO_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROTO_UDP_HDR_LEN 8
/* memcached's UDP_MAX_PAYLOAD_SIZE: a response datagram, header included */
#define PROTO_UDP_DGRAM_MAX 1400
#define PROTO_UDP_PAYLOAD_MAX (PROTO_UDP_DGRAM_MAX - PROTO_UDP_HDR_LEN)

struct proto_udp_hdr {
	uint16_t req_id;
	uint16_t seq;
	uint16_t total;
	uint16_t reserved;
};

/* Reads the header of a request datagram. Returns the payload offset
 * (PROTO_UDP_HDR_LEN), or -1 when the datagram must be dropped without a
 * reply as memcached does: shorter than the header, or a multi-datagram
 * request (total != 1). Sequence and reserved are not checked (memcached
 * does not check them either). */
int proto_udp_parse(const void *dgram, size_t len, struct proto_udp_hdr *h);

void proto_udp_write_hdr(void *dst, uint16_t req_id, uint16_t seq, uint16_t total);

/* Datagrams needed for a response of len bytes with at most max_payload
 * bytes after each header; 0 when that is more than 65535 (the response
 * cannot be framed; memcached drops it too) or max_payload is 0. An empty
 * response needs no datagram. */
unsigned proto_udp_count(size_t len, size_t max_payload);

/* Builds datagram seq of the response resp[0..len) into out (room for
 * PROTO_UDP_HDR_LEN + max_payload bytes) and returns its length; 0 when
 * seq is out of range. */
size_t proto_udp_frame(const void *resp, size_t len, size_t max_payload, uint16_t req_id,
		       unsigned seq, void *out);

/* The same datagram without a copy: writes its header into hdr and points
 * iov[0] at it and iov[1] at its part of resp, for a gathering send.
 * total is proto_udp_count(len, max_payload) and seq < total. Returns the
 * datagram's length. */
size_t proto_udp_frame_iov(const void *resp, size_t len, size_t max_payload, uint16_t req_id,
			   unsigned seq, unsigned total, uint8_t hdr[PROTO_UDP_HDR_LEN],
			   struct iovec iov[2]);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_PROTO_UDP_H */
