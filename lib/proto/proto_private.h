/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Parser internals shared by proto_parse.c (the command line, the classic
 * syntaxes) and proto_meta.c (the meta syntaxes).
 */
#ifndef SEGCACHED_PROTO_PRIVATE_H
#define SEGCACHED_PROTO_PRIVATE_H

#include "proto/proto.h"

struct proto_tok {
	const char *p;
	size_t len;
};

size_t proto_tokenize(const char *s, size_t len, struct proto_tok *t);

enum proto_status proto_take_data(struct proto_parser *p, const char *buf, size_t len,
				  size_t line_len, int32_t vlen, struct proto_req *req,
				  size_t *consumed, const char *bad_chunk_msg,
				  bool bad_chunk_noreply);

enum proto_status proto_parse_meta(struct proto_parser *p, enum proto_cmd cmd,
				   const char *buf, size_t len, size_t line_len,
				   const struct proto_tok *t, size_t ntokens,
				   struct proto_req *req, size_t *consumed);

/* The syntaxes of proto_meta.c: mg, ms, md, ma (PROTO_SYN_META) and me. */
enum proto_status proto_parse_me(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
				 struct proto_req *req);

#endif /* SEGCACHED_PROTO_PRIVATE_H */
