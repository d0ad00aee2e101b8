/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Parser internals shared by proto_parse.c (the command line, the classic
 * syntaxes), proto_meta.c (the meta syntaxes) and proto_admin.c (the
 * administration syntaxes).
 */
#ifndef SEGCACHED_PROTO_PRIVATE_H
#define SEGCACHED_PROTO_PRIVATE_H

#include <stddef.h>
#include <string.h>

#include "proto/proto.h"

struct proto_tok {
	const char *p;
	size_t len;
};

size_t proto_tokenize(const char *s, size_t len, struct proto_tok *t);

/* ---- building a request (every syntax) ---- */

static inline void
req_clear(struct proto_req *req, enum proto_cmd cmd)
{
	memset(req, 0, offsetof(struct proto_req, meta));
	req->cmd = cmd;
}

/* A well-formed request on key token `key`. */
static inline void
req_start(struct proto_req *req, enum proto_cmd cmd, const struct proto_tok *key,
	  bool noreply)
{
	req_clear(req, cmd);
	req->noreply = noreply;
	req->key = key->p;
	req->klen = key->len;
}

static inline enum proto_status
req_error(struct proto_req *req, enum proto_cmd cmd,
	  const char *msg, bool noreply)
{
	req_clear(req, cmd);
	req->error = msg;
	req->noreply = noreply;
	return PROTO_REQ;
}

static inline bool
tok_is(const struct proto_tok *t, const char *word, size_t wlen)
{
	return t->len == wlen && memcmp(t->p, word, wlen) == 0;
}
#define TOK_IS(t, lit) tok_is((t), (lit), sizeof(lit) - 1)

/* set_noreply_maybe(): the last token is "noreply". */
static inline bool
last_is_noreply(const struct proto_tok *t, size_t ntokens)
{
	return ntokens >= 2 && TOK_IS(&t[ntokens - 2], "noreply");
}

/* ---- the administration syntaxes (proto_admin.c) ---- */

enum proto_status proto_parse_cache_memlimit(enum proto_cmd cmd, const struct proto_tok *t,
					     size_t ntokens, struct proto_req *req);
enum proto_status proto_parse_slabs(enum proto_cmd cmd, const struct proto_tok *t,
				    size_t ntokens, struct proto_req *req);
enum proto_status proto_parse_lru_crawler(enum proto_cmd cmd, const struct proto_tok *t,
					  size_t ntokens, struct proto_req *req);
enum proto_status proto_parse_stats(enum proto_cmd cmd, const struct proto_tok *t,
				    size_t ntokens, struct proto_req *req);

/* ---- a storage command's data block (classic storage, ms) ---- */

/* A store whose value replaces the old one: its data block can go
 * straight into a new item as it arrives (append and prepend join the
 * old value to it). */
static inline bool
proto_streamable(const struct proto_req *req)
{
	switch (req->cmd) {
	case PROTO_CMD_SET:
	case PROTO_CMD_ADD:
	case PROTO_CMD_REPLACE:
	case PROTO_CMD_CAS:
		return true;
	case PROTO_CMD_MS:
		return req->meta.mode != 'A' && req->meta.mode != 'P';
	default:
		return false;
	}
}

/* After the line of a storage command: the data block is complete and
 * ends in "\r\n", or is still arriving (to be buffered, or handed over in
 * pieces: proto_parser_stream), or was refused. */
static inline enum proto_status
proto_take_data(struct proto_parser *p, const char *buf, size_t len,
		size_t line_len, int32_t vlen, struct proto_req *req,
		size_t *consumed, const char *bad_chunk_msg, bool bad_chunk_noreply)
{
	size_t total = line_len + (size_t)vlen + 2;

	if ((size_t)vlen > p->value_max) {
		req->too_large = true;
		req->vlen = (size_t)vlen;
		p->state = PROTO_PS_SWALLOW;
		p->swallow = (uint64_t)vlen + 2;
		*consumed = line_len;
		return PROTO_REQ;
	}
	if (len < total && p->stream_min && (size_t)vlen >= p->stream_min &&
	    proto_streamable(req)) {
		p->state = PROTO_PS_STREAM;
		p->stream_left = (uint64_t)vlen;
		p->stream_bad = bad_chunk_msg;
		p->stream_bad_noreply = bad_chunk_noreply;
		req->stream = PROTO_STREAM_BEGIN;
		req->value = NULL;
		req->vlen = (size_t)vlen;
		*consumed = line_len;
		return PROTO_REQ;
	}
	if (len < total) {
		p->state = PROTO_PS_DATA;
		p->need = total;
		*consumed = 0;
		return PROTO_NEED_MORE;
	}
	*consumed = total;
	if (buf[total - 2] != '\r' || buf[total - 1] != '\n') {
		/* memcached read exactly vlen + 2 bytes; the next command
		 * starts after them, whatever they were */
		req->error = bad_chunk_msg;
		req->noreply = bad_chunk_noreply;
		return PROTO_REQ;
	}
	req->value = buf + line_len;
	req->vlen = (size_t)vlen;
	return PROTO_REQ;
}

enum proto_status proto_parse_meta(struct proto_parser *p, enum proto_cmd cmd,
				   const char *buf, size_t len, size_t line_len,
				   const struct proto_tok *t, size_t ntokens,
				   struct proto_req *req, size_t *consumed);

/* The syntaxes of proto_meta.c: mg, ms, md, ma (PROTO_SYN_META) and me. */
enum proto_status proto_parse_me(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
				 struct proto_req *req);

#endif /* SEGCACHED_PROTO_PRIVATE_H */
