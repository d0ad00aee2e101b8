/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * The request parser: command lines (the word looked up in the grammar
 * that lib/cmd's command table gives, then parsed by its syntax), storage
 * data blocks, get lines one key at a time, and the states that carry over
 * between calls (a data block still arriving, a refused block being
 * swallowed, a long get line being streamed). Replies to malformed input
 * are memcached 1.6's, byte for byte, including which error wins when
 * several apply and which bytes are skipped afterwards. Meta command flags
 * are in proto_meta.c, the administration commands' syntaxes in
 * proto_admin.c.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_private.h"

/* ---- the grammar ------------------------------------------------------------ */

/* The parser's lookup, inlined into parse_line(): the words are short and
 * share the first letter, so a byte loop beats a call to memcmp(). */
static inline const struct proto_word *
grammar_find(const struct proto_grammar *g, const char *name, size_t len)
{
	unsigned letter;

	if (len == 0)
		return NULL;
	letter = (unsigned)(unsigned char)name[0] - 'a';
	if (letter >= 26)
		return NULL;
	for (const struct proto_word *const *w = g->first[letter]; *w; w++) {
		size_t i = 1;

		if ((*w)->len != len)
			continue;
		while (i < len && (*w)->name[i] == name[i])
			i++;
		if (i == len)
			return *w;
	}
	return NULL;
}

const struct proto_word *
proto_grammar_find(const struct proto_grammar *g, const char *name, size_t len)
{
	return grammar_find(g, name, len);
}

bool
proto_grammar_add(struct proto_grammar *g, const struct proto_word *w)
{
	unsigned letter, n = 0;

	if (!w->name || w->len < 2 || strlen(w->name) != w->len ||
	    w->syntax == PROTO_SYN_NONE)
		return false;
	for (size_t i = 0; i < w->len; i++)
		if ((w->name[i] < 'a' || w->name[i] > 'z') && w->name[i] != '_')
			return false;
	letter = (unsigned)(w->name[0] - 'a');
	if (letter >= 26 || grammar_find(g, w->name, w->len))
		return false;
	while (g->first[letter][n])
		n++;
	if (n == PROTO_GRAMMAR_LETTER_MAX)
		return false;
	g->first[letter][n] = w;
	return true;
}

/* ---- the parser's state ------------------------------------------------------ */

__attribute__((hot)) void
proto_parser_init(struct proto_parser *p, const struct proto_grammar *g, size_t value_max)
{
	memset(p, 0, sizeof(*p));
	p->grammar = g;
	p->value_max = value_max;
}

__attribute__((hot)) void
proto_parser_reset(struct proto_parser *p)
{
	const size_t stream_min = p->stream_min;

	proto_parser_init(p, p->grammar, p->value_max);
	p->stream_min = stream_min;
}

void
proto_parser_stream(struct proto_parser *p, size_t min)
{
	p->stream_min = min;
}

void
proto_parser_stream_swallow(struct proto_parser *p)
{
	if (p->state != PROTO_PS_STREAM)
		return;
	p->state = PROTO_PS_SWALLOW;
	p->swallow = p->stream_left + 2;
}

/* A streamed block: the value bytes at hand, then, once both are there,
 * its "\r\n" (memcached reads exactly vlen + 2 bytes: the next command
 * starts after them, whatever they were). */
static enum proto_status
stream_piece(struct proto_parser *p, const char *buf, size_t len, struct proto_req *req,
	     size_t *consumed)
{
	size_t take = len < p->stream_left ? len : (size_t)p->stream_left;

	req_clear(req, PROTO_CMD_NONE);
	req->value = buf;
	req->vlen = take;
	p->stream_left -= take;
	*consumed = take;
	if (p->stream_left == 0 && len - take >= 2) {
		if (buf[take] != '\r' || buf[take + 1] != '\n') {
			req->error = p->stream_bad;
			req->noreply = p->stream_bad_noreply;
		}
		req->stream = PROTO_STREAM_END;
		*consumed = take + 2;
		p->state = PROTO_PS_LINE;
	} else if (take == 0) {
		return PROTO_NEED_MORE; /* half the "\r\n": wait for the other */
	}
	return PROTO_PIECE;
}

void
proto_parser_abort_line(struct proto_parser *p)
{
	if (p->state == PROTO_PS_MULTIGET)
		p->state = PROTO_PS_SWALLOW_LINE;
}

/* ---- a token's end ----------------------------------------------------------- */

/* The bytes of an 8-byte word x that equal the byte b: their top bits
 * set, and possibly bits above the lowest such byte (a borrow), never
 * below it, so only the lowest set bit may be used. */
static inline uint64_t
word_bytes_eq(uint64_t x, uint8_t b)
{
	uint64_t y = x ^ (0x0101010101010101ull * b);

	return (y - 0x0101010101010101ull) & ~y & 0x8080808080808080ull;
}

/* The first j >= i below len where buf[j] is ' ', or also '\n' or NUL
 * when line_ends: eight bytes a step while eight are left, then one by
 * one (a key takes ~12 steps of the byte loop otherwise, three scans a get:
 * the tokenizer's, parse_get's check, mget_next's). */
static inline size_t
find_key_end(const char *buf, size_t i, size_t len, bool line_ends)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; len - i >= 8; i += 8) {
		uint64_t x, m;

		memcpy(&x, buf + i, 8);
		m = word_bytes_eq(x, ' ');
		if (line_ends)
			m |= word_bytes_eq(x, '\n') | word_bytes_eq(x, '\0');
		if (m)
			return i + (size_t)__builtin_ctzll(m) / 8;
	}
