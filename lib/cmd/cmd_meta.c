/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * Meta commands (mg, ms, md, ma, me, mn) against the engine, one handler
 * each (cmd_table.c). Return flags are echoed in request order as memcached
 * does. Flags that need per-item state the engine does not keep (last
 * access 'l'; the stale/win tokens behind N, R and I) are handled as
 * docs/protocol.md describes.
 */
#include <string.h>

#include "cmd/cmd_private.h"

/* " k<key>", base64 again (with " b") when the request sent it so. */
static size_t
put_key_of(char *p, const struct proto_meta *m, const char *key, size_t klen)
{
	size_t n = 2;

	p[0] = ' ';
	p[1] = 'k';
	if (m->base64) {
		n += proto_base64_encode(key, klen, p + n, CMD_HDR_MAX);
		memcpy(p + n, " b", 2);
		return n + 2;
	}
	memcpy(p + n, key, klen);
	return n + klen;
}

static size_t
put_key(char *p, const struct proto_req *req)
{
	return put_key_of(p, &req->meta, req->key, req->klen);
}

static size_t
put_opaque(char *p, const struct proto_meta *m)
{
	p[0] = ' ';
	memcpy(p + 1, m->opaque, m->opaque_len);
	return 1 + m->opaque_len;
}

static size_t
put_num(char *p, char flag, uint64_t v)
{
	p[0] = ' ';
	p[1] = flag;
	return 2 + proto_u64_to_dec(v, p + 2);
}

static size_t
put_ttl(char *p, const struct engine_item *it, int64_t now)
{
	p[0] = ' ';
	p[1] = 't';
	if (it->expires_at == 0) {
		memcpy(p + 2, "-1", 2);
		return 4;
	}
	return 2 + proto_u64_to_dec(it->expires_at > now ? (uint64_t)(it->expires_at - now) : 0,
				    p + 2);
}

void
cmd_meta_status(struct cmd_conn *c, const struct proto_meta *m, const char *key, size_t klen,
		const char *code)
{
	char line[CMD_HDR_MAX];
	size_t n = 2;

	memcpy(line, code, 2);
	for (unsigned i = 0; i < m->norder; i++) {
		if (m->order[i] == 'O')
			n += put_opaque(line + n, m);
		else if (m->order[i] == 'k')
			n += put_key_of(line + n, m, key, klen);
	}
	memcpy(line + n, "\r\n", 2);
	cmd_put(c, line, n + 2);
}

/* A status line with only the O and k flags echoed (misses, EX, NF...). */
static void
status_line(struct cmd_conn *c, const struct proto_req *req, const char *code)
{
	cmd_meta_status(c, &req->meta, req->key, req->klen, code);
}

/* The reply to an engine status: its code with O and k echoed, or its
 * error line (never quiet). */
static void
status_reply(struct cmd_conn *c, const struct proto_req *req, enum engine_status rc,
	     unsigned answers)
{
	const struct cmd_status_reply *st = cmd_status_reply(CMD_META, rc, answers);

	if (st->error)
		cmd_reply(c, false, st->line);
	else
		status_line(c, req, st->line);
}

/* ---- mg ------------------------------------------------------------------ */

size_t
cmd_mg_header(char *h, const struct proto_meta *m, const char *key, size_t klen,
	      const struct engine_item *it, int64_t now)
{
	size_t n;

	if (m->value) {
		memcpy(h, "VA ", 3);
		n = 3 + proto_u64_to_dec(it->vlen, h + 3);
	} else {
		memcpy(h, "HD", 2);
		n = 2;
	}
	for (unsigned i = 0; i < m->norder; i++) {
		switch (m->order[i]) {
		case 's':
			n += put_num(h + n, 's', it->vlen);
			break;
		case 't':
			n += put_ttl(h + n, it, now);
			break;
		case 'c':
			n += put_num(h + n, 'c', it->cas);
			break;
		case 'f':
			n += put_num(h + n, 'f', it->flags);
			break;
		case 'h':
			memcpy(h + n, it->fetched_before ? " h1" : " h0", 3);
			n += 3;
			break;
		case 'O':
			n += put_opaque(h + n, m);
			break;
		case 'k':
			n += put_key_of(h + n, m, key, klen);
			break;
		default:
			break;
		}
	}
	h[n++] = '\r';
	h[n++] = '\n';
	return n;
}

static size_t
mg_header(char *h, const struct proto_req *req, const struct engine_item *it, int64_t now)
{
	return cmd_mg_header(h, &req->meta, req->key, req->klen, it, now);
}

