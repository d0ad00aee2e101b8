/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The response buffer: one contiguous, growable byte buffer per connection
 * (or per UDP request). Responses are composed straight into its free space;
 * an engine copies a value once, from the heap into data[len..], and the
 * header that precedes it is placed afterwards (proto_out_place_header).
 * The server sends data[head..len) and reports what went out with
 * proto_out_consume(); space is reclaimed lazily.
 */
#ifndef SEGCACHED_PROTO_OUT_H
#define SEGCACHED_PROTO_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct proto_out {
	char *data;
	size_t head;         /* first byte not yet sent */
	size_t len;          /* end of the composed bytes */
	size_t cap;          /* allocated bytes */
	size_t limit;        /* cap never grows beyond this */
	/* cmd_process starts no new request while len - head is at or above
	 * this (0: no bound). Keep limit >= backpressure + the largest single
	 * reply (an item of the largest size plus its header). */
	size_t backpressure;
	bool fixed;          /* data is the caller's memory: never reallocated */
	/* data is a window lent by the transport (proto_out_lend); the
	 * output's own memory waits in own/own_cap meanwhile */
	bool lent;
	char *own;
	size_t own_cap;
	/* Bytes a window held when a reply outgrew it: they stay where they
	 * are, the first kept_len pending bytes, ahead of data[head..len). */
	const char *kept;
	size_t kept_len;
};

/* Allocates cap bytes (0: a small default); grows up to limit. Returns 0
 * or -1 (no memory). */
int proto_out_init(struct proto_out *o, size_t cap, size_t limit);
/* Uses the caller's buffer; never grows. */
void proto_out_init_fixed(struct proto_out *o, void *buf, size_t cap);
void proto_out_fini(struct proto_out *o);

/* Makes at least n bytes free after len and returns where they start, or
 * NULL when that would exceed the limit (or memory ran out). data may move
 * (offsets stay valid, pointers do not). */
char *proto_out_reserve(struct proto_out *o, size_t n);

static inline char *proto_out_tail(const struct proto_out *o) { return o->data + o->len; }
static inline size_t proto_out_room(const struct proto_out *o) { return o->cap - o->len; }
static inline size_t
proto_out_pending(const struct proto_out *o)
{
	return o->kept_len + o->len - o->head;
}
static inline void proto_out_commit(struct proto_out *o, size_t n) { o->len += n; }

/* An output's memory, while it holds no unsent bytes, can serve another
 * output: a server that hands replies to TCP as soon as they are composed
 * needs a buffer per connection only while one holds bytes TCP did not
 * take, and composes every other reply in one buffer that stays in cache
 * (drivers/net/native). proto_out_move gives from's memory to `to`, which
 * holds none; both must be empty. proto_out_release frees o's memory; o
 * stays usable and allocates again on its next reserve. */
void proto_out_move(struct proto_out *to, struct proto_out *from);
void proto_out_release(struct proto_out *o);
static inline bool proto_out_holds_memory(const struct proto_out *o) { return o->data != NULL; }

/* Composing where the transport sends from (drivers/net/native: the free
 * space at the end of TCP's send ring), so that a value is copied once,
 * from the heap into the bytes the NIC sends. o must hold no pending
 * bytes. While lent, the transport takes composed bytes from data + head
 * and reports them with proto_out_consume(), which moves the window on
 * past them. A reserve the window cannot hold ends the loan: the window's
 * pending bytes stay where they are (kept, sent first) and composing goes
 * on in o's own memory, allocated if needed; nothing is copied twice. */
void proto_out_lend(struct proto_out *o, void *win, size_t room);
static inline bool proto_out_is_lent(const struct proto_out *o) { return o->lent; }
/* The bytes to send first: the kept window bytes, else data + head. */
static inline const char *
proto_out_front(const struct proto_out *o, size_t *n)
{
	if (o->kept_len > 0) {
		*n = o->kept_len;
		return o->kept;
	}
	*n = o->len - o->head;
	return o->data + o->head;
}
/* Ends a loan for good: window bytes the transport did not take move into
 * o's own memory, ahead of the rest. False only when they could not (no
 * memory): o then holds none of them. */
bool proto_out_end_loan(struct proto_out *o);

/* Appends bytes; false when over the limit (nothing is appended then). */
bool proto_out_append(struct proto_out *o, const void *p, size_t n);
/* Appends s and "\r\n". */
bool proto_out_line(struct proto_out *o, const char *s);
/* Appends "STAT <name> <value>\r\n". */
bool proto_out_stat(struct proto_out *o, const char *name, const char *value);
bool proto_out_stat_u64(struct proto_out *o, const char *name, uint64_t v);

/* The server sent n bytes from data + head. */
void proto_out_consume(struct proto_out *o, size_t n);
/* A position in the composed bytes that survives compaction, and a way
 * back to it (drops everything composed after the mark). */
static inline size_t proto_out_mark(const struct proto_out *o) { return proto_out_pending(o); }
static inline void
proto_out_truncate(struct proto_out *o, size_t mark)
{
	if (mark < o->kept_len) {
		o->kept_len = mark;
		o->len = o->head;
	} else if (o->head + (mark - o->kept_len) < o->len) {
		o->len = o->head + (mark - o->kept_len);
	}
}

/* Puts a header of hlen bytes in front of a body of blen bytes that was
 * written gap bytes after len (data[len + gap ..]); on return the header and
 * body are contiguous at the old len and len has moved past both. The body
 * moves only when hlen != gap. Needs hlen + blen bytes of room; callers
 * reserve max(gap, hlen) + blen beforehand. */
void proto_out_place_header(struct proto_out *o, size_t gap, const void *hdr, size_t hlen,
			    size_t blen);

/* Decimal digits of v written at p (no terminator); returns the count. */
size_t proto_u64_to_dec(uint64_t v, char *p);
/* The same for v < 100, in line: a get reply's flags (mostly 0) and a
 * short value's length, written without proto_u64_to_dec()'s loops or
 * its call. */
static inline size_t
proto_u64_to_dec_under_100(uint64_t v, char *p)
{
	if (v < 10) {
		p[0] = (char)('0' + v);
		return 1;
	}
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
	return 2;
}
size_t proto_i64_to_dec(int64_t v, char *p);
/* Number of decimal digits of v. */
size_t proto_dec_len(uint64_t v);

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_PROTO_OUT_H */