#endif
	for (; i < len; i++)
		if (buf[i] == ' ' || (line_ends && (buf[i] == '\n' || buf[i] == '\0')))
			break;
	return i;
}

/* ---- the tokenizer -------------------------------------------------------- */

/* memcached's tokenizer: split on ' ' only, empty tokens skipped, at most
 * PROTO_TOKENS_MAX - 1 tokens (the rest of the line stays unsplit, which
 * only matters for counting). Returns memcached's "ntokens": the tokens
 * plus the terminal one. */
__attribute__((hot)) size_t
proto_tokenize(const char *s, size_t len, struct proto_tok *t)
{
	size_t n = 0, i = 0;

	while (i < len && n < PROTO_TOKENS_MAX - 1) {
		size_t start;

		while (i < len && s[i] == ' ')
			i++;
		if (i == len)
			break;
		start = i;
		i = find_key_end(s, i, len, false);
		t[n].p = s + start;
		t[n].len = i - start;
		n++;
	}
	return n + 1;
}

/* ---- get, gets, gat, gats ------------------------------------------------ */

static void
mget_begin(struct proto_parser *p, enum proto_cmd cmd, bool touch, int64_t exptime)
{
	p->state = PROTO_PS_MULTIGET;
	p->mget_cmd = cmd;
	p->mget_touch = touch;
	p->mget_exptime = exptime;
	p->mget_any = false;
	p->mget_end_pending = false;
}

static enum proto_status
mget_end(struct proto_parser *p, struct proto_req *req)
{
	enum proto_cmd cmd = p->mget_cmd;

	p->state = PROTO_PS_LINE;
	/* a get line without keys is too short for memcached; gat has its
	 * exptime token and answers END */
	if (!p->mget_any && !p->mget_touch)
		return req_error(req, PROTO_CMD_ERROR, "ERROR", false);
	req_clear(req, cmd);
	req->exptime = p->mget_exptime;
	req->get_last = true;
	return PROTO_REQ;
}

/* The next key of a get line, starting at buf[0]. A line that arrived
 * whole was checked before the first key; a streamed line (longer than
 * PROTO_LINE_MAX, still arriving) is checked key by key. */
static __attribute__((hot)) enum proto_status
mget_next(struct proto_parser *p, const char *buf, size_t len,
	  struct proto_req *req, size_t *consumed)
{
	size_t i = 0, j, klen;
	char term;

