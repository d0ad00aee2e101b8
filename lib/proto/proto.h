/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/proto: the memcached text protocol (classic and meta commands) as
 * memcached 1.6 speaks it. An incremental, zero-copy request parser, a
 * response buffer with composer helpers (proto_out.h) and the UDP frame
 * header (proto_udp.h). Knows nothing of storage: lib/cmd executes what the
 * parser returns. docs/protocol.md lists every command, flag and difference.
 * lib/proto knows each syntax (enum proto_syntax); which words are commands
 * and which syntax each has comes from lib/cmd's command table, given to the
 * parser as a struct proto_grammar.
 *
 * Parser contract: the caller keeps a byte stream; proto_parse() looks at
 * the unconsumed bytes from their start, returns at most one request and
 * says how many bytes it consumed. Bytes that were not consumed must be
 * presented again, unchanged, at the start of the next call, followed by
 * whatever arrived since. The parser remembers where it stopped (for example
 * "this set needs 1048602 bytes in all") so a large value is not rescanned
 * every time a few more bytes arrive. Requests point into the caller's
 * bytes: they are valid until the caller drops or moves those bytes.
 */
#ifndef SEGCACHED_PROTO_H
#define SEGCACHED_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROTO_KEY_MAX 250
/* memcached closes a connection whose unterminated line exceeds this many
 * bytes, except a get/gets line (an unbounded multi-get), which we stream. */
#define PROTO_LINE_MAX 2048
/* memcached's tokenizer limit (MAX_TOKENS, including the terminal token). */
#define PROTO_TOKENS_MAX 24
/* meta commands: more tokens than this is "options flags too long". */
#define PROTO_META_TOKENS_MAX 20
/* meta opaque token, 'O' included. */
#define PROTO_OPAQUE_MAX 32
/* base64 text of a key of at most PROTO_KEY_MAX bytes decodes to this. */
#define PROTO_BINKEY_MAX (PROTO_KEY_MAX / 4 * 3)

/* memcached's reply to a malformed line, written by the parser and by
 * lib/cmd alike (a literal, so that longer lines can be built on it). */
#define PROTO_E_BAD_FORMAT "CLIENT_ERROR bad command line format"

enum proto_cmd {
	PROTO_CMD_NONE = 0,
	PROTO_CMD_ERROR, /* unknown command or wrong number of tokens: req.error */
	/* retrieval: one key per request, see struct proto_req */
	PROTO_CMD_GET,
	PROTO_CMD_GETS,
	PROTO_CMD_GAT,
	PROTO_CMD_GATS,
	/* storage */
	PROTO_CMD_SET,
	PROTO_CMD_ADD,
	PROTO_CMD_REPLACE,
	PROTO_CMD_APPEND,
	PROTO_CMD_PREPEND,
	PROTO_CMD_CAS,
	/* other classic commands */
	PROTO_CMD_DELETE,
	PROTO_CMD_INCR,
	PROTO_CMD_DECR,
	PROTO_CMD_TOUCH,
	PROTO_CMD_FLUSH_ALL,
	PROTO_CMD_VERSION,
	PROTO_CMD_VERBOSITY,
	PROTO_CMD_QUIT,
	PROTO_CMD_STATS,
	PROTO_CMD_SHUTDOWN,
	/* memcached's administration commands for its slab allocator and LRU
	 * crawler: parsed and validated here, answered by lib/cmd (req.sub) */
	PROTO_CMD_CACHE_MEMLIMIT,
	PROTO_CMD_SLABS,
	PROTO_CMD_LRU_CRAWLER,
	/* meta commands */
	PROTO_CMD_MG,
	PROTO_CMD_MS,
	PROTO_CMD_MD,
	PROTO_CMD_MA,
	PROTO_CMD_MN,
	PROTO_CMD_ME,
	PROTO_CMD_MAX
};

