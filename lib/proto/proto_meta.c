/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Meta commands (mg, ms, md, ma, me): flag validation as memcached 1.6.18
 * does it. Each command checks its tokens in its own order and words some
 * errors its own way (mg: "options flags are too long", the others
 * "options flags too long"; md and ma report every flag problem as
 * "invalid or duplicate flag"); ms swallows its data block after any error
 * found once its length is known. The order of checks below is that order.
 */
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_private.h"

static const char bad_format[] = PROTO_E_BAD_FORMAT;
static const char bad_token[] = "CLIENT_ERROR bad token in command line format";

/* meta errors ignore q: never noreply */
static enum proto_status
meta_error(struct proto_req *req, enum proto_cmd cmd, const char *msg)
{
	return req_error(req, cmd, msg, false);
}

/* _meta_flag_preparse(): returns NULL or the error line. */
static const char *
meta_flags(const struct proto_tok *t, size_t first, size_t ntokens,
	   struct proto_req *req)
{
	struct proto_meta *m = &req->meta;
	const char *err = bad_format;
	bool has_error = false;
	uint8_t seen[128] = { 0 };

	for (size_t i = first; i < ntokens - 1; i++) {
		uint8_t o = (uint8_t)t[i].p[0];
		const char *arg = t[i].p + 1;
		size_t alen = t[i].len - 1;
		int32_t v;

		if (o >= 127 || seen[o])
			return "CLIENT_ERROR duplicate flag";
		seen[o] = 1;
		m->order[m->norder++] = (char)o;
		switch (o) {
		case 'b': {
			size_t n = proto_base64_decode(req->key, req->klen, req->keybuf,
						       sizeof(req->keybuf));

			if (n == 0) {
				err = "CLIENT_ERROR error decoding key";
				has_error = true;
			}
			req->key = req->keybuf;
			req->klen = n;
			m->base64 = true;
			break;
		}
		case 'N':
			if (!proto_strtol32(arg, alen, &v)) {
				err = bad_token;
				has_error = true;
			} else {
				m->has_vivify = true;
				m->vivify_ttl = v;
			}
			break;
		case 'T':
			if (!proto_strtol32(arg, alen, &v)) {
				err = bad_token;
				has_error = true;
			} else {
				m->has_ttl = true;
				m->ttl = v;
			}
			break;
		case 'R':
			if (!proto_strtol32(arg, alen, &v)) {
				err = bad_token;
				has_error = true;
			} else {
				m->has_recache = true;
				m->recache_ttl = v;
			}
			break;
		case 'O':
			m->opaque = t[i].p;
			m->opaque_len = t[i].len;
			break;
		case 'P': /* proxy hints: ignored */
		case 'L':
		case 'k':
		case 's':
		case 't':
		case 'c':
		case 'f':
		case 'h':
		case 'l':
			break;
		case 'v':
			m->value = true;
			break;
		case 'u':
			m->no_update = true;
			break;
		case 'q':
			m->quiet = true;
			break;
		case 'F':
			/* memcached keeps the previous error text here */
			if (!proto_strtoul32(arg, alen, &m->client_flags))
				has_error = true;
			break;
		case 'C':
			if (!proto_strtoull(arg, alen, &m->cas)) {
				err = bad_token;
				has_error = true;
			} else {
				m->has_cas = true;
			}
			break;
		case 'M':
			if (t[i].len != 2) {
				err = "CLIENT_ERROR incorrect length for M token";
				has_error = true;
			} else {
				m->mode = t[i].p[1];
			}
			break;
		case 'J':
			if (!proto_strtoull(arg, alen, &m->initial)) {
				err = "CLIENT_ERROR invalid numeric initial value";
				has_error = true;
			}
			break;
		case 'D':
			if (!proto_strtoull(arg, alen, &m->delta)) {
				err = "CLIENT_ERROR invalid numeric delta value";
				has_error = true;
			}
			break;
		case 'I':
			m->invalidate = true;
			break;
		default:
			return "CLIENT_ERROR invalid flag";
		}
	}
	return has_error ? err : NULL;
}

static bool
opaque_too_long(const struct proto_meta *m)
{
	return m->opaque_len > PROTO_OPAQUE_MAX;
}

