/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * A large value read straight into its item (issue 35): the parser hands
 * a data block of CMD_STREAM_MIN bytes or more over in pieces as it
 * arrives (proto_parser_stream), the engine reserves the item at the
 * request line and takes each piece into it (engine_store_begin), and
 * the store's handler runs again at the block's end to link it and reply.
 * So a value in flight is heap memory that -m bounds, and a connection
 * buffers no more than a line and a piece, as memcached, which reads a
 * value into the item it allocated.
 *
 * The request line's fields outlive the input they were parsed from: the
 * stream keeps a copy, with its key and opaque, for the handler's second
 * run. Refused at the line (no memory, too large, or not served here), the
 * store is answered at once and the block is swallowed, as memcached's
 * conn_swallow does.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_private.h"
#include "engine/engine_stream.h"

struct cmd_stream {
	struct engine_stream es;
	struct proto_req req;      /* the line, for the handler's run at the end */
	char key[ENGINE_KEY_MAX];
	char opaque[PROTO_OPAQUE_MAX];
};

bool
cmd_conn_streaming(const struct cmd_conn *c)
{
	return c->stream != NULL;
}

void
cmd_stream_setup(struct cmd_conn *c)
{
	const bool streams = !c->udp && engine_streams(c->w->engine);

	proto_parser_stream(&c->parser, streams ? CMD_STREAM_MIN : 0);
}

bool
cmd_store(struct cmd_conn *c, const struct proto_req *req, const struct cmd_store_args *a,
	  uint64_t *cas_out, enum engine_status *rc)
{
	/* a classic line leaves the meta flags unset */
	const size_t opaque_len = req->cmd == PROTO_CMD_MS ? req->meta.opaque_len : 0;
	struct cmd_stream *s;

	switch (req->stream) {
	case PROTO_STREAM_NONE:
		break;
	case PROTO_STREAM_END:
		*rc = engine_store_finish(c->w, &c->stream->es, a->mode, req->key, req->klen,
					  a->cas_in, cas_out);
		return true;
	case PROTO_STREAM_BEGIN:
		/* one line's copy for the handler's second run */
		if (req->klen > sizeof(s->key) || opaque_len > sizeof(s->opaque) ||
		    (s = malloc(sizeof(*s))) == NULL) {
			*rc = ENGINE_NO_MEMORY;
			engine_count(c->w, ENGINE_C_cmd_set);
			engine_count(c->w, ENGINE_C_set_no_memory);
			return true; /* cmd_process swallows the block */
		}
		*rc = engine_store_begin(c->w, a->mode, req->key, req->klen, req->vlen, a->flags,
					 a->exptime, &s->es);
		if (*rc != ENGINE_OK) {
			free(s);
			return true;
		}
		s->req = *req;
		memcpy(s->key, req->key, req->klen);
		s->req.key = s->key;
		if (opaque_len) {
			memcpy(s->opaque, req->meta.opaque, opaque_len);
			s->req.meta.opaque = s->opaque;
		}
		c->stream = s;
		return false;
	}
	*rc = engine_store(c->w, a->mode, req->key, req->klen, req->value, req->vlen, a->flags,
			   a->exptime, a->cas_in, cas_out);
	return true;
}

const struct proto_req *
cmd_stream_piece(struct cmd_conn *c, const struct proto_req *piece)
{
	struct cmd_stream *s = c->stream;

	if (s == NULL)
		return NULL; /* cannot happen: a piece follows a line that began a stream */
	if (piece->vlen > 0)
		engine_store_write(c->w, &s->es, piece->value, piece->vlen);
	if (piece->stream != PROTO_STREAM_END)
		return NULL;
	s->req.stream = PROTO_STREAM_END;
	s->req.error = piece->error; /* a wrong end of the block */
	if (piece->error)
		s->req.noreply = piece->noreply;
	return &s->req;
}

void
cmd_stream_end(struct cmd_conn *c)
{
	free(c->stream);
	c->stream = NULL;
}