/* memcached applies the flags in order: a 't' before the 'T' reports the
 * TTL the item had before this request changed it. */
static bool
ttl_before_touch(const struct proto_meta *m)
{
	for (unsigned i = 0; i < m->norder; i++) {
		if (m->order[i] == 'T')
			return false;
		if (m->order[i] == 't')
			return m->has_ttl;
	}
	return false;
}

void
cmd_exec_mg(struct cmd_conn *c, const struct proto_req *req)
{
	const struct proto_meta *m = &req->meta;
	int64_t touch = m->has_ttl ? m->ttl : ENGINE_NO_TOUCH;
	int64_t now = proto_meta_has(m, 't') ? cmd_now(c) : 0;
	bool old_ttl = ttl_before_touch(m);
	int64_t old_expiry = 0;
	struct engine_item it;
	char hdr[CMD_HDR_MAX];
	size_t gap = 0, hlen;
	int rc;

	/* the engine keeps no last-access time: refuse rather than invent */
	if (proto_meta_has(m, 'l')) {
		cmd_reply(c, false, "CLIENT_ERROR invalid flag");
		return;
	}
	if (old_ttl) {
		if (engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, NULL, 0, &it) !=
		    ENGINE_MISS)
			old_expiry = it.expires_at;
	}
	if (m->value)
		gap = mg_header(hdr, req, &c->last, now);
	rc = cmd_fetch(c, req->key, req->klen, touch, gap, m->value, &it);
	if (rc < 0) {
		cmd_reply(c, false, CMD_E_GET_NO_MEMORY);
		return;
	}
	if (rc == ENGINE_MISS) {
		if (!m->quiet)
			status_line(c, req, "EN");
		return;
	}
	if (rc != ENGINE_OK) {
		cmd_reply(c, false, PROTO_E_BAD_FORMAT);
		return;
	}
	if (old_ttl)
		it.expires_at = old_expiry;
	hlen = mg_header(hdr, req, &it, now);
	if (m->value) {
		proto_out_place_header(c->out, gap, hdr, hlen, it.vlen);
		memcpy(proto_out_tail(c->out), "\r\n", 2);
		proto_out_commit(c->out, 2);
		c->last = it;
	} else {
		/* the engine counts a read only when it copies the value */
		engine_count(c->w, ENGINE_C_cmd_get);
		engine_count(c->w, ENGINE_C_get_hits);
		cmd_put(c, hdr, hlen);
	}
}

/* ---- ms ------------------------------------------------------------------ */

void
cmd_exec_ms(struct cmd_conn *c, const struct proto_req *req)
{
	const struct proto_meta *m = &req->meta;
	enum engine_store_mode mode = ENGINE_SET;
	uint64_t cas_in = m->has_cas ? m->cas : 0, cas_out = 0;
	const struct cmd_status_reply *st;
	char line[CMD_HDR_MAX];
	size_t n = 2;
	enum engine_status rc;

	switch (m->mode) {
	case 'E':
		mode = ENGINE_ADD;
		cas_in = 0; /* memcached's add ignores C */
		break;
	case 'A':
		mode = ENGINE_APPEND;
		break;
	case 'P':
		mode = ENGINE_PREPEND;
		break;
	case 'R':
		mode = ENGINE_REPLACE;
		break;
	default:
		break;
	}
	/* memcached turns set and replace with a C token into cas */
	if (m->has_cas && (mode == ENGINE_SET || mode == ENGINE_REPLACE))
		mode = ENGINE_CAS;
	if (req->too_large) {
		engine_count(c->w, ENGINE_C_cmd_set);
		engine_count(c->w, ENGINE_C_set_too_large);
		cmd_drop_key(c, req->key, req->klen);
		cmd_reply(c, false, CMD_E_TOO_LARGE);
		return;
	}
	/* append/prepend with a C token: the engine compares atomically */
	const struct cmd_store_args a = { .mode = mode, .flags = m->client_flags,
					  .exptime = m->has_ttl ? m->ttl : 0, .cas_in = cas_in };

	if (!cmd_store(c, req, &a, &cas_out, &rc))
		return; /* the value is arriving: this runs again at its end */
	/* memcached drops the old value whatever the mode (the engine
	 * already did for a too large set) */
	if ((rc == ENGINE_TOO_LARGE && mode != ENGINE_SET) || rc == ENGINE_NO_MEMORY)
		cmd_drop_key(c, req->key, req->klen);
	st = cmd_status_reply(CMD_META, rc, CMD_ST_STORE);
	if (st->error) {
		cmd_reply(c, false, st->line);
		return;
	}
	if (rc == ENGINE_OK && m->quiet)
		return;
	memcpy(line, st->line, 2);
	for (unsigned i = 0; i < m->norder; i++) {
		switch (m->order[i]) {
		case 'O':
			n += put_opaque(line + n, m);
			break;
		case 'k':
			n += put_key(line + n, req);
			break;
		case 'c':
			/* memcached returns 0 when nothing was stored */
			n += put_num(line + n, 'c', rc == ENGINE_OK ? cas_out : 0);
			break;
		default:
			break;
		}
	}
	memcpy(line + n, "\r\n", 2);
	cmd_put(c, line, n + 2);
}