/* The subcommand of slabs, lru_crawler and `stats cachedump`. */
enum proto_sub {
	PROTO_SUB_NONE = 0,
	PROTO_SUB_SLABS_REASSIGN,     /* num[0] source class, num[1] destination class */
	PROTO_SUB_SLABS_AUTOMOVE,     /* num[0] level: 0, 1 or 2 */
	PROTO_SUB_SLABS_AUTOMOVE_RATIO, /* slabs automove ratio <non-negative number> */
	PROTO_SUB_LRU_CRAWL,          /* lru_crawler crawl <classes> */
	PROTO_SUB_LRU_METADUMP,       /* lru_crawler metadump <classes> */
	PROTO_SUB_LRU_ENABLE,
	PROTO_SUB_LRU_DISABLE,
	PROTO_SUB_LRU_TOCRAWL,        /* num[0] items */
	PROTO_SUB_LRU_SLEEP,          /* num[0] microseconds */
	PROTO_SUB_STATS_CACHEDUMP,    /* num[0] class, num[1] limit */
};

/* The shapes of command line the parser knows; a command word names one
 * (struct proto_word). Adding a command with a new shape adds a value here
 * and its parse function in proto_parse.c. */
enum proto_syntax {
	PROTO_SYN_NONE = 0,    /* not a command word (PROTO_CMD_NONE, PROTO_CMD_ERROR) */
	PROTO_SYN_GET,         /* <cmd> <key>*: one request per key */
	PROTO_SYN_GAT,         /* <cmd> <exptime> <key>*: the same, touching */
	PROTO_SYN_STORE,       /* <cmd> <key> <flags> <exptime> <bytes> [noreply], data */
	PROTO_SYN_CAS,         /* the same with <cas unique> after <bytes> */
	PROTO_SYN_DELETE,      /* <cmd> <key> [0] [noreply] */
	PROTO_SYN_ARITH,       /* <cmd> <key> <delta> [noreply] */
	PROTO_SYN_TOUCH,       /* <cmd> <key> <exptime> [noreply] */
	PROTO_SYN_FLUSH_ALL,   /* <cmd> [delay] [noreply] */
	PROTO_SYN_VERBOSITY,   /* <cmd> <level> [noreply] */
	PROTO_SYN_SHUTDOWN,    /* <cmd> [graceful] */
	PROTO_SYN_STATS,       /* <cmd> [arg ...]; stats cachedump <class> <limit> */
	PROTO_SYN_BARE,        /* <cmd>: the rest of the line is ignored */
	PROTO_SYN_CACHE_MEMLIMIT, /* <cmd> <megabytes> [noreply] */
	PROTO_SYN_SLABS,       /* <cmd> reassign|automove ... (req.sub) */
	PROTO_SYN_LRU_CRAWLER, /* <cmd> crawl|metadump|tocrawl|sleep|enable|disable ... */
	PROTO_SYN_META,        /* mg, ms, md, ma: <cmd> <key> [<datalen>] <flags>* */
	PROTO_SYN_ME,          /* <cmd> <key> [b] */
};

/* A command word: what the parser needs to know of a command. lib/cmd's
 * command table (cmd_table.c) holds one per command, and gives them to the
 * parser as a struct proto_grammar. */
struct proto_word {
	const char *name;
	uint8_t len;               /* strlen(name) */
	enum proto_cmd cmd;
	enum proto_syntax syntax;
	/* memcached's token counts (the terminal token included) outside
	 * which the line is answered ERROR; max 0: no limit */
	uint8_t tokens_min, tokens_max;
};

/* The command words by their first letter (a to z), each list ended by a
 * NULL: a command line costs one list of a few words, as memcached's
 * dispatch on the first character does. */
#define PROTO_GRAMMAR_LETTER_MAX 8
struct proto_grammar {
	const struct proto_word *first[26][PROTO_GRAMMAR_LETTER_MAX + 1];
};

/* Adds a word (kept by pointer); false when its name is not at least two
 * of a-z and '_' starting with a letter, is already there, or its letter
 * is full. */
bool proto_grammar_add(struct proto_grammar *g, const struct proto_word *w);
/* The word named by the len bytes at name, or NULL. */
const struct proto_word *proto_grammar_find(const struct proto_grammar *g, const char *name,
					    size_t len);

