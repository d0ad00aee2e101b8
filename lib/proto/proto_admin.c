/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The syntaxes of memcached's administration commands, as memcached 1.6
 * checks them: cache_memlimit, slabs, lru_crawler and stats with its
 * arguments (cachedump). lib/cmd answers them (cmd_admin.c, cmd_stats.c).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_private.h"

/* cache_memlimit <megabytes> [noreply]; memcached answers a bare ERROR to a
 * malformed one, we answer CLIENT_ERROR (docs/protocol.md). */
enum proto_status
proto_parse_cache_memlimit(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
			   struct proto_req *req)
{
	bool noreply = last_is_noreply(t, ntokens);
	uint32_t mb;

	if ((ntokens != 3 && ntokens != 4) || !proto_strtoul32(t[1].p, t[1].len, &mb))
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	req_clear(req, cmd);
	req->noreply = noreply;
	req->num[0] = mb;
	return PROTO_REQ;
}

/* memcached's safe_strtod: a number that ends at the token's end. */
static bool
tok_double(const struct proto_tok *t, double *out)
{
	char buf[64], *end;

	if (t->len == 0 || t->len >= sizeof(buf))
		return false;
	memcpy(buf, t->p, t->len);
	buf[t->len] = '\0';
	*out = strtod(buf, &end);
	return end == buf + t->len;
}

/* slabs reassign <src> <dst> | slabs automove <0|1|2> | slabs automove ratio <r> */
enum proto_status
proto_parse_slabs(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
		  struct proto_req *req)
{
	enum proto_sub sub = PROTO_SUB_NONE;
	bool noreply = false;
	uint32_t a = 0, b = 0;

	if (ntokens == 5 && TOK_IS(&t[1], "reassign")) {
		int32_t src, dst;

		if (proto_strtol32(t[2].p, t[2].len, &src) &&
		    proto_strtol32(t[3].p, t[3].len, &dst)) {
			sub = PROTO_SUB_SLABS_REASSIGN;
			a = (uint32_t)src;
			b = (uint32_t)dst;
		}
	} else if (ntokens >= 4 && TOK_IS(&t[1], "automove")) {
		double ratio;

		noreply = last_is_noreply(t, ntokens);
		if (ntokens == 5 && TOK_IS(&t[2], "ratio")) {
			if (tok_double(&t[3], &ratio) && ratio >= 0)
				sub = PROTO_SUB_SLABS_AUTOMOVE_RATIO;
		} else if (proto_strtoul32(t[2].p, t[2].len, &a) && a <= 2) {
			sub = PROTO_SUB_SLABS_AUTOMOVE;
		}
	}
	if (sub == PROTO_SUB_NONE)
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	req_clear(req, cmd);
	req->noreply = noreply;
	req->sub = sub;
	req->num[0] = a;
	req->num[1] = b;
	return PROTO_REQ;
}

/* lru_crawler crawl|metadump <classes> | tocrawl <n> | sleep <us> | enable | disable */
enum proto_status
proto_parse_lru_crawler(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
			struct proto_req *req)
{
	enum proto_sub sub = PROTO_SUB_NONE;
	uint32_t n = 0;

	if (ntokens == 4) {
		if (TOK_IS(&t[1], "crawl"))
			sub = PROTO_SUB_LRU_CRAWL;
		else if (TOK_IS(&t[1], "metadump"))
			sub = PROTO_SUB_LRU_METADUMP;
		else if (TOK_IS(&t[1], "tocrawl") && proto_strtoul32(t[2].p, t[2].len, &n))
			sub = PROTO_SUB_LRU_TOCRAWL;
		else if (TOK_IS(&t[1], "sleep") && proto_strtoul32(t[2].p, t[2].len, &n))
			sub = PROTO_SUB_LRU_SLEEP;
	} else if (ntokens == 3) {
		if (TOK_IS(&t[1], "enable"))
			sub = PROTO_SUB_LRU_ENABLE;
		else if (TOK_IS(&t[1], "disable"))
			sub = PROTO_SUB_LRU_DISABLE;
	}
	if (sub == PROTO_SUB_NONE)
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, false);
	req_clear(req, cmd);
	req->sub = sub;
	req->num[0] = n;
	if (sub == PROTO_SUB_LRU_METADUMP) {
		/* the class list ("all", "hash", "1,2,3"): lib/cmd reads it */
		req->arg = t[2].p;
		req->arg_len = t[2].len;
	}
	return PROTO_REQ;
}

/* stats cachedump <class> <limit>: memcached's checks, in its order. */
static enum proto_status
parse_stats_cachedump(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
		      struct proto_req *req)
{
	uint32_t id, limit;

	if (ntokens < 5)
		return req_error(req, cmd, "CLIENT_ERROR bad command line", false);
	if (!proto_strtoul32(t[2].p, t[2].len, &id) || !proto_strtoul32(t[3].p, t[3].len, &limit))
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, false);
	/* memcached's MAX_NUMBER_OF_SLAB_CLASSES */
	if (id >= 64)
		return req_error(req, cmd, "CLIENT_ERROR Illegal slab id", false);
	req_clear(req, cmd);
	req->arg = t[1].p;
	req->arg_len = t[1].len;
	req->sub = PROTO_SUB_STATS_CACHEDUMP;
	req->num[0] = id;
	req->num[1] = limit;
	return PROTO_REQ;
}

/* stats [arg ...] */
enum proto_status
proto_parse_stats(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
		  struct proto_req *req)
{
	if (ntokens >= 3 && TOK_IS(&t[1], "cachedump"))
		return parse_stats_cachedump(cmd, t, ntokens, req);
	req_clear(req, cmd);
	if (ntokens >= 3) {
		req->arg = t[1].p;
		req->arg_len = t[1].len;
	}
	return PROTO_REQ;
}
