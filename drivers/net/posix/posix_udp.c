/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached over UDP on the posix stack: every datagram carries the 8-byte
 * frame header (request id, sequence number, datagram count, reserved) and
 * whole requests; the response is cut into numbered datagrams.
 */
#include "drivers/net/posix/posix_private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Sends the composed reply as one message: numbered datagrams that all
 * carry the request's id. */
static void
send_response(struct posix_worker *w, int fd, const struct sockaddr *to,
	      socklen_t tolen, uint16_t request_id)
{
	struct proto_out *o = &w->out;
	const char *data = o->data + o->head;
	size_t len = proto_out_pending(o);
	unsigned total, seq;

	if (len == 0)
		return; /* noreply, or nothing to say */
	total = proto_udp_count(len, PROTO_UDP_PAYLOAD_MAX);
	if (total == 0) {
		/* More datagrams than the header can number: memcached
		 * drops such a reply too. */
		POSIX_LOG(INFO, "UDP reply of %zu bytes too large, dropped", len);
		proto_out_consume(o, len);
		return;
	}
	for (seq = 0; seq < total; seq++) {
		uint8_t hdr[PROTO_UDP_HDR_LEN];
		struct iovec iov[2];
		struct msghdr msg = { 0 };
		ssize_t n;

		/* Header and payload go out together without a copy. */
		proto_udp_frame_iov(data, len, PROTO_UDP_PAYLOAD_MAX, request_id, seq, total, hdr,
				    iov);
		msg.msg_name = (void *)(uintptr_t)to;
		msg.msg_namelen = tolen;
		msg.msg_iov = iov;
		msg.msg_iovlen = 2;
		/* A full socket buffer drops the datagram: UDP clients
		 * retry, and waiting here would stall every connection. */
		n = sendmsg(fd, &msg, MSG_DONTWAIT);
		if (n > 0) {
			posix_count(w, POSIX_C_bytes_written, (uint64_t)n);
			posix_count(w, POSIX_C_udp_responses, 1);
		}
	}
	proto_out_consume(o, len);
}

void
posix_udp_readable(struct posix_worker *w, struct posix_socket *us)
{
	struct posix_stack *s = w->stack;
	int i;

	for (i = 0; i < POSIX_UDP_BURST; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		struct proto_udp_hdr h;
		const char *req;
		size_t reqlen;
		ssize_t n;
		int off;

		n = recvfrom(us->fd, w->udp_buf, POSIX_UDP_MAX, MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN, or an error to report on the next read */
		}
		if (!posix_peer_allowed(s, (const struct sockaddr *)&from)) {
			posix_count(w, POSIX_C_udp_not_allowed, 1);
			continue;
		}
		posix_count(w, POSIX_C_bytes_read, (uint64_t)n);
		posix_count(w, POSIX_C_udp_requests, 1);
		off = proto_udp_parse(w->udp_buf, (size_t)n, &h);
		if (off < 0) {
			posix_count(w, POSIX_C_udp_bad_frames, 1);
			continue;
		}
		req = (const char *)w->udp_buf + off;
		reqlen = (size_t)n - (size_t)off;

		/* A datagram holds whole requests; a partial one at its end
		 * is dropped with it, as in memcached. cmd_process() runs
		 * them all, so their replies go out as one message (memcached
		 * sends one per request; docs/protocol.md). */
		cmd_conn_reset(w->udp_cmd);
		while (reqlen > 0) {
			unsigned actions = 0;
			size_t used = cmd_process(w->udp_cmd, req, reqlen,
						  &w->out, &actions);

			send_response(w, us->fd, (struct sockaddr *)&from,
				      fromlen, h.req_id);
			if (actions & CMD_ACT_SHUTDOWN && s->cfg.on_shutdown)
				s->cfg.on_shutdown(s->cfg.on_shutdown_arg);
			if (used == 0 || (actions & CMD_ACT_CLOSE))
				break;
			req += used;
			reqlen -= used;
		}
	}
}
