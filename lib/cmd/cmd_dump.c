/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * memcached's key dumps, written in chunks: `lru_crawler metadump
 * all|hash|<classes>` (one "key=... exp=... la=... cas=... fetch=...
 * cls=... size=..." line per item, URL-encoded keys, as memcached-tool
 * reads them) and `stats cachedump <class> <limit>` ("ITEM <key> [<bytes>
 * b; <expiry> s]"; a key with a blank or control character base64-encoded
 * with " b" after it). The engine offers the live items from a cursor
 * (engine_dump, no lock held across items); a chunk ends when the output
 * reaches its backpressure mark, and cmd_process() presents the request
 * line again for the next chunk (cmd_private.h). The class is the
 * engine's (lib/seg: the TTL range, docs/protocol.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd_private.h"
#include "engine/engine_dump.h"

/* A chunk's size where the output has no backpressure mark (tests). */
#define DUMP_CHUNK (64u << 10)
/* The longest line: a key of 250 bytes, each URL-encoded as %XX, and
 * seven numbers. */
#define DUMP_LINE_MAX (3 * ENGINE_KEY_MAX + 192)
/* memcached's MAX_NUMBER_OF_SLAB_CLASSES: class ids are 1..63 */
#define DUMP_CLASSES 64

struct cmd_dump {
	bool cachedump;
	uint64_t classes; /* bit n: class n is dumped */
	uint32_t limit;   /* cachedump: most lines, 0 = all */
	uint32_t sent;
	struct engine_dump_cursor cur;
};

struct dump_ctx {
	struct cmd_conn *c;
	struct cmd_dump *d;
	size_t mark;
	bool failed;
};

void
cmd_dump_free(struct cmd_conn *c)
{
	free(c->dump);
	c->dump = NULL;
}

/* memcached's uriencode: unreserved characters as they are, the rest %XX. */
static size_t
url_encode(char *out, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t ch = p[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
		    ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	return o;
}

/* A key a text command could have sent: no blank, control character or
 * DEL (bytes from 0x80 up are UTF-8 text and end no line). */
static bool
key_is_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] <= ' ' || p[i] == 0x7f)
			return false;
	return true;
}

static size_t
format_line(const struct cmd_dump *d, char *buf, const struct engine_dump_item *it)
{
	size_t n;

	if (d->cachedump) {
		/* memcached prints the key as it is; a binary key (ms with b)
		 * holding "\r\nEND\r\n" would end the dump early and inject
		 * lines. Such a key is sent base64 with " b" after it, as the
		 * meta commands write one. */
		memcpy(buf, "ITEM ", 5);
		n = 5;
		if (key_is_text(it->key, it->klen)) {
			memcpy(buf + n, it->key, it->klen);
			n += it->klen;
		} else {
			n += proto_base64_encode((const char *)it->key, it->klen, buf + n,
						 DUMP_LINE_MAX - n);
			memcpy(buf + n, " b", 2);
			n += 2;
		}
		n += (size_t)snprintf(buf + n, DUMP_LINE_MAX - n, " [%" PRIu32 " b; %" PRId64
				      " s]\r\n", it->vlen, it->expires_at);
		return n;
	}
	memcpy(buf, "key=", 4);
	n = 4 + url_encode(buf + 4, it->key, it->klen);
	n += (size_t)snprintf(buf + n, DUMP_LINE_MAX - n,
			      " exp=%" PRId64 " la=%" PRId64 " cas=%" PRIu64
			      " fetch=%s cls=%u size=%" PRIu32 "\n",
			      it->expires_at ? it->expires_at : -1, it->written_at, it->cas,
			      it->fetched ? "yes" : "no", it->cls, it->size);
	return n;
}

static bool
take_item(void *arg, const struct engine_dump_item *it)
{
	struct dump_ctx *x = arg;
	struct cmd_dump *d = x->d;
	char *p;

	if (it->cls >= DUMP_CLASSES || !(d->classes & (1ull << it->cls)))
		return true;
	if (d->limit != 0 && d->sent >= d->limit)
		return false;
	if (proto_out_pending(x->c->out) >= x->mark)
		return false;
	p = proto_out_reserve(x->c->out, DUMP_LINE_MAX);
	if (p == NULL) {
		x->failed = true;
		return false;
	}
	proto_out_commit(x->c->out, format_line(d, p, it));
	d->sent++;
	return true;
}

/* Writes the next chunk of c->dump; at its end, END and no dump. */
static void
dump_chunk(struct cmd_conn *c)
{
	struct dump_ctx x = { c, c->dump, c->out->backpressure, false };

	if (x.mark == 0)
		x.mark = proto_out_pending(c->out) + DUMP_CHUNK;
	engine_dump(c->s->engine, &x.d->cur, take_item, &x);
	if (x.failed) {
		cmd_dump_free(c);
		cmd_fail(c);
		return;
	}
	if (x.d->cur.done || (x.d->limit != 0 && x.d->sent >= x.d->limit)) {
		cmd_dump_free(c);
		cmd_reply(c, false, "END");
	}
}

/* Starts a dump unless one is under way (this is its line again). */
static bool
dump_begin(struct cmd_conn *c, bool cachedump, uint64_t classes, uint32_t limit)
{
	if (c->dump)
		return true;
	if (c->udp) {
		cmd_reply(c, false, "SERVER_ERROR key dumps are served over TCP only");
		return false;
	}
	c->dump = calloc(1, sizeof(*c->dump));
	if (c->dump == NULL) {
		cmd_reply(c, false, "SERVER_ERROR out of memory");
		return false;
	}
	c->dump->cachedump = cachedump;
	c->dump->classes = classes;
	c->dump->limit = limit;
	return true;
}

/* "all", "hash" (memcached walks its hash table; we walk the segments
 * either way) or ids 1..63 separated by commas; 0 when malformed. */
static uint64_t
parse_classes(const char *p, size_t n)
{
	uint64_t mask = 0;
	size_t i = 0;

	if ((n == 3 && memcmp(p, "all", 3) == 0) || (n == 4 && memcmp(p, "hash", 4) == 0))
		return ~1ull;
	while (i < n) {
		uint32_t id = 0;
		size_t start = i;

		while (i < n && p[i] >= '0' && p[i] <= '9' && i - start < 3)
			id = id * 10 + (uint32_t)(p[i++] - '0');
		if (i == start || id == 0 || id >= DUMP_CLASSES || (i < n && p[i] != ','))
			return 0;
		mask |= 1ull << id;
		if (i < n && ++i == n)
			return 0; /* a trailing comma */
	}
	return mask;
}

void
cmd_dump_metadump(struct cmd_conn *c, const struct proto_req *req)
{
	uint64_t classes = ~1ull;

	if (!c->dump) {
		if (c->s->dump_disabled || !engine_can_dump(c->s->engine)) {
			/* -X; or lib/baseline: rte_hash has no iterator that
			 * is safe beside writers (docs/protocol.md) */
			cmd_reply(c, false, "ERROR metadump not allowed");
			return;
		}
		classes = parse_classes(req->arg, req->arg_len);
		if (classes == 0) {
			cmd_reply(c, false, "CLIENT_ERROR bad class id");
			return;
		}
	}
	if (dump_begin(c, false, classes, 0))
		dump_chunk(c);
}

void
cmd_dump_cachedump(struct cmd_conn *c, const struct proto_req *req)
{
	if (!c->dump && (c->s->dump_disabled || !engine_can_dump(c->s->engine))) {
		/* memcached's line when dumping is disabled (-X) */
		cmd_reply(c, false, "CLIENT_ERROR stats cachedump not allowed");
		return;
	}
	if (dump_begin(c, true, 1ull << req->num[0], req->num[1]))
		dump_chunk(c);
}