	*consumed = 0;
	if (!p->mget_end_pending) {
		while (i < len && buf[i] == ' ')
			i++;
		if (i == len) {
			*consumed = i;
			return PROTO_NEED_MORE;
		}
		if (buf[i] == '\0')
			p->mget_end_pending = true;
	}
	if (p->mget_end_pending) {
		/* memcached's line ends at a NUL byte: skip to the newline */
		const char *nl = memchr(buf + i, '\n', len - i);

		if (!nl) {
			*consumed = len;
			return PROTO_NEED_MORE;
		}
		*consumed = (size_t)(nl - buf) + 1;
		return mget_end(p, req);
	}
	j = find_key_end(buf, i, len, true);
	if (j == len) {
		/* an unfinished token of a streamed line; one byte more than
		 * a key may be the '\r' of the line end */
		if (j - i > PROTO_KEY_MAX + 1)
			goto too_long;
		*consumed = i;
		return PROTO_NEED_MORE;
	}
	term = buf[j];
	klen = j - i;
	if (term == '\n' && klen > 0 && buf[j - 1] == '\r')
		klen--;
	if (klen == 0) {
		/* only "\r\n" was left */
		*consumed = j + 1;
		return mget_end(p, req);
	}
	if (klen > PROTO_KEY_MAX) {
		if (term == '\n') {
			*consumed = j + 1;
			p->state = PROTO_PS_LINE;
			return req_error(req, p->mget_cmd, PROTO_E_BAD_FORMAT, false);
		}
		goto too_long;
	}
	req_clear(req, p->mget_cmd);
	req->key = buf + i;
	req->klen = klen;
	req->exptime = p->mget_exptime;
	p->mget_any = true;
	if (term == '\n') {
		req->get_last = true;
		p->state = PROTO_PS_LINE;
		*consumed = j + 1;
	} else if (term == '\0') {
		p->mget_end_pending = true;
		*consumed = j;
	} else {
		/* look past the blanks: when only the line end follows, this
		 * key is the last one and the line is consumed with it */
		size_t k = j + 1;

		while (k < len && buf[k] == ' ')
			k++;
		if (k < len && buf[k] == '\n') {
			req->get_last = true;
			p->state = PROTO_PS_LINE;
			*consumed = k + 1;
		} else if (k + 1 < len && buf[k] == '\r' && buf[k + 1] == '\n') {
			req->get_last = true;
			p->state = PROTO_PS_LINE;
			*consumed = k + 2;
		} else {
			*consumed = j + 1;
		}
	}
	return PROTO_REQ;

too_long:
	/* memcached rejects the whole line; what was already sent for a
	 * streamed line stays sent. The bytes seen so far go with the error,
	 * the rest of the line is swallowed as it comes. */
	*consumed = j;
	p->state = PROTO_PS_SWALLOW_LINE;
	return req_error(req, p->mget_cmd, PROTO_E_BAD_FORMAT, false);
}

/* A whole get line: memcached checks every key before answering any. */
static enum proto_status
parse_get(struct proto_parser *p, enum proto_cmd cmd, bool touch, const char *buf,
	  size_t clen, size_t line_len, const struct proto_tok *t,
	  struct proto_req *req, size_t *consumed)
{
	int64_t exptime = 0;
	size_t pos;

	*consumed = line_len;
	if (touch) {
		int32_t v;

		if (!proto_strtol32(t[1].p, t[1].len, &v))
			return req_error(req, cmd, "CLIENT_ERROR invalid exptime argument", false);
		exptime = v;
		pos = (size_t)(t[1].p + t[1].len - buf);
	} else {
		pos = (size_t)(t[0].p + t[0].len - buf);
	}
	for (size_t i = pos; i < clen;) {
		size_t start;

		while (i < clen && buf[i] == ' ')
			i++;
		start = i;
		i = find_key_end(buf, i, clen, false);
		if (i - start > PROTO_KEY_MAX)
			return req_error(req, cmd, PROTO_E_BAD_FORMAT, false);
	}
	/* the keys are fine: hand them out one by one from here */
	mget_begin(p, cmd, touch, exptime);
	p->mget_any = true; /* the dispatcher saw enough tokens */
	if (pos == clen) {
		/* gat <exptime> with no key */
		p->state = PROTO_PS_LINE;
		req_clear(req, cmd);
		req->exptime = exptime;
		req->get_last = true;
		return PROTO_REQ;
	}
	{
		size_t n;
		/* mget_next stops at a NUL in the line as memcached does */
		enum proto_status st = mget_next(p, buf + pos, line_len - pos, req, &n);

		*consumed = pos + n;
		return st;
	}
}

/* A get line longer than PROTO_LINE_MAX without its newline yet: memcached
 * buffers it whole (unbounded); we answer key by key instead. Any other
 * line that long closes the connection, as in memcached. */
static __attribute__((cold)) enum proto_status
start_stream(struct proto_parser *p, const char *buf, size_t len,
	     struct proto_req *req, size_t *consumed)
{
	const struct proto_word *w;
	int64_t exptime = 0;
	size_t i = 0, pos, n;
	enum proto_status st;

