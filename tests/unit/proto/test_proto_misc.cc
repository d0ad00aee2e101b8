/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The segcached authors
 *
 * lib/proto helpers: memcached's number rules, base64 keys, the response
 * buffer and the UDP frame header.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "proto/proto.h"
#include "proto/proto_out.h"
#include "proto/proto_udp.h"

namespace {

bool l32(const std::string &s, int32_t *v) { return proto_strtol32(s.data(), s.size(), v); }
bool ul32(const std::string &s, uint32_t *v) { return proto_strtoul32(s.data(), s.size(), v); }
bool ull(const std::string &s, uint64_t *v) { return proto_strtoull(s.data(), s.size(), v); }

TEST(ProtoNum, Strtol32)
{
	int32_t v;

	EXPECT_TRUE(l32("0", &v) && v == 0);
	EXPECT_TRUE(l32("-5", &v) && v == -5);
	EXPECT_TRUE(l32("+7", &v) && v == 7);
	EXPECT_TRUE(l32("007", &v) && v == 7);
	EXPECT_TRUE(l32("\t12", &v) && v == 12);  /* leading blanks */
	EXPECT_TRUE(l32("12\r", &v) && v == 12);  /* stops at a blank */
	EXPECT_TRUE(l32("4294967297", &v) && v == 1); /* kept to 32 bits */
	EXPECT_TRUE(l32("99999999999", &v) && v == 1215752191);
	EXPECT_TRUE(l32("-9223372036854775808", &v) && v == 0);
	EXPECT_FALSE(l32("9223372036854775808", &v)); /* beyond long */
	EXPECT_FALSE(l32("-9223372036854775809", &v));
	EXPECT_FALSE(l32("", &v));
	EXPECT_FALSE(l32("x", &v));
	EXPECT_FALSE(l32("-", &v));
	EXPECT_FALSE(l32("1x", &v));
	EXPECT_FALSE(l32("\t", &v));
}

TEST(ProtoNum, Strtoul32)
{
	uint32_t v;

	EXPECT_TRUE(ul32("4294967295", &v) && v == 4294967295u);
	EXPECT_TRUE(ul32("4294967296", &v) && v == 0);
	EXPECT_TRUE(ul32("18446744073709551615", &v) && v == 4294967295u);
	EXPECT_FALSE(ul32("18446744073709551616", &v));
	EXPECT_FALSE(ul32("-1", &v));
	EXPECT_TRUE(ul32("-0", &v) && v == 0);
	EXPECT_FALSE(ul32("x", &v));
}

TEST(ProtoNum, Strtoull)
{
	uint64_t v;

	EXPECT_TRUE(ull("18446744073709551615", &v) && v == UINT64_MAX);
	EXPECT_FALSE(ull("18446744073709551616", &v));
	EXPECT_FALSE(ull("-1", &v));
	EXPECT_TRUE(ull("-0", &v) && v == 0);
	/* a negative number small enough reads as its two's complement,
	 * exactly as strtoull does, and passes memcached's check */
	EXPECT_TRUE(ull("-9223372036854775809", &v) && v == 9223372036854775807ull);
	EXPECT_FALSE(ull("\tx", &v));
	EXPECT_FALSE(ull("", &v));
	EXPECT_TRUE(ull(" 5 ", &v) && v == 5);
}

std::string dec(const std::string &s)
{
	char out[256];
	size_t n = proto_base64_decode(s.data(), s.size(), out, sizeof(out));

	return n ? std::string(out, n) : std::string("<error>");
}

std::string enc(const std::string &s)
{
	char out[512];

	return std::string(out, proto_base64_encode(s.data(), s.size(), out, sizeof(out)));
}

TEST(ProtoBase64, AsMemcached)
{
	EXPECT_EQ(dec("YQ=="), "a");
	EXPECT_EQ(dec("YWI="), "ab");
	EXPECT_EQ(dec("YWJj"), "abc");
	EXPECT_EQ(dec("bWtleQ=="), "mkey");
	EXPECT_EQ(dec("Y\x01Q=="), "a");     /* bytes outside the alphabet are skipped */
	EXPECT_EQ(dec("YQ==YWJj"), "a");     /* decoding stops at padding */
	EXPECT_EQ(dec("m"), "<error>");      /* not a multiple of four */
	EXPECT_EQ(dec("===="), "<error>");   /* too much padding */
	EXPECT_EQ(dec("A==="), "<error>");
	EXPECT_EQ(dec(""), "<error>");
	for (std::string s : { "", "a", "ab", "abc", "abcd", "\x00\xff\x10 binary" }) {
		std::string e = enc(s);

		EXPECT_EQ(e.size(), proto_base64_encoded_len(s.size()));
		if (!s.empty()) {
			EXPECT_EQ(dec(e), s);
		}
	}
	EXPECT_EQ(enc("mkey"), "bWtleQ==");
	char small[3];
	EXPECT_EQ(proto_base64_encode("abc", 3, small, sizeof(small)), 0u);
}

TEST(ProtoOut, GrowsUpToItsLimit)
{
	proto_out o;

	ASSERT_EQ(proto_out_init(&o, 16, 64), 0);
	EXPECT_TRUE(proto_out_append(&o, "0123456789", 10));
	EXPECT_TRUE(proto_out_line(&o, "0123456789")); /* grows */
	EXPECT_EQ(o.len, 22u);
	EXPECT_GE(o.cap, 22u);
	EXPECT_EQ(proto_out_reserve(&o, 43), nullptr); /* 22 + 43 > 64 */
	EXPECT_EQ(o.len, 22u);
	EXPECT_NE(proto_out_reserve(&o, 42), nullptr);
	EXPECT_FALSE(proto_out_append(&o, std::string(50, 'x').data(), 50));
	EXPECT_EQ(std::string(o.data, o.len), "0123456789" "0123456789\r\n");
	proto_out_fini(&o);
}

TEST(ProtoOut, ConsumeAndCompact)
{
	proto_out o;

	ASSERT_EQ(proto_out_init(&o, 32, 32), 0);
	ASSERT_TRUE(proto_out_append(&o, std::string(30, 'a').data(), 30));
	size_t mark = proto_out_mark(&o);
	proto_out_consume(&o, 20);
	EXPECT_EQ(proto_out_pending(&o), 10u);
	/* 10 pending + 12 new only fit after compaction */
	ASSERT_NE(proto_out_reserve(&o, 12), nullptr);
	EXPECT_EQ(o.head, 0u);
	EXPECT_EQ(o.len, 10u);
	ASSERT_TRUE(proto_out_append(&o, "bbbbbbbbbbbb", 12));
	/* a mark taken before the compaction still points at the same byte */
	proto_out_truncate(&o, mark - 20);
	EXPECT_EQ(std::string(o.data + o.head, proto_out_pending(&o)), std::string(10, 'a'));
	proto_out_consume(&o, 100);
	EXPECT_EQ(o.len, 0u);
	EXPECT_EQ(o.head, 0u);
	proto_out_fini(&o);
}

TEST(ProtoOut, FixedBufferNeverGrows)
{
	char buf[8];
	proto_out o;

	proto_out_init_fixed(&o, buf, sizeof(buf));
	EXPECT_TRUE(proto_out_append(&o, "12345678", 8));
	EXPECT_FALSE(proto_out_append(&o, "9", 1));
	EXPECT_EQ(o.data, buf);
	proto_out_fini(&o);
}

static std::string
front(const proto_out &o)
{
	size_t n;
	const char *p = proto_out_front(&o, &n);
	return std::string(p, n);
}

// A transport lends the free space it sends from: replies are composed
// there, what it took moves the window on, and a reply the window cannot
// hold is composed in the output's own memory, behind the window's bytes,
// which stay where they are and go first: nothing is copied twice or lost.
TEST(ProtoOut, LentWindowComposesInPlaceAndKeepsWhatItCannotHold)
{
	char win[64];
	proto_out o;

	ASSERT_EQ(proto_out_init(&o, 16, 64), 0);
	proto_out_lend(&o, win, 40);
	EXPECT_TRUE(proto_out_is_lent(&o));
	ASSERT_TRUE(proto_out_line(&o, "abc"));
	EXPECT_EQ(std::string(win, 5), "abc\r\n");
	EXPECT_EQ(front(o), "abc\r\n");
	proto_out_consume(&o, 5); /* the transport took them */
	EXPECT_EQ(o.data, win + 5);
	EXPECT_EQ(proto_out_room(&o), 35u);
	ASSERT_TRUE(proto_out_append(&o, std::string(30, 'x').data(), 30));
	EXPECT_EQ(std::string(win + 5, 30), std::string(30, 'x'));
	size_t mark = proto_out_mark(&o);
	/* over the limit even in own memory: refused, still lent, intact */
	EXPECT_EQ(proto_out_reserve(&o, 40), nullptr);
	EXPECT_TRUE(proto_out_is_lent(&o));
	/* 10 more do not fit the window's 5: composed in own memory, the 30
	 * stay in the window and go first */
	ASSERT_TRUE(proto_out_append(&o, "0123456789", 10));
	EXPECT_FALSE(proto_out_is_lent(&o));
	EXPECT_EQ(proto_out_pending(&o), 40u);
	EXPECT_EQ(front(o), std::string(30, 'x'));
	EXPECT_EQ(std::string(o.data + o.head, o.len - o.head), "0123456789");
	/* the limit counts both */
	EXPECT_EQ(proto_out_reserve(&o, 25), nullptr);
	/* a mark taken in the window still truncates to the same byte */
	ASSERT_TRUE(proto_out_append(&o, "!", 1));
	proto_out_truncate(&o, mark + 10);
	EXPECT_EQ(proto_out_pending(&o), 40u);
	proto_out_consume(&o, 12); /* 12 of the window's 30 */
	EXPECT_EQ(front(o), std::string(18, 'x'));
	proto_out_consume(&o, 20); /* the rest of them, and 2 of own */
	EXPECT_EQ(front(o), "23456789");
	proto_out_truncate(&o, 0);
	EXPECT_EQ(proto_out_pending(&o), 0u);
	EXPECT_TRUE(proto_out_end_loan(&o)); /* nothing lent, nothing kept */

	/* a loan ended with window bytes the transport did not take keeps
	 * them, ahead of what followed in own memory */
	proto_out_lend(&o, win, 8);
	ASSERT_TRUE(proto_out_append(&o, "abcd", 4));
	ASSERT_TRUE(proto_out_append(&o, "0123456789", 10));
	EXPECT_TRUE(proto_out_end_loan(&o));
	EXPECT_FALSE(proto_out_is_lent(&o));
	EXPECT_EQ(o.kept_len, 0u);
	EXPECT_EQ(front(o), "abcd0123456789");
	/* a window cut back entirely by a truncate keeps nothing */
	proto_out_consume(&o, proto_out_pending(&o));
	proto_out_lend(&o, win, 8);
	ASSERT_TRUE(proto_out_append(&o, "abcd", 4));
	ASSERT_TRUE(proto_out_append(&o, "0123456789", 10));
	proto_out_truncate(&o, 2);
	EXPECT_EQ(front(o), "ab");
	EXPECT_EQ(o.len, o.head);
	EXPECT_TRUE(proto_out_end_loan(&o));
	EXPECT_EQ(front(o), "ab");
	proto_out_consume(&o, 2);

	/* a loan ended with everything taken: own memory back, as it was */
	char *own = o.data;
	proto_out_lend(&o, win, sizeof(win));
	ASSERT_TRUE(proto_out_append(&o, "x", 1));
	proto_out_consume(&o, 1);
	EXPECT_TRUE(proto_out_end_loan(&o));
	EXPECT_EQ(o.data, own);
	EXPECT_EQ(proto_out_pending(&o), 0u);

	/* released (or finished) while lent: own memory freed, never the
	 * window (ASan checks both) */
	proto_out_lend(&o, win, sizeof(win));
	proto_out_release(&o);
	EXPECT_FALSE(proto_out_holds_memory(&o));
	proto_out_lend(&o, win, 10); /* lent with no own memory */
	ASSERT_NE(proto_out_reserve(&o, 50), nullptr); /* allocates it */
	EXPECT_FALSE(proto_out_is_lent(&o));
	proto_out_fini(&o);
}

TEST(ProtoOut, PlaceHeaderBeforeABodyWrittenFirst)
{
	for (size_t gap : { 3, 5, 8 }) {
		proto_out o;

		ASSERT_EQ(proto_out_init(&o, 64, 64), 0);
		ASSERT_TRUE(proto_out_append(&o, "pre|", 4));
		char *p = proto_out_reserve(&o, 8 + 6);
		ASSERT_NE(p, nullptr);
		memcpy(p + gap, "body!!", 6); /* the engine writes here */
		proto_out_place_header(&o, gap, "HEAD:", 5, 6);
		EXPECT_EQ(std::string(o.data, o.len), "pre|HEAD:body!!") << gap;
		proto_out_fini(&o);
	}
}

TEST(ProtoOut, Stats)
{
	proto_out o;

	ASSERT_EQ(proto_out_init(&o, 0, 1024), 0);
	EXPECT_TRUE(proto_out_stat(&o, "pid", "42"));
	EXPECT_TRUE(proto_out_stat_u64(&o, "bytes", 18446744073709551615ull));
	EXPECT_EQ(std::string(o.data, o.len),
		  "STAT pid 42\r\nSTAT bytes 18446744073709551615\r\n");
	proto_out_fini(&o);
}

TEST(ProtoOut, Decimal)
{
	char b[24];

	EXPECT_EQ(std::string(b, proto_u64_to_dec(0, b)), "0");
	EXPECT_EQ(std::string(b, proto_u64_to_dec(UINT64_MAX, b)), "18446744073709551615");
	EXPECT_EQ(std::string(b, proto_i64_to_dec(-1, b)), "-1");
	EXPECT_EQ(std::string(b, proto_i64_to_dec(INT64_MIN, b)), "-9223372036854775808");
	EXPECT_EQ(proto_dec_len(9), 1u);
	EXPECT_EQ(proto_dec_len(10), 2u);
}

TEST(ProtoUdp, ParseRequestHeader)
{
	const unsigned char ok[] = { 0x12, 0x34, 0x00, 0x05, 0x00, 0x01, 0x00, 0x07, 'g' };
	const unsigned char multi[] = { 0x12, 0x34, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00 };
	proto_udp_hdr h;

	EXPECT_EQ(proto_udp_parse(ok, sizeof(ok), &h), 8);
	EXPECT_EQ(h.req_id, 0x1234);
	EXPECT_EQ(h.seq, 5); /* not checked, as in memcached */
	EXPECT_EQ(h.total, 1);
	EXPECT_EQ(h.reserved, 7);
	EXPECT_EQ(proto_udp_parse(multi, sizeof(multi), &h), -1);
	EXPECT_EQ(proto_udp_parse(ok, 7, &h), -1);
}

TEST(ProtoUdp, SplitAndReassemble)
{
	std::string resp;

	for (int i = 0; i < 3000; i++)
		resp += (char)('a' + i % 26);
	EXPECT_EQ(proto_udp_count(0, PROTO_UDP_PAYLOAD_MAX), 0u);
	EXPECT_EQ(proto_udp_count(1, PROTO_UDP_PAYLOAD_MAX), 1u);
	EXPECT_EQ(proto_udp_count(PROTO_UDP_PAYLOAD_MAX, PROTO_UDP_PAYLOAD_MAX), 1u);
	EXPECT_EQ(proto_udp_count(PROTO_UDP_PAYLOAD_MAX + 1, PROTO_UDP_PAYLOAD_MAX), 2u);
	EXPECT_EQ(proto_udp_count((size_t)65535 * 10, 10), 65535u);
	EXPECT_EQ(proto_udp_count((size_t)65535 * 10 + 1, 10), 0u); /* cannot be numbered */
	EXPECT_EQ(proto_udp_count(5, 0), 0u);

	unsigned n = proto_udp_count(resp.size(), PROTO_UDP_PAYLOAD_MAX);
	ASSERT_EQ(n, 3u); /* memcached: 1400, 1400, 216 + headers for 3000 bytes */
	std::string joined;
	for (unsigned seq = 0; seq < n; seq++) {
		unsigned char d[PROTO_UDP_DGRAM_MAX];
		size_t len = proto_udp_frame(resp.data(), resp.size(), PROTO_UDP_PAYLOAD_MAX,
					     0xbeef, seq, d);

		ASSERT_GT(len, (size_t)PROTO_UDP_HDR_LEN);
		ASSERT_LE(len, (size_t)PROTO_UDP_DGRAM_MAX);
		EXPECT_EQ(d[0], 0xbe);
		EXPECT_EQ(d[1], 0xef);
		EXPECT_EQ((d[2] << 8) | d[3], (int)seq);
		EXPECT_EQ((d[4] << 8) | d[5], (int)n);
		EXPECT_EQ(d[6] | d[7], 0);
		joined.append((const char *)d + PROTO_UDP_HDR_LEN, len - PROTO_UDP_HDR_LEN);
	}
	EXPECT_EQ(joined, resp);
	unsigned char d[PROTO_UDP_DGRAM_MAX];
	EXPECT_EQ(proto_udp_frame(resp.data(), resp.size(), PROTO_UDP_PAYLOAD_MAX, 1, n, d), 0u);
}

} /* namespace */