enum proto_status {
	PROTO_REQ,       /* *req holds one request */
	PROTO_NEED_MORE, /* no complete request: present the rest again with more bytes */
	/* a piece of a streamed data block (proto_parser_stream): req->value
	 * holds req->vlen bytes of it; req->stream is PROTO_STREAM_END with
	 * the last (then req->error says when its "\r\n" was wrong) */
	PROTO_PIECE,
	/* close without a reply: a line over PROTO_LINE_MAX, a line that looks
	 * like an HTTP request (memcached hangs up on those, so that a browser
	 * cannot be made to talk to the cache), or a binary-protocol request
	 * (first byte 0x80) */
	PROTO_CLOSE,
};

/* Meta command flags, validated the way memcached 1.6 validates them. */
struct proto_meta {
	/* flag characters in request order; responses echo in this order */
	char order[PROTO_META_TOKENS_MAX];
	uint8_t norder;
	size_t opaque_len;       /* the O token, 'O' included; 0 = none */
	const char *opaque;
	bool base64;             /* b: the key was sent base64 encoded (req.key is decoded) */
	bool quiet;              /* q */
	bool value;              /* v */
	bool no_update;          /* u */
	bool invalidate;         /* I */
	bool has_cas;            /* C */
	bool has_ttl;            /* T */
	bool has_vivify;         /* N */
	bool has_recache;        /* R */
	char mode;               /* M token character; 0 = none */
	uint32_t client_flags;   /* F */
	uint64_t cas;            /* C */
	int64_t ttl;             /* T */
	int64_t vivify_ttl;      /* N */
	int64_t recache_ttl;     /* R */
	uint64_t delta;          /* D, default 1 */
	uint64_t initial;        /* J, default 0 */
};

static inline bool
proto_meta_has(const struct proto_meta *m, char flag)
{
	for (unsigned i = 0; i < m->norder; i++)
		if (m->order[i] == flag)
			return true;
	return false;
}

struct proto_req {
	enum proto_cmd cmd;
	/* Non-NULL: reply with this line (no "\r\n") instead of executing.
	 * A line with classic noreply is still suppressed, as in memcached. */
	const char *error;
	bool noreply;        /* classic "noreply" (meta: see meta.quiet) */
	/* storage: the value exceeds the parser's value_max; the parser
	 * swallows the data block (memcached's conn_swallow) */
	bool too_large;
	const char *key;     /* NULL for a get line's closing request */
	size_t klen;
	/* get/gets/gat/gats: one request per key. The last request of a line
	 * has get_last set (reply END after it); a line without keys yields
	 * one request with key NULL and get_last set. */
	bool get_last;
	uint32_t flags;      /* set & co: client flags */
	int64_t exptime;     /* set & co, touch, gat, flush_all delay */
	uint64_t cas;        /* cas unique */
	uint64_t delta;      /* incr/decr */
	unsigned level;      /* verbosity */
	bool graceful;       /* shutdown graceful */
	bool has_delay;      /* flush_all with a delay argument */
	const char *value;   /* storage value (vlen bytes, not terminated) */
	size_t vlen;
	/* enum proto_stream: a storage request whose data block comes in
	 * pieces (BEGIN: value NULL, vlen its length), or the last piece */
	uint8_t stream;
	const char *arg;     /* stats: the first argument; NULL for plain "stats" */
	size_t arg_len;
	enum proto_sub sub;  /* slabs, lru_crawler, stats cachedump */
	uint32_t num[2];     /* their numbers; cache_memlimit: num[0] megabytes */
	struct proto_meta meta;
	char keybuf[PROTO_BINKEY_MAX + 1]; /* decoded base64 key (meta b) */
};

/* A large data block is handed over as it arrives instead of being
 * buffered whole (issue 35: a value in flight is heap memory, read
 * straight into the item reserved for it). */
enum proto_stream {
	PROTO_STREAM_NONE = 0,
	PROTO_STREAM_BEGIN, /* PROTO_REQ: the line; its data block follows in pieces */
	PROTO_STREAM_END,   /* PROTO_PIECE: the block's last piece and its end */
};