	*consumed = 0;
	/* memcached tolerates up to 100 leading blanks here */
	while (i < len && buf[i] == ' ' && i < 100)
		i++;
	for (pos = i; pos < len && buf[pos] != ' '; pos++)
		;
	if (pos == len || pos == i)
		return PROTO_CLOSE;
	w = grammar_find(p->grammar, buf + i, pos - i);
	if (!w || (w->syntax != PROTO_SYN_GET && w->syntax != PROTO_SYN_GAT))
		return PROTO_CLOSE;
	pos++; /* the blank after the word */
	if (w->syntax == PROTO_SYN_GAT) {
		size_t s, e;
		int32_t v;

		for (s = pos; s < len && buf[s] == ' '; s++)
			;
		for (e = s; e < len && buf[e] != ' ' && buf[e] != '\0'; e++)
			;
		if (e == len)
			return PROTO_CLOSE;
		if (!proto_strtol32(buf + s, e - s, &v)) {
			p->state = PROTO_PS_SWALLOW_LINE;
			*consumed = e;
			return req_error(req, w->cmd, "CLIENT_ERROR invalid exptime argument", false);
		}
		exptime = v;
		pos = e;
	}
	mget_begin(p, w->cmd, w->syntax == PROTO_SYN_GAT, exptime);
	st = mget_next(p, buf + pos, len - pos, req, &n);
	*consumed = pos + n;
	return st;
}

/* ---- storage ---------------------------------------------------------------- */

static enum proto_status
parse_store(struct proto_parser *p, enum proto_cmd cmd, bool with_cas,
	    const char *buf, size_t len, size_t line_len,
	    const struct proto_tok *t, size_t ntokens,
	    struct proto_req *req, size_t *consumed)
{
	bool noreply = last_is_noreply(t, ntokens);
	const char *bad = PROTO_E_BAD_FORMAT;
	int32_t exptime, vlen;
	uint32_t flags;
	uint64_t cas = 0;

	*consumed = line_len;
	if (t[1].len > PROTO_KEY_MAX)
		return req_error(req, cmd, bad, noreply);
	if (!proto_strtoul32(t[2].p, t[2].len, &flags) ||
	    !proto_strtol32(t[3].p, t[3].len, &exptime) ||
	    !proto_strtol32(t[4].p, t[4].len, &vlen))
		return req_error(req, cmd, bad, noreply);
	if (with_cas && !proto_strtoull(t[5].p, t[5].len, &cas))
		return req_error(req, cmd, bad, noreply);
	if (vlen < 0 || vlen > INT32_MAX - 2)
		return req_error(req, cmd, bad, noreply);
	req_start(req, cmd, &t[1], noreply);
	req->flags = flags;
	req->exptime = exptime;
	req->cas = cas;
	return proto_take_data(p, buf, len, line_len, vlen, req, consumed,
			       "CLIENT_ERROR bad data chunk", noreply);
}

/* ---- the other classic commands -------------------------------------------- */

static __attribute__((noinline)) enum proto_status
parse_delete(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
	     struct proto_req *req)
{
	bool noreply = false;

	if (ntokens > 3) {
		bool hold_is_zero = TOK_IS(&t[2], "0");

		noreply = last_is_noreply(t, ntokens);
		if (!((ntokens == 4 && (hold_is_zero || noreply)) ||
		      (ntokens == 5 && hold_is_zero && noreply)))
			return req_error(req, cmd,
					 PROTO_E_BAD_FORMAT ".  Usage: delete <key> [noreply]",
					 noreply);
	}
	if (t[1].len > PROTO_KEY_MAX)
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	req_start(req, cmd, &t[1], noreply);
	return PROTO_REQ;
}

static __attribute__((noinline)) enum proto_status
parse_arith(enum proto_cmd cmd, const struct proto_tok *t,
	    size_t ntokens, struct proto_req *req)
{
	bool noreply = last_is_noreply(t, ntokens);
	uint64_t delta;

	if (t[1].len > PROTO_KEY_MAX)
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	if (!proto_strtoull(t[2].p, t[2].len, &delta))
		return req_error(req, cmd, "CLIENT_ERROR invalid numeric delta argument", noreply);
	req_start(req, cmd, &t[1], noreply);
	req->delta = delta;
	return PROTO_REQ;
}

static __attribute__((noinline)) enum proto_status
parse_touch(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
	    struct proto_req *req)
{
	bool noreply = last_is_noreply(t, ntokens);
	int32_t exptime;

