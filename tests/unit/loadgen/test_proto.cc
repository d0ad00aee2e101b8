// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The segcached authors
//
// Requests the generator builds, and the response checker: a response is
// only OK when it answers the request it is matched with, and a sampled
// value only when its bytes are what the set stored.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "lg_proto.h"
}

namespace {

class LoadgenProto : public ::testing::Test {
protected:
	struct lg_workload w;
	struct lg_resp r;

	void SetUp() override
	{
		char err[128];

		memset(&w, 0, sizeof(w));
		w.keys = 1000;
		w.key_size = 8;
		w.vmin = w.vmax = 10;
		w.get_ratio = 0.9;
		w.multiget = 1;
		ASSERT_EQ(lg_workload_init(&w, err, sizeof(err)), 0) << err;
		memset(&r, 0, sizeof(r));
		lg_resp_reset(&r);
	}

	struct lg_req get(std::initializer_list<uint64_t> ids, bool check = true)
	{
		struct lg_req q;

		memset(&q, 0, sizeof(q));
		q.op = LG_OP_GET;
		q.check = check;
		for (uint64_t id : ids)
			q.keys[q.nkeys++] = id;
		return q;
	}

	struct lg_req set(uint64_t id, uint32_t version, uint32_t vlen)
	{
		struct lg_req q;

		memset(&q, 0, sizeof(q));
		q.op = LG_OP_SET;
		q.nkeys = 1;
		q.keys[0] = id;
		q.version = version;
		q.vlen = vlen;
		return q;
	}

	std::string build(const struct lg_req &q)
	{
		char buf[4096];
		size_t n = lg_req_build(&w, &q, buf, sizeof(buf));

		EXPECT_GT(n, 0u);
		EXPECT_LE(n, lg_req_wire_size(&w, &q));
		return std::string(buf, n);
	}

	// The VALUE block a correct server returns for what set(id, version, vlen) stored.
	std::string value_block(uint64_t id, uint32_t version, uint32_t vlen)
	{
		std::string s = build(set(id, version, vlen));
		// "set <key> <flags> <ttl> <len>\r\n<data>\r\n"
		char key[LG_KEY_MAX];
		size_t kl = lg_key_format(&w, id, key);
		size_t data = s.find("\r\n") + 2;

		return "VALUE " + std::string(key, kl) + " " + std::to_string(version) + " " +
		       std::to_string(vlen) + "\r\n" + s.substr(data);
	}

	enum lg_resp_status feed(const struct lg_req &q, const std::string &s, size_t *used)
	{
		return lg_resp_feed(&r, &w, &q, s.data(), s.size(), used);
	}
};

TEST_F(LoadgenProto, BuildsGetAndSet)
{
	EXPECT_EQ(build(get({ 5 })), "get k0000005\r\n");
	EXPECT_EQ(build(get({ 1, 2 })), "get k0000001 k0000002\r\n");
	std::string s = build(set(7, 42, 10));
	EXPECT_EQ(s.substr(0, 22), "set k0000007 42 0 10\r\n");
	EXPECT_EQ(s.size(), 22u + 10 + 2);
	EXPECT_EQ(s.substr(s.size() - 2), "\r\n");
}

TEST_F(LoadgenProto, RefusesWhenTheBufferIsShort)
{
	char buf[8];
	struct lg_req q = set(7, 42, 10);

	EXPECT_EQ(lg_req_build(&w, &q, buf, sizeof(buf)), 0u);
}

TEST_F(LoadgenProto, HitMissAndStored)
{
	size_t used;
	std::string hit = value_block(5, 3, 10) + "END\r\n";

	EXPECT_EQ(feed(get({ 5 }), hit, &used), LG_RESP_OK);
	EXPECT_EQ(used, hit.size());
	EXPECT_EQ(r.hits, 1u);
	EXPECT_EQ(r.values_checked, 1u);
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 5 }), "END\r\n", &used), LG_RESP_OK);
	EXPECT_EQ(r.hits, 0u);
	lg_resp_reset(&r);
	EXPECT_EQ(feed(set(5, 1, 10), "STORED\r\n", &used), LG_RESP_OK);
}

TEST_F(LoadgenProto, AcceptsCasAndSplitsAtEveryByte)
{
	std::string block = value_block(9, 77, 10);
	// gets-style VALUE line with a cas field.
	block.insert(block.find("\r\n"), " 123456");
	std::string resp = block + "END\r\n";
	struct lg_req q = get({ 9 });

	for (size_t cut = 0; cut <= resp.size(); cut++) {
		size_t used = 0, used2 = 0;

		lg_resp_reset(&r);
		enum lg_resp_status st = lg_resp_feed(&r, &w, &q, resp.data(), cut, &used);
		if (cut < resp.size()) {
			ASSERT_EQ(st, LG_RESP_MORE) << cut;
			// Unconsumed bytes are offered again, as lib/net does.
			st = lg_resp_feed(&r, &w, &q, resp.data() + used, resp.size() - used,
					  &used2);
		} else {
			used2 = 0;
		}
		ASSERT_EQ(st, LG_RESP_OK) << cut;
		ASSERT_EQ(used + used2, resp.size()) << cut;
		ASSERT_EQ(r.hits, 1u);
	}
}

