// SPDX-License-Identifier: BSD-3-Clause
// lib/util/util_err: util_fail formats a message into the caller's buffer,
// as snprintf does (truncated, always terminated), and returns -1.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "util/util_err.h"

namespace {

// A failing set-up path, written the way callers write it.
int open_thing(const char *name, int port, char *err, size_t errlen)
{
	if (port <= 0)
		return util_fail(err, errlen, "%s: bad port %d", name, port);
	return 0;
}

TEST(UtilFail, FormatsIntoTheBufferAndReturnsMinusOne)
{
	char err[64];
	memset(err, 'x', sizeof(err));
	EXPECT_EQ(util_fail(err, sizeof(err), "cannot allocate %u connections (%zu bytes, %s)",
			    16u, size_t(4096), "ok"),
		  -1);
	EXPECT_STREQ(err, "cannot allocate 16 connections (4096 bytes, ok)");
}

TEST(UtilFail, CallersReturnItsValue)
{
	char err[64] = "";
	EXPECT_EQ(open_thing("eth0", 0, err, sizeof(err)), -1);
	EXPECT_STREQ(err, "eth0: bad port 0");
	err[0] = '\0';
	EXPECT_EQ(open_thing("eth0", 80, err, sizeof(err)), 0);
	EXPECT_STREQ(err, "") << "a success leaves the buffer alone";
}

TEST(UtilFail, PlainStringWithoutArguments)
{
	char err[32];
	EXPECT_EQ(util_fail(err, sizeof(err), "no memory"), -1);
	EXPECT_STREQ(err, "no memory");
}

TEST(UtilFail, PercentSignIsWrittenOnce)
{
	char err[32];
	EXPECT_EQ(util_fail(err, sizeof(err), "%d%% full", 90), -1);
	EXPECT_STREQ(err, "90% full");
}

// A message longer than the buffer is cut to errlen - 1 bytes and ended
// with a NUL; not a byte is written beyond errlen.
TEST(UtilFail, LongMessageIsTruncatedAndTerminated)
{
	char buf[16];
	memset(buf, '#', sizeof(buf));
	const std::string longer(100, 'a');
	EXPECT_EQ(util_fail(buf, 8, "%s", longer.c_str()), -1);
	EXPECT_STREQ(buf, "aaaaaaa");
	EXPECT_EQ(strlen(buf), 7u);
	for (size_t i = 8; i < sizeof(buf); i++)
		EXPECT_EQ(buf[i], '#') << "byte " << i << " written past errlen";
}

TEST(UtilFail, MessageThatJustFitsIsWhole)
{
	char buf[4];
	EXPECT_EQ(util_fail(buf, sizeof(buf), "%s", "abc"), -1);
	EXPECT_STREQ(buf, "abc");
	EXPECT_EQ(util_fail(buf, sizeof(buf), "%s", "abcd"), -1);
	EXPECT_STREQ(buf, "abc") << "one byte too long: the last one is cut";
}

TEST(UtilFail, OneByteBufferGetsAnEmptyString)
{
	char buf[2] = {'x', '#'};
	EXPECT_EQ(util_fail(buf, 1, "%s", "message"), -1);
	EXPECT_EQ(buf[0], '\0');
	EXPECT_EQ(buf[1], '#');
}

// errlen 0: nothing is written, so a caller that wants no message may
// pass NULL (vsnprintf allows it); the return value is the same.
TEST(UtilFail, ZeroSizeBufferIsNotTouched)
{
	char buf[1] = {'#'};
	EXPECT_EQ(util_fail(buf, 0, "%s", "message"), -1);
	EXPECT_EQ(buf[0], '#');
	EXPECT_EQ(util_fail(nullptr, 0, "%s %d", "no buffer", 1), -1);
}

} // namespace