	if (t[1].len > PROTO_KEY_MAX)
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	if (!proto_strtol32(t[2].p, t[2].len, &exptime))
		return req_error(req, cmd, "CLIENT_ERROR invalid exptime argument", noreply);
	req_start(req, cmd, &t[1], noreply);
	req->exptime = exptime;
	return PROTO_REQ;
}

static __attribute__((cold)) enum proto_status
parse_flush_all(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
		struct proto_req *req)
{
	bool noreply = last_is_noreply(t, ntokens);
	int32_t delay = 0;
	bool has_delay = false;

	if (ntokens != (noreply ? 3u : 2u)) {
		if (!proto_strtol32(t[1].p, t[1].len, &delay))
			return req_error(req, cmd, "CLIENT_ERROR invalid exptime argument",
					 noreply);
		has_delay = true;
	}
	req_clear(req, cmd);
	req->noreply = noreply;
	req->exptime = delay;
	req->has_delay = has_delay;
	return PROTO_REQ;
}

static __attribute__((cold)) enum proto_status
parse_verbosity(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
		struct proto_req *req)
{
	bool noreply = last_is_noreply(t, ntokens);
	uint32_t level;

	if (!proto_strtoul32(t[1].p, t[1].len, &level))
		return req_error(req, cmd, PROTO_E_BAD_FORMAT, noreply);
	req_clear(req, cmd);
	req->noreply = noreply;
	req->level = level;
	return PROTO_REQ;
}

static __attribute__((cold)) enum proto_status
parse_shutdown(enum proto_cmd cmd, const struct proto_tok *t, size_t ntokens,
	       struct proto_req *req)
{
	req_clear(req, cmd);
	if (ntokens == 2)
		return PROTO_REQ;
	if (ntokens == 3 && TOK_IS(&t[1], "graceful")) {
		req->graceful = true;
		return PROTO_REQ;
	}
	req->error = "CLIENT_ERROR invalid shutdown mode";
	return PROTO_REQ;
}

/* memcached closes the connection, without a reply, on a line whose last
 * token starts with "HTTP/" when the command word is none it dispatches:
 * the first line of a browser's request (GET / HTTP/1.1, PUT /x HTTP/1.1,
 * ...). Words that begin like its classic commands (its dispatch goes by
 * first letter), any two-letter word starting with 'm' (its meta command
 * dispatch) and the commands it knows that we do not still get ERROR, as
 * from memcached. */
static __attribute__((cold)) bool
looks_like_http(const struct proto_tok *t, size_t ntokens)
{
	static const char *const known[] = {
		"bget", "watch", "lru", "extstore", "refresh_certs",
	};
	const struct proto_tok *last = &t[ntokens - 2];

	if (last->len < 5 || memcmp(last->p, "HTTP/", 5) != 0)
		return false;
	if (memchr("gsacidt", t[0].p[0], 7) != NULL)
		return false;
	if (t[0].len == 2 && t[0].p[0] == 'm')
		return false;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (tok_is(&t[0], known[i], strlen(known[i])))
			return false;
	return true;
}

/* ---- the command line -------------------------------------------------------- */

/* One line: its command word, the word's token counts, then the parse
 * function of its syntax (one case per enum proto_syntax). */
static __attribute__((hot)) enum proto_status
parse_line(struct proto_parser *p, const char *buf, size_t len,
	   struct proto_req *req, size_t *consumed)
{
	struct proto_tok t[PROTO_TOKENS_MAX];
	const char *nl = memchr(buf, '\n', len);
	const struct proto_word *w;
	size_t line_len, clen, ntokens;
	const char *z;

	*consumed = 0;
	/* The binary protocol's magic byte: no text command starts with it,
	 * and a binary request has no newline to wait for (memcached -B
	 * ascii waits for one for ever). Hang up at once, as on HTTP. */
	if (__builtin_expect(len > 0 && (uint8_t)buf[0] == 0x80, 0))
		return PROTO_CLOSE;
	if (!nl) {
		if (len <= PROTO_LINE_MAX)
			return PROTO_NEED_MORE;
		return start_stream(p, buf, len, req, consumed);
	}
	line_len = (size_t)(nl - buf) + 1;
	clen = line_len - 1;
	/* memcached strips one '\r' before the '\n', unless it is alone */
	if (clen > 1 && buf[clen - 1] == '\r')
		clen--;
	/* ... and its string functions stop at a NUL */
	z = memchr(buf, '\0', clen);
	if (z)
		clen = (size_t)(z - buf);
	ntokens = proto_tokenize(buf, clen, t);
	*consumed = line_len;

