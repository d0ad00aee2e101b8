// SPDX-License-Identifier: BSD-3-Clause
// util_dl_open: the first soname that loads, every function found, and a
// message naming what is missing otherwise.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "util/util_dl.h"

namespace {

using strlen_fn = size_t (*)(const char *);

TEST(UtilDl, TheFirstSonameThatLoadsGivesEveryFunction)
{
	static const char *const names[] = { "libsegcached-no-such.so.9", "libc.so.6" };
	strlen_fn f = nullptr;
	void *g = nullptr;
	const struct util_dl_sym syms[] = { { "strlen", (void **)&f }, { "getpid", &g } };
	char err[256] = "";

	ASSERT_NE(util_dl_open(names, 2, syms, 2, "a test needs libc", err, sizeof(err)), nullptr)
		<< err;
	ASSERT_NE(f, nullptr);
	EXPECT_NE(g, nullptr);
	EXPECT_EQ(f("four"), 4u);
}

TEST(UtilDl, SaysWhatIsMissing)
{
	static const char *const libc[] = { "libc.so.6" };
	static const char *const none[] = { "libsegcached-no-such.so.9" };
	void *a = nullptr, *b = nullptr;
	const struct util_dl_sym syms[] = { { "strlen", &a },
					    { "segcached_no_such_function", &b } };
	char err[256] = "";

	EXPECT_EQ(util_dl_open(libc, 1, syms, 2, "a test", err, sizeof(err)), nullptr);
	EXPECT_EQ(std::string(err), "libc.so.6 has no segcached_no_such_function");
	EXPECT_EQ(util_dl_open(none, 1, syms, 1, "heap files need libnothing", err, sizeof(err)),
		  nullptr);
	EXPECT_EQ(std::string(err).rfind("heap files need libnothing: ", 0), 0u) << err;
	EXPECT_NE(std::strstr(err, "libsegcached-no-such.so.9"), nullptr) << err;
}

} // namespace