TEST_F(LoadgenProto, MultigetHitsInOrderWithMissesLeftOut)
{
	size_t used;
	std::string resp = value_block(1, 1, 10) + value_block(3, 2, 10) + "END\r\n";

	EXPECT_EQ(feed(get({ 1, 2, 3 }), resp, &used), LG_RESP_OK);
	EXPECT_EQ(r.hits, 2u);
	// Out of order is not what memcached does: refused.
	lg_resp_reset(&r);
	resp = value_block(3, 2, 10) + value_block(1, 1, 10) + "END\r\n";
	EXPECT_EQ(feed(get({ 1, 2, 3 }), resp, &used), LG_RESP_BAD);
}

TEST_F(LoadgenProto, WrongBytesAreCorruptNotOk)
{
	size_t used;
	std::string resp = value_block(5, 3, 10) + "END\r\n";

	resp[resp.find("\r\n") + 2 + 4] ^= 0x01;
	EXPECT_EQ(feed(get({ 5 }), resp, &used), LG_RESP_CORRUPT);
	EXPECT_EQ(used, resp.size());
	// Unchecked (not sampled): the same bytes pass as a hit.
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 5 }, false), resp, &used), LG_RESP_OK);
}

TEST_F(LoadgenProto, ValueOfAnotherKeyOrVersionIsCaught)
{
	size_t used;
	// The server answers with key 6's value under key 5's name.
	std::string other = value_block(6, 3, 10);
	std::string mine = value_block(5, 3, 10);
	std::string resp = mine.substr(0, mine.find("\r\n") + 2) +
			   other.substr(other.find("\r\n") + 2) + "END\r\n";

	EXPECT_EQ(feed(get({ 5 }), resp, &used), LG_RESP_CORRUPT);
	// A VALUE for a key that was not asked for.
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 5 }), other + "END\r\n", &used), LG_RESP_BAD);
	// Flags (the version) changed: the bytes no longer match.
	lg_resp_reset(&r);
	resp = mine;
	resp.replace(resp.find(" 3 "), 3, " 4 ");
	EXPECT_EQ(feed(get({ 5 }), resp + "END\r\n", &used), LG_RESP_CORRUPT);
}

TEST_F(LoadgenProto, ErrorRepliesAreErrors)
{
	size_t used;

	EXPECT_EQ(feed(set(1, 1, 10), "SERVER_ERROR out of memory storing object\r\n", &used),
		  LG_RESP_ERROR);
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 1 }), "ERROR\r\n", &used), LG_RESP_ERROR);
	lg_resp_reset(&r);
	EXPECT_EQ(feed(set(1, 1, 10), "NOT_STORED\r\n", &used), LG_RESP_ERROR);
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 1 }), "CLIENT_ERROR bad command line format\r\n", &used),
		  LG_RESP_ERROR);
}

TEST_F(LoadgenProto, GarbageIsBad)
{
	size_t used;
	const char *bad[] = {
		"STORED\r\n",              // to a get
		"END\r\n",                 // to a set
		"VALUE k0000001 0\r\n",    // no length
		"VALUE k0000001 0 x\r\n",  // not a number
		"HELLO\r\n",
		"END\n",                   // bare LF
	};

	for (const char *b : bad) {
		struct lg_req q = strcmp(b, "END\r\n") == 0 ? set(1, 1, 10) : get({ 1 });

		lg_resp_reset(&r);
		EXPECT_EQ(feed(q, b, &used), LG_RESP_BAD) << b;
		EXPECT_NE(r.why, nullptr);
	}
	// Value not followed by CRLF.
	lg_resp_reset(&r);
	std::string v = value_block(1, 1, 10);
	v[v.size() - 2] = 'x';
	EXPECT_EQ(feed(get({ 1 }), v + "END\r\n", &used), LG_RESP_BAD);
	// An endless line.
	lg_resp_reset(&r);
	EXPECT_EQ(feed(get({ 1 }), std::string(2000, 'A'), &used), LG_RESP_BAD);
}

TEST_F(LoadgenProto, LeavesTheNextResponseAlone)
{
	size_t used;
	std::string two = std::string("STORED\r\n") + "END\r\n";

	EXPECT_EQ(feed(set(1, 1, 10), two, &used), LG_RESP_OK);
	EXPECT_EQ(used, 8u);
}

TEST(LoadgenUdp, FrameHeaderRoundTrips)
{
	uint8_t p[8];
	struct lg_udp_hdr h;

	lg_udp_hdr_write(p, 0xbeef);
	ASSERT_EQ(lg_udp_hdr_read(p, sizeof(p), &h), 0);
	EXPECT_EQ(h.req_id, 0xbeef);
	EXPECT_EQ(h.seq, 0);
	EXPECT_EQ(h.total, 1);
	EXPECT_EQ(h.reserved, 0);
	EXPECT_EQ(lg_udp_hdr_read(p, 7, &h), -1);
}

} // namespace