	/* no command is shorter than two bytes */
	if (ntokens < 2 || t[0].len < 2)
		return req_error(req, PROTO_CMD_ERROR, "ERROR", false);
	w = grammar_find(p->grammar, t[0].p, t[0].len);
	if (!w) {
		if (looks_like_http(t, ntokens))
			return PROTO_CLOSE;
		return req_error(req, PROTO_CMD_ERROR, "ERROR", false);
	}
	if (ntokens < w->tokens_min || (w->tokens_max && ntokens > w->tokens_max))
		return req_error(req, PROTO_CMD_ERROR, "ERROR", false);
	switch (w->syntax) {
	case PROTO_SYN_GET:
	case PROTO_SYN_GAT:
		return parse_get(p, w->cmd, w->syntax == PROTO_SYN_GAT, buf, clen, line_len, t,
				 req, consumed);
	case PROTO_SYN_STORE:
	case PROTO_SYN_CAS:
		return parse_store(p, w->cmd, w->syntax == PROTO_SYN_CAS, buf, len, line_len, t,
				   ntokens, req, consumed);
	case PROTO_SYN_DELETE:
		return parse_delete(w->cmd, t, ntokens, req);
	case PROTO_SYN_ARITH:
		return parse_arith(w->cmd, t, ntokens, req);
	case PROTO_SYN_TOUCH:
		return parse_touch(w->cmd, t, ntokens, req);
	case PROTO_SYN_FLUSH_ALL:
		return parse_flush_all(w->cmd, t, ntokens, req);
	case PROTO_SYN_VERBOSITY:
		return parse_verbosity(w->cmd, t, ntokens, req);
	case PROTO_SYN_SHUTDOWN:
		return parse_shutdown(w->cmd, t, ntokens, req);
	case PROTO_SYN_STATS:
		return proto_parse_stats(w->cmd, t, ntokens, req);
	case PROTO_SYN_CACHE_MEMLIMIT:
		return proto_parse_cache_memlimit(w->cmd, t, ntokens, req);
	case PROTO_SYN_SLABS:
		return proto_parse_slabs(w->cmd, t, ntokens, req);
	case PROTO_SYN_LRU_CRAWLER:
		return proto_parse_lru_crawler(w->cmd, t, ntokens, req);
	case PROTO_SYN_META:
		return proto_parse_meta(p, w->cmd, buf, len, line_len, t, ntokens, req, consumed);
	case PROTO_SYN_ME:
		return proto_parse_me(w->cmd, t, ntokens, req);
	case PROTO_SYN_BARE:
	case PROTO_SYN_NONE:
		break;
	}
	req_clear(req, w->cmd);
	return PROTO_REQ;
}

__attribute__((hot)) enum proto_status
proto_parse(struct proto_parser *p, const char *buf, size_t len,
	    struct proto_req *req, size_t *consumed)
{
	size_t off = 0, n = 0;
	enum proto_status st;

	for (;;) {
		switch (p->state) {
		case PROTO_PS_SWALLOW: {
			size_t take = len - off;

			if (take > p->swallow)
				take = (size_t)p->swallow;
			off += take;
			p->swallow -= take;
			if (p->swallow) {
				*consumed = off;
				return PROTO_NEED_MORE;
			}
			p->state = PROTO_PS_LINE;
			continue;
		}
		case PROTO_PS_SWALLOW_LINE: {
			const char *nl = memchr(buf + off, '\n', len - off);

			if (!nl) {
				*consumed = len;
				return PROTO_NEED_MORE;
			}
			off = (size_t)(nl - buf) + 1;
			p->state = PROTO_PS_LINE;
			continue;
		}
		case PROTO_PS_MULTIGET:
			st = mget_next(p, buf + off, len - off, req, &n);
			*consumed = off + n;
			return st;
		case PROTO_PS_STREAM:
			st = stream_piece(p, buf + off, len - off, req, &n);
			*consumed = off + n;
			return st;
		case PROTO_PS_DATA:
			/* the line was parsed before: wait without rescanning */
			if (len - off < p->need) {
				*consumed = off;
				return PROTO_NEED_MORE;
			}
			p->state = PROTO_PS_LINE;
			/* fall through */
		case PROTO_PS_LINE:
			if (off == len) {
				*consumed = off;
				return PROTO_NEED_MORE;
			}
			st = parse_line(p, buf + off, len - off, req, &n);
			*consumed = off + n;
			return st;
		}
	}
}
