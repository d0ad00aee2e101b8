/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/proto parser: every command, requests split at every byte and
 * pipelined, the states that carry over between calls (data blocks,
 * swallowing, streamed get lines), and memcached's error precedence.
 * Expected errors were checked against memcached 1.6.18.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmd/cmd.h" /* the command table: the parser's words */
#include "proto/proto.h"

namespace {

using namespace std::string_literals;

/* A parsed request, flattened for comparison. */
struct Req {
	proto_cmd cmd = PROTO_CMD_NONE;
	std::string error;
	bool noreply = false;
	bool too_large = false;
	std::string key;
	bool has_key = false;
	bool get_last = false;
	uint32_t flags = 0;
	int64_t exptime = 0;
	uint64_t cas = 0, delta = 0;
	std::string value;
	size_t vlen = 0;
	std::string arg;
	std::string order;
	std::string opaque;
	bool quiet = false, value_flag = false, base64 = false, has_cas = false,
	     has_ttl = false;
	char mode = 0;
	uint64_t meta_cas = 0, mdelta = 0, initial = 0;
	uint32_t client_flags = 0;
	int64_t ttl = 0;
	proto_sub sub = PROTO_SUB_NONE;
	uint32_t num0 = 0, num1 = 0;

	bool operator==(const Req &o) const
	{
		return cmd == o.cmd && error == o.error && noreply == o.noreply &&
		       too_large == o.too_large && key == o.key && has_key == o.has_key &&
		       get_last == o.get_last && flags == o.flags && exptime == o.exptime &&
		       cas == o.cas && delta == o.delta && value == o.value && vlen == o.vlen &&
		       arg == o.arg && order == o.order && opaque == o.opaque && quiet == o.quiet &&
		       value_flag == o.value_flag && base64 == o.base64 && has_cas == o.has_cas &&
		       has_ttl == o.has_ttl && mode == o.mode && meta_cas == o.meta_cas &&
		       mdelta == o.mdelta && initial == o.initial &&
		       client_flags == o.client_flags && ttl == o.ttl && sub == o.sub &&
		       num0 == o.num0 && num1 == o.num1;
	}
};

std::ostream &operator<<(std::ostream &os, const Req &r)
{
	return os << cmd_name(r.cmd) << " key=" << testing::PrintToString(r.key)
		  << " err=" << testing::PrintToString(r.error) << " value="
		  << testing::PrintToString(r.value) << " last=" << r.get_last;
}

Req flatten(const proto_req &q)
{
	Req r;

	r.cmd = q.cmd;
	r.error = q.error ? q.error : "";
	r.noreply = q.noreply;
	if (q.error)
		return r; /* nothing else of an error request is defined */
	r.too_large = q.too_large;
	r.has_key = q.key != nullptr;
	if (q.key)
		r.key.assign(q.key, q.klen);
	r.get_last = q.get_last;
	r.flags = q.flags;
	r.exptime = q.exptime;
	r.cas = q.cas;
	r.delta = q.delta;
	if (q.value)
		r.value.assign(q.value, q.vlen);
	r.vlen = q.vlen;
	if (q.arg)
		r.arg.assign(q.arg, q.arg_len);
	r.sub = q.sub;
	r.num0 = q.num[0];
	r.num1 = q.num[1];
	if (q.cmd >= PROTO_CMD_MG && q.cmd <= PROTO_CMD_ME && q.cmd != PROTO_CMD_MN) {
		const proto_meta &m = q.meta;

		r.order.assign(m.order, m.norder);
		if (m.opaque)
			r.opaque.assign(m.opaque, m.opaque_len);
		r.quiet = m.quiet;
		r.value_flag = m.value;
		r.base64 = m.base64;
		r.has_cas = m.has_cas;
		r.has_ttl = m.has_ttl;
		r.mode = m.mode;
		r.meta_cas = m.cas;
		r.mdelta = m.delta;
		r.initial = m.initial;
		r.client_flags = m.client_flags;
		r.ttl = m.ttl;
	}
	return r;
}

struct Result {
	std::vector<Req> reqs;
	bool closed = false;
	size_t left = 0; /* bytes never consumed */
};

/* Feeds input like a connection does: chunks of `chunk` bytes appended to
 * the unconsumed rest; every request is recorded. */
Result parse_stream(const std::string &input, size_t chunk = 0, size_t value_max = 1 << 20)
{
	proto_parser p;
	std::string buf;
	Result res;
	size_t fed = 0;

	proto_parser_init(&p, cmd_grammar(), value_max);
	if (chunk == 0)
		chunk = input.size() ? input.size() : 1;
	while (fed < input.size() || !buf.empty()) {
		size_t take = std::min(chunk, input.size() - fed);

		buf.append(input, fed, take);
		fed += take;
		for (;;) {
			proto_req req;
			size_t used = 0;
			proto_status st = proto_parse(&p, buf.data(), buf.size(), &req, &used);

			EXPECT_LE(used, buf.size());
			if (st == PROTO_REQ)
				res.reqs.push_back(flatten(req)); /* before the bytes go */
			buf.erase(0, used);
			if (st == PROTO_CLOSE) {
				res.closed = true;
				res.left = buf.size() + input.size() - fed;
				return res;
			}
			if (st == PROTO_NEED_MORE)
				break;
		}
		if (take == 0)
			break;
	}
	res.left = buf.size();
	return res;
}

Req R(proto_cmd cmd) { Req r; r.cmd = cmd; return r; }
Req K(proto_cmd cmd, const std::string &key)
{
	Req r = R(cmd);
	r.key = key;
	r.has_key = true;
	return r;
}
Req E(proto_cmd cmd, const std::string &err, bool noreply = false)
{
	Req r = R(cmd);
	r.error = err;
	r.noreply = noreply;
	return r;
}
Req Get(proto_cmd cmd, const std::string &key, bool last, int64_t exptime = 0)
{
	Req r = key.empty() ? R(cmd) : K(cmd, key);
	r.get_last = last;
	r.exptime = exptime;
	return r;
}
Req Store(proto_cmd cmd, const std::string &key, const std::string &value, uint32_t flags = 0,
	  int64_t exptime = 0, bool noreply = false, uint64_t cas = 0)
{
	Req r = K(cmd, key);
	r.value = value;
	r.vlen = value.size();
	r.flags = flags;
	r.exptime = exptime;
	r.noreply = noreply;
	r.cas = cas;
	return r;
}

const std::string kBad = "CLIENT_ERROR bad command line format";

std::vector<Req> reqs(const std::string &in) { return parse_stream(in).reqs; }

TEST(ProtoParse, GetFamily)
{
	EXPECT_EQ(reqs("get a\r\n"), (std::vector<Req>{ Get(PROTO_CMD_GET, "a", true) }));
	EXPECT_EQ(reqs("gets a b  c\r\n"),
		  (std::vector<Req>{ Get(PROTO_CMD_GETS, "a", false),
				     Get(PROTO_CMD_GETS, "b", false),
				     Get(PROTO_CMD_GETS, "c", true) }));
	EXPECT_EQ(reqs("gat 10 a b\r\n"),
		  (std::vector<Req>{ Get(PROTO_CMD_GAT, "a", false, 10),
				     Get(PROTO_CMD_GAT, "b", true, 10) }));
	EXPECT_EQ(reqs("gats -1 a\n"), (std::vector<Req>{ Get(PROTO_CMD_GATS, "a", true, -1) }));
	/* trailing blanks: the last key is known as last only at the line end */
	EXPECT_EQ(reqs("get a \r\n"), (std::vector<Req>{ Get(PROTO_CMD_GET, "a", true) }));
	/* gat with no key answers END; get with no key is an error */
	EXPECT_EQ(reqs("gat 10\r\n"), (std::vector<Req>{ Get(PROTO_CMD_GAT, "", true, 10) }));
	EXPECT_EQ(reqs("get\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("get  \r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("gat x a\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_GAT, "CLIENT_ERROR invalid exptime argument") }));
	/* one '\r' is stripped, a second belongs to the key */
	EXPECT_EQ(reqs("get a\r\r\n"), (std::vector<Req>{ Get(PROTO_CMD_GET, "a\r", true) }));
	/* keys are split on blanks only: a tab is part of the key */
	EXPECT_EQ(reqs("get a\tb\r\n"), (std::vector<Req>{ Get(PROTO_CMD_GET, "a\tb", true) }));
	/* a NUL ends the line for memcached */
	EXPECT_EQ(reqs("get a\0b c\r\nget d\r\n"s),
		  (std::vector<Req>{ Get(PROTO_CMD_GET, "a", false), Get(PROTO_CMD_GET, "", true),
				     Get(PROTO_CMD_GET, "d", true) }));
}

TEST(ProtoParse, GetKeyTooLongRejectsTheWholeLine)
{
	std::string k250(250, 'k'), k251(251, 'k');

	EXPECT_EQ(reqs("get " + k250 + "\r\n"),
		  (std::vector<Req>{ Get(PROTO_CMD_GET, k250, true) }));
	/* memcached checks every key before answering any */
	EXPECT_EQ(reqs("get a " + k251 + " b\r\nget c\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_GET, kBad), Get(PROTO_CMD_GET, "c", true) }));
}

/* Keys are scanned eight bytes a step (find_key_end): every key length
 * across the word boundaries, bytes either side of the terminators'
 * values, and a NUL at every place in the second key. */
TEST(ProtoParse, GetKeysOfEveryLengthAndByte)
{
	const std::string bytes = "k\x01\x09\x0b\x1f\x21\x80\xa0\xff\x2a\x0c\x1e\r"s;

	for (size_t l1 = 1; l1 <= 20; l1++)
		for (size_t l2 = 1; l2 <= 20; l2++) {
			std::string k1, k2;

			for (size_t i = 0; i < l1; i++)
				k1 += bytes[(i * 7 + l1) % bytes.size()];
			for (size_t i = 0; i < l2; i++)
				k2 += bytes[(i * 5 + l2 + 3) % (bytes.size() - 1)];
			EXPECT_EQ(reqs("get " + k1 + " " + k2 + "\r\n"),
				  (std::vector<Req>{ Get(PROTO_CMD_GET, k1, false),
						     Get(PROTO_CMD_GET, k2, true) }))
				<< l1 << " " << l2;
			EXPECT_EQ(reqs("get " + k1 + "  " + k2 + "\n"),
				  (std::vector<Req>{ Get(PROTO_CMD_GET, k1, false),
						     Get(PROTO_CMD_GET, k2, true) }))
				<< l1 << " " << l2;
			for (size_t nul = 1; nul < l2; nul++) {
				std::string line = "get " + k1 + " " + k2 + "\r\n";

				line[4 + l1 + 1 + nul] = '\0';
				EXPECT_EQ(reqs(line),
					  (std::vector<Req>{ Get(PROTO_CMD_GET, k1, false),
							     Get(PROTO_CMD_GET, k2.substr(0, nul),
								 false),
							     Get(PROTO_CMD_GET, "", true) }))
					<< l1 << " " << l2 << " " << nul;
			}
		}
}

TEST(ProtoParse, StorageCommands)
{
	EXPECT_EQ(reqs("set k 5 10 3\r\nabc\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "abc", 5, 10) }));
	EXPECT_EQ(reqs("add k 0 0 0\r\n\r\n"), (std::vector<Req>{ Store(PROTO_CMD_ADD, "k", "") }));
	EXPECT_EQ(reqs("replace k 0 0 1 noreply\r\nx\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_REPLACE, "k", "x", 0, 0, true) }));
	EXPECT_EQ(reqs("append k 0 0 1\r\nx\r\nprepend k 0 0 1\r\ny\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_APPEND, "k", "x"),
				     Store(PROTO_CMD_PREPEND, "k", "y") }));
	EXPECT_EQ(reqs("cas k 1 2 2 99\r\nab\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_CAS, "k", "ab", 1, 2, false, 99) }));
	/* the data block may hold anything, "\r\n" included */
	EXPECT_EQ(reqs("set k 0 0 4\r\n\r\n\r\n\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "\r\n\r\n") }));
	/* a sixth token that is not "noreply" is ignored */
	EXPECT_EQ(reqs("set k 0 0 1 x\r\nz\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "z") }));
}

TEST(ProtoParse, StorageNumbersAsMemcachedReadsThem)
{
	/* 32-bit truncation of flags, exptime and length */
	EXPECT_EQ(reqs("set k 4294967296 0 1\r\nx\r\n")[0].flags, 0u);
	EXPECT_EQ(reqs("set k 4294967295 0 1\r\nx\r\n")[0].flags, 4294967295u);
	EXPECT_EQ(reqs("set k 0 99999999999 1\r\nx\r\n")[0].exptime, 1215752191);
	EXPECT_EQ(reqs("set k 0 0 4294967297\r\nx\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "x") }));
	EXPECT_EQ(reqs("set k 0 0 +1\r\nx\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "x") }));
	EXPECT_EQ(reqs("set k 0 0 \t1\r\nx\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "x") }));
	EXPECT_EQ(reqs("set k 0 0 1\t\r\nx\r\n"),
		  (std::vector<Req>{ Store(PROTO_CMD_SET, "k", "x") }));
	/* errors: the data line is then read as a command */
	for (const char *bad : { "set k -1 0 1\r\nx\r\n", "set k x 0 1\r\nx\r\n",
				 "set k 0 0 1x\r\nx\r\n",
				 "set k 0 0 -1\r\nx\r\n", "set k 0 0 2147483646\r\nx\r\n",
				 "set k 0 0 9223372036854775808\r\nx\r\n", "cas k 0 0 1 x\r\nx\r\n",
				 "cas k 0 0 1 -1\r\nx\r\n" }) {
		auto r = reqs(bad);
		ASSERT_EQ(r.size(), 2u) << bad;
		EXPECT_EQ(r[0].error, kBad) << bad;
		EXPECT_EQ(r[1], E(PROTO_CMD_ERROR, "ERROR")) << bad;
	}
}

TEST(ProtoParse, StorageErrorsHonourNoreplyLikeMemcached)
{
	std::string k251(251, 'k');

	EXPECT_EQ(reqs("set " + k251 + " 0 0 1 noreply\r\nx\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_SET, kBad, true), E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("set k x 0 1 noreply\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_SET, kBad, true) }));
	/* wrong token counts are ERROR, never quiet */
	EXPECT_EQ(reqs("set k 0 0 1 noreply x\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("set k 0 0\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("cas k 0 0 1\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
}

TEST(ProtoParse, BadDataChunkResynchronisesAfterLengthPlusTwo)
{
	/* memcached reads exactly <bytes> + 2 and goes on after them */
	EXPECT_EQ(reqs("set a 0 0 1\r\nabc\r\nget a\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_SET, "CLIENT_ERROR bad data chunk"),
				     E(PROTO_CMD_ERROR, "ERROR"), Get(PROTO_CMD_GET, "a", true) }));
	EXPECT_EQ(reqs("set a 0 0 2\r\nab\nget a\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_SET, "CLIENT_ERROR bad data chunk"),
				     E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("set a 0 0 1 noreply\r\nabc\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_SET, "CLIENT_ERROR bad data chunk", true),
				     E(PROTO_CMD_ERROR, "ERROR") }));
	/* a block must end in "\r\n", a bare "\n" does not do */
	EXPECT_EQ(reqs("set a 0 0 1\nx\nget a\n")[0].error, "CLIENT_ERROR bad data chunk");
}

TEST(ProtoParse, TooLargeValueIsSwallowedNotBuffered)
{
	std::string value(5000, 'v');
	std::string in = "set big 0 0 5000\r\n" + value + "\r\nget big\r\n";
	Req tl = K(PROTO_CMD_SET, "big");

	tl.too_large = true;
	tl.vlen = 5000;
	for (size_t chunk : { (size_t)0, (size_t)1, (size_t)7, (size_t)1000 }) {
		Result r = parse_stream(in, chunk, 1024);

		EXPECT_EQ(r.reqs, (std::vector<Req>{ tl, Get(PROTO_CMD_GET, "big", true) }))
			<< chunk;
		EXPECT_EQ(r.left, 0u);
	}
	/* the swallowed bytes leave the caller's buffer as they arrive */
	proto_parser p;
	proto_req req;
	size_t used;

	proto_parser_init(&p, cmd_grammar(), 1024);
	std::string head = "set big 0 0 5000\r\n";
	ASSERT_EQ(proto_parse(&p, head.data(), head.size(), &req, &used), PROTO_REQ);
	EXPECT_TRUE(req.too_large);
	EXPECT_EQ(used, head.size());
	ASSERT_EQ(proto_parse(&p, value.data(), 3000, &req, &used), PROTO_NEED_MORE);
	EXPECT_EQ(used, 3000u);
	std::string rest = value.substr(3000) + "\r\nversion\r\n";
	ASSERT_EQ(proto_parse(&p, rest.data(), rest.size(), &req, &used), PROTO_REQ);
	EXPECT_EQ(req.cmd, PROTO_CMD_VERSION);
	EXPECT_EQ(used, rest.size());
}

TEST(ProtoParse, LargeValueWaitsWithoutRescanning)
{
	std::string value(1 << 20, 'x');
	std::string in = "set k 0 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\n";
	proto_parser p;
	proto_req req;
	size_t used, line = in.find('\n') + 1;

	proto_parser_init(&p, cmd_grammar(), 2u << 20);
	for (size_t have = 1; have < in.size(); have += 4096) {
		ASSERT_EQ(proto_parse(&p, in.data(), have, &req, &used), PROTO_NEED_MORE);
		ASSERT_EQ(used, 0u);
		if (have >= line) {
			/* the line was read once; the parser only counts now */
			EXPECT_EQ(p.state, PROTO_PS_DATA);
			EXPECT_EQ(p.need, in.size());
		}
	}
	ASSERT_EQ(proto_parse(&p, in.data(), in.size(), &req, &used), PROTO_REQ);
	EXPECT_EQ(used, in.size());
	EXPECT_EQ(req.vlen, value.size());
	EXPECT_EQ(req.value, in.data() + line);
}

TEST(ProtoParse, OtherClassicCommands)
{
	std::string k251(251, 'k');
	Req d = K(PROTO_CMD_DELETE, "a");

	EXPECT_EQ(reqs("delete a\r\n"), (std::vector<Req>{ d }));
	EXPECT_EQ(reqs("delete a 0\r\n"), (std::vector<Req>{ d }));
	d.noreply = true;
	EXPECT_EQ(reqs("delete a noreply\r\n"), (std::vector<Req>{ d }));
	EXPECT_EQ(reqs("delete a 0 noreply\r\n"), (std::vector<Req>{ d }));
	const std::string usage =
		"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]";
	EXPECT_EQ(reqs("delete a 1\r\n"), (std::vector<Req>{ E(PROTO_CMD_DELETE, usage) }));
	EXPECT_EQ(reqs("delete a x y\r\n"), (std::vector<Req>{ E(PROTO_CMD_DELETE, usage) }));
	EXPECT_EQ(reqs("delete a 0 noreply x\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("delete " + k251 + "\r\n"), (std::vector<Req>{ E(PROTO_CMD_DELETE, kBad) }));

	Req in = K(PROTO_CMD_INCR, "n");
	in.delta = 18446744073709551615ull;
	EXPECT_EQ(reqs("incr n 18446744073709551615\r\n"), (std::vector<Req>{ in }));
	Req de = K(PROTO_CMD_DECR, "n");
	de.delta = 3;
	de.noreply = true;
	EXPECT_EQ(reqs("decr n 3 noreply\r\n"), (std::vector<Req>{ de }));
	for (const char *bad : { "incr n -1\r\n", "incr n x\r\n",
				 "incr n 18446744073709551616\r\n" })
		EXPECT_EQ(reqs(bad),
			  (std::vector<Req>{ E(PROTO_CMD_INCR,
					       "CLIENT_ERROR invalid numeric delta argument") }));
	EXPECT_EQ(reqs("incr n\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));

	Req t = K(PROTO_CMD_TOUCH, "a");
	t.exptime = 10;
	EXPECT_EQ(reqs("touch a 10\r\n"), (std::vector<Req>{ t }));
	EXPECT_EQ(reqs("touch a x\r\n"),
		  (std::vector<Req>{
			  E(PROTO_CMD_TOUCH, "CLIENT_ERROR invalid exptime argument") }));

	Req f = R(PROTO_CMD_FLUSH_ALL);
	EXPECT_EQ(reqs("flush_all\r\n"), (std::vector<Req>{ f }));
	f.noreply = true;
	EXPECT_EQ(reqs("flush_all noreply\r\n"), (std::vector<Req>{ f }));
	EXPECT_EQ(reqs("flush_all x\r\n"),
		  (std::vector<Req>{
			  E(PROTO_CMD_FLUSH_ALL, "CLIENT_ERROR invalid exptime argument") }));
	EXPECT_EQ(reqs("flush_all 1 2 3\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	auto fd = reqs("flush_all 10 noreply\r\n");
	ASSERT_EQ(fd.size(), 1u);
	EXPECT_EQ(fd[0].exptime, 10);
	EXPECT_TRUE(fd[0].noreply);

	EXPECT_EQ(reqs("version\r\nversion x\r\n"),
		  (std::vector<Req>{ R(PROTO_CMD_VERSION), R(PROTO_CMD_VERSION) }));
	EXPECT_EQ(reqs("verbosity\r\n"), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("verbosity x\r\n"), (std::vector<Req>{ E(PROTO_CMD_VERBOSITY, kBad) }));
	EXPECT_EQ(reqs("verbosity noreply\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_VERBOSITY, kBad, true) }));
	EXPECT_EQ(reqs("quit\r\n"), (std::vector<Req>{ R(PROTO_CMD_QUIT) }));
	EXPECT_EQ(reqs("shutdown\r\n"), (std::vector<Req>{ R(PROTO_CMD_SHUTDOWN) }));
	EXPECT_TRUE(parse_stream("shutdown graceful\r\n").reqs[0].error.empty());
	EXPECT_EQ(reqs("shutdown x\r\n"),
		  (std::vector<Req>{
			  E(PROTO_CMD_SHUTDOWN, "CLIENT_ERROR invalid shutdown mode") }));
	Req st = R(PROTO_CMD_STATS);
	EXPECT_EQ(reqs("stats\r\n"), (std::vector<Req>{ st }));
	st.arg = "settings";
	EXPECT_EQ(reqs("stats settings extra\r\n"), (std::vector<Req>{ st }));
}

TEST(ProtoParse, UnknownAndMalformedLines)
{
	for (const char *in : { "\r\n", "\n", " \r\n", "x\r\n", "GET a\r\n", "bogus a b\r\n",
				"g\r\n", "gx a\r\n", "mN\r\n", "mz a\r\n", "mnn\r\n",
				"set\ta 0 0 1\r\n" })
		EXPECT_EQ(reqs(in), (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") })) << in;
	EXPECT_EQ(reqs("mn\r\nmn x\r\n"), (std::vector<Req>{ R(PROTO_CMD_MN), R(PROTO_CMD_MN) }));
}

TEST(ProtoParse, LongLines)
{
	/* an unterminated line over 2048 bytes closes; up to 2048 waits */
	Result r = parse_stream(std::string(2048, 'x'));
	EXPECT_FALSE(r.closed);
	EXPECT_EQ(r.left, 2048u);
	r = parse_stream(std::string(2049, 'x'));
	EXPECT_TRUE(r.closed);
	/* a whole long line is still answered, as memcached answers one that
	 * arrives in one read */
	r = parse_stream("set " + std::string(3000, 'k') + " 0 0 1\r\nx\r\n");
	EXPECT_EQ(r.reqs,
		  (std::vector<Req>{ E(PROTO_CMD_SET, kBad), E(PROTO_CMD_ERROR, "ERROR") }));
	/* ... but not when it arrives in pieces */
	r = parse_stream("set " + std::string(3000, 'k') + " 0 0 1\r\nx\r\n", 2500);
	EXPECT_TRUE(r.closed);
}

TEST(ProtoParse, LongGetLineStreamsKeyByKey)
{
	std::string in = "get";
	std::vector<Req> want;

	for (int i = 0; i < 2000; i++) {
		std::string k = "key" + std::to_string(i);

		in += " " + k;
		want.push_back(Get(PROTO_CMD_GET, k, i == 1999));
	}
	in += "\r\n";
	for (size_t chunk : { (size_t)0, (size_t)2100, (size_t)4096, (size_t)3 }) {
		Result whole = parse_stream(in, chunk);

		EXPECT_FALSE(whole.closed) << chunk;
		EXPECT_EQ(whole.reqs, want) << chunk;
		EXPECT_EQ(whole.left, 0u);
	}

	/* streamed: keys are handed out as soon as they are complete */
	proto_parser p;
	proto_req req;
	size_t used;

	proto_parser_init(&p, cmd_grammar(), 1 << 20);
	std::string part = in.substr(0, 3000);
	ASSERT_EQ(proto_parse(&p, part.data(), part.size(), &req, &used), PROTO_REQ);
	EXPECT_EQ(std::string(req.key, req.klen), "key0");
	EXPECT_EQ(used, 9u);
	EXPECT_EQ(p.state, PROTO_PS_MULTIGET);

	/* a streamed key over 250 bytes: error, the rest of the line goes */
	std::string bad = "get" + std::string(2100, ' ') + std::string(300, 'k');
	Result r = parse_stream(bad + " a\r\nversion\r\n", 2200);
	EXPECT_EQ(r.reqs, (std::vector<Req>{ E(PROTO_CMD_GET, kBad), R(PROTO_CMD_VERSION) }));
	/* the overlong key cut by the end of the buffer: the error takes the
	 * bytes it saw, the rest of the line goes as it arrives */
	{
		proto_parser q;
		std::string head = "get " + std::string(2100, 'k');

		proto_parser_init(&q, cmd_grammar(), 1 << 20);
		ASSERT_EQ(proto_parse(&q, head.data(), head.size(), &req, &used), PROTO_REQ);
		EXPECT_STREQ(req.error, "CLIENT_ERROR bad command line format");
		EXPECT_EQ(used, head.size());
		std::string tail = "kkk a b\r\nmn\r\n";
		ASSERT_EQ(proto_parse(&q, tail.data(), tail.size(), &req, &used), PROTO_REQ);
		EXPECT_EQ(req.cmd, PROTO_CMD_MN);
		EXPECT_EQ(used, tail.size());
	}
	/* memcached accepts up to 100 blanks before a streamed get */
	std::string keys;
	for (int i = 0; i < 1500; i++)
		keys += "a ";
	r = parse_stream(std::string(100, ' ') + "get " + keys + "\r\n", 3000);
	EXPECT_FALSE(r.closed);
	ASSERT_EQ(r.reqs.size(), 1500u);
	EXPECT_TRUE(r.reqs.back().get_last);
	EXPECT_TRUE(parse_stream(std::string(101, ' ') + "get " + keys + "\r\n", 3000).closed);
	/* other long commands close */
	EXPECT_TRUE(parse_stream("delete" + std::string(3000, ' ') + "a\r\n", 2100).closed);
	/* gat streams with its exptime */
	std::string gat = "gat 5" + std::string(2100, ' ') + "a b\r\n";
	r = parse_stream(gat, 2200);
	EXPECT_EQ(r.reqs, (std::vector<Req>{ Get(PROTO_CMD_GAT, "a", false, 5),
					     Get(PROTO_CMD_GAT, "b", true, 5) }));
}

TEST(ProtoParse, MetaGetFlags)
{
	auto r = reqs("mg foo s v f t c k O123 h q u T30 P L\r\n");
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].cmd, PROTO_CMD_MG);
	EXPECT_EQ(r[0].key, "foo");
	EXPECT_EQ(r[0].order, "svftckOhquTPL");
	EXPECT_EQ(r[0].opaque, "O123");
	EXPECT_TRUE(r[0].quiet);
	EXPECT_TRUE(r[0].value_flag);
	EXPECT_TRUE(r[0].has_ttl);
	EXPECT_EQ(r[0].ttl, 30);
	EXPECT_EQ(r[0].mdelta, 1u); /* the default delta */

	struct {
		const char *in, *err;
	} errors[] = {
		{ "mg\r\n", "ERROR" },
		{ "mg a x\r\n", "CLIENT_ERROR invalid flag" },
		{ "mg a v v\r\n", "CLIENT_ERROR duplicate flag" },
		{ "mg a \xff\r\n", "CLIENT_ERROR duplicate flag" },
		{ "mg a Tx\r\n", "CLIENT_ERROR bad token in command line format" },
		{ "mg a Fx\r\n", "CLIENT_ERROR bad command line format" },
		{ "mg a Tx Fx\r\n", "CLIENT_ERROR bad token in command line format" },
		{ "mg a Tx Z\r\n", "CLIENT_ERROR invalid flag" },
		{ "mg a b\r\n", "CLIENT_ERROR error decoding key" },
		{ "mg a O123456789012345678901234567890123\r\n",
		  "CLIENT_ERROR opaque token too long" },
		{ "mg a v s f t c k O1 h q u P L1 N1 R1 J1 D1 C1 F1\r\n",
		  "CLIENT_ERROR options flags are too long" },
	};
	for (const auto &e : errors) {
		auto q = reqs(e.in);

		ASSERT_EQ(q.size(), 1u) << e.in;
		EXPECT_EQ(q[0].error, e.err) << e.in;
		EXPECT_FALSE(q[0].noreply) << e.in; /* meta errors are never quiet */
	}
	/* 32 bytes of opaque, O included, is the most */
	EXPECT_EQ(reqs("mg a O1234567890123456789012345678901\r\n")[0].opaque.size(), 32u);
}

TEST(ProtoParse, MetaBase64Key)
{
	auto r = reqs("mg YQ== b k v\r\n");
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].key, "a");
	EXPECT_TRUE(r[0].base64);
	r = reqs("me YQ== b\r\nme YQ==\r\nme a b\r\n");
	ASSERT_EQ(r.size(), 3u);
	EXPECT_EQ(r[0].key, "a");
	EXPECT_EQ(r[1].key, "YQ==");
	EXPECT_EQ(r[2].error, kBad);
}

TEST(ProtoParse, MetaSet)
{
	auto r = reqs("ms k 2 T10 F5 C7 MA I q O9 k c\r\nhi\r\n");
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].cmd, PROTO_CMD_MS);
	EXPECT_EQ(r[0].value, "hi");
	EXPECT_EQ(r[0].client_flags, 5u);
	EXPECT_EQ(r[0].ttl, 10);
	EXPECT_EQ(r[0].meta_cas, 7u);
	EXPECT_TRUE(r[0].has_cas);
	EXPECT_EQ(r[0].mode, 'A');
	EXPECT_EQ(r[0].order, "TFCMIqOkc");

	/* errors before the length is known: the block is read as commands */
	EXPECT_EQ(reqs("ms k\r\n"), (std::vector<Req>{ E(PROTO_CMD_MS, kBad) }));
	EXPECT_EQ(reqs("ms k x\r\nmn\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_MS, kBad), R(PROTO_CMD_MN) }));
	EXPECT_EQ(reqs("ms k -1\r\nmn\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_MS, kBad), R(PROTO_CMD_MN) }));
	/* errors after it: the block is swallowed */
	struct {
		const char *line, *err;
	} swallowed[] = {
		{ "ms k 2 Z", "CLIENT_ERROR invalid flag" },
		{ "ms k 2 MX", "CLIENT_ERROR invalid mode for ms M token" },
		{ "ms k 2 MEE", "CLIENT_ERROR incorrect length for M token" },
		{ "ms k 2 c c", "CLIENT_ERROR duplicate flag" },
		{ "ms k 2 Fx", "CLIENT_ERROR bad command line format" },
		{ "ms k 2 Tx", "CLIENT_ERROR bad token in command line format" },
		{ "ms k 2 Cx", "CLIENT_ERROR bad token in command line format" },
		{ "ms k 2 Tx b", "CLIENT_ERROR error decoding key" },
		{ "ms k 2 MZ O123456789012345678901234567890123",
		  "CLIENT_ERROR invalid mode for ms M token" },
		{ "ms k 2 O123456789012345678901234567890123",
		  "CLIENT_ERROR opaque token too long" },
		{ "ms k 2 E5", "CLIENT_ERROR invalid flag" },
	};
	for (const auto &s : swallowed)
		EXPECT_EQ(reqs(std::string(s.line) + "\r\nhi\r\nmn\r\n"),
			  (std::vector<Req>{ E(PROTO_CMD_MS, s.err), R(PROTO_CMD_MN) }))
			<< s.line;
	EXPECT_EQ(reqs("ms k 1 v s f t c k O1 h q u P L1 N1 R1 J1 D1 C1\r\nx\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_MS, "CLIENT_ERROR options flags too long"),
				     E(PROTO_CMD_ERROR, "ERROR") }));
	/* a bad chunk is reported even with q */
	EXPECT_EQ(reqs("ms k 1 q\r\nxyz\r\nmn\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_MS, "CLIENT_ERROR bad data chunk"),
				     E(PROTO_CMD_ERROR, "ERROR"), R(PROTO_CMD_MN) }));
}

TEST(ProtoParse, MetaDeleteAndArithmetic)
{
	auto r = reqs("ma k MD D7 J3 N10 v t c q\r\n");
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].mode, 'D');
	EXPECT_EQ(r[0].mdelta, 7u);
	EXPECT_EQ(r[0].initial, 3u);
	for (const char *in : { "ma k x\r\n", "ma k v v\r\n", "ma k Dx\r\n", "ma k Jx\r\n",
				"md k x\r\n", "md k Cx\r\n", "md k Fx\r\n",
				"md YWJj O1 b k b\r\n" })
		EXPECT_EQ(reqs(in)[0].error, "CLIENT_ERROR invalid or duplicate flag") << in;
	for (const char *in : { "ma k MX\r\n", "ma k Mi\r\n", "ma k Md\r\n" })
		EXPECT_EQ(reqs(in)[0].error, "CLIENT_ERROR invalid mode for ma M token") << in;
	for (const char *in : { "ma k MI\r\n", "ma k M+\r\n", "ma k MD\r\n", "ma k M-\r\n" })
		EXPECT_TRUE(reqs(in)[0].error.empty()) << in;
	EXPECT_EQ(reqs("md k s f t c k O1 h q u P L1 N1 R1 J1 D1 C1 F1 v\r\n")[0].error,
		  "CLIENT_ERROR options flags too long");
	EXPECT_EQ(reqs("ma\r\nmd\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR"), E(PROTO_CMD_ERROR, "ERROR") }));
	EXPECT_EQ(reqs("me\r\n")[0].error, kBad);
}

/* The same stream split at every byte position parses the same. */
TEST(ProtoParse, SplitAtEveryByte)
{
	const std::string in =
		"set a 1 2 3\r\nabc\r\nget a b\r\ngets  a\r\nmg a v k O1 q\r\n"
		"ms b 4 T9 F2 c\r\nwxyz\r\ndelete a noreply\r\nincr n 5\r\ntouch a 3\r\n"
		"set a 0 0 1\r\nabc\r\ncas x 0 0 2 77 noreply\r\nhi\r\nmn\r\nstats\r\n"
		"gat 1 a\r\nma n MD v\r\nmd b q\r\nme b\r\nverbosity 1\r\nflush_all 0\r\n"
		"bogus\r\nversion\r\nget a\0b\r\nquit\r\n"s;
	const Result whole = parse_stream(in);

	ASSERT_FALSE(whole.closed);
	ASSERT_EQ(whole.left, 0u);
	ASSERT_EQ(whole.reqs.size(), 25u);
	for (size_t cut = 1; cut < in.size(); cut++) {
		proto_parser p;
		std::vector<Req> got;
		std::string buf = in.substr(0, cut);
		size_t fed = cut;

		proto_parser_init(&p, cmd_grammar(), 1 << 20);
		for (int round = 0; round < 2; round++) {
			for (;;) {
				proto_req req;
				size_t used;
				proto_status st = proto_parse(&p, buf.data(), buf.size(), &req,
								&used);

				if (st == PROTO_REQ)
					got.push_back(flatten(req));
				buf.erase(0, used);
				ASSERT_NE(st, PROTO_CLOSE);
				if (st == PROTO_NEED_MORE)
					break;
			}
			buf += in.substr(fed);
			fed = in.size();
		}
		ASSERT_EQ(got, whole.reqs) << "cut at " << cut;
	}
	/* and byte by byte */
	EXPECT_EQ(parse_stream(in, 1).reqs, whole.reqs);
}

TEST(ProtoParse, ResetAndAbort)
{
	proto_parser p;
	proto_req req;
	size_t used;

	proto_parser_init(&p, cmd_grammar(), 1 << 20);
	std::string in = "set a 0 0 10\r\nabc";
	EXPECT_EQ(proto_parse(&p, in.data(), in.size(), &req, &used), PROTO_NEED_MORE);
	EXPECT_EQ(p.state, PROTO_PS_DATA);
	proto_parser_reset(&p);
	EXPECT_EQ(p.state, PROTO_PS_LINE);
	EXPECT_EQ(p.value_max, 1u << 20);

	in = "get a b c\r\nversion\r\n";
	ASSERT_EQ(proto_parse(&p, in.data(), in.size(), &req, &used), PROTO_REQ);
	EXPECT_FALSE(req.get_last);
	proto_parser_abort_line(&p);
	in.erase(0, used);
	ASSERT_EQ(proto_parse(&p, in.data(), in.size(), &req, &used), PROTO_REQ);
	EXPECT_EQ(req.cmd, PROTO_CMD_VERSION);
	EXPECT_EQ(used, in.size());
}

} /* namespace */

/* memcached 1.6.18 hangs up, without a reply, on a line whose last token
 * starts with "HTTP/" unless its command word is one it dispatches (the
 * answers below were probed on memcached 1.6.18). */
TEST(ProtoParse, HttpRequestLineCloses)
{
	for (const char *line :
	     { "GET / HTTP/1.0\r\n", "PUT /x HTTP/1.1\r\n", "DELETE HTTP/1.1\r\n",
	       "POST /form HTTP/1.1\r\n", "HTTP/1.1\r\n", "GE HTTP/1.1\r\n", "GET / HTTP/\r\n",
	       "  GET  /  HTTP/1.1  \r\n", "GET / HTTP/1.1\n", "mxx / HTTP/1.1\r\n",
	       "Sxx / HTTP/1.1\r\n", "GET HTTP/1.1\r\r\n" }) {
		Result r = parse_stream(std::string(line) + "version\r\n");

		EXPECT_TRUE(r.closed) << line;
		EXPECT_TRUE(r.reqs.empty()) << line;
		/* the line is consumed, nothing after it is read */
		EXPECT_EQ(r.left, 9u) << line;
	}
	/* a NUL ends memcached's line: the token before it counts */
	EXPECT_TRUE(parse_stream("GET / HTTP/1.1\0x\r\n"s).closed);
	/* the 23rd token is memcached's last; the rest of the line is not split */
	EXPECT_TRUE(
		parse_stream("XX B C D E F G H I J K L M N O P Q R S T U V HTTP/1.1 W\r\n").closed);
	EXPECT_EQ(reqs("XX B C D E F G H I J K L M N O P Q R S T U V W HTTP/1.1\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR") }));
	/* not HTTP-like, or a word memcached dispatches: ERROR, and reading goes on */
	for (const char *line :
	     { "G HTTP/1.1\r\n", "GET / http/1.1\r\n", "GET / HTTPX\r\n",
	       "GET / HTTP/1.1 noreply\r\n", "GET\tHTTP/1.1\r\n", "mx / HTTP/1.1\r\n",
	       "sxx / HTTP/1.1\r\n", "bget HTTP/1.1\r\n", "watch HTTP/1.1\r\n", "lru HTTP/1.1\r\n",
	       "extstore HTTP/1.1\r\n", "replace HTTP/1.1\r\n", "tx HTTP/1.1\r\n" }) {
		Result r = parse_stream(std::string(line) + "version\r\n");

		EXPECT_FALSE(r.closed) << line;
		EXPECT_EQ(r.reqs,
			  (std::vector<Req>{ E(PROTO_CMD_ERROR, "ERROR"), R(PROTO_CMD_VERSION) }))
			<< line;
	}
	/* commands that take such a token as an argument run as usual */
	EXPECT_EQ(reqs("get / HTTP/1.0\r\n"),
		  (std::vector<Req>{ Get(PROTO_CMD_GET, "/", false),
				     Get(PROTO_CMD_GET, "HTTP/1.0", true) }));
	EXPECT_EQ(reqs("delete HTTP/1.1\r\n"),
		  (std::vector<Req>{ K(PROTO_CMD_DELETE, "HTTP/1.1") }));
	EXPECT_EQ(reqs("version HTTP/1.1\r\n"), (std::vector<Req>{ R(PROTO_CMD_VERSION) }));
	/* an unfinished line is not judged yet */
	Result r = parse_stream("GET / HTTP/1.1\r");
	EXPECT_FALSE(r.closed);
	EXPECT_EQ(r.left, 15u);
	/* arrival does not matter */
	for (size_t chunk = 1; chunk < 20; chunk++)
		EXPECT_TRUE(parse_stream("GET / HTTP/1.0\r\nversion\r\n", chunk).closed) << chunk;
}

Req Admin(proto_cmd cmd, proto_sub sub, uint32_t a = 0, uint32_t b = 0, bool noreply = false)
{
	Req r = R(cmd);
	r.sub = sub;
	r.num0 = a;
	r.num1 = b;
	r.noreply = noreply;
	return r;
}

TEST(ProtoParse, CacheMemlimit)
{
	EXPECT_EQ(reqs("cache_memlimit 100\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_CACHE_MEMLIMIT, PROTO_SUB_NONE, 100) }));
	EXPECT_EQ(reqs("cache_memlimit 100 noreply\r\n"),
		  (std::vector<Req>{
			  Admin(PROTO_CMD_CACHE_MEMLIMIT, PROTO_SUB_NONE, 100, 0, true) }));
	/* memcached ignores a second token that is not noreply */
	EXPECT_EQ(reqs("cache_memlimit 0 x\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_CACHE_MEMLIMIT, PROTO_SUB_NONE, 0) }));
	/* safe_strtoul's 32-bit truncation, as memcached reads it */
	EXPECT_EQ(reqs("cache_memlimit 4294967296\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_CACHE_MEMLIMIT, PROTO_SUB_NONE, 0) }));
	/* memcached: bare ERROR; segcached: CLIENT_ERROR (docs/protocol.md) */
	for (const char *line : { "cache_memlimit\r\n", "cache_memlimit x\r\n",
				  "cache_memlimit -5\r\n", "cache_memlimit 1x\r\n",
				  "cache_memlimit 100 x y\r\n" })
		EXPECT_EQ(reqs(line), (std::vector<Req>{ E(PROTO_CMD_CACHE_MEMLIMIT, kBad) }))
			<< line;
	EXPECT_EQ(reqs("cache_memlimit x noreply\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_CACHE_MEMLIMIT, kBad, true) }));
}

TEST(ProtoParse, SlabsAndLruCrawler)
{
	EXPECT_EQ(reqs("slabs reassign 1 2\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_REASSIGN, 1, 2) }));
	EXPECT_EQ(reqs("slabs reassign -1 2\r\n"),
		  (std::vector<Req>{
			  Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_REASSIGN, UINT32_MAX, 2) }));
	EXPECT_EQ(reqs("slabs automove 2\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_AUTOMOVE, 2) }));
	EXPECT_EQ(reqs("slabs automove 0 noreply\r\n"),
		  (std::vector<Req>{
			  Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_AUTOMOVE, 0, 0, true) }));
	EXPECT_EQ(reqs("slabs automove 1 2\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_AUTOMOVE, 1) }));
	EXPECT_EQ(reqs("slabs automove ratio 0.8\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_SLABS, PROTO_SUB_SLABS_AUTOMOVE_RATIO) }));
	for (const char *line :
	     { "slabs\r\n", "slabs foo\r\n", "slabs automove\r\n", "slabs automove x\r\n",
	       "slabs automove -1\r\n", "slabs automove 3\r\n", "slabs automove ratio x\r\n",
	       "slabs automove ratio -1\r\n", "slabs reassign 1\r\n", "slabs reassign x y\r\n",
	       "slabs reassign 1 2 3\r\n" })
		EXPECT_EQ(reqs(line)[0].error, kBad) << line;

	{
		/* metadump's class list goes to lib/cmd as the argument */
		Req dump = Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_METADUMP);

		dump.arg = "all";
		EXPECT_EQ(reqs("lru_crawler crawl 1,2\r\nlru_crawler metadump all\r\n"),
			  (std::vector<Req>{ Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_CRAWL),
					     dump }));
	}
	EXPECT_EQ(reqs("lru_crawler enable\r\nlru_crawler disable\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_ENABLE),
				     Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_DISABLE) }));
	EXPECT_EQ(reqs("lru_crawler tocrawl 10\r\nlru_crawler sleep 2000000\r\n"),
		  (std::vector<Req>{ Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_TOCRAWL, 10),
				     Admin(PROTO_CMD_LRU_CRAWLER, PROTO_SUB_LRU_SLEEP, 2000000) }));
	for (const char *line : { "lru_crawler\r\n", "lru_crawler foo\r\n", "lru_crawler crawl\r\n",
				  "lru_crawler crawl 1 2\r\n", "lru_crawler mgdump all\r\n",
				  "lru_crawler tocrawl x\r\n", "lru_crawler sleep -1\r\n",
				  "lru_crawler disable x\r\n" })
		EXPECT_EQ(reqs(line), (std::vector<Req>{ E(PROTO_CMD_LRU_CRAWLER, kBad) })) << line;
}

TEST(ProtoParse, StatsCachedump)
{
	Req d = Admin(PROTO_CMD_STATS, PROTO_SUB_STATS_CACHEDUMP, 63, 10);
	d.arg = "cachedump";
	EXPECT_EQ(reqs("stats cachedump 63 10\r\n"), (std::vector<Req>{ d }));
	EXPECT_EQ(reqs("stats cachedump\r\nstats cachedump 1\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_STATS, "CLIENT_ERROR bad command line"),
				     E(PROTO_CMD_STATS, "CLIENT_ERROR bad command line") }));
	EXPECT_EQ(reqs("stats cachedump x y\r\nstats cachedump 1 -1\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_STATS, kBad), E(PROTO_CMD_STATS, kBad) }));
	EXPECT_EQ(reqs("stats cachedump 64 1\r\n"),
		  (std::vector<Req>{ E(PROTO_CMD_STATS, "CLIENT_ERROR Illegal slab id") }));
}