/* ---- md ------------------------------------------------------------------ */

void
cmd_exec_md(struct cmd_conn *c, const struct proto_req *req)
{
	const struct proto_meta *m = &req->meta;
	enum engine_status rc;

	if (m->has_cas && m->cas == 0 && !c->s->cas_disabled) {
		/* C0 never matches a live item (cas uniques are never 0); the
		 * engine reads cas 0 as "no compare" */
		struct engine_item it;

		rc = engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, NULL, 0, &it);
		rc = rc == ENGINE_MISS ? ENGINE_MISS : ENGINE_EXISTS;
		if (rc == ENGINE_EXISTS)
			engine_count(c->w, ENGINE_C_delete_misses);
	} else {
		/* I (mark stale) has no engine support: the item is deleted,
		 * so clients refetch instead of serving it stale */
		rc = engine_delete(c->w, req->key, req->klen, m->has_cas ? m->cas : 0);
	}
	if (rc == ENGINE_OK && m->quiet)
		return;
	status_reply(c, req, rc, CMD_ST(ENGINE_MISS) | CMD_ST(ENGINE_EXISTS));
}

/* ---- ma ------------------------------------------------------------------ */

/* incr/decr only if the cas unique matches: the engine's arith has no
 * compare, so read, compute and store with cas (atomic through the cas). */
static enum engine_status
arith_cas(struct cmd_conn *c, const struct proto_req *req, bool incr,
	  uint64_t *value, uint64_t *cas_out)
{
	const struct proto_meta *m = &req->meta;
	struct engine_item it;
	char num[24];
	char *scratch;
	uint64_t v;
	size_t n;
	enum engine_status rc;

	rc = engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, NULL, 0, &it);
	if (rc == ENGINE_MISS)
		return ENGINE_MISS;
	if (it.cas != m->cas)
		return ENGINE_EXISTS;
	/* read the value into free output space (not committed) */
	scratch = proto_out_reserve(c->out, (size_t)it.vlen + 1);
	if (!scratch)
		return ENGINE_NO_MEMORY;
	rc = engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, scratch, it.vlen, &it);
	if (rc == ENGINE_MISS)
		return ENGINE_MISS;
	if (rc != ENGINE_OK || it.cas != m->cas)
		return ENGINE_EXISTS;
	if (!engine_parse_u64(scratch, it.vlen, &v))
		return ENGINE_NON_NUMERIC;
	if (incr)
		v += m->delta;
	else
		v = v > m->delta ? v - m->delta : 0;
	n = engine_format_u64(v, num);
	rc = engine_store(c->w, ENGINE_CAS, req->key, req->klen, num, n, it.flags, it.expires_at,
			  m->cas, cas_out);
	if (rc == ENGINE_OK)
		*value = v;
	return rc;
}