enum proto_parse_state {
	PROTO_PS_LINE = 0,   /* expecting a command line */
	PROTO_PS_DATA,       /* a storage line waits for its data block */
	PROTO_PS_SWALLOW,    /* discarding a refused data block */
	PROTO_PS_SWALLOW_LINE, /* discarding the rest of a line */
	PROTO_PS_MULTIGET,   /* between the keys of a get line */
	PROTO_PS_STREAM,     /* a streamed data block: its pieces, then "\r\n" */
};

struct proto_parser {
	/* configuration: the command words, and a storage value larger than
	 * value_max is refused with too_large and swallowed without being
	 * buffered */
	const struct proto_grammar *grammar;
	size_t value_max;
	/* data blocks of at least this many bytes (0: none) of set, add,
	 * replace, cas and ms but append and prepend that are not all there
	 * yet are streamed (proto_parser_stream) */
	size_t stream_min;
	/* state */
	enum proto_parse_state state;
	size_t need;             /* PS_DATA: bytes from the request start */
	uint64_t swallow;        /* PS_SWALLOW: bytes left to discard */
	enum proto_cmd mget_cmd; /* PS_MULTIGET */
	bool mget_touch;         /* a PROTO_SYN_GAT line */
	int64_t mget_exptime;
	bool mget_any;           /* a key was seen on this line */
	bool mget_end_pending;   /* streaming line: rest after a NUL is ignored */
	uint64_t stream_left;    /* PS_STREAM: value bytes still to come */
	const char *stream_bad;  /* PS_STREAM: the error for a wrong end of the block */
	bool stream_bad_noreply;
};

/* g (not NULL) gives the command words; it must outlive the parser. */
void proto_parser_init(struct proto_parser *p, const struct proto_grammar *g,
		       size_t value_max);
/* Streams the data blocks of min bytes or more (0: buffer every block,
 * the default): their line comes as PROTO_REQ with stream BEGIN as soon
 * as it is complete, then the block as PROTO_PIECEs, the last with
 * stream END. Append and prepend are never streamed (they join the old
 * value). Kept across proto_parser_reset. */
void proto_parser_stream(struct proto_parser *p, size_t min);
/* The streamed block under way is not wanted (its store was refused at
 * the line): the rest of it is discarded as it arrives. */
void proto_parser_stream_swallow(struct proto_parser *p);
/* Forgets any partial state (a UDP datagram boundary). */
void proto_parser_reset(struct proto_parser *p);
/* Abandons the current get line: the rest of it is discarded without a
 * reply (after a failed get, memcached answers with an error, not END). */
void proto_parser_abort_line(struct proto_parser *p);

/* Parses at most one request from buf[0..len). *consumed (always set) is
 * the number of bytes the caller drops from the front, also for
 * PROTO_NEED_MORE (bytes of a swallowed data block) and PROTO_CLOSE. */
enum proto_status proto_parse(struct proto_parser *p, const char *buf, size_t len,
			      struct proto_req *req, size_t *consumed);

/* Numbers as memcached's safe_strtol/ul/ull read them (including their
 * quirks: leading blanks, a sign, trailing blanks, 32-bit truncation). */
bool proto_strtol32(const char *s, size_t len, int32_t *out);
bool proto_strtoul32(const char *s, size_t len, uint32_t *out);
bool proto_strtoull(const char *s, size_t len, uint64_t *out);

/* base64 as memcached uses it for binary keys. decode returns the decoded
 * length or 0 for invalid input; encode returns the encoded length (0 if
 * out_cap is too small). */
size_t proto_base64_decode(const char *src, size_t len, char *out, size_t out_cap);
size_t proto_base64_encode(const void *src, size_t len, char *out, size_t out_cap);
static inline size_t proto_base64_encoded_len(size_t len) { return (len + 2) / 3 * 4; }

#ifdef __cplusplus
}
#endif

#endif /* SEGCACHED_PROTO_H */