enum proto_status
proto_parse_me(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
	       struct proto_req *req)
{
	if (ntokens < 3 || t[1].len > PROTO_KEY_MAX)
		return meta_error(req, cmd, bad_format);
	memset(req, 0, offsetof(struct proto_req, keybuf));
	req->cmd = cmd;
	req->key = t[1].p;
	req->klen = t[1].len;
	/* only "me <key> b" is looked at; other tokens are ignored */
	if (ntokens >= 4 && t[2].len == 1 && t[2].p[0] == 'b') {
		size_t n = proto_base64_decode(t[1].p, t[1].len, req->keybuf, sizeof(req->keybuf));

		if (n == 0)
			return meta_error(req, cmd, bad_format);
		req->key = req->keybuf;
		req->klen = n;
		req->meta.base64 = true;
	}
	return PROTO_REQ;
}

/* ms: an error found after the data length is known swallows the block. */
static enum proto_status
ms_refuse(struct proto_parser *p, struct proto_req *req, const char *msg,
	  int32_t vlen)
{
	p->state = PROTO_PS_SWALLOW;
	p->swallow = (uint64_t)vlen + 2;
	req->cmd = PROTO_CMD_MS;
	req->error = msg;
	req->noreply = false;
	return PROTO_REQ;
}

enum proto_status
proto_parse_meta(struct proto_parser *p, enum proto_cmd cmd,
		 const char *buf, size_t len, size_t line_len,
		 const struct proto_tok *t, size_t ntokens,
		 struct proto_req *req, size_t *consumed)
{
	struct proto_meta *m = &req->meta;
	size_t first = 2;
	int32_t vlen = 0;
	const char *err;

	*consumed = line_len;
	if (ntokens < 3)
		return meta_error(req, PROTO_CMD_ERROR, "ERROR");
	if (t[1].len > PROTO_KEY_MAX)
		return meta_error(req, cmd, bad_format);
	if (cmd == PROTO_CMD_MS) {
		if (ntokens == 3)
			return meta_error(req, cmd, bad_format);
		if (ntokens > PROTO_META_TOKENS_MAX)
			return meta_error(req, cmd, "CLIENT_ERROR options flags too long");
		if (!proto_strtol32(t[2].p, t[2].len, &vlen) || vlen < 0 || vlen > INT32_MAX - 2)
			return meta_error(req, cmd, bad_format);
		first = 3;
	} else if (ntokens > PROTO_META_TOKENS_MAX) {
		return meta_error(req, cmd,
				  cmd == PROTO_CMD_MG ? "CLIENT_ERROR options flags are too long"
						      : "CLIENT_ERROR options flags too long");
	}

	memset(req, 0, offsetof(struct proto_req, keybuf));
	req->cmd = cmd;
	req->key = t[1].p;
	req->klen = t[1].len;
	m->delta = 1;
	err = meta_flags(t, first, ntokens, req);

	switch (cmd) {
	case PROTO_CMD_MG:
		if (err)
			return meta_error(req, cmd, err);
		if (opaque_too_long(m))
			return meta_error(req, cmd, "CLIENT_ERROR opaque token too long");
		return PROTO_REQ;
	case PROTO_CMD_MD:
		if (err)
			return meta_error(req, cmd, "CLIENT_ERROR invalid or duplicate flag");
		if (opaque_too_long(m))
			return meta_error(req, cmd, "CLIENT_ERROR opaque token too long");
		return PROTO_REQ;
	case PROTO_CMD_MA:
		if (err)
			return meta_error(req, cmd, "CLIENT_ERROR invalid or duplicate flag");
		switch (m->mode) {
		case 0:
		case 'I':
		case '+':
		case 'D':
		case '-':
			break;
		default:
			return meta_error(req, cmd, "CLIENT_ERROR invalid mode for ma M token");
		}
		if (opaque_too_long(m))
			return meta_error(req, cmd, "CLIENT_ERROR opaque token too long");
		return PROTO_REQ;
	case PROTO_CMD_MS:
		if (err)
			return ms_refuse(p, req, err, vlen);
		switch (m->mode) {
		case 0:
		case 'E':
		case 'A':
		case 'P':
		case 'R':
		case 'S':
			break;
		default:
			return ms_refuse(p, req, "CLIENT_ERROR invalid mode for ms M token", vlen);
		}
		if (opaque_too_long(m))
			return ms_refuse(p, req, "CLIENT_ERROR opaque token too long", vlen);
		/* errors about the data block itself ignore q as well */
		return proto_take_data(p, buf, len, line_len, vlen, req, consumed,
				       "CLIENT_ERROR bad data chunk", false);
	default:
		return meta_error(req, PROTO_CMD_ERROR, "ERROR");
	}
}