void
cmd_exec_ma(struct cmd_conn *c, const struct proto_req *req)
{
	const struct proto_meta *m = &req->meta;
	bool incr = m->mode != 'D' && m->mode != '-';
	uint64_t value = 0, cas = 0;
	bool created = false;
	char line[CMD_HDR_MAX + 24], num[24];
	size_t n, nlen;
	enum engine_status rc;

	/* memcached's arithmetic reads C0 as "no compare" */
	if (m->has_cas && m->cas != 0)
		rc = arith_cas(c, req, incr, &value, &cas);
	else
		rc = engine_arith(c->w, req->key, req->klen, incr, m->delta, &value, &cas);
	if (rc == ENGINE_MISS && m->has_vivify) {
		/* N: create the counter with J (0 by default) */
		nlen = engine_format_u64(m->initial, num);
		rc = engine_store(c->w, ENGINE_ADD, req->key, req->klen, num, nlen, 0,
				  m->vivify_ttl, 0, &cas);
		if (rc == ENGINE_OK) {
			value = m->initial;
			created = true;
		} else if (rc == ENGINE_NOT_STORED) {
			status_line(c, req, "NS");
			return;
		} else {
			cmd_reply(c, false, "SERVER_ERROR Out of memory allocating new item");
			return;
		}
	}
	if (rc == ENGINE_NO_MEMORY) {
		/* as incr and decr say it */
		cmd_reply(c, false, CMD_E_NO_MEMORY);
		return;
	}
	if (rc != ENGINE_OK) {
		status_reply(c, req, rc,
			     CMD_ST(ENGINE_MISS) | CMD_ST(ENGINE_EXISTS) | CMD_ST(ENGINE_NON_NUMERIC));
		return;
	}

	{
		bool touched = false, need_meta = proto_meta_has(m, 't');
		struct engine_item it = { .cas = cas };
		int64_t now = 0;

		if (m->has_ttl && engine_touch(c->w, req->key, req->klen, m->ttl) == ENGINE_OK)
			touched = true;
		/* a touch rewrites the item (new cas); t needs the expiry */
		if ((touched && proto_meta_has(m, 'c')) || need_meta) {
			if (engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, NULL, 0, &it) ==
			    ENGINE_MISS)
				it.cas = cas;
			now = cmd_now(c);
		}
		/* memcached's q hides the reply of an update, not of a creation */
		if (m->quiet && !created)
			return;
		nlen = proto_u64_to_dec(value, num);
		if (m->value) {
			memcpy(line, "VA ", 3);
			n = 3 + proto_u64_to_dec(nlen, line + 3);
		} else {
			memcpy(line, "HD", 2);
			n = 2;
		}
		for (unsigned i = 0; i < m->norder; i++) {
			switch (m->order[i]) {
			case 'c':
				n += put_num(line + n, 'c', it.cas);
				break;
			case 't':
				n += put_ttl(line + n, &it, now);
				break;
			case 'O':
				n += put_opaque(line + n, m);
				break;
			case 'k':
				n += put_key(line + n, req);
				break;
			default:
				break;
			}
		}
		memcpy(line + n, "\r\n", 2);
		n += 2;
		if (m->value) {
			memcpy(line + n, num, nlen);
			memcpy(line + n + nlen, "\r\n", 2);
			n += nlen + 2;
		}
		cmd_put(c, line, n);
	}
}

/* ---- me ------------------------------------------------------------------ */

void
cmd_exec_me(struct cmd_conn *c, const struct proto_req *req)
{
	char line[CMD_HDR_MAX + 128];
	struct engine_item it;
	size_t n;
	int64_t ttl;

	__atomic_add_fetch(&c->rt->cmd_meta, 1, __ATOMIC_RELAXED);
	if (engine_get(c->w, req->key, req->klen, ENGINE_NO_TOUCH, NULL, 0, &it) == ENGINE_MISS) {
		cmd_put(c, "EN\r\n", 4);
		return;
	}
	memcpy(line, "ME ", 3);
	n = 3;
	if (req->meta.base64) {
		n += proto_base64_encode(req->key, req->klen, line + n, CMD_HDR_MAX);
	} else {
		memcpy(line + n, req->key, req->klen);
		n += req->klen;
	}
	/* memcached also prints la= (last access) and cls= (slab class):
	 * the engine has neither */
	ttl = -1;
	if (it.expires_at != 0) {
		int64_t now = cmd_now(c);

		ttl = it.expires_at > now ? it.expires_at - now : 0;
	}
	memcpy(line + n, " exp=", 5);
	n += 5;
	n += proto_i64_to_dec(ttl, line + n);
	memcpy(line + n, " cas=", 5);
	n += 5;
	n += proto_u64_to_dec(it.cas, line + n);
	memcpy(line + n, it.fetched_before ? " fetch=yes" : " fetch=no",
	       it.fetched_before ? 10 : 9);
	n += it.fetched_before ? 10 : 9;
	memcpy(line + n, " size=", 6);
	n += 6;
	n += proto_u64_to_dec((uint64_t)req->klen + it.vlen, line + n);
	memcpy(line + n, "\r\n", 2);
	cmd_put(c, line, n + 2);
}

/* ---- mn ------------------------------------------------------------------ */

void
cmd_exec_mn(struct cmd_conn *c, const struct proto_req *req)
{
	(void)req;
	cmd_put(c, "MN\r\n", 4);
}
